"""What the token walk of :mod:`predict.vianna.timeline` is given and makes: thread groups (map
threads, reduce threads of a wave), task instances (by column) and the timeline."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

__all__ = ["Instance", "Instances", "MapGroup", "ReduceGroup", "Timeline"]


@dataclass(frozen=True, slots=True)
class MapGroup:
    """``count`` map threads that run the map classes ``maps`` one after the other."""

    count: int
    maps: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ReduceGroup:
    """``count`` reduce threads (symmetric reduces) of one reduce wave.

    ``shuffle_of[c]`` is the shuffle-sort class a token from map class ``c``
    becomes; ``merge`` the merge class; ``shuffles`` the shuffle-sorts each
    reduce runs (one per map); ``after`` the index of the reduce group whose
    merges must finish first (the previous wave on the same reduce slots).
    """

    count: int
    shuffle_of: Mapping[int, int]
    merge: int
    shuffles: int
    after: int | None = None


@dataclass(frozen=True, slots=True)
class Instance:
    """``count`` tasks of class ``cls`` running in lock step over ``[start, end]``.

    ``owner`` is ``("map", group)`` or ``("reduce", group)``; ``lanes`` the
    shuffle slots of a reduce thread it occupies (``(-1,)`` for a merge).
    """

    cls: int
    count: int
    start: float
    end: float
    owner: tuple[str, int]
    lanes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Instances:
    """A timeline's task instances by column: the k-th :class:`Instance` is the k-th of each.

    A walk of 25,601 maps and 240 reduces makes 10,889 instances, and a walk is made per
    iteration of the model; an :class:`Instance` each (a frozen record: 1.9 us to make) was half
    of a walk's time.  Indexing and iterating still give :class:`Instance` records.
    """

    cls: tuple[int, ...]
    count: tuple[int, ...]
    start: tuple[float, ...]
    end: tuple[float, ...]
    owner: tuple[tuple[str, int], ...]
    lanes: tuple[tuple[int, ...], ...]

    def __len__(self) -> int:
        return len(self.cls)

    def __getitem__(self, k: int) -> Instance:
        return Instance(self.cls[k], self.count[k], self.start[k], self.end[k], self.owner[k], self.lanes[k])

    def __iter__(self) -> Iterator[Instance]:
        return map(Instance, self.cls, self.count, self.start, self.end, self.owner, self.lanes)


@dataclass(frozen=True, slots=True)
class Timeline:
    """The average execution of one job: task instances and the synchronization points."""

    instances: Instances
    sync_points: tuple[float, ...]  # phase boundaries, from 0.0 to the job's end
    map_groups: tuple[MapGroup, ...]
    reduce_groups: tuple[ReduceGroup, ...]

    @property
    def makespan(self) -> float:
        return self.sync_points[-1]
