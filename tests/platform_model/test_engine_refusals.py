"""What the local engine refuses, and how a run fails: invalid jobs and run directories, no Java, a failed job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from phaseline.cli import main
from phaseline.errors import EngineError
from platform_model.engine import EngineJob, run_engine


@pytest.mark.slow
def test_failed_job_raises_with_log_tail_and_keeps_run_json(tmp_path: Path) -> None:
    # A spill threshold MapTask refuses ("Invalid mapreduce.map.sort.spill.percent") fails the job in the
    # JVM.  (A raw setting that shadows an option, such as a negative selectivity, is refused before.)
    with pytest.raises(EngineError, match=r"FAILED(.|\n)*job\.log"):
        run_engine(
            EngineJob(
                input_mb=0.1,
                selectivity=1.0,
                maps=1,
                reduces=1,
                hadoop_conf={"mapreduce.map.sort.spill.percent": "2.0"},
            ),
            tmp_path / "bad",
        )
    doc = json.loads((tmp_path / "bad" / "run.json").read_text())
    assert doc["status"] == "FAILED"
    with pytest.raises(EngineError, match=r"selectivity must be a number >= 0, got -1.0"):
        run_engine(EngineJob(input_mb=0.1, selectivity=1.0, maps=1, reduces=1,
                             hadoop_conf={"phaseline.bench.selectivity": "-1"}), tmp_path / "refused")  # fmt: skip


def test_missing_java_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PHASELINE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(EngineError, match=r"not found on PATH; install a JDK"):
        run_engine(EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=1), tmp_path / "run")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"input_mb": 0}, "input_mb"),
        ({"selectivity": -0.5}, "selectivity"),
        ({"maps": 0}, "maps"),
        ({"reduces": -1}, "reduces"),
        ({"sort_factor": 1}, "sort_factor"),
        ({"main_class": "x.Y"}, "jar and main_class"),
        ({"warmup_mb": -1.0}, "warmup_mb"),
        ({"warmup_mb": 1.0, "warmup_app": True}, "warmup_app needs a user's job"),
        ({"input_files": 2}, "input_files must be 1 to maps"),
        ({"input_files": 0}, "input_files must be 1 to maps"),
    ],
)
def test_invalid_jobs_are_refused(kwargs: dict[str, object], message: str) -> None:
    base: dict[str, object] = {"input_mb": 1.0, "selectivity": 1.0, "maps": 1, "reduces": 1}
    with pytest.raises(EngineError, match=message):
        EngineJob(**{**base, **kwargs})  # type: ignore[arg-type]


def test_run_dir_must_be_new(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    with pytest.raises(EngineError, match="not empty"):
        run_engine(EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=1), tmp_path / "busy")


def test_cli_rejects_args_without_jar(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["engine", "run", "--out", str(tmp_path / "r"), "--", "x"])
    assert res.exit_code != 0
    assert "--jar" in res.output


def test_cli_rejects_malformed_define(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["engine", "run", "--out", str(tmp_path / "r"), "-D", "no-equals-sign"])
    assert res.exit_code == 2  # a usage error (it had been exit 1)
    assert "Invalid value for -D: expects KEY=VALUE" in res.output
    assert not (tmp_path / "r").exists()


def test_cli_rejects_app_warm_up_without_a_jar(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        main, ["engine", "run", "--out", str(tmp_path / "r"), "--warmup-mb", "1", "--warmup-app"]
    )
    assert res.exit_code == 2  # a usage error, naming the options
    assert "--warmup-app needs a user's job (--jar JAR --class MAIN)" in res.output
    assert not (tmp_path / "r").exists()


def test_a_file_where_a_run_directory_goes_is_an_engine_error(tmp_path: Path) -> None:
    # a file in its place had escaped as NotADirectoryError and stopped a whole plan's runs
    (tmp_path / "run").write_text("not a directory")
    with pytest.raises(EngineError, match=r"run is not a directory; give --out a new directory"):
        run_engine(EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=0), tmp_path / "run")
