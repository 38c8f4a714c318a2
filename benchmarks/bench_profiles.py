"""Benchmark: timeline + phases + skew over synthetic Parquet stores.

Two stores are generated in a temporary directory (``--dir``, default under /tmp):

* ``one-job``: one job of 100,000 attempts (90,000 maps, 10,000 reduces, ~2% killed
  speculative twins) with task-level counters;
* ``many-jobs``: 10,000 jobs of 20 attempts each (200,000 attempts).

Each store is a directory of Parquet files per table opened the way
:meth:`phaseline.store.Store.connect` opens one (a DuckDB view per table over
``read_parquet``).  Timed: ``timeline`` (with slot assignment), ``phases`` and
``skew_hosts`` for one job, warm (views installed) and cold (a new connection),
and the three views over every job of the many-jobs store.  Run::

    python benchmarks/bench_profiles.py
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.hadoop_names import FILE_INPUT_FORMAT_COUNTER_GROUP, TASK_COUNTER_GROUP
from profiles import queries as q

TARGET_ONE_JOB_S = 1.0
HOSTS = 200


def _nullable(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """An object array of ``values`` with ``None`` where ``keep`` is false."""
    out = values.astype(object)
    out[~keep] = None
    return out


def _attempts(job_ids: np.ndarray, n_maps: int, n_reduces: int, rng: np.random.Generator) -> pa.Table:
    """Attempts of ``len(job_ids)`` jobs with ``n_maps``/``n_reduces`` tasks each (+2% killed twins)."""
    jobs = len(job_ids)
    per_job = n_maps + n_reduces
    task_idx = np.tile(np.arange(per_job), jobs)
    job_col = np.repeat(job_ids, per_job)
    is_map = task_idx < n_maps
    base = np.repeat(np.arange(jobs, dtype=np.int64) * 10_000_000 + 1_600_000_000_000, per_job)
    start = base + np.where(
        is_map, rng.integers(0, 600_000, len(task_idx)), rng.integers(300_000, 900_000, len(task_idx))
    )
    dur = np.where(
        is_map, rng.lognormal(10, 0.4, len(task_idx)), rng.lognormal(11, 0.3, len(task_idx))
    ).astype(np.int64)
    finish = start + dur
    map_finish = np.where(is_map, start + (dur * 0.85).astype(np.int64), 0)
    shuffle = np.where(is_map, 0, start + (dur * 0.6).astype(np.int64))
    sort = np.where(is_map, 0, start + (dur * 0.7).astype(np.int64))
    kind = np.where(is_map, "m", "r")
    task_num = np.where(is_map, task_idx, task_idx - n_maps)
    suffix = np.char.add(np.char.add(np.char.add("_", kind), "_"), np.char.zfill(task_num.astype(str), 6))
    stem = np.char.add(np.char.replace(job_col.astype(str), "job_", ""), suffix)
    task_id = np.char.add("task_", stem)
    attempt_id = np.char.add(np.char.add("attempt_", stem), "_0")
    twins = rng.random(len(task_idx)) < 0.02
    cols: dict[str, Any] = {
        "job_id": job_col,
        "task_id": task_id,
        "attempt_id": attempt_id,
        "task_type": np.where(is_map, "MAP", "REDUCE"),
        "status": np.full(len(task_idx), "SUCCEEDED"),
        "start_ms": start,
        "finish_ms": finish,
        "map_finish_ms": _nullable(map_finish, is_map),
        "shuffle_finish_ms": _nullable(shuffle, ~is_map),
        "sort_finish_ms": _nullable(sort, ~is_map),
        "host": np.char.add("host", (rng.integers(0, HOSTS, len(task_idx))).astype(str)),
    }
    twin = {k: v[twins] for k, v in cols.items()}
    twin["attempt_id"] = np.array([a[:-1] + "1" for a in twin["attempt_id"].astype(str)])
    twin["status"] = np.full(int(twins.sum()), "KILLED")
    twin["start_ms"] = twin["start_ms"] + 1000
    twin["map_finish_ms"] = np.full(int(twins.sum()), None)
    twin["shuffle_finish_ms"] = np.full(int(twins.sum()), None)
    twin["sort_finish_ms"] = np.full(int(twins.sum()), None)
    spec = schemas.ATTEMPTS
    arrays = {k: np.concatenate([cols[k], twin[k]]) for k in cols}
    return pa.table(
        {
            f.name: pa.array(arrays.get(f.name, [None] * len(arrays["job_id"])), type=f.type)
            for f in spec.schema
        }
    )


def _counters(attempts: pa.Table, rng: np.random.Generator) -> pa.Table:
    ok = attempts.filter(pa.compute.equal(attempts["status"], "SUCCEEDED"))
    is_map = np.asarray(ok["task_type"].to_numpy(zero_copy_only=False) == "MAP")
    names_map = ["MAP_INPUT_RECORDS", "BYTES_READ", "MAP_OUTPUT_RECORDS", "MAP_OUTPUT_BYTES"]
    names_red = [
        "REDUCE_SHUFFLE_BYTES",
        "REDUCE_INPUT_RECORDS",
        "HDFS_BYTES_WRITTEN",
        "REDUCE_OUTPUT_RECORDS",
    ]
    rows: dict[str, list[Any]] = {c: [] for c in schemas.COUNTERS.columns}
    job = ok["job_id"].to_numpy(zero_copy_only=False)
    task = ok["task_id"].to_numpy(zero_copy_only=False)
    for names, mask, group in (
        (names_map, is_map, FILE_INPUT_FORMAT_COUNTER_GROUP),
        (names_red, ~is_map, TASK_COUNTER_GROUP),
    ):
        n = int(mask.sum())
        for name in names:
            rows["job_id"].extend(job[mask])
            rows["task_id"].extend(task[mask])
            rows["attempt_id"].extend([None] * n)
            rows["scope"].extend(["task"] * n)
            rows["group_name"].extend([group if name == "BYTES_READ" else TASK_COUNTER_GROUP] * n)
            rows["counter_name"].extend([name] * n)
            rows["value"].extend(rng.integers(1_000, 100_000_000, n).tolist())
            rows["source_sha256"].extend([None] * n)
    return pa.table(rows, schema=schemas.COUNTERS.schema)


def _write_store(root: Path, tables: dict[str, pa.Table]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        pq.write_table(table, root / f"{name}.parquet")
    return root


def _connect(root: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    for name, spec in schemas.TABLES.items():
        path = root / f"{name}.parquet"
        if path.exists():
            con.execute(f"CREATE VIEW \"{name}\" AS SELECT * FROM read_parquet('{path}')")
        else:
            con.register(name, spec.schema.empty_table())
    return con


def _time(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, float, Any]:
    """Best wall-clock and process CPU seconds over ``repeat`` runs, and the last result."""
    wall, cpu, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
    return wall, cpu, out


def _cold_then_warm(
    root: Path, job_id: str
) -> tuple[duckdb.DuckDBPyConnection, tuple[float, float, Any], tuple[float, float, Any]]:
    """A new connection to the store at ``root`` (cold: its first queries), and one job's queries
    timed on their first call (cold), then as the best of three (warm)."""
    con = _connect(root)
    return con, _time(lambda: _one_job(con, job_id), repeat=1), _time(lambda: _one_job(con, job_id))


def _one_job(con: duckdb.DuckDBPyConnection, job_id: str) -> int:
    tl = q.timeline(con, job_id)
    ph = q.phases(con, job_id)
    sk = q.skew_hosts(con, job_id)
    return len(tl) + len(ph) + len(sk)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to write (or find) the synthetic stores"
    )
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="phaseline-bench-"))
    ref_wall, ref_cpu, _ = _time(
        lambda: duckdb.connect().execute("SELECT sum(range) FROM range(100000000)").fetchall()
    )
    print(
        f"machine: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; reference DuckDB sum over "
        f"10^8 integers: wall {ref_wall:.3f} s, cpu {ref_cpu:.3f} s"
    )
    one_root, many_root = base / "one-job", base / "many-jobs"
    if not (one_root / "attempts.parquet").exists() or not (many_root / "attempts.parquet").exists():
        rng = np.random.default_rng(7)
        t = time.perf_counter()
        one = _attempts(np.array(["job_1700000000000_0001"]), 90_000, 10_000, rng)
        _write_store(one_root, {"attempts": one, "counters": _counters(one, rng)})
        many = _attempts(np.array([f"job_1700000000000_{i:05d}" for i in range(10_000)]), 16, 4, rng)
        _write_store(many_root, {"attempts": many, "counters": _counters(many, rng)})
        print(f"generated the stores in {time.perf_counter() - t:.1f} s under {base}")
    n_one = pq.read_metadata(one_root / "attempts.parquet").num_rows
    n_many = pq.read_metadata(many_root / "attempts.parquet").num_rows

    job = "job_1700000000000_0001"
    con, (cold_wall, cold_cpu, rows), (wall, cpu, _) = _cold_then_warm(one_root, job)
    print(
        f"one job of {n_one:,} attempts -> {rows:,} rows (timeline + phases + skew): "
        f"first call {cold_wall:.3f} s (cpu {cold_cpu:.3f}), then wall {wall:.3f} s, cpu {cpu:.3f} s "
        f"(target < {TARGET_ONE_JOB_S} s)"
    )
    for name, f in (("timeline", q.timeline), ("phases", q.phases), ("skew_hosts", q.skew_hosts)):
        w, c, _ = _time(lambda f=f: len(f(con, job)))  # type: ignore[misc]
        print(f"    {name}: wall {w:.3f} s, cpu {c:.3f} s")

    some = "job_1700000000000_05000"
    con, (cold_wall, cold_cpu, _), (wall, cpu, _) = _cold_then_warm(many_root, some)
    print(
        f"one job of a 10,000-job store ({n_many:,} attempts): first call {cold_wall:.3f} s, "
        f"then wall {wall:.3f} s, cpu {cpu:.3f} s"
    )
    wall, cpu, counts = _time(
        lambda: [
            q.all_jobs(con, c).to_arrow_table().num_rows
            for c in (q.Concept.TIMELINE, q.Concept.PHASES, q.Concept.SKEW_HOSTS)
        ],
        repeat=2,
    )
    print(
        f"every job of the 10,000-job store: timeline {counts[0]:,} + phases {counts[1]:,} + "
        f"skew {counts[2]:,} rows: wall {wall:.3f} s, cpu {cpu:.3f} s"
    )


if __name__ == "__main__":
    main()
