"""Typed decoding of the common ``.jhist`` event lines with msgspec: the fast path of :mod:`ingest.jhist`.

Most of a history's bytes are four event types (TASK_STARTED, *_ATTEMPT_STARTED,
*_ATTEMPT_FINISHED, TASK_FINISHED), and most of their bytes are counters.
:func:`decode_typed` decodes such a line with one ``msgspec.json.Decoder`` of a
tagged union of those event types (``type`` is the tag that picks the
envelope), whose ``TypedDict`` s name only the fields
:class:`~ingest.jhist_state.HistoryState` reads: the others (display names,
progress splits, ACLs...) are skipped unparsed, and the kept ones are checked
for type as they are decoded.

The typed path decides nothing.  Its payload is the dict orjson would give,
less the fields nobody reads and with counters as :class:`JhCounters` structs
(no dict per counter; ``jhist_counters.counter_columns`` takes either), and it goes through the same steps
(the writer's-schema unwrap, then the handlers of :mod:`ingest.jhist_state`,
which keep Hadoop's rules, once).  So that the rows are the same, a line is
decoded here only if it has exactly the shape the orjson path reads without
repair; every other line is read the orjson way (``_JhistReader._decode_line``):

* ``{"type":"<TYPE>", "event": {"org.apache.hadoop.mapreduce.jobhistory.<Record>": {...}}}``
  with nothing else in ``event`` (``type`` is read wherever it stands, escaped or not, as orjson
  reads it; a second ``type`` of another value fails);
* integers within 64 bits, strings (or ``{"string": "..."}`` where Hadoop
  writes a union), counters as a bare JhCounters record of plainly typed counters.

A field of another type (a float for a long, a wrapped long, a counters
record wrapped in a union, a counter without a value...) fails validation
and the line goes the orjson path, which reads, repairs or refuses it as it
always did; so does a line with invalid UTF-8, or JSON msgspec refuses.
One difference is left on purpose: a number that overflows a double in a
field phaseline does not read (``1e400``) is skipped unparsed here, where
orjson refuses the whole line; the event is kept.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Final, Protocol, TypedDict, Union, get_args, get_type_hints

import msgspec

from ingest.jhist_records import Layout
from ingest.mrcommon import INT64_MAX, INT64_MIN

_JH = "org.apache.hadoop.mapreduce.jobhistory."
Long = Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)]
Str = str | None
#: A string field Hadoop 2.7+ writes in a union (``{"string": "x"}``); the reader unwraps it after,
#: by the writer's schema, as it does a line orjson decoded.
WrappedStr = str | None | dict[str, str]


class Counter(msgspec.Struct, gc=False):
    name: str
    value: Long


class CounterGroup(msgspec.Struct, gc=False):
    name: str
    counts: list[Counter]


class JhCounters(msgspec.Struct, gc=False):
    """A bare JhCounters record as structs, checked as decoded (its name and display names not kept).

    Its counters are read with list comprehensions: a slotted struct's attribute in a comprehension
    costs about half of ``map(attrgetter(...))``'s call per counter (Python 3.11).
    """

    groups: list[CounterGroup]

    def _parts(self) -> tuple[list[str], list[int], list[Counter]]:
        """Group names, counters per group, and the counters of every group in order."""
        groups: list[str] = []
        sizes: list[int] = []
        every: list[Counter] = []
        for g in self.groups:
            got = g.counts
            groups.append(g.name)
            sizes.append(len(got))
            every += got
        return groups, sizes, every

    def columns(self) -> tuple[list[str], list[int], list[str], list[int]]:
        """Group names, counters per group, counter names, values: ``jhist_counters.counter_columns``'s
        result for the same record read from a dict, without its type checks (msgspec made them)."""
        groups, sizes, every = self._parts()
        return groups, sizes, [c.name for c in every], [c.value for c in every]

    def held(self, like: Layout | None = None) -> tuple[Layout, array[int]]:
        """The record as a held task keeps it: its layout (group names, counters per group, counter
        names) and its values; :meth:`columns`' content without the lists between.  The layout is
        ``like`` itself when equal to it (a job's tasks mostly share one: compared, not hashed)."""
        groups, sizes, every = self._parts()
        names = tuple([c.name for c in every])
        if like is not None and like[2] == names and like[1] == tuple(sizes) and like[0] == tuple(groups):
            layout = like
        else:
            layout = (tuple(groups), tuple(sizes), names)
        return layout, array("q", [c.value for c in every])


class TaskStarted(TypedDict, total=False):
    taskid: Str
    taskType: Str
    startTime: Long | None
    splitLocations: Str


class TaskFinished(TypedDict, total=False):
    taskid: Str
    taskType: Str
    finishTime: Long | None
    successfulAttemptId: WrappedStr
    counters: JhCounters | None


class AttemptStarted(TypedDict, total=False):
    taskid: Str
    taskType: Str
    attemptId: Str
    startTime: Long | None
    trackerName: Str
    httpPort: Long | None
    containerId: Str
    locality: WrappedStr


class AttemptFinished(TypedDict, total=False):
    """MapAttemptFinished, ReduceAttemptFinished and TaskAttemptFinished."""

    taskid: Str
    taskType: Str
    attemptId: Str
    taskStatus: Str
    finishTime: Long | None
    hostname: Str
    rackname: Str
    counters: JhCounters | None
    mapFinishTime: Long | None
    shuffleFinishTime: Long | None
    sortFinishTime: Long | None


class JobFinished(TypedDict, total=False):
    finishTime: Long | None
    finishedMaps: Long | None
    finishedReduces: Long | None
    failedMaps: Long | None
    failedReduces: Long | None
    killedMaps: Long | None
    killedReduces: Long | None
    totalCounters: JhCounters | None
    mapCounters: JhCounters | None
    reduceCounters: JhCounters | None


#: Event type -> (Avro record, the payload's fields that HistoryState reads) on the typed path.
TYPED_EVENTS: Final[dict[str, tuple[str, type]]] = {
    "TASK_STARTED": ("TaskStarted", TaskStarted),
    "TASK_FINISHED": ("TaskFinished", TaskFinished),
    **{f"{phase}_ATTEMPT_STARTED": ("TaskAttemptStarted", AttemptStarted)
       for phase in ("MAP", "REDUCE", "SETUP", "CLEANUP")},
    "MAP_ATTEMPT_FINISHED": ("MapAttemptFinished", AttemptFinished),
    "REDUCE_ATTEMPT_FINISHED": ("ReduceAttemptFinished", AttemptFinished),
    "SETUP_ATTEMPT_FINISHED": ("TaskAttemptFinished", AttemptFinished),
    "CLEANUP_ATTEMPT_FINISHED": ("TaskAttemptFinished", AttemptFinished),
    "JOB_FINISHED": ("JobFinished", JobFinished),
}  # fmt: skip


def _envelope(etype: str, record: str, payload: type) -> type[msgspec.Struct]:
    """``{"type": "<etype>", "event": {"<namespace>.<record>": <payload>}}`` (``event`` holds that one key),
    one member of the tagged union :data:`_DECODE` reads: its ``type`` is the tag that picks it."""
    body = msgspec.defstruct(
        f"{record}Body", [("record", payload, msgspec.field(name=_JH + record))], forbid_unknown_fields=True,
        gc=False,
    )  # fmt: skip
    hints = get_type_hints(payload)
    namespace = {"etype": etype, "record": _JH + record, "fields": frozenset(hints),
                 "dict_fields": frozenset(name for name, t in hints.items() if dict[str, str] in get_args(t))}
    return msgspec.defstruct(f"{etype.title().replace('_', '')}Event", [("event", body)], tag_field="type",
                             tag=etype, gc=False, namespace=namespace)  # fmt: skip


#: What a typed decode gives: the event's type, its record's full name, its payload, and the line (UTF-8).
Decoded = tuple[str, str, dict[str, Any], bytes]
_DecodeErrors = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
#: One decoder for every typed event type: ``type`` (a tag; a second ``type`` key of another value
#: fails) picks the envelope, so a line is read in one call, with no look-up of its type in Python.
_DECODE: Final[Callable[[bytes], Any]] = msgspec.json.Decoder(
    Union[tuple(_envelope(etype, record, payload) for etype, (record, payload) in TYPED_EVENTS.items())]  # noqa: UP007
).decode


class Envelope(Protocol):
    """A typed event line as :func:`decode_event` gives it; its class says what the line is."""

    etype: ClassVar[str]  # the event type
    record: ClassVar[str]  # its Avro record's full name
    fields: ClassVar[frozenset[str]]  # the payload's fields that are read (no other is kept)
    dict_fields: ClassVar[frozenset[str]]  # those of them a dict may stand in (a union's ``{"string": x}``)

    @property
    def event(self) -> Any: ...  # ``.record``: the payload


def decode_event(text: bytes) -> Envelope | None:
    """An event line of the typed shape, decoded (:func:`decode_typed`, without taking it apart);
    None: decode it with orjson."""
    try:
        ev = _DECODE(text)
        if not text.isascii():
            text.decode()  # UTF-8 throughout, skipped fields too (the orjson path mends a line that is not)
    except _DecodeErrors:
        return None
    return ev  # type: ignore[no-any-return]


def decode_typed(text: bytes) -> Decoded | None:
    """``(type, record, payload, line)`` of an event line of the typed shape; None: decode it with orjson.

    >>> decode_typed(b'{"type":"TASK_UPDATED","event":{}}') is None  # not a typed event type
    True
    >>> decode_typed(b'{"type":"TASK_STARTED","event":{"org.apache.hadoop.mapreduce.jobhistory.TaskStarted":'
    ...              b'{"taskid":"task_1_0001_m_000000","startTime":5,"splitLocations":"h","x":[1.5]}}}')[2]
    {'taskid': 'task_1_0001_m_000000', 'startTime': 5, 'splitLocations': 'h'}
    >>> decode_typed(b'{"type":"TASK_STARTED","event":{"org.apache.hadoop.mapreduce.jobhistory.TaskStarted":'
    ...              b'{"taskid":"task_1_0001_m_000000","startTime":5.0}}}') is None  # a float: the orjson path
    True
    """
    ev = decode_event(text)
    return None if ev is None else (ev.etype, ev.record, ev.event.record, text)
