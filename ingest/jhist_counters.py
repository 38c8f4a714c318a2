"""The counters of ``.jhist`` JhCounters records, as ``counters`` columns gathered into blocks.

:func:`counter_columns` reads one record (the group names as runs, counter names, values; checked
in bulk, else counter by counter through :func:`counter_entries`); :class:`CounterBlocks` gathers
the rows of consecutive records into one ``counters`` block.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import itemgetter
from typing import Any

from ingest.base import Row, RowBlock
from ingest.jhist_schema import BadEvent, checked_counter, req_str
from ingest.jhist_typed import JhCounters
from ingest.mrcommon import INT64_MAX, INT64_MIN
from phaseline.runs import Runs

#: Counter rows gathered into one block: few enough that the rows not yet yielded stay in a core's
#: cache while the reader goes on (the store gathers blocks into a flush of its counters table).
COUNTER_BLOCK_ROWS = 4_096


def counter_entries(counters: Any) -> Iterator[tuple[str, str, int]]:
    """``(group, name, value)`` of each counter of a JhCounters record, checked as they come (slow path)."""
    try:
        for g in counters["groups"]:
            group = g["name"]
            if type(group) is not str:
                group = req_str(g, "name")
            for c in g["counts"]:
                name = c["name"]
                value = c["value"]
                if type(name) is not str or type(value) is not int or not INT64_MIN <= value <= INT64_MAX:
                    name, value = checked_counter(group, c)
                yield group, name, value
    except (KeyError, TypeError) as exc:
        raise BadEvent(f"counters are not a JhCounters record ({exc!r})") from None


_STR_ONLY = frozenset((str,))
_INT_ONLY = frozenset((int,))
_name_of = itemgetter("name")
_value_of = itemgetter("value")


def counter_columns(counters: Any) -> tuple[list[str], list[int], list[str], list[int]]:
    """A JhCounters record as columns: its group names as runs (names, sizes), counter names, values.

    The counters of all groups are taken at once (``map`` over ``itemgetter``)
    and their types checked in bulk; a record that is not plainly typed
    (``{"name": str, "value": int}`` counters in groups with a string name) is
    read again through :func:`counter_entries`, so it yields the same values,
    or raises the same :class:`BadEvent`, as when read counter by counter.
    """
    if type(counters) is JhCounters:  # decoded as structs, typed and checked (ingest.jhist_typed)
        return counters.columns()
    groups: list[str] = []
    sizes: list[int] = []
    counts: list[Any] = []
    try:
        for g in counters["groups"]:
            group = g["name"]
            got = g["counts"]
            if type(group) is not str or type(got) is not list:
                break
            counts += got
            groups.append(group)
            sizes.append(len(got))
        else:
            names = list(map(_name_of, counts))
            values = list(map(_value_of, counts))
            if (
                _STR_ONLY.issuperset(map(type, names))
                and _INT_ONLY.issuperset(map(type, values))
                and (not values or (min(values) >= INT64_MIN and max(values) <= INT64_MAX))  # (orjson: to 2**64 - 1)
            ):
                return groups, sizes, names, values
    except (KeyError, TypeError):
        pass  # the slow path below raises the error, with the message it always had
    groups, sizes, names, values = [], [], [], []
    for group, name, value in counter_entries(counters):
        if groups and groups[-1] == group:
            sizes[-1] += 1
        else:
            groups.append(group)
            sizes.append(1)
        names.append(name)
        values.append(value)
    return groups, sizes, names, values


def _counter_lists() -> tuple[list[Any], ...]:
    """Empty gathering lists: per record scope, task, attempt, size; per group name, size; per counter name, value."""
    return ([], [], [], [], [], [], [], [])




class CounterBlocks:
    """Counter rows of consecutive JhCounters records, by column, until a block is full.

    Per-record blocks cost more to stage than the rows themselves; a block leaves for
    ``out`` at :data:`COUNTER_BLOCK_ROWS` rows, when the job id changes, or on :meth:`flush`.
    Records decoded as structs (:meth:`add_record`) are taken apart into columns all at
    once, when the block is written or rows of another kind are added behind them.
    """

    def __init__(self, out: list[Row | RowBlock]) -> None:
        self.out = out
        self._rows = 0
        self._job: str | None = None
        self._cols: tuple[list[Any], ...] = _counter_lists()
        self._groups: list[Any] = []  # the CounterGroup structs of records added whole, not yet in columns

    def add(
        self,
        job_id: str | None,
        scope: str,
        task_id: str | None,
        attempt_id: str | None,
        groups: Sequence[str],
        sizes: Sequence[int],
        names: Sequence[str],
        values: Sequence[int],
    ) -> None:
        """Gather one record's counter rows behind the others.

        The record's scope, task and attempt are one run each, its group names a run per group.
        """
        n = len(names)
        if n:
            if self._rows and job_id != self._job:
                self.flush()
            if self._groups:
                self._take_apart()
            self._job = job_id
            scopes, tasks, attempts, record_sizes, group_col, group_sizes, name_col, value_col = self._cols
            scopes.append(scope)
            tasks.append(task_id)
            attempts.append(attempt_id)
            record_sizes.append(n)
            group_col += groups
            group_sizes += sizes
            name_col += names
            value_col += values
            self._rows += n
            if self._rows >= COUNTER_BLOCK_ROWS:
                self.flush()

    def add_record(
        self, job_id: str | None, scope: str, task_id: str | None, attempt_id: str | None, counters: JhCounters
    ) -> int:
        """Gather the rows of one record decoded as structs (:meth:`add` of its :meth:`JhCounters.columns`,
        taken apart later with the others); return how many."""
        groups = counters.groups
        n = 0
        for g in groups:  # (a loop: ~3x faster than sum(map(len, ...)) over a record's few groups)
            n += len(g.counts)
        if n:
            if self._rows and job_id != self._job:
                self.flush()
            self._job = job_id
            scopes, tasks, attempts, record_sizes = self._cols[:4]
            scopes.append(scope)
            tasks.append(task_id)
            attempts.append(attempt_id)
            record_sizes.append(n)
            self._groups += groups
            self._rows += n
            if self._rows >= COUNTER_BLOCK_ROWS:
                self.flush()
        return n

    def _take_apart(self) -> None:
        """The records added whole, into the columns: group names and sizes, counter names and values."""
        groups, self._groups = self._groups, []
        group_col, group_sizes, name_col, value_col = self._cols[4:]
        every: list[Any] = []
        for g in groups:
            got = g.counts
            group_col.append(g.name)
            group_sizes.append(len(got))
            every += got
        # (comprehensions: a struct's attribute read so costs half of map(attrgetter(...))'s, Python 3.11)
        names = [c.name for c in every]
        values = [c.value for c in every]
        if name_col:
            name_col += names
            value_col += values
        else:  # (the usual block, of struct records only: its columns as made, not copied once more)
            self._cols = (*self._cols[:6], names, values)

    def flush(self) -> None:
        """Move the gathered counter rows to ``out`` as one block."""
        if not self._rows:
            return
        if self._groups:
            self._take_apart()
        scopes, tasks, attempts, record_sizes, groups, group_sizes, names, values = self._cols
        columns = {"scope": Runs(scopes, record_sizes), "task_id": Runs(tasks, record_sizes),
                   "attempt_id": Runs(attempts, record_sizes), "group_name": Runs(groups, group_sizes),
                   "counter_name": names, "value": values}  # fmt: skip
        self.out.append(RowBlock("counters", self._rows, columns, {"job_id": self._job}))
        self._rows = 0
        self._cols = _counter_lists()
