"""Herodotou's phase cost model of a MapReduce job (Duke CS-2011-05, eqs. 2-94).

The dataflow (spills, merge passes, shuffle files, the three reduce-side merge
steps) comes from :mod:`predict.dataflow`; this module prices it with cost
statistics (Table 4) and composes the job (eqs. 90-94), in waves.

The statistics (Tables 3 and 4) and where phaseline takes them from are
:mod:`predict.herodotou_stats`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from phaseline.schemas import Phase
from predict.contention import map_contention
from predict.core import (
    MS_PER_S,
    Cluster,
    Dataset,
    Inputs,
    JobSettings,
    Model,
    PhaseDurationModel,
    Prediction,
    register,
)
from predict.dataflow import DataStats, MapDataflow, ReduceDataflow, map_dataflow, reduce_dataflow
from predict.herodotou_stats import CostStats, cost_stats, data_stats
from predict.tasks import (
    InputShape,
    overlap_scaled,
    profiled_settings,
    profiled_shape,
    resolve_input,
    warn_if_mismatched,
)
from profiles.profile import JobProfile, Stage
from profiles.profile_stats import DurationStats

__all__ = ["CostStats", "HerodotouModel", "JobCost", "job_cost"]


def map_phase_costs(m: MapDataflow, c: CostStats, ds: DataStats, reduces: int) -> dict[str, float]:
    """Phase costs (ms) of one map task (eqs. 4-5, 8, 19-20, 34-36)."""
    read = m.in_bytes * ds.input_compress_ratio * (c.hdfs_read + c.in_uncompr)  # eq. 4 (pSplitSize)
    costs = {Phase.READ.value: read, Phase.MAP.value: m.in_recs * c.map_cpu}  # eq. 5
    if reduces == 0:  # eq. 8: map output straight to HDFS
        costs[Phase.WRITE.value] = (
            m.out_bytes * c.out_compr + m.out_bytes * ds.out_compress_ratio * c.hdfs_write
        )
        return costs
    costs[Phase.COLLECT.value] = m.out_recs * (c.partition_cpu + c.serde_cpu)  # eq. 19
    # eqs. 20 and 35 count every spill as full (dNumSpills x dSpillBufferRecs); here the last spill
    # holds only the rest of the output, which matters when a job spills only a few times
    sort_depth = math.log2(m.spill_buffer_recs / reduces) if m.spill_buffer_recs > reduces else 0.0
    costs[Phase.SPILL.value] = (  # eq. 20
        m.out_recs * sort_depth * c.sort_cpu
        + m.out_recs * c.combine_cpu
        + m.out_bytes * ds.combine_size_sel * c.interm_compr
        + m.spilled_bytes * c.local_write
    )
    if m.spills <= 1:  # section 5: no merge phase for a single spill
        costs[Phase.MERGE.value] = 0.0
        return costs
    per_pass_byte = c.local_read + c.interm_uncompr + c.local_write
    interm = m.interm_merge_spills * (  # eq. 34
        m.spill_file_bytes * per_pass_byte
        + m.spill_file_recs * c.merge_cpu
        + m.spill_file_bytes / ds.interm_compress_ratio * c.interm_compr
    )
    # eq. 35 charges csCombineCPUCost on every merged record; the combiner runs in the merge only
    # when eq. 28 holds (Hadoop's min.num.spills.for.combine), so only then is it charged here
    combine = c.combine_cpu if m.combine_in_merge else 0.0
    final = (  # eq. 35
        m.spilled_bytes * (c.local_read + c.interm_uncompr)
        + m.spilled_recs * (c.merge_cpu + combine)
        + m.interm_bytes / ds.interm_compress_ratio * c.interm_compr
        + m.interm_bytes * c.local_write
    )
    costs[Phase.MERGE.value] = interm + final  # eq. 36
    return costs


def _merge_step(size: float, recs: float, c: CostStats, ds: DataStats, read: bool = True) -> float:
    """Eqs. 71, 76 and 81: read (unless step 1, from memory), merge, compress and write ``size`` bytes."""
    per_byte = (c.local_read + c.interm_uncompr if read else 0.0) + c.local_write
    return size * per_byte + recs * c.merge_cpu + size / ds.interm_compress_ratio * c.interm_compr


def reduce_phase_costs(r: ReduceDataflow, c: CostStats, ds: DataStats, f: int) -> dict[str, float]:
    """Phase costs (ms) of one reduce task (eqs. 62-64, 71-82, 88-89)."""
    n_files = r.shuffle_files
    in_mem = (
        r.shuffle_bytes * c.interm_uncompr
        + n_files * r.shuffle_file_recs * (c.merge_cpu + c.combine_cpu)
        + n_files * r.shuffle_file_bytes / ds.interm_compress_ratio * c.interm_compr
        if r.in_memory
        else 0.0
    ) + n_files * r.shuffle_file_bytes * c.local_write  # eq. 62
    merged_bytes = f * r.shuffle_file_bytes  # eq. 57
    merged_recs = f * r.shuffle_file_recs  # eq. 58
    on_disk = r.disk_merges * _merge_step(merged_bytes, merged_recs, c, ds)  # eq. 63
    shuffle = r.shuffle_bytes * c.network + in_mem + on_disk  # eq. 64
    step1 = _merge_step(r.step1_bytes, r.step1_recs, c, ds, read=False)  # eq. 71
    step2 = _merge_step(r.step2_bytes, r.step2_recs, c, ds)  # eq. 76
    step3 = _merge_step(r.step3_bytes, r.step3_recs, c, ds)  # eq. 81
    reduce = r.from_disk_bytes * (c.local_read + c.interm_uncompr) + r.in_recs * c.reduce_cpu  # eq. 88
    write = r.out_bytes * c.out_compr + r.out_bytes * ds.out_compress_ratio * c.hdfs_write  # eq. 89
    return {
        Phase.SHUFFLE.value: shuffle,
        Phase.SORT.value: step1 + step2 + step3,  # eq. 82 (the reduce-side merge, a.k.a. sort)
        Phase.REDUCE.value: reduce,
        Phase.WRITE.value: write,
    }


@dataclass(frozen=True, slots=True)
class JobCost:
    """Everything the model derived for one job, for :class:`Prediction` and for what-if tables."""

    maps: int
    map_waves: int
    reduce_waves: int
    map_avg: MapDataflow
    map_max: MapDataflow
    reduce: ReduceDataflow | None
    map_phases_ms: dict[str, float]
    map_max_ms: float
    reduce_phases_ms: dict[str, float]
    reduce_ms: float
    costs: CostStats
    map_overhead_ms: float
    reduce_overhead_ms: float
    notes: tuple[str, ...]

    @property
    def map_stage_ms(self) -> float:
        return self.map_waves * self.map_max_ms  # replaces eq. 92 (N x average / slots): waves x longest task

    @property
    def reduce_stage_ms(self) -> float:
        return self.reduce_waves * self.reduce_ms  # replaces eq. 93 likewise: waves x the reduce task

    @property
    def total_ms(self) -> float:
        return self.map_stage_ms + self.reduce_stage_ms  # eq. 94


@dataclass(frozen=True, slots=True)
class _Tasks:
    maps: int
    map_avg: MapDataflow
    map_max: MapDataflow
    reduce: ReduceDataflow | None
    map_phases_ms: dict[str, float]
    map_avg_ms: float  # phases + fixed costs, no overhead
    map_max_ms: float
    reduce_phases_ms: dict[str, float]
    reduce_ms: float
    costs: CostStats
    notes: list[str]


def _tasks(
    profile: JobProfile, platform: PhaseDurationModel, shape: InputShape, settings: JobSettings
) -> _Tasks:
    """Eqs. 2-89 for an average and a largest map and a reduce; task totals per eqs. 90-91, no overhead."""
    ds, notes = data_stats(profile, settings)
    m_avg = map_dataflow(shape.avg_split_bytes, shape.avg_split_records, ds, settings)
    m_max = map_dataflow(shape.max_split_bytes, shape.max_split_records, ds, settings)
    r = reduce_dataflow(m_avg, shape.splits, settings.reduces, ds, settings) if settings.reduces > 0 else None
    costs, cost_notes = cost_stats(profile, platform, settings, m_avg, r)
    notes.extend(cost_notes)
    map_phases = map_phase_costs(m_avg, costs, ds, settings.reduces)
    map_max = sum(map_phase_costs(m_max, costs, ds, settings.reduces).values()) + costs.map_fixed_ms  # eq. 90
    reduce_phases = reduce_phase_costs(r, costs, ds, settings.sort_factor) if r is not None else {}
    # eq. 91 (the paper's cSpillPhaseTime there is the reduce's Write phase, eq. 89)
    reduce_ms = sum(reduce_phases.values()) + costs.reduce_fixed_ms if r is not None else 0.0
    return _Tasks(
        shape.splits,
        m_avg,
        m_max,
        r,
        map_phases,
        sum(map_phases.values()) + costs.map_fixed_ms,
        map_max,
        reduce_phases,
        reduce_ms,
        costs,
        notes,
    )


def _overhead(
    measured: DurationStats | None, modelled: float, profiled: float | None, what: str
) -> tuple[float, str]:
    if measured is not None:
        over = measured.avg_ms - modelled
        warn_if_mismatched(measured.avg_ms, modelled, what)
        return over, f"{what} overhead calibrated on the profiled run: {over:+.0f} ms per task"
    if profiled is not None:
        return profiled, f"{what} overhead {profiled:.0f} ms per task, as profiled"
    return 0.0, f"{what} overhead unknown in the profile: counted as 0"


def job_cost(
    profile: JobProfile,
    platform: PhaseDurationModel,
    cluster: Cluster,
    dataset: Dataset,
    settings: JobSettings,
) -> JobCost:
    """Herodotou's job cost: task costs (eqs. 90-91), composed in waves (eqs. 92-94).

    Each map wave lasts as long as its longest task, the one on the largest
    split; map output volume (and so the shuffle) follows the average split.
    The per-task overhead (setup, cleanup: csSetupCPUCost, csCleanupCPUCost)
    is calibrated on the profiled run where it measured whole tasks: what the
    measured average task adds to the model at the profiled size and settings.
    The maps then take :func:`~predict.contention.map_contention`'s factor.
    """
    shape = resolve_input(profile, dataset, settings)
    now = _tasks(profile, platform, shape, settings)
    then = _tasks(profile, platform, profiled_shape(profile), profiled_settings(profile))
    map_over, map_note = _overhead(
        profile.stage(Stage.MAP_TASK), then.map_avg_ms, profile.map_task_overhead_ms, "map task"
    )
    notes = [*shape.assumptions, *now.notes, map_note]
    # an overlap is a share of the phases: the longest map's is taken off its own phases
    map_max_over = overlap_scaled(map_over, then.map_avg_ms, now.map_max_ms)
    map_over = overlap_scaled(map_over, then.map_avg_ms, now.map_avg_ms, notes=notes, what="map task")
    reduce_over = 0.0
    if now.reduce is not None:
        measured = profile.stage(Stage.REDUCE_TASK) if profile.num_reduces > 0 else None
        reduce_over, reduce_note = _overhead(
            measured, then.reduce_ms, profile.reduce_task_overhead_ms, "reduce task"
        )
        notes.append(reduce_note)
        reduce_over = overlap_scaled(
            reduce_over, then.reduce_ms, now.reduce_ms, notes=notes, what="reduce task"
        )
    # more maps at once on a node than it has cores share them (the fixed costs take the factor with
    # the overhead, so the phases and the overhead still add up to the map)
    factor, contended = map_contention(profile, cluster, shape.splits)
    if contended is not None:
        notes.append(contended)
    return JobCost(
        maps=shape.splits,
        map_waves=-(-shape.splits // cluster.map_slots),
        reduce_waves=-(-settings.reduces // cluster.reduce_slots),
        map_avg=now.map_avg,
        map_max=now.map_max,
        reduce=now.reduce,
        map_phases_ms={k: v * factor for k, v in now.map_phases_ms.items()},
        map_max_ms=max(0.0, now.map_max_ms + map_max_over) * factor,
        reduce_phases_ms=now.reduce_phases_ms,
        reduce_ms=max(0.0, now.reduce_ms + reduce_over) if now.reduce is not None else 0.0,
        costs=now.costs,
        map_overhead_ms=map_over * factor + now.costs.map_fixed_ms * (factor - 1),
        reduce_overhead_ms=reduce_over,
        notes=tuple(dict.fromkeys(notes)),
    )


def dataflow_summary(cost: JobCost) -> dict[str, float]:
    """The dataflow figures a what-if table shows (per task unless named otherwise)."""
    m = cost.map_avg
    flow = {
        "maps": float(cost.maps),
        "map_waves": float(cost.map_waves),
        "map_output_bytes": m.out_bytes,
        "spills": float(m.spills),
        "spill_buffer_records": m.spill_buffer_recs,
        "merge_passes": float(m.merge_passes),
        "map_interm_bytes": m.interm_bytes,
    }
    if cost.reduce is not None:
        r = cost.reduce
        flow.update(
            {
                "reduce_waves": float(cost.reduce_waves),
                "shuffle_bytes_per_reduce": r.shuffle_bytes,
                "shuffle_in_memory": float(r.in_memory),
                "shuffle_files": float(r.shuffle_files),
                "shuffle_disk_merges": float(r.disk_merges),
                "segments_in_memory": float(r.segs_in_mem),
                "reduce_input_bytes": r.in_bytes,
            }
        )
    return flow


@dataclass(frozen=True, slots=True)
class HerodotouModel(Model):
    """Herodotou 2011's phase cost model; no interval, so ``low_s``/``high_s`` are ``None``."""

    name: str = "herodotou"

    def predict_inputs(self, inputs: Inputs) -> Prediction:
        """Predict the completion time of ``profile``'s job on ``dataset`` (Herodotou 2011, eqs. 2-94)."""
        cost = job_cost(inputs.profile, inputs.platform, inputs.cluster, inputs.dataset, inputs.settings)
        phases = {f"map.{k}": v / MS_PER_S for k, v in cost.map_phases_ms.items()}
        phases["map.overhead"] = (cost.costs.map_fixed_ms + cost.map_overhead_ms) / MS_PER_S
        if cost.reduce is not None:
            phases.update({f"reduce.{k}": v / MS_PER_S for k, v in cost.reduce_phases_ms.items()})
            phases["reduce.overhead"] = (cost.costs.reduce_fixed_ms + cost.reduce_overhead_ms) / MS_PER_S
        return Prediction(
            model=self.name,
            seconds=cost.total_ms / MS_PER_S,
            stages={"map": cost.map_stage_ms / MS_PER_S, "reduce": cost.reduce_stage_ms / MS_PER_S},
            phases=phases,
            dataflow=dataflow_summary(cost),
            assumptions=(
                *cost.notes,
                "stages run back to back: no shuffle overlap with the map stage (eq. 94)",
            ),
        )


register(HerodotouModel())
