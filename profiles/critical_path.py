"""The critical path of a measured run: the chain of attempts and phases that set its finish time.

Desai et al. 2012 model a distributed query as a dependence graph whose nodes
are the phases of tasks and whose edges are data and resource dependencies;
the critical path is the longest path through it.  For a run that already
happened every dependency was met, so the path is found backwards by following
the *last-arriving* dependency (the one whose completion actually released the
next step), starting from the job's end:

* the job ends after its last successful attempt (the gap is job commit/cleanup),
  a failed job after the attempt that failed it (:func:`_sink`);
* inside an attempt the phases of its task thread follow one another (lane
  ``main``; a helper thread's spill or merge, lane ``background``, runs beside
  them and is on the path only as the task thread's wait for it, its ``spill``
  after the flush);
* a reduce's shuffle cannot end before the last map output it fetches exists:
  when a map finished during the shuffle, the path jumps to that map at its
  finish (the shuffle's tail after it is on the path, its head is not);
* an attempt starts when something released it: the earlier attempt of the same
  task (a retry after a failure), the previous attempt on the same host (the
  slot it took over), for a reduce the map whose completion let it start
  (slow-start), for the job cleanup task the last map or reduce to finish; the latest of those to finish is the binding one, and the time
  between is a wait step.  Nothing before it: the wait runs from the job start.

The steps tile the interval [job start, job finish] without overlap, so the
path's length never exceeds the makespan; ``busy_ms`` is the part spent in
attempts, the rest is waiting.  The dependencies examined are kept as a
:class:`networkx.DiGraph` (``graph``) with the binding ones marked.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import duckdb
import networkx as nx
import numpy as np
import pandas as pd

from profiles import queries as q


class StepKind(enum.StrEnum):
    """What a step of the critical path is."""

    PHASE = "phase"  # a phase (or a part of one) of an attempt
    UNTRACKED = "untracked"  # inside an attempt, outside any phase its source knows
    WAIT = "wait"  # between the releasing attempt's finish and the next attempt's start
    START = "start"  # from the job start to the first attempt on the path
    END = "end"  # from the last attempt's finish to the job's finish (commit, cleanup)


class Release(enum.StrEnum):
    """Why an attempt could start (the kind of a dependency edge)."""

    RETRY = "retry"  # an earlier attempt of the same task ended
    SLOT = "slot"  # the previous attempt on the same host ended
    SLOWSTART = "slowstart"  # a map ended and the reduce could start
    SHUFFLE = "shuffle"  # a map output the reduce's shuffle waited for
    TASKS_DONE = "tasks done"  # the job cleanup task waits for every map and reduce


@dataclass(frozen=True, slots=True)
class PathStep:
    """One step of a critical path; ``share`` is ``dur_ms`` over the makespan."""

    kind: StepKind
    label: str
    start_ms: int
    end_ms: int
    attempt_id: str | None = None
    task_type: str | None = None
    host: str | None = None
    share: float = 0.0

    @property
    def dur_ms(self) -> int:
        return self.end_ms - self.start_ms


@dataclass(frozen=True, slots=True)
class CriticalPath:
    """The critical path of one measured run, oldest step first."""

    job_id: str
    start_ms: int
    finish_ms: int
    steps: tuple[PathStep, ...]
    graph: nx.DiGraph = field(compare=False, repr=False)

    @property
    def makespan_ms(self) -> int:
        return self.finish_ms - self.start_ms

    @property
    def length_ms(self) -> int:
        """Total length of the steps (equals the makespan when the job has attempts)."""
        return sum(s.dur_ms for s in self.steps)

    @property
    def busy_ms(self) -> int:
        """The part of the path spent inside attempts."""
        return sum(s.dur_ms for s in self.steps if s.kind in (StepKind.PHASE, StepKind.UNTRACKED))

    @property
    def attempts(self) -> tuple[str, ...]:
        """The attempts on the path, oldest first, each once."""
        seen: dict[str, None] = {}
        for s in self.steps:
            if s.attempt_id is not None:
                seen.setdefault(s.attempt_id)
        return tuple(seen)

    def to_frame(self) -> pd.DataFrame:
        """One row per step: kind, label, attempt_id, task_type, host, start_ms, end_ms, dur_ms, share."""
        cols = ["kind", "label", "attempt_id", "task_type", "host", "start_ms", "end_ms", "dur_ms", "share"]
        return pd.DataFrame(
            [
                [
                    str(s.kind),
                    s.label,
                    s.attempt_id,
                    s.task_type,
                    s.host,
                    s.start_ms,
                    s.end_ms,
                    s.dur_ms,
                    s.share,
                ]
                for s in self.steps
            ],
            columns=cols,
        )


def critical_path(
    con: duckdb.DuckDBPyConnection, job_id: str, *, frames: q.JobFrames | None = None
) -> CriticalPath:
    """The critical path of ``job_id`` as measured (see the module docstring); ``frames``: the
    job's :class:`~profiles.queries.JobFrames` when the caller has them."""
    frames = frames or q.JobFrames.query(con, job_id)
    return critical_path_of(job_id, frames.attempts, frames.phases, frames.summary)


