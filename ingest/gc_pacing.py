"""How often Python's cyclic garbage collector runs while trace files are read (:func:`rarer_collections`).

A reader allocates a few dicts and lists per record that die with the record,
and keeps the job's tasks and attempts until the file ends.  At Python's
default pacing (a young collection every 700 allocations, a full one every
hundred young ones once the old generation has grown by a quarter) the
collector walked those survivors again and again, and every full collection
walked the whole heap of imported modules too (pyarrow, numpy...): side by
side, reading the 500 MB benchmark ``.jhist`` into staged Parquet took 10.8 s
of CPU with five full collections, 9.8 s with collections 14x rarer and none
full (50 MB: 1.07 -> 0.91 s), at the same peak RSS.  Reference counting still
frees everything that is not a cycle at once; cycles (an exception and its
frames) wait for a collection a little longer.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["READING_THRESHOLD", "paced", "rarer_collections"]

_T = TypeVar("_T")

#: Allocations between young-generation collections while files are read (Python's default: 700).
READING_THRESHOLD = 10_000

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] = (700, 10, 10)


@contextmanager
def rarer_collections() -> Iterator[None]:
    """Young collections every :data:`READING_THRESHOLD` allocations while the block runs (nests;
    the process's own pacing comes back when the outermost block ends, whichever ends last)."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(_saved[0], READING_THRESHOLD), *_saved[1:])
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                gc.set_threshold(*_saved)


def paced(items: Iterator[_T]) -> Iterator[_T]:
    """``items`` (a reader's generator), read under :func:`rarer_collections`."""
    with rarer_collections():
        yield from items
