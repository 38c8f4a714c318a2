"""The engine and cluster shape a platform model was measured on: read from the store, and warned of
when a prediction is for another engine or shape (issue 42)."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from phaseline.errors import PlatformMismatchWarning
from platform_model.engine.yarn import ClusterShape
from platform_model.profile import _measured_engine, load_sql, profile_from_store
from predict import core
from predict.backtest_suite import loopback_cluster
from predict.core import Cluster, Dataset, JobSettings
from tests.predict.doubles import GB, YARN_2X2, LinearPlatform, MeasuredPlatform, toy_files, toy_profile

LOCAL = {"name": "local-hadoop"}


def _store_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Six profiled jobs: LocalJobRunner; YARN 2 x 2 x 512 MiB (two jobs, one that used one node);
    YARN with 1 GiB containers; a .jhist whose configuration does not name the framework; a
    Hadoop 1.x job (a JobTracker's: no framework, no .jhist)."""
    con.execute("CREATE TABLE jobs (job_id VARCHAR, name VARCHAR, source_format VARCHAR)")
    con.execute("CREATE TABLE attempts (job_id VARCHAR, status VARCHAR, host VARCHAR, http_port BIGINT)")
    con.execute("CREATE TABLE conf (job_id VARCHAR, key VARCHAR, value VARCHAR)")
    jobs = [("job_local1_0001", "bench", "task_log"), ("job_1_0001", "bench", "jhist"),
            ("job_1_0002", "bench", "jhist"), ("job_2_0001", "bench", "jhist"), ("job_3_0001", "bench", "jhist"),
            ("job_200901010000_0001", "bench", "history_v1")]  # fmt: skip
    con.executemany("INSERT INTO jobs VALUES (?, ?, ?)", jobs)
    con.executemany("INSERT INTO attempts VALUES (?, ?, ?, ?)", [
        ("job_local1_0001", "SUCCEEDED", "localhost", None),
        ("job_1_0001", "SUCCEEDED", "box", 41001), ("job_1_0001", "SUCCEEDED", "box", 41002),
        ("job_1_0001", "KILLED", "box", 41003),  # not a successful attempt: not counted as a node
        ("job_1_0002", "SUCCEEDED", "box", 41001),
        ("job_2_0001", "SUCCEEDED", "n1", 8042), ("job_2_0001", "SUCCEEDED", "n2", 8042),
        ("job_2_0001", "SUCCEEDED", "n3", 8042),
        ("job_3_0001", "SUCCEEDED", "n1", 8042),
        ("job_200901010000_0001", "SUCCEEDED", "tt1", None),
    ])  # fmt: skip
    yarn = [("mapreduce.framework.name", "yarn"), ("yarn.nodemanager.resource.memory-mb", "1024"),
            ("mapreduce.map.memory.mb", "512")]  # fmt: skip
    con.executemany("INSERT INTO conf VALUES (?, ?, ?)", [
        ("job_local1_0001", "mapreduce.framework.name", "local"),
        *[("job_1_0001", k, v) for k, v in yarn], *[("job_1_0002", k, v) for k, v in yarn],
        ("job_2_0001", "mapreduce.framework.name", "yarn"), ("job_2_0001", "mapreduce.map.memory.mb", "1024"),
        ("job_2_0001", "yarn.nodemanager.resource.memory-mb", "8192"),
        ("job_3_0001", "mapreduce.map.memory.mb", "1024"),
    ])  # fmt: skip


def test_the_engine_and_shape_of_each_profiled_job_come_from_its_conf_and_attempts() -> None:
    con = duckdb.connect()
    _store_tables(con)
    rows = con.execute(load_sql("platform_engine"), {"job_name": None}).fetchall()
    assert sorted(rows, key=str) == sorted([
        ("yarn", 2, 1024, 512, 2),  # the most NodeManagers of any job of that shape
        ("yarn", 3, 8192, 1024, 1),
        ("yarn", 1, None, 1024, 1),  # a .jhist is an MRAppMaster's: YARN, though its conf does not say
        ("local", None, None, None, 1),
        (None, None, None, None, 1),
    ], key=str)  # fmt: skip
    assert _measured_engine(rows[:1]) == YARN_2X2
    assert _measured_engine([("local", None, None, None, 1)]) == LOCAL
    assert _measured_engine([(None, None, None, None, 1)]) is None
    mixed = _measured_engine(rows)
    assert mixed is not None
    assert mixed["name"] == "mixed"
    assert mixed["engines"][0] == YARN_2X2
    assert {"name": "yarn", "nodes": 1, "containers_per_node": None, "container_mb": 1024} in mixed["engines"]


def test_a_job_name_keeps_the_engine_to_those_jobs() -> None:
    con = duckdb.connect()
    _store_tables(con)
    con.execute("UPDATE jobs SET name = 'other' WHERE job_id <> 'job_local1_0001'")
    rows = con.execute(load_sql("platform_engine"), {"job_name": "bench"}).fetchall()
    assert rows == [("local", None, None, None, 1)]


