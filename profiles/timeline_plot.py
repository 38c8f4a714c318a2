"""Pictures of a run: a Gantt chart per attempt (HiTune Fig. 14) and a Chrome trace for Perfetto.

:func:`gantt_figure` draws one row per attempt, maps first, each coloured by
phase like Dai et al. 2011, Figure 14 (the x axis is seconds since the job's
submit time); failed and killed attempts are hatched, and so are attempts with
no finish (drawn to the last time the job shows).  A helper thread's phases (a
spill beside the map function) are thin bars along the foot of the row.  :func:`chrome_trace`
writes the Trace Event Format that Perfetto UI and ``chrome://tracing`` open:
one process per host, one thread per slot (:func:`profiles.slots.assign_slots`),
an ``X`` event per attempt with its phases nested inside.
"""

from __future__ import annotations

import io
import json
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb
import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.text import Text

from phaseline.errors import PhaselineError
from profiles import queries as q
from profiles.slots import assign_slots

#: Phase colours (combined phases such as "reduce+write" take their first component's colour).
PHASE_COLORS: Mapping[str, str] = {
    "read": "#8dd3c7",
    "map": "#1f77b4",
    "collect": "#17becf",
    "spill": "#ff7f0e",
    "merge": "#ffbb78",
    "shuffle": "#2ca02c",
    "sort": "#bcbd22",
    "reduce": "#d62728",
    "write": "#9467bd",
}
#: Colour of an attempt span no phase covers (setup/cleanup tasks, attempts without phases).
UNPHASED_COLOR = "#c7c7c7"
TYPE_ORDER = {"SETUP": 0, "MAP": 1, "REDUCE": 2, "CLEANUP": 3, "TASK_CLEANUP": 4}
MAX_ROWS_LABELLED = 60


class OutputFormatError(PhaselineError, ValueError):
    """An output file name whose suffix no writer here knows."""


def phase_color(phase: str) -> str:
    """The colour of a phase name (its first component for combined names)."""
    return PHASE_COLORS.get(phase.split("+")[0], UNPHASED_COLOR)


def _drawn(timeline: pd.DataFrame) -> pd.DataFrame:
    """The attempts to draw: the timed ones, and those that started and have no finish (a history
    cut off while they ran: the attempts a user of a hung or crashed job looks for), drawn up to
    the last time the job's attempts show, with ``unfinished`` true."""
    started = timeline[timeline["start_ms"].notna()]
    open_ = started["finish_ms"].isna()
    t = pd.concat([q.timed(timeline), started[open_]]).copy()
    t["unfinished"] = t["finish_ms"].isna()
    if t["unfinished"].any():
        horizon = float(np.nanmax(t[["start_ms", "finish_ms"]].to_numpy(dtype=float)))
        t.loc[t["unfinished"], "finish_ms"] = horizon
    return t


def _row_order(timeline: pd.DataFrame) -> pd.DataFrame:
    t = _drawn(timeline)
    t["_type_rank"] = t["task_type"].map(TYPE_ORDER).fillna(9)
    return t.sort_values(["_type_rank", "start_ms", "attempt_id"]).reset_index(drop=True)


