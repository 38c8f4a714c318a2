"""Throughput of the .jhist reader beside Hadoop's parser and a bare JSON decode (prints figures).

Not a test.  Run ``python benchmarks/bench_ingest.py`` (``--help`` for options).

1. The real fixtures (``tests/data/fixtures/**/*.jhist``): MB/s and events/s of
   :func:`ingest.jhist.read_jhist`, beside a bare line-by-line ``orjson.loads``.
2. A large generated file (default 200 MB, written to /tmp, reused when present):
   a real Hadoop 2.7 history whose task and attempt events are replicated with
   fresh task, attempt and container ids.  On it, each in its own process so
   that peak RSS is per measurement: read_jhist; the same reader with every line
   decoded by orjson (the reader before its typed msgspec path); bare orjson and stdlib json
   line decodes; Hadoop's ``JobHistoryParser`` through ``tests/oracles/JhistDump.java``
   (wall time with JVM start-up, and ``parse()`` alone); and the full
   ``phaseline ingest`` path (:func:`ingest.pipeline.ingest_paths` into a fresh store).

The machine may be shared: numbers are best of ``--repeat`` runs, and CPU
seconds (``time.process_time``; user+sys for the JVM, all its threads) are shown
beside wall seconds.  The "floor" line decodes each line and builds one row per
event and counter with no other logic: the fastest any reader emitting one
``Row`` per counter can be.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from common import FIXTURES, own_peak_rss_mb
from jhist_inputs import write_binary_history

REPO = Path(__file__).resolve().parents[1]
SEED_FILE = "job_1526555215992_0001-1526555642677-user-QuasiMonteCarlo-1526555658299-1-1-SUCCEEDED-default-1526555648931.jhist"
_IDS = re.compile(
    rb"(task|attempt)_1526555215992_0001_([mr])_(\d{6})|container_1526555215992_0001_01_(\d{6})"
)


def generate(target: Path, size_mb: int) -> Path:
    """Replicate the seed job's task/attempt events with fresh ids until the file holds ``size_mb`` MB."""
    if target.exists() and target.stat().st_size >= size_mb * 1_000_000:
        return target
    seed = next(FIXTURES.rglob(SEED_FILE)).read_bytes().splitlines(keepends=True)
    header, events = seed[:2], seed[2:]
    job_start = [
        ln for ln in events if (b'"type":"JOB_' in ln and b"JOB_FINISHED" not in ln) or b"AM_STARTED" in ln
    ]
    job_end = [ln for ln in events if b'"type":"JOB_FINISHED"' in ln]
    body = [ln for ln in events if ln not in job_start and ln not in job_end]
    body_bytes = sum(map(len, body))
    copies = size_mb * 1_000_000 // body_bytes + 1
    tmp = target.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        out.writelines(header)
        out.writelines(job_start)
        for k in range(copies):

            def fresh(m: re.Match[bytes], k: int = k) -> bytes:
                if m.group(4) is not None:
                    return b"container_1526555215992_0001_01_%09d" % (k * 10 + int(m.group(4)))
                return b"%s_1526555215992_0001_%s_%07d" % (m.group(1), m.group(2), k * 10 + int(m.group(3)))

            out.writelines(_IDS.sub(fresh, ln) for ln in body)
        out.writelines(job_end)
    tmp.replace(target)
    return target


# ---------------------------------------------------------------------- measurements (child side)
def _child(mode: str, path: Path, store_dir: str | None) -> dict[str, Any]:
    t0 = time.perf_counter()
    c0 = time.process_time()
    events = rows = 0
    if mode in ("phaseline", "phaseline-orjson"):
        from ingest.base import ReadContext, row_count
        from ingest.jhist import _JhistReader

        ctx = ReadContext(path)
        for item in _JhistReader(path, ctx, typed=mode == "phaseline").run():  # (read_jhist's body)
            rows += row_count(item)
        events = ctx.events_read
    elif mode in ("orjson", "json"):
        loads = orjson.loads if mode == "orjson" else json.loads
        with open(path, "rb") as fh:
            fh.readline()
            for line in fh:
                if line.strip():
                    loads(line)
                    events += 1
        events -= 1  # the schema line
    elif mode == "rows":
        rows, events = _decode_and_build_rows(path)
    elif mode == "ingest":
        from ingest.pipeline import ingest_paths
        from phaseline.store import Store

        assert store_dir is not None
        summary = ingest_paths([path], Store(store_dir), file_timeout_s=None)
        (result,) = summary.results
        events, rows = result.events_read, result.rows_written
        if result.status != "landed":
            raise SystemExit(f"ingest did not land the file: {result.status} {result.error}")
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return {"mode": mode, "seconds": seconds, "cpu_seconds": cpu, "events": events, "rows": rows,
            "peak_rss_mb": own_peak_rss_mb()}  # fmt: skip


