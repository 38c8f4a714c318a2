"""Thread samples: reading JFR recordings, ingesting samples, rebuilding 10 million (prints figures).

Not a test.  Run ``python benchmarks/bench_samples.py`` (``--help`` for options).

1. **JFR reading**: on a recording (default: the committed local-engine run),
   ``jfr print --json`` (the JDK tool, every event type phaseline reads) beside
   ``ingest/java/JfrDump.java``: wall seconds (JVM start-up included), bytes
   written per thread event, and the whole :func:`ingest.jfr.read_jfr` path.
2. **Samples ingested per second**: a generated HiTune four-field file
   (``--ingest-samples`` records, 40 distinct 30-frame stacks) through
   :func:`ingest.pipeline.ingest_paths` into a fresh store.
3. **Reconstruction of ``--samples`` (default 10 million) samples**: synthetic
   Parquet in /tmp (1,000 map attempts, each a task thread and a spill thread;
   no targets: attempts come from ``attempt_events`` thread bindings, as for
   JFR), DuckDB views over it, then :func:`profiles.dataflow.reconstruct.reconstruct`
   with the shipped ``hadoop-2`` specification.

The machine may be shared: the best of ``--repeat`` runs is printed.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import duckdb

from ingest.base import ReadContext
from ingest.jfr import dump_command, read_jfr
from ingest.pipeline import ingest_paths
from phaseline.java import java_tool
from phaseline.store import Store
from profiles.dataflow.reconstruct import reconstruct
from profiles.dataflow.spec import shipped_spec

REPO = Path(__file__).resolve().parents[1]
RECORDING = REPO / "sample_traces" / "bench-8mb-sel0.6-jfr" / "recording.jfr"
JFR_EVENTS = (
    "jdk.ExecutionSample,jdk.NativeMethodSample,jdk.ThreadPark,jdk.JavaMonitorWait,jdk.JavaMonitorEnter,"
    "jdk.ThreadSleep,jdk.FileRead,jdk.FileWrite,jdk.SocketRead,jdk.SocketWrite,jdk.CPULoad,jdk.ThreadStart,jdk.ThreadEnd"
)
T = TypeVar("T")


def best(fn: Callable[[], T], repeat: int) -> tuple[float, T]:
    """The fastest of ``repeat`` runs of ``fn`` and its last result."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out  # repeat >= 1


def bench_jfr(recording: Path, repeat: int) -> None:
    def jfr_print() -> int:
        proc = subprocess.run([java_tool("jfr"), "print", "--json", "--events", JFR_EVENTS, str(recording)],
                              capture_output=True, check=True)
        return len(proc.stdout)

    def jfrdump() -> int:
        proc = subprocess.run(dump_command(recording), capture_output=True, check=True)
        return len(proc.stdout)

    def phaseline_read() -> int:
        ctx = ReadContext(recording)
        return sum(1 for r in read_jfr(recording, ctx) if r.table == "samples")

    n_samples = phaseline_read()
    t_print, b_print = best(jfr_print, repeat)
    t_dump, b_dump = best(jfrdump, repeat)
    t_read, _ = best(phaseline_read, repeat)
    print(f"JFR: {recording} ({recording.stat().st_size / 1e6:.2f} MB, {n_samples} thread events)")
    print(f"  jfr print --json : {t_print:6.2f} s, {b_print / 1e6:8.2f} MB, {b_print / n_samples:9.0f} B/thread event")
    print(f"  JfrDump (TSV)    : {t_dump:6.2f} s, {b_dump / 1e6:8.2f} MB, {b_dump / n_samples:9.0f} B/thread event")
    print(f"  read_jfr (rows)  : {t_read:6.2f} s, {n_samples / t_read:9.0f} samples/s (JVM start-up included)")


def _stacks() -> list[list[str]]:
    rng = random.Random(7)
    base = {
        "map": ["org.apache.hadoop.mapred.MapTask.run", "org.apache.hadoop.mapred.LocalJobRunner$Job$MapTaskRunnable.run"],
        "spill": ["org.apache.hadoop.mapred.MapTask$MapOutputBuffer$SpillThread.work",
                  "org.apache.hadoop.util.concurrent.SubjectInheritingThread.run"],
        "other": ["java.lang.Thread.run"],
    }
    out = []
    for i in range(40):
        kind = ("map", "spill", "map", "other")[i % 4]
        inner = [f"pkg{rng.randrange(9)}.C{rng.randrange(99)}.m{rng.randrange(20)}" for _ in range(28)]
        out.append(inner + base[kind])
    return out


