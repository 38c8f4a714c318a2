"""The offline HTML report: self-contained, escaped, and rendered by a real browser (headless Chromium)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from profiles.report import render_report, write_report
from tests.profiles.profiles_doubles import ATTEMPTS, CONF, COUNTERS, JOB, JOBS, make_con

XSS_NAME = "<script>alert(1)</script>"
XSS_HOST = '"><img src=x onerror=alert(2)>'
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _xss_con():  # type: ignore[no-untyped-def]
    jobs = [{**JOBS[0], "name": XSS_NAME, "user": "<b>mallory</b>", "queue": "q&a"}]
    attempts = [{**a, "host": XSS_HOST if a["host"] == "h1" else a["host"]} for a in ATTEMPTS]
    return make_con({"attempts": attempts, "counters": COUNTERS, "jobs": jobs, "conf": CONF})


def _dump_dom(html_file: Path, tmp_path: Path) -> str:
    assert CHROMIUM is not None
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            "--dump-dom",
            html_file.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_report_is_self_contained() -> None:
    page = render_report(
        make_con({"attempts": ATTEMPTS, "counters": COUNTERS, "jobs": JOBS, "conf": CONF}), JOB
    )
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()
    # no network: no external URLs in src/href attributes or CSS url()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page, re.IGNORECASE)
    assert not re.search(r"url\((?!#)", page)  # only in-document references (SVG clip paths)
    assert page.count("<svg") >= 3  # timeline, phase breakdown, per-host skew
    for section in ("summary", "timeline", "phases", "waves", "skew", "critical-path", "waste", "profile"):
        assert f'id="{section}"' in page
    assert "wordcount" in page
    assert "&quot;map_size_sel&quot;" in page  # the profile JSON, escaped into a <pre>


def test_report_escapes_job_user_and_host_strings() -> None:
    page = render_report(_xss_con(), JOB)
    assert XSS_NAME not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "onerror=alert(2)>" not in page
    assert "<b>mallory</b>" not in page
    assert "&lt;b&gt;mallory&lt;/b&gt;" in page
    assert "<script" not in page.lower()


@pytest.mark.slow
@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="needs Debian's chromium package (apt-get install chromium); CI installs it and never skips",
)
def test_report_loads_in_headless_chromium(tmp_path: Path) -> None:
    out = write_report(
        make_con({"attempts": ATTEMPTS, "counters": COUNTERS, "jobs": JOBS, "conf": CONF}),
        JOB,
        tmp_path / "r.html",
    )
    dom = _dump_dom(out, tmp_path)
    heading = re.search(r'<h1 id="job-name">(.*?)</h1>', dom)
    assert heading is not None
    assert heading.group(1) == f"wordcount ({JOB})"
    assert "<svg" in dom
    assert "Critical path" in dom


@pytest.mark.slow
@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="needs Debian's chromium package (apt-get install chromium); CI installs it and never skips",
)
def test_xss_job_name_is_text_in_the_browser(tmp_path: Path) -> None:
    out = write_report(_xss_con(), JOB, tmp_path / "xss.html")
    dom = _dump_dom(out, tmp_path)
    # the browser parsed the name as text: the DOM serializes it escaped, and no
    # <script> or <img> element came out of the data
    heading = re.search(r'<h1 id="job-name">(.*?)</h1>', dom)
    assert heading is not None
    assert heading.group(1) == f"&lt;script&gt;alert(1)&lt;/script&gt; ({JOB})"
    assert "<script" not in dom.lower()
    assert "<img" not in dom.lower()


def test_gantt_bars_are_one_collection_per_colour() -> None:
    # A patch per bar took two minutes for a job of 7,000 tasks; each colour is one collection.
    from profiles import queries as q
    from profiles.timeline_plot import gantt_figure

    con = make_con({"attempts": ATTEMPTS, "jobs": JOBS})
    ax = gantt_figure(q.timeline(con, JOB), q.phases(con, JOB)).axes[0]
    assert not ax.patches
    phases = set(q.phases(con, JOB)["phase"])
    assert len(ax.collections) == 1 + len(phases) + 1  # whole attempts, each phase, failed/killed hatching
    bars = sum(len(c.get_paths()) for c in ax.collections)
    assert bars == len(ATTEMPTS) + len(q.phases(con, JOB)) + 2  # 2 failed or killed attempts


def test_chrome_trace_nests_phases_in_attempts_on_slot_threads() -> None:
    from profiles import queries as q
    from profiles.timeline_plot import chrome_trace

    r0 = "attempt_1_0001_r_000000_0"
    log = [  # a spill that runs beside the reduce function would break nesting on one thread
        {"job_id": JOB, "attempt_id": r0, "task_type": "REDUCE", "phase": p, "start_ms": s, "end_ms": e}
        for p, s, e in [("shuffle", 25, 80), ("reduce", 80, 110), ("spill", 90, 100)]
    ]
    con = make_con({"attempts": ATTEMPTS, "jobs": JOBS, "attempt_phases": log})
    trace = chrome_trace(q.timeline(con, JOB), q.phases(con, JOB), job_id=JOB)
    events = trace["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {"h1", "h2", "h3"}
    spans = [e for e in events if e["ph"] == "X"]
    attempts = {e["name"]: e for e in spans if e["cat"] != "phase"}
    assert len(attempts) == len(ATTEMPTS)
    r = attempts[r0]
    assert (r["ts"], r["dur"]) == (25_000.0, 85_000.0)  # microseconds since submit
    by_thread: dict[tuple[int, int], list[dict]] = {}  # type: ignore[type-arg]
    for e in spans:
        by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    for group in by_thread.values():  # on every thread, events nest or follow each other
        group.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack: list[float] = []
        for e in group:
            while stack and stack[-1] <= e["ts"]:
                stack.pop()
            assert not stack or e["ts"] + e["dur"] <= stack[-1]
            stack.append(e["ts"] + e["dur"])
    spill = next(e for e in spans if e["name"] == "spill")
    assert spill["tid"] != r["tid"]  # the overlapping phase went to the companion thread


def test_summary_gives_the_jobs_task_totals_and_how_many_ran(fixtures_dir: Path, store_dir: Path) -> None:
    # A failed job: JOB_INITED says 2 maps and 1 reduce; one map ran, the rest were killed unrun.
    # The report said "1 / 0", which reads like the job's totals.
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    store = Store(store_dir)
    ingest_paths([fixtures_dir / "apache-hadoop/mapreduce-client-hs/job_2.4.0-FAILED.jhist"], store)
    page = render_report(store.connect(), "job_1400204860297_0001")
    assert "2 / 1 (1 / 0 ran)" in page
    # a job whose tasks all ran reads as before
    ok = render_report(make_con({"attempts": ATTEMPTS, "counters": COUNTERS, "jobs": JOBS, "conf": CONF}), JOB)
    row = re.search(r"map tasks / reduce tasks</t[hd]>\s*<td>([^<]*)<", ok)
    assert row is not None
    assert row.group(1) == "3 / 1"


def test_a_job_cut_before_its_end_shows_its_span_so_far(fixtures_dir: Path, store_dir: Path, tmp_path: Path) -> None:
    # A history cut before JOB_FAILED: no finish, so `jobs` has no duration; the report measured to the
    # last attempt's end and printed it as the makespan, which reads like the job's whole run.
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    data = (fixtures_dir / "apache-hadoop/mapreduce-client-hs/job_2.4.0-FAILED.jhist").read_bytes()
    cut = tmp_path / "cut.jhist"
    cut.write_bytes(data[: len(data) - 400])
    store = Store(store_dir)
    ingest_paths([cut], store)
    con = store.connect()
    assert con.execute("SELECT finish_ms FROM jobs").fetchall() == [(None,)]
    page = render_report(con, "job_1400204860297_0001")
    assert re.search(r"makespan [\d.,]+ s so far \(the history has no end of the job", page)
    whole = render_report(make_con({"attempts": ATTEMPTS, "counters": COUNTERS, "jobs": JOBS, "conf": CONF}), JOB)
    assert "so far" not in whole
