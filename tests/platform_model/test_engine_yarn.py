"""The YARN engine: a mini YARN cluster's run directory ingests as a cluster's does; bad input; no leftovers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from oracle_util import (
    actual_from_phaseline,
    compare_with_hadoop,
    expected_from_hadoop,
    hadoop_parse,
    phaseline_rows,
)

from phaseline.cli import main
from phaseline.errors import EngineError
from platform_model.engine import reaper
from platform_model.engine.yarn import ClusterShape, YarnCluster, engine_record

ROOT = Path(__file__).resolve().parents[2]
#: A real .jhist of the YARN engine with speculation on (tests/data/yarn/README.md): it holds a
#: speculative attempt killed before it started.
SPECULATED = next((ROOT / "tests" / "data" / "yarn").glob("*.jhist"))
NEVER_STARTED = "attempt_1795892053164_0001_m_000007_1"


def test_shape_refuses_too_little_memory_and_no_slots() -> None:
    with pytest.raises(EngineError, match="too little memory"):
        ClusterShape(2, 2, 128)
    with pytest.raises(EngineError, match=">= 1 node"):
        ClusterShape(0, 2, 512)
    assert engine_record(ClusterShape(2, 3, 512)) == {"name": "yarn", "nodes": 2, "containers_per_node": 3,
                                                      "container_mb": 512}  # fmt: skip
    assert engine_record(None) == {"name": "local-hadoop"}
    with pytest.raises(EngineError, match="port must be 1-65535"):
        YarnCluster(ClusterShape(), rm_port=70000)


def test_cluster_options_go_with_engine_yarn(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["engine", "run", "--out", str(tmp_path / "r"), "--nodes", "3"])
    assert result.exit_code == 2
    assert "--nodes goes with --engine yarn" in result.output


def test_no_jars_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PHASELINE_CACHE", str(tmp_path / "cache"))
    result = CliRunner().invoke(main, ["engine", "run", "--engine", "yarn", "--out", str(tmp_path / "r")])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "phaseline engine install-yarn" in lines[0]
    assert not (tmp_path / "r").exists()


@pytest.fixture(scope="module")
def yarn_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One cluster (2 NodeManagers x 2 containers), one small job on it: a backtest application
    submitted from its jar (the driver loads from the jar, as ``hadoop jar`` loads it)."""
    from platform_model.engine import EngineJob
    from platform_model.engine.yarn_jars import install_yarn
    from predict.backtest_suite import app_jar

    install_yarn()  # fetched on first use (Maven), kept in the cache
    out = tmp_path_factory.mktemp("yarn") / "run"
    with YarnCluster(ClusterShape(2, 2, 512)) as cluster:
        # Speculation off: an attempt killed before it started ("Speculation: ... succeeded first!") is
        # kept by phaseline's reader and dropped by Hadoop's parser, a difference of its own (reported).
        no_speculation = {"mapreduce.map.speculative": "false", "mapreduce.reduce.speculative": "false"}
        job = EngineJob(input_mb=4.0, selectivity=1.0, maps=4, reduces=2, hadoop_conf=no_speculation, jar=app_jar(),
                        main_class="phaseline.apps.Sort", args=("{input}", "{output}", "2"))  # fmt: skip
        run = cluster.run(job, out)
        info = dict(cluster.info)
        work = cluster.work
    return {"run": run, "out": out, "info": info, "work": work}


