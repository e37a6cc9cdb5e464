"""Writing a report into a results folder that may come from someone else.

A results folder is data, not trust: a symlink planted in ``DIR/report/`` must not make a report
overwrite the file it points to, and ``DIR/report`` itself being a symlink must not send the report
elsewhere. Every writer of this room goes through :func:`write_bytes` / :func:`write_text` /
:func:`save_figure` / :func:`write_table` (replace, never follow: a temporary file created
exclusively in the same folder, then :func:`os.replace`), into a folder checked by
:func:`output_dir`, and refuses a path that resolves outside it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
from pathlib import Path

from ..running.results import atomically, write_results

__all__ = ["check_output_dir", "output_dir", "write_bytes", "write_text", "save_figure", "write_table", "write_csv",
           "read_regular", "results_files", "staged_dir"]


def check_output_dir(path, option: str = "--out") -> Path:
    """Refuse ``path`` as an output folder without creating anything: a symlink (``DIR/report ->
    /somewhere``, planted in a results folder) or a file, with a message naming it and ``option``, the
    command-line flag that chose it (so a command can check every folder before it writes any)."""
    out = Path(path)
    if out.is_symlink():
        raise ValueError(f"refusing to write into {out}: it is a symbolic link (to {os.readlink(out)}), "
                         f"which a results folder from elsewhere may have planted; remove the link or pass "
                         f"{option} a real folder")
    if out.exists() and not out.is_dir():
        raise ValueError(f"refusing to write into {out}: it exists and is not a folder; pass {option} a folder")
    return out


def output_dir(path, option: str = "--out") -> Path:
    """``path`` as the report's output folder, created if absent, after :func:`check_output_dir`."""
    out = check_output_dir(path, option)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _inside(path, out) -> Path:
    path = Path(path)
    folder = Path(out).resolve()
    parent = path.parent.resolve()
    if path.name in ("", ".", "..") or (parent != folder and folder not in parent.parents):
        raise ValueError(f"refusing to write {path}: it resolves outside the output folder {folder}")
    return path


