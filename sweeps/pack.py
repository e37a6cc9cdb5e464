"""Pack a sweep folder's committed files into a few parquet files, and unpack them back, byte for byte.

A sweep of tens of thousands of cells (the reference board: 75,208) keeps 4-5 files a cell; committed as
they are, that is about 330,000 files and 4 GB (its first 10,408 cells: 579 MB), mostly each one-row
``results.parquet``'s own schema and footer. Packed, the same bytes are one parquet table a commit (cell,
file, bytes; zstd), 41x smaller on those cells (14.0 MB), and a new machine unpacks them before it resumes:

    python sweeps/pack.py pack sweeps/board sweeps/board.packs       # adds packs/pack-NNNN.parquet
    python sweeps/pack.py unpack sweeps/board.packs sweeps/board     # before a resume or a report

A pack holds every cell whose files changed since the packs before it (each cell with its whole file set,
so a journal folded into ``results.parquet`` since is removed on unpack); later packs win. Only the files a
resume and ``ccbench report`` read are packed (the ones ``sweeps/.gitignore`` lets through): rows, journal,
stored partitions, ``cell.json``, the composed config, the ``.timeouts`` markers (a later base seed of a
cell killed at seed 0 is recorded without fitting, on whichever machine runs it) and each command's grid
(``.ccbench_grids/``: the pages' coverage line is the union of them); logs, locks and caches are not. Unpacking writes
only those names, into cell folders named without a path separator, and never through a symbolic link.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
from pathlib import Path

CELL_FILES = ("results.parquet", "results.parquet.journal", "labels.npz", "cell.json", ".hydra/config.yaml",
              ".hydra/overrides.yaml")
TOP_FILES = (".blocks_done", "multirun.yaml")
TOP = "."  # the ``cell`` of the sweep folder's own files
#: Folders of the sweep's own, each with the file names it may hold: the markers ``timeout_stops_seeds``
#: leaves for a cell's later base seeds, and each command's grid (the pages' coverage line reads them all).
SIDE_FOLDERS = {".timeouts": re.compile(r"[0-9a-f]{8,64}\.json"),
                ".ccbench_grids": re.compile(r"\d{8}-\d{6}-\d+-[0-9a-f]{1,32}\.yaml")}
_PACK = re.compile(r"pack-(\d{4,})\.parquet")


def _digest(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def _read(folder: Path, names) -> dict[str, bytes]:
    return {n: (folder / n).read_bytes() for n in names if (folder / n).is_file() and not (folder / n).is_symlink()}


def sweep_files(sweep: Path) -> dict[str, dict[str, bytes]]:
    """{cell folder name (``.`` for the sweep's own files): {file: bytes}} of what a pack holds."""
    found = {TOP: _read(sweep, TOP_FILES)}
    for side, pattern in SIDE_FOLDERS.items():
        folder = sweep / side
        if folder.is_dir() and not folder.is_symlink():
            found[side] = _read(folder, sorted(p.name for p in folder.iterdir() if pattern.fullmatch(p.name)))
    for cell in sorted(sweep.iterdir()):
        if cell.is_dir() and not cell.is_symlink() and not cell.name.startswith("."):
            files = _read(cell, CELL_FILES)
            if files:
                found[cell.name] = files
    return found


def _packs(packs: Path) -> list[Path]:
    return sorted((p for p in packs.glob("pack-*.parquet") if _PACK.fullmatch(p.name)),
                  key=lambda p: int(_PACK.fullmatch(p.name).group(1))) if packs.is_dir() else []


def packed(packs: Path) -> dict[str, dict[str, bytes]]:
    """The packs' cells as of the last one: {cell: {file: bytes}} (a later pack's cell replaces an earlier's)."""
    import pyarrow.parquet as pq

    cells: dict[str, dict[str, bytes]] = {}
    for path in _packs(packs):
        table = pq.read_table(path).to_pydict()
        fresh: dict[str, dict[str, bytes]] = {}
        for cell, name, data in zip(table["cell"], table["file"], table["data"]):
            fresh.setdefault(_checked(cell, name, path), {})[name] = data
        cells.update(fresh)
    return cells


def _checked(cell: str, name: str, path: Path) -> str:
    if cell in SIDE_FOLDERS:
        ok = bool(SIDE_FOLDERS[cell].fullmatch(name))
    else:
        ok = name in (TOP_FILES if cell == TOP else CELL_FILES) and (
            cell == TOP or (cell and "/" not in cell and "\\" not in cell and not cell.startswith(".")))
    if not ok:
        raise ValueError(f"{path}: refusing the entry cell={cell!r} file={name!r}: a pack holds only "
                         f"{', '.join(TOP_FILES + CELL_FILES)} in cell folders named without a path separator, "
                         f"and the files of {', '.join(SIDE_FOLDERS)}")
    return cell


def pack(sweep: Path, packs: Path) -> Path | None:
    """Write the next pack of ``packs`` with the cells of ``sweep`` that differ from the packs; None if none do."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not sweep.is_dir():
        raise SystemExit(f"pack: {sweep} is not a folder")
    before = {cell: _digest(files) for cell, files in packed(packs).items()}
    changed = {cell: files for cell, files in sweep_files(sweep).items()
               if files and before.get(cell) != _digest(files)}
    if not changed:
        return None
    rows = [(cell, name, data) for cell, files in changed.items() for name, data in sorted(files.items())]
    table = pa.table({"cell": [r[0] for r in rows], "file": [r[1] for r in rows],
                      "data": pa.array([r[2] for r in rows], pa.binary())})
    existing = _packs(packs)
    number = int(_PACK.fullmatch(existing[-1].name).group(1)) + 1 if existing else 1
    packs.mkdir(parents=True, exist_ok=True)
    out = packs / f"pack-{number:04d}.parquet"
    partial = out.with_name(f".{out.name}.partial")
    pq.write_table(table, partial, compression="zstd", compression_level=9, data_page_size=8 << 20)
    os.replace(partial, out)  # a kill leaves no half pack under a pack's name
    return out


def unpack(packs: Path, sweep: Path) -> int:
    """Write the packs' cells into ``sweep`` (created); return how many cells (and the markers' folder, and
    the sweep's own files) were written or changed."""
    cells = packed(packs)
    if not cells:
        raise SystemExit(f"unpack: no pack-NNNN.parquet in {packs}")
    if sweep.is_symlink():
        raise SystemExit(f"unpack: {sweep} is a symbolic link; unpack into a real folder")
    sweep.mkdir(parents=True, exist_ok=True)
    written = 0
    for cell, files in cells.items():
        folder = sweep if cell == TOP else sweep / cell
        if folder.is_symlink():
            raise SystemExit(f"unpack: {folder} is a symbolic link; remove it first")
        names = TOP_FILES if cell == TOP else CELL_FILES
        if cell in SIDE_FOLDERS:
            names = sorted({*files, *(p.name for p in folder.glob("*") if SIDE_FOLDERS[cell].fullmatch(p.name))})
        if _read(folder, names) == files:
            continue
        for name in names:
            target = folder / name
            if target.is_symlink() or (name not in files and target.is_file()):
                target.unlink()
        for name, data in files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.unpacking")
            partial.write_bytes(data)
            os.replace(partial, target)
        written += 1
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="add a pack of the cells changed since the last")
    p.add_argument("sweep", type=Path)
    p.add_argument("packs", type=Path)
    u = sub.add_parser("unpack", help="write the packs' cells into a sweep folder")
    u.add_argument("packs", type=Path)
    u.add_argument("sweep", type=Path)
    opts = parser.parse_args(argv)
    try:
        if opts.command == "pack":
            out = pack(opts.sweep, opts.packs)
            print(f"pack: {out} ({out.stat().st_size / 1e6:.1f} MB)" if out else "pack: nothing changed since the last pack")
        else:
            print(f"unpack: {unpack(opts.packs, opts.sweep)} cell(s) written into {opts.sweep}")
    except (ValueError, OSError) as exc:  # a damaged or hostile pack (pyarrow's errors are ValueErrors), a full disk
        print(f"{opts.command}: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
