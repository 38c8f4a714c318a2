"""Uber mode: a small job's tasks run one after another in the ApplicationMaster's own JVM.

With ``mapreduce.job.ubertask.enable`` a YARN MapReduce ApplicationMaster runs a small job
itself instead of asking for a container per task: its ``LocalContainerLauncher`` loops over
the maps, then the reduce, in the AM's JVM (MAPREDUCE-1220).  Hadoop decides it once per job, at
initialisation (``JobImpl.makeUberDecision``), and :func:`decide` is that rule: uber is enabled,
and the job has at most ``mapreduce.job.ubertask.maxmaps`` maps (9) and
``mapreduce.job.ubertask.maxreduces`` reduces (1), at most ``mapreduce.job.ubertask.maxbytes`` of
input (the file system's block size), tasks that fit the AM's container
(``yarn.app.mapreduce.am.resource.mb``, 1536 MB; ``yarn.app.mapreduce.am.resource.cpu-vcores``,
1) and no ``ChainMapper``/``ChainReducer`` (their stages need to run at once).  An uberized job
then runs its reduces only after every map (slow-start 1.0) with one attempt a task.

A prediction runs the rule on the predicted run (:func:`predicted_run`): an uberized run is one
node with one map and one reduce slot in one JVM, the LocalJobRunner's shape inside a
container, whatever the cluster's size; the job history says which runs were uberized
(``JOB_INITED``'s ``uberized``), and a profile of such a run is a profile of tasks that shared
one warm JVM (:attr:`profiles.profile.ProfileSource.uberized`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from predict.core import Cluster, Inputs
from predict.settings import JobSettings
from predict.units import SizeError, parse_size

__all__ = ["DEFAULT_BLOCK_BYTES", "UberDecision", "decide", "predicted_run", "uber_inputs"]

#: HDFS's default block size since Hadoop 2 (``dfs.blocksize``): the default of ``maxbytes``.
DEFAULT_BLOCK_BYTES = 128 * 2**20
#: The job's configuration keys of the file system's block size (2.x+ and 0.20 names).
BLOCK_SIZE_KEYS = ("dfs.blocksize", "dfs.block.size")
#: ``ChainMapper``/``ChainReducer``: the configuration keys that name the job's map and reduce classes.
_TASK_CLASS_KEYS = ("mapreduce.job.map.class", "mapreduce.job.reduce.class", "mapred.mapper.class",
                    "mapred.reducer.class")  # fmt: skip


@dataclass(frozen=True, slots=True)
class UberDecision:
    """Hadoop's decision for one run: ``uber``, and why not (``reasons``, Hadoop's words) where not."""

    uber: bool
    reasons: tuple[str, ...] = ()

    def line(self, maps: int, reduces: int, input_bytes: float) -> str:
        """One line for a prediction's assumptions."""
        what = f"{maps} map(s) + {reduces} reduce(s), {input_bytes / 2**20:.1f} MiB of input"
        if self.uber:
            return (
                f"uberized ({what}): its tasks run one after another in the ApplicationMaster's JVM, "
                "reduces after the maps (JobImpl.makeUberDecision)"
            )
        return f"not uberized ({what}): {'; '.join(self.reasons)}"


def _block_bytes(config: Mapping[str, str]) -> float:
    for key in BLOCK_SIZE_KEYS:
        raw = config.get(key, "").strip()
        if raw:
            try:
                size = float(parse_size(raw))
            except SizeError:
                continue
            if size > 0:
                return size
    return float(DEFAULT_BLOCK_BYTES)


def _chain_job(config: Mapping[str, str]) -> bool:
    return any(
        config.get(key, "").rsplit(".", 1)[-1] in ("ChainMapper", "ChainReducer") for key in _TASK_CLASS_KEYS
    )


