"""Ingest on Spark ``local[2]`` beside phaseline's own 2-worker ingest: many small files, one large file.

Not a test.  Run ``python benchmarks/bench_spark.py`` (``--help`` for options; ``--json PATH``
writes the figures), or ``benchmarks/run --only spark``.

Inputs are made from a real history (Dr. Elephant's QuasiMonteCarlo job in
``tests/data/fixtures``, as ``bench_ingest_scale.py`` makes them): ``--files`` copies of
the whole job under fresh job ids (~33 kB each), and one job of ``--big-mb`` MB whose
task and attempt events are copied with fresh ids.  Each ingest runs in its own
process into a fresh store, the two engines interleaved: ``phaseline``'s
:func:`~ingest.pipeline.ingest_paths` with ``workers=2`` (the ``-j 2`` CLI), and
:func:`~ingest.spark_ingest.ingest_paths_spark` on ``--master`` (default ``local[2]``:
the same two cores), whose Spark session start (the JVM, and each slot's Python worker
started with the readers imported: an application's fixed cost) is timed apart from the
ingest itself.

The per-file and per-byte costs (seconds per file of the small-file ingest, seconds
per MB of the large one, both engines) are the inputs of ``docs/SCALE.md``'s model.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, Figure, python_child, run_measured  # benchmarks/ is a script directory
from jhist_inputs import Seed, write_big_jhist, write_small_files

AREA = "ingest: Spark local[2] vs phaseline -j 2"


def _import_readers(_: object) -> None:
    importlib.import_module("ingest.pipeline")


def _child(engine: str, inputs: Path, store_root: Path, master: str) -> dict[str, Any]:
    """One ingest in this process (a child of the benchmark): its timings as a dict."""
    sys.path.insert(0, str(REPO))
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    store = Store(store_root)
    started = time.perf_counter()
    session_s = 0.0
    if engine == "spark":
        from ingest.spark_ingest import ingest_paths_spark
        from phaseline.spark import spark_session

        with spark_session(master) as spark:
            # The application's fixed cost: the JVM, then each slot's Python worker importing the readers.
            slots = spark.sparkContext.defaultParallelism
            spark.sparkContext.parallelize(range(slots), slots).foreach(_import_readers)
            session_s = time.perf_counter() - started
            t0 = time.perf_counter()
            summary = ingest_paths_spark([inputs], store, spark=spark)
            ingest_s = time.perf_counter() - t0
    else:
        summary = ingest_paths([inputs], store, workers=2)
        ingest_s = time.perf_counter() - started
    landed = summary.count("landed")
    if landed != len(summary.results):
        raise SystemExit(
            f"{engine}: {len(summary.results) - landed} of {len(summary.results)} files did not land"
        )
    return {
        "engine": engine,
        "files": landed,
        "bytes": sum(p.stat().st_size for p in inputs.rglob("*.jhist")),
        "session_s": session_s,
        "ingest_s": ingest_s,
        "rows": sum(summary.rows_per_table().values()),
    }


def _measure(engine: str, inputs: Path, work: Path, master: str) -> dict[str, Any]:
    store = work / f"store-{engine}"
    shutil.rmtree(store, ignore_errors=True)
    run = run_measured(
        python_child(Path(__file__), "--child", engine, "--inputs", str(inputs), "--store", str(store),
                     "--master", master),
        cwd=REPO, timeout_s=3600,
    )  # fmt: skip
    shutil.rmtree(store, ignore_errors=True)
    return {**run.last_json(), "wall_s": run.wall_s, "cpu_s": run.cpu_s, "peak_rss_mb": run.peak_rss_mb}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=2000, help="small files (default 2000)")
    ap.add_argument("--big-mb", type=int, default=50, help="size of the large file in MB (0: none)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/phaseline-bench-spark"))
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    ap.add_argument("--child", choices=["local", "spark"], help=argparse.SUPPRESS)
    ap.add_argument("--inputs", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.inputs, args.store, args.master)))
        return 0

    seed = Seed.load()
    small = args.workdir / f"small-{args.files}"
    write_small_files(seed, small, args.files)
    cases = [("small", small)]
    if args.big_mb:
        big = args.workdir / f"big-{args.big_mb}"
        big.mkdir(parents=True, exist_ok=True)
        write_big_jhist(seed, big / f"job_1526555215992_0001-big{args.big_mb}.jhist", args.big_mb * 1_000_000)
        cases.append(("big", big))
    measured: dict[str, dict[str, dict[str, Any]]] = {}
    for case, inputs in cases:
        for engine in ("local", "spark"):  # interleaved: the machine's load falls on both
            m = _measure(engine, inputs, args.workdir, args.master)
            measured.setdefault(case, {})[engine] = m
            print(f"{case}: {engine}: {m['files']} files, {m['bytes'] / 1e6:.1f} MB: ingest {m['ingest_s']:.2f} s"
                  f" (+ session start {m['session_s']:.2f} s), process wall {m['wall_s']:.2f} s, "
                  f"CPU {m['cpu_s']:.2f} s", flush=True)  # fmt: skip

    figures: list[Figure] = []
    s_local, s_spark = measured["small"]["local"], measured["small"]["spark"]
    n = s_local["files"]
    figures += [
        Figure(AREA, f"{n:,} small files: Spark {args.master} ingest (session started) vs -j 2", n / s_spark["ingest_s"],
               "files/s", "phaseline ingest_paths, workers=2", n / s_local["ingest_s"],
               note="per-file cost with Spark: one Spark job per chunk of files, its task's pickled results, "
                    "beside the same readers and commits",
               details={"spark": s_spark, "local": s_local,
                        "s_per_file": {"spark": s_spark["ingest_s"] / n, "local": s_local["ingest_s"] / n}}),
        Figure(AREA, f"Spark {args.master} session start (JVM, Python workers with the readers imported)", s_spark["session_s"], "s"),
    ]  # fmt: skip
    if "big" in measured:
        b_local, b_spark = measured["big"]["local"], measured["big"]["spark"]
        mb = b_local["bytes"] / 1e6
        figures.append(
            Figure(AREA, f"one {mb:.0f} MB .jhist: Spark {args.master} (session started) vs -j 2", mb / b_spark["ingest_s"],
                   "MB/s", "phaseline ingest_paths, workers=2", mb / b_local["ingest_s"],
                   note="one large file is one task on either engine: the reader's own speed",
                   details={"spark": b_spark, "local": b_local,
                            "s_per_mb": {"spark": b_spark["ingest_s"] / mb, "local": b_local["ingest_s"] / mb}})
        )  # fmt: skip
    for f in figures:
        ratio = f" ({f.ratio:.2f}x peer {f.peer_value:.2f})" if f.ratio is not None and f.peer_value else ""
        print(f"{f.area}: {f.name}: {f.value:.2f} {f.unit}{ratio}")
    if args.json:
        args.json.write_text(json.dumps([f.as_dict() for f in figures], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
