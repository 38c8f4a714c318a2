"""The cores a node's tasks got, measured by the platform fit from its benchmark runs on YARN, and the
simulation's replay that shares them (platform_model.task_cores, predict.measured_on.task_cores).

Known answers: three maps at once taking three times as long as one alone is one core between them;
1.5 times as long is two; maps that all ran at one concurrency say nothing.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from platform_model.engine.yarn import ClusterShape
from platform_model.profile import profile_from_connection
from platform_model.task_cores import TASK_CORES, fit_task_cores
from predict import core
from predict.backtest_suite import loopback_cluster
from predict.core import Cluster, Dataset, JobSettings
from predict.measured_on import task_cores
from tests.predict.doubles import LinearPlatform, toy_profile

ROOT = Path(__file__).resolve().parents[2]
JOIN_RUN = ROOT / "tests" / "data" / "yarn" / "join-8mb-r2-0"
CPUMAP_RUN = ROOT / "tests" / "data" / "yarn" / "cpumap-24mb-r1-0"
YARN_2X2 = {"name": "yarn", "nodes": 2, "containers_per_node": 2, "container_mb": 512}


@pytest.mark.parametrize(("alone", "shared", "cores"), [(2000.0, 6000.0, 1), (2000.0, 3000.0, 2)])
def test_the_cores_are_what_three_maps_at_once_took_against_one_alone(alone: float, shared: float, cores: int) -> None:
    runs = [([shared, shared * 1.02, shared * 0.98, alone], [3.0, 3.0, 3.0, 1.0]),
            ([shared * 1.1, shared * 1.1, alone * 1.1], [3.0, 3.0, 1.0])]  # fmt: skip
    fit = fit_task_cores(runs)
    assert fit is not None
    assert fit.cores == cores
    assert (fit.runs, fit.maps) == (2, 7)


def test_runs_whose_maps_all_ran_at_one_concurrency_say_nothing() -> None:
    assert fit_task_cores([([5000.0, 5200.0, 4900.0], [3.0, 3.0, 2.9])]) is None
    assert fit_task_cores([([5000.0], [1.0])]) is None
    assert fit_task_cores([]) is None


def test_the_platform_fit_of_a_yarn_run_records_its_cores(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    ingest_paths([CPUMAP_RUN], store)
    profile = profile_from_connection(store.connect())
    assert profile.cluster["engine"]["name"] == "yarn"
    measured = profile.cluster[TASK_CORES]
    assert measured["runs"] == 1
    assert measured["maps"] == 12
    assert measured["cores"] in (1, 2, 3)  # whole cores, at most the most attempts at once


def test_a_yarn_run_whose_maps_ran_at_one_concurrency_records_none(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    ingest_paths([JOIN_RUN], store)  # its four maps ran beside 2.8-3.0 attempts each
    profile = profile_from_connection(store.connect())
    assert profile.cluster["engine"]["name"] == "yarn"
    assert TASK_CORES not in profile.cluster


@dataclasses.dataclass(frozen=True)
class _MeasuredPlatform(LinearPlatform):
    cluster: dict = dataclasses.field(default_factory=lambda: {"engine": YARN_2X2, TASK_CORES: {"cores": 1, "runs": 10}})


def test_a_prediction_on_the_measured_cluster_shares_the_measured_cores() -> None:
    loopback = loopback_cluster(ClusterShape(2, 2, 512))
    on_it = dataclasses.replace(loopback, cpus_per_node=2)
    cluster, said = task_cores(_MeasuredPlatform(), on_it)
    assert cluster.cpus_per_node == 1
    assert said is not None
    assert "10 benchmark runs" in said
    other = Cluster(16, 2, 2, cpus_per_node=8, engine="yarn")  # another cluster: its CPUs as given
    assert task_cores(_MeasuredPlatform(), other) == (other, None)
    assert task_cores(_MeasuredPlatform(), dataclasses.replace(on_it, cpus_per_node=None)) == (
        dataclasses.replace(on_it, cpus_per_node=None), None)  # fmt: skip
    assert task_cores(LinearPlatform(), on_it) == (on_it, None)  # a platform without the measurement


def test_only_the_simulation_takes_the_measured_cores() -> None:
    on_it = dataclasses.replace(loopback_cluster(ClusterShape(2, 2, 512)), cpus_per_node=2)
    profile = toy_profile(map_concurrency=2.7)
    args = (on_it, Dataset(4 * 2**30), JobSettings(reduces=1, io_sort_mb=100))
    measured = core.get("simulation").predict(profile, _MeasuredPlatform(), *args)
    plain = core.get("simulation").predict(profile, dataclasses.replace(_MeasuredPlatform(), cluster={"engine": YARN_2X2}), *args)
    assert any("the replay shares 1 core(s) a node" in a for a in measured.assumptions)
    assert not any("the replay shares" in a for a in plain.assumptions)
    assert measured.seconds != pytest.approx(plain.seconds)
    for model in ("bounds", "vianna"):
        one = core.get(model).predict(profile, _MeasuredPlatform(), *args)
        other = core.get(model).predict(profile, dataclasses.replace(_MeasuredPlatform(), cluster={"engine": YARN_2X2}), *args)
        assert one.seconds == pytest.approx(other.seconds)
