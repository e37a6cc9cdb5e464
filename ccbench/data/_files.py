"""Raw data files: the manifest, where files live, fetching and sha256 verification.

Every file of ``ccbench/data/MANIFEST.tsv`` is read from ``<data_dir>/<name>/<file>``
(``data_dir``: the argument, else ``CCBENCH_DATA_DIR``, else a user cache),
downloaded with pooch from its ``uci_url`` when absent, and checked against the
manifest's sha256 before anything parses it (:mod:`ccbench.data._uci` parses).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import logging
import os
import shutil
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path

__all__ = [
    "DataIntegrityError",
    "DataParseError",
    "DataDownloadError",
    "ManifestEntry",
    "read_manifest",
    "resolve_data_dir",
    "fetch_file",
    "fetch_and_verify",
    "DATA_DIR_ENV",
]

log = logging.getLogger("ccbench.datasets")

DATA_DIR_ENV = "CCBENCH_DATA_DIR"


class DataIntegrityError(ValueError):
    """A data file's sha256 differs from the manifest's."""


class DataParseError(ValueError):
    """A data file does not have the layout its parser expects."""


class DataDownloadError(OSError):
    """A missing data file could not be downloaded."""


# -- manifest -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ManifestEntry:
    """One data file of the manifest (``role == "data"``)."""

    name: str
    file: str
    sha256: str
    n_bytes: int
    n_rows: int
    url: str
    notes: str = ""


@lru_cache(maxsize=8)
def _read_manifest_cached(path: str, _mtime_ns: int, _size: int) -> dict[str, tuple[ManifestEntry, ...]]:
    table: dict[str, list[ManifestEntry]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if row.get("role") != "data":
                continue
            entry = ManifestEntry(
                name=row["name"],
                file=row["file"],
                sha256=row["sha256"].strip().lower(),
                n_bytes=int(row["bytes"]),
                n_rows=int(row["n_rows"]),
                url=row["uci_url"],
                notes=row.get("notes", ""),
            )
            table.setdefault(entry.name, []).append(entry)
    return {name: tuple(entries) for name, entries in table.items()}


def read_manifest(path: str | os.PathLike | None = None) -> dict[str, tuple[ManifestEntry, ...]]:
    """Data files by data-set name, from ``path`` or the packaged MANIFEST.tsv."""
    if path is None:
        path = resources.files("ccbench.data").joinpath("MANIFEST.tsv")
    path = os.fspath(path)
    st = os.stat(path)  # part of the cache key: an edited manifest is re-read
    return _read_manifest_cached(path, st.st_mtime_ns, st.st_size)


# -- data directory, download and verification ------------------------------------


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """``data_dir``, else ``$CCBENCH_DATA_DIR``, else ``pooch.os_cache("ccbench")``."""
    if data_dir is not None:
        return Path(data_dir)
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV])
    import pooch

    return Path(pooch.os_cache("ccbench"))


# (resolved path, mtime_ns, size) -> sha256 it was found to have. Re-hashing is
# skipped only while the file's stat is unchanged.
_verified: dict[tuple[str, int, int], str] = {}


def _stat_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return (str(path.resolve()), st.st_mtime_ns, st.st_size)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_sha256(path: Path, expected: str, what: str, fix: str) -> None:
    """Raise :class:`DataIntegrityError` naming ``what``, both hashes and ``fix`` on a mismatch."""
    actual = _sha256(path)
    if actual != expected:
        raise DataIntegrityError(
            f"{what} failed its checksum: expected sha256 {expected}, actual sha256 {actual}. {fix}"
        )


def _verify(path: Path, expected: str) -> None:
    key = _stat_key(path)
    if _verified.get(key) == expected:
        return
    _check_sha256(
        path, expected, f"data file {path}",
        f"Delete the file so it is downloaded again, or point {DATA_DIR_ENV} at a verified copy of the data sets.",
    )
    _verified[key] = expected


def _download(entry: ManifestEntry, path: Path) -> None:
    """Download ``entry.url`` to ``path``; only a verified file ever appears there."""
    import pooch

    if not entry.url.startswith(("http://", "https://")):
        raise DataDownloadError(f"cannot download {entry.file}: unsupported URL {entry.url!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    log.info("downloading %s to %s", entry.url, path)
    # Download into a private temporary directory next to the target and move
    # into place only after the hash matched: a failed or wrong download never
    # looks like a cached file, and concurrent loaders cannot see half a file.
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".download-") as tmp:
        part = Path(tmp) / entry.file
        try:
            pooch.HTTPDownloader(progressbar=False)(entry.url, str(part), None)
        except Exception as exc:  # requests' errors are not OSError subclasses
            raise DataDownloadError(
                f"could not download {entry.file} for data set {entry.name!r} from "
                f"{entry.url}: {exc}. Check the network, or place a verified copy at {path} "
                f"(or point {DATA_DIR_ENV} at a directory holding <name>/<file>)."
            ) from exc
        _check_sha256(
            part, entry.sha256, f"downloaded {entry.file} (from {entry.url})",
            f"It was discarded: the server's copy differs from the one the manifest pins; "
            f"point {DATA_DIR_ENV} at a verified copy of the data sets.",
        )
        shutil.move(str(part), path)
    _verified[_stat_key(path)] = entry.sha256


def fetch_and_verify(entry: ManifestEntry, data_dir: Path) -> tuple[Path, bool]:
    """``(path, downloaded)``: ``entry`` under ``data_dir``, downloaded if absent, its sha256 always re-hashed.

    ``ccbench fetch`` uses it ahead of a run: no stat-based shortcut, so a file
    corrupted in place is found even when this process verified it before.
    """
    path = data_dir / entry.name / entry.file
    if not path.exists():
        _download(entry, path)  # verified before it appears
        return path, True
    _check_sha256(
        path, entry.sha256, f"data file {path}",
        f"Delete the file so it is downloaded again, or point {DATA_DIR_ENV} at a verified copy of the data sets.",
    )
    _verified[_stat_key(path)] = entry.sha256
    return path, False


def fetch_file(entry: ManifestEntry, data_dir: Path) -> Path:
    """Path of ``entry`` under ``data_dir/<name>/<file>``, downloaded if absent, verified."""
    path = data_dir / entry.name / entry.file
    if not path.exists():
        _download(entry, path)
    _verify(path, entry.sha256)
    return path
