"""The one-time map cost every model adds once per job: the profile's first-wave extra per slot, and
in one JVM (the local engine) on other slots its later stall as those slots can hide it.

:mod:`profiles.task_costs` keeps the first wave's maps and the later waves' stalls out of the
typical map (:attr:`~profiles.profile.JobProfile.map_one_time_ms`,
:attr:`~profiles.profile.JobProfile.map_one_time_later_ms`); :func:`with_one_time` adds them back to
a model's prediction, as ARIA keeps the first-wave shuffle apart from the typical one (Verma et al.
2011, section 3).
"""

from __future__ import annotations

from phaseline.hadoop_names import LOCAL_ENGINE
from predict.core import MS_PER_S, Cluster, Prediction
from profiles.profile import JobProfile, Stage

__all__ = ["one_time_ms", "shares_one_jvm", "with_one_time"]


def shares_one_jvm(profile: JobProfile, cluster: Cluster) -> bool:
    """Whether the predicted run's maps share one JVM, as the profiled runs' did.

    LocalJobRunner (:func:`~phaseline.hadoop_names.local_runner_job`) runs every task of a job in
    one JVM; a cluster gives each task a JVM of its own.  The predicted run is the local engine's
    when the cluster says so (``engine``), or, with no engine said, when the profile is the local
    engine's and the cluster is one node (``phaseline predict``'s default cluster), or an uberized
    run (``cluster.uber``: :mod:`predict.uber`) where the profiled ones shared one JVM too.
    """
    if cluster.uber:
        return profile.source.one_jvm
    if not profile.source.local_runner:
        return False
    if cluster.engine is None:
        return cluster.nodes == 1
    return cluster.engine == LOCAL_ENGINE


def one_time_ms(
    profile: JobProfile,
    cluster: Cluster | None = None,
    maps: int | None = None,
    split_bytes: float | None = None,
) -> float:
    """The one-time map cost a prediction adds (ms): the profile's term per slot, or, for a run in one
    JVM on another number of slots, its first-wave part per slot and its later part as the slots
    can hide it.

    The first wave's extra is every slot's (each slot's first map loads and compiles the job's code
    as the others do).  A later map's stall ``L`` is one of the job's run-time compiles: in one JVM
    it happens once, on whichever map reaches it, while the other slots run the remaining maps.  It
    lengthens that one map, though, and no list schedule ends before its longest task (Graham 1969;
    ARIA's lower bound takes the same maximum, Verma et al. 2011, section 3): after the first wave of
    ``k`` maps, the ``n - k`` others take at least ``max(((n - k) t + L) / k, t + L)`` for the typical
    map ``t``, so the stall adds ``max(L / k, t + L - (n - k) t / k)``, at most ``L``: all of it where
    at most one more wave follows the first, ``L / k`` where many maps follow.  ``t`` is the
    profile's typical map scaled by ``split_bytes`` (the predicted split) over the profiled split.
    """
    extra = profile.map_one_time_ms or 0.0
    later, slots = profile.map_one_time_later_ms or 0.0, profile.map_slots
    if later <= 0 or not slots or cluster is None or not shares_one_jvm(profile, cluster):
        return extra
    at_once = max(1, min(cluster.map_slots, maps or cluster.map_slots))
    if at_once == slots:  # the profiled slots: the term as profiled (and the prediction says so)
        return extra
    later = min(later, extra * slots)  # (a hand-written profile's part may not exceed the whole)
    return extra - later / slots + _later_stall_ms(profile, later, at_once, maps, split_bytes)


def _later_stall_ms(
    profile: JobProfile, later: float, at_once: int, maps: int | None, split_bytes: float | None
) -> float:
    """What a later stall of ``later`` ms adds to a map stage of ``maps`` maps on ``at_once`` slots
    (:func:`one_time_ms`): its share per slot, or what the stalled map's own length leaves unhidden."""
    shared = later / at_once
    typical = profile.stage(Stage.MAP_TASK)
    if maps is None or typical is None:
        return shared
    profiled_split = profile.input.avg_split_bytes
    scale = split_bytes / profiled_split if split_bytes and profiled_split else 1.0
    t = typical.avg_ms * scale
    return min(later, max(shared, t + later - (maps - at_once) * t / at_once))


def with_one_time(
    prediction: Prediction,
    profile: JobProfile,
    cluster: Cluster | None = None,
    maps: int | None = None,
    split_bytes: float | None = None,
) -> Prediction:
    """``prediction`` with the profile's one-time map cost added once (estimate and interval alike).

    The first wave of maps pays what later maps inherit (container start, class
    loading, JIT): :mod:`profiles.task_costs` keeps it out of the per-task cost,
    as ARIA keeps the first-wave shuffle apart from the typical one (Verma et
    al. 2011, section 3), and every model adds it here, once per job: the first
    wave runs on every slot at once, so its extra per slot lengthens the map
    stage once; the interval's upper end adds the most one left-out map spent
    beyond the typical one (``map_one_time_max_ms``), which one slot may carry
    whole.  A profile without the term (``None``, or 0) leaves the prediction
    as it is.  In one JVM on another number of slots the later waves' part is
    shared among the slots as far as the stalled map's own length allows
    (:func:`one_time_ms`, with ``cluster``, the run's ``maps`` and their ``split_bytes``).

    Spreading the whole term over the predicted run's slots (a one-slot profile
    adding half of it to a two-slot run) was tried on the five-run suite's tuning
    set (2026-11-30) and rejected: best median 7.3 % -> 9.6 %, Herodotou's
    8.5 % -> 12.5 %; maponly's and topn's two-slot runs, whose first maps stall
    on every slot at once, fell from within 15 % to -30 % to -45 %.
    """
    extra_ms = one_time_ms(profile, cluster, maps, split_bytes)
    if extra_ms <= 0:
        return prediction
    extra = extra_ms / MS_PER_S
    # the upper end: one slot may carry a left-out map's whole extra, not its share per slot
    most = max(extra, (profile.map_one_time_max_ms or 0.0) / MS_PER_S)
    what = "first-wave maps' extra per slot"
    if extra_ms != profile.map_one_time_ms:
        what = "first-wave maps' extra per slot, and the later waves' stalls as the slots share them"
    note = f"one-time map cost {extra_ms:.0f} ms ({what}) added once, not per task"
    return prediction.lengthened({"map.one_time": extra}, (note,), high_extra_s=most)
