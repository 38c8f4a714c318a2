"""The typical map of one JVM's few maps, built phase by phase (the phase floor).

A LocalJobRunner profile of a few maps takes the fastest map as the typical one
(:mod:`profiles.task_costs`, "Tasks of one JVM"): a task is never faster than
its warm cost.  The JVM's warm-up does not stall whole maps, though: a blocking
compile stalls the one phase that triggered it.  In the backtest suite's
two-slot, 4-map profile of topn, the first two maps spent 696 and 710 ms
reading and mapping.  The third spent 16 ms in the same phase and 45 ms
spilling; the fourth 62 ms and 7 ms.  In a run eight times larger the later
maps' medians were 11 ms and 7 ms.  The fastest map (70 ms) held one stalled
phase and was twice a warm map; the least of each phase over the four maps
(28 ms) was not.

So where the typical map is the fastest one, it is built from each phase's
least time over the run's maps (the *floor*, ``timeit``'s least of its
repeats taken phase by phase).  This works only where the phases tile every
map's span, one task-log lane from start to finish: there the floor is a
whole map.  Everything the maps spent above it becomes the one-time term.
The work is kept: ``n x floor + slots x one-time`` is the run's total map time.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from profiles.task_costs import FirstWaveSplit

__all__ = ["PhaseFloor", "phase_floor", "typical_maps"]

#: A map's phases tile its span when their durations add up to it within this share (clock rounding).
TILE_RTOL = 0.01


@dataclass(frozen=True, slots=True)
class PhaseFloor:
    """The typical map built phase by phase: one attempt row, its phase rows, and its duration."""

    attempt: pd.DataFrame
    phases: pd.DataFrame
    typical_ms: float

    def split(self, split: FirstWaveSplit, durations_ms: pd.Series) -> FirstWaveSplit:
        """``split`` with the floor for its typical map: every map contributes, none is left out, and
        what the maps spent above the floor is the one-time term."""
        n = len(durations_ms)
        return dataclasses.replace(
            split,
            typical_avg_ms=self.typical_ms,
            typical_max_ms=self.typical_ms,
            typical_count=n,
            one_time_ms=max(float(durations_ms.sum()) - n * self.typical_ms, 0.0) / split.slots,
            left_out=0,
            max_extra_ms=max(float(durations_ms.max()) - self.typical_ms, 0.0),
            floored=True,
        )


def _tiled(maps: pd.DataFrame, phases: pd.DataFrame) -> bool:
    """Whether every map's phases come from one task-log lane and add up to its span."""
    if phases.empty or phases["source"].nunique() != 1 or phases["lane"].nunique() != 1:
        return False
    covered = phases.groupby("attempt_id")["dur_ms"].sum()
    spans = maps.set_index("attempt_id")["dur_ms"].astype(float)
    if set(covered.index) != set(spans.index):
        return False
    gap = (covered[spans.index].astype(float) - spans).abs()
    return bool((gap <= TILE_RTOL * spans.clip(lower=1.0) + 1.0).all())


def phase_floor(maps: pd.DataFrame, phases: pd.DataFrame, attempt_id: str) -> PhaseFloor | None:
    """The floor of ``maps`` (attempt rows) from their ``phases`` rows, as one attempt ``attempt_id``
    whose phases follow one another in the order a map runs them; ``None`` where the phases do not
    tile every map's span (module docstring) or there are fewer than two maps."""
    if len(maps) < 2 or not _tiled(maps, phases):
        return None
    per = phases.groupby(["phase", "attempt_id"], as_index=False, sort=False)["dur_ms"].sum()
    order = phases.groupby("phase", sort=False)["seq"].min().sort_values()
    rows = []
    for phase in order.index:
        candidates = per[per["phase"] == phase]
        if len(candidates) < len(maps):  # a phase some maps skip: its floor is 0
            continue
        least = candidates.loc[candidates["dur_ms"].astype(float).idxmin(), "attempt_id"]
        rows.append(phases[(phases["phase"] == phase) & (phases["attempt_id"] == least)])
    floor = pd.concat(rows, ignore_index=True)
    start = int(maps["start_ms"].min())
    ends = start + floor["dur_ms"].astype("int64").cumsum()
    floor = floor.assign(attempt_id=attempt_id, start_ms=ends - floor["dur_ms"].astype("int64"), end_ms=ends)
    typical = float(floor["dur_ms"].sum())
    attempt = maps.iloc[[0]].assign(attempt_id=attempt_id, start_ms=start, finish_ms=start + int(typical),
                                    dur_ms=typical)  # fmt: skip
    return PhaseFloor(attempt, floor, typical)


def typical_maps(
    split: FirstWaveSplit | None, atypical: frozenset[str], ok: pd.DataFrame, ok_phases: pd.DataFrame, job_id: str
) -> tuple[FirstWaveSplit | None, pd.DataFrame, pd.DataFrame]:
    """The run's typical attempts and their phases (``ok``, ``ok_phases`` without the ``atypical``
    ones) and ``split``; where the typical map is the fastest one (one JVM) and the maps' floor is
    faster still, the floor in its place (module docstring)."""
    typ_ok, typ_phases = ok[~ok["attempt_id"].isin(atypical)], ok_phases[~ok_phases["attempt_id"].isin(atypical)]
    if split is None or not split.fastest:
        return split, typ_ok, typ_phases
    maps, map_phases = ok[ok["task_type"] == "MAP"], ok_phases[ok_phases["task_type"] == "MAP"]
    floor = phase_floor(maps, map_phases, f"{job_id}:phase-floor")
    if floor is None or floor.typical_ms >= split.typical_avg_ms:  # the fastest map is its own floor
        return split, typ_ok, typ_phases
    return (
        floor.split(split, maps["dur_ms"].astype(float)),
        pd.concat([typ_ok[typ_ok["task_type"] != "MAP"], floor.attempt], ignore_index=True),
        pd.concat([typ_phases[typ_phases["task_type"] != "MAP"], floor.phases], ignore_index=True),
    )
