"""The dataflow model a HiTune specification describes (Dai et al. 2011, section 4.2, Figure 7).

Records of a parsed specification (:mod:`profiles.dataflow.spec` parses the
language), and the resolution of an execution position (a stack, innermost frame
first, and a thread name) to the vertex whose program location claims it.
"""

from __future__ import annotations

import enum
import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache


class MatchStatus(enum.StrEnum):
    """How a stack resolved against a specification."""

    MAPPED = "mapped"
    UNMAPPED = "unmapped"
    AMBIGUOUS = "ambiguous"


@dataclass(frozen=True, slots=True)
class Cardinality:
    """``N`` (exactly), ``1~N`` (up to N) or ``1~∞`` (decided at run time: ``high`` is None)."""

    low: int
    high: int | None

    def __str__(self) -> str:
        if self.low == self.high:
            return str(self.low)
        return f"{self.low}~{'∞' if self.high is None else self.high}"


@dataclass(frozen=True, slots=True)
class Alternative:
    """One partial stack trace of a program location (frames innermost first)."""

    frames: tuple[str, ...]
    thread_glob: str | None

    def depth(self, stack: Sequence[str], thread_name: str | None) -> int | None:
        """Index of the innermost matched frame in ``stack`` (top first), or None."""
        if self.thread_glob is not None and not fnmatch.fnmatchcase(thread_name or "", self.thread_glob):
            return None
        regexes = [frame_regex(f) for f in self.frames]
        # the outermost pattern is matched deepest; walk from the innermost so the first
        # match found is the most specific one
        for start, frame in enumerate(stack):
            if regexes[0].search(frame) and _rest_match(regexes[1:], stack, start + 1):
                return start
        return None


def _rest_match(regexes: Sequence[re.Pattern[str]], stack: Sequence[str], start: int) -> bool:
    pos = start
    for rx in regexes:
        while pos < len(stack) and not rx.search(stack[pos]):
            pos += 1
        if pos == len(stack):
            return False
        pos += 1
    return True


@dataclass(frozen=True, slots=True)
class Vertex:
    id: str
    location: str
    alternatives: tuple[Alternative, ...]
    line: int

    def depth(self, stack: Sequence[str], thread_name: str | None) -> int | None:
        depths = [d for a in self.alternatives if (d := a.depth(stack, thread_name)) is not None]
        return min(depths) if depths else None


@dataclass(frozen=True, slots=True)
class Edge:
    id: str
    source: str
    target: str
    line: int


@dataclass(frozen=True, slots=True)
class EdgeMapping:
    edge: str
    edge_type: str
    endpoint: str
    line: int


@dataclass(frozen=True, slots=True)
class ThreadPool:
    """A thread pool (ordered vertices) or, with ``group_size``, a thread group pool (one vertex)."""

    name: str | None
    cardinality: Cardinality
    vertices: tuple[str, ...]
    group_size: int | None
    line: int


@dataclass(frozen=True, slots=True)
class Phase:
    name: str | None
    pools: tuple[ThreadPool, ...]
    line: int


@dataclass(frozen=True, slots=True)
class TaskPool:
    name: str | None
    cardinality: Cardinality
    phases: tuple[Phase, ...]
    line: int


@dataclass(frozen=True, slots=True)
class Resolution:
    status: MatchStatus
    vertex: str | None
    candidates: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DataflowSpec:
    """A parsed specification."""

    inputs: dict[str, str]
    outputs: dict[str, str]
    vertices: dict[str, Vertex]
    edges: dict[str, Edge]
    task_pools: tuple[TaskPool, ...]
    edge_mappings: dict[str, EdgeMapping]
    path: str

    def resolve(self, stack: Sequence[str], thread_name: str | None = None) -> Resolution:
        """The vertex an execution position (stack top first, thread name) belongs to."""
        best: int | None = None
        found: list[str] = []
        for vid, vertex in self.vertices.items():
            d = vertex.depth(stack, thread_name)
            if d is None:
                continue
            if best is None or d < best:
                best, found = d, [vid]
            elif d == best:
                found.append(vid)
        if not found:
            return Resolution(MatchStatus.UNMAPPED, None, ())
        if len(found) > 1:
            return Resolution(MatchStatus.AMBIGUOUS, None, tuple(found))
        return Resolution(MatchStatus.MAPPED, found[0], tuple(found))

    def task_pool_of(self, vertex: str) -> TaskPool | None:
        for pool in self.task_pools:
            if any(vertex in tp.vertices for ph in pool.phases for tp in ph.pools):
                return pool
        return None

    def group_vertices(self) -> tuple[str, ...]:
        """The vertices a Thread Group Pool runs: its threads "run in concert" (section 4.2), and
        one instance of such a vertex is "multiple ranges each in a different thread" (section 5.3)."""
        return tuple(dict.fromkeys(
            v for pool in self.task_pools for ph in pool.phases for tp in ph.pools if tp.group_size is not None
            for v in tp.vertices
        ))

    def phase_of(self, vertex: str) -> Phase | None:
        for pool in self.task_pools:
            for ph in pool.phases:
                if any(vertex in tp.vertices for tp in ph.pools):
                    return ph
        return None


@lru_cache(maxsize=4096)
def frame_regex(pattern: str) -> re.Pattern[str]:
    """The regex of a frame pattern (see the module docstring).

    >>> bool(frame_regex("SpillThread.run").search("org.x.MapTask$MapOutputBuffer$SpillThread.run"))
    True
    >>> bool(frame_regex("ReduceCopier.access").search("org.x.ReduceTask$ReduceCopier.access$400"))
    True
    >>> bool(frame_regex("Task.run").search("org.x.MapTask.run"))
    False
    """
    out = []
    for ch in pattern:
        if ch == "*":
            out.append(".*")
        elif ch in "()|":
            out.append(ch if ch != "(" else "(?:")
        else:
            out.append(re.escape(ch))
    return re.compile(r"(?:^|[.$])" + "".join(out) + r"(?:\$\d+)?$")
