"""The processes ``bench_ingest_scale.py`` measures, one per measurement (``wait4`` gives CPU and peak RSS):
this script in a mode (the bare reader, a bare orjson or json decode, ``ingest_paths`` of one file or a
directory) printing its own timing as JSON (:func:`run_child`), and Hadoop's ``JobHistoryParser`` through
``tests/oracles/JhistDump.java`` (:func:`hadoop_parse`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, ChildRun, python_child, run_measured  # benchmarks/ is a script directory
from jhist_inputs import seed_path

#: Files Hadoop's parser reads in one JVM.
HADOOP_BATCH_FILES = 2_000


def measure(mode: str, target: Path, store: str | None, workers: int, limit: int) -> dict[str, Any]:
    """One measurement in this process: wall and CPU seconds of ``mode`` on ``target``, and what it read."""
    from ingest.base import ReadContext, row_count  # imports stay outside the timed region
    from ingest.jhist import read_jhist
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    t0, c0 = time.perf_counter(), time.process_time()
    events = rows = files = 0
    if mode == "reader":
        ctx = ReadContext(target)
        for item in read_jhist(target, ctx):
            rows += row_count(item)
        events = ctx.events_read
    elif mode in ("orjson", "json"):
        loads = orjson.loads if mode == "orjson" else json.loads
        with open(target, "rb") as fh:
            fh.readline()  # "Avro-Json"
            fh.readline()  # the schema
            for line in fh:
                if line.strip():
                    loads(line)
                    events += 1
    elif mode == "ingest-file":  # one file, read in ranges by the workers when it is large (ingest.split_reading)
        assert store is not None
        summary = ingest_paths([target], Store(store), workers=workers)
        (result,) = summary.results
        if result.status != "landed":
            raise SystemExit(f"{target} did not land: {result}")
        files, events, rows = 1, result.events_read, result.rows_written
    elif mode == "ingest-dir":
        assert store is not None
        paths = sorted(p for p in target.iterdir() if p.suffix == ".jhist")[: limit or None]
        t0, c0 = time.perf_counter(), time.process_time()  # listing the directory is not ingest work
        summary = ingest_paths(paths, Store(store), workers=workers)
        files = len(summary.results)
        landed = summary.count("landed")
        if landed != files:
            bad = [r for r in summary.results if r.status != "landed"][:3]
            raise SystemExit(f"{files - landed} of {files} files did not land: {bad}")
        events = sum(r.events_read for r in summary.results)
        rows = sum(r.rows_written for r in summary.results)
    else:
        raise SystemExit(f"unknown child mode {mode}")
    return {"mode": mode, "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
            "events": events, "rows": rows, "files": files}  # fmt: skip


def run_child(
    mode: str, target: Path, *, store: Path | None = None, workers: int = 1, limit: int = 0
) -> tuple[ChildRun, dict[str, Any]]:
    """Measure ``mode`` on ``target`` in a process of its own (this script); its figures and the process's."""
    args = [mode, str(target), "--workers", str(workers), "--limit", str(limit)]
    if store is not None:
        args += ["--store", str(store)]
    run = run_measured(python_child(Path(__file__), *args), cwd=REPO)
    return run, run.last_json()


def hadoop_parse(paths: Sequence[Path], heap: str) -> tuple[float, float, float, float, int]:
    """Hadoop's parser on ``paths`` (batches of files per JVM): wall, CPU, sum of parse(), peak RSS, attempts.

    Each JVM first parses the small seed file, so ``parse()`` times exclude class
    loading as well as JVM start; the process wall time includes both.
    """
    sys.path.insert(0, str(REPO / "tests"))
    from oracle_util import dumper_command  # type: ignore[import-not-found,unused-ignore]

    cmd = dumper_command(summary=True, jvm_args=(f"-Xmx{heap}", "-Dlog4j2.level=ERROR"))
    warm_up = str(seed_path())
    wall = cpu = parse = rss = 0.0
    attempts = 0
    for i in range(0, len(paths), HADOOP_BATCH_FILES):
        run = run_measured([*cmd, warm_up, *(str(p) for p in paths[i : i + HADOOP_BATCH_FILES])])
        for line in run.stdout.splitlines()[1:]:
            info = json.loads(line)
            if info.get("fatal") or info.get("parse_exception"):
                raise RuntimeError(f"Hadoop could not parse {info['path']}: {info}")
            parse += info["parse_ns"] / 1e9
            attempts += info["attempts"]
        wall += run.wall_s
        cpu += run.cpu_s
        rss = max(rss, run.peak_rss_mb)
    return wall, cpu, parse, rss, attempts


def main(argv: list[str] | None = None) -> int:
    """The child side: one measurement, its figures printed as one JSON line."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("mode", choices=("reader", "orjson", "json", "ingest-file", "ingest-dir"))
    ap.add_argument("target", type=Path)
    ap.add_argument("--store")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args(argv)
    print(json.dumps(measure(args.mode, args.target, args.store, args.workers, args.limit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
