"""A run's counters and configuration as a profile records them (:mod:`profiles.extract`'s inputs
beyond the attempts and phases): the job's counter totals, each one the job lacks summed from its
tasks, the configuration keys a profile keeps, and the small number helpers extraction shares."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import duckdb
import pandas as pd

from profiles import queries as q
from profiles.profile_stats import COUNTER_FIELDS, Counters

__all__ = ["INTERM_COMPRESS_KEYS", "PROFILE_CONF_KEYS", "is_true", "num", "ratio", "run_counters"]

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
    # what Hadoop's uber decision reads (predict.uber)
    "mapreduce.job.ubertask.enable",
    "mapreduce.job.ubertask.maxmaps",
    "mapreduce.job.ubertask.maxreduces",
    "mapreduce.job.ubertask.maxbytes",
    "yarn.app.mapreduce.am.resource.mb",
    "yarn.app.mapreduce.am.resource.cpu-vcores",
    "mapreduce.map.cpu.vcores",
    "mapreduce.reduce.cpu.vcores",
    "mapreduce.job.map.class",
    "mapreduce.job.reduce.class",
    "mapred.mapper.class",
    "mapred.reducer.class",
)

INTERM_COMPRESS_KEYS = ("mapreduce.map.output.compress", "mapred.compress.map.output")


def num(value: Any) -> float | None:
    """A finite float, or ``None`` for NULL/NaN."""
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def ratio(numerator: Any, denominator: Any) -> float | None:
    """numerator / denominator, both finite; ``None`` where either is unknown or the denominator <= 0."""
    n, d = num(numerator), num(denominator)
    if n is None or d is None or d <= 0:
        return None
    return n / d


def is_true(conf: Mapping[str, str], keys: tuple[str, ...]) -> bool | None:
    """The first of ``keys`` set in ``conf`` read as a boolean; ``None`` where none is set."""
    for key in keys:
        if key in conf:
            return conf[key].strip().lower() == "true"
    return None


def run_counters(
    con: duckdb.DuckDBPyConnection, job_id: str, maps: Mapping[str, Any], reduces: Mapping[str, Any]
) -> Counters:
    """The run's counters: its job totals, each one it lacks summed from its tasks (``maps`` and
    ``reduces``: the task types' rows of ``counter_totals.sql``)."""
    return _fill(_job_counters(con, job_id), _counters_from_totals(maps, reduces))


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


#: :class:`Counters` field -> (the task types whose ``counter_totals.sql`` rows it sums, the column).
_FROM_TOTALS: Mapping[str, tuple[tuple[str, ...], str]] = {
    "map_input_records": (("MAP",), "map_input_records"),
    "map_input_bytes": (("MAP",), "file_input_bytes"),
    "map_output_records": (("MAP",), "map_output_records"),
    "map_output_bytes": (("MAP",), "map_output_bytes"),
    "map_output_materialized_bytes": (("MAP",), "map_output_materialized_bytes"),
    "combine_input_records": (("MAP", "REDUCE"), "combine_input_records"),
    "combine_output_records": (("MAP", "REDUCE"), "combine_output_records"),
    "spilled_records": (("MAP", "REDUCE"), "spilled_records"),
    "reduce_input_groups": (("REDUCE",), "reduce_input_groups"),
    "reduce_input_records": (("REDUCE",), "reduce_input_records"),
    "reduce_shuffle_bytes": (("REDUCE",), "reduce_shuffle_bytes"),
    "reduce_output_records": (("REDUCE",), "reduce_output_records"),
    "reduce_output_bytes": (("REDUCE",), "file_output_bytes"),
    "hdfs_bytes_read": (("MAP", "REDUCE"), "hdfs_bytes_read"),
    "hdfs_bytes_written": (("MAP", "REDUCE"), "hdfs_bytes_written"),
    "local_bytes_read": (("MAP", "REDUCE"), "file_bytes_read"),
    "local_bytes_written": (("MAP", "REDUCE"), "file_bytes_written"),
}


def _counters_from_totals(maps: Mapping[str, Any], reduces: Mapping[str, Any]) -> Counters:
    """Each counter summed over the task types that count it (:data:`_FROM_TOTALS`); ``None`` where
    none of them reports it."""
    sides = {"MAP": maps, "REDUCE": reduces}

    def total(types: tuple[str, ...], col: str) -> int | None:
        known = [int(v) for v in (num(sides[t].get(col)) for t in types) if v is not None]
        return sum(known) if known else None

    return Counters(**{name: total(types, col) for name, (types, col) in _FROM_TOTALS.items()})
