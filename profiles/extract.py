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
  first-wave and typical shuffles and the reduce phase (``reduce_stages.sql``; one JVM's first
  reduces apart: :mod:`profiles.first_reduces`), and of every phase (``phases.sql``, successful attempts of the task type
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
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import duckdb
import pandas as pd

from phaseline.errors import DataQualityWarning, ProfileError
from phaseline.schemas import Phase
from profiles import queries as q
from profiles.first_reduces import typical_reduces
from profiles.gc_share import map_gc_share
from profiles.generated_input import generated_input
from profiles.jit_clock import frames_on_warm_clock
from profiles.phase_floor import typical_maps
from profiles.phase_spans import overheads, own_side, per_unit
from profiles.profile import JobProfile, ProfileSource, Stage
from profiles.profile_stats import CostStatistics, DataflowStatistics, DurationStats, InputStats
from profiles.run_counters import INTERM_COMPRESS_KEYS, PROFILE_CONF_KEYS, is_true, num, ratio, run_counters
from profiles.task_costs import FirstWaveSplit, split_first_wave


def _paired(df: pd.DataFrame, num: str, den: str) -> float | None:
    """sum(num) / sum(den) over the rows that report both (a task missing one counter does not bias it)."""
    both = df[df[num].notna() & df[den].notna()]
    if both.empty:
        return None
    return ratio(both[num].sum(), both[den].sum())


def _stats(values: pd.Series) -> DurationStats | None:
    v = pd.to_numeric(values, errors="coerce").dropna()
    return None if v.empty else DurationStats(avg_ms=float(v.mean()), max_ms=float(v.max()), count=len(v))


def _totals(df: pd.DataFrame, task_type: str) -> Mapping[str, Any]:
    row = df[df["task_type"] == task_type]
    return {} if row.empty else {str(k): v for k, v in row.iloc[0].items()}


@dataclass(frozen=True, slots=True)
class _Selectivities:
    """The run's selectivities, named as both :class:`JobProfile` and :class:`DataflowStatistics` name
    them (Zhang et al. 2013, section 5; Herodotou 2011, Table 3)."""

    map_size_sel: float
    map_recs_sel: float
    reduce_size_sel: float | None
    reduce_recs_sel: float | None
    combine_size_sel: float | None
    combine_recs_sel: float | None


def extract_profile(con: duckdb.DuckDBPyConnection, job_id: str, *, frames: q.JobFrames | None = None) -> JobProfile:
    """The profile of one run of ``job_id`` (see the module docstring for every field's source).

    Parameters
    ----------
    con
        A connection with the store's tables (``Store.connect()``).
    job_id
        The run to profile.
    frames
        The job's summary, attempts and phases (:class:`~profiles.queries.JobFrames`), or queried.

    Raises
    ------
    NotFoundError
        The job is not in the store.
    ProfileError
        The run has no successful map with input counters (a generator's output stands in for its
        input: :mod:`profiles.generated_input`), so neither the input nor the map selectivity can be known.

    A run of one JVM whose compiles are recorded is read on its warm clock (:mod:`profiles.jit_clock`).
    """
    con, frames, warm = frames_on_warm_clock(con, job_id, frames)  # one JVM's compiles set apart
    summary, conf = frames.summary, q.job_conf(con, job_id)
    splits_df = generated_input(job_id, q.data_skew(con, job_id).query("task_type == 'MAP'"))
    ok_phases, timeline = frames.phases[frames.phases["status"] == "SUCCEEDED"], frames.attempts
    ok = timeline[timeline["status"] == "SUCCEEDED"]
    input_stats, in_bytes, in_recs = _input_stats(job_id, splits_df)
    unfinished = _warn_if_not_whole(job_id, summary, timeline, ok, len(splits_df))
    num_reduces = int(summary["reduces"]) if summary["reduces"] else int(num(summary["total_reduces"]) or 0)
    maps_c, reds_c = _task_counters(con, job_id, ok, splits_df)
    compressed = is_true(conf, INTERM_COMPRESS_KEYS) is True  # map output
    sel, interm_ratio = _selectivities(job_id, maps_c, reds_c, compressed, num_reduces == 0)
    # the typical map and reduce apart from one-time terms: a first task's class loading is no task's cost
    source = _source(job_id, summary, conf)
    split, atypical = _first_wave_split(con, job_id, source.one_jvm)
    split, typ_ok, typ_phases = typical_maps(split, atypical, ok, ok_phases, job_id)
    first_reduces, typ_ok, typ_phases, rs = typical_reduces(q.reduce_stages(con, job_id), reds_c, typ_ok, typ_phases,
                                                            one_jvm=source.one_jvm)  # fmt: skip
    map_ms_per_record = per_unit(typ_phases, Phase.MAP, "data_records")
    reduce_ms_per_record = per_unit(typ_phases, Phase.REDUCE, "data_records")
    overhead, totals = overheads(typ_ok, typ_phases), q.counter_totals(con, job_id)
    return JobProfile(
        source=source,
        num_maps=int(summary["maps"]) or int(num(summary["total_maps"]) or 0),
        num_reduces=num_reduces,
        input=input_stats,
        **dataclasses.asdict(sel),
        map_ms_per_record=map_ms_per_record,
        reduce_ms_per_record=reduce_ms_per_record,
        map_task_overhead_ms=overhead.get("MAP"),
        map_one_time_ms=split.one_time_ms if split is not None else None,
        map_one_time_max_ms=split.max_extra_ms if split is not None else None,
        map_one_time_later_ms=split.later_excess_ms if split is not None else None,
        map_slots=split.slots if split is not None else None,
        map_tasks_left_out=split.left_out if split is not None else 0,
        cost_evidence="; ".join(e.evidence for e in (split, first_reduces, warm) if e is not None) or None,
        jit_one_time_ms=warm.compile_ms if warm is not None else None,
        **(first_reduces.profile_fields() if first_reduces is not None else {}),
        reduce_task_overhead_ms=overhead.get("REDUCE"),
        map_concurrency=_map_concurrency(con, job_id, atypical),
        map_gc_share=map_gc_share(maps_c, ok, atypical),
        stages=_stages(typ_ok, rs),
        phases=_phase_stats(typ_phases),
        counters=run_counters(con, job_id, _totals(totals, "MAP"), _totals(totals, "REDUCE")),
        dataflow=DataflowStatistics(
            input_pair_width=in_bytes / in_recs if in_recs > 0 else None,
            recs_per_red_group=_paired(reds_c, "reduce_input_records", "reduce_input_groups"),
            interm_compress_ratio=interm_ratio,
            **dataclasses.asdict(sel),
        ),
        costs=CostStatistics(
            hdfs_read=per_unit(typ_phases, Phase.READ, "data_bytes"),
            hdfs_write=per_unit(typ_phases, Phase.WRITE, "data_bytes"),
            network=_network_cost(rs, ok_phases),
            map_cpu=map_ms_per_record,
            reduce_cpu=reduce_ms_per_record,
        ),
        makespans_ms=() if unfinished else _task_span(summary),
    )


def _input_stats(job_id: str, splits_df: pd.DataFrame) -> tuple[InputStats, float, float]:
    """The input as the successful maps read it, and its total bytes and records as they count them;
    a :class:`ProfileError` where none reports it."""
    split_bytes = pd.to_numeric(splits_df["input_bytes"], errors="coerce").dropna()
    split_recs = pd.to_numeric(splits_df["input_records"], errors="coerce").dropna()
    if split_bytes.empty or split_recs.empty:
        raise ProfileError(
            f"{job_id}: no successful map reports its input bytes and records (counters "
            "BYTES_READ/MAP_INPUT_BYTES/HDFS_BYTES_READ and MAP_INPUT_RECORDS); ingest the job's "
            "history file with counters (a .jhist or 1.x history) to profile it"
        )
    stats = InputStats(splits=len(splits_df), avg_split_bytes=float(split_bytes.mean()),
                       max_split_bytes=float(split_bytes.max()), avg_split_records=float(split_recs.mean()),
                       max_split_records=float(split_recs.max()))  # fmt: skip
    return stats, float(split_bytes.sum()), float(split_recs.sum())


def _warn_if_not_whole(
    job_id: str, summary: pd.Series, timeline: pd.DataFrame, ok: pd.DataFrame, maps_ok: int
) -> bool:
    """Warn of a run that is not the whole job (it never finished in its trace, or failed); whether it
    never finished (then it gives no completion time)."""
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
            stacklevel=3,
        )
    if isinstance(status, str) and status != "SUCCEEDED":
        maps = int(num(summary["total_maps"]) or summary["maps"] or 0)
        reduces = int(num(summary["total_reduces"]) or summary["reduces"] or 0)
        held = f"the {maps_ok} maps that succeeded of {maps}"
        if reduces:
            held += f" and the {ok.loc[ok['task_type'] == 'REDUCE', 'task_id'].nunique()} reduces of {reduces}"
        # all maps succeeded (a reduce failed the job): the input is whole, the reduce side is not
        whole = "its input and times are" if maps_ok < maps else "its reduce times are"
        warnings.warn(
            DataQualityWarning(
                f"{job_id} {status.lower()}: its profile holds {held}, so {whole} not the whole job's; "
                "profile a run that succeeded"
            ),
            stacklevel=3,
        )
    return unfinished


