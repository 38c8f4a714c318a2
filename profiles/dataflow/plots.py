"""Plots of a reconstructed dataflow (PNG or SVG, by the output file's suffix).

* :func:`write_chart`: the dataflow execution chart (Dai et al. 2011, Figure 14):
  one line per task attempt, bootstrap / vertex / idle segments along wall-clock time.
* :func:`write_busy_idle`: busy vs idle per vertex (Figure 17) or, for one vertex,
  per host normalized (Figure 20).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.text import Text

from phaseline.errors import ProfileError
from profiles.timeline_plot import save_figure

SUFFIXES = (".png", ".svg")
COLORS: Mapping[str, str] = {
    "bootstrap": "#d9d9d9",
    "idle": "#f2f2f2",
    "map": "#4e79a7",
    "spill": "#a0cbe8",
    "shuffle": "#f28e2b",
    "copier": "#ffbe7d",
    "merge": "#b6992d",
    "inmem_merge": "#b6992d",
    "ondisk_merge": "#8cd17d",
    "sort": "#e15759",
    "reduce": "#59a14f",
}
#: Vertices drawn on the attempt's line (helper threads are drawn thin, beneath it).
MAIN_VERTICES = frozenset({"map", "shuffle", "sort", "reduce", "bootstrap", "idle"})


def _plain_text(texts: Iterable[Text]) -> None:
    """Draw these as they are: names from traces and specs are not matplotlib mathtext."""
    for t in texts:
        t.set_parse_math(False)


def _check(out: Path) -> None:
    if out.suffix.lower() not in SUFFIXES:
        raise ProfileError(f"{out}: write the chart as .png or .svg")


def write_chart(rows: Sequence[Mapping[str, Any]], out: Path, *, title: str = "") -> Path:
    """Draw ``dataflow_chart.sql`` rows; returns ``out``."""
    _check(out)
    if not rows:
        raise ProfileError("no vertex instances to draw; run `phaseline dataflow JOB_ID` first")
    t0 = min(int(r["start_ms"]) for r in rows)
    lines = max(int(r["line"]) for r in rows) + 1
    fig, ax = plt.subplots(figsize=(11, max(3.0, min(0.12 * lines + 1.5, 40.0))))
    seen: set[str] = set()
    for r in rows:
        seg = str(r["segment"])
        main = seg in MAIN_VERTICES
        height, offset = (0.8, -0.4) if main else (0.3, 0.1)
        left = (int(r["start_ms"]) - t0) / 1000.0
        width = max((int(r["end_ms"]) - int(r["start_ms"])) / 1000.0, 0.001)
        ax.broken_barh(
            [(left, width)], (int(r["line"]) + offset, height), facecolors=COLORS.get(seg, "#bab0ac"),
            label=None if seg in seen else seg,
        )
        seen.add(seg)
    ax.set_ylim(lines, -1)
    ax.set_xlabel("seconds since the first task started")
    ax.set_ylabel("task attempts (maps, then reduces)")
    ax.set_title(title or "Dataflow execution (HiTune Figure 14)", parse_math=False)
    _plain_text(ax.legend(loc="upper right", fontsize="small", ncol=2).get_texts())
    fig.tight_layout()
    save_figure(fig, out, out.suffix[1:].lower())
    plt.close(fig)
    return out


def write_busy_idle(rows: Sequence[Mapping[str, Any]], out: Path, *, by: str = "vertex", title: str = "") -> Path:
    """Stacked busy/idle bars from ``dataflow_busy_idle.sql`` (by vertex) or ``dataflow_by_host.sql`` (by host)."""
    _check(out)
    if not rows:
        raise ProfileError("nothing to draw: no vertex instances for this job")
    labels = [str(r[by]) for r in rows]
    if by == "host":
        busy = [float(r["norm_busy"] or 0) for r in rows]
        idle = [float(r["norm_idle"] or 0) for r in rows]
        ylabel = "samples per instance / mean over hosts"
    else:
        busy = [float(r["busy_pct"] or 0) for r in rows]
        idle = [float(r["idle_pct"] or 0) for r in rows]
        ylabel = "% of samples"
    fig, ax = plt.subplots(figsize=(max(5.0, 0.8 * len(rows) + 2), 4))
    x = range(len(labels))  # positions, not the labels: a host named "sr$\frac{$" is text, not mathtext
    ax.bar(x, busy, color="#4e79a7", label="busy (RUNNABLE)")
    ax.bar(x, idle, bottom=busy, color="#f28e2b", label="idle (waiting/blocked)")
    ax.set_xticks(x, labels, rotation=30, ha="right", parse_math=False)
    ax.set_ylabel(ylabel)
    ax.set_title(title or ("Busy vs idle by host (HiTune Figure 20)" if by == "host" else "Busy vs idle per vertex (HiTune Figure 17)"),
                 parse_math=False)  # fmt: skip
    ax.legend(fontsize="small")
    fig.tight_layout()
    save_figure(fig, out, out.suffix[1:].lower())
    plt.close(fig)
    return out
