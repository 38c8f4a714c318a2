"""HiTune sampling records: the plain four-field format any sampler can emit.

HiTune's samplers write records of four fields (Dai et al. 2011, section 3,
Figure 6): *Timestamp*, *Type*, *Target*, *Value*.  phaseline reads them as
tab-separated text (UTF-8, optionally gzipped), one record per line::

    #hitune-samples 1
    1307525436899<TAB>stack<TAB>sr214|attempt_201106081729_0001_m_000004_0|24|SpillThread<TAB>RUNNABLE|java.io.DataOutputStream.write;...;org.apache.hadoop.mapred.MapTask$MapOutputBuffer$SpillThread.run
    1307525438000<TAB>cpu<TAB>sr214|all<TAB>user=3.47;system=0.42;iowait=0.00;idle=96.10
    1307525438100<TAB>log<TAB>sr214|syslog<TAB>2011-06-08 17:30:38,100 INFO org.apache.hadoop.mapred.MapTask: ...

* **Timestamp**: integer milliseconds since the epoch (UTC), or seconds with a
  decimal point.
* **Type**: ``stack`` (a task execution sample), a system metric family
  (``cpu``, ``disk``, ``net``, ``mem``), or anything else (``log``, ...).
* **Target**: ``|``-separated.  For ``stack``: ``host|attempt_id|thread_id|thread_name``
  (the thread name comes last and may contain ``|``; ``attempt_id`` may be empty:
  phaseline then joins the thread id with the attempt logs).  For metrics:
  ``host|device`` (``all`` for the whole host).
* **Value**: for ``stack``: ``STATE|frame;frame;...`` with the Java thread state
  (``Thread.State`` names) and method-level frames, innermost first; optionally
  ``STATE|frames|duration_ms`` for a wait that lasted a while.  For metrics:
  ``name=number`` pairs separated by ``;`` (``cpu`` names become
  ``cpu_<name>_pct``).  For other types: free text (kept in ``events``).

Lines starting with ``#`` and blank lines are skipped.  Every other line is a
record: a stack sample lands in ``samples`` (its stack once in ``stacks``), a
metric line lands in ``system_samples`` (one row per pair; the line counts
once, in the first), anything else in ``events``.  A malformed record does not
stop the file: it is kept in ``events`` as ``malformed`` with its line number,
named (file and line) in the ingest notes, and the rest lands.  A number that
measures nothing is malformed too: a timestamp or duration that is negative, and
a duration or metric value that is not finite (``nan``, ``inf``, ``1e999``).

The helpers here (stack ids, state names) are shared by the JFR and jstack
readers.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import orjson

from ingest.base import ReadContext, Row
from ingest.formats import Format
from ingest.mrcommon import int64
from ingest.opening import iter_lines
from phaseline.schemas import SAMPLES, ThreadState

HEADER = "#hitune-samples"
SOURCE = "hitune"
MAX_NOTES = 20
_FIRST_RECORD = re.compile(rb"^\d{10,13}(?:\.\d+)?\t[A-Za-z_][\w.-]*\t[^\t]*\t", re.ASCII)
_STATES = {s.value for s in ThreadState}
_STATE_ALIASES = {
    "TIME_WAITING": ThreadState.TIMED_WAITING,  # HiTune's own spelling (instruments_*.csv)
    "STATE_RUNNABLE": ThreadState.RUNNABLE,  # JFR's ThreadState constants
    "STATE_IN_NATIVE": ThreadState.RUNNABLE,
    "STATE_NEW": ThreadState.NEW,
    "STATE_TERMINATED": ThreadState.TERMINATED,
    "STATE_SLEEPING": ThreadState.TIMED_WAITING,
    "STATE_IN_OBJECT_WAIT": ThreadState.WAITING,
    "STATE_IN_OBJECT_WAIT_TIMED": ThreadState.TIMED_WAITING,
    "STATE_PARKED": ThreadState.WAITING,
    "STATE_PARKED_TIMED": ThreadState.TIMED_WAITING,
    "STATE_BLOCKED_ON_MONITOR_ENTER": ThreadState.BLOCKED,
}
METRIC_TYPES = frozenset({"cpu", "disk", "net", "mem"})


class MalformedRecord(ValueError):
    """One bad record inside an otherwise good file (internal to the readers)."""


def normalize_state(raw: str) -> str:
    """A thread state as a :class:`ThreadState` value.

    >>> normalize_state("TIME_WAITING")
    'TIMED_WAITING'
    >>> normalize_state("STATE_PARKED")
    'WAITING'
    """
    text = raw.strip().upper()
    if text in _STATES:
        return text
    alias = _STATE_ALIASES.get(text)
    if alias is None:
        raise MalformedRecord(f"unknown thread state {raw!r}")
    return alias.value


def stack_id(frames: Sequence[str]) -> int:
    """A stable signed 64-bit id of a stack (the same frames give the same id in any file).

    >>> stack_id(["a.B.c"]) == stack_id(["a.B.c"])
    True
    """
    digest = hashlib.blake2b("\n".join(frames).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def stack_row(sid: int, frames: Sequence[str]) -> Row:
    """The ``stacks`` row of a stack."""
    return Row(
        "stacks",
        {"stack_id": sid, "frames": list(frames), "top_frame": frames[0] if frames else None, "depth": len(frames)},
    )


class StackTable:
    """Emits each distinct stack once per file, and gives samples its id."""

    __slots__ = ("_by_text", "_seen")

    def __init__(self) -> None:
        self._seen: set[int] = set()
        self._by_text: dict[str, int | None] = {}

    def intern_text(self, text: str, sep: str) -> tuple[int | None, Row | None]:
        """Like :meth:`intern` for frames joined by ``sep``; repeated texts skip the split and hash."""
        sid = self._by_text.get(text, -1)
        if sid != -1:
            return sid, None
        frames = [f.strip() for f in text.split(sep) if f.strip()]
        new: Row | None = None
        sid = None
        if frames:
            sid, new = self.intern(frames)
        self._by_text[text] = sid
        return sid, new

    def intern(self, frames: Sequence[str]) -> tuple[int, Row | None]:
        """The stack's id, and its ``stacks`` row the first time it is seen."""
        sid = stack_id(frames)
        if sid in self._seen:
            return sid, None
        self._seen.add(sid)
        return sid, stack_row(sid, frames)


