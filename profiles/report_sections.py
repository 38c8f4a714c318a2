"""The job report's sections (:mod:`profiles.report` puts them in its page): each one HTML fragment
from the job's frames and queries, every string from the data HTML-escaped."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import duckdb
import pandas as pd
from matplotlib.figure import Figure

from phaseline.errors import ProfileError, recording_warnings
from profiles import queries as q
from profiles.critical_path import critical_path
from profiles.doctor import Diagnosis
from profiles.extract import extract_profile
from profiles.profile import JobProfile, evidence_line
from profiles.timeline_plot import figure_svg, phase_color

__all__ = [
    "critical_path_section", "esc", "findings_section", "header", "inline_svg", "phase_breakdown", "profile_section",
    "severity_badge", "skew_section", "waste_section", "waves_section",
]  # fmt: skip

MAX_TABLE_ROWS = 25
#: Order of phases in the breakdown bars: Phase order, with the spans some sources add around it.
_PHASE_RANK = {
    name: i
    for i, name in enumerate(
        [
            "setup",
            "read",
            "map",
            "collect",
            "spill",
            "merge",
            "wait",
            "shuffle",
            "sort",
            "reduce",
            "write",
            "commit",
        ]
    )
}
_SVG_START = re.compile(r"<svg\b")


def _present(value: Any) -> bool:
    """A value the data actually holds (not None, NaN, NA or empty)."""
    return (
        value is not None
        and value is not pd.NA
        and not (isinstance(value, float) and math.isnan(value))
        and value != ""
    )


def esc(value: Any) -> str:
    """``value`` HTML-escaped (quotes too); empty for NULL and NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    return html.escape(str(value), quote=True)