def _decode_and_build_rows(path: Path) -> tuple[int, int]:
    """The floor of any reader with this row protocol: decode + one Row dict per event and counter."""
    from ingest.base import Row

    rows = events = 0
    sink: list[Row] = []
    with open(path, "rb") as fh:
        fh.readline()
        fh.readline()
        for line in fh:
            text = line.strip()
            if not text:
                continue
            ev = orjson.loads(text)
            events += 1
            sink.append(Row("events", {"job_id": "j", "seq": events, "event_type": ev["type"], "ts_ms": None,
                                       "payload_json": text.decode()}))  # fmt: skip
            (payload,) = ev["event"].values()
            for key in ("counters", "totalCounters", "mapCounters", "reduceCounters"):
                counters = payload.get(key)
                if isinstance(counters, dict) and len(counters) == 1:
                    (counters,) = counters.values()  # a union-wrapped JhCounters
                for g in (counters or {}).get("groups", ()):
                    for c in g["counts"]:
                        sink.append(Row("counters", {"job_id": "j", "task_id": "t", "attempt_id": "a",
                                                     "scope": "attempt", "group_name": g["name"],
                                                     "counter_name": c["name"], "value": c["value"]}))  # fmt: skip
            rows += len(sink)
            sink.clear()
    return rows, events


def _run_child(mode: str, path: Path, repeat: int) -> dict[str, Any]:
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        store = tempfile.mkdtemp(prefix="bench-store-") if mode == "ingest" else ""
        try:
            cmd = [sys.executable, __file__, "--child", mode, str(path), "--store", store]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=REPO).stdout
        finally:
            if store:
                shutil.rmtree(store, ignore_errors=True)
        result = json.loads(out.strip().splitlines()[-1])
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    assert best is not None
    return best


def _run_hadoop(path: Path, repeat: int) -> dict[str, Any]:
    sys.path.insert(0, str(REPO / "tests"))
    from oracle_util import dumper_command  # type: ignore[import-not-found,unused-ignore]

    cmd = ["/usr/bin/time", "-f", "%U %S %M", *dumper_command(summary=True, jvm_args=("-Xmx6g",)), str(path)]
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        if info.get("fatal") or info.get("parse_exception"):
            raise SystemExit(f"Hadoop could not parse {path}: {info}")
        user, system, rss_kb = proc.stderr.strip().splitlines()[-1].split()
        result = {"mode": "hadoop", "seconds": wall, "cpu_seconds": float(user) + float(system),
                  "parse_seconds": info["parse_ns"] / 1e9, "tasks": info["tasks"], "attempts": info["attempts"],
                  "peak_rss_mb": int(rss_kb) / 1024}  # fmt: skip
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    assert best is not None
    return best


# ---------------------------------------------------------------------- report
def _fixture_figures(repeat: int) -> None:
    from ingest.base import ReadContext
    from ingest.jhist import _JhistReader, read_jhist

    paths = sorted(FIXTURES.rglob("*.jhist"))
    size = sum(p.stat().st_size for p in paths)
    blobs = [p.read_bytes().splitlines()[2:] for p in paths]
    best_read = best_orjson_reader = best_bare = float("inf")
    events = 0
    for _ in range(max(repeat, 5)):
        t0 = time.process_time()
        events = 0
        for p in paths:
            ctx = ReadContext(p)
            for _row in read_jhist(p, ctx):
                pass
            events += ctx.events_read
        best_read = min(best_read, time.process_time() - t0)
        t0 = time.process_time()
        for p in paths:  # the same reader with every line decoded by orjson (before the typed path)
            for _row in _JhistReader(p, ReadContext(p), typed=False).run():
                pass
        best_orjson_reader = min(best_orjson_reader, time.process_time() - t0)
        t0 = time.process_time()
        for lines in blobs:
            for line in lines:
                if line.strip():
                    orjson.loads(line)
        best_bare = min(best_bare, time.process_time() - t0)
    mb = size / 1e6
    print(
        f"fixtures: {len(paths)} files, {mb:.2f} MB, {events} events (CPU time; small files: per-file set-up dominates)"
    )
    print(f"  read_jhist      {mb / best_read:8.1f} MB/s  {events / best_read:10.0f} events/s")
    print(f"  bare orjson     {mb / best_bare:8.1f} MB/s  {events / best_bare:10.0f} events/s")
    print(f"  read_jhist, every line by orjson  {mb / best_orjson_reader:8.1f} MB/s  "
          f"{events / best_orjson_reader:10.0f} events/s")  # fmt: skip
    _binary_figures(paths, repeat)


