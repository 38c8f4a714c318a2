"""A tiny hand-made HiTune sample trace (hadoop-0.20's vertices), written for the ingest and dataflow tests."""

from __future__ import annotations

from pathlib import Path

A0 = "attempt_201106081729_0001_m_000000_0"
R0 = "attempt_201106081729_0001_r_000000_0"
JOB = "job_201106081729_0001"
MAP = "org.apache.hadoop.mapred.MapTask.run"
SPILL = "org.apache.hadoop.mapred.MapTask$MapOutputBuffer$SpillThread.run"
REDUCER = "org.apache.hadoop.mapred.ReduceTask.runNewReducer"
COPIER = "org.apache.hadoop.mapred.ReduceTask$ReduceCopier$MapOutputCopier.run"

# Timeline (ms after 1000; one char = 10 ms), hadoop-0.20 spec:
#
#   thread 1 "main"   of A0:  M M M . . M        map: 1000..1050, 4 samples (3 busy, 1 waiting)
#   thread 24 "Spill" of A0:    S S S            spill: 1010..1030 (2 busy + 1 waiting)
#   thread 1 "main"   of R0:              R R    reduce: 1060..1070
#   thread 30 copier  of R0:            C        copier: 1050 (one sample, start = end)
#   thread 1 "main"   of A0:        ?            unmapped (LocalJobRunner code), kept and counted
LINES = [
    (1000, "h1", A0, 1, "main", "RUNNABLE", ["X.map", MAP]),
    (1010, "h1", A0, 1, "main", "RUNNABLE", ["Y.collect", MAP]),
    (1010, "h1", A0, 24, "SpillThread", "RUNNABLE", ["Q.sort", SPILL]),
    (1020, "h1", A0, 1, "main", "WAITING", ["java.lang.Object.wait", MAP]),
    (1020, "h1", A0, 24, "SpillThread", "WAITING", ["java.lang.Object.wait", SPILL]),
    (1030, "h1", A0, 24, "SpillThread", "RUNNABLE", ["Q.sort", SPILL]),
    (1040, "h1", A0, 1, "main", "RUNNABLE", ["org.apache.hadoop.mapred.LocalJobRunner$Job.run"]),
    (1050, "h1", A0, 1, "main", "RUNNABLE", ["X.map", MAP]),
    (1050, "h2", R0, 30, "MapOutputCopier r0.0", "TIMED_WAITING", ["Z.reserve", COPIER]),
    (1060, "h2", R0, 1, "main", "RUNNABLE", ["W.reduce", REDUCER]),
    (1070, "h2", R0, 1, "main", "BLOCKED", ["W.write", REDUCER]),
]


def write_samples(path: Path, extra: tuple[str, ...] = ()) -> Path:
    rows = ["#hitune-samples 1"]
    for ts, host, attempt, tid, name, state, frames in LINES:
        rows.append(f"{ts}\tstack\t{host}|{attempt}|{tid}|{name}\t{state}|{';'.join(frames)}")
    rows.extend(extra)
    path.write_text("\n".join(rows) + "\n")
    return path