def _task_counters(
    con: duckdb.DuckDBPyConnection, job_id: str, ok: pd.DataFrame, splits_df: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The successful maps' and reduces' counters, each with the bytes it read (maps) and wrote."""
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
    return maps_c, reds_c


def _selectivities(
    job_id: str, maps_c: pd.DataFrame, reds_c: pd.DataFrame, interm_compressed: bool, map_only: bool
) -> tuple[_Selectivities, float | None]:
    """Map, reduce and combine selectivities, and the intermediate compression ratio, each from the
    tasks that report both of its counters."""
    map_size_sel = _paired(maps_c, "written" if map_only else "map_output_bytes", "in_bytes")
    map_recs_sel = _paired(maps_c, "map_output_records", "map_input_records")
    if map_size_sel is None or map_recs_sel is None:
        raise ProfileError(
            f"{job_id}: map selectivity unknown: no successful map reports both its input and its "
            "output bytes and records (or the input is zero); a profile needs both"
        )
    combine_in = num(maps_c["combine_input_records"].sum(min_count=1))
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
    selectivities = _Selectivities(
        map_size_sel=map_size_sel,
        map_recs_sel=map_recs_sel,
        reduce_size_sel=(
            _paired(reds_c, "written", "reduce_shuffle_bytes") if not map_only and not interm_compressed else None
        ),
        reduce_recs_sel=None if map_only else _paired(reds_c, "reduce_output_records", "reduce_input_records"),
        combine_size_sel=combine_size_sel,
        combine_recs_sel=combine_recs_sel,
    )
    interm_ratio = (
        _paired(maps_c, "map_output_materialized_bytes", "map_output_bytes") if not has_combiner else None
    )
    return selectivities, interm_ratio


def _unhidden_reduces(typ_ok: pd.DataFrame, rs: pd.DataFrame) -> pd.Series:
    """The whole reduce tasks that started after the last map, where the run had any, else all: one that
    slow start launched under the maps also waited for them (the map stage's time), and Herodotou's
    reduce task (eqs. 92-94, stages back to back) waits for none, as ARIA's later waves (Verma 2011)."""
    reduces = typ_ok[typ_ok["task_type"] == "REDUCE"]
    if rs.empty:
        return reduces["dur_ms"]
    waited = rs["last_map_finish_ms"].notna() & (rs["start_ms"] < rs["last_map_finish_ms"])
    unhidden = reduces[reduces["attempt_id"].isin(rs.loc[~waited, "attempt_id"])]
    return unhidden["dur_ms"] if not unhidden.empty else reduces["dur_ms"]


def _stages(typ_ok: pd.DataFrame, rs: pd.DataFrame) -> dict[str, DurationStats]:
    """ARIA's stages: whole map tasks (the typical ones) and reduce tasks (:func:`_unhidden_reduces`),
    the first and typical shuffles and the reduce phase (``reduce_stages.sql``)."""
    stages: dict[str, DurationStats] = {}
    for stage, values in (
        (Stage.MAP_TASK, typ_ok.loc[typ_ok["task_type"] == "MAP", "dur_ms"]),
        (Stage.REDUCE_TASK, _unhidden_reduces(typ_ok, rs)),
    ):
        st = _stats(values)
        if st is not None:
            stages[stage.value] = st
    for stage, col in (
        (Stage.FIRST_SHUFFLE, "first_shuffle_ms"),
        (Stage.TYPICAL_SHUFFLE, "typical_shuffle_ms"),
        (Stage.REDUCE_PHASE, "reduce_phase_ms"),
    ):
        st = _stats(rs[col]) if not rs.empty else None
        if st is not None:
            stages[stage.value] = st
    return stages


def _phase_stats(typ_phases: pd.DataFrame) -> dict[str, DurationStats]:
    """Every phase's durations per attempt, from the task type that owns it (:func:`own_side`)."""
    per_phase = own_side(typ_phases).groupby(["attempt_id", "phase"], as_index=False)["dur_ms"].sum()
    phase_stats: dict[str, DurationStats] = {}
    for name, group in per_phase.groupby("phase"):
        st = _stats(group["dur_ms"])
        if st is not None:
            phase_stats[str(name)] = st
    return phase_stats


def _network_cost(rs: pd.DataFrame, ok_phases: pd.DataFrame) -> float | None:
    """ms per shuffled byte, from the shuffles that started after the last map finished (so did not
    wait for map output)."""
    if rs.empty:
        return None
    late = rs[rs["start_ms"] >= rs["last_map_finish_ms"]]
    shuffle_rows = ok_phases[
        (ok_phases["phase"] == Phase.SHUFFLE) & ok_phases["attempt_id"].isin(late["attempt_id"])
    ]
    shuffle_rows = shuffle_rows[shuffle_rows["data_bytes"].notna()]
    return None if shuffle_rows.empty else ratio(shuffle_rows["dur_ms"].sum(), shuffle_rows["data_bytes"].sum())


def _source(job_id: str, summary: pd.Series, conf: Mapping[str, str]) -> ProfileSource:
    """The run the profile came from: its id, name, Hadoop version and the settings a profile keeps."""
    name = summary["name"]
    version = summary["hadoop_version"]
    return ProfileSource(
        job_ids=(job_id,),
        job_name=None if name is None or pd.isna(name) else str(name),
        hadoop_version=None if version is None or pd.isna(version) else str(version),
        config={k: conf[k] for k in PROFILE_CONF_KEYS if k in conf},
        uberized=bool(summary["uberized"]),
    )


def _first_wave_split(
    con: duckdb.DuckDBPyConnection, job_id: str, one_jvm: bool
) -> tuple[FirstWaveSplit | None, frozenset[str]]:
    """The run's successful maps split into the typical map and a one-time term (``None`` without
    maps), and the attempt ids left out of the typical map; ``one_jvm``: the maps shared one JVM
    (the LocalJobRunner's, or an uberized run's).

    A run whose split rests on thin evidence (one wave of maps, few later-wave maps, a one-time cost
    larger than all the typical work) is warned of (:attr:`~profiles.task_costs.FirstWaveSplit.caveat`).
    """
    waves = q.map_task_waves(con, job_id)
    durations = pd.to_numeric(waves["dur_ms"], errors="coerce")
    waves = waves[durations.notna()]
    if waves.empty:
        return None, frozenset()
    split = split_first_wave(
        [float(d) for d in waves["dur_ms"]], [int(w) for w in waves["wave"]], int(waves["slots"].max()),
        one_jvm=one_jvm,
    )
    if split.caveat is not None and len(waves) > 1:
        warnings.warn(DataQualityWarning(f"{job_id}: {split.caveat}"), stacklevel=3)
    typical = {waves["attempt_id"].iloc[i] for i in split.typical_index}
    return split, frozenset(str(a) for a in waves["attempt_id"] if a not in typical)


def _map_concurrency(con: duckdb.DuckDBPyConnection, job_id: str, atypical: frozenset[str]) -> float | None:
    """How many of the job's attempts shared a typical map's host while it ran: the typical maps'
    concurrency (``attempt_concurrency.sql``), weighted by their durations as the typical map's
    average is; ``None`` where no typical map has one."""
    df = q.attempt_concurrency(con, job_id)
    df = df[(df["task_type"] == "MAP") & (df["status"] == "SUCCEEDED") & ~df["attempt_id"].isin(atypical)]
    conc = pd.to_numeric(df["concurrency"], errors="coerce")
    dur = pd.to_numeric(df["finish_ms"] - df["start_ms"], errors="coerce")
    known = conc.notna() & (dur > 0)
    if not known.any():
        return None
    return float((conc[known] * dur[known]).sum() / dur[known].sum())


def _task_span(summary: pd.Series) -> tuple[float, ...]:
    """ARIA's completion time of the run, as ``job_summary.sql`` defines it (``task_span_ms``: first
    successful map/reduce attempt start to last finish); none where the run has no such span."""
    span = num(summary["task_span_ms"])
    return () if span is None else (span,)
