"""The doctor where people look: the report's findings section and ``analyze``'s index.html (headless Chromium)."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from phaseline.store import Store
from profiles.analyze import analyze
from profiles.doctor import Severity, diagnose
from profiles.index_page import IndexRow, render_index
from profiles.report import render_report
from tests.conftest import REPO
from tests.profiles.profiles_doubles import ATTEMPTS, CONF, COUNTERS, JOB, JOBS, make_con

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="needs Debian's chromium package (apt-get install chromium); CI installs it and never skips",
)


def _dump_dom(url: str, tmp_path: Path) -> str:
    assert CHROMIUM is not None
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-profile'}",
         "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_report_has_the_findings_worst_first_with_badges() -> None:
    con = make_con({"attempts": ATTEMPTS, "counters": COUNTERS, "jobs": JOBS, "conf": CONF})
    diagnosis = diagnose(con, JOB)
    page = render_report(con, JOB, diagnosis=diagnosis)
    assert '<section id="findings">' in page
    assert '<a href="#findings">Findings</a>' in page
    section = page[page.index('<section id="findings">') : page.index('<section id="timeline">')]
    badges = re.findall(r'<span class="sev sev-(\w+)">', section)
    worst = diagnosis.worst.label.lower()
    assert badges[0] == worst  # the "Worst:" note
    graded = list(badges[1:])
    order = [s.label.lower() for s in sorted(Severity, reverse=True)]
    assert graded == sorted(graded, key=order.index)  # worst first
    assert len(graded) == len(diagnosis.findings)
    for skipped in diagnosis.skipped:  # each ungraded heuristic is named with why
        assert f"<li>{skipped.heuristic}: {html.escape(skipped.reason)}</li>" in section


def _row(job: str, seconds: float | None, worst: Severity) -> IndexRow:
    return IndexRow(job, f"<b>{job}</b>", "SUCCEEDED", seconds, worst, int(worst), f"{job}/report.html")


def test_index_orders_by_duration_and_by_severity_and_escapes() -> None:
    page = render_index([_row("a", 10.0, Severity.LOW), _row("b", 30.0, Severity.NONE),
                         _row("c", 20.0, Severity.CRITICAL), _row("d", None, Severity.CRITICAL)])  # fmt: skip
    by_severity = page[page.index('id="by-severity"') : page.index('id="by-duration"')]
    by_duration = page[page.index('id="by-duration"') :]
    assert re.findall(r'<a href="(\w)/report\.html">', by_duration) == ["b", "c", "a", "d"]
    assert re.findall(r'<a href="(\w)/report\.html">', by_severity) == ["c", "d", "a", "b"]
    assert "<b>a</b>" not in page
    assert "&lt;b&gt;a&lt;/b&gt;" in page
    assert "<script" not in page.lower()


@pytest.mark.slow
@needs_chromium
# the sample's first run (4 maps on one slot) says its one-time cost rests on thin evidence: shown, not raised
@pytest.mark.filterwarnings("default::phaseline.errors.DataQualityWarning")
def test_analyze_index_is_sorted_and_its_links_open_the_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = analyze([REPO / "sample_traces"], Store(tmp_path / "store"), out)
    index = out / "index.html"
    # the severity order, as its heading's link shows it (the URL fragment the click sets)
    dom = _dump_dom(index.as_uri() + "#by-severity", tmp_path)
    table = dom[dom.index('id="by-severity"') : dom.index('id="by-duration"')]
    links = re.findall(r'<tr class="job"><td><a href="([^"]+)">([^<]+)</a>', table)
    jobs = {j.job_id: j for j in result.jobs}
    assert [job for _, job in links] == [
        j.job_id for j in sorted(result.jobs, key=lambda j: (-j.worst_severity, -(j.duration_s or -1), j.job_id))
    ]
    assert len(links) == len(jobs) == 3
    # each link opens that job's report, whose findings carry the index's worst severity
    for href, job in links:
        report = _dump_dom((out / href).as_uri(), tmp_path)
        assert f"({job})</h1>" in report
        findings = report[report.index('<section id="findings">') :]
        assert f'Worst: <span class="sev sev-{jobs[job].worst_severity.label.lower()}">' in findings