def gantt_figure(timeline: pd.DataFrame, phases: pd.DataFrame, *, title: str = "") -> Figure:
    """A Gantt chart of the attempts (one row each) coloured by phase.

    Parameters
    ----------
    timeline, phases
        Frames as :func:`profiles.queries.timeline` and :func:`profiles.queries.phases` return.
    title
        Shown verbatim (no mathtext: ``$`` in job names stays a dollar).
    """
    rows = _row_order(timeline)
    n = len(rows)
    height = min(max(2.5, 0.16 * n + 1.2), 40.0)
    fig = Figure(figsize=(11, height), layout="constrained")
    ax = fig.add_subplot()
    if n == 0:
        ax.text(
            0.5, 0.5, "no timed attempts", ha="center", va="center", transform=ax.transAxes, parse_math=False
        )
        ax.set_axis_off()
        return fig
    t0 = float(rows["t0_ms"].dropna().min()) if rows["t0_ms"].notna().any() else float(rows["start_ms"].min())
    index = {a: i for i, a in enumerate(rows["attempt_id"])}
    bad = rows["status"].isin(["FAILED", "KILLED"]).to_numpy()
    unfinished = rows["unfinished"].to_numpy()
    # whole attempts first (grey), the task thread's phases on top; a helper thread's phases
    # (lane 'background': a spill beside the map function) run beside them, so they are thin
    # bars along the row's foot, not paint over the task thread's phase at that time
    _bars(ax, range(n), rows["start_ms"] - t0, rows["finish_ms"] - t0, facecolor=UNPHASED_COLOR)
    ph = phases[phases["attempt_id"].isin(index)].copy()
    ph["_row"] = ph["attempt_id"].map(index)
    background = (ph["lane"] == "background") if "lane" in ph.columns else pd.Series(False, index=ph.index)
    used: list[str] = []
    for lane_rows, span in ((ph[~background], (-0.4, 0.4)), (ph[background], (0.22, 0.4))):
        for name, group in lane_rows.groupby("phase", sort=False):
            used.append(str(name))
            _bars(ax, group["_row"], group["start_ms"] - t0, group["end_ms"] - t0,
                  facecolor=phase_color(str(name)), span=span)  # fmt: skip
    if bad.any():
        b = rows[bad]
        _bars(ax, b.index, b["start_ms"] - t0, b["finish_ms"] - t0, facecolor="none", hatch="////",
              edgecolor="black", linewidth=0)  # fmt: skip
    if unfinished.any():
        u = rows[unfinished]
        _bars(ax, u.index, u["start_ms"] - t0, u["finish_ms"] - t0, facecolor="none", hatch="...",
              edgecolor="black", linewidth=0)  # fmt: skip
    ax.autoscale_view()  # collections set the data limits but do not rescale by themselves
    ax.set_ylim(n - 0.5, -0.5)
    if n <= MAX_ROWS_LABELLED:
        ax.set_yticks(range(n), [str(a) for a in rows["attempt_id"]], fontsize=6, parse_math=False)
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{n} attempts (maps, then reduces, by start)")
    ax.set_xlabel("seconds since job submit")
    if title:
        ax.set_title(title, parse_math=False)
    # phases without a colour of their own (setup, commit, wait...) share the grey of an
    # unphased span: one legend entry names them all, not one grey entry each
    plain = [p for p in dict.fromkeys(used) if phase_color(p) == UNPHASED_COLOR]
    handles = [Patch(color=phase_color(p), label=p) for p in dict.fromkeys(used) if p not in plain]
    handles.append(Patch(color=UNPHASED_COLOR, label=", ".join([*plain, "no phase"]) if plain else "(no phase)"))
    if bad.any():
        handles.append(Patch(fill=False, hatch="////", label="failed/killed"))
    if unfinished.any():
        handles.append(Patch(fill=False, hatch="...", label="no finish (history cut)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    return fig


def _bars(
    ax: Axes,
    row: Any,
    start_ms: Any,
    end_ms: Any,
    *,
    edgecolor: str = "none",
    span: tuple[float, float] = (-0.4, 0.4),
    **style: Any,
) -> None:
    """Horizontal bars (rows ``row``, from ``row + span[0]`` to ``row + span[1]``, seconds) as one collection.

    ``barh`` makes a patch per bar, which matplotlib lays out and draws one by
    one: a job of 7,000 tasks took two minutes to chart; a collection takes
    a second.
    """
    y = np.asarray(row, dtype=float)
    x0 = np.asarray(start_ms, dtype=float) / 1000.0
    x1 = np.asarray(end_ms, dtype=float) / 1000.0
    keep = np.isfinite(x0) & np.isfinite(x1)
    y, x0, x1 = y[keep], x0[keep], x1[keep]
    lo, hi = y + span[0], y + span[1]
    verts = np.stack([np.column_stack(c) for c in ((x0, lo), (x0, hi), (x1, hi), (x1, lo))], axis=1)
    ax.add_collection(PolyCollection(list(verts), edgecolor=edgecolor, **style))


#: Characters XML 1.0 does not allow (C0 controls but tab and line ends, surrogates, U+FFFE/F).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def save_figure(fig: Figure, target: Any, fmt: str, **options: Any) -> None:
    """``fig.savefig``, reproducibly: an SVG has no date and the same ids every time, so the
    same trace gives the same file (reports diff cleanly, and parallel runs match serial ones).

    An SVG's text has the characters XML does not allow replaced by U+FFFD: a job name from a
    trace with a control character in it had made the file one no viewer opens.
    """
    with warnings.catch_warnings():
        # a job name in a script the font lacks (CJK) is drawn as boxes; matplotlib's warning
        # about each glyph, with its own source lines, is no news to the user of a report
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from", category=UserWarning)
        if fmt != "svg":
            fig.savefig(target, format=fmt, **options)
            return
        for text in fig.findobj(Text):
            if _NOT_XML.search(shown := text.get_text()):
                text.set_text(_NOT_XML.sub("\ufffd", shown))
        with matplotlib.rc_context({"svg.hashsalt": "phaseline"}):
            fig.savefig(target, format=fmt, metadata={"Date": None}, **options)


def figure_svg(fig: Figure) -> str:
    """The figure as an SVG document string, its text as text (searchable, and small inline)."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        save_figure(fig, buf, "svg")
    return buf.getvalue()


def _known(value: Any) -> Any:
    """``value``, or None for a missing one (pandas gives NaN, which ``json.dumps`` writes as a bare
    ``NaN``: no JSON, and Perfetto and chrome://tracing refuse the whole trace)."""
    return None if pd.api.types.is_scalar(value) and pd.isna(value) else value


def chrome_trace(timeline: pd.DataFrame, phases: pd.DataFrame, *, job_id: str) -> dict[str, Any]:
    """The Trace Event Format dict (``{"traceEvents": [...]}``) of a job's attempts and phases.

    Times are microseconds since the job's time zero.  Hosts are processes,
    slots threads; a helper thread's phases (lane ``background``: a spill
    beside the map function), and any phase that overlaps an earlier one of the
    same attempt, go to a companion thread so events on a thread always nest.
    A phase's ``args`` carry its ``lane`` and ``busy_ms`` (the work a helper
    thread's phase did within its span).  An attempt with no finish (a history
    cut off while it ran) runs to the job's last known time, marked
    ``args.unfinished``.
    """
    t = _drawn(timeline)  # an attempt without a finish runs to the job's last known time
    if "slot" not in t.columns or t["slot"].isna().any():
        t = assign_slots(t.drop(columns="slot", errors="ignore"))
    events: list[dict[str, Any]] = []
    if t.empty:
        return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"job_id": job_id}}
    t0 = float(t["t0_ms"].dropna().min()) if t["t0_ms"].notna().any() else float(t["start_ms"].min())
    hosts = {h: i + 1 for i, h in enumerate(sorted({str(h) for h in t["host"].fillna("(unknown host)")}))}
    for host, pid in hosts.items():
        events.append(_name_event("process_name", pid, 0, host))
    threads: set[tuple[int, int]] = set()
    # each attempt's phases by start, as records: one conversion for the job (per attempt it took minutes)
    by_attempt: dict[str, list[dict[Any, Any]]] = {}
    for rec in phases.sort_values(["start_ms", "end_ms"], kind="stable").to_dict("records"):
        by_attempt.setdefault(str(rec["attempt_id"]), []).append(rec)
    for r in t.to_dict("records"):
        pid = hosts[str(r["host"]) if r["host"] is not None and not pd.isna(r["host"]) else "(unknown host)"]
        slot = int(r["slot"]) if not pd.isna(r["slot"]) else 0
        if (pid, slot + 1) not in threads:
            threads.add((pid, slot + 1))
            events.append(_name_event("thread_name", pid, slot + 1, f"slot {slot}"))
        events.append(_span_event(str(r["attempt_id"]), str(r["task_type"]), pid, slot + 1, r["start_ms"], r["finish_ms"], t0))
        events[-1]["args"] = {"status": _known(r["status"]), "task_id": _known(r["task_id"]),
                              "attempt_no": int(r["attempt_no"])}  # fmt: skip
        if r["unfinished"]:
            events[-1]["args"]["unfinished"] = "no finish in the history: drawn to the job's last known time"
        _add_phases(events, threads, by_attempt.get(str(r["attempt_id"]), []), pid, slot, t0)
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"job_id": job_id, "t0_ms": t0}}


