"""CPU contention: a node whose task JVMs outnumber its cores runs each task slower.

A YARN node runs as many task containers as its memory allows, whatever its
cores: on this project's mini cluster, three task JVMs (and the
ApplicationMaster's) share two cores.  Under the operating system's
processor sharing, ``n`` CPU-bound tasks on ``P`` cores each progress at
``P / n`` of their own speed once ``n > P`` (the processor-sharing queue of
Kleinrock 1967; Vianna et al. 2013 model the node's CPUs as such a centre).
A profile's typical map ran beside :attr:`~profiles.profile.JobProfile.map_concurrency`
of its job's attempts on its host; a larger run fills every container with a
map at once.  The models that price no contention themselves (ARIA's bounds,
Herodotou's cost model, the critical path, the simulation) scale the profiled
map by the change of CPU share::

    factor = max(1, n_target / P) / max(1, n_profile / P)

``n_target`` is the maps a node runs at once (its map slots, or fewer where
the job has fewer maps per node), ``P`` the node's cores
(:attr:`~predict.core.Cluster.cpus_per_node`; the profile is taken as run on
such nodes).  Where the cores are not given, or the profile does not say its
concurrency, the factor is 1; where a node has at least as many cores as
tasks (the LocalJobRunner's two slots on two cores), it is 1 on both sides.
Vianna's models price the CPUs themselves (a queueing network of the nodes'
cores): they take the profiled map's demand alone, ``1 / max(1, n_profile / P)``
(:func:`map_demand_factor`), so that contention is not counted twice.
Tasks are taken as CPU-bound throughout (a task waiting on disk or network
shares less), so the factor is an upper estimate of the slowdown.

Both factors also carry :func:`~predict.shared_heap.gc_stall_factor`: maps that share one JVM
stop each other for its garbage collections, whether or not they share cores.
"""

from __future__ import annotations

import math

from predict.core import Cluster
from predict.shared_heap import gc_stall_factor
from profiles.profile import JobProfile

__all__ = ["cpu_share_factor", "map_contention", "map_demand_factor"]


def cpu_share_factor(tasks: float, cpus: int) -> float:
    """How much slower each of ``tasks`` CPU-bound tasks runs on ``cpus`` cores than alone (>= 1)."""
    return max(1.0, tasks / cpus)


def _profiled_share(profile: JobProfile, cluster: Cluster | None) -> tuple[int, float, float] | None:
    """A node's cores, the profiled map's concurrency and its CPU share factor on those cores; ``None``
    where the cluster's cores or the profile's concurrency are not known."""
    if cluster is None or cluster.cpus_per_node is None or profile.map_concurrency is None:
        return None
    cpus, concurrency = cluster.cpus_per_node, profile.map_concurrency
    return cpus, concurrency, cpu_share_factor(concurrency, cpus)


def _with_gc(factor: float, note: str | None, gc: tuple[float, str | None]) -> tuple[float, str | None]:
    """A CPU factor and its note with the shared heap's (:func:`~predict.shared_heap.gc_stall_factor`)."""
    notes = [n for n in (note, gc[1]) if n is not None]
    return factor * gc[0], "; ".join(notes) if notes else None


def map_contention(profile: JobProfile, cluster: Cluster | None, n_maps: int) -> tuple[float, str | None]:
    """The factor a profiled map's duration takes on ``cluster`` for a run of ``n_maps`` maps, and the
    note that says so (``None`` where the factor is 1)."""
    gc = gc_stall_factor(profile, cluster, n_maps)
    known = _profiled_share(profile, cluster)
    if known is None or cluster is None or n_maps < 1:
        return gc
    cpus, concurrency, shared = known
    at_once = cluster.maps_at_once(n_maps)
    factor = cpu_share_factor(at_once, cpus) / shared
    if math.isclose(factor, 1.0):
        return gc
    return _with_gc(factor, (
        f"maps x {factor:.2f} for CPU contention: {at_once} map(s) at once on a node of {cpus} core(s), "
        f"where the profiled typical map shared its node with {concurrency:.1f} task(s) on average"
    ), gc)  # fmt: skip


def map_demand_factor(
    profile: JobProfile, cluster: Cluster | None, n_maps: int | None = None
) -> tuple[float, str | None]:
    """The factor that takes a profiled map to its demand alone on ``cluster``'s cores (for a model that
    prices the contention itself), with the shared heap's for a run of ``n_maps`` maps (``None``: not
    priced), and the note that says so (``None`` where it is 1)."""
    gc = gc_stall_factor(profile, cluster, n_maps)
    known = _profiled_share(profile, cluster)
    if known is None or math.isclose(known[2], 1.0):
        return gc
    cpus, concurrency, shared = known
    return _with_gc(1.0 / shared, (
        f"maps / {shared:.2f}: their demand alone, where the profiled typical map shared its node's "
        f"{cpus} core(s) with {concurrency:.1f} task(s) on average"
    ), gc)  # fmt: skip
