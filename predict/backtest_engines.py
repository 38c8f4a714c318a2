"""The backtest on two engines, side by side (issue 42).

The same applications at the same sizes, run once on LocalJobRunner (every
task in one JVM) and once on a YARN cluster (every task in its own container
JVM), each backtested from its own profile and its own platform model
(``phaseline backtest --suite local [--engine yarn]`` writes a
``backtest.json`` per engine).  Side by side, per model and per application
set (held-out first), each engine's errors are computed over the cases both
engines ran: an application, at the same extrapolation (case input over
profiled input), so that neither engine is scored on a case the other lacks.
A LocalJobRunner case may be there at several map slots; each is a case.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phaseline.errors import PhaselineError
from predict.backtest import BacktestRow
from predict.backtest_scores import ModelSummary, summarize
from predict.suite import app_set

__all__ = ["EngineSummary", "load_rows", "side_by_side"]

#: Two cases are at the same extrapolation when their scales agree to this many digits.
_SCALE_DIGITS = 1


def load_rows(path: str | Path) -> list[BacktestRow]:
    """The rows of a ``backtest.json`` (:meth:`predict.backtest_suite.SuiteResult.to_json`).

    Raises
    ------
    PhaselineError
        The file is not a backtest document (names the file and what is missing).
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return [BacktestRow.from_dict(r) for r in doc["rows"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PhaselineError(f"{path}: not a backtest.json ({type(exc).__name__}: {exc})") from exc


@dataclass(frozen=True, slots=True)
class EngineSummary:
    """One model's errors on one engine, over one application set's common cases."""

    group: str  # "held-out", "tuning", "all"
    engine: str
    summary: ModelSummary

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "engine": self.engine, **self.summary.to_dict()}


def _key(row: BacktestRow) -> tuple[str, float | None]:
    return (row.job, None if row.scale is None else round(row.scale, _SCALE_DIGITS))


def side_by_side(engines: Mapping[str, Sequence[BacktestRow]]) -> list[EngineSummary]:
    """Every engine's per-model summary over the cases all engines ran, overall and per set.

    Rows come grouped: ``held-out`` first, then ``tuning``, then ``all``; within a group by
    model, then in the order ``engines`` gives them.  An application the suite does not
    know (set ``other``) counts in ``all`` only.

    Raises
    ------
    PhaselineError
        Fewer than two engines, or no case that every engine ran.
    """
    if len(engines) < 2:
        raise PhaselineError(f"a side-by-side needs two engines' backtests, got {len(engines)}")
    common = set.intersection(*({_key(r) for r in rows} for rows in engines.values()))
    if not common:
        raise PhaselineError(
            "the engines' backtests share no case (the same application at the same extrapolation): "
            "run both suites with the same --sizes"
        )
    out: list[EngineSummary] = []
    for group in ("held-out", "tuning", "all"):
        per_engine = {}
        for engine, rows in engines.items():
            kept = [r for r in rows if _key(r) in common and group in ("all", app_set(r.job))]
            per_engine[engine] = {s.model: s for s in summarize(kept)}
        models = sorted(set.union(*(set(s) for s in per_engine.values())))
        for model in models:
            out.extend(
                EngineSummary(group, engine, by_model[model])
                for engine, by_model in per_engine.items()
                if model in by_model
            )
    return out
