"""An uberized job's task lines inside its ApplicationMaster's log: which attempt wrote each.

An uberized job (``mapreduce.job.ubertask.enable``; ``predict.uber``) runs no task container:
the AM's ``LocalContainerLauncher`` runs every task in the AM's own JVM, one after another, on
its thread ``uber-SubtaskRunner``, so the MapTask and ReduceTask lines a container's ``syslog``
would hold stand in the AM's, between its own.  :func:`uber_attempts` gives them back to their
attempts:

* A line of the ``uber-SubtaskRunner`` thread belongs to the next attempt the thread names:
  each attempt names itself there before its next one starts (``TaskAttemptListenerImpl``'s
  ``Progress of TaskAttempt <attempt>``, ``Task:<attempt> is done``, ``Final Counters for
  <attempt>``), and nothing of the following task comes before its own first line.
* A task's helper threads (the map's ``SpillThread``; the reduce's fetchers, mergers and event
  fetcher: :data:`~ingest.tasklog_patterns.REDUCE_SIDE_LOGGERS`) write while it runs; one task
  runs at a time, so their lines within its first and last line are its own.
* The AM's own classes (``org.apache.hadoop.mapreduce.v2.app``), also where the subtask thread
  calls them, stay the AM's lines.

A log with no ``uber-SubtaskRunner`` line is an ordinary AM's: every line stays the AM's.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.tasklog_patterns import REDUCE_SIDE_LOGGERS, LogRecord, am_logger
from phaseline.hadoop_names import ATTEMPT_RE

__all__ = ["UBER_THREAD", "uber_attempts"]

#: The thread LocalContainerLauncher runs an uberized job's tasks on (Hadoop 2.x and 3.x).
UBER_THREAD = "uber-SubtaskRunner"
#: Loggers of a task's threads besides the subtask thread: the map's spill thread (MapTask,
#: Merger) and the reduce's fetchers, mergers and event fetcher.
_HELPER_LOGGERS = REDUCE_SIDE_LOGGERS | {"MapTask"}


def uber_attempts(records: Sequence[LogRecord]) -> tuple[dict[str, list[int]], list[int]]:
    """The indexes of each uberized attempt's lines (module docstring), and of the AM's own lines.

    ``records`` in time order, as the log has them.
    """
    tasks: dict[str, list[int]] = {}
    pending: list[int] = []  # subtask lines before the attempt that names itself
    for i, rec in enumerate(records):
        if rec.thread != UBER_THREAD or am_logger(rec.logger):
            continue
        pending.append(i)
        named = ATTEMPT_RE.search(rec.message)
        if named is not None:
            tasks.setdefault(named.group(0), []).extend(pending)
            pending = []
    if not tasks:
        return {}, list(range(len(records)))
    taken = {i for idxs in tasks.values() for i in idxs}
    spans = [(records[min(idxs)].ts_ms, records[max(idxs)].ts_ms, attempt) for attempt, idxs in tasks.items()]
    for i, rec in enumerate(records):
        if i in taken or rec.thread == UBER_THREAD or rec.logger.rsplit(".", 1)[-1] not in _HELPER_LOGGERS:
            continue
        owner = next((a for start, end, a in spans if start <= rec.ts_ms <= end), None)
        if owner is not None:
            tasks[owner].append(i)
            taken.add(i)
    for idxs in tasks.values():
        idxs.sort()
    return tasks, [i for i in range(len(records)) if i not in taken]
