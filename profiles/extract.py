"""Extract a :class:`~profiles.profile.JobProfile` from one measured run in the store.

What is filled, and from what (anything else stays ``None``, never invented):

* Zhang et al. 2013, section 5: map selectivity (``MAP_OUTPUT_BYTES`` /
  map input bytes, ``MAP_OUTPUT_RECORDS`` / ``MAP_INPUT_RECORDS``; for map-only
  jobs the bytes written), reduce selectivity (output / shuffle bytes and
  ``REDUCE_OUTPUT_RECORDS`` / ``REDUCE_INPUT_RECORDS``), the input splits
  (count, mean and maximum bytes and records of the successful maps), and the
  per-record time of the map and reduce functions -- only where a task-log
  source measured the custom ``map``/``reduce`` phases on their own (history
  times lump read and collect into ``map``).
* Verma et al. 2011 (ARIA): mean and maximum of whole map and reduce tasks, the
  first-wave and typical shuffles and the reduce phase (``reduce_stages.sql``),
  and of every phase (``phases.sql``, successful attempts of the task type
  that owns the phase: :func:`_own_side`).
* Herodotou 2011, Table 3: input pair width, records per reduce group, the
  selectivities, the combiner's selectivities (records: ``COMBINE_OUTPUT_RECORDS``
  / ``COMBINE_INPUT_RECORDS`` of the map side; size: materialized / raw map
  output bytes, only when map output is not compressed), the intermediate
  compression ratio (materialized / raw map output bytes, only when no combiner
  ran).  Table 4: the per-byte HDFS read/write cost and per-record map/reduce
  CPU cost from task-log phases with their data, and the per-byte network cost
  from shuffles that started after the last map finished (so did not wait for
  map output).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from typing import Any

import duckdb
import pandas as pd

from phaseline.errors import DataQualityWarning, ProfileError
from phaseline.schemas import Phase
from profiles import queries as q
from profiles.profile import JobProfile, ProfileSource, Stage
from profiles.profile_stats import (
    COUNTER_FIELDS,
    CostStatistics,
    Counters,
    DataflowStatistics,
    DurationStats,
    InputStats,
)
from profiles.task_costs import FirstWaveSplit, split_first_wave

#: Configuration keys a profile records (Herodotou 2011, Table 5; 1.x and 2.x names).
PROFILE_CONF_KEYS: tuple[str, ...] = (
    "mapred.child.java.opts",
    "mapreduce.map.java.opts",
    "mapreduce.reduce.java.opts",
    "mapreduce.map.memory.mb",
    "mapreduce.reduce.memory.mb",
    "mapreduce.reduce.memory.totalbytes",
    "mapred.map.tasks",
    "mapreduce.job.maps",
    "mapred.reduce.tasks",
    "mapreduce.job.reduces",
    "io.sort.mb",
    "mapreduce.task.io.sort.mb",
    "io.sort.spill.percent",
    "mapreduce.map.sort.spill.percent",
    "io.sort.record.percent",
    "io.sort.factor",
    "mapreduce.task.io.sort.factor",
    "min.num.spills.for.combine",
    "mapreduce.map.combine.minspills",
    "mapred.reduce.slowstart.completed.maps",
    "mapreduce.job.reduce.slowstart.completedmaps",
    "mapred.inmem.merge.threshold",
    "mapreduce.reduce.merge.inmem.threshold",
    "mapred.job.shuffle.input.buffer.percent",
    "mapreduce.reduce.shuffle.input.buffer.percent",
    "mapred.job.shuffle.merge.percent",
    "mapreduce.reduce.shuffle.merge.percent",
    "mapred.job.reduce.input.buffer.percent",
    "mapreduce.reduce.input.buffer.percent",
    "mapred.combiner.class",
    "mapreduce.combine.class",
    "mapreduce.job.combine.class",
    "mapred.compress.map.output",
    "mapreduce.map.output.compress",
    "mapred.output.compress",
    "mapreduce.output.fileoutputformat.compress",
    "dfs.block.size",
    "dfs.blocksize",
    "mapreduce.input.fileinputformat.split.maxsize",
)

_INTERM_COMPRESS_KEYS = ("mapreduce.map.output.compress", "mapred.compress.map.output")


def _num(value: Any) -> float | None:
    """A finite float, or ``None`` for NULL/NaN."""
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _ratio(num: Any, den: Any) -> float | None:
    n, d = _num(num), _num(den)
    if n is None or d is None or d <= 0:
        return None
    return n / d


def _paired(df: pd.DataFrame, num: str, den: str) -> float | None:
    """sum(num) / sum(den) over the rows that report both (a task missing one counter does not bias it)."""
    both = df[df[num].notna() & df[den].notna()]
    if both.empty:
        return None
    return _ratio(both[num].sum(), both[den].sum())


def _stats(values: pd.Series) -> DurationStats | None:
    v = pd.to_numeric(values, errors="coerce").dropna()
    if v.empty:
        return None
    return DurationStats(avg_ms=float(v.mean()), max_ms=float(v.max()), count=len(v))


def _totals(df: pd.DataFrame, task_type: str) -> Mapping[str, Any]:
    row = df[df["task_type"] == task_type]
    return {} if row.empty else {str(k): v for k, v in row.iloc[0].items()}


def _is_true(conf: Mapping[str, str], keys: tuple[str, ...]) -> bool | None:
    for key in keys:
        if key in conf:
            return conf[key].strip().lower() == "true"
    return None


def _job_counters(con: duckdb.DuckDBPyConnection, job_id: str) -> Counters | None:
    df = q.job_counters(con, job_id)
    df = df[df["scope"] == "job_total"]
    if df.empty:
        return None
    values: dict[str, int] = {}
    old_input: int | None = None  # 0.20's MAP_INPUT_BYTES, where no FileInputFormat BYTES_READ is
    for group, name, value in zip(df["group_name"], df["counter_name"], df["value"], strict=True):
        if value is None or pd.isna(value):
            continue
        if name == "MAP_INPUT_BYTES":
            old_input = int(value)
            continue
        fld = COUNTER_FIELDS.get(str(name))
        if fld is None:
            continue
        if name == "BYTES_READ" and "FileInputFormat" not in str(group):
            continue
        if name == "BYTES_WRITTEN" and "FileOutputFormat" not in str(group):
            continue
        values[fld] = int(value)
    if old_input is not None:
        values.setdefault("map_input_bytes", old_input)
    return Counters(**values)


def _fill(job: Counters | None, summed: Counters) -> Counters:
    """The job's own totals, each one it lacks summed from its tasks.

    A source may report only some job totals (HiTune's ``job.csv``: the four
    byte counters); the rest are no less known for that.
    """
    if job is None:
        return summed
    missing = {f.name: getattr(summed, f.name) for f in dataclasses.fields(job) if getattr(job, f.name) is None}
    return dataclasses.replace(job, **missing)


def _counters_from_totals(maps: Mapping[str, Any], reduces: Mapping[str, Any]) -> Counters:
    def pick(source: Mapping[str, Any], col: str) -> int | None:
        v = _num(source.get(col))
        return int(v) if v is not None else None

    def both(col: str) -> int | None:
        parts = [pick(maps, col), pick(reduces, col)]
        known = [p for p in parts if p is not None]
        return sum(known) if known else None

    return Counters(
        map_input_records=pick(maps, "map_input_records"),
        map_input_bytes=pick(maps, "file_input_bytes"),
        map_output_records=pick(maps, "map_output_records"),
        map_output_bytes=pick(maps, "map_output_bytes"),
        map_output_materialized_bytes=pick(maps, "map_output_materialized_bytes"),
        combine_input_records=both("combine_input_records"),
        combine_output_records=both("combine_output_records"),
        spilled_records=both("spilled_records"),
        reduce_input_groups=pick(reduces, "reduce_input_groups"),
        reduce_input_records=pick(reduces, "reduce_input_records"),
        reduce_shuffle_bytes=pick(reduces, "reduce_shuffle_bytes"),
        reduce_output_records=pick(reduces, "reduce_output_records"),
        reduce_output_bytes=pick(reduces, "file_output_bytes"),
        hdfs_bytes_read=both("hdfs_bytes_read"),
        hdfs_bytes_written=both("hdfs_bytes_written"),
        local_bytes_read=both("file_bytes_read"),
        local_bytes_written=both("file_bytes_written"),
    )


#: The phases a map task runs (Zhang et al. 2013's map side, with the custom map phase).
_MAP_SIDE = frozenset({Phase.READ.value, Phase.MAP.value, Phase.COLLECT.value, Phase.SPILL.value, Phase.MERGE.value})
_REDUCE_SIDE = frozenset(p.value for p in Phase) - _MAP_SIDE


def _own_side(phases: pd.DataFrame) -> pd.DataFrame:
    """The rows of each phase from the task type that owns it.

    A name can occur on both sides: a map's final ``merge`` and a reduce's
    background merges during the shuffle.  Map-side phases (:data:`_MAP_SIDE`,
    by a combined name's first part) keep their MAP rows, the others
    (shuffle, sort, reduce, write) their REDUCE rows; a phase the owning type
    lacks keeps the other's (``write`` of a map-only job).  Names outside
    :class:`Phase` (``setup``, ``commit``) keep every row.  Mixed, TeraSort's
    ``merge`` averaged 76 map merges of 0.7 s with one reduce's 34 s of
    background merging into 1.2 s, which a predictor scaled as the map merge.
    """
    first = phases["phase"].astype(str).str.split("+").str[0]
    owner = first.map(lambda p: "MAP" if p in _MAP_SIDE else "REDUCE" if p in _REDUCE_SIDE else None)
    own = phases["task_type"] == owner
    has_own = own.groupby(phases["phase"]).transform("any")
    return phases[owner.isna() | own | ~has_own]


def _per_unit(phases: pd.DataFrame, phase: str, unit: str) -> float | None:
    """Total duration of a task-log phase over the data it processed (ms per byte or record)."""
    rows = phases[(phases["phase"] == phase) & (phases["source"] == "tasklog")]
    rows = rows[rows[unit].notna()]
    if rows.empty:
        return None
    return _ratio(rows["dur_ms"].sum(), rows[unit].sum())


def extract_profile(
    con: duckdb.DuckDBPyConnection, job_id: str, *, frames: q.JobFrames | None = None
) -> JobProfile:
    """The profile of one run of ``job_id`` (see the module docstring for every field's source).

    Parameters
    ----------
    con
        A connection with the store's tables (``Store.connect()``).
    job_id
        The run to profile.
    frames
        The job's summary, attempts and phases when the caller has them
        (:class:`~profiles.queries.JobFrames`); queried otherwise.

    Raises
    ------
    NotFoundError
        The job is not in the store.
    ProfileError
        The run has no successful map with input counters, so neither the
        input nor the map selectivity (required profile fields) can be known.
    """
    frames = frames or q.JobFrames.query(con, job_id)
    summary = frames.summary
    conf = q.job_conf(con, job_id)
    totals = q.counter_totals(con, job_id)
    maps_t, reds_t = _totals(totals, "MAP"), _totals(totals, "REDUCE")
    splits_df = q.data_skew(con, job_id)
    splits_df = splits_df[splits_df["task_type"] == "MAP"]
    phases = frames.phases
    ok_phases = phases[phases["status"] == "SUCCEEDED"]
    timeline = frames.attempts
    ok = timeline[timeline["status"] == "SUCCEEDED"]

    split_bytes = pd.to_numeric(splits_df["input_bytes"], errors="coerce").dropna()
    split_recs = pd.to_numeric(splits_df["input_records"], errors="coerce").dropna()
    if split_bytes.empty or split_recs.empty:
        raise ProfileError(
            f"{job_id}: no successful map reports its input bytes and records (counters "
            "BYTES_READ/MAP_INPUT_BYTES/HDFS_BYTES_READ and MAP_INPUT_RECORDS); ingest the job's "
            "history file with counters (a .jhist or 1.x history) to profile it"
        )
    in_bytes, in_recs = float(split_bytes.sum()), float(split_recs.sum())
    status = summary["status"]
    # A trace that ends while attempts run (a .jhist cut before JOB_FINISHED: no job status) is no
    # whole run either: the tasks that finished are profiled, and it gives no completion time
    running = timeline[timeline["task_type"].isin(("MAP", "REDUCE")) & timeline["finish_ms"].isna()]
    unfinished = not isinstance(status, str) and not running.empty
    if unfinished:
        warnings.warn(
            DataQualityWarning(
                f"{job_id} never finished in its trace ({len(running)} attempt(s) still running where it "
                "ends): its profile holds the tasks that finished and no completion time; profile a "
                "complete run"
            ),
            stacklevel=2,
        )
    if isinstance(status, str) and status != "SUCCEEDED":
        maps = int(_num(summary["total_maps"]) or summary["maps"] or 0)
        reduces = int(_num(summary["total_reduces"]) or summary["reduces"] or 0)
        held = f"the {len(splits_df)} maps that succeeded of {maps}"
        if reduces:
            held += f" and the {ok.loc[ok['task_type'] == 'REDUCE', 'task_id'].nunique()} reduces of {reduces}"
        # all maps succeeded (a reduce failed the job): the input is whole, the reduce side is not
        whole = "its input and times are" if len(splits_df) < maps else "its reduce times are"
        warnings.warn(
            DataQualityWarning(
                f"{job_id} {status.lower()}: its profile holds {held}, so {whole} not the whole job's; "
                "profile a run that succeeded"
            ),
            stacklevel=2,
        )
    input_stats = InputStats(
        splits=len(splits_df),
        avg_split_bytes=float(split_bytes.mean()),
        max_split_bytes=float(split_bytes.max()),
        avg_split_records=float(split_recs.mean()),
        max_split_records=float(split_recs.max()),
    )

    num_reduces = int(summary["reduces"]) if summary["reduces"] else int(_num(summary["total_reduces"]) or 0)
    map_only = num_reduces == 0
    per_attempt = q.attempt_counters(con, job_id)
    maps_c = per_attempt[
        per_attempt["attempt_id"].isin(ok.loc[ok["task_type"] == "MAP", "attempt_id"])
    ].copy()
    reds_c = per_attempt[
        per_attempt["attempt_id"].isin(ok.loc[ok["task_type"] == "REDUCE", "attempt_id"])
    ].copy()
    # each map's input as data_skew.sql gives it (a LocalJobRunner map run beside another: its split length)
    split_of = pd.to_numeric(splits_df.set_index("attempt_id")["input_bytes"], errors="coerce")
    maps_c["in_bytes"] = (
        maps_c["attempt_id"].map(split_of).fillna(maps_c["file_input_bytes"]).fillna(maps_c["hdfs_bytes_read"])
    )
    maps_c["written"] = maps_c["file_output_bytes"].fillna(maps_c["hdfs_bytes_written"])
    reds_c["written"] = reds_c["file_output_bytes"].fillna(reds_c["hdfs_bytes_written"])

    map_size_sel = _paired(maps_c, "written" if map_only else "map_output_bytes", "in_bytes")
    map_recs_sel = _paired(maps_c, "map_output_records", "map_input_records")
    if map_size_sel is None or map_recs_sel is None:
        raise ProfileError(
            f"{job_id}: map selectivity unknown: no successful map reports both its input and its "
            "output bytes and records (or the input is zero); a profile needs both"
        )

    interm_compressed = _is_true(conf, _INTERM_COMPRESS_KEYS) is True
    combine_in = _num(maps_c["combine_input_records"].sum(min_count=1))
    has_combiner = combine_in is not None and combine_in > 0
    combine_recs_sel = (
        _paired(maps_c, "combine_output_records", "combine_input_records") if has_combiner else None
    )
    combine_size_sel = (
        _paired(maps_c, "map_output_materialized_bytes", "map_output_bytes")
        if has_combiner and not interm_compressed
        else None
    )
    if combine_size_sel is None or combine_recs_sel is None:
        combine_size_sel = combine_recs_sel = None  # the profile takes both or neither
    interm_ratio = (
        _paired(maps_c, "map_output_materialized_bytes", "map_output_bytes") if not has_combiner else None
    )
    reduce_size_sel = (
        _paired(reds_c, "written", "reduce_shuffle_bytes") if not map_only and not interm_compressed else None
    )
    reduce_recs_sel = None if map_only else _paired(reds_c, "reduce_output_records", "reduce_input_records")

    # The typical map (later waves, slow outliers left out) and the one-time term: a first map
    # that paid for class loading must not become every map's cost (profiles.task_costs).
    split, atypical = _first_wave_split(con, job_id)
    typ_ok = ok[~ok["attempt_id"].isin(atypical)]
    typ_phases = ok_phases[~ok_phases["attempt_id"].isin(atypical)]
    map_ms_per_record = _per_unit(typ_phases, Phase.MAP, "data_records")
    reduce_ms_per_record = _per_unit(typ_phases, Phase.REDUCE, "data_records")

    stages: dict[str, DurationStats] = {}
    for stage, values in (
        (Stage.MAP_TASK, typ_ok.loc[typ_ok["task_type"] == "MAP", "dur_ms"]),
        (Stage.REDUCE_TASK, typ_ok.loc[typ_ok["task_type"] == "REDUCE", "dur_ms"]),
    ):
        st = _stats(values)
        if st is not None:
            stages[stage.value] = st
    rs = q.reduce_stages(con, job_id)
    for stage, col in (
        (Stage.FIRST_SHUFFLE, "first_shuffle_ms"),
        (Stage.TYPICAL_SHUFFLE, "typical_shuffle_ms"),
        (Stage.REDUCE_PHASE, "reduce_phase_ms"),
    ):
        st = _stats(rs[col]) if not rs.empty else None
        if st is not None:
            stages[stage.value] = st

    per_phase = _own_side(typ_phases).groupby(["attempt_id", "phase"], as_index=False)["dur_ms"].sum()
    phase_stats: dict[str, DurationStats] = {}
    for name, group in per_phase.groupby("phase"):
        st = _stats(group["dur_ms"])
        if st is not None:
            phase_stats[str(name)] = st

    overhead = _overheads(typ_ok, typ_phases)

    network = None
    if not rs.empty:
        late = rs[rs["start_ms"] >= rs["last_map_finish_ms"]]
        shuffle_rows = ok_phases[
            (ok_phases["phase"] == Phase.SHUFFLE) & ok_phases["attempt_id"].isin(late["attempt_id"])
        ]
        shuffle_rows = shuffle_rows[shuffle_rows["data_bytes"].notna()]
        if not shuffle_rows.empty:
            network = _ratio(shuffle_rows["dur_ms"].sum(), shuffle_rows["data_bytes"].sum())

    counters = _fill(_job_counters(con, job_id), _counters_from_totals(maps_t, reds_t))
    dataflow = DataflowStatistics(
        input_pair_width=in_bytes / in_recs if in_recs > 0 else None,
        recs_per_red_group=_paired(reds_c, "reduce_input_records", "reduce_input_groups"),
        map_size_sel=map_size_sel,
        map_recs_sel=map_recs_sel,
        reduce_size_sel=reduce_size_sel,
        reduce_recs_sel=reduce_recs_sel,
        combine_size_sel=combine_size_sel,
        combine_recs_sel=combine_recs_sel,
        interm_compress_ratio=interm_ratio,
    )
    costs = CostStatistics(
        hdfs_read=_per_unit(typ_phases, Phase.READ, "data_bytes"),
        hdfs_write=_per_unit(typ_phases, Phase.WRITE, "data_bytes"),
        network=network,
        map_cpu=map_ms_per_record,
        reduce_cpu=reduce_ms_per_record,
    )
    name = summary["name"]
    version = summary["hadoop_version"]
    return JobProfile(
        source=ProfileSource(
            job_ids=(job_id,),
            job_name=None if name is None or pd.isna(name) else str(name),
            hadoop_version=None if version is None or pd.isna(version) else str(version),
            config={k: conf[k] for k in PROFILE_CONF_KEYS if k in conf},
        ),
        num_maps=int(summary["maps"]) or int(_num(summary["total_maps"]) or 0),
        num_reduces=num_reduces,
        input=input_stats,
        map_size_sel=map_size_sel,
        map_recs_sel=map_recs_sel,
        reduce_size_sel=reduce_size_sel,
        reduce_recs_sel=reduce_recs_sel,
        combine_size_sel=combine_size_sel,
        combine_recs_sel=combine_recs_sel,
        map_ms_per_record=map_ms_per_record,
        reduce_ms_per_record=reduce_ms_per_record,
        map_task_overhead_ms=overhead.get("MAP"),
        map_one_time_ms=split.one_time_ms if split is not None else None,
        map_one_time_max_ms=split.max_extra_ms if split is not None else None,
        map_slots=split.slots if split is not None else None,
        map_tasks_left_out=split.left_out if split is not None else 0,
        cost_evidence=split.evidence if split is not None else None,
        reduce_task_overhead_ms=overhead.get("REDUCE"),
        stages=stages,
        phases=phase_stats,
        counters=counters,
        dataflow=dataflow,
        costs=costs,
        makespans_ms=() if unfinished else _task_span(summary),
    )


def _first_wave_split(
    con: duckdb.DuckDBPyConnection, job_id: str
) -> tuple[FirstWaveSplit | None, frozenset[str]]:
    """The run's successful maps split into the typical map and a one-time term (``None`` without
    maps), and the attempt ids left out of the typical map.

    A run whose split rests on thin evidence (one wave of maps, few later-wave
    maps, a one-time cost larger than all the typical work) is warned of, with
    how to fix it (:attr:`~profiles.task_costs.FirstWaveSplit.caveat`).
    """
    waves = q.map_task_waves(con, job_id)
    durations = pd.to_numeric(waves["dur_ms"], errors="coerce")
    waves = waves[durations.notna()]
    if waves.empty:
        return None, frozenset()
    split = split_first_wave(
        [float(d) for d in waves["dur_ms"]], [int(w) for w in waves["wave"]], int(waves["slots"].max())
    )
    if split.caveat is not None and len(waves) > 1:
        warnings.warn(DataQualityWarning(f"{job_id}: {split.caveat}"), stacklevel=3)
    typical = {waves["attempt_id"].iloc[i] for i in split.typical_index}
    return split, frozenset(str(a) for a in waves["attempt_id"] if a not in typical)


def _task_span(summary: pd.Series) -> tuple[float, ...]:
    """ARIA's completion time of the run, as ``job_summary.sql`` defines it (``task_span_ms``: first
    successful map/reduce attempt start to last finish); none where the run has no such span."""
    span = _num(summary["task_span_ms"])
    return () if span is None else (span,)


def _overheads(ok: pd.DataFrame, ok_phases: pd.DataFrame) -> dict[str, float]:
    """Mean part of a task's span that its task-log phases do not cover, per task type.

    History phases cover the span by construction, so only task-log attempts count.  Only
    the generic phases (:class:`~phaseline.schemas.Phase`, alone or combined, ``read+map+collect``)
    cover: the task log's own ``setup``, ``commit`` and ``other`` spans are the overhead itself
    (JVM start, setup, commit), and counted as covering they had made it 0 for every task log.
    """
    logs = ok_phases[(ok_phases["source"] == "tasklog") & ok_phases["phase"].map(_is_generic_phase)]
    if logs.empty:
        return {}
    spans = {
        str(a): (str(t), float(s), float(f))
        for a, t, s, f in zip(ok["attempt_id"], ok["task_type"], ok["start_ms"], ok["finish_ms"], strict=True)
    }
    out: dict[str, list[float]] = {}
    for attempt_id, group in logs.groupby("attempt_id"):
        if str(attempt_id) not in spans:
            continue
        task_type, start, finish = spans[str(attempt_id)]
        covered = _union_length(list(zip(group["start_ms"], group["end_ms"], strict=True)), start, finish)
        out.setdefault(str(task_type), []).append(max(float(finish - start) - covered, 0.0))
    return {k: sum(v) / len(v) for k, v in out.items()}


def _is_generic_phase(name: Any) -> bool:
    """Whether a phase name is one of the generic phases, or several joined by ``+``."""
    return isinstance(name, str) and all(part in _PHASE_NAMES for part in name.split("+"))


_PHASE_NAMES = frozenset(p.value for p in Phase)


def _union_length(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Length of the union of intervals clipped to [lo, hi]."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted((max(s, lo), min(e, hi)) for s, e in intervals):
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None and cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None and cur_s is not None:
        total += cur_e - cur_s
    return total
