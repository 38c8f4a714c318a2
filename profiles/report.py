"""One self-contained, offline HTML report of a job: where its time went and its profile.

The page holds the job summary, the doctor's findings (severity badges, the figures behind
them, what to change), the timeline (HiTune Fig. 14 style Gantt), the
phase breakdown, waves/slow-start/shuffle gap (Fig. 16), per-host skew
(Fig. 20) and stragglers, the critical path, wasted attempts and the extracted
profile.  Plots are inline SVG; the stylesheet is inlined; there is no script,
and a Content-Security-Policy forbids any.  Every string from the data (job,
user, queue, host, attempt ids, diagnostics) is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict, Unpack

import duckdb

from phaseline.errors import ProfileError
from profiles import queries as q
from profiles.doctor import Diagnosis, diagnose
from profiles.profile import JobProfile
from profiles.report_sections import (
    critical_path_section,
    esc,
    findings_section,
    header,
    inline_svg,
    phase_breakdown,
    profile_section,
    skew_section,
    waste_section,
    waves_section,
)
from profiles.templates import render_page
from profiles.timeline_plot import gantt_svg


class ReportParts(TypedDict, total=False):
    """What a caller already has of a job's report; each part is computed when not given.

    ``frames``: the job's :class:`~profiles.queries.JobFrames`; ``profile``: its extracted
    profile, or the :class:`ProfileError` extracting it raised, with ``profile_notes``: the
    warnings it raised (:func:`~profiles.report_sections.extract_saying` gives both);
    ``gantt``: its :func:`~profiles.timeline_plot.gantt_svg`; ``diagnosis``: its
    :func:`~profiles.doctor.diagnose`.
    """

    frames: q.JobFrames | None
    profile: JobProfile | ProfileError | None
    profile_notes: Sequence[Warning]
    gantt: str | None
    diagnosis: Diagnosis | None


def render_report(con: duckdb.DuckDBPyConnection, job_id: str, **parts: Unpack[ReportParts]) -> str:
    """The report of ``job_id`` as one HTML string (see the module docstring), from the
    :class:`ReportParts` the caller already has."""
    from phaseline import __version__

    frames = parts.get("frames") or q.JobFrames.query(con, job_id)
    diagnosis, gantt = parts.get("diagnosis"), parts.get("gantt")
    title, subtitle, summary_html = header(job_id, frames.summary)
    phase_table, phase_svg = phase_breakdown(frames.phases)
    return render_page(
        "report.html",
        f"phaseline report: {esc(title)}",
        title=esc(title),
        subtitle=subtitle,
        summary=summary_html,
        findings=findings_section(diagnosis if diagnosis is not None else diagnose(con, job_id)),
        timeline_svg=inline_svg(gantt or gantt_svg(frames)),
        phase_table=phase_table,
        phase_svg=phase_svg,
        waves=waves_section(con, job_id),
        skew=skew_section(con, job_id),
        critical_path=critical_path_section(con, job_id, frames),
        waste=waste_section(con, job_id),
        profile=profile_section(con, job_id, frames, parts.get("profile"), parts.get("profile_notes", ())),
        version=esc(__version__),
    )


def write_report(
    con: duckdb.DuckDBPyConnection, job_id: str, out: str | Path, **parts: Unpack[ReportParts]
) -> Path:
    """Write :func:`render_report` to ``out`` (UTF-8) and return the path."""
    path = Path(out)
    path.write_text(render_report(con, job_id, **parts), encoding="utf-8")
    return path
