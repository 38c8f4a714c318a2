"""The main job on the bundled sample: the README's second command."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.errors import ProfileError
from phaseline.store import Store
from profiles import queries as q
from profiles.analyze import analyze_job
from profiles.extract import extract_profile
from profiles.profile import JobProfile
from profiles.report import write_report
from profiles.timeline_plot import write_timeline
from tests.conftest import FIXTURES, REPO


def test_analyze_bundled_sample(tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = CliRunner().invoke(
        main,
        ["analyze", str(REPO / "sample_traces"), "--store", str(tmp_path / "store"), "--out", str(out), "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 3
    for row in rows:
        assert row["status"] == "SUCCEEDED"
        assert row["name"] == "phaseline-bench"
        assert row["maps"] >= 4
        assert row["reduces"] >= 1
        assert row["duration_s"] > 0
        assert row["top_phases"]
        job_dir = out / row["job_id"]
        html = (job_dir / "report.html").read_text()
        assert row["job_id"] in html
        assert (job_dir / "timeline.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
        trace = json.loads((job_dir / "trace.json").read_text())
        assert trace["traceEvents"]
        assert row["profile_error"] is None
        profile = JobProfile.load(job_dir / "profile.json")
        assert profile.source.job_ids == (row["job_id"],)
    # `phaseline jobs` gives each job the same duration (submit to finish)
    listed = CliRunner().invoke(main, ["jobs", "--store", str(tmp_path / "store"), "--format", "json"])
    durations = {j["job_id"]: j["duration_s"] for j in json.loads(listed.stdout)}
    assert durations == {row["job_id"]: row["duration_s"] for row in rows}


def test_analyze_says_why_a_job_got_no_profile(tmp_path: Path, fixtures_dir: Path) -> None:
    # Real Hadoop 2 histories whose maps report no input counters: the report is written, the profile
    # is not, and stderr says why (the JSON row carries the same reason).
    result = CliRunner().invoke(
        main,
        ["analyze", str(fixtures_dir / "apache-hadoop" / "mapreduce-client-hs"), "--store", str(tmp_path / "s"),
         "--out", str(tmp_path / "r"), "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    failed = {r["job_id"]: r["profile_error"] for r in json.loads(result.stdout) if r["profile_error"]}
    assert failed
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning: no profile.json for ")]
    assert len(warned) == len(failed)
    for job_id, error in failed.items():
        assert not (tmp_path / "r" / job_id / "profile.json").exists()
        assert (tmp_path / "r" / job_id / "report.html").exists()
        assert f"warning: no profile.json for {job_id}: {error.removeprefix(job_id + ': ')}" in warned


def test_analyze_names_the_files_it_could_not_read_whole(tmp_path: Path, fixtures_dir: Path) -> None:
    # It said only "2 files (1 quarantined)": which one, and why, was left to a second command
    src = fixtures_dir / "linkedin-dr-elephant" / "history-done"
    jhist = next(src.glob("job_1526555215992_0001-*.jhist"))
    lines = jhist.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "cut.jhist").write_bytes(b"".join(lines[: len(lines) // 2]))
    (folder / "junk.jhist").write_bytes(lines[0] + lines[1] + b"\x00 garbage\n[1]\n")
    result = CliRunner().invoke(main, ["analyze", str(folder), "--store", str(tmp_path / "s"),
                                       "--out", str(tmp_path / "r"), "--format", "json"])  # fmt: skip
    assert result.exit_code == 3, result.output
    named = [line.split() for line in result.stderr.splitlines() if line.startswith(("partial", "quarantined"))]
    assert sorted((status, Path(path).name) for status, path in named) == [
        ("partial", "cut.jhist"), ("quarantined", "junk.jhist")]
    assert "malformed event line" in result.stderr
    assert "2 files (1 quarantined)" in result.stderr


def test_analyze_with_workers_writes_what_one_process_writes(tmp_path: Path) -> None:
    outputs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"report-{workers}"
        result = CliRunner().invoke(
            main,
            ["analyze", str(REPO / "sample_traces"), "--store", str(tmp_path / f"store-{workers}"),
             "--out", str(out), "--format", "json", "--workers", workers],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)
        for row in rows:
            row["report"] = Path(row["report"]).relative_to(out).as_posix()
        files = {
            p.relative_to(out).as_posix(): p.read_text()
            for p in sorted(out.rglob("*"))
            if p.suffix in (".json", ".svg")
        }
        outputs[workers] = (rows, files)
    rows_1, files_1 = outputs["1"]
    rows_2, files_2 = outputs["2"]
    assert len(rows_1) == 3
    assert rows_2 == rows_1
    assert files_2.keys() == files_1.keys()
    for name in files_1:
        if name.endswith("profile.json"):  # its provenance names the store
            a, b = json.loads(files_1[name]), json.loads(files_2[name])
            a.pop("source", None), b.pop("source", None)
            assert a == b, name
        else:
            assert files_2[name] == files_1[name], name


# the sample job's profile says its one-time cost rests on 4 maps (a warning the CLI shows): not this test's
@pytest.mark.filterwarnings("default::phaseline.errors.DataQualityWarning")
def test_analyze_job_queries_once_and_writes_what_the_writers_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # analyze_job queries a job's summary, attempts and phases once and passes them to the profile,
    # the report, the critical path and both timeline files; each output is the one its writer gives
    # when it queries for itself (a job with a profile, and one whose profile cannot be extracted).
    store = Store(tmp_path / "store")
    ingest_paths([REPO / "sample_traces", FIXTURES / "apache-hadoop" / "mapreduce-client-hs"], store)
    con = store.connect()
    sample = con.execute("SELECT min(job_id) FROM jobs WHERE name = 'phaseline-bench'").fetchone()
    # a failed job, none of whose maps counts its input (a Sleep job, whose maps make their records, is
    # profiled as a generator: profiles.generated_input)
    unprofiled = con.execute(
        "SELECT min(job_id) FROM jobs WHERE name IS DISTINCT FROM 'phaseline-bench' AND status = 'FAILED'"
    ).fetchone()
    assert sample
    assert unprofiled
    real_frame = q.frame
    counts: Counter[str] = Counter()

    def counting(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> pd.DataFrame:
        counts[name] += 1
        return real_frame(con, name, **params)

    for job_id in (sample[0], unprofiled[0]):
        counts.clear()
        with monkeypatch.context() as m:
            m.setattr(q, "frame", counting)
            got = analyze_job(con, job_id, tmp_path / "out")
        for concept in (q.Concept.JOB_SUMMARY, q.Concept.TIMELINE, q.Concept.PHASES):
            assert counts[concept] == 1, (job_id, concept, counts)
        solo = tmp_path / "solo" / got.out_dir.name
        solo.mkdir(parents=True)
        write_report(con, job_id, solo / "report.html")
        write_timeline(con, job_id, solo / "timeline.svg")
        write_timeline(con, job_id, solo / "trace.json")
        for name in ("report.html", "timeline.svg", "trace.json"):
            assert (got.out_dir / name).read_bytes() == (solo / name).read_bytes(), (job_id, name)
        expected: str | None = None
        try:
            expected = extract_profile(con, job_id).to_json()
        except ProfileError as exc:
            error = str(exc)
        if expected is None:
            assert got.profile_error == error
            assert not (got.out_dir / "profile.json").exists()
        else:
            assert got.profile_error is None
            assert JobProfile.load(got.out_dir / "profile.json").to_json() == expected
    assert got.profile_error is not None  # the second job is the one without a profile


def test_analyze_rows_agree_with_jobs_and_the_report(tmp_path: Path, fixtures_dir: Path) -> None:
    # Hadoop 0.20 JobTracker history: job 0001 was KILLED before any task ran (its record says 1 map,
    # 1 reduce); job 0004 has 66 killed and 3 failed map attempts beside its successful ones.
    logs = fixtures_dir / "apache-hadoop-mapreduce" / "rumen-small-trace-test" / "sample-job-tracker-logs.gz"
    store = tmp_path / "store"
    result = CliRunner().invoke(
        main, ["analyze", str(logs), "--store", str(store), "--out", str(tmp_path / "r"), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    rows = {r["job_id"]: r for r in json.loads(result.stdout)}
    listed = CliRunner().invoke(main, ["jobs", "--store", str(store), "--format", "json"])
    for job in json.loads(listed.stdout):  # maps and reduces are the job's totals, as `jobs` lists them
        assert (rows[job["job_id"]]["maps"], rows[job["job_id"]]["reduces"]) == (job["total_maps"], job["total_reduces"])
    assert (rows["job_200904211745_0001"]["maps"], rows["job_200904211745_0001"]["reduces"]) == (1, 1)
    # top_phases are shares of the successful attempts' task-thread time, as the report's breakdown
    con = Store(store).connect()
    ph = q.phases(con, "job_200904211745_0004")
    assert set(ph["status"]) > {"SUCCEEDED"}
    ok = ph[(ph["status"] == "SUCCEEDED") & (ph["lane"] == "main")].groupby("phase")["dur_ms"].sum()
    expected = ", ".join(f"{name} {100 * ms / ok.sum():.0f}%" for name, ms in ok.sort_values(ascending=False).head(3).items())
    assert rows["job_200904211745_0004"]["top_phases"] == expected
    # and as numbers, every phase: a script need not parse the text
    shares = rows["job_200904211745_0004"]["phase_shares"]
    assert list(shares) == list(ok.sort_values(ascending=False, kind="stable").index)
    assert shares == {name: pytest.approx(ms / ok.sum(), abs=5e-5) for name, ms in ok.items()}
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-3)


def test_analyze_table_leaves_missing_values_empty(tmp_path: Path, fixtures_dir: Path) -> None:
    # a .jhist cut before JOB_FINISHED has no status: an empty cell, as in `phaseline jobs`, not "None"
    src = fixtures_dir / "apache-hadoop" / "mapreduce-client-jobclient" / "job_1329348432655_0001-10.jhist"
    cut = tmp_path / src.name
    cut.write_bytes(src.read_bytes()[:20_000])
    result = CliRunner().invoke(
        main, ["analyze", str(cut), "--store", str(tmp_path / "s"), "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
    assert "job_1329348432655_0001" in result.stdout
    assert "None" not in result.stdout
    assert "<NA>" not in result.stdout
    csv = CliRunner().invoke(main, ["jobs", "--store", str(tmp_path / "s"), "--format", "csv"])
    assert "None" not in csv.stdout


def test_a_csv_of_no_jobs_still_has_its_header(tmp_path: Path) -> None:
    # Files that hold no job: the CSV had been an empty line (the columns came from the first row).
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "notes.txt").write_text("nothing phaseline reads\n")
    result = CliRunner().invoke(
        main, ["analyze", str(tmp_path / "in"), "--store", str(tmp_path / "s"), "--out", str(tmp_path / "r"),
               "--format", "csv"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "job_id,name,status,duration_s,maps,reduces,top_phases,worst_severity,report,profile_error\n"
    )