@pytest.mark.slow
def test_fit_from_a_store_of_real_yarn_history_records_yarn(fixtures_dir: Path, tmp_path: Path) -> None:
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    src = fixtures_dir / "linkedin-dr-elephant" / "history-done"
    store = Store(tmp_path / "store")
    ingest_paths([src], store)
    engine = profile_from_store(tmp_path / "store").cluster.get("engine")
    assert engine is not None
    assert engine["name"] in ("yarn", "mixed")
    first = engine if engine["name"] == "yarn" else engine["engines"][0]
    assert first["name"] == "yarn"
    assert first["container_mb"] == 1024  # mapreduce.map.memory.mb of its _conf.xml


def _mismatches(platform: LinearPlatform, cluster: Cluster) -> dict[str, list[str]]:
    """Each model's PlatformMismatchWarning messages for one prediction."""
    out = {}
    for name in core.models():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            core.get(name).predict(toy_profile(), platform, cluster, Dataset(2 * GB), JobSettings(reduces=4))
        out[name] = [str(w.message) for w in caught if issubclass(w.category, PlatformMismatchWarning)]
    return out


@pytest.mark.parametrize(
    ("engine", "cluster", "says"),
    [
        (YARN_2X2, Cluster(2, 2, 2), None),
        (YARN_2X2, Cluster(2, 2, 2, engine="yarn"), None),
        (YARN_2X2, Cluster(8, 2, 2), "YARN, 2 node(s) x 2 container(s) of 512 MiB"),
        (YARN_2X2, Cluster(2, 4, 4), "(2 node(s) x 4 map slot(s))"),
        # the mini cluster as its jobs are predicted: one host, 4 containers but the ApplicationMaster's
        (YARN_2X2, loopback_cluster(ClusterShape(2, 2, 512)), None),
        (YARN_2X2, Cluster(1, 4, 4), "(1 node(s) x 4 map slot(s))"),
        (YARN_2X2, Cluster(2, 2, 2, engine="local-hadoop"), "(local-hadoop, 2 node(s) x 2 map slot(s))"),
        (LOCAL, Cluster(1, 2, 2), None),
        (LOCAL, Cluster(4, 2, 2), "LocalJobRunner (local-hadoop, one node)"),
        (LOCAL, Cluster(1, 2, 2, engine="yarn"), "LocalJobRunner"),
        ({"name": "mixed", "engines": [LOCAL, YARN_2X2]}, Cluster(2, 2, 2), None),
        ({"name": "mixed", "engines": [LOCAL, YARN_2X2]}, Cluster(3, 2, 2), "several: LocalJobRunner"),
        ({"name": "yarn", "nodes": None, "containers_per_node": None, "container_mb": 1024}, Cluster(9, 3, 3), None),
    ],
)
def test_every_model_warns_once_of_a_cluster_unlike_the_platforms(
    engine: dict[str, Any], cluster: Cluster, says: str | None
) -> None:
    for name, messages in _mismatches(MeasuredPlatform(engine), cluster).items():
        if says is None:
            assert messages == [], name
        else:
            assert len(messages) == 1, (name, messages)
            assert says in messages[0]
            assert "\n" not in messages[0]


def test_a_platform_that_records_no_engine_is_not_judged() -> None:
    assert all(m == [] for m in _mismatches(LinearPlatform(), Cluster(64, 8, 8)).values())


def test_cli_predict_says_the_platform_was_measured_on_another_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from phaseline.cli import main

    profile, platform = toy_files(tmp_path, monkeypatch)
    cli_predict = __import__("phaseline.cli.predict", fromlist=["_load_platform"])
    monkeypatch.setattr(cli_predict, "_load_platform", lambda path: MeasuredPlatform(YARN_2X2))
    base = ["predict", "--profile", str(profile), "--platform", str(platform), "--format", "json"]
    same = CliRunner().invoke(main, [*base, "--nodes", "2", "--map-slots-per-node", "2", "--engine", "yarn"])
    assert same.exit_code == 0, same.output
    assert "warning" not in same.stderr
    other = CliRunner().invoke(main, [*base, "--nodes", "16"])
    assert other.exit_code == 0, other.output
    lines = [line for line in other.stderr.splitlines() if "measured on" in line]
    assert lines == [
        "warning: the platform model was measured on YARN, 2 node(s) x 2 container(s) of 512 MiB, not on the "
        "cluster predicted for (16 node(s) x 2 map slot(s)): its phase costs are carried over as measured"
    ]
    assert json.loads(other.stdout)[0]["seconds"] > 0


def test_a_mini_clusters_jobs_are_predicted_on_the_containers_its_application_master_leaves() -> None:
    cluster = loopback_cluster(ClusterShape(2, 2, 512))
    assert (cluster.nodes, cluster.map_slots, cluster.reduce_slots, cluster.engine) == (1, 3, 3, "yarn")
    assert cluster.cpus_per_node == os.cpu_count()  # one host: its NodeManagers share its cores
    assert ClusterShape(3, 4, 512).task_containers == 11
