"""Every model on one scenario, side by side: ``phaseline predict``'s table.

What a model that cannot predict means depends on what was asked: among all
the models (``phaseline predict`` with no ``--model``, or ``all``) it is a row
that says why, and the others still run; a model asked for by name that
cannot predict is the answer, so its error is raised.  The models share the
task estimates (Zhang et al. 2013, section 5), so most assumptions are every
model's: :func:`shared_assumptions` states each once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from phaseline.errors import PhaselineError
from predict import core
from predict.calibration import Calibration
from predict.core import PhaseDurationModel
from predict.edits import Scenario
from profiles.profile import JobProfile

#: Who states an assumption when every model that ran does (and more than one ran).
EVERY_MODEL = "every model"


def predict_side_by_side(
    names: Sequence[str],
    profile: JobProfile,
    platform: PhaseDurationModel,
    scenario: Scenario,
    calibration: Calibration | None = None,
) -> list[dict[str, Any]]:
    """One row per model (:meth:`~predict.core.Prediction.to_dict` and ``error``): the models
    ``names`` in that order, or every registered model when ``names`` is empty or holds ``all``.
    With ``calibration`` (:mod:`predict.calibration`), each row also holds ``calibrated_low_s`` and
    ``calibrated_high_s``: its interval widened by the model's backtested errors (None where the
    calibration has none of its cases), the share of a like application's cases it promises to cover
    (``calibrated_promise``: the coverage asked, or less from too few applications), and the model's
    backtested error itself (``backtest_cases``, ``backtest_median_error``, ``backtest_worst_error``,
    as shares).

    Raises
    ------
    PhaselineError
        A model named in ``names`` (not ``all``) cannot predict the scenario.
    """
    every = not names or "all" in names
    rows: list[dict[str, Any]] = []
    for name in core.models() if every else names:
        try:
            p = core.get(name).predict(profile, platform, scenario.cluster, scenario.dataset, scenario.settings)
        except PhaselineError as exc:
            if not every:
                raise
            # the same keys as a prediction's (scripts read every row alike), empty
            rows.append({"model": name, "seconds": None, "low_s": None, "high_s": None, "stages": {},
                         "phases": {}, "dataflow": {}, "assumptions": [], "error": str(exc)})  # fmt: skip
            continue
        rows.append(p.to_dict() | {"error": None})
    if calibration is not None:
        for row in rows:
            row.update(_calibrated(row, calibration))
    return rows


def _calibrated(row: dict[str, Any], calibration: Calibration) -> dict[str, Any]:
    """A row's calibrated interval and its model's backtested error (None where the backtest lacks it)."""
    cal = calibration.models.get(row["model"])
    iv = None if cal is None or row["seconds"] is None else cal.interval(row["seconds"], row["low_s"], row["high_s"])
    low, high = iv if iv is not None else (None, None)
    return {
        "calibrated_low_s": low,
        "calibrated_high_s": high,
        "calibrated_promise": None if iv is None or cal is None else cal.promise,
        "backtest_cases": None if cal is None else cal.cases,
        "backtest_median_error": None if cal is None else cal.median_abs_error,
        "backtest_worst_error": None if cal is None else cal.worst_abs_error,
    }


def shared_assumptions(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each assumption of :func:`predict_side_by_side`'s rows once, with who states it: the
    models, comma-separated, or :data:`EVERY_MODEL` when every model that ran does."""
    stated: dict[str, list[str]] = {}
    for r in rows:
        for note in r.get("assumptions", []):
            stated.setdefault(note, []).append(r["model"])
    ran = [r["model"] for r in rows if not r.get("error")]
    return [
        (EVERY_MODEL if len(ran) > 1 and models == ran else ", ".join(models), note)
        for note, models in stated.items()
    ]


__all__ = ["EVERY_MODEL", "predict_side_by_side", "shared_assumptions"]
