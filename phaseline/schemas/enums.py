"""The store's fixed sets of values: task types, statuses, phases, counter scopes, thread states;
and :func:`normalize_status`, which maps Hadoop's spellings of a status to one."""

from __future__ import annotations

import enum


class TaskType(enum.StrEnum):
    """Task types, normalized across Hadoop versions (0.20's ``MAP`` and 2.x's ``MAP``...)."""

    MAP = "MAP"
    REDUCE = "REDUCE"
    SETUP = "SETUP"
    CLEANUP = "CLEANUP"
    TASK_CLEANUP = "TASK_CLEANUP"


class Status(enum.StrEnum):
    """Normalized task/attempt/job statuses; raw values stay in ``events``."""

    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    KILLED = "KILLED"
    RUNNING = "RUNNING"
    ERROR = "ERROR"


class SourceStatus(enum.StrEnum):
    """What became of one ingested file."""

    LANDED = "landed"  # every record landed
    PARTIAL = "partial"  # a truncated file (what came before the cut landed) or one with unreadable records skipped (the rest landed); error says where
    QUARANTINED = "quarantined"  # nothing landed; error says file, place and problem
    SKIPPED = "skipped"  # recognised as not a trace phaseline reads (e.g. a Spark event log)


class Phase(enum.StrEnum):
    """Phase names used everywhere (``attempt_phases.phase``, profiles, models).

    The six generic phases of Zhang et al. 2013 are READ, COLLECT, SPILL, MERGE
    (map side) and SHUFFLE, WRITE (reduce side); MAP and REDUCE are the custom
    (user function) phases; SORT is the reduce-side merge/sort.  A source that
    cannot split a span names the combined phase, e.g. ``"reduce+write"``.
    """

    READ = "read"
    MAP = "map"
    COLLECT = "collect"
    SPILL = "spill"
    MERGE = "merge"
    SHUFFLE = "shuffle"
    SORT = "sort"
    REDUCE = "reduce"
    WRITE = "write"


GENERIC_PHASES: tuple[Phase, ...] = (
    Phase.READ,
    Phase.COLLECT,
    Phase.SPILL,
    Phase.MERGE,
    Phase.SHUFFLE,
    Phase.WRITE,
)


class CounterScope(enum.StrEnum):
    JOB_TOTAL = "job_total"
    JOB_MAP = "job_map"
    JOB_REDUCE = "job_reduce"
    TASK = "task"
    ATTEMPT = "attempt"


_STATUS_ALIASES = {
    "SUCCESS": Status.SUCCEEDED,
    "SUCCEEDED": Status.SUCCEEDED,
    "FAILED": Status.FAILED,
    "FAILURE": Status.FAILED,
    "KILLED": Status.KILLED,
    "RUNNING": Status.RUNNING,
    "ERROR": Status.ERROR,
}


def normalize_status(raw: str | None) -> str | None:
    """Map a raw Hadoop status (``SUCCESS``, ``SUCCEEDED``, ``FAILED``...) to :class:`Status`.

    >>> normalize_status("SUCCESS")
    'SUCCEEDED'
    >>> normalize_status(None) is None
    True
    """
    if raw is None or raw == "":
        return None
    status = _STATUS_ALIASES.get(raw.strip().upper())
    return status.value if status is not None else raw.strip().upper()


class ThreadState(enum.StrEnum):
    """Java thread states of a sample (``Thread.State``), plus UNKNOWN; RUNNABLE is busy."""

    NEW = "NEW"
    RUNNABLE = "RUNNABLE"
    BLOCKED = "BLOCKED"
    WAITING = "WAITING"
    TIMED_WAITING = "TIMED_WAITING"
    TERMINATED = "TERMINATED"
    UNKNOWN = "UNKNOWN"
