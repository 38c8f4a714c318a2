"""Reading a saved platform model: every field of the JSON document checked, the bad one named.

:meth:`platform_model.model.PlatformModel.load` and ``from_json`` call :func:`model_fields`; the
document's shape is :meth:`~platform_model.model.PlatformModel.to_json`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from phaseline.errors import PlatformModelError
from phaseline.jsonnum import json_int
from platform_model.fit import LineFit, Norm
from platform_model.model import _LINE_FIELDS, MODEL_FORMAT, SUPPORTED_VERSIONS, PhaseModel
from platform_model.profile import GENERIC
from platform_model.segments import Criterion, ShuffleThresholds

__all__ = ["load_phase", "model_fields"]

Bad = Callable[[str], PlatformModelError]


def model_fields(doc: Any, where: str) -> dict[str, Any]:
    """The :class:`~platform_model.model.PlatformModel` fields of a JSON document, validated."""
    def bad(what: str) -> PlatformModelError:
        return PlatformModelError(f"{where}: {what} (re-create it with `phaseline fit`)")

    if isinstance(doc, dict) and "format" not in doc and {"source", "input"} <= doc.keys():
        raise PlatformModelError(f"{where} is a job profile (`phaseline profile`), not a platform model")
    if not isinstance(doc, dict) or doc.get("format") != MODEL_FORMAT:
        raise bad(f"not a {MODEL_FORMAT} file")
    if isinstance(doc.get("version"), bool) or doc.get("version") not in SUPPORTED_VERSIONS:
        raise bad(f"version {doc.get('version')!r} is not supported (supported: {SUPPORTED_VERSIONS})")
    raw_phases = doc.get("phases")
    if not isinstance(raw_phases, dict):
        raise bad("'phases' must be an object")
    norm = doc.get("norm", Norm.HUBER.value)
    if not isinstance(norm, str) or norm not in {n.value for n in Norm}:
        raise bad(f"unknown norm {norm!r}")
    phases: dict[str, PhaseModel] = {}
    for name, p in raw_phases.items():
        if name not in GENERIC:
            raise bad(f"unknown phase {name!r}")
        phases[name] = load_phase(name, p, bad)
    thresholds = None
    if doc.get("shuffle_thresholds") is not None:
        try:
            thresholds = ShuffleThresholds(**doc["shuffle_thresholds"])
        except TypeError as exc:
            raise bad(f"shuffle_thresholds: {exc}") from exc
    for key in ("cluster", "hadoop_settings", "unfitted"):
        if not isinstance(doc.get(key, {}), dict):
            raise bad(f"'{key}' must be an object")
    return {
        "phases": phases,
        "unfitted": {str(k): str(v) for k, v in doc.get("unfitted", {}).items()},
        "norm": norm,
        "cluster": doc.get("cluster", {}),
        "hadoop_settings": {str(k): str(v) for k, v in doc.get("hadoop_settings", {}).items()},
        "shuffle_thresholds": thresholds,
        "source": str(doc.get("source", "")),
        "created_at": str(doc.get("created_at", "")),
        "version": int(doc["version"]),
    }


def _float(value: Any, what: str, bad: Bad, *, allow_none: bool = False) -> float:
    if value is None and allow_none:
        return float("nan")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise bad(f"{what} must be a finite number, got {value!r}")
    return float(value)


def _count(value: Any, what: str, bad: Bad) -> int:
    """A count field: a non-negative integer (a float of integral value too)."""
    if (n := json_int(value)) is None or n < 0:
        raise bad(f"{what} must be an integer >= 0, got {value!r}")
    return n


def load_phase(name: str, p: Any, bad: Bad) -> PhaseModel:
    if not isinstance(p, dict):
        raise bad(f"phases.{name} must be an object")
    segs_raw = p.get("segments")
    if not isinstance(segs_raw, list) or len(segs_raw) not in (1, 2):
        raise bad(f"phases.{name}.segments must hold one or two lines")
    segments = []
    for i, s in enumerate(segs_raw):
        where = f"phases.{name}.segments[{i}]"
        if not isinstance(s, dict):
            raise bad(f"{where} must be an object")
        missing = [f for f in _LINE_FIELDS if f not in s]
        if missing:
            raise bad(f"{where} lacks {', '.join(missing)}")
        if not isinstance(s["norm"], str) or s["norm"] not in {n.value for n in Norm}:
            raise bad(f"{where}.norm {s['norm']!r} is unknown")
        if isinstance(s["slope_ms_per_byte"], (int, float)) and s["slope_ms_per_byte"] < 0:
            raise bad(f"{where}.slope_ms_per_byte is negative ({s['slope_ms_per_byte']!r}); fits refit such a line at 0")
        segments.append(
            LineFit(
                intercept_ms=_float(s["intercept_ms"], f"{where}.intercept_ms", bad),
                slope_ms_per_byte=_float(s["slope_ms_per_byte"], f"{where}.slope_ms_per_byte", bad),
                intercept_se=_float(s["intercept_se"], f"{where}.intercept_se", bad, allow_none=True),
                slope_se=_float(s["slope_se"], f"{where}.slope_se", bad, allow_none=True),
                scale_ms=_float(s["scale_ms"], f"{where}.scale_ms", bad, allow_none=True),
                converged=bool(s["converged"]),
                iterations=_count(s["iterations"], f"{where}.iterations", bad),
                n=_count(s["n"], f"{where}.n", bad),
                norm=Norm(s["norm"]),
                nonneg_refit=bool(s["nonneg_refit"]),
                data_min_bytes=_float(s["data_min_bytes"], f"{where}.data_min_bytes", bad),
                data_max_bytes=_float(s["data_max_bytes"], f"{where}.data_max_bytes", bad),
                note=str(s.get("note", "")),
            )
        )
    brk = p.get("break_bytes")
    if (brk is None) != (len(segments) == 1):
        raise bad(f"phases.{name}: break_bytes must be given exactly when there are two segments")
    lo = _float(p.get("data_min_bytes"), f"phases.{name}.data_min_bytes", bad)
    hi = _float(p.get("data_max_bytes"), f"phases.{name}.data_max_bytes", bad)
    if lo > hi or lo < 0:
        raise bad(f"phases.{name}: data range [{lo}, {hi}] is invalid")
    if brk is not None:
        brk = _float(brk, f"phases.{name}.break_bytes", bad)
        if not lo <= brk <= hi:
            raise bad(f"phases.{name}: break_bytes {brk} lies outside the data range [{lo}, {hi}]")
    for i, seg in enumerate(segments):
        if not lo <= seg.data_min_bytes <= seg.data_max_bytes <= hi:
            raise bad(
                f"phases.{name}.segments[{i}]: data range [{seg.data_min_bytes}, {seg.data_max_bytes}] does not lie "
                f"within the phase's [{lo}, {hi}]"
            )
    if len(segments) == 2 and not (
        segments[0].data_min_bytes <= segments[1].data_min_bytes and segments[0].data_max_bytes <= segments[1].data_max_bytes
    ):
        # the first line prices data up to the break, the second beyond it: swapped, every size got the other's price
        raise bad(f"phases.{name}.segments: the first line must hold the smaller data (the two are swapped)")
    test = p.get("two_segment_test") or {}
    if not isinstance(test, dict):
        raise bad(f"phases.{name}.two_segment_test must be an object")
    cfg = p.get("config_break_bytes")
    return PhaseModel(
        phase=name,
        segments=tuple(segments),
        break_bytes=brk,
        config_break_bytes=None if cfg is None else _float(cfg, f"phases.{name}.config_break_bytes", bad),
        n=_count(p.get("n", 0), f"phases.{name}.n", bad),
        runs=_count(p.get("runs", 0), f"phases.{name}.runs", bad),
        data_min_bytes=lo,
        data_max_bytes=hi,
        criterion=str(test.get("criterion", Criterion.BIC.value)),
        rbic_one=_float(test.get("rbic_one"), "rbic_one", bad, allow_none=True),
        rbic_two=_float(test.get("rbic_two"), "rbic_two", bad, allow_none=True),
        f_stat=_float(test.get("f_stat"), "f_stat", bad, allow_none=True),
        f_pvalue=_float(test.get("f_pvalue"), "f_pvalue", bad, allow_none=True),
        effect=_float(test.get("effect"), "effect", bad, allow_none=True),
    )
