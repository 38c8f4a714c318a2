"""SIGKILL ``phaseline ingest`` at random moments: the store stays consistent, a re-run converges.

A reference store is built by one uninterrupted ingest.  Then, many times, an
ingest into a fresh store is killed after a random delay, the store is
verified, the ingest is re-run to completion, and the table contents must
equal the reference exactly (ingest timestamps aside).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from phaseline.schemas import TABLES
from phaseline.store import Store
from phaseline.verify import verify_store
from tests.conftest import FIXTURES

RUNS = int(os.environ.get("PHASELINE_CRASH_RUNS", "8"))


def corpus() -> list[str]:
    picks = [
        FIXTURES / "apache-hadoop" / "mapreduce-client-hs",
        FIXTURES / "apache-hadoop" / "mapreduce-client-jobclient",
        FIXTURES / "linkedin-dr-elephant" / "history-done",
        FIXTURES / "apache-hadoop-mapreduce" / "rumen-small-trace-test",
        FIXTURES / "splitlog-yarn-logs",
    ]
    return [str(p) for p in picks if p.exists()]


def run_ingest(store: Path, commit_every: int = 1) -> subprocess.Popen[bytes]:
    args = ["ingest", *corpus(), "--store", str(store), "--commit-every", str(commit_every), "-q"]
    return subprocess.Popen(
        [sys.executable, "-m", "phaseline", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def dump(store: Path) -> dict[str, list[tuple[object, ...]]]:
    con = Store(store).connect()
    out: dict[str, list[tuple[object, ...]]] = {}
    for name, spec in TABLES.items():
        cols = [c for c in spec.columns if c != "ingested_at"]
        rows = con.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{name}"').fetchall()
        out[name] = sorted(rows, key=repr)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("commit_every", [1, 8])  # 8: chunks of several files share staged files
def test_sigkill_during_ingest_never_corrupts_and_rerun_converges(tmp_path: Path, commit_every: int) -> None:
    reference = tmp_path / "reference"
    assert run_ingest(reference).wait() in (0, 3)
    expected = dump(reference)
    assert expected["jobs"], "the corpus should land jobs"
    started = time.monotonic()
    proc = run_ingest(tmp_path / "timing", commit_every)
    proc.wait()
    full_s = time.monotonic() - started
    rng = random.Random(20261121)
    killed = 0
    for run in range(RUNS):
        store = tmp_path / f"run{run}"
        proc = run_ingest(store, commit_every)
        time.sleep(rng.uniform(0.05, full_s))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed += 1
        proc.wait()
        report = verify_store(Store(store))
        assert report.ok, (run, report.findings)
        assert run_ingest(store, commit_every).wait() in (0, 3)
        assert verify_store(Store(store)).ok
        assert dump(store) == expected, f"run {run}: re-ingest after a kill differs from an uninterrupted ingest"
    assert killed >= RUNS // 2, "most runs should have been killed mid-way"