@pytest.mark.slow
def test_yarn_run_ingests_like_a_clusters(yarn_run: dict[str, Any], tmp_path: Path) -> None:
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    run, out = yarn_run["run"], yarn_run["out"]
    assert run.status == "SUCCEEDED"
    assert run.counters["org.apache.hadoop.mapreduce.TaskCounter"]["MAP_INPUT_RECORDS"] == round(4 * 2**20 / 100)
    jhist = list(out.glob(f"{run.job_id}-*.jhist"))
    assert len(jhist) == 1
    assert (out / f"{run.job_id}_conf.xml").is_file()
    log = run.log_path.read_text()
    assert log.startswith("Container: container_")
    assert "End of LogType:syslog" in log
    assert not (out / "input").exists()
    assert not (out / "output").exists()
    store = Store(tmp_path / "store")
    ingest_paths([out], store)
    con = store.connect()
    assert con.execute("SELECT status, total_maps, total_reduces FROM jobs WHERE job_id = ?",
                       [run.job_id]).fetchall() == [("SUCCEEDED", 4, 2)]  # fmt: skip
    kinds = dict(con.execute("SELECT task_type, count(*) FROM tasks WHERE job_id = ? GROUP BY 1",
                             [run.job_id]).fetchall())  # fmt: skip
    assert kinds == {"MAP": 4, "REDUCE": 2}
    # the shape asked for: 2 x 2 containers, one of them the ApplicationMaster's, so at most 3 tasks at once
    spans = con.execute("SELECT start_ms, finish_ms FROM attempts WHERE job_id = ? AND start_ms IS NOT NULL",
                        [run.job_id]).fetchall()  # fmt: skip
    edges = sorted([(start, 1) for start, _ in spans] + [(finish, -1) for _, finish in spans], key=lambda e: (e[0], e[1]))
    running = [sum(step for _, step in edges[: i + 1]) for i in range(len(edges))]
    assert max(running) <= 3
    hosts = con.execute("SELECT count(DISTINCT host) FROM attempts WHERE job_id = ?", [run.job_id]).fetchone()
    assert hosts is not None
    assert hosts[0] >= 1
    # the cluster's work directory, and every process naming it, is gone
    assert yarn_run["work"] is not None
    assert not Path(yarn_run["work"]).exists()
    assert reaper.marked_pids(str(yarn_run["work"])) == []


@pytest.mark.slow
def test_yarn_jhist_equals_hadoops_parse(yarn_run: dict[str, Any]) -> None:
    (jhist,) = yarn_run["out"].glob("*.jhist")
    parsed = hadoop_parse([jhist])[str(jhist)]
    assert parsed["parse_exception"] is None
    compare_with_hadoop(jhist, parsed)


@pytest.mark.slow
def test_a_speculated_jhist_agrees_with_hadoops_parse() -> None:
    parsed = hadoop_parse([SPECULATED])[str(SPECULATED)]
    assert parsed["parse_exception"] is None
    expected = expected_from_hadoop(SPECULATED, parsed)
    rows = phaseline_rows(SPECULATED)[0]
    actual = actual_from_phaseline(rows)
    # Hadoop 3.5.0's JobHistoryParser.handleTaskAttemptFailedEvent drops a MAP_ATTEMPT_KILLED whose
    # attempt no MAP_ATTEMPT_STARTED began (a speculative attempt killed when its twin succeeded
    # first); so does the attempts table, and the raw event stays in events
    assert NEVER_STARTED not in expected["attempts"]
    assert NEVER_STARTED not in actual["attempts"]
    assert any(NEVER_STARTED in str(e.get("payload", e)) for e in rows["events"])
    assert actual["attempts"] == expected["attempts"]
    assert actual["tasks"] == expected["tasks"]
    assert actual["jobs"] == expected["jobs"]


@pytest.mark.slow
def test_killed_run_leaves_no_cluster_process(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "phaseline", "engine", "run", "--engine", "yarn", "--nodes", "1",
           "--input-mb", "64", "--maps", "8", "--out", str(tmp_path / "run")]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not any(b"YarnChild" in _cmdline(pid) for pid in reaper.marked_pids(str(tmp_path))):
            assert proc.poll() is None, "the run ended before a task container started"
            assert time.monotonic() < deadline, "no task container started"
            time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and the cluster's JVM, mid-job
        proc.wait()
    deadline = time.monotonic() + 60
    while (left := [pid for pid in reaper.marked_pids(str(tmp_path)) if b"java" in _cmdline(pid)]):
        assert time.monotonic() < deadline, f"cluster processes survived: {left}"
        time.sleep(0.5)
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    assert str(tmp_path) not in "\n".join(line for line in out.splitlines() if "java" in line)


@pytest.mark.slow
def test_a_port_in_use_stops_the_start_with_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from platform_model.engine.yarn_jars import install_yarn

    install_yarn()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the cluster's work directory, under tmp_path
    with socket.socket() as taken:
        taken.bind(("", 0))  # every address: the ResourceManager's host name's too
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(EngineError) as err:
            YarnCluster(ClusterShape(1, 1, 512), rm_port=port).start()
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("the YARN cluster did not start: a port is in use")
    assert f":{port}]" in message  # Hadoop's "Problem binding to [host:port]"
    assert [pid for pid in reaper.marked_pids(str(tmp_path)) if b"java" in _cmdline(pid)] == []
    assert list(tmp_path.glob("phaseline-yarn-*")) == []  # its work directory removed


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
