"""Writing a report into a results folder that may come from someone else.

A results folder is data, not trust: a symlink planted in ``DIR/report/`` must not make a report
overwrite the file it points to, and ``DIR/report`` itself being a symlink must not send the report
elsewhere. Every writer of this room goes through :func:`write_bytes` / :func:`write_text` /
:func:`save_figure` / :func:`write_table` (replace, never follow: a temporary file created
exclusively in the same folder, then :func:`os.replace`), into a folder checked by
:func:`output_dir`, and refuses a path that resolves outside it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from ..running.results import atomically, write_results

__all__ = ["output_dir", "write_bytes", "write_text", "save_figure", "write_table", "write_csv"]


def output_dir(path) -> Path:
    """``path`` as the report's output folder, created if absent; a symlink (``DIR/report ->
    /somewhere``, planted in a results folder) is refused with a message naming it."""
    out = Path(path)
    if out.is_symlink():
        raise ValueError(f"refusing to write into {out}: it is a symbolic link (to {os.readlink(out)}), "
                         f"which a results folder from elsewhere may have planted; remove the link or pass "
                         f"--out a real folder")
    if out.exists() and not out.is_dir():
        raise ValueError(f"refusing to write into {out}: it exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _inside(path, out) -> Path:
    path = Path(path)
    folder = Path(out).resolve()
    parent = path.parent.resolve()
    if path.name in ("", ".", "..") or (parent != folder and folder not in parent.parents):
        raise ValueError(f"refusing to write {path}: it resolves outside the output folder {folder}")
    return path


def write_bytes(path, data: bytes, out=None) -> Path:
    """Write ``data`` to ``path`` by replacing it (a symlink there is replaced, not followed); ``out``
    (default: ``path``'s folder) is the output folder ``path`` must stay inside."""
    path = _inside(path, Path(path).parent if out is None else out)
    with atomically(path) as tmp:
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
