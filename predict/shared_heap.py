"""Garbage collection in one shared heap: in one JVM a map's collections stop the maps beside it.

The LocalJobRunner runs a job's maps as threads of one JVM (``mapreduce.local.map.tasks.maximum``
of them at once), sharing its heap and its stop-the-world collector (this project's engine runs
the serial collector); a cluster gives each task a JVM and a heap of its own.  A map's time is its
own work ``w`` and the collection pauses of its JVM while it runs.  A copying collection's work is
proportional to the data it finds live (Jones, Hosking and Moss, *The Garbage Collection Handbook*,
2011, section 4.3: "the cost of copying collection is proportional to the volume of live data").
With ``k`` maps allocating at once, the JVM collects ``k`` times as often for each byte one map
allocates, and each collection copies the live data of ``k`` maps; every pause stops all of them.
So a map that collected ``g`` ms alone waits ``k**2 * g`` ms in collections beside ``k - 1`` others::

    d_k = w + k**2 * g

A profile gives its typical map's duration ``d_p`` and collection share ``s``
(:attr:`~profiles.profile.JobProfile.map_gc_share`: a map's ``GC_TIME_MILLIS`` over that duration) at its
concurrency ``c_p`` (:attr:`~profiles.profile.JobProfile.map_concurrency`), where the counter held
``c_p**2 * g``.  A run of ``c_t`` maps at once then takes::

    d_t / d_p = 1 + s * (c_t**2 / c_p**2 - 1)

``c_t`` is the maps a slot count runs at once where the predicted run shares one JVM as the
profiled one did (:func:`~predict.map_one_time.shares_one_jvm`), and 1 on a cluster (a JVM per task, its
collections its own).  A profile not taken in one JVM, or without its collection time or
concurrency, takes a factor of 1.  Maps that allocate little (collection shares of about 1 %) barely
change; maps that build large tables in memory (a side table per map: 15-30 % of their time
collecting alone) slow down by half or more on two slots.  Work that two maps slow down in each
other besides their collections (the memory bus, the caches) is not priced here.
"""

from __future__ import annotations

import math

from predict.core import Cluster
from predict.map_one_time import shares_one_jvm
from profiles.profile import JobProfile

__all__ = ["gc_stall_factor"]


def gc_stall_factor(profile: JobProfile, cluster: Cluster | None, n_maps: int | None) -> tuple[float, str | None]:
    """The factor a profiled map's duration takes for a run of ``n_maps`` maps on ``cluster`` (module
    docstring), and the note that says so (``None`` where it is 1)."""
    share, profiled = profile.map_gc_share, profile.map_concurrency
    # (a profile's concurrency is never negative: JobProfile checks it, so a known one is > 0)
    if cluster is None or n_maps is None or n_maps < 1 or not share or not profiled or not profile.source.one_jvm:
        return 1.0, None
    one_jvm = shares_one_jvm(profile, cluster)
    at_once = cluster.maps_at_once(n_maps) if one_jvm else 1
    factor = 1.0 + share * (at_once**2 / profiled**2 - 1.0)
    if math.isclose(factor, 1.0, abs_tol=1e-9):
        return 1.0, None
    return factor, (
        f"maps x {factor:.2f} for garbage collection in one heap: the profiled typical map spent {share:.0%} of "
        f"its time collecting beside {profiled:.1f} map(s) at once, this run "
        + (f"runs {at_once} at once in one JVM" if one_jvm else "gives each map a JVM of its own")
    )
