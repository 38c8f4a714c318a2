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
