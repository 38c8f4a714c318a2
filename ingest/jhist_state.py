"""What a job history means: Hadoop's JobHistoryParser rules, as phaseline state and rows.

:class:`HistoryState` receives the typed payload of each ``.jhist`` event (see
:mod:`ingest.jhist`, which reads the bytes) and keeps one record per job, task
and attempt; ``counters`` rows of jobs and attempts are produced as events
arrive, the job/task/attempt rows and task counters when the file ends.  The
finished tasks and attempts among the older ones are packed as they pile up
(:class:`_Packed`), so a large file's memory stays about flat.

Which value wins (as Hadoop's ``JobHistoryParser`` does, unless noted)
---------------------------------------------------------------------
* Job: name/user/queue/submit from JOB_SUBMITTED; queue replaced by
  JOB_QUEUE_CHANGED; submit and launch replaced by a later JOB_INFO_CHANGED;
  totals/uberized from JOB_INITED; finish, counts and status from the last
  JOB_FINISHED (status SUCCEEDED) or JOB_FAILED/KILLED/ERROR (its jobStatus);
  counts Hadoop wrote as -1 or did not write are NULL (also for a job cut off
  before its end, where Hadoop reports its constructor's 0).  Job counters
  (job_total/job_map/job_reduce) from the last JOB_FINISHED (written at the end).
* Task: start/type/splits from TASK_STARTED; finish from the last of
  TASK_FINISHED/TASK_FAILED/TASK_UPDATED; status SUCCEEDED from TASK_FINISHED,
  and from TASK_FAILED the event's own ``status`` (KILLED or FAILED; Hadoop's
  parser says FAILED for both).  If the attempt that made a task succeed later
  fails or is killed (its map output was lost), the task's status, finish,
  successful attempt and counters are reset, as Hadoop does; a re-run then sets
  them again.  Only map tasks of jobs with reduces can be re-opened so (the
  ApplicationMaster never re-runs a finished reduce, nor a map of a map-only
  job): their counters are held (compactly) until the end; other tasks'
  counters are written when they end with counters, and a later end's are
  noted and left out (Hadoop keeps the last; a TASK_FAILED without counters, the
  usual one, leaves a re-run's TASK_FINISHED its counters).
* Attempt: start, container, locality, http port from *_ATTEMPT_STARTED;
  finish, status, host, rack and error from the last completion event
  (*_FINISHED, *_FAILED, *_KILLED).  ``host`` is the completion event's
  ``hostname`` with port and rack path removed; an attempt that never
  completed falls back to the STARTED event's ``trackerName`` (Hadoop leaves it
  empty).  ``map_finish_ms`` / ``shuffle_finish_ms`` / ``sort_finish_ms`` come
  only from MapAttemptFinished / ReduceAttemptFinished: for failed and killed
  attempts the file holds no phase times, so they stay NULL (Hadoop copies the
  finish time into all three).  Attempt counters are those of the attempt's
  first completion event that carries any, i.e. the work the attempt reported;
  a later KILLED of an already finished attempt does not erase them.
* Events about tasks or attempts the file never started are read (Hadoop's
  parser throws a NullPointerException on them, or skips them), but for a
  *_FAILED/*_KILLED of an attempt no *_ATTEMPT_STARTED began: that attempt was
  never run (a speculative attempt killed when its twin succeeded first), and
  Hadoop's parser drops the event (``handleTaskAttemptFailedEvent``); so does
  the attempts table.
"""

from __future__ import annotations

import marshal
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from operator import attrgetter, itemgetter
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from ingest.base import Row, RowBlock
from ingest.jhist_schema import BadEvent, checked_counter, opt_bool, opt_int, opt_str, req_str
from ingest.jhist_typed import JhCounters
from ingest.mrcommon import INT64_MAX, INT64_MIN
from phaseline.hadoop_names import HistoryEventKind as EventKind
from phaseline.hadoop_names import job_id_of, split_host
from phaseline.hadoop_names import task_id_of as _task_id_of
from phaseline.hadoop_names import task_type as _task_type
from phaseline.runs import Runs
from phaseline.schemas import ATTEMPTS, TASKS, Status, TaskType, normalize_status

_SUCCEEDED = Status.SUCCEEDED.value
_MAP = TaskType.MAP.value