@contextlib.contextmanager
def _naming(path):
    """An OSError raised while ``path`` is written names ``path`` (a full disk's ``write`` names no file)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None and Path(exc.filename).parent == Path(path).parent:
            raise
        raise OSError(exc.errno, exc.strerror or os.strerror(exc.errno or 0), str(path)) from exc


def write_bytes(path, data: bytes, out=None) -> Path:
    """Write ``data`` to ``path`` by replacing it (a symlink there is replaced, not followed); ``out``
    (default: ``path``'s folder) is the output folder ``path`` must stay inside. An OSError (a full
    disk) names ``path``."""
    path = _inside(path, Path(path).parent if out is None else out)
    with _naming(path), atomically(path) as tmp:
        tmp.write_bytes(data)
    return path


def write_text(path, text: str, out=None) -> Path:
    """:func:`write_bytes` of ``text`` in UTF-8."""
    return write_bytes(path, text.encode("utf-8"), out)


def save_figure(fig, path, out=None, **kwargs) -> Path:
    """``fig.savefig`` into memory, then :func:`write_bytes` (PNG unless ``format`` says otherwise)."""
    buf = io.BytesIO()
    fig.savefig(buf, format=kwargs.pop("format", "png"), **kwargs)
    return write_bytes(path, buf.getvalue(), out)


def write_table(frame, path, out=None) -> Path:
    """A Parquet table (:func:`ccbench.running.results.write_results`, itself replace-not-follow)."""
    path = _inside(path, Path(path).parent if out is None else out)
    with _naming(path):
        write_results(frame, path)
    return path


def write_csv(frame, path, out=None) -> Path:
    """``frame.to_csv`` (no index) through :func:`write_text`."""
    return write_text(path, frame.to_csv(index=False), out)


# A results folder's YAML (Hydra's multirun.yaml) is read, never trusted: no alias (a 1 KB
# "billion laughs" document expands to gigabytes), no file above this size.
MAX_YAML_BYTES = 1 << 20


def read_yaml(path):
    """The YAML document in ``path``, read with a safe loader that refuses aliases (``*name``) and
    files above :data:`MAX_YAML_BYTES`; a ValueError naming the file otherwise."""
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise ValueError(f"{path}: refusing a YAML alias (*{event.anchor}, line {event.start_mark.line + 1}): "
                                 f"ccbench does not expand aliases in files from a results folder")
            return super().compose_node(parent, index)

    path = Path(path)
    size = path.stat().st_size
    if size > MAX_YAML_BYTES:
        raise ValueError(f"{path}: {size:,} bytes, above the {MAX_YAML_BYTES:,} ccbench reads from a results folder")
    try:
        return yaml.load(path.read_text(), Loader=NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None


def _kind(mode: int) -> str:
    import stat

    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def check_regular(path) -> int:
    """The size of ``path`` after checking, without following a link, that it is a regular file: a FIFO
    named ``results.parquet`` blocks whoever opens it for ever, a link may point anywhere (``/dev/zero``).
    A ValueError naming the file and what it is otherwise."""
    import stat

    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"refusing to read {path}: it is {_kind(info.st_mode)}, not a regular file (a results "
                         f"folder may come from someone else; remove it or replace it with the file itself)")
    return info.st_size


def read_regular(path, limit: int, fix: str = "") -> bytes:
    """The bytes of the regular file ``path`` (:func:`check_regular`; opened without following a link or
    blocking on a pipe, checked again on the open file), refused above ``limit`` bytes with a ValueError
    naming the limit and ``fix`` (how to raise it)."""
    import stat

    check_regular(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):  # swapped for a pipe between the check and the open
            raise ValueError(f"refusing to read {path}: it is {_kind(info.st_mode)}, not a regular file")
        payload = handle.read(limit + 1) if info.st_size <= limit else b""
        if info.st_size > limit or len(payload) > limit:
            raise ValueError(f"refusing to read {path}: {max(info.st_size, len(payload)):,} bytes, above the "
                             f"{limit:,} ccbench reads from a results folder" + (f"; {fix}" if fix else ""))
        return payload


def results_files(paths, name: str = "results.parquet") -> tuple[list[Path], list[str]]:
    """(files, refusals): every ``name`` under ``paths`` in the order :func:`ccbench.running.results.gather`
    reads them (each directory's files sorted), found without following a symbolic link to a folder, and
    each checked with :func:`check_regular` before anything opens it: a FIFO, device or link of that name
    is not read but refused (the message naming it). A path that does not exist is passed on as it is
    (the reader names it)."""
    files, refused = [], []
    for p in map(Path, paths):
        if p.is_dir():  # the command line's folder itself may be a link (the user's own); none below it is followed
            found = [Path(root) / name for root, _, names in os.walk(p, followlinks=False) if name in names]
        else:
            found = [p]
        for path in sorted(found):
            if not os.path.lexists(path):
                files.append(path)
                continue
            try:
                check_regular(path)
            except ValueError as exc:
                refused.append(str(exc))
                continue
            files.append(path)
    return files, refused


# -- a folder written as a whole ------------------------------------------------------------------------------
# A shipped folder (rows, labels, grid, manifest) and a site (pages linking each other) are only right
# together: a writer killed between two files left new rows beside the old manifest (the next read
# blamed "changed or damaged") and a site of pages from two runs. :func:`staged_dir` writes them into a
# temporary sibling folder (first a copy of the folder made of hard links, so files the writer does not
# write stay) and puts it in place in one step: a kill leaves the old folder or the new, never a mix.

_STAGED = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.(?P<what>staging|old)$")


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system or file system cannot (the caller then renames twice)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _link_or_copy(src, dst) -> None:
    """A hard link (the staged copy costs no bytes), a copy where linking is not allowed; never a read of
    what is not a regular file (a FIFO would block)."""
    import stat

    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        if not stat.S_ISREG(os.lstat(src).st_mode):
            raise ValueError(f"cannot stage {src}: it is {_kind(os.lstat(src).st_mode)}; remove it") from None
        shutil.copy2(src, dst, follow_symlinks=False)


def _tidy(target: Path) -> None:
    """Put back a folder a writer killed between its two renames left aside (``.<name>.<pid>.old`` with no
    ``<name>``), and remove the staging folders of writers that are no longer alive."""
    from ..running.results import _alive

    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in entries:
        match = _STAGED.match(entry.name)
        if not match or match["name"] != target.name or _alive(int(match["pid"])) and int(match["pid"]) != os.getpid():
            continue
        if match["what"] == "old" and not os.path.lexists(target):
            os.rename(entry.path, target)
        elif entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)


@contextlib.contextmanager
def staged_dir(target, option: str = "--out"):
    """Yield a staging folder to write ``target``'s new content into (a sibling, holding hard links to
    ``target``'s current files); on success it replaces ``target`` in one step (an exchange of the two
    folders where the system has one, else two renames, a kill between which :func:`_tidy` repairs on the
    next write). On an exception ``target`` is left as it was. ``target`` is checked by :func:`output_dir`.
    The working directory and the folders above it are written in place (a rename would move the
    process's own directory)."""
    target = Path(target).absolute()
    if target.parent.is_dir():
        _tidy(target)  # first: a folder left aside is put back before anything creates an empty one
    target = output_dir(target, option)
    cwd = Path.cwd().resolve()
    if target.resolve() == cwd or target.resolve() in cwd.parents:
        yield target
        return
    staging = target.parent / f".{target.name}.{os.getpid()}.staging"
    if os.path.lexists(staging):
        shutil.rmtree(staging)
    try:
        shutil.copytree(target, staging, symlinks=True, copy_function=_link_or_copy)
    except PermissionError:  # a folder we may write in, under one we may not: written in place, as before
        shutil.rmtree(staging, ignore_errors=True)
        yield target
        return
    try:
        yield staging
        if not _exchange(staging, target):
            aside = target.parent / f".{target.name}.{os.getpid()}.old"
            os.rename(target, aside)
            os.rename(staging, target)
            shutil.rmtree(aside, ignore_errors=True)
    finally:
        if os.path.lexists(staging):  # the old folder after an exchange, or a failed writer's half
            shutil.rmtree(staging, ignore_errors=True)