def bench_ingest(n: int, repeat: int, tmp: Path) -> None:
    stacks = [";".join(s) for s in _stacks()]
    path = tmp / "samples.tsv"
    rng = random.Random(1)
    with open(path, "w") as fh:
        fh.write("#hitune-samples 1\n")
        for i in range(n):
            a = i % 100
            fh.write(f"{1_700_000_000_000 + i}\tstack\th{a % 8}|attempt_1_0001_m_{a:06d}_0|{a * 2 + 1}|main\t"
                     f"{'RUNNABLE' if rng.random() < 0.7 else 'WAITING'}|{stacks[i % len(stacks)]}\n")

    def run() -> None:
        store = tmp / "store"
        shutil.rmtree(store, ignore_errors=True)
        ingest_paths([path], Store(store))

    t, _ = best(run, repeat)
    print(f"Ingest: {n} HiTune sample records ({path.stat().st_size / 1e6:.1f} MB) in {t:.2f} s: "
          f"{n / t:,.0f} samples/s")


def synthetic_parquet(n: int, tmp: Path) -> Path:
    """Write samples/stacks/attempt_events/attempts Parquet for ``n`` samples; return the directory."""
    out = tmp / f"synthetic-{n}"
    if (out / "samples.parquet").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    stacks = _stacks()
    con.execute("CREATE TABLE st (stack_id BIGINT, frames VARCHAR[], top_frame VARCHAR, depth BIGINT)")
    con.executemany("INSERT INTO st VALUES (?, ?, ?, ?)", [(i, s, s[0], len(s)) for i, s in enumerate(stacks)])
    con.execute(f"COPY st TO '{out}/stacks.parquet' (FORMAT parquet)")
    attempts, per = 1000, n // 1000
    con.execute(
        f"""
        COPY (
          SELECT 'job_1_0001' AS job_id, NULL::VARCHAR AS attempt_id, NULL::VARCHAR AS host,
                 (i // {per}) * 2 + 100 + (i % 4 = 1)::INT AS thread_id,
                 CASE WHEN i % 4 = 1 THEN 'SpillThread' ELSE 'LocalJobRunner Map Task Executor #0' END AS thread_name,
                 1700000000000 + i AS ts_ms, 'execution' AS sample_type,
                 CASE WHEN hash(i) % 10 < 7 THEN 'RUNNABLE' ELSE 'WAITING' END AS state,
                 (i % 40)::BIGINT AS stack_id, 0.0::DOUBLE AS duration_ms, 'jfr' AS source
          FROM range({n}) t(i)
        ) TO '{out}/samples.parquet' (FORMAT parquet)
        """
    )
    con.execute(
        f"""
        COPY (
          SELECT 'job_1_0001' AS job_id, printf('attempt_1_0001_m_%06d_0', a) AS attempt_id,
                 a * 2 + 100 + k AS thread_id, 1700000000000 + a * {per} + k AS ts_ms, 'task_start' AS kind
          FROM range({attempts}) t(a), range(2) u(k)
        ) TO '{out}/attempt_events.parquet' (FORMAT parquet)
        """
    )
    con.execute(
        f"""
        COPY (SELECT printf('attempt_1_0001_m_%06d_0', a) AS attempt_id, 'MAP' AS task_type, 'h' || (a % 8) AS host
              FROM range({attempts}) t(a)) TO '{out}/attempts.parquet' (FORMAT parquet)
        """
    )
    return out


def bench_reconstruct(n: int, repeat: int, tmp: Path) -> None:
    t0 = time.perf_counter()
    data = synthetic_parquet(n, tmp)
    t_gen = time.perf_counter() - t0
    con = duckdb.connect()
    for table in ("samples", "stacks", "attempt_events", "attempts"):
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{data}/{table}.parquet')")
    spec = shipped_spec("hadoop-2")
    t, r = best(lambda: reconstruct(con, "job_1_0001", spec, period_ms=10), repeat)
    print(f"Reconstruct: {n:,} samples (Parquet written in {t_gen:.1f} s) -> {r.instances.num_rows} vertex instances "
          f"in {t:.2f} s ({n / t:,.0f} samples/s); mapped {r.mapped:,}, unmapped {r.unmapped:,}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recording", type=Path, default=RECORDING)
    ap.add_argument("--ingest-samples", type=int, default=200_000)
    ap.add_argument("--samples", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=1, choices=range(1, 100), metavar="N")
    ap.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()) / "phaseline-bench-samples")
    args = ap.parse_args()
    args.tmp.mkdir(parents=True, exist_ok=True)
    bench_jfr(args.recording, args.repeat)
    bench_ingest(args.ingest_samples, args.repeat, args.tmp)
    bench_reconstruct(args.samples, args.repeat, args.tmp)


if __name__ == "__main__":
    main()
