"""Figure 3 of Zhang et al. 2013: each phase's measurements and its fitted line(s).

One panel per fitted phase: the platform-profile points (data processed vs
duration), the submodel's line or two lines, the fitted break, and, for the
shuffle, the break computed from the Hadoop configuration.  Rendered with
matplotlib's Agg backend (no display needed) to PNG or SVG.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from phaseline.errors import PlatformModelError
from platform_model.model import PlatformModel
from platform_model.profile import PlatformProfile
from profiles.timeline_plot import save_figure

FORMATS = ("png", "svg")
#: Points drawn per panel at most (an even subsample of larger profiles).
MAX_POINTS = 20_000
_MIB = float(1 << 20)


def plot_platform(model: PlatformModel, profile: PlatformProfile, out_dir: str | Path, *, fmt: str = "png") -> list[Path]:
    """Draw Figure 3: one file per phase plus an overview with every phase; return the paths.

    Parameters
    ----------
    model
        The fitted platform model.
    profile
        Its training data.
    out_dir
        Directory for ``platform-<phase>.<fmt>`` and ``platform.<fmt>``.
    fmt
        ``png`` or ``svg``.
    """
    if fmt not in FORMATS:
        raise PlatformModelError(f"plot format {fmt!r} is not supported; use one of {', '.join(FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    phases = list(model.phases)
    paths: list[Path] = []
    for phase in phases:
        fig, ax = plt.subplots(figsize=(5.0, 3.6))
        _panel(ax, model, profile, phase)
        fig.tight_layout()
        path = out / f"platform-{phase}.{fmt}"
        save_figure(fig, path, fmt)
        plt.close(fig)
        paths.append(path)
    cols = min(3, max(1, len(phases)))
    rows = math.ceil(len(phases) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
    for ax, phase in zip(axes.flat, phases, strict=False):
        _panel(ax, model, profile, phase)
    for ax in list(axes.flat)[len(phases):]:
        ax.set_visible(False)
    fig.suptitle("Platform profile and model (cf. Zhang et al. 2013, Fig. 3)")
    fig.tight_layout()
    path = out / f"platform.{fmt}"
    save_figure(fig, path, fmt)
    plt.close(fig)
    paths.append(path)
    return paths


def _panel(ax: Any, model: PlatformModel, profile: PlatformProfile, phase: str) -> None:
    sub = model.phases[phase]
    x, y, _ = profile.arrays(phase)
    if x.size > MAX_POINTS:
        keep = np.linspace(0, x.size - 1, MAX_POINTS).round().astype(int)
        x, y = x[keep], y[keep]
    ax.scatter(x / _MIB, y, s=6, alpha=0.4, color="tab:blue", label=f"tasks (n={sub.n})")
    lo, hi = sub.data_min_bytes, sub.data_max_bytes
    if sub.break_bytes is None:
        grid = np.linspace(lo, hi, 200)
        ax.plot(grid / _MIB, sub.predict(grid), color="tab:red", lw=1.8, label="robust fit")
    else:
        for seg_lo, seg_hi, line in ((lo, sub.break_bytes, sub.segments[0]), (sub.break_bytes, hi, sub.segments[1])):
            grid = np.linspace(seg_lo, seg_hi, 100)
            ax.plot(grid / _MIB, np.maximum(line.predict(grid), 0.0), color="tab:red", lw=1.8)
        ax.axvline(sub.break_bytes / _MIB, color="tab:red", ls=":", lw=1,
                   label=f"fitted break {sub.break_bytes / _MIB:.1f} MiB")
    if sub.config_break_bytes is not None and lo <= sub.config_break_bytes <= hi * 1.5:
        ax.axvline(sub.config_break_bytes / _MIB, color="tab:green", ls="--", lw=1,
                   label=f"config break {sub.config_break_bytes / _MIB:.1f} MiB")
    ax.set_title(phase + (" (slope refitted >= 0)" if sub.nonneg_refit else ""))
    ax.set_xlabel("data processed (MiB)")
    ax.set_ylabel("duration (ms)")
    ax.legend(fontsize=7, loc="upper left")