def _name_event(kind: str, pid: int, tid: int, name: str) -> dict[str, Any]:
    """A metadata event naming a process (a host) or a thread (a slot lane)."""
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": {"name": name}}


def _span_event(name: str, cat: str, pid: int, tid: int, start_ms: Any, end_ms: Any, t0: float) -> dict[str, Any]:
    """A complete event (``X``) from ``start_ms`` to ``end_ms``, in microseconds since ``t0``."""
    return {
        "ph": "X",
        "name": name,
        "cat": cat,
        "pid": pid,
        "tid": tid,
        "ts": (float(start_ms) - t0) * 1000.0,
        "dur": (float(end_ms) - float(start_ms)) * 1000.0,
    }


def _add_phases(
    events: list[dict[str, Any]],
    threads: set[tuple[int, int]],
    phases: list[dict[Any, Any]],
    pid: int,
    slot: int,
    t0: float,
) -> None:
    """An attempt's phases on its slot's thread; a helper thread's phase (lane ``background``), or one
    that overlaps an earlier one, on the slot's companion thread, so events on a thread always nest."""
    last_end = float("-inf")
    for p in phases:
        lane = slot + 1
        if p.get("lane") == "background" or float(p["start_ms"]) < last_end:
            lane = 10_000 + slot + 1
            if (pid, lane) not in threads:
                threads.add((pid, lane))
                events.append(_name_event("thread_name", pid, lane, f"slot {slot} (concurrent phases)"))
        else:
            last_end = float(p["end_ms"])
        args = {"source": p["source"]}
        if _known(p.get("lane")) is not None:
            args["lane"] = p["lane"]
        if _known(p.get("dur_ms")) is not None:
            # a helper thread's phase spans its first start to its last end; dur_ms is its work
            args["busy_ms"] = float(p["dur_ms"])
        if _known(p.get("data_bytes")) is not None:
            args["data_bytes"] = int(p["data_bytes"])
        events.append({**_span_event(str(p["phase"]), "phase", pid, lane, p["start_ms"], p["end_ms"], t0), "args": args})


