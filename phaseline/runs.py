"""A column of repeated values, kept as runs: what a reader hands the store without expanding it.

The counters of one JhCounters record share their scope, task and attempt, and
those of one group their group name: 4 of the counters table's 6 row columns
are runs of a few values each.  Expanding them into lists and converting every
value to Arrow cost about 0.1 us per value, about a sixth of a large ``.jhist``
ingest; the store instead builds such a column as its distinct runs taken by
index (``values[k]`` repeated ``counts[k]`` times), in C.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain, repeat
from typing import Any, overload

__all__ = ["Runs"]


class Runs(Sequence[Any]):
    """``values[0]`` ``counts[0]`` times, then ``values[1]`` ``counts[1]`` times, and so on.

    A read-only sequence of ``sum(counts)`` items that equals the list it
    stands for; the store reads :attr:`values` and :attr:`counts` directly.

    >>> r = Runs(["a", "b"], [2, 1])
    >>> len(r), list(r), r[2], r == ["a", "a", "b"]
    (3, ['a', 'a', 'b'], 'b', True)
    """

    __slots__ = ("_n", "_starts", "counts", "values")

    def __init__(self, values: list[Any], counts: list[int]) -> None:
        if len(values) != len(counts):
            raise ValueError(f"runs need one count per value, got {len(values)} values and {len(counts)} counts")
        if counts and min(counts) < 0:  # (min in C: a reader's block has a run per record and group)
            raise ValueError("a run cannot repeat a value a negative number of times")
        self.values = values
        self.counts = counts
        self._n = sum(counts)
        self._starts: list[int] | None = None

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Any]:
        return chain.from_iterable(map(repeat, self.values, self.counts))

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        i = index + self._n if index < 0 else index
        if not 0 <= i < self._n:
            raise IndexError("Runs index out of range")
        if self._starts is None:
            self._starts = list(accumulate(self.counts))
        return self.values[bisect_right(self._starts, i)]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == self._n and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside, like a list

    def __repr__(self) -> str:
        return f"Runs({self.values!r}, {self.counts!r})"