#: A held record's counter layout: group names, the counters per group, counter names (shared by tasks).
_Layout = tuple[tuple[str, ...], tuple[int, ...], tuple[str, ...]]


def _counter_lists() -> tuple[list[Any], ...]:
    """Empty gathering lists: per record scope, task, attempt, size; per group name, size; per counter name, value."""
    return ([], [], [], [], [], [], [], [])


@dataclass(slots=True)
class _Job:
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


@dataclass(slots=True)
class _Task:
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
    counter_layout: _Layout = ((), (), ())
    counter_values: array[int] = field(default_factory=lambda: array("q"))
    counters_emitted: bool = False


@dataclass(slots=True)
class _Attempt:
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


#: Counter rows gathered into one block (about a flush of the store's counters table).
_COUNTER_BLOCK_ROWS = 32_768
#: Task and attempt rows per block at the end of a file: a flush of the store's tables.
_STATE_BLOCK = min(TASKS.flush_rows, ATTEMPTS.flush_rows)
_TASK_COLUMNS = (
    "task_id",
    "task_type",
    "status",
    "start_ms",
    "finish_ms",
    "successful_attempt_id",
    "splits",
    "error",
)
_ATTEMPT_COLUMNS = (
    "task_id", "attempt_id", "task_type", "status", "start_ms", "finish_ms", "map_finish_ms",
    "shuffle_finish_ms", "sort_finish_ms", "host", "rack", "container_id", "error", "locality", "http_port",
)  # fmt: skip


#: Tasks (and attempts) held as objects before the finished among the older half are packed.
LIVE_RECORDS = 2_048


class _Record(Protocol):
    status: str | None  # None until the record is finished


_R = TypeVar("_R", bound=_Record)


class _Packed(Generic[_R]):
    """Finished tasks or attempts, packed: what a large history holds until its end, kept small.

    A job's rows can only be written when its file ends (a later event may
    still change a finished task or attempt), so a file of 70,000 tasks and
    attempts would hold 70,000 objects (about 1 kB each with their strings
    and ints).  Finished records are instead packed a batch at a time into
    one zlib-compressed ``marshal`` chunk of their field values, indexed by
    the hash of their id in one sorted array (16 bytes a record; a hash
    match is confirmed on the unpacked id).  A packed record an event touches
    again is unpacked (:meth:`take`) and lives on as an object; the rest come
    back at the end, a chunk at a time (:meth:`records`).  ``to_values`` /
    ``from_values`` turn a record into marshal-able values and back.
    """

    def __init__(
        self,
        key: Callable[[_R], str],
        to_values: Callable[[_R], tuple[Any, ...]],
        from_values: Callable[[tuple[Any, ...]], _R],
    ) -> None:
        self.key = key
        self.to_values = to_values
        self.from_values = from_values
        self.chunks: list[bytes] = []
        self.alive: list[np.ndarray[Any, Any]] = []  # per chunk: which records are still packed there
        self._hashes = np.empty(0, np.int64)  # sorted id hashes ...
        self._where = np.empty(0, np.int64)  # ... and their records: chunk << 32 | position
        self._search = array("q")  # the sorted hashes again, for :meth:`take`'s look-up
        self._cached: tuple[int, list[tuple[Any, ...]]] = (-1, [])  # the last chunk unpacked

    def pack(self, records: Sequence[_R]) -> None:
        """Pack ``records`` as one chunk (the caller drops its own references)."""
        number, n = len(self.chunks), len(records)
        self.chunks.append(zlib.compress(marshal.dumps(list(map(self.to_values, records))), 1))
        self.alive.append(np.ones(n, np.bool_))
        hashes = np.concatenate((self._hashes, np.fromiter(map(hash, map(self.key, records)), np.int64, n)))
        where = np.concatenate((self._where, (number << 32) + np.arange(n, dtype=np.int64)))
        order = np.argsort(hashes, kind="stable")
        self._hashes, self._where = hashes[order], where[order]
        self._search = array("q", self._hashes.tobytes())  # (bisect on an array: no numpy scalar per look-up)

    def _chunk(self, number: int) -> list[tuple[Any, ...]]:
        if self._cached[0] != number:
            self._cached = (number, marshal.loads(zlib.decompress(self.chunks[number])))
        return self._cached[1]

    def take(self, key: str) -> _R | None:
        """The packed record with id ``key``, unpacked and no longer packed; None if there is none."""
        hashes = self._search
        h = hash(key)
        i = bisect_left(hashes, h)
        n = len(hashes)
        while i < n and hashes[i] == h:
            where = int(self._where[i])
            number, pos = where >> 32, where & 0xFFFFFFFF
            if self.alive[number][pos]:
                record = self.from_values(self._chunk(number)[pos])
                if self.key(record) == key:  # not another id of the same hash
                    self.alive[number][pos] = False
                    return record
            i += 1
        return None

    def records(self) -> Iterator[_R]:
        """Every record still packed, chunk by chunk, in the order they were packed."""
        from_values = self.from_values
        for blob, alive in zip(self.chunks, self.alive, strict=True):
            for values, packed in zip(marshal.loads(zlib.decompress(blob)), alive.tolist(), strict=True):
                if packed:
                    yield from_values(values)


