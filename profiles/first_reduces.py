"""The first reduces of one JVM: what they spend beyond the later ones is a one-time term.

LocalJobRunner runs a job's reduces one after another (or a few at once) in the JVM that ran its
maps.  The first reduce loads and compiles the reduce side's code (the merge of the map outputs,
the user's reducer, the output format); the later reduces inherit it.  In the LocalJobRunner
profiles of the backtest's fixed-map runs (4 MiB, two reduces on one reduce slot, no warm-up)
sort's first reduce spent 317 and 307 ms after its shuffle, its second 167 and 190 ms on as many
records; word count's ``reduce+write`` span took 214-233 ms in the first and 42-46 ms in the
second.  Averaged in, that warm-up becomes a cost per record (the reduce function's, from the
``reduce+write`` span less the platform's write), and a run eight times larger pays it eight
times: group-by at 32 MiB was over-predicted by 107-142 % (benchmarks/BACKTEST.md, "The first
reduce of one JVM").

So, as :mod:`profiles.task_costs` does for the maps (ARIA's first wave apart from the typical
one: Verma et al. 2011, section 3; the typical task of Zhang et al. 2013, section 5), where the
reduces shared one JVM and some ran in a later wave, the typical reduce is the later waves' and
what each first-wave reduce spent beyond it, per reduce slot, is a term a prediction adds once
per job (:mod:`predict.reduce_one_time`).  A first reduce with more input than the typical one
is compared with the typical reduce scaled to its records, so that a skewed partition's work is
not taken for warm-up.  The shuffle stays as profiled: ARIA's first shuffle is its own stage.
Runs whose reduces each started a JVM (a cluster), or that had no later reduce, are unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pandas as pd

from phaseline.schemas import Phase
from profiles.profile import JobProfile

__all__ = ["SHUFFLE_SIDE", "FirstReduces", "split_first_reduces", "typical_reduces", "with_reduce_evidence"]

#: A reduce's task-log phases before its reduce phase: a first-wave reduce keeps them in the profile.
SHUFFLE_SIDE = frozenset({Phase.SHUFFLE.value, "wait"})


@dataclass(frozen=True, slots=True)
class FirstReduces:
    """The first wave of one JVM's reduces, set apart from the typical reduce.

    Attributes
    ----------
    one_time_ms
        What the first wave's reduces spent after their shuffle beyond the typical reduce, per
        reduce slot (> 0): added once per job.
    left_out
        Attempt ids of the first wave's reduces (their shuffles are kept: ARIA's first shuffle).
    later_count
        Reduces of later waves: what the typical reduce is.
    """

    one_time_ms: float
    left_out: frozenset[str]
    later_count: int

    @property
    def evidence(self) -> str:
        """One line: where the typical reduce came from."""
        return (
            f"per-task reduce cost from the {self.later_count} reduce(s) of later waves (one JVM: the first "
            f"wave loads and compiles the reduce side); the first wave's {len(self.left_out)} reduce(s) left "
            f"out, their extra {self.one_time_ms:.0f} ms per slot added once per job"
        )

    def profile_fields(self) -> dict[str, Any]:
        """The :class:`~profiles.profile.JobProfile` fields that record it."""
        return {"reduce_one_time_ms": self.one_time_ms, "reduce_tasks_left_out": len(self.left_out)}

    def typical(
        self, attempts: pd.DataFrame, phases: pd.DataFrame, stages: pd.DataFrame
    ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """The run's attempt, phase and ``reduce_stages`` rows without the first wave's reduces, but
        for their shuffle (their ``shuffle`` and ``wait`` phases, their first shuffle)."""
        out = attempts["attempt_id"].isin(self.left_out)
        kept = phases["phase"].isin(SHUFFLE_SIDE) | ~phases["attempt_id"].isin(self.left_out)
        apart = stages["attempt_id"].isin(self.left_out)
        after_shuffle = [c for c in ("reduce_phase_ms", "reduce_task_ms") if c in stages.columns]
        stages = stages.copy()
        stages.loc[apart, after_shuffle] = pd.NA
        return attempts[~out], phases[kept], stages


def split_first_reduces(stages: pd.DataFrame, counters: pd.DataFrame, *, one_jvm: bool) -> FirstReduces | None:
    """The first wave of reduces set apart (module docstring), or ``None`` where nothing is.

    ``stages`` are the run's ``reduce_stages.sql`` rows (``attempt_id``, ``wave``,
    ``reduce_phase_ms``), ``counters`` its reduces' ``attempt_id`` and ``reduce_input_records``.

    >>> st = pd.DataFrame({"attempt_id": ["r0", "r1"], "wave": [1, 2], "reduce_phase_ms": [320.0, 170.0]})
    >>> c = pd.DataFrame({"attempt_id": ["r0", "r1"], "reduce_input_records": [1000, 1000]})
    >>> split_first_reduces(st, c, one_jvm=True).one_time_ms
    150.0
    >>> split_first_reduces(st, c, one_jvm=False) is None
    True
    """
    if not one_jvm or stages.empty:
        return None
    durations = pd.to_numeric(stages["reduce_phase_ms"], errors="coerce")
    known = stages[durations.notna()].assign(reduce_phase_ms=durations[durations.notna()].astype(float))
    first, later = known[known["wave"] == 1], known[known["wave"] > 1]
    if first.empty or later.empty:
        return None
    records = pd.to_numeric(counters.set_index("attempt_id")["reduce_input_records"], errors="coerce")
    typical_ms = float(later["reduce_phase_ms"].mean())
    typical_recs = float(records.reindex(later["attempt_id"]).mean())
    extra = 0.0
    for attempt_id, ms in zip(first["attempt_id"], first["reduce_phase_ms"], strict=True):
        recs = records.get(attempt_id)
        scale = recs / typical_recs if typical_recs > 0 and pd.notna(recs) else 1.0
        extra += ms - typical_ms * max(1.0, float(scale))
    one_time = extra / len(first)
    if one_time <= 0:  # the first wave was no slower than the later ones: nothing to set apart
        return None
    return FirstReduces(one_time, frozenset(str(a) for a in first["attempt_id"]), len(later))


def typical_reduces(
    stages: pd.DataFrame, counters: pd.DataFrame, attempts: pd.DataFrame, phases: pd.DataFrame, *, one_jvm: bool
) -> tuple[FirstReduces | None, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """:func:`split_first_reduces`, and the run's attempt, phase and ``reduce_stages`` rows of its typical
    reduces (:meth:`FirstReduces.typical`; as given where nothing is set apart)."""
    split = split_first_reduces(stages, counters, one_jvm=one_jvm)
    if split is None:
        return None, attempts, phases, stages
    return split, *split.typical(attempts, phases, stages)


def with_reduce_evidence(profile: JobProfile) -> JobProfile:
    """A merged profile whose evidence line (rebuilt by the merge) says, where its runs set first reduces
    apart, what became of them (a run's own line says it in :attr:`FirstReduces.evidence`)."""
    if not profile.reduce_one_time_ms:
        return profile
    line = (f"per-task reduce cost from the reduces of later waves ({profile.reduce_tasks_left_out} first reduce(s) "
            f"of one JVM left out, their extra {profile.reduce_one_time_ms:.0f} ms per slot added once per job)")  # fmt: skip
    evidence = f"{profile.cost_evidence}; {line}" if profile.cost_evidence else line
    return dataclasses.replace(profile, cost_evidence=evidence)