def _int(v: Any) -> int | None:
    return None if v is None or pd.isna(v) else int(v)


class _Run:
    """Index of one job's attempts for the backward walk."""

    def __init__(self, timeline: pd.DataFrame, phases: pd.DataFrame) -> None:
        t = q.timed(timeline)
        self.rows: dict[str, dict[str, Any]] = {
            str(r["attempt_id"]): {str(k): v for k, v in r.items()} for r in t.to_dict("records")
        }
        self.by_host: dict[Any, list[str]] = {}
        self.by_task: dict[Any, list[str]] = {}
        for aid, r in self.rows.items():
            self.by_host.setdefault(r["host"], []).append(aid)
            self.by_task.setdefault(r["task_id"], []).append(aid)
        maps = [a for a, r in self.rows.items() if r["task_type"] == "MAP" and r["status"] == "SUCCEEDED"]
        maps.sort(key=lambda a: int(self.rows[a]["finish_ms"]))
        self.map_ids = maps
        self.map_finish = np.array([int(self.rows[a]["finish_ms"]) for a in maps], dtype=np.int64)
        self.phases: dict[str, list[tuple[int, int, str]]] = {}
        if "lane" in phases.columns:
            phases = phases[phases["lane"].isna() | (phases["lane"] == "main")]
        for aid, s, e, name in zip(
            phases["attempt_id"], phases["start_ms"], phases["end_ms"], phases["phase"], strict=True
        ):
            if s is not None and e is not None and not pd.isna(s) and not pd.isna(e):
                self.phases.setdefault(str(aid), []).append((int(s), int(e), str(name)))

    def finish(self, aid: str) -> int:
        return int(self.rows[aid]["finish_ms"])

    def start(self, aid: str) -> int:
        return int(self.rows[aid]["start_ms"])

    def last_map_in(self, lo: int, hi: int, visited: set[str]) -> str | None:
        """The successful map that finished last in (lo, hi]."""
        i = int(np.searchsorted(self.map_finish, hi, side="right")) - 1
        while i >= 0 and self.map_finish[i] > lo:
            if self.map_ids[i] not in visited:
                return self.map_ids[i]
            i -= 1
        return None


def critical_path_of(
    job_id: str, timeline: pd.DataFrame, phases: pd.DataFrame, summary: pd.Series | None = None
) -> CriticalPath:
    """The critical path from a job's timeline and phases frames (as :mod:`profiles.queries` returns them)."""
    run = _Run(timeline, phases)
    graph = nx.DiGraph()
    graph.add_node("job_start")
    graph.add_node("job_end")
    starts = [r["start_ms"] for r in run.rows.values()]
    finishes = [r["finish_ms"] for r in run.rows.values()]
    t_start = _int(summary["submit_ms"]) if summary is not None else None
    if t_start is None and summary is not None:
        t_start = _int(summary["launch_ms"])
    t_end = _int(summary["finish_ms"]) if summary is not None else None
    if not run.rows:
        lo = t_start or 0
        return CriticalPath(job_id, lo, max(t_end or lo, lo), (), graph)
    # the job's own record bounds the path; attempts outside it (clock skew between
    # hosts, anonymized traces) are clipped to it
    t_start = t_start if t_start is not None else int(min(starts))
    t_end = t_end if t_end is not None else int(max(finishes))
    t_end = max(t_end, t_start)

    steps: list[PathStep] = []

    def add(kind: StepKind, label: str, s: int, e: int, aid: str | None = None) -> None:
        s, e = max(s, t_start), min(e, t_end)
        if e <= s:
            return
        r = run.rows.get(aid) if aid else None
        steps.append(
            PathStep(
                kind,
                label,
                s,
                e,
                aid,
                None if r is None else r["task_type"],
                None if r is None else r["host"],
            )
        )

    sink = _sink(run, None if summary is None else summary.get("status"), t_end)
    add(StepKind.END, "job commit/cleanup", run.finish(sink), t_end)
    graph.add_edge(sink, "job_end", binding=True, gap_ms=t_end - run.finish(sink))
    visited: set[str] = set()
    current: str | None = sink
    while current is not None:
        visited.add(current)
        jump = _walk_attempt(run, current, add, visited, graph)
        if jump is not None:
            current = jump
            continue
        current = _release(run, current, visited, graph, add)
        if current is None:
            break
    steps.reverse()
    makespan = t_end - t_start
    shared = tuple(
        PathStep(
            s.kind,
            s.label,
            s.start_ms,
            s.end_ms,
            s.attempt_id,
            s.task_type,
            s.host,
            s.dur_ms / makespan if makespan > 0 else 0.0,
        )
        for s in steps
    )
    first = shared[0].attempt_id if shared else None
    if first is not None:
        graph.add_edge("job_start", first, binding=True)
    return CriticalPath(job_id, t_start, t_end, shared, graph)


