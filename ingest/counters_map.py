"""The ``.jhist`` event types -> what each does to phaseline's tables, in one declarative table.

:data:`EVENT_SPECS`: every ``.jhist`` event type Hadoop 0.23 - 3.x writes (the
``EventType`` enum of ``Events.avpr``), what it means to phaseline
(:class:`~phaseline.hadoop_names.HistoryEventKind`), the Avro record that carries
it, which payload field is its timestamp, and the Hadoop line that introduced it.
A new Hadoop version means one new entry here.  Task types, ids and hosts are
in :mod:`phaseline.hadoop_names`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from phaseline.hadoop_names import HistoryEventKind


@dataclass(frozen=True, slots=True)
class EventSpec:
    """How one raw event type maps onto phaseline's tables.

    Attributes
    ----------
    kind
        What the event does (which handler applies).
    record
        The Avro record (short name) Hadoop writes for it.
    time_field
        The payload field holding the event's own time (``events.ts_ms``), or None.
    since
        The Hadoop line that first wrote the event type.
    """

    kind: HistoryEventKind
    record: str | None
    time_field: str | None
    since: str


def _spec(kind: HistoryEventKind, record: str | None, time_field: str | None, since: str = "0.23") -> EventSpec:
    return EventSpec(kind, record, time_field, since)


_K = HistoryEventKind
EVENT_SPECS: Mapping[str, EventSpec] = MappingProxyType(
    {
        "JOB_SUBMITTED": _spec(_K.JOB_SUBMITTED, "JobSubmitted", "submitTime"),
        "JOB_INITED": _spec(_K.JOB_INITED, "JobInited", "launchTime"),
        "JOB_INFO_CHANGED": _spec(_K.JOB_INFO_CHANGED, "JobInfoChange", "launchTime"),
        "JOB_FINISHED": _spec(_K.JOB_FINISHED, "JobFinished", "finishTime"),
        "JOB_FAILED": _spec(_K.JOB_UNSUCCESSFUL, "JobUnsuccessfulCompletion", "finishTime"),
        "JOB_KILLED": _spec(_K.JOB_UNSUCCESSFUL, "JobUnsuccessfulCompletion", "finishTime"),
        "JOB_ERROR": _spec(_K.JOB_UNSUCCESSFUL, "JobUnsuccessfulCompletion", "finishTime", "2.0"),
        "JOB_QUEUE_CHANGED": _spec(_K.JOB_QUEUE_CHANGED, "JobQueueChange", None, "2.0"),
        "JOB_PRIORITY_CHANGED": _spec(_K.EVENT_ONLY, "JobPriorityChange", None),
        "JOB_STATUS_CHANGED": _spec(_K.EVENT_ONLY, "JobStatusChanged", None),
        "NORMALIZED_RESOURCE": _spec(_K.EVENT_ONLY, None, None),
        "AM_STARTED": _spec(_K.EVENT_ONLY, "AMStarted", "startTime"),
        "TASK_STARTED": _spec(_K.TASK_STARTED, "TaskStarted", "startTime"),
        "TASK_FINISHED": _spec(_K.TASK_FINISHED, "TaskFinished", "finishTime"),
        "TASK_FAILED": _spec(_K.TASK_FAILED, "TaskFailed", "finishTime"),
        "TASK_UPDATED": _spec(_K.TASK_UPDATED, "TaskUpdated", "finishTime"),
        **{
            f"{phase}_ATTEMPT_STARTED": _spec(_K.ATTEMPT_STARTED, "TaskAttemptStarted", "startTime")
            for phase in ("MAP", "REDUCE", "SETUP", "CLEANUP")
        },
        "MAP_ATTEMPT_FINISHED": _spec(_K.ATTEMPT_FINISHED, "MapAttemptFinished", "finishTime"),
        "REDUCE_ATTEMPT_FINISHED": _spec(_K.ATTEMPT_FINISHED, "ReduceAttemptFinished", "finishTime"),
        "SETUP_ATTEMPT_FINISHED": _spec(_K.ATTEMPT_FINISHED, "TaskAttemptFinished", "finishTime"),
        "CLEANUP_ATTEMPT_FINISHED": _spec(_K.ATTEMPT_FINISHED, "TaskAttemptFinished", "finishTime"),
        **{
            f"{phase}_ATTEMPT_{end}": _spec(
                _K.ATTEMPT_UNSUCCESSFUL, "TaskAttemptUnsuccessfulCompletion", "finishTime"
            )
            for phase in ("MAP", "REDUCE", "SETUP", "CLEANUP")
            for end in ("FAILED", "KILLED")
        },
    }
)

# Fields an event's time may sit in, for event types phaseline does not know.
FALLBACK_TIME_FIELDS: tuple[str, ...] = ("finishTime", "startTime", "launchTime", "submitTime", "timestamp")
