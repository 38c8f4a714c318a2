"""The index page over the jobs ``phaseline analyze`` reported: one row per job, sortable by its
duration and by the worst severity of its findings.

The page has no script (the reports' Content-Security-Policy forbids any): each order is its own
pre-sorted table, and a column heading is a link to the table in that order, which CSS ``:target``
shows (the duration order without a fragment).  Every string from the data is HTML-escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from profiles.doctor import Severity
from profiles.report_sections import severity_badge
from profiles.templates import render_page


@dataclass(frozen=True, slots=True)
class IndexRow:
    """One job on the index: its report (relative to the index), duration and worst finding."""

    job_id: str
    name: str | None
    status: str | None
    duration_s: float | None
    worst: Severity
    findings: int  # findings at Low or worse
    report: str


def _table(rows: Sequence[IndexRow], order: str) -> str:
    head = (
        f'<tr><th>job</th><th>name</th><th>status</th>'
        f'<th><a href="#by-duration">duration (s){" ▼" if order == "duration" else ""}</a></th>'
        f'<th><a href="#by-severity">worst severity{" ▼" if order == "severity" else ""}</a></th>'
        f"<th>findings</th></tr>"
    )
    body = "".join(
        f'<tr class="job"><td><a href="{html.escape(r.report, quote=True)}">{html.escape(r.job_id)}</a></td>'
        f"<td>{html.escape(r.name or '')}</td><td>{html.escape(r.status or '')}</td>"
        f'<td class="num">{"" if r.duration_s is None else f"{r.duration_s:,.3f}"}</td>'
        f"<td>{severity_badge(r.worst.label)}</td><td class=\"num\">{r.findings}</td></tr>"
        for r in rows
    )
    return f"<table><thead>{head}</thead><tbody>{body}</tbody></table>"


def render_index(rows: Sequence[IndexRow]) -> str:
    """The index page as one HTML string: longest first, and worst first (then longest)."""
    from phaseline import __version__

    def duration(r: IndexRow) -> float:
        return -1.0 if r.duration_s is None else r.duration_s

    by_duration = sorted(rows, key=lambda r: (-duration(r), r.job_id))
    by_severity = sorted(rows, key=lambda r: (-r.worst, -duration(r), r.job_id))
    return render_page(
        "index.html",
        f"phaseline: {len(rows)} jobs",
        count=len(rows),
        by_duration=_table(by_duration, "duration"),
        by_severity=_table(by_severity, "severity"),
        version=html.escape(__version__),
    )


def write_index(rows: Sequence[IndexRow], out: Path) -> Path:
    """Write :func:`render_index` to ``out`` (UTF-8) and return the path."""
    out.write_text(render_index(rows), encoding="utf-8")
    return out
