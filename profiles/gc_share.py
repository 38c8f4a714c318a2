"""The share of a typical map's time its JVM spent collecting garbage (``GC_TIME_MILLIS``).

Hadoop counts each attempt's garbage-collection time (``GC_TIME_MILLIS``: the JVM's collectors'
time while the task ran).  On a cluster a task has a JVM of its own, and the count is its own.  The
LocalJobRunner runs every map of a job in one JVM: a stop-the-world collection stops every map
running beside the one that allocated, and each map's count is the JVM's collections while it
ran.  How that grows with the maps running at once is :mod:`predict.contention`'s; this module
gives the profile its starting point, :attr:`~profiles.profile.JobProfile.map_gc_share`: the typical
maps' collection time over their duration (summed, so the share weights each map by its time, as
the typical map's average does).
"""

from __future__ import annotations

import pandas as pd

__all__ = ["map_gc_share"]


def map_gc_share(maps_c: pd.DataFrame, ok: pd.DataFrame, atypical: frozenset[str]) -> float | None:
    """The typical successful maps' ``gc_ms`` over their durations (in [0, 1]); ``None`` where no typical
    map both counted its collection time and took time.

    ``maps_c``: the maps' pivoted counters (``attempt_id``, ``gc_ms``; :func:`profiles.queries.attempt_counters`);
    ``ok``: the successful attempts (``attempt_id``, ``task_type``, ``start_ms``, ``finish_ms``);
    ``atypical``: the attempts set apart as one-time cost (their collections are the JVM's warm-up).

    >>> counters = pd.DataFrame({"attempt_id": ["m0", "m1", "m2"], "gc_ms": [50, 10, None]})
    >>> ok = pd.DataFrame({"attempt_id": ["m0", "m1", "m2"], "task_type": ["MAP"] * 3,
    ...                    "start_ms": [0, 100, 200], "finish_ms": [400, 200, 300]})
    >>> map_gc_share(counters, ok, frozenset({"m0"}))  # m2 counted none: left out
    0.1
    """
    maps = ok[(ok["task_type"] == "MAP") & ~ok["attempt_id"].isin(atypical)]
    dur = pd.to_numeric(maps["finish_ms"] - maps["start_ms"], errors="coerce")
    gc = pd.to_numeric(maps["attempt_id"].map(maps_c.set_index("attempt_id")["gc_ms"]), errors="coerce")
    known = gc.notna() & (gc >= 0) & (dur > 0)
    if not known.any():
        return None
    return float(min(1.0, gc[known].sum() / dur[known].sum()))