def _binary_figures(paths: list[Path], repeat: int) -> None:
    """The fixtures fastavro can read, re-encoded as Hadoop 3's binary flavour: read_jhist's CPU time on
    them against on their JSON (events per second: the binary files are smaller)."""
    from ingest.base import ReadContext
    from ingest.jhist import read_jhist

    with tempfile.TemporaryDirectory() as tmp:
        pairs = [(p, b) for p in paths if (b := write_binary_history(p, Path(tmp) / p.name)) is not None]
        best = {"json": float("inf"), "binary": float("inf")}
        events = 0
        for _ in range(max(repeat, 5)):
            for kind, index in (("json", 0), ("binary", 1)):  # interleaved, so both see the same load
                t0 = time.process_time()
                events = 0
                for pair in pairs:
                    ctx = ReadContext(pair[index])
                    for _row in read_jhist(pair[index], ctx):
                        pass
                    events += ctx.events_read
                best[kind] = min(best[kind], time.process_time() - t0)
    print(f"binary: {len(pairs)} fixtures re-encoded as Avro-Binary, {events} events (CPU time)")
    print(f"  read_jhist, binary  {events / best['binary']:10.0f} events/s")
    print(f"  read_jhist, JSON    {events / best['json']:10.0f} events/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=200, help="size of the generated file (default 200)")
    ap.add_argument("--big", type=Path, default=Path(tempfile.gettempdir()) / "phaseline-bench" / "big.jhist")
    ap.add_argument("--repeat", type=int, default=2, help="runs per measurement; the best is shown")
    ap.add_argument("--skip", action="append", default=[], choices=["hadoop", "ingest", "json"])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("file", nargs="?", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.file, args.store)))
        return

    _fixture_figures(args.repeat)
    args.big.parent.mkdir(parents=True, exist_ok=True)
    big = generate(args.big, args.size_mb)
    mb = big.stat().st_size / 1e6
    print(f"\ngenerated: {big} ({mb:.0f} MB)")
    results = {
        "phaseline": _run_child("phaseline", big, args.repeat),
        "phaseline-orjson": _run_child("phaseline-orjson", big, args.repeat),
        "orjson": _run_child("orjson", big, args.repeat),
        "rows": _run_child("rows", big, args.repeat),
    }
    if "json" not in args.skip:
        results["json"] = _run_child("json", big, 1)
    if "hadoop" not in args.skip:
        results["hadoop"] = _run_hadoop(big, args.repeat)
    if "ingest" not in args.skip:
        results["ingest"] = _run_child("ingest", big, 1)
    events = results["phaseline"]["events"]
    labels = {"phaseline": "read_jhist", "phaseline-orjson": "read_jhist, every line by orjson",
              "orjson": "bare orjson lines", "json": "bare stdlib json lines",
              "rows": "orjson + Row per counter (floor)",
              "hadoop": "Hadoop JobHistoryParser (JVM)", "ingest": "phaseline ingest (full)"}  # fmt: skip
    print(f"  {'':32s} {'MB/s':>8s} {'events/s':>10s} {'wall s':>8s} {'CPU s':>8s} {'peak RSS':>9s}")
    for key, r in results.items():
        print(f"  {labels[key]:32s} {mb / r['seconds']:8.1f} {events / r['seconds']:10.0f} "
              f"{r['seconds']:8.2f} {r['cpu_seconds']:8.2f} {r['peak_rss_mb']:6.0f} MB")  # fmt: skip
        if key == "hadoop":
            s = r["parse_seconds"]
            print(f"  {'  ... parse() alone (no JVM start)':32s} {mb / s:8.1f} {events / s:10.0f} {s:8.2f}")
    print(f"  read_jhist rows yielded: {results['phaseline']['rows']}")
    ours = results["phaseline"]["seconds"]
    ours_cpu = results["phaseline"]["cpu_seconds"]
    print()
    for key in ("orjson", "json", "rows"):
        if key in results:
            target = "" if key == "rows" else "; target >= 50%"
            print(f"read_jhist vs {labels[key]}: {results[key]['seconds'] / ours:.0%} of its speed "
                  f"(CPU: {results[key]['cpu_seconds'] / ours_cpu:.0%}{target})")  # fmt: skip
    if "hadoop" in results:
        h = results["hadoop"]
        print(f"read_jhist vs Hadoop: {h['seconds'] / ours:.1f}x with JVM start-up, "
              f"{h['parse_seconds'] / ours:.1f}x parse() alone, {h['cpu_seconds'] / ours_cpu:.1f}x in CPU "
              "time (target >= 2x)")  # fmt: skip


if __name__ == "__main__":
    main()
