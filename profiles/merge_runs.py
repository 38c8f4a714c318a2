"""Several runs of one job as one profile (:func:`merge_profiles`).

Averages weighted by what they average over, maxima kept, counters added; the per-task map cost
and the reduce function's fixed and per-record cost fitted across the runs' sizes where they differ
(:mod:`profiles.task_costs`); the makespans kept as run-to-run noise only where the runs are
repeats of one case.  Warnings name what the merge cannot reconcile: settings the runs differ in,
selectivities that say other data or code.
"""

from __future__ import annotations

import dataclasses
import statistics
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from phaseline.errors import DataQualityWarning, ProfileError
from profiles.first_reduces import with_reduce_evidence
from profiles.profile import SAME_CASE_RTOL, JobProfile, ProfileSource, Stage
from profiles.profile_stats import CostStatistics, Counters, DataflowStatistics, DurationStats, InputStats
from profiles.task_costs import fit_map_work, fit_reduce_work, pooled_rel_sd, unused_fit_reason

__all__ = ["SELECTIVITY_SPREAD", "merge_profiles", "selectivity_spread", "shared_run"]

T = TypeVar("T")

def _wmean(pairs: Sequence[tuple[float | None, float]]) -> float | None:
    """Weighted mean over the pairs whose value is known; ``None`` if none is."""
    known = [(v, w) for v, w in pairs if v is not None]
    if not known:
        return None
    total = sum(w for _, w in known)
    if total <= 0:
        return sum(v for v, _ in known) / len(known)
    return sum(v * w for v, w in known) / total


def _merge_durations(items: Sequence[Mapping[str, DurationStats]]) -> dict[str, DurationStats]:
    keys = sorted({k for m in items for k in m})
    merged = {}
    for key in keys:
        stats = [m[key] for m in items if key in m]
        count = sum(s.count for s in stats)
        avg = _wmean([(s.avg_ms, s.count) for s in stats])
        merged[key] = DurationStats(avg_ms=avg or 0.0, max_ms=max(s.max_ms for s in stats), count=count)
    return merged


def _merge_fields(
    items: Sequence[T], weights: Mapping[str, Sequence[float]], default: Sequence[float], factory: Callable[..., T]
) -> T:
    """Each field the runs' mean weighted by ``weights[field]`` (the amount it is per), else by ``default``."""
    values: dict[str, float | None] = {}
    for f in dataclasses.fields(items[0]):  # type: ignore[arg-type]
        ws = weights.get(f.name, default)
        values[f.name] = _wmean([(getattr(it, f.name), w) for it, w in zip(items, ws, strict=True)])
    return factory(**values)


def _field_weights(
    in_bytes: Sequence[float], in_recs: Sequence[float], out_bytes: Sequence[float], out_recs: Sequence[float]
) -> tuple[dict[str, Sequence[float]], dict[str, Sequence[float]]]:
    """Per field of :class:`DataflowStatistics` and :class:`CostStatistics`, the runs' amounts it is
    a ratio or a cost of: a ratio weighted by its denominator (as the profile's own selectivities
    are, so that ``dataflow.map_size_sel`` is ``map_size_sel``), a cost per byte or record by the
    bytes or records it is paid on.  Fields not named here (memory, per-task costs) go by maps."""
    dataflow = {
        "input_pair_width": in_recs, "map_size_sel": in_bytes, "map_recs_sel": in_recs,
        "reduce_size_sel": out_bytes, "reduce_recs_sel": out_recs, "recs_per_red_group": out_recs,
        "combine_size_sel": out_bytes, "combine_recs_sel": out_recs, "input_compress_ratio": in_bytes,
        "interm_compress_ratio": out_bytes, "out_compress_ratio": out_bytes,
    }  # fmt: skip
    costs = {
        "hdfs_read": in_bytes, "in_uncompr_cpu": in_bytes, "map_cpu": in_recs,
        "local_io_read": out_bytes, "local_io_write": out_bytes, "network": out_bytes,
        "interm_uncompr_cpu": out_bytes, "interm_compr_cpu": out_bytes, "partition_cpu": out_recs,
        "serde_cpu": out_recs, "sort_cpu": out_recs, "merge_cpu": out_recs, "combine_cpu": out_recs,
        "reduce_cpu": out_recs,
    }  # fmt: skip
    return dataflow, costs


