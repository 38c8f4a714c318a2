"""Shared by the profiles tests: a tiny store of one job for the SQL golden tests, and real traces read alone.

The main fixture is one job, ``job_1_0001`` (submit 0, finish 120), 3 maps and 1 reduce::

    t(ms)         0    10   20   30   40   50   60   70   80   90  100  110  120
    m0_0  h1      |mmmmmmmm|s|                                                    SUCCEEDED
    m1_0  h2      |xxxxxxxxxxxxxx|                                                FAILED (no map_finish)
    m1_1  h2                     |mmmmmmmmmmm|s|                                  SUCCEEDED (retry)
    m2_0  h1                |mmmmmmmmmmmmmmmmmmmmmmmmmm|s|                        KILLED (slow)
    m2_1  h3                               |mmmmm|s|                              SUCCEEDED (speculative)
    r0_0  h3            |shuffle...........................|sort|reduce+write|    SUCCEEDED
                    25                                   80   90             110

map_finish: m0_0 15, m1_1 55, m2_0 75, m2_1 65; shuffle_finish 80, sort_finish 90.
The ``con`` fixture (tests/profiles/conftest.py) connects to it.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from phaseline import schemas

JOB = "job_1_0001"


def _a(task: str, n: int) -> str:
    return f"attempt_1_0001_{task}_{n}"


def _t(task: str) -> str:
    return f"task_1_0001_{task}"


def make_con(
    tables: Mapping[str, Iterable[Mapping[str, Any]]], con: duckdb.DuckDBPyConnection | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with every store table registered (empty unless given rows).

    Passing ``con`` re-registers the tables on it (the profiles' temp views stay
    installed and read the new tables), which keeps property tests fast.
    """
    con = con if con is not None else duckdb.connect()
    for name, spec in schemas.TABLES.items():
        rows = [{c: r.get(c) for c in spec.columns} for r in tables.get(name, ())]
        table = pa.Table.from_pylist(rows, schema=spec.schema) if rows else spec.schema.empty_table()
        con.register(name, table)
    return con


def attempt(
    task: str, n: int, status: str, start: int | None, finish: int | None, host: str, **kw: Any
) -> dict[str, Any]:
    return {
        "job_id": JOB,
        "task_id": _t(task),
        "attempt_id": _a(task, n),
        "task_type": "MAP" if task.startswith("m") else "REDUCE",
        "status": status,
        "start_ms": start,
        "finish_ms": finish,
        "host": host,
        **kw,
    }


def counter(
    scope: str, name: str, value: int, *, task: str, n: int | None = None, group: str
) -> dict[str, Any]:
    return {
        "job_id": JOB,
        "task_id": _t(task),
        "attempt_id": _a(task, n) if n is not None else None,
        "scope": scope,
        "group_name": group,
        "counter_name": name,
        "value": value,
    }


TC = "org.apache.hadoop.mapreduce.TaskCounter"
FIC = "org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter"
FSC = "org.apache.hadoop.mapreduce.FileSystemCounter"

ATTEMPTS = [
    attempt("m_000000", 0, "SUCCEEDED", 0, 20, "h1", map_finish_ms=15),
    attempt("m_000001", 0, "FAILED", 0, 30, "h2", error="java.io.IOException: disk"),
    attempt("m_000001", 1, "SUCCEEDED", 30, 60, "h2", map_finish_ms=55),
    attempt("m_000002", 0, "KILLED", 20, 80, "h1", map_finish_ms=75),
    attempt("m_000002", 1, "SUCCEEDED", 50, 70, "h3", map_finish_ms=65),
    attempt("r_000000", 0, "SUCCEEDED", 25, 110, "h3", shuffle_finish_ms=80, sort_finish_ms=90),
]
COUNTERS = [
    counter("attempt", "MAP_INPUT_RECORDS", 100, task="m_000000", n=0, group=TC),
    counter("attempt", "BYTES_READ", 1000, task="m_000000", n=0, group=FIC),
    counter("attempt", "MAP_OUTPUT_BYTES", 1200, task="m_000000", n=0, group=TC),
    counter("attempt", "MAP_OUTPUT_RECORDS", 100, task="m_000000", n=0, group=TC),
    counter("task", "BYTES_READ", 2000, task="m_000001", group=FIC),
    counter("task", "MAP_INPUT_RECORDS", 200, task="m_000001", group=TC),
    counter("attempt", "BYTES_READ", 3000, task="m_000002", n=1, group=FIC),
    counter("attempt", "MAP_INPUT_RECORDS", 300, task="m_000002", n=1, group=TC),
    # an attempt-scope value wins over the task-scope one for the same attempt
    counter("task", "BYTES_READ", 9999, task="m_000002", group=FIC),
    counter("task", "REDUCE_SHUFFLE_BYTES", 3000, task="r_000000", group=TC),
    counter("task", "REDUCE_INPUT_RECORDS", 300, task="r_000000", group=TC),
    counter("task", "HDFS_BYTES_WRITTEN", 900, task="r_000000", group=FSC),
]
JOBS = [
    {
        "job_id": JOB,
        "name": "wordcount",
        "user": "alice",
        "status": "SUCCEEDED",
        "submit_ms": 0,
        "launch_ms": 0,
        "finish_ms": 120,
        "total_maps": 3,
        "total_reduces": 1,
    },
]
CONF = [{"job_id": JOB, "key": "mapreduce.job.reduce.slowstart.completedmaps", "value": "0.05"}]


def rows(df: pd.DataFrame, *cols: str) -> list[tuple[Any, ...]]:
    return [tuple(None if pd.isna(v) else v for v in r) for r in df[list(cols)].itertuples(index=False)]


# -- real traces --------------------------------------------------------------------------


JHIST = Path("apache-hadoop/mapreduce-client-jobclient/job_1329348432655_0001-10.jhist")


def _rumen_trace_jobs(path: Path) -> dict[str, dict[str, Any]]:
    """A Rumen trace's jobs (one JSON value each, back to back), read with the standard library."""
    with gzip.open(path, "rt") as fh:
        text = fh.read()
    decoder, i, jobs = json.JSONDecoder(), 0, {}
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        obj, i = decoder.raw_decode(text, i)
        jobs[obj["jobID"]] = obj
    return jobs

