"""Which phase spans a profile reads, and what they give: each phase from the task type that owns
it, a task-log phase's time per byte or record, and the part of a task no generic phase covers
(its overhead)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from phaseline.schemas import Phase
from profiles.run_counters import ratio

__all__ = ["overheads", "own_side", "per_unit"]

#: The phases a map task runs (Zhang et al. 2013's map side, with the custom map phase).
_MAP_SIDE = frozenset({Phase.READ.value, Phase.MAP.value, Phase.COLLECT.value, Phase.SPILL.value, Phase.MERGE.value})
_REDUCE_SIDE = frozenset(p.value for p in Phase) - _MAP_SIDE


def own_side(phases: pd.DataFrame) -> pd.DataFrame:
    """The rows of each phase from the task type that owns it.

    A name can occur on both sides: a map's final ``merge`` and a reduce's
    background merges during the shuffle.  Map-side phases (:data:`_MAP_SIDE`,
    by a combined name's first part) keep their MAP rows, the others
    (shuffle, sort, reduce, write) their REDUCE rows; a phase the owning type
    lacks keeps the other's (``write`` of a map-only job).  Names outside
    :class:`Phase` (``setup``, ``commit``) keep every row.  Mixed, TeraSort's
    ``merge`` averaged 76 map merges of 0.7 s with one reduce's 34 s of
    background merging into 1.2 s, which a predictor scaled as the map merge.
    """
    first = phases["phase"].astype(str).str.split("+").str[0]
    owner = first.map(lambda p: "MAP" if p in _MAP_SIDE else "REDUCE" if p in _REDUCE_SIDE else None)
    own = phases["task_type"] == owner
    has_own = own.groupby(phases["phase"]).transform("any")
    return phases[owner.isna() | own | ~has_own]


def per_unit(phases: pd.DataFrame, phase: str, unit: str) -> float | None:
    """Total duration of a task-log phase over the data it processed (ms per byte or record)."""
    rows = phases[(phases["phase"] == phase) & (phases["source"] == "tasklog")]
    rows = rows[rows[unit].notna()]
    if rows.empty:
        return None
    return ratio(rows["dur_ms"].sum(), rows[unit].sum())


def overheads(ok: pd.DataFrame, ok_phases: pd.DataFrame) -> dict[str, float]:
    """Mean part of a task's span that its task-log phases do not cover, per task type.

    History phases cover the span by construction, so only task-log attempts count.  Only
    the generic phases (:class:`~phaseline.schemas.Phase`, alone or combined, ``read+map+collect``)
    cover: the task log's own ``setup``, ``commit`` and ``other`` spans are the overhead itself
    (JVM start, setup, commit), and counted as covering they had made it 0 for every task log.
    """
    logs = ok_phases[(ok_phases["source"] == "tasklog") & ok_phases["phase"].map(_is_generic_phase)]
    if logs.empty:
        return {}
    spans = {
        str(a): (str(t), float(s), float(f))
        for a, t, s, f in zip(ok["attempt_id"], ok["task_type"], ok["start_ms"], ok["finish_ms"], strict=True)
    }
    out: dict[str, list[float]] = {}
    for attempt_id, group in logs.groupby("attempt_id"):
        if str(attempt_id) not in spans:
            continue
        task_type, start, finish = spans[str(attempt_id)]
        covered = _union_length(list(zip(group["start_ms"], group["end_ms"], strict=True)), start, finish)
        out.setdefault(str(task_type), []).append(max(float(finish - start) - covered, 0.0))
    return {k: sum(v) / len(v) for k, v in out.items()}


def _is_generic_phase(name: Any) -> bool:
    """Whether a phase name is one of the generic phases, or several joined by ``+``."""
    return isinstance(name, str) and all(part in _PHASE_NAMES for part in name.split("+"))


_PHASE_NAMES = frozenset(p.value for p in Phase)


def _union_length(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Length of the union of intervals clipped to [lo, hi]."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted((max(s, lo), min(e, hi)) for s, e in intervals):
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None and cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None and cur_s is not None:
        total += cur_e - cur_s
    return total