def _fmt(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(df: pd.DataFrame, columns: Sequence[str], *, limit: int = MAX_TABLE_ROWS) -> str:
    if df.empty:
        return '<p class="note">none</p>'
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for rec in df.head(limit).to_dict("records"):
        cells = []
        for c in columns:
            v = rec.get(c)
            if v is not None and hasattr(v, "item") and not isinstance(v, str):
                v = v.item()
            cls = ' class="num"' if isinstance(v, int | float) and not isinstance(v, bool) else ""
            cells.append(f"<td{cls}>{esc(_fmt(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f'<p class="note">{len(df) - limit:,} more rows not shown</p>' if len(df) > limit else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


def _makespan(summary: Any) -> str:
    """The job's makespan; for a job its history never saw end (a cut file), the span so far."""
    if _present(summary["finish_ms"]) or not _present(summary["makespan_ms"]):
        return _ms(summary["makespan_ms"])
    return f"{_ms(summary['makespan_ms'])} so far (the history has no end of the job; to its last attempt's end)"


def _task_counts(summary: Any) -> str:
    """The job's map and reduce tasks as its record says, and how many ran where that differs.

    A failed or killed job has tasks that never got an attempt; counting only those that ran
    read like the job's totals (a 2-map, 1-reduce job said "1 / 0").
    """
    ran = f"{summary['maps']} / {summary['reduces']}"
    if not (_present(summary["total_maps"]) and _present(summary["total_reduces"])):
        return f"{ran} (with attempts; the job record has no totals)"
    total = f"{int(summary['total_maps'])} / {int(summary['total_reduces'])}"
    return total if total == ran else f"{total} ({ran} ran)"


def _kv(pairs: Iterable[tuple[str, Any]]) -> str:
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(_fmt(v))}</td></tr>" for k, v in pairs)
    return f'<table class="kv">{rows}</table>'


def _svg(fig: Figure) -> str:
    return inline_svg(figure_svg(fig))


def inline_svg(document: str) -> str:
    """An SVG document without its XML prolog, to sit inside the page."""
    match = _SVG_START.search(document)
    return document[match.start() :] if match else ""


def _ms(v: Any) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{float(v) / 1000.0:,.1f} s"


def phase_breakdown(phases: pd.DataFrame) -> tuple[str, str]:
    """The phase table and stacked bars of successful attempts.

    Shares and bars are of the task thread's phases (lane ``main``), which
    tile an attempt; helper-thread phases (lane ``background``, the
    SpillThread's spills, the reduce's background merges) run beside them, so
    they are listed with no share and drawn as a thin bar under their type.
    """
    ok = phases[phases["status"] == "SUCCEEDED"]
    if ok.empty:
        return '<p class="note">no phases</p>', ""
    per: pd.DataFrame = ok.groupby(["task_type", "lane", "attempt_id", "phase", "source"], as_index=False)[
        ["dur_ms"]
    ].sum()
    agg = (
        per.groupby(["task_type", "lane", "phase", "source"], as_index=False)
        .agg(
            attempts=("dur_ms", "size"),
            avg_ms=("dur_ms", "mean"),
            max_ms=("dur_ms", "max"),
            total_ms=("dur_ms", "sum"),
        )
        .sort_values(["task_type", "lane", "total_ms"], ascending=[True, False, False])
    )
    main = agg["lane"] == "main"
    main_total = agg[main].groupby("task_type")["total_ms"].sum()
    agg["share"] = (agg["total_ms"] / agg["task_type"].map(main_total)).where(main)
    table = _table(
        agg, ["task_type", "lane", "phase", "source", "attempts", "avg_ms", "max_ms", "total_ms", "share"], limit=60
    )
    types = list(dict.fromkeys(agg["task_type"]))
    fig = Figure(figsize=(9, 0.6 + 0.55 * len(types)), layout="constrained")
    ax = fig.add_subplot()
    widest = float(agg.loc[main].groupby("task_type")["avg_ms"].sum().max()) / 1000.0
    for i, t in enumerate(types):
        for lane, y, height in (("main", i, 0.8), ("background", i + 0.5, 0.18)):
            left = 0.0
            rows = agg[(agg["task_type"] == t) & (agg["lane"] == lane)].to_dict("records")
            for rec in sorted(rows, key=lambda r: _PHASE_RANK.get(str(r["phase"]).split("+")[0], 99)):
                w = float(rec["avg_ms"]) / 1000.0
                ax.barh(y, w, left=left, height=height, color=phase_color(str(rec["phase"])), edgecolor="white")
                if lane == "main" and w > 0.04 * widest:  # a label that fits its bar
                    ax.text(
                        left + w / 2, y, str(rec["phase"]), ha="center", va="center", fontsize=7, parse_math=False
                    )
                left += w
    ax.set_yticks(range(len(types)), types, parse_math=False)
    ax.set_ylim(len(types) - 0.3, -0.5)
    ax.set_xlabel("mean seconds per successful attempt (thin bar: helper threads)")
    return table, _svg(fig)


#: Host charts label at most this many hosts: the slowest ones when there are more (a
#: 1,800-host trace took 7 s to lay out its tick labels, and they could not be read).
MAX_HOSTS_LABELLED = 60


def _skew_svg(skew: pd.DataFrame) -> str:
    whole = skew[skew["phase"] == "attempt"]
    if whole.empty:
        return ""
    ttype = "REDUCE" if (whole["task_type"] == "REDUCE").any() else "MAP"
    d = whole[whole["task_type"] == ttype].sort_values("host").reset_index(drop=True)
    fig = Figure(figsize=(9, 2.8), layout="constrained")
    ax = fig.add_subplot()
    colors = ["#d62728" if v > 1.1 else "#1f77b4" for v in d["normalized_dur"]]
    if len(d) <= MAX_HOSTS_LABELLED:
        ax.bar(range(len(d)), d["normalized_dur"], color=colors)
        labelled = d
    else:  # one collection: a patch per bar took seconds for a few thousand hosts
        ax.vlines(range(len(d)), 0, d["normalized_dur"], colors=colors, linewidth=max(0.2, 500 / len(d)))
        labelled = d.nlargest(MAX_HOSTS_LABELLED // 2, "normalized_dur").sort_index()
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(
        list(labelled.index), [str(h) for h in labelled["host"]], rotation=60, ha="right", fontsize=7, parse_math=False
    )
    if len(labelled) < len(d):
        ax.set_xlabel(f"{len(d)} hosts by name; the {len(labelled)} slowest named", fontsize=8)
    ax.set_ylabel("normalized mean duration")
    ax.set_title(f"{ttype.lower()} attempts per host (HiTune Fig. 20)", parse_math=False)
    return _svg(fig)


def severity_badge(label: str) -> str:
    """A severity as a coloured badge (``None``, ``Low``, ``Moderate``, ``Severe``, ``Critical``)."""
    return f'<span class="sev sev-{esc(label.lower())}">{esc(label)}</span>'


def findings_section(diagnosis: Diagnosis) -> str:
    """The doctor's findings, worst first, each with its badge, figures and recommendation; then the
    heuristics the job's data could not support, and why."""
    findings = sorted(diagnosis.findings, key=lambda f: -f.severity)
    if findings:
        rows = "".join(
            f"<tr><td>{severity_badge(f.severity.label)}</td><td>{esc(f.heuristic)}</td>"
            f'<td class="num">{_fmt(f.value)}</td><td>{esc(f.threshold)}</td><td>{esc(f.detail)}</td>'
            f"<td>{esc(f.recommendation) if f.severity else ''}</td></tr>"
            for f in findings
        )
        table = (
            "<table><thead><tr><th>severity</th><th>heuristic</th><th>value</th><th>threshold</th>"
            f"<th>figures</th><th>recommendation</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    else:
        table = '<p class="note">No heuristic could grade this job.</p>'
    skipped = "".join(f"<li>{esc(s.heuristic)}: {esc(s.reason)}</li>" for s in diagnosis.skipped)
    return (
        f'<p class="note">Worst: {severity_badge(diagnosis.worst.label)}. Thresholds: '
        "<code>profiles/doctor.toml</code> (Dr. Elephant's defaults for its heuristics); "
        "<code>phaseline doctor --recommend</code> prices the settings.</p>"
        + table
        + (f"<h3>Not graded</h3><ul>{skipped}</ul>" if skipped else "")
    )


def header(job_id: str, summary: Any) -> tuple[str, str, str]:
    """The page's title, its subtitle (user, queue, status, makespan) and the summary table."""
    name = summary["name"]
    title = job_id if name is None or pd.isna(name) else f"{name} ({job_id})"
    subtitle = " · ".join(
        esc(x)
        for x in (
            f"user {summary['user']}" if _present(summary["user"]) else None,
            f"queue {summary['queue']}" if _present(summary["queue"]) else None,
            summary["status"] if _present(summary["status"]) else None,
            f"makespan {_makespan(summary)}",
        )
        if x
    )
    summary_html = _kv(
        [
            ("job id", job_id),
            ("name", summary["name"]),
            ("user", summary["user"]),
            ("queue", summary["queue"]),
            ("status", summary["status"]),
            ("Hadoop version", summary["hadoop_version"]),
            ("source format", summary["source_format"]),
            ("makespan", _makespan(summary)),
            ("map tasks / reduce tasks", _task_counts(summary)),
            (
                "attempts (failed, killed)",
                f"{summary['attempts']} ({summary['failed_attempts']}, {summary['killed_attempts']})",
            ),
        ]
    )
    return title, subtitle, summary_html


def waves_section(con: duckdb.DuckDBPyConnection, job_id: str) -> str:
    """Waves, the reduces' slow-start and the gap between the last map and the last shuffle."""
    waves = q.waves(con, job_id)
    slow = q.slowstart(con, job_id)
    gap = q.shuffle_gap(con, job_id)
    return (
        "<h3>Waves</h3>"
        + _table(
            waves,
            [
                "task_type",
                "wave",
                "slots",
                "attempts",
                "succeeded",
                "span_ms",
                "median_dur_ms",
                "overlap_prev_ms",
            ],
        )
        + "<h3>Reduce slow-start</h3>"
        + _table(
            slow,
            ["maps", "maps_done_at_reduce_start", "slowstart_observed", "slowstart_conf", "reduce_lead_ms"],
        )
        + "<h3>Gap between the last map and the last shuffle (HiTune Fig. 16)</h3>"
        + _table(gap, ["last_map_finish_ms", "last_shuffle_end_ms", "gap_ms", "gap_share"])
    )


def skew_section(con: duckdb.DuckDBPyConnection, job_id: str) -> str:
    """Per-host durations, stragglers and the input data per task."""
    skew = q.skew_hosts(con, job_id)
    straggle = q.stragglers(con, job_id)
    data = q.data_skew(con, job_id)
    data_summary = (
        data.groupby("task_type", as_index=False).agg(
            tasks=("task_id", "size"),
            min_bytes=("input_bytes", "min"),
            mean_bytes=("input_bytes", "mean"),
            max_bytes=("input_bytes", "max"),
            max_ratio=("input_bytes_ratio", "max"),
        )
        if not data.empty
        else data
    )
    return (
        f'<div class="figure">{_skew_svg(skew)}</div>'
        + "<h3>Per-host mean durations (whole attempts)</h3>"
        + _table(
            skew[skew["phase"] == "attempt"],
            ["task_type", "host", "attempts", "avg_dur_ms", "normalized_dur", "slower_pct"],
        )
        + f"<h3>Stragglers (at least {q.DEFAULT_STRAGGLER_K}× their phase median)</h3>"
        + _table(straggle, ["attempt_id", "status", "host", "phase", "dur_ms", "median_ms", "ratio"])
        + "<h3>Input data per task</h3>"
        + _table(data_summary, ["task_type", "tasks", "min_bytes", "mean_bytes", "max_bytes", "max_ratio"])
    )


def critical_path_section(con: duckdb.DuckDBPyConnection, job_id: str, frames: q.JobFrames) -> str:
    """The measured run's critical path, step by step."""
    cp = critical_path(con, job_id, frames=frames)
    return (
        f'<p class="note">{len(cp.steps)} steps over {len(cp.attempts)} attempts; busy {_ms(cp.busy_ms)} '
        f"of a makespan of {_ms(cp.makespan_ms)}.</p>"
        + _table(
            cp.to_frame(), ["kind", "label", "attempt_id", "task_type", "host", "dur_ms", "share"], limit=80
        )
    )


def waste_section(con: duckdb.DuckDBPyConnection, job_id: str) -> str:
    """The failed and killed attempts' time."""
    return _table(
        q.wasted_summary(con, job_id), ["task_type", "status", "attempts", "wasted_ms", "wasted_share"]
    ) + _table(
        q.wasted(con, job_id),
        ["attempt_id", "status", "host", "wasted_ms", "speculative", "task_succeeded", "error"],
    )


def extract_saying(
    con: duckdb.DuckDBPyConnection, job_id: str, frames: q.JobFrames | None = None
) -> tuple[JobProfile | ProfileError, tuple[Warning, ...]]:
    """The job's profile (or the :class:`ProfileError` raised) and the warnings it raised, recorded."""
    try:
        with recording_warnings() as said:
            profile: JobProfile | ProfileError = extract_profile(con, job_id, frames=frames)
    except ProfileError as exc:
        return exc, ()
    return profile, tuple(said)


def profile_section(
    con: duckdb.DuckDBPyConnection,
    job_id: str,
    frames: q.JobFrames,
    profile: JobProfile | ProfileError | None,
    said: Sequence[Warning] = (),
) -> str:
    """The profile (extracted here when not given; else ``said`` is its warnings) and its evidence."""
    if profile is None:
        profile, said = extract_saying(con, job_id, frames)
    if isinstance(profile, ProfileError):
        return f'<p class="note">No profile: {esc(profile)}</p>'
    notes = "".join(f'<p class="note">{esc(line)}</p>' for line in (evidence_line(profile), *said))
    return f"{notes}<pre>{esc(profile.to_json())}</pre>"