def _sum_counters(items: Sequence[Counters]) -> Counters:
    values: dict[str, int | None] = {}
    for f in dataclasses.fields(Counters):
        parts = [getattr(c, f.name) for c in items]
        values[f.name] = None if any(p is None for p in parts) else sum(parts)
    return Counters(**values)


#: Settings that differ between runs of one job at other sizes as a matter of course.
_TASK_COUNT_KEYS = frozenset(("mapred.map.tasks", "mapreduce.job.maps", "mapred.reduce.tasks", "mapreduce.job.reduces"))


#: Runs of one job whose selectivities differ by more than this factor are different work
#: (other data, other code): merging them averages two jobs into a third.
SELECTIVITY_SPREAD = 1.25


def selectivity_spread(values: Sequence[float | None]) -> tuple[float, float] | None:
    """``(low, high)`` of the runs' known ``values`` where they span more than :data:`SELECTIVITY_SPREAD`
    (one run's 0 beside another's positive value does too), else None.

    >>> selectivity_spread([0.6, None, 1.8]), selectivity_spread([1.0, 1.2])
    ((0.6, 1.8), None)
    """
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return None
    low, high = min(known), max(known)
    return (low, high) if high > 0 and (low <= 0 or high / low > SELECTIVITY_SPREAD) else None


def _warn_on_spread(what: str, values: Sequence[float | None]) -> None:
    """A DataQualityWarning when the runs' ``values`` span more than :data:`SELECTIVITY_SPREAD`."""
    spread = selectivity_spread(values)
    if spread is not None:
        low, high = spread
        warnings.warn(
            DataQualityWarning(
                f"the merged runs' {what} ranges from {low:.3g} to {high:.3g}: different data or different "
                "code under one job name; the merged profile averages them (profile the runs apart to compare)"
            ),
            stacklevel=3,
        )


def shared_run(profiles: Sequence[JobProfile]) -> tuple[str, int, int] | None:
    """The first run (job id) two of ``profiles`` both hold, with the indexes of the first two that
    do (the same profile given twice, or a copy of it); None when every run is in one profile."""
    seen: dict[str, int] = {}
    for i, p in enumerate(profiles):
        for job in dict.fromkeys(p.source.job_ids):
            if job in seen:
                return job, seen[job], i
            seen[job] = i
    return None


def merge_profiles(profiles: Sequence[JobProfile]) -> JobProfile:
    """Merge the profiles of several runs of the same job into one.

    Averages are weighted by what they average over (task counts for
    durations, input bytes for size selectivities, input records for record
    selectivities and per-record times), maxima take the maximum, counters
    add up, and a statistic known in only some runs is averaged over those.
    The configuration keeps the settings all runs agree on; a
    :class:`~phaseline.errors.DataQualityWarning` names the others (task
    counts aside), and another says when the runs' map or reduce selectivities
    span more than :data:`SELECTIVITY_SPREAD` (other data or other code).

    Raises
    ------
    ProfileError
        No profiles, profiles of differently named jobs (or of named and unnamed ones), or
        profiles that share a run (one job id in two of them: the same profile given twice,
        or a copy of it), whose run would be counted twice.
    """
    if not profiles:
        raise ProfileError("merge_profiles: no profiles to merge")
    if len(profiles) == 1:
        return profiles[0]
    name = _job_name(profiles)
    config = _shared_config(profiles)
    _warn_on_spread("map selectivity (output/input bytes)", [p.map_size_sel for p in profiles])
    _warn_on_spread("map selectivity (output/input records)", [p.map_recs_sel for p in profiles])
    _warn_on_spread("reduce selectivity (output/input bytes)", [p.reduce_size_sel for p in profiles])
    versions = {p.source.hadoop_version for p in profiles}
    source = ProfileSource(
        job_ids=tuple(j for p in profiles for j in p.source.job_ids), job_name=name,
        hadoop_version=versions.pop() if len(versions) == 1 else None,
        config=config,
        uberized=all(p.source.uberized for p in profiles),
    )
    # the runs' noise, from the repeats each profile carries: what a fit's fixed part must stand out of
    noise = pooled_rel_sd([p.run_log_sd() for p in profiles])
    merged = _with_map_costs(_merged(profiles, source), profiles, noise)
    return with_reduce_evidence(_with_reduce_costs(merged, profiles, noise))


