"""The platform performance model M_Phases = (M_1, ..., M_6), fitted, saved and evaluated.

Zhang, Cherkasova and Loo (ICPE'13), section 4: one submodel per generic
phase (read, collect, spill, merge, shuffle, write), each ``Dur = A + B * Data``
(eq. 1) solved by robust regression, or two such lines over two data ranges
when the two-segment test prefers them (the shuffle phase, break at 3.2 GB).

:func:`fit_platform` fits it from a :class:`~platform_model.profile.PlatformProfile`;
:class:`PlatformModel` is the result, saved as versioned JSON with the data
range each submodel was fitted on and the cluster and Hadoop settings it holds
for.  :meth:`PlatformModel.duration_ms` is what the predictors call.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import orjson

from phaseline.errors import ExtrapolationWarning, InsufficientDataError, PlatformModelError
from platform_model.fit import DEFAULT_NORM, MIN_POINTS, LineFit, Norm
from platform_model.profile import GENERIC, PlatformProfile
from platform_model.segments import Criterion, PhaseFit, ShuffleThresholds, config_thresholds, fit_phase

MODEL_FORMAT = "phaseline-platform-model"
MODEL_VERSION = 1
SUPPORTED_VERSIONS = (1,)
#: A data size within one byte of a submodel's fitted range is inside it (rounding, not extrapolation).
RANGE_SLACK_BYTES = 1.0

_LINE_FIELDS = ("intercept_ms", "slope_ms_per_byte", "intercept_se", "slope_se", "scale_ms", "converged",
                "iterations", "n", "norm", "nonneg_refit", "data_min_bytes", "data_max_bytes")


@dataclass(frozen=True, slots=True)
class PhaseModel:
    """The submodel ``M_i`` of one generic phase.

    Attributes
    ----------
    phase
        The generic phase.
    segments
        One line, or two: below and above ``break_bytes``.
    break_bytes
        Where the second line takes over; None for one line.
    config_break_bytes
        The break the Hadoop configuration predicts (shuffle only; section 2), if known.
    n, runs
        Points and distinct runs fitted.
    data_min_bytes, data_max_bytes
        The fitted data range; predictions outside it warn.
    criterion, rbic_one, rbic_two, f_stat, f_pvalue, effect
        The two-segment test (see :mod:`platform_model.segments`).
    """

    phase: str
    segments: tuple[LineFit, ...]
    break_bytes: float | None
    config_break_bytes: float | None
    n: int
    runs: int
    data_min_bytes: float
    data_max_bytes: float
    criterion: str
    rbic_one: float
    rbic_two: float
    f_stat: float
    f_pvalue: float
    effect: float

    def predict(self, data_bytes: Any) -> Any:
        """Durations (ms, >= 0) for ``data_bytes`` (scalar or array), without range checks."""
        x = np.asarray(data_bytes, dtype=np.float64)
        if self.break_bytes is None:
            y = self.segments[0].predict(x)
        else:
            y = np.where(x <= self.break_bytes, self.segments[0].predict(x), self.segments[1].predict(x))
        return np.maximum(y, 0.0)

    @property
    def nonneg_refit(self) -> bool:
        """Some segment's slope came out negative and was refitted at zero."""
        return any(s.nonneg_refit for s in self.segments)


def _phase_model(fit: PhaseFit, runs: int, config_break: float | None) -> PhaseModel:
    return PhaseModel(
        phase=fit.phase,
        segments=fit.segments,
        break_bytes=fit.break_bytes,
        config_break_bytes=config_break,
        n=fit.n,
        runs=runs,
        data_min_bytes=fit.one_line.data_min_bytes,
        data_max_bytes=fit.one_line.data_max_bytes,
        criterion=fit.criterion.value,
        rbic_one=fit.rbic_one,
        rbic_two=fit.rbic_two,
        f_stat=fit.f_stat,
        f_pvalue=fit.f_pvalue,
        effect=fit.effect,
    )


