"""The typical map of one JVM's few maps, built phase by phase (profiles.phase_floor, issue 37).

Known answers: a run whose JVM stalls single phases of single maps (the numbers
of the backtest suite's two-slot topn profile) has a floor of each phase's least
time; a real two-slot LocalJobRunner run (tests/data/engine-runs) is profiled
with that floor, its total map work kept.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ingest.pipeline import ingest_paths
from phaseline.errors import DataQualityWarning
from phaseline.store import Store
from profiles.extract import extract_profile
from profiles.phase_floor import phase_floor, typical_maps
from profiles.task_costs import split_first_wave

RUN = Path(__file__).parents[1] / "data" / "engine-runs" / "maponly-8mb-r0-p2-0"
JOB = "job_local1851772999_0003"

#: Per map, its phases in order (ms): the first two maps stalled reading, the third spilling, the
#: fourth reading again (topn's two-slot profile in the five-run suite).
STALLED = {
    "m0": {"setup": 3, "read+map+collect": 696, "spill": 15, "merge": 6, "commit": 1},
    "m1": {"setup": 1, "read+map+collect": 710, "spill": 9, "merge": 5, "commit": 4},
    "m2": {"setup": 4, "read+map+collect": 16, "spill": 45, "merge": 3, "commit": 2},
    "m3": {"setup": 4, "read+map+collect": 62, "spill": 7, "merge": 4, "commit": 1},
}


def _frames(per_map: dict[str, dict[str, int]], *, gap_ms: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Attempt and phase rows whose phases tile each map's span (plus ``gap_ms`` not covered)."""
    attempts, phases = [], []
    for i, (attempt, spans) in enumerate(per_map.items()):
        start = t = 1000 * i
        for seq, (phase, dur) in enumerate(spans.items(), start=1):
            phases.append({"attempt_id": attempt, "task_type": "MAP", "phase": phase, "seq": seq, "start_ms": t,
                           "end_ms": t + dur, "dur_ms": dur, "data_bytes": 100 * seq, "data_records": seq,
                           "source": "tasklog", "lane": "main"})  # fmt: skip
            t += dur
        attempts.append({"attempt_id": attempt, "task_type": "MAP", "start_ms": start, "finish_ms": t + gap_ms,
                         "dur_ms": t + gap_ms - start})  # fmt: skip
    return pd.DataFrame(attempts), pd.DataFrame(phases)


def test_the_floor_is_each_phases_least_time_laid_end_to_end() -> None:
    maps, phases = _frames(STALLED)
    floor = phase_floor(maps, phases, "floor")
    assert floor is not None
    least = {"setup": 1, "read+map+collect": 16, "spill": 7, "merge": 3, "commit": 1}
    assert floor.typical_ms == sum(least.values()) == 28  # the fastest whole map took 70 ms
    rows = floor.phases
    assert list(rows["phase"]) == list(least)  # in the order a map runs them
    assert dict(zip(rows["phase"], rows["dur_ms"], strict=True)) == least
    assert (rows["attempt_id"] == "floor").all()
    assert list(rows["start_ms"].iloc[1:]) == list(rows["end_ms"].iloc[:-1])  # one after another
    assert rows["end_ms"].iloc[-1] - rows["start_ms"].iloc[0] == 28
    assert rows.loc[rows["phase"] == "spill", "data_bytes"].item() == 300  # the least map's own data
    assert floor.attempt[["attempt_id", "dur_ms"]].to_dict("records") == [{"attempt_id": "floor", "dur_ms": 28.0}]


def test_the_split_keeps_the_runs_map_work() -> None:
    maps, phases = _frames(STALLED)
    floor = phase_floor(maps, phases, "floor")
    assert floor is not None
    durations = maps["dur_ms"].astype(float)
    fastest = split_first_wave(list(durations), [1, 1, 2, 2], 2, one_jvm=True)
    assert fastest.fastest
    assert fastest.typical_avg_ms == 70
    split = floor.split(fastest, durations)
    assert split.typical_avg_ms == split.typical_max_ms == 28
    assert (split.typical_count, split.left_out) == (4, 0)  # every map gave phases; none is dropped
    assert 4 * split.typical_avg_ms + split.slots * split.one_time_ms == pytest.approx(durations.sum())
    assert split.max_extra_ms == durations.max() - 28
    assert "each phase's least time over the 4 maps" in split.evidence


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda m, p: (m, p.assign(lane=["main", "spill"] * (len(p) // 2))), "two lanes overlap"),
        (lambda m, p: (m, p.assign(source=["tasklog", "jhist"] * (len(p) // 2))), "two sources"),
        (lambda m, p: (m.iloc[:1], p[p["attempt_id"] == "m0"]), "one map"),
        (lambda m, p: (m, p[p["attempt_id"] != "m3"]), "a map without phases"),
    ],
)
def test_no_floor_where_the_phases_cannot_tell(change: object, why: str) -> None:
    maps, phases = change(*_frames(STALLED))  # type: ignore[operator]
    assert phase_floor(maps, phases, "floor") is None, why


def test_no_floor_where_the_phases_leave_part_of_a_span_uncovered() -> None:
    maps, phases = _frames(STALLED, gap_ms=40)
    assert phase_floor(maps, phases, "floor") is None


def test_a_real_two_slot_run_is_profiled_by_its_phase_floor(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    ingest_paths([RUN], store)
    con = store.connect()
    per_phase = con.execute(
        "SELECT p.phase, min(p.dur_ms) FROM (SELECT attempt_id, phase, sum(dur_ms) AS dur_ms FROM attempt_phases "
        "GROUP BY ALL) AS p JOIN attempts AS a USING (attempt_id) WHERE a.task_type = 'MAP' GROUP BY p.phase"
    ).fetchall()
    maps = [d for (d,) in con.execute("SELECT finish_ms - start_ms FROM attempts WHERE task_type = 'MAP'").fetchall()]
    floor = sum(d for _, d in per_phase)
    assert floor < min(maps)  # no whole map was free of a stall
    with pytest.warns(DataQualityWarning, match="only 2 map"):
        profile = extract_profile(con, JOB)
    assert profile.stages["map_task"].avg_ms == floor
    assert profile.map_tasks_left_out == 0
    assert profile.map_slots == 2
    assert profile.map_one_time_ms is not None
    assert len(maps) * floor + 2 * profile.map_one_time_ms == pytest.approx(sum(maps))
    assert "each phase's least time over the 4 maps" in (profile.cost_evidence or "")


def test_typical_maps_keeps_the_typical_attempts_where_no_floor_applies() -> None:
    maps, phases = _frames(STALLED)
    durations = list(maps["dur_ms"].astype(float))
    judged = split_first_wave(durations, [1, 1, 2, 2], 2, one_jvm=False)  # a cluster's maps: no floor
    assert not judged.fastest
    split, typ_ok, typ_phases = typical_maps(judged, frozenset({"m0", "m1"}), maps, phases, "job_1_0001")
    assert split is judged
    assert list(typ_ok["attempt_id"]) == ["m2", "m3"]
    assert set(typ_phases["attempt_id"]) == {"m2", "m3"}
    fastest = split_first_wave(durations, [1, 1, 2, 2], 2, one_jvm=True)
    split, typ_ok, typ_phases = typical_maps(fastest, frozenset({"m0", "m1", "m3"}), maps, phases, "job_local1_0001")
    assert split is not None
    assert split.floored
    assert list(typ_ok["attempt_id"]) == ["job_local1_0001:phase-floor"]
    assert typ_phases["dur_ms"].sum() == 28
