"""The job, task and attempt records a ``.jhist`` file builds, and their ``tasks``/``attempts`` rows;
the rules that read a job event's fields into a :class:`JobRecord`.

:class:`ingest.jhist_state.HistoryState` fills them event by event (its docstring says which event's
value wins); :func:`state_blocks` writes them when the file ends.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ingest.base import RowBlock
from ingest.jhist_schema import opt_bool, opt_count, opt_int, opt_nonempty, opt_str
from phaseline.schemas import ATTEMPTS, TASKS

#: A held record's counter layout: group names, the counters per group, counter names (shared by tasks).
Layout = tuple[tuple[str, ...], tuple[int, ...], tuple[str, ...]]


@dataclass(slots=True)
class JobRecord:
    job_id: str | None = None
    name: str | None = None
    user: str | None = None
    queue: str | None = None
    status: str | None = None
    submit_ms: int | None = None
    launch_ms: int | None = None
    finish_ms: int | None = None
    total_maps: int | None = None
    total_reduces: int | None = None
    finished_maps: int | None = None
    finished_reduces: int | None = None
    failed_maps: int | None = None
    failed_reduces: int | None = None
    killed_maps: int | None = None
    killed_reduces: int | None = None
    uberized: bool | None = None
    diagnostics: str | None = None
    ended: bool = False


#: How a job event's fields are read: (the JobRecord attribute, the event's field, the reader of its value).
FieldRules = tuple[tuple[str, str, Callable[[Any, str], Any]], ...]
JOB_SUBMITTED: FieldRules = (
    ("name", "jobName", opt_str),
    ("user", "userName", opt_str),
    ("submit_ms", "submitTime", opt_int),
    ("queue", "jobQueueName", opt_nonempty),
)
JOB_INITED: FieldRules = (
    ("launch_ms", "launchTime", opt_int),
    ("total_maps", "totalMaps", opt_count),
    ("total_reduces", "totalReduces", opt_count),
    ("uberized", "uberized", opt_bool),
)
JOB_INFO_CHANGED: FieldRules = (("submit_ms", "submitTime", opt_int), ("launch_ms", "launchTime", opt_int))
#: Every end of a job: JOB_FINISHED and the unsuccessful ends.
JOB_END: FieldRules = (
    ("finish_ms", "finishTime", opt_int),
    ("finished_maps", "finishedMaps", opt_count),
    ("finished_reduces", "finishedReduces", opt_count),
    ("failed_maps", "failedMaps", opt_count),
    ("failed_reduces", "failedReduces", opt_count),
    ("killed_maps", "killedMaps", opt_count),
    ("killed_reduces", "killedReduces", opt_count),
)


def read_fields(record: JobRecord, p: dict[str, Any], rules: FieldRules) -> None:
    """Set each attribute of ``record`` from its field of the event ``p``, read by its rule."""
    for attribute, name, read in rules:
        setattr(record, attribute, read(p.get(name), name))


@dataclass(slots=True)
class TaskRecord:
    task_id: str
    task_type: str | None = None
    status: str | None = None
    start_ms: int | None = None
    finish_ms: int | None = None
    successful_attempt_id: str | None = None
    splits: str | None = None
    error: str | None = None
    # Counters of a task a later event may re-open, held to the end: a shared layout
    # (group names, counters per group, counter names) + values.
    counter_layout: Layout = ((), (), ())
    counter_values: array[int] = field(default_factory=partial(array, "q"))
    counters_emitted: bool = False


@dataclass(slots=True)
class AttemptRecord:
    attempt_id: str
    task_id: str
    task_type: str | None = None
    status: str | None = None
    start_ms: int | None = None
    finish_ms: int | None = None
    map_finish_ms: int | None = None
    shuffle_finish_ms: int | None = None
    sort_finish_ms: int | None = None
    host: str | None = None
    rack: str | None = None
    tracker_host: str | None = None
    container_id: str | None = None
    error: str | None = None
    locality: str | None = None
    http_port: int | None = None
    has_counters: bool = False



STATE_BLOCK = min(TASKS.flush_rows, ATTEMPTS.flush_rows)
TASK_COLUMNS = (
    "task_id",
    "task_type",
    "status",
    "start_ms",
    "finish_ms",
    "successful_attempt_id",
    "splits",
    "error",
)
ATTEMPT_COLUMNS = (
    "task_id", "attempt_id", "task_type", "status", "start_ms", "finish_ms", "map_finish_ms",
    "shuffle_finish_ms", "sort_finish_ms", "host", "rack", "container_id", "error", "locality", "http_port",
)  # fmt: skip



#: The values a packed task is made of (:meth:`CounterLayouts.task_values`), by name.
TASK_VALUES = (*TASK_COLUMNS, "counter_layout", "counter_values", "counters_emitted")
_ATTEMPT_HOST = AttemptRecord.__slots__.index("host")
_ATTEMPT_TRACKER = AttemptRecord.__slots__.index("tracker_host")


def field_blocks(
    table: str, chunks: Iterable[Sequence[Sequence[Any]]], fields: Sequence[str], names: Sequence[str],
    job_id: str | None,
) -> Iterator[tuple[RowBlock, list[Sequence[Any]]]]:
    """``tasks`` or ``attempts`` rows of records given by field a chunk at a time (``fields``: what
    each is; :meth:`ingest.jhist_packed.Packed.columns`), in blocks of at most :data:`STATE_BLOCK`,
    each with its values by field.

    A large job's rows are not all copied at once, and no record is made an object
    again to be written.  An attempt's ``host`` is its completion event's, else its
    STARTED event's tracker (:mod:`ingest.jhist_state`'s docstring).
    """
    at = [fields.index(name) for name in names]

    def block(by_field: list[Sequence[Any]]) -> tuple[RowBlock, list[Sequence[Any]]]:
        columns: dict[str, Sequence[Any]] = {name: by_field[i] for name, i in zip(names, at, strict=True)}
        if table == "attempts":
            columns["host"] = [t if h is None else h for h, t in zip(by_field[_ATTEMPT_HOST],
                                                                     by_field[_ATTEMPT_TRACKER], strict=True)]
        return RowBlock(table, len(by_field[0]), columns, {"job_id": job_id}), by_field

    gathered: list[list[Any]] = [[] for _ in fields]
    for chunk in chunks:
        if not chunk or not chunk[0]:
            continue
        for values, more in zip(gathered, chunk, strict=True):
            values += more
        while len(gathered[0]) >= STATE_BLOCK:
            yield block([values[:STATE_BLOCK] for values in gathered])
            gathered = [values[STATE_BLOCK:] for values in gathered]
    if gathered[0]:
        yield block(list(gathered))


class CounterLayouts:
    """The counter layouts of held tasks, one object each (tasks share them), numbered.

    A packed task names its layout by number (:meth:`task_values`, :meth:`task_of`:
    a task's fields as marshal-able values and back, for :class:`ingest.jhist_packed.Packed`).
    """

    def __init__(self) -> None:
        self._layouts: list[Layout] = []
        self._numbers: dict[Layout, int] = {}
        # The number of each layout object kept, by its id (a tuple's hash is not cached: each look-up
        # by value hashed every counter name of the layout again).
        self._by_id: dict[int, tuple[Layout, int]] = {}

    def number(self, layout: Layout) -> int:
        """The number of ``layout`` among the held counter layouts (added if new)."""
        known = self._by_id.get(id(layout))
        if known is not None and known[0] is layout:
            return known[1]
        number = self._numbers.get(layout)
        if number is None:
            number = self._numbers[layout] = len(self._layouts)
            self._layouts.append(layout)
        if self._layouts[number] is layout:  # (the one object kept: its id is its while it lives)
            self._by_id[id(layout)] = (layout, number)
        return number

    def layout(self, number: int) -> Layout:
        """The layout numbered ``number``."""
        return self._layouts[number]

    def shared(self, layout: Layout) -> Layout:
        """The one object kept for layouts equal to ``layout``."""
        return self._layouts[self.number(layout)]

    def task_values(self, t: TaskRecord) -> tuple[Any, ...]:
        """A task's fields as marshal-able values: its counter layout by number, its counter values as bytes."""
        return (t.task_id, t.task_type, t.status, t.start_ms, t.finish_ms, t.successful_attempt_id, t.splits,
                t.error, self.number(t.counter_layout), t.counter_values.tobytes(),
                t.counters_emitted)  # fmt: skip

    def task_of(self, v: tuple[Any, ...]) -> TaskRecord:
        """The task whose values :meth:`task_values` gave."""
        values = array("q")
        values.frombytes(v[9])
        task_id, task_type, status, start, finish, successful, splits, error = v[:8]
        return TaskRecord(task_id, task_type, status, start, finish, successful, splits, error,
                          self._layouts[v[8]], values, v[10])  # fmt: skip