def _job_name(profiles: Sequence[JobProfile]) -> str | None:
    """The one job the runs are of (None: none of them is named, with a warning); a
    :class:`~phaseline.errors.ProfileError` where they share a run or name different jobs."""
    if (shared := shared_run(profiles)) is not None:
        job, first, second = shared
        raise ProfileError(
            f"merge_profiles: run {job} is in profiles {first + 1} and {second + 1}; merged, it would count "
            "twice (give each run's profile once)"
        )
    names = {p.source.job_name for p in profiles if p.source.job_name is not None}
    if len(names) > 1:
        raise ProfileError(
            f"merge_profiles: profiles of different jobs ({', '.join(sorted(names))}) do not merge"
        )
    unnamed = [job for p in profiles if p.source.job_name is None for job in p.source.job_ids]
    if names and unnamed:  # nothing says the unnamed run is the named job: two jobs' times would mix
        raise ProfileError(
            f"merge_profiles: {', '.join(unnamed)} has no job name, so it cannot be told to be a run of "
            f"{next(iter(names))!r}; profile it alone"
        )
    if not names:  # nothing names them one job; merged all the same, as the user asked
        warnings.warn(
            DataQualityWarning(
                f"merging runs without a job name ({', '.join(unnamed)}): nothing says they are runs of "
                "one job; two jobs' profiles merged give neither's times"
            ),
            stacklevel=3,
        )
    return next(iter(names)) if names else None


def _shared_config(profiles: Sequence[JobProfile]) -> dict[str, str]:
    """The settings every run agrees on; a warning names the others (task counts aside)."""
    configs = [p.source.config for p in profiles]
    config = {k: v for k, v in configs[0].items() if all(c.get(k) == v for c in configs[1:])}
    differ = sorted({k for c in configs for k in c} - config.keys() - _TASK_COUNT_KEYS)
    if differ:
        shown = "; ".join(f"{k} ({', '.join(sorted({str(c.get(k)) for c in configs}))})" for k in differ[:5])
        warnings.warn(
            DataQualityWarning(
                f"the merged runs differ in {len(differ)} setting(s), which the merged profile leaves out "
                f"(predictions take them from the new settings or Hadoop's defaults): {shown}"
                + (" ..." if len(differ) > 5 else "")
            ),
            stacklevel=3,
        )
    return config


def _merged(profiles: Sequence[JobProfile], source: ProfileSource) -> JobProfile:
    """The runs' statistics merged: each average weighted by what it averages over."""
    in_bytes = [p.input.total_bytes for p in profiles]
    in_recs = [p.input.total_records for p in profiles]
    out_bytes = [b * p.map_size_sel for b, p in zip(in_bytes, profiles, strict=True)]
    out_recs = [r * p.map_recs_sel for r, p in zip(in_recs, profiles, strict=True)]
    maps = [float(p.num_maps) for p in profiles]
    reduces = [float(p.num_reduces) for p in profiles]
    splits = sum(p.input.splits for p in profiles)
    combine = [(p.combine_size_sel, p.combine_recs_sel) for p in profiles]
    dataflow_w, cost_w = _field_weights(in_bytes, in_recs, out_bytes, out_recs)
    return JobProfile(
        source=source,
        num_maps=round(sum(maps) / len(profiles)),
        num_reduces=round(sum(reduces) / len(profiles)),
        input=InputStats(
            splits=max(1, round(splits / len(profiles))),
            avg_split_bytes=sum(in_bytes) / splits,
            max_split_bytes=max(p.input.max_split_bytes for p in profiles),
            avg_split_records=sum(in_recs) / splits,
            max_split_records=max(p.input.max_split_records for p in profiles),
        ),
        map_size_sel=_wmean([(p.map_size_sel, w) for p, w in zip(profiles, in_bytes, strict=True)]) or 0.0,
        map_recs_sel=_wmean([(p.map_recs_sel, w) for p, w in zip(profiles, in_recs, strict=True)]) or 0.0,
        reduce_size_sel=_wmean([(p.reduce_size_sel, w) for p, w in zip(profiles, out_bytes, strict=True)]),
        reduce_recs_sel=_wmean([(p.reduce_recs_sel, w) for p, w in zip(profiles, out_recs, strict=True)]),
        combine_size_sel=_wmean([(c[0], w) for c, w in zip(combine, out_bytes, strict=True)]),
        combine_recs_sel=_wmean([(c[1], w) for c, w in zip(combine, out_recs, strict=True)]),
        map_ms_per_record=_wmean([(p.map_ms_per_record, w) for p, w in zip(profiles, in_recs, strict=True)]),
        reduce_ms_per_record=_wmean(
            [(p.reduce_ms_per_record, w) for p, w in zip(profiles, out_recs, strict=True)]
        ),
        map_task_overhead_ms=_wmean(
            [(p.map_task_overhead_ms, w) for p, w in zip(profiles, maps, strict=True)]
        ),
        reduce_task_overhead_ms=_wmean([(p.reduce_task_overhead_ms, w) for p, w in zip(profiles, reduces, strict=True)]),
        reduce_one_time_ms=_wmean([(p.reduce_one_time_ms, w) for p, w in zip(profiles, reduces, strict=True)]),
        reduce_tasks_left_out=sum(p.reduce_tasks_left_out for p in profiles),
        jit_one_time_ms=_wmean([(p.jit_one_time_ms, 1.0) for p in profiles]),
        stages=_merge_durations([p.stages for p in profiles]),
        phases=_merge_durations([p.phases for p in profiles]),
        counters=_sum_counters([p.counters for p in profiles]),
        dataflow=_merge_fields([p.dataflow for p in profiles], dataflow_w, maps, DataflowStatistics),
        costs=_merge_fields([p.costs for p in profiles], cost_w, maps, CostStatistics),
        runs=sum(p.runs for p in profiles),
        makespans_ms=_repeat_makespans(profiles),
    )


