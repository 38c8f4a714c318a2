"""The share of a typical map's time its JVM spent collecting garbage (``GC_TIME_MILLIS``).

Hadoop counts each attempt's garbage-collection time (``GC_TIME_MILLIS``: the JVM's collectors'
time while the task ran).  On a cluster a task has a JVM of its own, and the count is its own.  The
LocalJobRunner runs every map of a job in one JVM: a stop-the-world collection stops every map
running beside the one that allocated, and each map's count is the JVM's collections while it
ran.  How that grows with the maps running at once is :mod:`predict.shared_heap`'s; this module
gives the profile its starting point, :attr:`~profiles.profile.JobProfile.map_gc_share`: a map's
collection time over the typical map's duration.

A collection is not one map's: the young generation fills with what every map allocates, and the
collection lands in whichever map allocates last, so of a run's maps some count one and some none
(a map-side join's four maps at 1 slot: 94, 0, 91 and 0 ms).  A map's collection time is therefore
the mean over all the run's maps, the ones set apart as one-time cost included (their class loading
is not collection time); the typical map's duration is the mean of the typical maps, the duration the
predictions scale.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["map_gc_share"]


def map_gc_share(maps_c: pd.DataFrame, ok: pd.DataFrame, atypical: frozenset[str]) -> float | None:
    """The mean ``gc_ms`` of the successful maps that counted it over the typical maps' mean duration
    (at most 1); ``None`` where no map counted its collection time or no map took time.

    ``maps_c``: the maps' pivoted counters (``attempt_id``, ``gc_ms``; :func:`profiles.queries.attempt_counters`);
    ``ok``: the successful attempts (``attempt_id``, ``task_type``, ``start_ms``, ``finish_ms``);
    ``atypical``: the maps set apart as one-time cost (left out of the typical duration only).

    >>> counters = pd.DataFrame({"attempt_id": ["m0", "m1", "m2", "m3"], "gc_ms": [90, 0, 30, None]})
    >>> ok = pd.DataFrame({"attempt_id": ["m0", "m1", "m2", "m3"], "task_type": ["MAP"] * 4,
    ...                    "start_ms": [0, 100, 200, 300], "finish_ms": [600, 200, 300, 400]})
    >>> map_gc_share(counters, ok, frozenset({"m0"}))  # (90 + 0 + 30) / 3 over (100 + 100 + 100) / 3
    0.4
    """
    maps = ok[ok["task_type"] == "MAP"]
    dur = pd.to_numeric(maps["finish_ms"] - maps["start_ms"], errors="coerce")
    gc = pd.to_numeric(maps["attempt_id"].map(maps_c.set_index("attempt_id")["gc_ms"]), errors="coerce")
    counted = gc.notna() & (gc >= 0)
    typical = (dur > 0) & ~maps["attempt_id"].isin(atypical)
    if not typical.any():
        typical = dur > 0
    if not counted.any() or not typical.any():
        return None
    return float(min(1.0, gc[counted].mean() / dur[typical].mean()))