SAMPLE_COLUMNS = SAMPLES.row_columns


def sample_row(
    job_id: str | None, attempt_id: str | None, host: str | None, thread_id: int, thread_name: str | None,
    ts_ms: int | None, sample_type: str, state: str, stack_id: int | None, duration_ms: float, source: str,
) -> Row:
    """A ``samples`` row as a tuple in :data:`SAMPLE_COLUMNS` order (the store's fast path)."""
    return Row(
        "samples",
        (job_id, attempt_id, host, thread_id, thread_name, ts_ms, sample_type, state, stack_id, duration_ms, source),
    )


def malformed_row(ctx: ReadContext, line_no: int, message: str, text: str, job_id: str | None = None) -> Row:
    """Keep a bad record in ``events`` and name it (file and line) in the ingest notes."""
    ctx.unknown["malformed"] += 1
    if ctx.unknown["malformed"] <= MAX_NOTES:
        ctx.notes.append(f"{ctx.path}:{line_no}: {message} (record kept in events as 'malformed')")
    payload = orjson.dumps({"line": line_no, "error": message, "text": text[:2000]}).decode()
    return Row("events", {"job_id": job_id, "seq": line_no, "event_type": "malformed", "ts_ms": None, "payload_json": payload})


def _timestamp(text: str) -> int:
    try:
        ts = int64(round(float(text) * 1000) if "." in text else int(text))
    except (ValueError, OverflowError):  # (OverflowError: float('1e999') * 1000 rounded)
        ts = -1
    if ts < 0:  # (no sampler ran before 1970: a minus sign is damage)
        raise MalformedRecord(f"timestamp {text[:40]!r} is not epoch milliseconds")
    return ts