def _map_work_ms(p: JobProfile) -> float | None:
    """A run's total map time: its maps at the typical duration plus the one-time term on each slot."""
    typical = p.stage(Stage.MAP_TASK)
    if typical is None or p.map_one_time_ms is None or p.map_slots is None:
        return None
    return p.num_maps * typical.avg_ms + p.map_slots * p.map_one_time_ms


def _with_map_costs(merged: JobProfile, profiles: Sequence[JobProfile], noise: float | None) -> JobProfile:
    """The merged profile's one-time and per-task map cost: fitted over the runs' sizes where they differ.

    Runs of one size average their one-time terms (weighted by maps).  Runs at
    two or more sizes fit their total map work against their input
    (:func:`profiles.task_costs.fit_map_work`, ``W = fixed + per_byte x bytes``), where the
    fixed part stands out of the runs' noise (repeats of a case give it: a two-point line's
    intercept carries each run's noise amplified, and extrapolates it):
    the typical map is the proportional part at the merged split size, and the
    fixed part, spread over the slots, is the one-time term.  A one-time term
    learnt from the smallest run alone over-prices a large run whose per-byte
    cost keeps falling (a JIT that keeps improving: issue 37's group-by).
    """
    extras = [p.map_one_time_max_ms for p in profiles if p.map_one_time_max_ms is not None]
    per_map: dict[str, Any] = {k: _wmean([(getattr(p, k), p.num_maps) for p in profiles]) for k in ("map_concurrency", "map_gc_share")}
    merged = dataclasses.replace(merged, map_one_time_max_ms=max(extras) if extras else None, **per_map)
    known = [p for p in profiles if _map_work_ms(p) is not None]
    left_out = sum(p.map_tasks_left_out for p in profiles)
    if len(known) < len(profiles) or not known:
        return dataclasses.replace(merged, map_tasks_left_out=left_out)
    slots = round(statistics.median(p.map_slots or 1 for p in known))
    one_time = _wmean([(p.map_one_time_ms, float(p.num_maps)) for p in known]) or 0.0
    fit = fit_map_work([p.input.total_bytes for p in known], [_map_work_ms(p) or 0.0 for p in known], noise)
    if fit is None or fit.fixed_ms < 0 or not fit.fixed_told_apart:
        why = unused_fit_reason(fit)
        return dataclasses.replace(
            merged,
            map_one_time_ms=one_time,
            map_one_time_later_ms=_wmean([(p.map_one_time_later_ms, float(p.num_maps)) for p in known]),
            map_slots=slots,
            map_tasks_left_out=left_out,
            cost_evidence=f"per-task map cost averaged over {len(known)} runs ({why}: no fit across sizes); "
            f"one-time {one_time:.0f} ms per slot added once per job",
        )
    stage = merged.stage(Stage.MAP_TASK)
    per_task = fit.ms_per_unit * merged.input.avg_split_bytes
    stages = dict(merged.stages)
    if stage is not None and stage.avg_ms > 0:
        scale = per_task / stage.avg_ms
        stages[Stage.MAP_TASK.value] = DurationStats(per_task, stage.max_ms * scale, stage.count)
    return dataclasses.replace(
        merged,
        stages=stages,
        map_one_time_ms=fit.fixed_ms / slots,
        map_slots=slots, map_cost_sizes=fit.sizes,
        map_tasks_left_out=left_out,
        cost_evidence=(
            f"per-task map cost fitted over runs at {fit.sizes} input sizes "
            f"({min(p.input.total_bytes for p in known):,.0f}-{max(p.input.total_bytes for p in known):,.0f} B): "
            f"total map work = {fit.fixed_ms:.0f} ms + {fit.ms_per_unit * 2**20:.1f} ms per MiB; the fixed part "
            f"over {slots} slot(s) added once per job"
        ),
    )


