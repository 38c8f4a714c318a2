"""Python's cyclic garbage collector paused for a model's object-heavy step (:func:`collector_paused`)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a model's object-heavy step.

    A precedence tree or task graph of a large job is some 10^5 small objects
    without a reference cycle among them; building them makes the collector run
    full collections over every object the process holds (the imported
    libraries' too), which was a quarter of Vianna's model and half of the
    critical path at 50 GiB on 64 nodes.  Reference counting still frees
    everything; the collector is switched back on (if it was on) afterwards.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
