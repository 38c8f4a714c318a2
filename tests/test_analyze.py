"""The main job on the bundled sample: the README's second command."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from phaseline.cli import main
from profiles.profile import JobProfile
from tests.conftest import REPO


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