#: The reduce function's span: apart where the source marks its end, else lumped with the write.
_REDUCE_SPANS = ("reduce", "reduce+write")


def _reduce_records(p: JobProfile) -> float | None:
    """One reduce's input records in a run (``None``: no reduces or no counter)."""
    records = p.counters.reduce_input_records
    return records / p.num_reduces if records and p.num_reduces > 0 else None


def _with_reduce_costs(merged: JobProfile, profiles: Sequence[JobProfile], noise: float | None) -> JobProfile:
    """The merged profile's reduce function cost: fixed + per record where the runs' sizes differ.

    Each run's reduce function span (:data:`_REDUCE_SPANS`) is fitted against one reduce's
    input records (:func:`profiles.task_costs.fit_reduce_work`).  With a line (two sizes
    or more, a positive slope and fixed part), the per-record cost is the slope where the
    source times the reduce function alone, and the fixed part is recorded
    (:attr:`JobProfile.reduce_fixed_ms`) where it is lumped with the write, which a
    prediction prices from the platform; either way the fixed part is what the
    calibrated per-reduce overhead then counts, once per task.  Otherwise (and where the
    fixed part is within the runs' noise, :attr:`~profiles.task_costs.WorkFit.fixed_told_apart`)
    the runs' per-record costs stay averaged, as one run's hold the fixed part.
    """
    span = next((s for s in _REDUCE_SPANS if all(s in p.phases for p in profiles)), None)
    records = [_reduce_records(p) for p in profiles]
    if span is None or merged.num_reduces <= 0 or any(r is None for r in records):
        return merged
    fit = fit_reduce_work([r or 0.0 for r in records], [p.phases[span].avg_ms for p in profiles], noise)
    if fit is None or fit.fixed_ms <= 0 or not fit.fixed_told_apart:
        return merged
    line = (
        f"; reduce function ({span!r}) fitted over runs at {fit.sizes} sizes: {fit.fixed_ms:.0f} ms per reduce + "
        f"{fit.ms_per_unit * 1000:.2f} us per input record, the fixed part counted once per reduce"
    )
    evidence = merged.cost_evidence + line if merged.cost_evidence else line[2:]
    if span == "reduce":
        return dataclasses.replace(merged, reduce_ms_per_record=fit.ms_per_unit, cost_evidence=evidence)
    return dataclasses.replace(merged, reduce_fixed_ms=fit.fixed_ms, cost_evidence=evidence)


def _repeat_makespans(profiles: Sequence[JobProfile]) -> tuple[float, ...]:
    """The runs' makespans, where the runs are repeats of one case (the same input, within
    :data:`SAME_CASE_RTOL`, and reduce count); else none, with a warning.  The bounds' interval
    and the simulator's spread read them as run-to-run noise: word count at 2 and 8 maps (370 and
    1,267 ms) had stretched the bounds to 0.001-705 s."""
    sizes = [p.input.total_bytes for p in profiles]
    if max(sizes) - min(sizes) <= SAME_CASE_RTOL * max(sizes) and len({p.num_reduces for p in profiles}) == 1:
        return tuple(m for p in profiles for m in p.makespans_ms)
    if sum(len(p.makespans_ms) for p in profiles) >= 2:
        warnings.warn(
            DataQualityWarning(
                "the merged runs are of different inputs or reduce counts "
                f"({min(sizes):.4g}-{max(sizes):.4g} B, {len({p.num_reduces for p in profiles})} reduce count(s)): "
                "their makespans are not repeats of one case, so no run-to-run spread is taken from them"
            ),
            stacklevel=3,
        )
    return ()
