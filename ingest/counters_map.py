"""Raw Hadoop names -> phaseline's: job history event types, task types, hosts.

One declarative table per concept, so a reader never hard-codes a raw name
inline and a new Hadoop version means one new entry here.

* :data:`EVENT_SPECS`: every ``.jhist`` event type Hadoop 0.23 - 3.x writes
  (the ``EventType`` enum of ``Events.avpr``), what it means to phaseline
  (:class:`EventKind`), the Avro record that carries it, which payload field
  is its timestamp, and the Hadoop line that introduced it.
* :data:`TASK_TYPES`: Hadoop's ``TaskType`` names (``JOB_SETUP``...) and 0.20's
  (``SETUP``...) -> :class:`phaseline.schemas.TaskType`.
* :func:`split_host`: ``/rack/host``, ``host:port`` and 1.x
  ``tracker_host:localhost/127.0.0.1:port`` -> ``(host, rack)``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from phaseline.schemas import TaskType


class EventKind(enum.StrEnum):
    """What a history event does to phaseline's tables."""

    JOB_SUBMITTED = "job_submitted"
    JOB_INITED = "job_inited"
    JOB_INFO_CHANGED = "job_info_changed"
    JOB_QUEUE_CHANGED = "job_queue_changed"
    JOB_FINISHED = "job_finished"
    JOB_UNSUCCESSFUL = "job_unsuccessful"
    TASK_STARTED = "task_started"
    TASK_FINISHED = "task_finished"
    TASK_FAILED = "task_failed"
    TASK_UPDATED = "task_updated"
    ATTEMPT_STARTED = "attempt_started"
    ATTEMPT_FINISHED = "attempt_finished"
    ATTEMPT_UNSUCCESSFUL = "attempt_unsuccessful"
    EVENT_ONLY = "event_only"  # kept in ``events`` only (Hadoop's parser ignores it too)


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

    kind: EventKind
    record: str | None
    time_field: str | None
    since: str


def _spec(kind: EventKind, record: str | None, time_field: str | None, since: str = "0.23") -> EventSpec:
    return EventSpec(kind, record, time_field, since)


_K = EventKind
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

TASK_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "MAP": TaskType.MAP.value,
        "REDUCE": TaskType.REDUCE.value,
        "JOB_SETUP": TaskType.SETUP.value,  # 0.23+ TaskType enum
        "SETUP": TaskType.SETUP.value,  # 0.20 history
        "JOB_CLEANUP": TaskType.CLEANUP.value,
        "CLEANUP": TaskType.CLEANUP.value,
        "TASK_CLEANUP": TaskType.TASK_CLEANUP.value,
    }
)


def task_type(raw: str | None) -> str | None:
    """Hadoop's task type name -> :class:`~phaseline.schemas.TaskType` value (unknown names kept).

    >>> task_type("JOB_SETUP")
    'SETUP'
    """
    if raw is None or raw == "":
        return None
    return TASK_TYPES.get(raw, raw)


# ids: job_<cluster>_<n>, task_<cluster>_<n>_m_<i>, attempt_<cluster>_<n>_m_<i>_<k>,
# appattempt_<cluster>_<n>_<k>, application_<cluster>_<n>.
_ID_RE = re.compile(r"(?:job|task|attempt|application|appattempt)_(\d+)_(\d+)")


def job_id_of(any_id: str) -> str | None:
    """The job id a task/attempt/application id belongs to.

    >>> job_id_of("attempt_1399356417814_19732_m_000000_3")
    'job_1399356417814_19732'
    >>> job_id_of("appattempt_1329348432655_0001_000001")
    'job_1329348432655_0001'
    """
    m = _ID_RE.match(any_id)
    return f"job_{m.group(1)}_{m.group(2)}" if m else None


def task_id_of(attempt_id: str) -> str | None:
    """The task id of an attempt id (``attempt_X_Y_m_000001_0`` -> ``task_X_Y_m_000001``).

    >>> task_id_of("attempt_1329348432655_0001_r_000000_0")
    'task_1329348432655_0001_r_000000'
    """
    if not attempt_id.startswith("attempt_"):
        return None
    head, sep, _ = attempt_id.rpartition("_")
    return "task_" + head[len("attempt_") :] if sep else None


@lru_cache(maxsize=65536)
def split_host(raw: str) -> tuple[str | None, str | None]:
    """A host as written by Hadoop -> ``(host, rack)``: port, rack path and 1.x tracker prefix removed.

    >>> split_host("/default-rack/node17.example.com:8041")
    ('node17.example.com', '/default-rack')
    >>> split_host("tracker_node3:localhost/127.0.0.1:41234")
    ('node3', None)
    >>> split_host("localhost")
    ('localhost', None)
    """
    text = raw.strip()
    rack: str | None = None
    if text.startswith("tracker_"):
        text = text[len("tracker_") :]
    if text.startswith("/"):
        rack_part, _, text = text.rpartition("/")
        rack = rack_part or None
    host = text.split(":", 1)[0]
    return (host or None), rack
