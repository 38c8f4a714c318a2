"""``phaseline doctor`` on real traces: the output contract, skipped heuristics, the config, --recommend."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.errors import ConfigError, NotFoundError
from phaseline.store import Store
from platform_model.model import PlatformModel, fit_platform
from platform_model.profile import profile_from_connection
from predict import core
from predict.edits import Edit, Scenario, apply_edits, parse_edit
from predict.recommend import (
    BACKTEST_JSON,
    KNOBS,
    MAP_OUTPUT_CODEC,
    Recommendation,
    backtest_error,
    finding_rows,
    search,
)
from profiles.doctor import (
    CONFIG_VERSION,
    Diagnosis,
    DoctorConfig,
    Heuristic,
    Severity,
    diagnose,
    diagnose_jobs,
    diagnose_together,
)
from profiles.extract import extract_profile
from tests.conftest import REPO

CONTRACT = ["job_id", "heuristic", "severity", "value", "threshold", "detail", "recommendation"]
MERGES_JOB = "job_local284279178_0001"  # sample_traces/bench-8mb-sel1.8-merges: io.sort.mb=1, sort factor 2


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("doctor") / "store"
    ingest_paths([REPO / "sample_traces"], Store(root))
    return root


def _doctor(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["doctor", *args])
    return result.exit_code, result.stdout, result.stderr


# -- the CLI ------------------------------------------------------------------------------------


def test_json_rows_have_exactly_the_contract_keys(sample_store: Path) -> None:
    code, out, err = _doctor("--store", str(sample_store), "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert rows
    assert all(list(r) == CONTRACT for r in rows)
    assert {r["severity"] for r in rows} <= {"None", "Low", "Moderate", "Severe", "Critical"}
    assert {r["job_id"] for r in rows} == {MERGES_JOB, "job_local1827494099_0001", "job_local1939662896_0001"}
    # the local runner logs no CPU time: the GC heuristics are skipped, each named on stderr with why
    assert f"skipped mapper_gc for {MERGES_JOB}: no mapper with GC_TIME_MILLIS and CPU_MILLISECONDS counters" in err


def test_the_sample_with_a_tiny_sort_buffer_and_factor_shows_its_spills_and_merges(sample_store: Path) -> None:
    code, out, _ = _doctor(MERGES_JOB, "--store", str(sample_store), "--format", "csv")
    assert code == 0
    rows = {r["heuristic"]: r for r in csv.DictReader(io.StringIO(out))}
    assert list(next(iter(rows.values()))) == CONTRACT
    # 3 spills per map (its log says so) with io.sort.mb=1, merged 2 at a time: one extra pass each
    assert (rows["map_spills"]["severity"], float(rows["map_spills"]["value"])) == ("Low", 3.0)
    assert (rows["merge_passes"]["severity"], float(rows["merge_passes"]["value"])) == ("Low", 1.0)
    assert "1 MB sort buffer" in rows["map_spills"]["detail"]


def test_failed_jobs_get_the_exception_and_a_reason_per_skipped_heuristic(tmp_path: Path, fixtures_dir: Path) -> None:
    # a Sleep job that failed (no input, no successful task) and a 2.4.0 job that failed in its maps
    hs = fixtures_dir / "apache-hadoop" / "mapreduce-client-hs"
    ingest_paths([*hs.glob("job_1393307629410_0001-*FAILED*.jhist"), hs / "job_2.4.0-FAILED.jhist"],
                 Store(tmp_path / "s"))  # fmt: skip
    code, out, err = _doctor("--store", str(tmp_path / "s"), "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert {(r["heuristic"], r["severity"]) for r in rows} == {("exceptions", "Critical")}
    assert any("java.lang.RuntimeException" in r["detail"] for r in rows)
    skipped = [line for line in err.splitlines() if line.startswith("skipped ")]
    assert len(skipped) == 2 * (len(Heuristic) - 1)
    assert "skipped mapper_speed for job_1393307629410_0001: no map read input" in err


def test_unknown_job_is_an_error_naming_it(sample_store: Path) -> None:
    code, _, err = _doctor("job_9_9999", "--store", str(sample_store))
    assert code == 1
    assert "job_9_9999" in err


def test_config_override_changes_the_grade(sample_store: Path, tmp_path: Path) -> None:
    config = tmp_path / "strict.toml"
    config.write_text("version = 1\n[map_spills]\nspills = [1.5, 2, 2.5, 3]\n")
    code, out, _ = _doctor(MERGES_JOB, "--store", str(sample_store), "--config", str(config), "--format", "json")
    assert code == 0
    spills = next(r for r in json.loads(out) if r["heuristic"] == "map_spills")
    assert (spills["severity"], spills["threshold"]) == ("Critical", "spills per map >= 1.5 / 2 / 2.5 / 3")


def test_recommend_needs_a_platform(sample_store: Path) -> None:
    code, _, err = _doctor("--store", str(sample_store), "--recommend")
    assert code == 2
    assert "--platform" in err


# -- the configuration --------------------------------------------------------------------------


def test_the_shipped_config_has_every_heuristic_at_the_current_version() -> None:
    config = DoctorConfig.default()
    assert config.version == CONFIG_VERSION
    assert set(config.params) == set(Heuristic)
    assert config.params[Heuristic.MAPPER_SPILL]["spill_ratio"] == (2.01, 2.2, 2.5, 3.0)  # Dr. Elephant's


def test_a_json_config_overrides_one_value(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"stragglers": {"k": 2}}))
    config = DoctorConfig.load(path)
    assert config.params[Heuristic.STRAGGLERS]["k"] == 2.0
    assert config.params[Heuristic.STRAGGLERS]["ratio"] == DoctorConfig.default().params[Heuristic.STRAGGLERS]["ratio"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[mapper_skw]\ndeviation = [1, 2, 3, 4]\n", "[mapper_skw]: no such heuristic"),
        ("[mapper_skew]\ndeviaton = [1, 2, 3, 4]\n", "[mapper_skew] deviaton: no such threshold"),
        ("[mapper_skew]\ndeviation = [1, 2, 3]\n", "[mapper_skew] deviation: [1, 2, 3] is neither a number nor"),
        ("[mapper_skew]\ndeviation = [1, 4, 2, 8]\n", "must rise (or fall) from Low to Critical"),
        ("version = 2\n", "version = 2; this phaseline reads version 1"),
        ("[mapper_skew\n", "not a TOML file"),
    ],
)
def test_a_bad_config_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"bad\.toml") as info:
        DoctorConfig.load(path)
    assert message in str(info.value)


def test_a_bad_config_on_the_cli_is_a_clean_error(sample_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[nope]\n")
    code, _, err = _doctor("--store", str(sample_store), "--config", str(path))
    assert code == 1
    assert "[nope]: no such heuristic" in err
    assert "Traceback" not in err


def test_diagnose_jobs_refuses_an_unknown_job(sample_store: Path) -> None:
    with pytest.raises(NotFoundError, match="job_x"):
        diagnose_jobs(Store(sample_store).connect(), ["job_x"])


def _same_grades(together: list[Diagnosis], alone: list[Diagnosis]) -> None:
    """The same diagnoses, but for the last bits of a value (an aggregate summed in another order)."""
    assert [d.job_id for d in together] == [d.job_id for d in alone]
    for t, a in zip(together, alone, strict=True):
        assert t.skipped == a.skipped
        assert [dataclasses.replace(f, value=None) for f in t.findings] == [
            dataclasses.replace(f, value=None) for f in a.findings
        ]
        assert [f.value is None for f in t.findings] == [f.value is None for f in a.findings]
        values = [(tf.value, af.value) for tf, af in zip(t.findings, a.findings, strict=True) if af.value is not None]
        assert [v for v, _ in values] == pytest.approx([v for _, v in values], rel=1e-9)


def test_jobs_graded_together_get_the_grades_each_gets_alone(tmp_path: Path, fixtures_dir: Path) -> None:
    # jobs of four sources with different data: 1.x histories, .jhist with conf, failed jobs, task logs
    paths = [REPO / "tests" / "data" / "history-0.18", fixtures_dir / "linkedin-dr-elephant" / "history-done",
             fixtures_dir / "apache-hadoop" / "mapreduce-client-hs", fixtures_dir / "splitlog-yarn-logs",
             REPO / "sample_traces"]  # fmt: skip
    ingest_paths(paths, Store(tmp_path / "store"))
    con = Store(tmp_path / "store").connect()
    jobs = [j for j, in con.execute("SELECT DISTINCT job_id FROM jobs ORDER BY job_id").fetchall()]
    assert len(jobs) >= 8
    alone = [diagnose(con, j) for j in jobs]
    assert sum(len(d.findings) for d in alone) >= 5 * len(jobs)  # graded, not all skipped
    _same_grades(diagnose_together(con, jobs), alone)
    _same_grades(diagnose_jobs(con), alone)  # every job of the store: graded together
    _same_grades(diagnose_jobs(con, jobs[:1]), alone[:1])  # one job: queried alone


# -- recommendations ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def platform(sample_store: Path) -> PlatformModel:
    con = Store(sample_store).connect()
    return fit_platform(profile_from_connection(con, source="sample", job_name="phaseline-bench"), skip_unfittable=True)


def test_recommendations_are_what_whatif_predicts_for_their_set_line(sample_store: Path, platform: PlatformModel) -> None:
    con = Store(sample_store).connect()
    diagnosis = diagnose(con, MERGES_JOB)
    profile = extract_profile(con, MERGES_JOB)
    base = Scenario.for_profile(profile, core.Cluster(1, 2, 1))
    found = search(diagnosis, profile, platform, base, min_severity=Severity.LOW).found
    assert found, "the spills and merge passes (Low) have knobs: io.sort.mb, io.sort.factor"
    assert len({round(r.predicted_s, 3) for r in found}) == len(found)  # distinct choices, best first
    assert [r.predicted_s for r in found] == sorted(r.predicted_s for r in found)
    best = found[0]
    assert best.saving_s > 0
    assert best.predicted_s < best.baseline_s
    assert set(best.heuristics) <= {Heuristic.MAP_SPILLS, Heuristic.MERGE_PASSES}
    # the --set line, pasted into whatif, is priced the same
    edits = [parse_edit(part.strip()) for part in best.set_line.split("--set") if part.strip()]
    again = apply_edits(base, edits, profile)
    seconds = core.get("herodotou").predict(profile, platform, again.cluster, again.dataset, again.settings).seconds
    assert seconds == pytest.approx(best.predicted_s)
    assert best.error == backtest_error("herodotou")
    assert best.error is not None
    assert 0 < best.error.median < 1


def test_no_recommendation_without_a_finding_that_bad(sample_store: Path, platform: PlatformModel) -> None:
    con = Store(sample_store).connect()
    profile = extract_profile(con, MERGES_JOB)
    base = Scenario.for_profile(profile, core.Cluster(1, 2, 1))
    assert search(diagnose(con, MERGES_JOB), profile, platform, base, min_severity=Severity.CRITICAL).found == []


def test_cli_recommend_prints_a_set_line(sample_store: Path, platform: PlatformModel, tmp_path: Path) -> None:
    path = tmp_path / "platform.json"
    platform.save(path)
    code, out, err = _doctor(MERGES_JOB, "--store", str(sample_store), "--recommend", "--platform", str(path),
                             "--min-severity", "Low", "--reduce-slots-per-node", "1", "--format", "json")  # fmt: skip
    assert code == 0, err
    rows = {r["heuristic"]: r for r in json.loads(out)}  # one array, the contract's keys
    assert all(list(r) == CONTRACT for r in rows.values())
    # the flagged findings' recommendation is the search's answer, best first
    best = rows["map_spills"]["recommendation"].split("; or ")[0]
    assert best.startswith("mapreduce.task.io.sort")
    assert "phaseline whatif --set mapreduce.task.io.sort" in best
    # beside it, the model's backtested error as benchmarks/BACKTEST.json has it
    (herodotou,) = [r for r in json.loads(BACKTEST_JSON.read_text())["summary"] if r["model"] == "herodotou"]
    assert f"backtested error {herodotou['median_abs_error']:.1%}".replace("%", " %") in best
    assert rows["mapper_skew"]["recommendation"].startswith("even out the input")  # not searched: as it was


def test_cli_recommend_shows_the_error_of_the_users_own_backtest(
    sample_store: Path, platform: PlatformModel, tmp_path: Path
) -> None:
    # a backtest of the user's cluster, where herodotou was 20 % slow in 10 cases and 50 % in 1
    rows = [{"model": "herodotou", "predicted_s": 1.2, "measured_s": 1.0}] * 10
    rows.append({"model": "herodotou", "predicted_s": 1.5, "measured_s": 1.0})
    backtest = tmp_path / "bt.json"
    backtest.write_text(json.dumps(rows))
    path = tmp_path / "platform.json"
    platform.save(path)
    args = (MERGES_JOB, "--store", str(sample_store), "--recommend", "--platform", str(path),
            "--min-severity", "Low", "--reduce-slots-per-node", "1", "--format", "json")  # fmt: skip
    code, out, err = _doctor(*args, "--calibration", str(backtest))
    assert code == 0, err
    best = {r["heuristic"]: r for r in json.loads(out)}["map_spills"]["recommendation"].split("; or ")[0]
    assert "backtested error 20.0 % (worst 50.0 %)" in best
    code, _, err = _doctor(MERGES_JOB, "--store", str(sample_store), "--calibration", str(backtest))
    assert code != 0
    assert "--calibration goes with --recommend" in err


def test_maps_of_a_few_kb_get_larger_split_sizes_to_try(sample_store: Path) -> None:
    # the candidates had a 1 MiB floor for all sizes: splits of 32 kB (512 short maps) got none at all
    con = Store(sample_store).connect()
    profile = extract_profile(con, MERGES_JOB)
    base = Scenario.for_profile(profile, core.Cluster(1, 2, 1))
    tiny = dataclasses.replace(base, dataset=dataclasses.replace(base.dataset, split_bytes=32768.0))
    ((key, candidates),) = KNOBS[Heuristic.MAPPER_TIME]
    assert key == "mapreduce.input.fileinputformat.split.maxsize"
    # (the splits' average size: the input cut into whole splits of at most 32 kB)
    assert [round(int(c) / 32768, 2) for c in candidates(profile, tiny)] == [2, 4, 8, 16]  # none below 1 MiB
    large = dataclasses.replace(base, dataset=dataclasses.replace(base.dataset, split_bytes=8.0 * 2**20))
    assert [round(int(c) / 2**20, 1) for c in candidates(profile, large)] == [2, 4, 16, 32, 64, 128]


def test_compressing_map_output_is_run_with_the_fast_codec_the_model_priced() -> None:
    # the model prices compression at a fast codec's cost; Hadoop's default codec (zlib) is not that
    rec = Recommendation("job_1", (Heuristic.MAP_OUTPUT_COMPRESSION,),
                         (Edit("mapreduce.map.output.compress", "true"), Edit("mapreduce.job.reduces", "2")),
                         "herodotou", 5.0, 4.0, None)  # fmt: skip
    assert rec.companions == (Edit("mapreduce.map.output.compress.codec", MAP_OUTPUT_CODEC),)
    assert rec.hadoop_settings == {"mapreduce.map.output.compress": "true", "mapreduce.job.reduces": "2",
                                   "mapreduce.map.output.compress.codec": MAP_OUTPUT_CODEC}  # fmt: skip
    # the --set line stays what whatif prices (it knows no codec); the summary says what to run it with
    assert rec.set_line == "--set mapreduce.map.output.compress=true --set mapreduce.job.reduces=2"
    assert f"(run it with mapreduce.map.output.compress.codec={MAP_OUTPUT_CODEC})" in rec.summary
    assert rec.to_dict()["run_with"] == {"mapreduce.map.output.compress.codec": MAP_OUTPUT_CODEC}
    plain = dataclasses.replace(rec, edits=(Edit("mapreduce.job.reduces", "2"),))
    assert (plain.companions, "run it with" in plain.summary) == ((), False)


@pytest.mark.parametrize(("ms_per_byte", "pays"), [(1e-4, True), (1e-7, False)])
def test_a_setting_the_model_predicts_no_faster_is_named_not_recommended(
    sample_store: Path, tmp_path: Path, ms_per_byte: float, pays: bool
) -> None:
    """Compressing map output pays where the shuffle moves bytes slowly and only costs the codec's CPU where it
    moves them at memory speed (predict.herodotou_stats): the search recommends it in the first case; in the
    second the finding says the model's verdict instead of the heuristic's advice alone."""
    from tests.predict.doubles import LinearPlatform

    path = tmp_path / "c.json"
    path.write_text(json.dumps({"map_output_compression": {"io_share": [0, 0, 0, 0], "output_gb": [0, 0, 0, 0]}}))
    con = Store(sample_store).connect()
    diagnosis = diagnose(con, MERGES_JOB, DoctorConfig.load(path))
    (finding,) = [f for f in diagnosis.findings if f.heuristic == Heuristic.MAP_OUTPUT_COMPRESSION]
    assert finding.severity == Severity.CRITICAL
    profile = extract_profile(con, MERGES_JOB)
    base = Scenario.for_profile(profile, core.Cluster(1, 2, 1))
    plat = LinearPlatform(coef={**LinearPlatform().coef, "shuffle": (200.0, ms_per_byte)})
    result = search(diagnosis, profile, plat, base, min_severity=Severity.CRITICAL)
    compressing = [r for r in result.found if Heuristic.MAP_OUTPUT_COMPRESSION in r.heuristics]
    assert bool(compressing) is pays
    rows = {r["heuristic"]: r for r in finding_rows(diagnosis, result)}
    said = rows["map_output_compression"]["recommendation"]
    if pays:
        assert Heuristic.MAP_OUTPUT_COMPRESSION not in result.passed_over
        assert compressing[0].saving_s > 0
        assert said.startswith("mapreduce.map.output.compress=true")
        assert "saving" in said
    else:
        verdict = result.passed_over[Heuristic.MAP_OUTPUT_COMPRESSION]
        assert verdict.saving_s <= 0
        assert verdict.edits == (Edit("mapreduce.map.output.compress", "true"),)
        assert said.startswith(f"mapreduce.map.output.compress=true: predicted {verdict.predicted_s:.2f} s against the "
                               f"job's {verdict.baseline_s:.2f} s by herodotou, no faster here, so not recommended")  # fmt: skip
