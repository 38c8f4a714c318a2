"""Which files an ingest reads: paths, directories and globs walked in a stable order, each with
its resolved path (what a store key is made of, :func:`key_text`)."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from phaseline.errors import PhaselineError

_SKIP_NAMES = {"MANIFEST.json", ".lock"}


def iter_files(paths: Iterable[str | Path], keep_dir: Callable[[Path], bool] | None = None) -> Iterator[Path]:
    """Files under the given paths: directories are walked, globs expanded, order is stable.

    Hidden files and directories (``.name``) inside walked directories are skipped,
    and so are a phaseline store met on the way and entries that are not regular
    files (FIFOs, sockets, devices, broken symbolic links).  ``keep_dir``: a
    directory met while walking for which it is false is not entered (a date
    window over a history server's ``done/`` tree, :mod:`ingest.history_dirs`).
    """
    return (path for path, _ in resolved_files(paths, keep_dir))


def resolved_files(
    paths: Iterable[str | Path], keep_dir: Callable[[Path], bool] | None = None
) -> Iterator[tuple[Path, Path]]:
    """:func:`iter_files`' files, each with its resolved path (what a store key is made of)."""
    seen: set[Path] = set()  # resolved: a file reached by a link or by another spelling is read once
    for raw in paths:
        text = str(raw)
        matches = (
            [Path(m) for m in sorted(glob.glob(text, recursive=True))]
            if glob.has_magic(text) and not os.path.lexists(text)  # `run[1].jhist` may be a name
            else [Path(text)]
        )
        if not matches:
            raise PhaselineError(f"{text}: no such file or directory")
        for path in matches:
            if path.is_dir():
                for root, dirs, files in os.walk(path):
                    if _is_store(Path(root)):
                        dirs[:] = []
                        continue  # a phaseline store, not traces
                    dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                                     and (keep_dir is None or keep_dir(Path(root) / d)))  # fmt: skip
                    for name in sorted(files):
                        if name.startswith(".") or name in _SKIP_NAMES:
                            continue
                        f = Path(root) / name
                        if not f.is_file():  # a FIFO (reading it would hang), socket, device, broken link
                            continue
                        if (real := f.resolve()) not in seen:
                            seen.add(real)
                            yield f, real
            elif path.exists():
                if not path.is_file():
                    raise PhaselineError(f"{path}: not a regular file (a FIFO, socket or device is not read)")
                if (real := path.resolve()) not in seen:
                    seen.add(real)
                    yield path, real
            else:
                raise PhaselineError(f"{path}: no such file or directory")


def key_text(name: str) -> str:
    """A file name as a store key: text UTF-8 can hold.  Bytes of a name that are not UTF-8
    (kept by Python as lone surrogates) are written ``\\xff``, so that two such names stay two
    keys and the same name gives the same key in every ingest."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = name.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate that stands for no byte
            raw = name.encode("utf-8", "surrogatepass")
        return raw.decode("utf-8", "backslashreplace")
    return name


def _is_store(root: Path) -> bool:
    """A phaseline store's root: its manifest, and its data or (a store holding only skipped
    sources has no data yet) its sources directory."""
    return (root / "MANIFEST.json").is_file() and ((root / "data").is_dir() or (root / "meta").is_dir())
