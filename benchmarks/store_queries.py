"""Queries on a many-small-files store (``bench_ingest_scale.py``'s third part): timeline + phases + skew
of one job, cold (new connection) and warm, and ``phaseline jobs``, on the store as ingest left it; the
peer is the same query on a copy of the same rows in one Parquet file per table, which shows what the
store's layout costs.  Each side runs in a child process (this script, with the store as argument).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, Figure, Goal, Target, best_of, python_child, run_measured  # a script directory
from jhist_inputs import small_job_id

AREA_QUERY = "queries on a many-small-files store"
ONE_JOB_QUERY_TARGET_S = 1.0


def _compact(store_root: Path, target: Path) -> Path:
    """Copy every table of a store into one Parquet file per table."""
    from phaseline import schemas
    from phaseline.store import Store
    from phaseline.store.views import sql_string

    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    con = Store(store_root).connect()
    for name in schemas.TABLES:
        if con.execute(f'SELECT count(*) FROM "{name}"').fetchone() != (0,):
            dest = sql_string(str(target / f"{name}.parquet"))
            con.execute(f"COPY (SELECT * FROM \"{name}\") TO {dest} (FORMAT parquet, COMPRESSION zstd)")
    return target


def _connect_compacted(root: Path) -> Any:
    import duckdb

    from phaseline import schemas

    con = duckdb.connect(":memory:")
    for name, spec in schemas.TABLES.items():
        path = root / f"{name}.parquet"
        if path.exists():
            con.execute(
                f"CREATE VIEW \"{name}\" AS SELECT * FROM read_parquet('{str(path).replace(chr(39), '')}')"
            )
        else:
            con.register(name, spec.schema.empty_table())
    return con


def _query_child(store_root: Path, compacted: str | None, job_id: str, repeat: int) -> None:
    """Print one JSON line per timed step (so a parent that times out still gets the finished ones)."""
    from phaseline.store import Store
    from profiles import queries as q

    def connect() -> Any:
        return _connect_compacted(Path(compacted)) if compacted else Store(store_root).connect()

    def one_job(c: Any) -> int:
        return len(q.timeline(c, job_id)) + len(q.phases(c, job_id)) + len(q.skew_hosts(c, job_id))

    def emit(step: str, t: Any) -> None:
        print(
            json.dumps({"step": step, "seconds": t.wall_s, "cpu_seconds": t.cpu_s, "rows": t.result}),
            flush=True,
        )

    emit("cold", best_of(lambda: one_job(connect()), repeat))
    con = connect()
    one_job(con)
    emit("warm", best_of(lambda: one_job(con), repeat))
    emit("jobs", best_of(lambda: len(q.job_list(connect()).fetchall()), repeat))


def bench_queries(store_root: Path, workdir: Path, repeat: int, limit_s: float) -> list[Figure]:
    """Timeline + phases + skew of one job, and the jobs listing, on the store and on a compacted copy.

    Each side runs in a child process limited to ``limit_s``; a step that did not
    finish is reported at the limit, as a lower bound.
    """
    from phaseline.store import Store

    store = Store(store_root)
    sources = store.sources()
    files = len(store.manifest().files)
    jobs = sources.num_rows
    job_id = "job_" + small_job_id(jobs // 2).decode()
    t0 = time.perf_counter()
    compacted = _compact(store_root, workdir / f"compacted-{store_root.name}")
    compact_s = time.perf_counter() - t0
    steps: dict[str, dict[str, float]] = {}
    for label, extra in (("store", []), ("compacted", ["--compacted", str(compacted)])):
        argv = python_child(Path(__file__), str(store_root), "--job", job_id, "--repeat", str(repeat), *extra)
        run = run_measured(argv, cwd=REPO, timeout_s=limit_s, check=False)
        if run.returncode not in (0, -9):
            raise RuntimeError(f"query child failed ({run.returncode}):\n{run.stderr[-3000:]}")
        got = {d["step"]: d for d in map(json.loads, run.stdout.split("\n")[:-1]) if "step" in d}
        steps[label] = {
            s: got[s]["seconds"] if s in got else float(limit_s) for s in ("cold", "warm", "jobs")
        }
        steps[label]["timed_out"] = float(run.returncode == -9)
    cli = run_measured([sys.executable, "-m", "phaseline", "jobs", "--store", str(store_root), "--format", "json"],
                       cwd=REPO, timeout_s=limit_s, check=False)  # fmt: skip
    bare = run_measured([sys.executable, "-c", "import phaseline.cli"], cwd=REPO)
    s, c = steps["store"], steps["compacted"]
    peer = "the same on a compacted copy (one Parquet file per table)"
    late = f" (did not finish in the {limit_s:.0f} s limit: a lower bound)" if s["timed_out"] else ""
    details = {"store_files": files, "jobs": jobs, "job_id": job_id, "compact_s": compact_s, **{
               f"{k}_{m}": v for k, r in steps.items() for m, v in r.items()}}  # fmt: skip
    one = Target(Goal.AT_MOST, ONE_JOB_QUERY_TARGET_S)
    return [
        Figure(AREA_QUERY, f"timeline + phases + skew of one job, {jobs:,}-job store, cold (connect + query)",
               s["cold"], "s", peer, c["cold"], one, details=details,
               note=f"the store holds {files:,} Parquet files for its {jobs:,} sources after ingest{late}"),
        Figure(AREA_QUERY, f"timeline + phases + skew of one job, {jobs:,}-job store, warm", s["warm"], "s",
               peer, c["warm"], one),
        Figure(AREA_QUERY, f"jobs listing of {jobs:,} jobs (connect + query)", s["jobs"], "s", peer, c["jobs"]),
        Figure(AREA_QUERY, "`phaseline jobs --format json` (whole command, incl. start-up)", cli.wall_s, "s",
               "`python -c 'import phaseline.cli'` (the start-up alone)", bare.wall_s,
               note="" if cli.returncode == 0 else f"exit status {cli.returncode} (at the time limit when -9)"),
    ]  # fmt: skip




def main(argv: list[str] | None = None) -> int:
    """The child side: time the queries of one job on ``STORE`` (or its compacted copy)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("store", type=Path)
    ap.add_argument("--job", required=True)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--compacted")
    args = ap.parse_args(argv)
    _query_child(args.store, args.compacted, args.job, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