def _pack_done(live: dict[str, _R], packed: _Packed[_R]) -> None:
    """Move the finished records among the older half of ``live`` to ``packed``."""
    done = [r for r in islice(live.values(), len(live) // 2) if r.status is not None]
    if done:
        packed.pack(done)
        for r in done:
            del live[packed.key(r)]


def _held(packed: _Packed[_R], live: dict[str, _R]) -> Iterator[_R]:
    """Every task (or attempt): the packed ones, then those held as objects."""
    return chain(packed.records(), live.values())


def _count(v: Any, name: str) -> int | None:
    n = opt_int(v, name)
    return None if n is None or n < 0 else n


def _nonempty(v: Any, name: str) -> str | None:
    s = opt_str(v, name)
    return s or None


def _counter_entries(counters: Any) -> Iterator[tuple[str, str, int]]:
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


def _counter_columns(counters: Any) -> tuple[list[str], list[int], list[str], list[int]]:
    """A JhCounters record as columns: its group names as runs (names, sizes), counter names, values.

    The counters of all groups are taken at once (``map`` over ``itemgetter``)
    and their types checked in bulk; a record that is not plainly typed
    (``{"name": str, "value": int}`` counters in groups with a string name) is
    read again through :func:`_counter_entries`, so it yields the same values,
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
    for group, name, value in _counter_entries(counters):
        if groups and groups[-1] == group:
            sizes[-1] += 1
        else:
            groups.append(group)
            sizes.append(1)
        names.append(name)
        values.append(value)
    return groups, sizes, names, values


def _state_blocks(table: str, records: Iterable[Any], names: Sequence[str], job_id: str | None) -> Iterator[RowBlock]:
    """``tasks`` or ``attempts`` rows of ``records``, in blocks of at most :data:`_STATE_BLOCK`.

    A large job's rows are not all copied at once.  An attempt's ``host`` is
    its completion event's, else its STARTED event's tracker (module docstring).
    """
    it = iter(records)
    while part := list(islice(it, _STATE_BLOCK)):
        columns = {name: list(map(attrgetter(name), part)) for name in names}
        if table == "attempts":
            columns["host"] = [a.tracker_host if a.host is None else a.host for a in part]
        yield RowBlock(table, len(part), columns, {"job_id": job_id})


class HistoryState:
    """Jobs, tasks and attempts of one history file, built event by event.

    Rows produced while events are applied are appended to :attr:`out` (the
    reader yields and clears it); :meth:`rows` yields the rest at the end.
    """

    def __init__(self, notes: list[str]) -> None:
        self.notes = notes
        self.job = _Job()
        # Tasks and attempts as objects; the finished among the older ones are packed (:class:`_Packed`).
        self.tasks: dict[str, _Task] = {}
        self.attempts: dict[str, _Attempt] = {}
        self.packed_tasks: _Packed[_Task] = _Packed(attrgetter("task_id"), self._task_values, self._task_of)
        self.packed_attempts: _Packed[_Attempt] = _Packed(
            attrgetter("attempt_id"), attrgetter(*_Attempt.__slots__), lambda v: _Attempt(*v)
        )
        self._pack_at = LIVE_RECORDS
        # Held counter layouts, one object each (tasks share them), numbered (packed tasks name them so).
        self._layouts: list[_Layout] = []
        self._layout_numbers: dict[_Layout, int] = {}
        self.out: list[Row | RowBlock] = []
        # One object per distinct host, rack, status, locality...: a job's tasks and attempts
        # repeat a few dozen values, and each decoded event brings fresh copies.
        self._strings: dict[str, str] = {}
        # Counter rows of consecutive JhCounters records, by column, until a block is full
        # (per-record blocks cost more to stage than the rows themselves).
        self._counter_rows = 0
        self._counter_job: str | None = None
        self._counter_cols: tuple[list[Any], ...] = _counter_lists()
        # The last JOB_FINISHED's counters by scope, as columns (groups, sizes, names, values): written
        # at the end, so that a JOB_FINISHED written again replaces them rather than adds to them
        self._job_counters: dict[str, tuple[list[str], list[int], list[str], list[int]]] = {}
        self.handlers: dict[EventKind, Callable[[dict[str, Any]], None]] = {
            EventKind.JOB_SUBMITTED: self._job_submitted,
            EventKind.JOB_INITED: self._job_inited,
            EventKind.JOB_INFO_CHANGED: self._job_info_changed,
            EventKind.JOB_QUEUE_CHANGED: self._job_queue_changed,
            EventKind.JOB_FINISHED: self._job_finished,
            EventKind.JOB_UNSUCCESSFUL: self._job_unsuccessful,
            EventKind.TASK_STARTED: self._task_started,
            EventKind.TASK_FINISHED: self._task_finished,
            EventKind.TASK_FAILED: self._task_failed,
            EventKind.TASK_UPDATED: self._task_updated,
            EventKind.ATTEMPT_STARTED: self._attempt_started,
            EventKind.ATTEMPT_FINISHED: self._attempt_finished,
            EventKind.ATTEMPT_UNSUCCESSFUL: self._attempt_unsuccessful,
        }

    def _layout_number(self, layout: _Layout) -> int:
        """The number of ``layout`` among the held counter layouts (added if new)."""
        number = self._layout_numbers.get(layout)
        if number is None:
            number = self._layout_numbers[layout] = len(self._layouts)
            self._layouts.append(layout)
        return number

    def _task_values(self, t: _Task) -> tuple[Any, ...]:
        """A task's fields as marshal-able values: its counter layout by number, its counter values as bytes."""
        return (t.task_id, t.task_type, t.status, t.start_ms, t.finish_ms, t.successful_attempt_id, t.splits,
                t.error, self._layout_number(t.counter_layout), t.counter_values.tobytes(),
                t.counters_emitted)  # fmt: skip

    def _task_of(self, v: tuple[Any, ...]) -> _Task:
        values = array("q")
        values.frombytes(v[9])
        task_id, task_type, status, start, finish, successful, splits, error = v[:8]
        return _Task(task_id, task_type, status, start, finish, successful, splits, error,
                     self._layouts[v[8]], values, v[10])  # fmt: skip

    def _pack_if_many(self) -> None:
        """Once :data:`LIVE_RECORDS` more are held, pack the finished among the older half of them.

        The newer half stays: a late event (a speculative attempt killed after its
        task finished) mostly touches a recent record, and unpacking one costs a chunk.
        """
        if len(self.tasks) + len(self.attempts) < self._pack_at:
            return
        _pack_done(self.tasks, self.packed_tasks)
        _pack_done(self.attempts, self.packed_attempts)
        self._pack_at = len(self.tasks) + len(self.attempts) + LIVE_RECORDS

    def _share(self, text: str | None) -> str | None:
        """``text``, as the one object kept for equal strings (held state stays small on large jobs)."""
        if text is None:
            return None
        return self._strings.setdefault(text, text)

    def learn_job_id(self, payload: dict[str, Any]) -> None:
        """Take the job id from the first id an event carries (jobid, taskid, attemptId...)."""
        for name in ("jobid", "taskid", "attemptId", "applicationAttemptId"):
            v = payload.get(name)
            if type(v) is str and (job_id := v if v.startswith("job_") else job_id_of(v)):
                self.job.job_id = job_id
                return

    def rows(self) -> Iterator[Row | RowBlock]:
        """Rows for the state built so far: counters gathered so far and the job's, jobs, tasks and
        attempts, then task counters."""
        for scope, columns in self._job_counters.items():
            self._add_counters(scope, None, None, *columns)
        self._job_counters = {}
        self.flush_counters()
        yield from self.out
        self.out.clear()
        jid = self.job.job_id
        if jid is not None:
            values = {name: getattr(self.job, name) for name in _Job.__slots__ if name != "ended"}
            values["source_format"] = "jhist"
            yield Row("jobs", values)
        yield from _state_blocks("tasks", _held(self.packed_tasks, self.tasks), _TASK_COLUMNS, jid)
        yield from _state_blocks("attempts", _held(self.packed_attempts, self.attempts), _ATTEMPT_COLUMNS, jid)
        for t in _held(self.packed_tasks, self.tasks):
            if t.counter_values:
                groups, sizes, names = t.counter_layout
                self._add_counters("task", t.task_id, None, groups, sizes, names, t.counter_values.tolist())
                yield from self.out
                self.out.clear()
        self.flush_counters()
        yield from self.out
        self.out.clear()

    def _counters(self, counters: Any, scope: str, task_id: str | None, attempt_id: str | None) -> int:
        """Add the ``counters`` rows (one per counter) of a JhCounters record; return how many.

        Rows of consecutive records gather into one block of up to
        :data:`_COUNTER_BLOCK_ROWS` (:meth:`flush_counters`), in the order they came.
        """
        if counters is None:
            return 0
        groups, sizes, names, values = _counter_columns(counters)
        self._add_counters(scope, task_id, attempt_id, groups, sizes, names, values)
        return len(names)

    def _add_counters(
        self,
        scope: str,
        task_id: str | None,
        attempt_id: str | None,
        groups: Sequence[str],
        sizes: Sequence[int],
        names: Sequence[str],
        values: Sequence[int],
    ) -> None:
        """Gather one record's counter rows behind the others (a block leaves at :data:`_COUNTER_BLOCK_ROWS`).

        The record's scope, task and attempt are one run each, its group names a run per group.
        """
        n = len(names)
        if n:
            jid = self.job.job_id
            if self._counter_rows and jid != self._counter_job:
                self.flush_counters()
            self._counter_job = jid
            scopes, tasks, attempts, record_sizes, group_col, group_sizes, name_col, value_col = self._counter_cols
            scopes.append(scope)
            tasks.append(task_id)
            attempts.append(attempt_id)
            record_sizes.append(n)
            group_col += groups
            group_sizes += sizes
            name_col += names
            value_col += values
            self._counter_rows += n
            if self._counter_rows >= _COUNTER_BLOCK_ROWS:
                self.flush_counters()

    def flush_counters(self) -> None:
        """Move the gathered counter rows to :attr:`out` as one block."""
        if not self._counter_rows:
            return
        scopes, tasks, attempts, record_sizes, groups, group_sizes, names, values = self._counter_cols
        columns = {"scope": Runs(scopes, record_sizes), "task_id": Runs(tasks, record_sizes),
                   "attempt_id": Runs(attempts, record_sizes), "group_name": Runs(groups, group_sizes),
                   "counter_name": names, "value": values}  # fmt: skip
        self.out.append(RowBlock("counters", self._counter_rows, columns, {"job_id": self._counter_job}))
        self._counter_rows = 0
        self._counter_cols = _counter_lists()

    # ------------------------------------------------------------------ job events
    def _job_submitted(self, p: dict[str, Any]) -> None:
        job = self.job
        job.name = opt_str(p.get("jobName"), "jobName")
        job.user = opt_str(p.get("userName"), "userName")
        job.submit_ms = opt_int(p.get("submitTime"), "submitTime")
        job.queue = _nonempty(p.get("jobQueueName"), "jobQueueName")

    def _job_inited(self, p: dict[str, Any]) -> None:
        job = self.job
        job.launch_ms = opt_int(p.get("launchTime"), "launchTime")
        job.total_maps = _count(p.get("totalMaps"), "totalMaps")
        job.total_reduces = _count(p.get("totalReduces"), "totalReduces")
        job.uberized = opt_bool(p.get("uberized"), "uberized")

    def _job_info_changed(self, p: dict[str, Any]) -> None:
        self.job.submit_ms = opt_int(p.get("submitTime"), "submitTime")
        self.job.launch_ms = opt_int(p.get("launchTime"), "launchTime")

    def _job_queue_changed(self, p: dict[str, Any]) -> None:
        self.job.queue = _nonempty(p.get("jobQueueName"), "jobQueueName")

    def _job_end(self, p: dict[str, Any]) -> None:
        job = self.job
        job.ended = True
        job.finish_ms = opt_int(p.get("finishTime"), "finishTime")
        for column, avro in (
            ("finished_maps", "finishedMaps"),
            ("finished_reduces", "finishedReduces"),
            ("failed_maps", "failedMaps"),
            ("failed_reduces", "failedReduces"),
            ("killed_maps", "killedMaps"),
            ("killed_reduces", "killedReduces"),
        ):
            setattr(job, column, _count(p.get(avro), avro))

    def _job_finished(self, p: dict[str, Any]) -> None:
        self._job_end(p)
        self.job.status = _SUCCEEDED
        held: dict[str, tuple[list[str], list[int], list[str], list[int]]] = {}  # (a bad one skips the event)
        for scope, field_name in (("job_total", "totalCounters"), ("job_map", "mapCounters"),
                                  ("job_reduce", "reduceCounters")):  # fmt: skip
            counters = p.get(field_name)
            if counters is not None:
                held[scope] = _counter_columns(counters)
        self._job_counters = held  # the last JOB_FINISHED's, as Hadoop's parser keeps

    def _job_unsuccessful(self, p: dict[str, Any]) -> None:
        self._job_end(p)
        self.job.status = normalize_status(opt_str(p.get("jobStatus"), "jobStatus"))
        self.job.diagnostics = _nonempty(p.get("diagnostics"), "diagnostics")

    # ------------------------------------------------------------------ task events
    def _task(self, p: dict[str, Any]) -> _Task:
        return self._task_by_id(req_str(p, "taskid"), p.get("taskType"))

    def _task_by_id(self, task_id: str, task_type: Any = None) -> _Task:
        """The task ``task_id`` as an object: held, unpacked, or new (of ``task_type``, the event's value)."""
        task = self.tasks.get(task_id)
        if task is None:
            task = self.packed_tasks.take(task_id)
            if task is None:
                task = _Task(task_id, _task_type(opt_str(task_type, "taskType")))
            self.tasks[task_id] = task
            self._pack_if_many()
        return task

    def _task_started(self, p: dict[str, Any]) -> None:
        task = self._task(p)
        task.task_type = _task_type(opt_str(p.get("taskType"), "taskType")) or task.task_type
        task.start_ms = opt_int(p.get("startTime"), "startTime")
        task.splits = self._share(_nonempty(p.get("splitLocations"), "splitLocations"))

    def _hold_task_counters(self, task: _Task, counters: Any) -> None:
        groups: list[str] = []
        sizes: list[int] = []
        names: list[str] = []
        values: list[int] = []
        if counters is not None:
            groups, sizes, names, values = _counter_columns(counters)
        key = (tuple(groups), tuple(sizes), tuple(names))
        task.counter_layout = self._layouts[self._layout_number(key)]
        task.counter_values = array("q", values)

    def _task_counters(self, task: _Task, counters: Any) -> None:
        """A task's counters: final at once unless a lost map output may re-open the task.

        Only map tasks of jobs with reduces are re-run after they finished (the
        ApplicationMaster re-runs a map whose output was lost; a finished reduce is
        never re-run), so only their counters wait for the end of the file.
        """
        if task.counters_emitted:
            self._note(f"task {task.task_id} finished twice; its first task counters are kept")
        elif task.task_type == _MAP and self.job.total_reduces != 0:
            self._hold_task_counters(task, counters)
        else:  # (an end without counters, a TASK_FAILED's null, writes none: a re-run's are the task's)
            task.counters_emitted = self._counters(counters, "task", task.task_id, None) > 0

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def _task_finished(self, p: dict[str, Any]) -> None:
        task = self._task(p)
        task.finish_ms = opt_int(p.get("finishTime"), "finishTime")
        task.status = _SUCCEEDED
        attempt_id = opt_str(p.get("successfulAttemptId"), "successfulAttemptId")
        known = self.attempts.get(attempt_id) if attempt_id is not None else None
        task.successful_attempt_id = attempt_id if known is None else known.attempt_id  # one copy of the id
        self._task_counters(task, p.get("counters"))

    def _task_failed(self, p: dict[str, Any]) -> None:
        task = self._task(p)
        task.finish_ms = opt_int(p.get("finishTime"), "finishTime")
        task.status = self._share(normalize_status(opt_str(p.get("status"), "status"))) or Status.FAILED.value
        task.error = _nonempty(p.get("error"), "error")
        self._task_counters(task, p.get("counters"))

    def _task_updated(self, p: dict[str, Any]) -> None:
        self._task(p).finish_ms = opt_int(p.get("finishTime"), "finishTime")

    # ------------------------------------------------------------------ attempt events
    def _attempt(self, p: dict[str, Any]) -> _Attempt:
        attempt_id = req_str(p, "attemptId")
        attempt = self.attempts.get(attempt_id)
        if attempt is None and (attempt := self.packed_attempts.take(attempt_id)) is not None:
            self.attempts[attempt_id] = attempt
        if attempt is None:
            task_id = opt_str(p.get("taskid"), "taskid") or _task_id_of(attempt_id)
            if task_id is None:
                raise BadEvent(f"attemptId {attempt_id!r} is not an attempt id and no taskid is given")
            task = self._task_by_id(task_id, p.get("taskType"))
            attempt = self.attempts[attempt_id] = _Attempt(
                attempt_id, task.task_id, _task_type(opt_str(p.get("taskType"), "taskType"))
            )
            self._pack_if_many()
        return attempt

    def _attempt_started(self, p: dict[str, Any]) -> None:
        a = self._attempt(p)
        a.start_ms = opt_int(p.get("startTime"), "startTime")
        a.container_id = _nonempty(p.get("containerId"), "containerId")
        a.locality = self._share(_nonempty(p.get("locality"), "locality"))
        a.http_port = opt_int(p.get("httpPort"), "httpPort")
        tracker = opt_str(p.get("trackerName"), "trackerName")
        if tracker:
            a.tracker_host = self._share(split_host(tracker)[0])

    def _attempt_done(self, a: _Attempt, p: dict[str, Any], status_field: str) -> None:
        a.finish_ms = opt_int(p.get("finishTime"), "finishTime")
        share = self._share
        a.status = share(normalize_status(opt_str(p.get(status_field), status_field)))
        hostname = opt_str(p.get("hostname"), "hostname")
        host, rack = split_host(hostname) if hostname else (None, None)
        a.host = share(host)
        a.rack = share(_nonempty(p.get("rackname"), "rackname") or rack)
        if not a.has_counters:
            counters = p.get("counters")
            a.has_counters = self._counters(counters, "attempt", a.task_id, a.attempt_id) > 0

    def _attempt_finished(self, p: dict[str, Any]) -> None:
        a = self._attempt(p)
        self._attempt_done(a, p, "taskStatus")
        if "mapFinishTime" in p:
            a.map_finish_ms = opt_int(p["mapFinishTime"], "mapFinishTime")
        if "shuffleFinishTime" in p:
            a.shuffle_finish_ms = opt_int(p["shuffleFinishTime"], "shuffleFinishTime")
            a.sort_finish_ms = opt_int(p.get("sortFinishTime"), "sortFinishTime")

    def _attempt_unsuccessful(self, p: dict[str, Any]) -> None:
        attempt_id = req_str(p, "attemptId")
        if attempt_id not in self.attempts and (packed := self.packed_attempts.take(attempt_id)) is not None:
            self.attempts[attempt_id] = packed
        if attempt_id not in self.attempts:
            # Killed before it started (a speculative attempt whose twin succeeded first: "Speculation:
            # ... succeeded first!", no host, finish time 0): Hadoop's JobHistoryParser drops the event
            # (handleTaskAttemptFailedEvent finds no AttemptInfo), and so does the attempts table; the
            # raw event stays in events.
            self._note(f"attempt {attempt_id} ended without having started; not an attempt (as Hadoop's parser)")
            return
        a = self._attempt(p)
        self._attempt_done(a, p, "status")
        a.error = _nonempty(p.get("error"), "error")
        task = self._task_by_id(a.task_id)
        if task.status == _SUCCEEDED and task.successful_attempt_id == a.attempt_id:
            # The attempt that made the task succeed is gone: the task is not done any more.
            task.status = task.finish_ms = task.successful_attempt_id = None
            if task.counters_emitted:
                self._note(f"task {task.task_id} was re-opened after its counters were written; they stay")
            else:
                self._hold_task_counters(task, None)