def write_timeline(
    con: duckdb.DuckDBPyConnection, job_id: str, out: str | Path, *, frames: q.JobFrames | None = None
) -> Path:
    """Write the job's timeline to ``out``: ``.png``/``.svg`` (Gantt) or ``.json`` (Chrome trace).

    ``frames``: the job's :class:`~profiles.queries.JobFrames` when the caller has them.

    Raises
    ------
    NotFoundError
        The job is not in the store.
    OutputFormatError
        ``out`` has another suffix.
    """
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg", ".json"):
        raise OutputFormatError(
            f"{path}: write .png, .svg or .json (Chrome trace), not {suffix or 'no suffix'!r}"
        )
    frames = frames or q.JobFrames.query(con, job_id)
    summary, timeline, phases = frames.summary, frames.timeline(), frames.phases
    if suffix == ".json":
        path.write_text(json.dumps(chrome_trace(timeline, phases, job_id=job_id), allow_nan=False), encoding="utf-8")
        return path
    if suffix == ".svg":
        path.write_text(gantt_svg(frames), encoding="utf-8")
        return path
    fig = gantt_figure(timeline, phases, title=_gantt_title(job_id, summary["name"]))
    save_figure(fig, path, suffix[1:], dpi=120)
    return path


def _gantt_title(job_id: str, name: Any) -> str:
    return job_id if name is None or pd.isna(name) else f"{job_id} ({name})"


def gantt_svg(frames: q.JobFrames) -> str:
    """The job's Gantt chart as an SVG document, its text as text (searchable; the report inlines it)."""
    fig = gantt_figure(frames.timeline(), frames.phases, title=_gantt_title(frames.job_id, frames.summary["name"]))
    return figure_svg(fig)
