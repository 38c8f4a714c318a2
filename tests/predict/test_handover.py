"""The slot handover (predict/handover.py): the scheduler's wait between two tasks of one slot.

Known answers by hand for the measurement (profiles/sql/slot_handover.sql) and for what every model
adds, then a real 2009 cluster's sort job (the Chukwa test sample: 10 maps, then 8 reduces, on one map
and one reduce slot, a JobTracker's heartbeat between every two tasks) predicted at its own size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from phaseline.schemas import TaskType
from platform_model.profile import SLOT_HANDOVER, profile_from_connection
from predict import core
from predict.core import Cluster, Dataset, JobSettings
from predict.handover import handovers_per_slot, slot_handover_ms
from tests.predict.doubles import LinearPlatform, toy_profile
from tests.profiles.profiles_doubles import make_con

SORTER = Path(__file__).parents[1] / "data/fixtures/intel-hitune/chukwa-test-samples-crlf/JobHistory.log"


@dataclass(frozen=True)
class MeasuredPlatform(LinearPlatform):
    """The test platform with a measured handover, as ``phaseline fit`` records it."""

    cluster: dict[str, Any] = field(default_factory=dict)


def _measured(map_ms: float, reduce_ms: float, base: LinearPlatform | None = None) -> MeasuredPlatform:
    handover = {"MAP": {"ms": map_ms, "handovers": 9, "jobs": 1}, "REDUCE": {"ms": reduce_ms, "handovers": 7, "jobs": 1}}
    return MeasuredPlatform(coef=(base or LinearPlatform()).coef, cluster={SLOT_HANDOVER: handover})


def _attempt(job: str, name: str, task_type: str, start: int, finish: int) -> dict[str, Any]:
    t = "m" if task_type == "MAP" else "r"
    return {"job_id": job, "task_id": f"task_{job[4:]}_{t}_{name}", "attempt_id": f"attempt_{job[4:]}_{t}_{name}_0",
            "task_type": task_type, "status": "SUCCEEDED", "start_ms": start, "finish_ms": finish, "host": "h1"}  # fmt: skip


def test_a_freed_slot_is_taken_by_the_attempt_that_starts_slots_later() -> None:
    """Two map slots: a [0, 4) and b [0, 6) fill them; c starts at 5 on a's (freed at 4: 1 ms), d at 9
    on b's (freed at 6: 3 ms); median 2.  One reduce slot: r1 [10, 12), r2 at 12 (0 ms).  A job of
    another name is left out: its two of 100 ms would move the median to 51.5 ms."""
    rows = [
        _attempt("job_1_0001", "a", "MAP", 0, 4), _attempt("job_1_0001", "b", "MAP", 0, 6),
        _attempt("job_1_0001", "c", "MAP", 5, 9), _attempt("job_1_0001", "d", "MAP", 9, 13),
        _attempt("job_1_0001", "r1", "REDUCE", 10, 12), _attempt("job_1_0001", "r2", "REDUCE", 12, 15),
        _attempt("job_1_0002", "a", "MAP", 0, 4), _attempt("job_1_0002", "b", "MAP", 104, 110),
        _attempt("job_1_0002", "c", "MAP", 210, 214),
    ]  # fmt: skip
    jobs = [{"job_id": "job_1_0001", "name": "bench"}, {"job_id": "job_1_0002", "name": "other"}]
    from profiles import queries as q

    con = make_con({"attempts": rows, "jobs": jobs})
    got = q.frame(con, q.Concept.SLOT_HANDOVER, job_id="job_1_0001")
    assert {r.task_type: (r.handover_ms, r.handovers) for r in got.itertuples()} == {"MAP": (2.0, 2), "REDUCE": (0.0, 1)}
    # the platform's: over the jobs of a name, or all (as `phaseline fit` records it)
    assert profile_from_connection(con, job_name="bench").cluster[SLOT_HANDOVER]["MAP"] == {"ms": 2.0, "handovers": 2, "jobs": 1}
    every = profile_from_connection(con).cluster[SLOT_HANDOVER]
    assert every["MAP"] == {"ms": 51.5, "handovers": 4, "jobs": 2}  # gaps 1, 3 and the other job's 100, 100


def test_handovers_are_the_tasks_past_the_first_wave_per_slot() -> None:
    assert handovers_per_slot(10, 4) == 1.5
    assert handovers_per_slot(4, 4) == 0.0
    assert handovers_per_slot(1, 64) == 0.0
    assert slot_handover_ms(_measured(800.0, 0.0), TaskType.MAP) == 800.0
    assert slot_handover_ms(_measured(800.0, 0.0), TaskType.REDUCE) == 0.0
    assert slot_handover_ms(LinearPlatform(), TaskType.MAP) == 0.0  # no measurement (a CSV fit, an old model)


@pytest.mark.parametrize("model", core.models())
def test_every_model_adds_each_slots_handovers_once(model: str) -> None:
    """20 maps on 8 slots: 1.5 handovers per slot of 1 s; 10 reduces on 4: 1.5 of 0.4 s: +2.1 s, interval too."""
    profile, settings, dataset = toy_profile(), JobSettings(reduces=10, io_sort_mb=100), Dataset(20 * 64 * 2**20)
    cluster = Cluster(2, 4, 2)
    predictor = core.get(model)
    plain = predictor.predict(profile, LinearPlatform(), cluster, dataset, settings)
    waited = predictor.predict(profile, _measured(1000.0, 400.0), cluster, dataset, settings)
    assert waited.seconds == pytest.approx(plain.seconds + 1.5 + 0.6)
    assert waited.stages["map.handover"] == pytest.approx(1.5)
    assert waited.stages["reduce.handover"] == pytest.approx(0.6)
    if plain.low_s is not None:
        assert (waited.low_s, waited.high_s) == pytest.approx((plain.low_s + 2.1, plain.high_s + 2.1))
    assert sum("slot handover" in note for note in waited.assumptions) == 2


def test_one_wave_waits_for_no_freed_slot() -> None:
    profile, settings = toy_profile(), JobSettings(reduces=4, io_sort_mb=100)
    cluster = Cluster(4, 6, 2)  # 24 map slots for 20 maps, 8 reduce slots for 4 reduces
    plain = core.get("bounds").predict(profile, LinearPlatform(), cluster, Dataset(20 * 64 * 2**20), settings)
    waited = core.get("bounds").predict(profile, _measured(1000.0, 400.0), cluster, Dataset(20 * 64 * 2**20), settings)
    assert waited.seconds == plain.seconds
    assert "map.handover" not in waited.stages


def test_a_real_clusters_sort_at_its_own_size(tmp_path: Path) -> None:
    """The Chukwa sample's sorter (Hadoop 0.20, 2009): 10 maps of 6.4-6.9 s one after another on one map
    slot (2.4 s between two: the TaskTracker's heartbeat), the first reduce launched under them, then
    7 reduces of 12-18 s on one reduce slot: 209.6 s from the first map's start to the last reduce's end.

    A profile that took the first reduce's wait for the maps as reduce work (its shuffle 87.7 s), and
    models that left the slots' handovers out, had predicted 259-267 s (+24-27 %).  The first reduce's
    wait is now the map stage's alone (the reduce task and the shuffle are the later waves'), and the
    handovers measured in the trace are added: ARIA's bounds, Herodotou's waves, the critical path and
    the simulation come within 2 %.
    """
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from profiles import queries as q
    from profiles.extract import extract_profile
    from profiles.profile import Stage

    store = Store(tmp_path / "store")
    ingest_paths([SORTER], store)
    con = store.connect()
    job = "job_200909120624_0005"
    profile = extract_profile(con, job)
    reduces = q.timeline(con, job).query("task_type == 'REDUCE' and status == 'SUCCEEDED'").sort_values("start_ms")
    later = reduces.iloc[1:]  # the first started under the maps
    assert profile.stage(Stage.REDUCE_TASK).avg_ms == pytest.approx((later["finish_ms"] - later["start_ms"]).mean())
    # as `phaseline fit` records it from a store (here the trace's own: this cluster's scheduling)
    measured = profile_from_connection(con).cluster[SLOT_HANDOVER]
    assert measured["MAP"] == {"ms": 2446.0, "handovers": 9, "jobs": 1}  # the median of the nine between maps
    handover = {task_type: record["ms"] for task_type, record in measured.items()}
    # the trace times no map-side phase: the test platform's lines price them, the map overhead calibrated
    # on the measured maps takes up the rest; its flat shuffle line, below the profiled sort, leaves the
    # shuffle to the profile (ShufflePrice: the typical one, as measured)
    coef = {**LinearPlatform().coef, "shuffle": (100.0, 0.0)}
    platform = _measured(handover["MAP"], handover["REDUCE"], LinearPlatform(coef=coef))
    settings = JobSettings(reduces=8, io_sort_mb=100)
    measured_s = 209.572
    for model in ("bounds", "herodotou", "critical_path", "simulation"):
        got = core.get(model).predict(profile, platform, Cluster(1, 1, 1), Dataset(profile.input.total_bytes), settings)
        assert got.seconds == pytest.approx(measured_s, rel=0.02), model


def test_fit_says_what_handover_it_measured() -> None:
    from platform_model.model import PlatformModel
    from platform_model.store_fit import handover_note

    record = {"MAP": {"ms": 839.5, "handovers": 28, "jobs": 12}, "REDUCE": {"ms": 611.0, "handovers": 8, "jobs": 4}}
    note = handover_note(PlatformModel(phases={}, cluster={SLOT_HANDOVER: record}))
    assert note is not None
    assert note.startswith("slot handover: map 840 ms (the median of 28 in 12 job(s)), reduce 611 ms")
    assert handover_note(PlatformModel(phases={})) is None  # a CSV fit measures none
    # and the model keeps it through its JSON
    saved = PlatformModel.from_json(PlatformModel(phases={}, cluster={SLOT_HANDOVER: record}).to_json())
    assert slot_handover_ms(saved, TaskType.MAP) == 839.5