def decide(
    settings: JobSettings, maps: int, input_bytes: float, config: Mapping[str, str] | None = None
) -> UberDecision:
    """Whether Hadoop uberizes a run of ``maps`` maps, ``settings.reduces`` reduces and ``input_bytes``.

    ``config``: the job's configuration (the profile's), for the block size (``dfs.blocksize``,
    the default of ``maxbytes``) and the map and reduce classes (no chain job is uberized).

    >>> s = JobSettings(reduces=1, ubertask_enable=True)
    >>> decide(s, 4, 2**20).uber, decide(s, 10, 2**20).reasons, decide(s, 4, 2**30).reasons
    (True, ('too many maps (10 > 9)',), ('too much input (1024.0 MiB > 128.0 MiB)',))
    """
    config = config or {}
    reasons = []
    if not settings.ubertask_enable:
        reasons.append("not enabled (mapreduce.job.ubertask.enable)")
    if maps > settings.ubertask_max_maps:
        reasons.append(f"too many maps ({maps} > {settings.ubertask_max_maps})")
    if settings.reduces > settings.ubertask_max_reduces:
        reasons.append(f"too many reduces ({settings.reduces} > {settings.ubertask_max_reduces})")
    max_bytes = (
        settings.ubertask_max_bytes if settings.ubertask_max_bytes is not None else _block_bytes(config)
    )
    if input_bytes > max_bytes:
        reasons.append(f"too much input ({input_bytes / 2**20:.1f} MiB > {max_bytes / 2**20:.1f} MiB)")
    memory = (
        settings.map_memory_mb
        if settings.reduces == 0
        else max(settings.map_memory_mb, settings.reduce_memory_mb)
    )
    if memory > settings.am_memory_mb:
        reasons.append(f"too much RAM ({memory:g} MB > the AM's {settings.am_memory_mb:g} MB)")
    vcores = (
        settings.map_vcores if settings.reduces == 0 else max(settings.map_vcores, settings.reduce_vcores)
    )
    if vcores > settings.am_vcores:
        reasons.append(f"too much CPU ({vcores} > the AM's {settings.am_vcores} vcores)")
    if _chain_job(config):
        reasons.append("chainjob")
    return UberDecision(not reasons, tuple(reasons))


def predicted_run(
    cluster: Cluster,
    settings: JobSettings,
    maps: int,
    input_bytes: float,
    config: Mapping[str, str] | None = None,
) -> tuple[Cluster, JobSettings, UberDecision]:
    """The cluster and settings the run has: for an uberized run (:func:`decide`) one node of one map
    and one reduce slot in one JVM, reduces after the maps; otherwise ``cluster`` and ``settings``."""
    decision = decide(settings, maps, input_bytes, config)
    if not decision.uber:
        return cluster, settings, decision
    one = dataclasses.replace(cluster, nodes=1, map_slots_per_node=1, reduce_slots_per_node=1, uber=True)
    return one, dataclasses.replace(settings, slowstart=1.0), decision


def uber_inputs(inputs: Inputs, maps: int) -> tuple[Inputs, str | None]:
    """The inputs of the run Hadoop would make of a run of ``maps`` maps (:func:`predicted_run`), and
    what a prediction says of it: ``None`` where neither the profiled nor the predicted run is uberized
    and the settings do not ask for it.

    A profile of separate task JVMs used for an uberized run keeps each task's JVM start-up in its
    cost (an upper estimate); a profile of an uberized run used for one that is not lacks it.
    """
    profile = inputs.profile
    cluster, settings, decision = predicted_run(
        inputs.cluster, inputs.settings, maps, inputs.dataset.input_bytes, profile.source.config
    )
    line = decision.line(maps, settings.reduces, inputs.dataset.input_bytes)
    if decision.uber:
        if not profile.source.one_jvm:
            line += "; the profiled tasks each started a JVM, whose start-up stays in every task's cost"
        return dataclasses.replace(inputs, cluster=cluster, settings=settings), line
    if profile.source.uberized:
        return inputs, (
            f"the profiled run was uberized (its tasks shared the ApplicationMaster's warm JVM), this run is "
            f"{line}: each of its tasks starts a JVM of its own, a cost the profile does not hold"
        )
    return inputs, (line if settings.ubertask_enable else None)  # asked for, and why Hadoop would not
