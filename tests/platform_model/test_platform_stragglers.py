"""Known answer: platform fits that slow stragglers do not bias (issue 37, item 2).

A CSV of six known lines (the shuffle two lines with a break), 3 % relative
noise and 10 % of the points 2-5x too slow (stragglers are one-sided: no task
runs 3x too fast), fitted by ``phaseline fit --from-csv`` with its default norm
and read back by ``phaseline platform eval``: every phase within 2 % at every
size tested, including just past the shuffle's break.  Huber's T, the former
default, misses the same CSVs by more (platform_model/fit.py has the figures).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from phaseline.cli import main

MIB = 1 << 20
#: The issue's target: every phase and size within 2 % of the known line.
REL_TOL = 0.02
#: The lines: A + B * data (ms, ms per MiB).
TRUTH = {"read": (200.0, 30.0), "collect": (50.0, 15.0), "spill": (80.0, 20.0),
         "merge": (30.0, 10.0), "shuffle": (500.0, 12.0), "write": (100.0, 25.0)}
#: The shuffle's break (MiB) and its slope above it (ms per MiB).
SHUFFLE_BREAK_MIB, SHUFFLE_SLOPE_ABOVE = 24.0, 40.0
#: Data sizes the benchmarks ran (MiB) and the sizes evaluated: 26 MiB is just past the break.
#: (At 2 MiB the unweighted line's noise floor under 3 % relative noise is itself ~2.4 %,
#: with no outliers at all, so the smallest size is not held to 2 %.)
SIZES_MIB = (2, 4, 8, 12, 16, 20, 28, 32, 48, 64)
EVAL_MIB = (6, 16, 26, 48, 64)
POINTS_PER_PHASE = 240
NOISE = 0.03
STRAGGLERS = 0.10


def true_ms(phase: str, mib: float) -> float:
    a, b = TRUTH[phase]
    dur = a + b * mib
    if phase == "shuffle" and mib > SHUFFLE_BREAK_MIB:
        dur += (SHUFFLE_SLOPE_ABOVE - b) * (mib - SHUFFLE_BREAK_MIB)
    return dur


def write_straggler_csv(path: Path, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    lines = ["phase,data_bytes,dur_ms,run_id"]
    for phase in TRUTH:
        for i in range(POINTS_PER_PHASE):
            mib = float(rng.choice(SIZES_MIB))
            dur = true_ms(phase, mib) * rng.normal(1.0, NOISE)
            if rng.random() < STRAGGLERS:
                dur *= rng.uniform(2.0, 5.0)  # a straggler: slow, never fast
            lines.append(f"{phase},{int(mib * MIB)},{dur:.2f},run{i % 12}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _fit_and_eval(tmp_path: Path, seed: int, *norm: str) -> tuple[dict[tuple[str, int], float], str]:
    runner = CliRunner()
    model = tmp_path / "platform.json"
    csv_path = write_straggler_csv(tmp_path / "stragglers.csv", seed)
    res = runner.invoke(main, ["fit", "--from-csv", str(csv_path), "--out", str(model), *norm])
    assert res.exit_code == 0, res.output
    errors = {}
    for phase in TRUTH:
        for mib in EVAL_MIB:
            out = runner.invoke(main, ["platform", "eval", str(model), "--phase", phase,
                                       "--bytes", str(mib * MIB), "--format", "json"])
            assert out.exit_code == 0, out.output
            errors[phase, mib] = json.loads(out.stdout)["dur_ms"] / true_ms(phase, mib) - 1.0
    return errors, res.stderr


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_default_fit_recovers_lines_despite_stragglers(tmp_path: Path, seed: int) -> None:
    errors, stderr = _fit_and_eval(tmp_path, seed)
    assert stderr.splitlines()[0].startswith("platform model (tukey norm)")
    assert "ConvergenceWarning" not in stderr
    worst = max(errors, key=lambda k: abs(errors[k]))
    assert abs(errors[worst]) <= REL_TOL, f"{worst}: {errors[worst]:+.2%}"
    doc = json.loads((tmp_path / "platform.json").read_text())
    shuffle = doc["phases"]["shuffle"]
    assert shuffle["break_bytes"] == pytest.approx(SHUFFLE_BREAK_MIB * MIB, rel=0.05)
    for seg in (s for p in doc["phases"].values() for s in p["segments"]):
        assert seg["converged"]
        assert seg["norm"] == "tukey"
        assert min(seg["intercept_se"], seg["slope_se"], seg["scale_ms"]) > 0


def test_huber_is_biased_by_the_same_stragglers(tmp_path: Path) -> None:
    """The test has teeth: Huber's T (``--norm huber``) misses the same lines by more than 2 %."""
    errors: list[float] = []
    for seed in (0, 1, 2, 3):
        (tmp_path / str(seed)).mkdir()
        errors += _fit_and_eval(tmp_path / str(seed), seed, "--norm", "huber")[0].values()
    assert max(abs(e) for e in errors) > REL_TOL
    assert sum(e > 0 for e in errors) > 0.8 * len(errors)  # biased up, toward the slow side
