"""Profiles of the bundled sample runs (sample_traces/): a later wave's reduce, maps side by side in one JVM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from profiles import queries as q
from profiles.extract import extract_profile


def test_a_later_waves_reduce_is_its_shuffle_and_reduce_phase(tmp_path: Path) -> None:
    # ARIA's typical shuffle runs from the reduce's start, as the first wave's does: the bundled runs'
    # task logs start the shuffle some ms after the attempt, and that time was in no stage
    from tests.conftest import REPO

    store = Store(tmp_path / "store")
    ingest_paths([REPO / "sample_traces"], store)
    con = store.connect()
    later = 0
    for (job_id,) in con.execute("SELECT job_id FROM jobs").fetchall():
        stages = q.reduce_stages(con, job_id)
        phases = q.phases(con, job_id)
        for row in stages[stages["wave"] > 1].itertuples():
            later += 1
            assert row.typical_shuffle_ms + row.reduce_phase_ms == row.reduce_task_ms
            shuffle = phases[(phases["attempt_id"] == row.attempt_id) & (phases["phase"] == "shuffle")]
            assert row.typical_shuffle_ms > shuffle["end_ms"].max() - shuffle["start_ms"].min()
    assert later == 2


def test_a_local_run_with_maps_side_by_side_profiles_its_true_input(tmp_path: Path) -> None:
    # bench-8mb-sel1.8-merges ran 2 maps at a time in one LocalJobRunner JVM, whose shared file-system
    # statistics inflate each map's FileInputFormat BYTES_READ (1,069,703 to 1,626,044 bytes for splits of
    # 1,048,600 or 1,048,500): the input is the split lengths the logs name, as in the run's own record.
    repo = Path(__file__).resolve().parents[2]
    runs = {d.name: d for d in (repo / "sample_traces").iterdir() if d.is_dir()}
    store = Store(tmp_path / "store")
    ingest_paths([runs["bench-8mb-sel1.8-merges"], runs["bench-8mb-sel1.0"]], store)
    con = store.connect()
    profiles = {}
    for name in ("bench-8mb-sel1.8-merges", "bench-8mb-sel1.0"):
        run = json.loads((runs[name] / "run.json").read_text())
        profiles[name] = (extract_profile(con, run["job_id"]), run)
    parallel, run = profiles["bench-8mb-sel1.8-merges"]
    assert run["params"]["map_parallelism"] == 2
    assert parallel.input.total_bytes == run["params"]["input_bytes"] == 8_388_600
    assert parallel.input.max_split_bytes == 1_048_600
    skew = q.data_skew(con, run["job_id"])
    assert skew.loc[skew["task_type"] == "MAP", "input_bytes_ratio"].max() < 1.001
    # bytes out per byte in, per record out per record in: as in the run whose maps ran one at a time,
    # whose input is its split lengths too (its BYTES_READ counts the splits' .crc checksums, 0.8 % more):
    # one measure on one slot and on two
    serial, serial_run = profiles["bench-8mb-sel1.0"]
    assert serial.input.total_bytes == serial_run["params"]["input_bytes"]
    width = serial.map_size_sel / serial.map_recs_sel
    assert parallel.map_size_sel / parallel.map_recs_sel == pytest.approx(width, rel=0.002)