def _number(text: str, what: str) -> float:
    """A measured value: ``MalformedRecord`` unless a finite number (``float`` takes ``nan``, ``inf``, ``1e999``)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise MalformedRecord(f"{what} {text[:40]!r} is not a finite number")
    return value


def _job_of(attempt_id: str) -> str | None:
    parts = attempt_id.split("_")
    if len(parts) >= 3 and parts[0] == "attempt":
        return f"job_{parts[1]}_{parts[2]}"
    return None


def _stack_record(ts: int, target: str, value: str, stacks: StackTable) -> Iterator[Row]:
    parts = target.split("|", 3)
    if len(parts) != 4:
        raise MalformedRecord("stack target must be host|attempt_id|thread_id|thread_name")
    host, attempt, tid, name = parts
    try:
        thread_id = int64(int(tid))
    except ValueError:
        raise MalformedRecord(f"thread id {tid[:40]!r} is not a 64-bit integer") from None
    fields = value.split("|")
    if len(fields) not in (2, 3):
        raise MalformedRecord("stack value must be STATE|frames[|duration_ms]")
    state = normalize_state(fields[0])
    duration = 0.0
    if len(fields) == 3:
        duration = _number(fields[2], "duration")
        if duration < 0:
            raise MalformedRecord(f"duration {fields[2][:40]!r} is negative")
    sid, new = stacks.intern_text(fields[1], ";")
    if new is not None:
        yield new
    yield sample_row(_job_of(attempt), attempt or None, host or None, thread_id, name, ts, "stack", state, sid,
                     duration, SOURCE)


def _metric_record(ts: int, kind: str, target: str, value: str) -> Iterator[Row]:
    host, _, device = target.partition("|")
    pairs = [p for p in value.split(";") if p.strip()]
    if not pairs:
        raise MalformedRecord("metric value has no name=number pairs")
    rows = []
    for pair in pairs:
        name, eq, num = pair.partition("=")
        if not eq:
            raise MalformedRecord(f"metric {pair!r} is not name=number")
        val = _number(num, f"metric {name.strip()!r} value")
        metric = f"cpu_{name.strip()}_pct" if kind == "cpu" else f"{kind}_{name.strip()}"
        rows.append(
            Row(
                "system_samples",
                {
                    "host": host or None, "ts_ms": ts, "interval_ms": None, "metric": metric,
                    "device": device or "all", "value": val, "source": SOURCE,
                },
            )
        )
    yield from rows


def read_hitune_samples(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read a HiTune four-field sample file (see the module docstring)."""
    stacks = StackTable()
    for line_no, line in iter_lines(path, ctx):
        if not line.strip() or line.startswith("#"):
            continue
        ctx.events_read += 1
        fields = line.split("\t")
        try:
            if len(fields) != 4:
                raise MalformedRecord(f"expected 4 tab-separated fields, found {len(fields)}")
            ts_text, kind, target, value = fields
            ts = _timestamp(ts_text)
            if kind == "stack":
                rows = list(_stack_record(ts, target, value, stacks))
            elif kind in METRIC_TYPES:
                rows = list(_metric_record(ts, kind, target, value))
            else:
                payload = orjson.dumps({"target": target, "value": value, "line": line_no}).decode()
                rows = [Row("events", {"job_id": None, "seq": line_no, "event_type": kind, "ts_ms": ts, "payload_json": payload})]
        except MalformedRecord as exc:
            yield malformed_row(ctx, line_no, str(exc), line)
            continue
        if kind in METRIC_TYPES and len(rows) > 1:
            # One record, several metric rows: count the extra rows as read so that
            # ``events_read`` matches the rows kept (reconciliation).
            ctx.events_read += len(rows) - 1
        yield from rows


def _sniff(head: bytes, path: Path) -> bool:
    if head.startswith(HEADER.encode()):
        return True
    for raw in head.splitlines()[:5]:
        if raw.startswith(b"#") or not raw.strip():
            continue
        return bool(_FIRST_RECORD.match(raw)) and raw.split(b"\t")[1] in (b"stack", b"cpu", b"disk", b"net", b"mem")
    return False


FORMATS = (
    Format(
        "hitune-samples",
        _sniff,
        read_hitune_samples,
        "HiTune four-field sampling records (timestamp, type, target, value), tab separated",
        record_tables=("samples", "system_samples", "events"),
    ),
)