def _sink(run: _Run, status: Any, t_end: int) -> str:
    """The attempt whose end released the job's end.

    A failed job ends when an attempt failed its task for good: the last
    FAILED attempt to end by the job's finish (attempts killed as the job
    failed end after it).  Otherwise the last successful attempt to end; with
    none, the last attempt to end by the job's finish, else the last of all.
    """
    def latest(ids: list[str]) -> str:
        return max(ids, key=lambda a: (run.finish(a), run.start(a)))

    ended = [a for a in run.rows if run.finish(a) <= t_end]
    if status == "FAILED" and (failed := [a for a in ended if run.rows[a]["status"] == "FAILED"]):
        return latest(failed)
    ok = [a for a, r in run.rows.items() if r["status"] == "SUCCEEDED"]
    return latest(ok or ended or list(run.rows))


def _walk_attempt(run: _Run, aid: str, add: Any, visited: set[str], graph: nx.DiGraph) -> str | None:
    """Emit the attempt's phases backwards from its finish; return a map to jump to, if the shuffle waited."""
    row = run.rows[aid]
    start, cursor = run.start(aid), run.finish(aid)
    phases = run.phases.get(aid, [])
    if not phases and row["task_type"] not in ("MAP", "REDUCE"):
        add(StepKind.PHASE, str(row["task_type"]).lower(), start, cursor, aid)  # a setup/cleanup task
        return None
    while cursor > start:
        candidates = [p for p in phases if p[0] < cursor and p[1] > p[0]]
        if not candidates:
            add(StepKind.UNTRACKED, "untracked", start, cursor, aid)
            return None
        s, e, name = max(candidates, key=lambda p: (min(p[1], cursor), p[0]))
        e = min(e, cursor)
        if e < cursor:
            add(StepKind.UNTRACKED, "untracked", e, cursor, aid)
        s = max(s, start)
        if row["task_type"] == "REDUCE" and "shuffle" in name.split("+"):
            m = run.last_map_in(s, e, visited)
            if m is not None:
                graph.add_edge(m, aid, kind=Release.SHUFFLE, binding=True, gap_ms=e - run.finish(m))
                add(StepKind.PHASE, name, run.finish(m), e, aid)
                return m
        add(StepKind.PHASE, name, s, e, aid)
        cursor = s
    return None


def _release(run: _Run, aid: str, visited: set[str], graph: nx.DiGraph, add: Any) -> str | None:
    """Find what released ``aid`` to start, add the wait step, and return it (``None``: the job start)."""
    row = run.rows[aid]
    start = run.start(aid)
    candidates: list[tuple[int, Release, str]] = []
    for kind, pool in (
        (Release.RETRY, run.by_task.get(row["task_id"], [])),
        (Release.SLOT, run.by_host.get(row["host"], [])),
    ):
        done = [
            (run.finish(o), kind, o) for o in pool if o != aid and o not in visited and run.finish(o) <= start
        ]
        if done:
            candidates.append(max(done))
    if row["task_type"] == "REDUCE":
        m = run.last_map_in(-(2**62), start, visited)
        if m is not None:
            candidates.append((run.finish(m), Release.SLOWSTART, m))
    if row["task_type"] == "CLEANUP":
        done = [
            (run.finish(o), Release.TASKS_DONE, o)
            for o, r in run.rows.items()
            if r["task_type"] in ("MAP", "REDUCE")
            and r["status"] == "SUCCEEDED"
            and o not in visited
            and run.finish(o) <= start
        ]
        if done:
            candidates.append(max(done))
    if not candidates:
        add(StepKind.START, "job start to the path's first attempt", -(2**62), start)
        return None
    rank = {Release.RETRY: 0, Release.TASKS_DONE: 1, Release.SLOWSTART: 2, Release.SLOT: 3}
    finish, kind, pred = max(candidates, key=lambda c: (c[0], -rank[c[1]]))
    for f, k, other in candidates:
        graph.add_edge(other, aid, kind=k, binding=(other, k) == (pred, kind), gap_ms=start - f)
    add(StepKind.WAIT, f"wait ({kind})", finish, start)
    return pred
