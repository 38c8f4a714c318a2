"""Resource limits on single records: a 1 GB line is refused without taking the process down.

Each case is a real format's header followed by one 1 GiB line (a sparse file,
so the test costs no disk).  The ingest runs in a child process whose peak RSS
is measured: it must quarantine the file naming the line, land the good file
beside it, and stay far below the line's size in memory.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import common  # noqa: E402 - benchmarks/ is a script directory, not a package

GIB = 1 << 30
RSS_LIMIT_MB = 512  # half the line; the readers peak near 210 MB (VmHWM, 2026-11-29)

HEADERS = {
    "jhist": b'Avro-Json\n{"type":"record","name":"Event","namespace":"org.apache.hadoop.mapreduce.jobhistory","fields":[]}\n',
    "history_v1": b'Meta VERSION="1" .\nJob JOBID="job_200904211745_0002" JOBNAME="x',
    "rumen": b'{"priority":"NORMAL","jobID":"job_1_1","user":"',
    "tasklog": b"2025-08-24 17:49:10,123 INFO [main] org.apache.hadoop.mapred.MapTask: ",
}

CHILD = r"""
import json, sys
from pathlib import Path
from ingest.pipeline import ingest_paths
from phaseline.store import Store
summary = ingest_paths([sys.argv[1], sys.argv[2]], Store(sys.argv[3]), file_timeout_s=120)
print(json.dumps({"results": [[r.path, r.status, r.error] for r in summary.results]}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(HEADERS))
def test_a_one_gigabyte_record_is_refused_with_bounded_memory(tmp_path: Path, fmt: str, fixtures_dir: Path) -> None:
    huge = tmp_path / f"huge-{fmt}"
    with open(huge, "wb") as fh:
        fh.write(HEADERS[fmt])
        fh.truncate(len(HEADERS[fmt]) + GIB)  # sparse: a 1 GiB run of NUL bytes, no line end
    good = fixtures_dir / "apache-hadoop" / "mapreduce-client-hs" / "job_2.4.0-FAILED.jhist"
    # the child's own peak RSS (the benchmarks' measure: a pytest worker's would be inherited across exec)
    run = common.run_measured(
        [sys.executable, "-c", CHILD, str(huge), str(good), str(tmp_path / "store")], timeout_s=600, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.last_json()
    status = {Path(p).name: (s, e) for p, s, e in out["results"]}
    assert status[good.name][0] == "landed"
    huge_status, error = status[huge.name]
    assert huge_status == "quarantined", (huge_status, error)
    assert str(huge) in error
    assert run.peak_rss_mb < RSS_LIMIT_MB, f"peak RSS {run.peak_rss_mb:.0f} MB for a 1 GiB record"
