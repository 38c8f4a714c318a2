"""attempt_phases of real local-engine runs: coverage of each attempt, the log's spills, byte units, selectivity."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ingest.phases.spans import COVERAGE_TOLERANCE_MS
from ingest.phases.splits import (
    PHASE_NANOS,
)
from ingest.pipeline import ingest_paths
from phaseline.store import Store
from tests.ingest.phase_helpers import TASK

SELECTIVITY_TOLERANCE = 0.02  # fractional selectivity is a seeded coin per record: ~0.3% sd at 40k records


def _engine(out: Path, *args: str, input_mb: int = 4) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "phaseline",
        "engine",
        "run",
        "--out",
        str(out),
        "--input-mb",
        str(input_mb),
        "--maps",
        "2",
        "--io-sort-mb",
        "1",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("engine")
    runs = {
        # 16 MiB: at 4 the task thread of a 2 MiB map ran Java code for 1-7 of JFR's 2 ms samples (it
        # waits on its spills, in I/O and class loading, where no execution sample is taken), under the
        # 5 a split needs: 2 of 6 runs were split on 2026-11-27, against 6 of 6 at 16 MiB
        "serial": _engine(root / "serial", "--reduces", "1", "--jfr", input_mb=16),
        # two maps and two reduces at a time in one JVM: helper threads must still find their attempt
        "parallel": _engine(
            root / "parallel",
            "--reduces",
            "2",
            "--map-parallelism",
            "2",
            "--reduce-parallelism",
            "2",
            "--selectivity",
            "0.5",
        ),
        # compressed map output, merged in two passes (sort factor 2), kept in the reduce's memory
        "compressed": _engine(
            root / "compressed",
            "--reduces",
            "1",
            "--sort-factor",
            "2",
            "--reduce-memory-mb",
            "32",
            "-D",
            "mapreduce.map.output.compress=true",
            "-D",
            "mapreduce.reduce.input.buffer.percent=0.7",
        ),
    }
    store = Store(root / "store")
    summary = ingest_paths(list(runs.values()), store)
    assert summary.quarantined == 0
    return {"dirs": runs, "con": store.connect()}


def _job_id(run_dir: Path) -> str:
    return str(json.loads((run_dir / "run.json").read_text())["job_id"])


def _rows(con: Any, sql: str, *params: object) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in con.execute(sql, list(params)).fetchall()]


@pytest.mark.slow
@pytest.mark.parametrize("run", ["serial", "parallel"])
def test_engine_run_phases_cover_attempts_and_match_the_log(engine_runs: dict[str, Any], run: str) -> None:
    con, run_dir = engine_runs["con"], engine_runs["dirs"][run]
    job = _job_id(run_dir)
    reduces = 1 if run == "serial" else 2
    jobs = _rows(
        con, "SELECT status, total_maps, total_reduces, source_format FROM jobs WHERE job_id = ?", job
    )
    assert jobs == [("SUCCEEDED", 2, reduces, "phaseline-engine-run")]
    attempts = _rows(
        con, "SELECT attempt_id, start_ms, finish_ms, task_type FROM attempts WHERE job_id = ?", job
    )
    assert sorted(a[3] for a in attempts) == ["MAP", "MAP"] + ["REDUCE"] * reduces
    for attempt_id, start, finish, _ in attempts:
        main = _rows(
            con,
            "SELECT phase, start_ms, end_ms, dur_ms FROM attempt_phases "
            "WHERE attempt_id = ? AND lane = 'main' ORDER BY start_ms, end_ms",
            attempt_id,
        )
        assert all(p[3] >= 0 for p in main)
        assert main[0][1] == start
        assert main[-1][2] == finish
        assert abs(sum(p[3] for p in main) - (finish - start)) <= COVERAGE_TOLERANCE_MS
        assert all(a[2] == b[1] for a, b in itertools.pairwise(main))
    # every 'Finished spill' line of the raw log is one spill_finish event of some attempt
    raw = (run_dir / "logs" / "job.log").read_text()
    spills = _rows(con, "SELECT count(*) FROM attempt_events WHERE job_id = ? AND kind = 'spill_finish'", job)
    assert spills[0][0] == len(re.findall(r"MapTask: Finished spill \d+$", raw, re.M)) > 2
    # the benchmark job times its reader, collect and writer: every map and reduce span is split by those
    # timers, with or without a JFR recording (the serial run has one), in parallel too
    timed = _rows(
        con,
        """
        SELECT p.phase, p.dur_ms, p.dur_us, c.value FROM attempt_phases p JOIN counters c ON c.attempt_id = p.attempt_id
        WHERE p.job_id = ? AND p.lane = 'main' AND c.scope = 'attempt' AND c.group_name = ?
          AND c.counter_name = upper(p.phase)""",
        job,
        PHASE_NANOS,
    )
    assert sorted(p for p, *_ in timed) == ["collect"] * 2 + ["read"] * 2 + ["write"] * reduces
    assert all(abs(dur - nanos / 1e6) <= 1 for _, dur, _us, nanos in timed), timed
    assert all(us == round(nanos / 1000) for _, _dur, us, nanos in timed), timed
    names = _rows(
        con,
        "SELECT phase, count(*) FROM attempt_phases WHERE job_id = ? AND lane = 'main' "
        "AND phase IN ('map', 'reduce', 'read+map+collect', 'reduce+write') GROUP BY 1",
        job,
    )
    assert sorted(names) == [("map", 2), ("reduce", reduces)]
    # LocalJobRunner gives each reduce one local fetcher thread, which fetches every map's output once
    fetchers = _rows(
        con,
        "SELECT attempt_id, count(DISTINCT thread_id), count(*) FROM attempt_events "
        "WHERE job_id = ? AND kind = 'fetch_start' GROUP BY 1",
        job,
    )
    assert sorted(f[1:] for f in fetchers) == [(1, 2)] * reduces


@pytest.mark.slow
def test_engine_run_with_compressed_map_output_has_byte_counts_in_one_unit(
    engine_runs: dict[str, Any],
) -> None:
    con, run_dir = engine_runs["con"], engine_runs["dirs"]["compressed"]
    job = _job_id(run_dir)
    raw = (run_dir / "logs" / "job.log").read_text()
    assert "intermediate segments" in raw  # each map merged in two passes
    # Hadoop's own last-pass sizes of these maps are negative (its arithmetic mixes the two units)
    assert min(int(b) for b in re.findall(r"left of total size: (-?\d+) bytes", raw)) < 0
    merges = _rows(
        con,
        """
        SELECT p.data_bytes, c.value FROM attempt_phases p JOIN counters c ON c.attempt_id = p.attempt_id
        WHERE p.job_id = ? AND p.phase = 'merge' AND p.task_type = 'MAP' AND p.lane = 'main'
          AND c.scope = 'attempt' AND c.counter_name = 'MAP_OUTPUT_MATERIALIZED_BYTES'""",
        job,
    )
    assert len(merges) == 2
    assert all(merged == materialized > 0 for merged, materialized in merges)
    # the final merge held both map outputs in memory (uncompressed bytes in its log line): counted in the
    # shuffle's compressed unit, the sort's bytes are the fetched bytes, not 7x more
    ((shuffle, sort),) = _rows(
        con,
        """
        SELECT max(data_bytes) FILTER (WHERE phase = 'shuffle'), max(data_bytes) FILTER (WHERE phase = 'sort')
        FROM attempt_phases WHERE job_id = ? AND task_type = 'REDUCE'""",
        job,
    )
    assert "bytes from memory into reduce" in raw
    assert sort == pytest.approx(shuffle, rel=0.01)


@pytest.mark.slow
@pytest.mark.parametrize(("run", "asked"), [("serial", 1.0), ("parallel", 0.5)])
def test_engine_run_selectivity_from_attempt_counters(
    engine_runs: dict[str, Any], run: str, asked: float
) -> None:
    con, run_dir = engine_runs["con"], engine_runs["dirs"][run]
    (row,) = _rows(
        con,
        """
        SELECT sum(value) FILTER (WHERE counter_name = 'MAP_OUTPUT_RECORDS'),
               sum(value) FILTER (WHERE counter_name = 'MAP_INPUT_RECORDS')
        FROM counters WHERE job_id = ? AND scope = 'attempt' AND group_name = ?""",
        _job_id(run_dir),
        TASK,
    )
    assert abs(row[0] / row[1] - asked) <= SELECTIVITY_TOLERANCE
    # the spill phases' data are exactly the map output bytes of the attempt counters
    (spilled, output) = _rows(
        con,
        """
        SELECT (SELECT sum(data_bytes) FROM attempt_phases WHERE job_id = ? AND phase = 'spill'),
               (SELECT sum(value) FROM counters WHERE job_id = ? AND scope = 'attempt'
                AND counter_name = 'MAP_OUTPUT_BYTES')""",
        _job_id(run_dir),
        _job_id(run_dir),
    )[0]
    assert spilled == output