@dataclass(frozen=True, slots=True)
class PlatformModel:
    """A fitted platform model (Zhang et al. 2013, section 4).

    Attributes
    ----------
    phases
        phase -> its submodel, for the phases the profile had data for.
    unfitted
        phase -> why it has no submodel (no rows; only combined spans; ...).
    norm
        Robust norm of the fits.
    cluster
        The cluster the benchmarks ran on (as the source described it).
    hadoop_settings
        The Hadoop configuration the model holds for.
    shuffle_thresholds
        Shuffle memory thresholds computed from ``hadoop_settings`` (section 2), if the reduce memory is known.
    source
        Where the profile came from.
    created_at
        ISO-8601 UTC time of the fit.
    version
        The JSON format version.
    """

    phases: Mapping[str, PhaseModel]
    unfitted: Mapping[str, str] = field(default_factory=dict)
    norm: str = Norm.HUBER.value
    cluster: Mapping[str, Any] = field(default_factory=dict)
    hadoop_settings: Mapping[str, str] = field(default_factory=dict)
    shuffle_thresholds: ShuffleThresholds | None = None
    source: str = ""
    created_at: str = ""
    version: int = MODEL_VERSION

    def __post_init__(self) -> None:
        for name in ("phases", "unfitted", "cluster", "hadoop_settings"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    # -- evaluation ----------------------------------------------------------------

    def submodel(self, phase: str) -> PhaseModel:
        """The submodel of ``phase``, or a :class:`PlatformModelError` saying why there is none."""
        key = str(phase).strip().lower()
        model = self.phases.get(key)
        if model is not None:
            return model
        if key in self.unfitted:
            raise PlatformModelError(f"the platform model has no submodel for phase {key!r}: {self.unfitted[key]}")
        raise PlatformModelError(
            f"unknown phase {phase!r}; the model has {', '.join(self.phases) or 'no phases'}"
            f" (generic phases: {', '.join(GENERIC)})"
        )

    def duration_ms(self, phase: str, data_bytes: float) -> float:
        """The predicted duration (ms) of ``phase`` processing ``data_bytes`` (Zhang et al. 2013, eq. 1).

        Negative predictions (a negative intercept at tiny data) are returned as 0.

        Warns
        -----
        ExtrapolationWarning
            ``data_bytes`` lies outside the data range the submodel was fitted on, by
            more than :data:`RANGE_SLACK_BYTES` (a size computed as a product or a
            quotient, e.g. a reduce's shuffle input of the profiled job, can miss the
            fitted end point by a rounding error).

        Raises
        ------
        PlatformModelError
            The phase is unknown or has no submodel; ``data_bytes`` is negative or not finite.
        """
        model = self.submodel(phase)
        x = float(data_bytes)
        if not math.isfinite(x) or x < 0:
            raise PlatformModelError(f"data_bytes must be a finite number >= 0, got {data_bytes!r}")
        if x < model.data_min_bytes - RANGE_SLACK_BYTES or x > model.data_max_bytes + RANGE_SLACK_BYTES:
            warnings.warn(
                ExtrapolationWarning(
                    f"phase {model.phase!r}: {x:.0f} bytes is outside the fitted range "
                    f"[{model.data_min_bytes:.0f}, {model.data_max_bytes:.0f}] bytes; the prediction extrapolates",
                    phase=model.phase,
                    data_bytes=x,
                    fitted=(model.data_min_bytes, model.data_max_bytes),
                ),
                stacklevel=2,
            )
        with np.errstate(over="ignore", invalid="ignore"):
            y = float(model.predict(x))
        if not math.isfinite(y):
            raise PlatformModelError(
                f"phase {model.phase!r}: the model's line gives no finite duration at {x:.0f} bytes (check its "
                "intercept and slope)"
            )
        return y

    # -- persistence -----------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The model as a JSON-ready document (see :meth:`load`)."""
        phases = {}
        for name, m in self.phases.items():
            phases[name] = {
                "n": m.n,
                "runs": m.runs,
                "data_min_bytes": m.data_min_bytes,
                "data_max_bytes": m.data_max_bytes,
                "break_bytes": m.break_bytes,
                "config_break_bytes": m.config_break_bytes,
                "two_segment_test": {
                    "criterion": m.criterion,
                    "rbic_one": _num(m.rbic_one),
                    "rbic_two": _num(m.rbic_two),
                    "f_stat": _num(m.f_stat),
                    "f_pvalue": _num(m.f_pvalue),
                    "effect": _num(m.effect),
                },
                "segments": [{f: _num(getattr(s, f)) for f in _LINE_FIELDS} | {"note": s.note} for s in m.segments],
            }
        thresholds = None
        if self.shuffle_thresholds is not None:
            t = self.shuffle_thresholds
            thresholds = {f: getattr(t, f) for f in ShuffleThresholds.__dataclass_fields__}
        return {
            "format": MODEL_FORMAT,
            "version": self.version,
            "created_at": self.created_at,
            "model": "Zhang, Cherkasova, Loo (ICPE 2013), section 4: Dur = A + B * Data per generic phase",
            "norm": self.norm,
            "source": self.source,
            "cluster": dict(self.cluster),
            "hadoop_settings": dict(self.hadoop_settings),
            "shuffle_thresholds": thresholds,
            "phases": phases,
            "unfitted": dict(self.unfitted),
        }

    def save(self, path: str | Path) -> Path:
        """Write the model as JSON (atomically); return the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(orjson.dumps(self.to_json(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> PlatformModel:
        """Read and validate a model written by :meth:`save`.

        Raises
        ------
        PlatformModelError
            Unreadable file, wrong format or version, or an invalid field (named).
        """
        path = Path(path)
        try:
            doc = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise PlatformModelError(f"{path}: cannot read a platform model: {exc}") from exc
        return cls.from_json(doc, where=str(path))

    @classmethod
    def from_json(cls, doc: Any, *, where: str = "<json>") -> PlatformModel:
        """Validate a JSON document (see :meth:`load`)."""
        from platform_model.model_json import model_fields  # (it builds this module's records)

        return cls(**model_fields(doc, where))


def _num(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _runs_needed(phase: str, n: int, runs: int) -> InsufficientDataError:
    per_run = n / runs if runs else 1.0
    more = math.ceil((MIN_POINTS - n) / max(per_run, 1e-9))
    return InsufficientDataError(
        f"phase {phase!r}: {n} point(s) from {runs} run(s), a submodel needs at least {MIN_POINTS}; "
        f"run about {more} more benchmark run(s) that record {phase} (at ~{per_run:.1f} point(s) per run)"
    )


def _fit_phase_rows(
    x: Any, y: Any, phase: str, n_runs: int, reasons: Counter[str] | None, *, norm: Norm, criterion: Criterion,
    split: bool,
) -> PhaseFit:
    """One phase's line(s); too few rows raise, saying what the runs that lack the phase lacked."""
    try:
        if x.size < MIN_POINTS:
            raise _runs_needed(phase, int(x.size), n_runs)
        return fit_phase(x, y, phase=phase, norm=norm, criterion=criterion, allow_split=split)
    except InsufficientDataError as exc:
        if not reasons:
            raise
        # what the other runs lacked is what to change (e.g. too few samples to split)
        raise InsufficientDataError(
            f"{exc}; the phase is missing from "
            + "; ".join(f"{c} other attempt(s): {r}" for r, c in reasons.most_common())
        ) from None


def fit_platform(
    profile: PlatformProfile,
    *,
    norm: Norm = DEFAULT_NORM,
    criterion: Criterion = Criterion.BIC,
    phases: Iterable[str] | None = None,
    split: bool = True,
    settings: Mapping[str, str] | None = None,
    cluster: Mapping[str, Any] | None = None,
    skip_unfittable: bool = False,
) -> PlatformModel:
    """Fit the platform model M_Phases from a platform profile (Zhang et al. 2013, section 4).

    Parameters
    ----------
    profile
        The training set.
    norm, criterion
        Robust norm and two-segment criterion.
    phases
        The phases to fit (default: the six generic phases).  A requested phase
        with no rows goes to :attr:`PlatformModel.unfitted` with the reason; one
        with too few rows is an error.
    split
        Run the two-segment test (False: one line per phase).
    settings, cluster
        Override/extend the Hadoop settings and cluster description recorded in the model.
    skip_unfittable
        A phase with too few rows, or rows at one data size only, goes to
        :attr:`PlatformModel.unfitted` with the reason instead of raising (the
        predictors then price it from the job's profiled span).  For callers
        that fit what their runs allow (the backtest suite); ``phaseline fit``
        keeps the error, which says what to run.

    Raises
    ------
    InsufficientDataError
        A phase has some rows but fewer than a line needs (the message names
        the phase and how many more runs are needed), or no phase has any rows.
    """
    wanted = tuple(phases) if phases is not None else GENERIC
    hadoop = dict(profile.settings) | dict(settings or {})
    thresholds = config_thresholds(hadoop)
    fitted: dict[str, PhaseModel] = {}
    unfitted: dict[str, str] = {}
    missing = profile.missing_summary()
    for phase in wanted:
        reasons = missing.get(phase)
        x, y, runs = profile.arrays(phase)
        if x.size == 0:
            why = "; ".join(f"{c} attempt(s): {r}" for r, c in reasons.most_common()) if reasons else "no rows"
            unfitted[phase] = f"no data ({why})"
            continue
        n_runs = len(set(runs.tolist())) if runs.size < 200_000 else int(np.unique(runs).size)
        try:
            fit = _fit_phase_rows(x, y, phase, n_runs, reasons, norm=norm, criterion=criterion, split=split)
        except InsufficientDataError as exc:
            if not skip_unfittable:
                raise
            unfitted[phase] = f"not fitted: {exc}"
            continue
        cfg_break = thresholds.break_bytes if (phase == "shuffle" and thresholds is not None) else None
        fitted[phase] = _phase_model(fit, n_runs, cfg_break)
    if not fitted:
        raise InsufficientDataError(
            "no generic phase has data to fit: "
            + "; ".join(f"{p}: {r}" for p, r in unfitted.items())
            + " (run the microbenchmarks: phaseline bench run, then phaseline fit)"
        )
    return PlatformModel(
        phases=fitted,
        unfitted=unfitted,
        norm=norm.value,
        cluster=dict(profile.cluster) | dict(cluster or {}),
        hadoop_settings=hadoop,
        shuffle_thresholds=thresholds,
        source=profile.source,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
