"""What a job history means: Hadoop's JobHistoryParser rules, as phaseline state and rows.

:class:`HistoryState` receives the typed payload of each ``.jhist`` event (see
:mod:`ingest.jhist`, which reads the bytes) and keeps one record per job, task
and attempt; ``counters`` rows of jobs and attempts are produced as events
arrive, the job/task/attempt rows and task counters when the file ends.  The
finished tasks and attempts among the older ones are packed as they pile up
(:class:`Packed`), so a large file's memory stays about flat.

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

from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from operator import attrgetter
from typing import Any

from ingest.base import Row, RowBlock
from ingest.jhist_counters import CounterBlocks, counter_columns
from ingest.jhist_packed import Packed, pack_done
from ingest.jhist_records import (
    ATTEMPT_COLUMNS,
    JOB_END,
    JOB_INFO_CHANGED,
    JOB_INITED,
    JOB_SUBMITTED,
    TASK_COLUMNS,
    TASK_VALUES,
    AttemptRecord,
    CounterLayouts,
    JobRecord,
    Layout,
    TaskRecord,
    field_blocks,
    read_fields,
)
from ingest.jhist_schema import BadEvent, opt_int, opt_nonempty, opt_str, req_str
from ingest.jhist_typed import JhCounters
from ingest.shared_values import SharedValues
from phaseline.hadoop_names import HistoryEventKind as EventKind
from phaseline.hadoop_names import job_id_of
from phaseline.hadoop_names import task_id_of as _task_id_of
from phaseline.hadoop_names import task_type as _task_type
from phaseline.schemas import Status, TaskType, normalize_status

_SUCCEEDED = Status.SUCCEEDED.value
_COUNTER_LAYOUT = TASK_VALUES.index("counter_layout")
_COUNTER_VALUES = TASK_VALUES.index("counter_values")
_attempt_values = attrgetter(*AttemptRecord.__slots__)
_MAP = TaskType.MAP.value


#: Tasks (and attempts) held as objects before the finished among the older half are packed.
LIVE_RECORDS = 2_048


class HistoryState:
    """Jobs, tasks and attempts of one history file, built event by event.

    Rows produced while events are applied are appended to :attr:`out` (the
    reader yields and clears it); :meth:`rows` yields the rest at the end.
    """

    #: An event a range's state (:mod:`ingest.jhist_split`) leaves to the merge: its kind and payload,
    #: set by the handler that declined it; a whole file's state applies every event (always None).
    pending: tuple[EventKind, dict[str, Any]] | None = None

    def __init__(self, notes: list[str]) -> None:
        self.notes = notes
        self.job = JobRecord()
        # Tasks and attempts as objects; the finished among the older ones are packed (:class:`Packed`).
        self.tasks: dict[str, TaskRecord] = {}
        self.attempts: dict[str, AttemptRecord] = {}
        # Held counter layouts, one object each (tasks share them), numbered (packed tasks name them so).
        self._layouts = CounterLayouts()
        self._held_layout: Layout | None = None  # the layout a task's counters were last held in (shared)
        self.packed_tasks: Packed[TaskRecord] = Packed(
            attrgetter("task_id"), self._layouts.task_values, self._layouts.task_of
        )
        self.packed_attempts: Packed[AttemptRecord] = Packed(
            attrgetter("attempt_id"), _attempt_values, lambda v: AttemptRecord(*v)
        )
        self._pack_at = LIVE_RECORDS
        self.out: list[Row | RowBlock] = []
        # One object per distinct host, rack, status, locality... (:class:`SharedValues`)
        shared = SharedValues()
        self._share, self._host, self._status = shared.text, shared.host, shared.status
        # Counter rows of consecutive JhCounters records, gathered into blocks for :attr:`out`.
        self._counter_blocks = CounterBlocks(self.out)
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

    def _pack_if_many(self) -> None:
        """Once :data:`LIVE_RECORDS` more are held, pack the finished among the older half of them.

        The newer half stays: a late event (a speculative attempt killed after its
        task finished) mostly touches a recent record, and unpacking one costs a chunk.
        """
        if len(self.tasks) + len(self.attempts) < self._pack_at:
            return
        pack_done(self.tasks, self.packed_tasks)
        pack_done(self.attempts, self.packed_attempts)
        self._pack_at = len(self.tasks) + len(self.attempts) + LIVE_RECORDS

    def learn_job_id(self, payload: dict[str, Any]) -> None:
        """Take the job id from the first id an event carries (jobid, taskid, attemptId...)."""
        for name in ("jobid", "taskid", "attemptId", "applicationAttemptId"):
            v = payload.get(name)
            if type(v) is str and (job_id := v if v.startswith("job_") else job_id_of(v)):
                self.job.job_id = job_id
                return

    def rows(self) -> Iterator[Row | RowBlock]:
        """Rows for the state built so far: counters gathered so far and the job's, jobs, tasks (and
        the counters they held, after every other counters row), attempts."""
        jid = self.job.job_id
        for scope, columns in self._job_counters.items():
            self._counter_blocks.add(jid, scope, None, None, *columns)
        self._job_counters = {}
        self.flush_counters()
        yield from self.out
        self.out.clear()
        if jid is not None:
            values = {name: getattr(self.job, name) for name in JobRecord.__slots__ if name != "ended"}
            values["source_format"] = "jhist"
            yield Row("jobs", values)
        # One pass over the tasks, packed (a large job's) then held, by field (no object made again):
        # each block of tasks rows, then the counters its tasks held, which follow every other
        # counters row as before.
        layouts = self._layouts
        held_tasks: list[Sequence[Any]] = list(zip(*map(layouts.task_values, self.tasks.values()), strict=True))
        tasks = chain(self.packed_tasks.columns(), [held_tasks])
        for block, by_field in field_blocks("tasks", tasks, TASK_VALUES, TASK_COLUMNS, jid):
            yield block
            for task_id, layout, values in zip(by_field[0], by_field[_COUNTER_LAYOUT], by_field[_COUNTER_VALUES],
                                               strict=True):  # fmt: skip
                if values:
                    groups, sizes, names = layouts.layout(layout)
                    self._counter_blocks.add(jid, "task", task_id, None, groups, sizes, names,
                                             memoryview(values).cast("q").tolist())  # fmt: skip
                    yield from self.out
                    self.out.clear()
        held_attempts: list[Sequence[Any]] = list(zip(*map(_attempt_values, self.attempts.values()), strict=True))
        attempts = chain(self.packed_attempts.columns(), [held_attempts])
        for block, _ in field_blocks("attempts", attempts, AttemptRecord.__slots__, ATTEMPT_COLUMNS, jid):
            yield block
        self.flush_counters()
        yield from self.out
        self.out.clear()

    def _counters(self, counters: Any, scope: str, task_id: str | None, attempt_id: str | None) -> int:
        """Add the ``counters`` rows (one per counter) of a JhCounters record; return how many.

        Rows of consecutive records gather into one block of up to
        :data:`ingest.jhist_counters.COUNTER_BLOCK_ROWS` (:meth:`flush_counters`), in the order they came.
        """
        if counters is None:
            return 0
        if type(counters) is JhCounters:  # (decoded as structs, checked: taken apart in bulk)
            return self._counter_blocks.add_record(self.job.job_id, scope, task_id, attempt_id, counters)
        groups, sizes, names, values = counter_columns(counters)
        self._counter_blocks.add(self.job.job_id, scope, task_id, attempt_id, groups, sizes, names, values)
        return len(names)

    def flush_counters(self) -> None:
        """Move the gathered counter rows to :attr:`out` as one block."""
        self._counter_blocks.flush()

    # ------------------------------------------------------------------ job events
    def _job_submitted(self, p: dict[str, Any]) -> None:
        read_fields(self.job, p, JOB_SUBMITTED)

    def _job_inited(self, p: dict[str, Any]) -> None:
        read_fields(self.job, p, JOB_INITED)

    def _job_info_changed(self, p: dict[str, Any]) -> None:
        read_fields(self.job, p, JOB_INFO_CHANGED)

    def _job_queue_changed(self, p: dict[str, Any]) -> None:
        self.job.queue = opt_nonempty(p.get("jobQueueName"), "jobQueueName")

    def _job_end(self, p: dict[str, Any]) -> None:
        job = self.job
        job.ended = True
        read_fields(job, p, JOB_END)

    def _job_finished(self, p: dict[str, Any]) -> None:
        self._job_end(p)
        self.job.status = _SUCCEEDED
        held: dict[str, tuple[list[str], list[int], list[str], list[int]]] = {}  # (a bad one skips the event)
        for scope, field_name in (("job_total", "totalCounters"), ("job_map", "mapCounters"),
                                  ("job_reduce", "reduceCounters")):  # fmt: skip
            counters = p.get(field_name)
            if counters is not None:
                held[scope] = counter_columns(counters)
        self._job_counters = held  # the last JOB_FINISHED's, as Hadoop's parser keeps

    def _job_unsuccessful(self, p: dict[str, Any]) -> None:
        self._job_end(p)
        self.job.status = normalize_status(opt_str(p.get("jobStatus"), "jobStatus"))
        self.job.diagnostics = opt_nonempty(p.get("diagnostics"), "diagnostics")

    # ------------------------------------------------------------------ task events
    def _task(self, p: dict[str, Any]) -> TaskRecord:
        return self._task_by_id(req_str(p, "taskid"), p.get("taskType"))

    def _task_by_id(self, task_id: str, task_type: Any = None) -> TaskRecord:
        """The task ``task_id`` as an object: held, unpacked, or new (of ``task_type``, the event's value)."""
        task = self.tasks.get(task_id)
        if task is None:
            task = self.packed_tasks.take(task_id)
            if task is None:
                task = TaskRecord(task_id, _task_type(opt_str(task_type, "taskType")))
            self.tasks[task_id] = task
            self._pack_if_many()
        return task

    def _task_started(self, p: dict[str, Any]) -> None:
        task = self._task(p)
        task.task_type = _task_type(opt_str(p.get("taskType"), "taskType")) or task.task_type
        task.start_ms = opt_int(p.get("startTime"), "startTime")
        task.splits = self._share(opt_nonempty(p.get("splitLocations"), "splitLocations"))

    def _hold_task_counters(self, task: TaskRecord, counters: Any) -> None:
        if type(counters) is JhCounters:  # (decoded as structs, checked)
            like = self._held_layout
            layout, values = counters.held(like)
            task.counter_layout = self._held_layout = layout if layout is like else self._layouts.shared(layout)
            task.counter_values = values
            return
        no_counters: tuple[list[str], list[int], list[str], list[int]] = ([], [], [], [])
        groups, sizes, names, values_ = no_counters if counters is None else counter_columns(counters)
        task.counter_layout = self._layouts.shared((tuple(groups), tuple(sizes), tuple(names)))
        task.counter_values = array("q", values_)

    def _task_counters(self, task: TaskRecord, counters: Any) -> None:
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
        task.error = opt_nonempty(p.get("error"), "error")
        self._task_counters(task, p.get("counters"))

    def _task_updated(self, p: dict[str, Any]) -> None:
        self._task(p).finish_ms = opt_int(p.get("finishTime"), "finishTime")

    # ------------------------------------------------------------------ attempt events
    def _attempt(self, p: dict[str, Any]) -> AttemptRecord:
        attempt_id = req_str(p, "attemptId")
        attempt = self.attempts.get(attempt_id)
        if attempt is None and (attempt := self.packed_attempts.take(attempt_id)) is not None:
            self.attempts[attempt_id] = attempt
        if attempt is None:
            task_id = opt_str(p.get("taskid"), "taskid") or _task_id_of(attempt_id)
            if task_id is None:
                raise BadEvent(f"attemptId {attempt_id!r} is not an attempt id and no taskid is given")
            task = self._task_by_id(task_id, p.get("taskType"))
            attempt = self.attempts[attempt_id] = AttemptRecord(
                attempt_id, task.task_id, _task_type(opt_str(p.get("taskType"), "taskType"))
            )
            self._pack_if_many()
        return attempt

    def _attempt_started(self, p: dict[str, Any]) -> None:
        a = self._attempt(p)
        a.start_ms = opt_int(p.get("startTime"), "startTime")
        a.container_id = opt_nonempty(p.get("containerId"), "containerId")
        a.locality = self._share(opt_nonempty(p.get("locality"), "locality"))
        a.http_port = opt_int(p.get("httpPort"), "httpPort")
        tracker = opt_str(p.get("trackerName"), "trackerName")
        if tracker:
            a.tracker_host = self._host(tracker)[0]

    def _attempt_done(self, a: AttemptRecord, p: dict[str, Any], status_field: str) -> None:
        a.finish_ms = opt_int(p.get("finishTime"), "finishTime")
        a.status = self._status(opt_str(p.get(status_field), status_field))
        hostname = opt_str(p.get("hostname"), "hostname")
        host, rack = self._host(hostname) if hostname else (None, None)
        a.host = host
        a.rack = self._share(opt_nonempty(p.get("rackname"), "rackname") or rack)
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
        a.error = opt_nonempty(p.get("error"), "error")
        task = self._task_by_id(a.task_id)
        if task.status == _SUCCEEDED and task.successful_attempt_id == a.attempt_id:
            # The attempt that made the task succeed is gone: the task is not done any more.
            task.status = task.finish_ms = task.successful_attempt_id = None
            if task.counters_emitted:
                self._note(f"task {task.task_id} was re-opened after its counters were written; they stay")
            else:
                self._hold_task_counters(task, None)
