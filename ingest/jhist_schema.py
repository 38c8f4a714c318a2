"""The writer's schema of a ``.jhist`` file (line 2), and typed access to event fields.

Hadoop's EventWriter puts its Avro schema on line 2 of every history file; it
differs by version (fields come and go, a field turns from ``"string"`` into
``["null", "string"]``).  :class:`WriterSchema` keeps what a reader needs from
it: the event-type symbols and, for every record, which fields are unions and
the names of their branches, so a value encoded as ``{"string": "x"}`` or
``{"org.apache.hadoop.mapreduce.jobhistory.JhCounters": {...}}`` can be
unwrapped.  The ``opt_*`` accessors return a field's value or None, accept
bare and type-wrapped values alike, and raise :class:`BadEvent` (which the
reader turns into a TraceParseError naming the line) for a value of the wrong
type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ingest.counters_map import FALLBACK_TIME_FIELDS
from ingest.mrcommon import INT64_MAX, INT64_MIN, parse_int64


class BadEvent(ValueError):
    """An event whose content does not fit its schema (turned into a TraceParseError with its line)."""


_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
UnionFields = tuple[tuple[str, frozenset[str]], ...]


@dataclass(frozen=True, slots=True)
class WriterSchema:
    """What phaseline needs from line 2: the event type symbols and, per record, its union fields.

    ``unions`` maps a record's full and short name to ``((field, branch names), ...)``;
    a value ``{"<branch>": inner}`` in such a field is unwrapped to ``inner``.
    """

    symbols: frozenset[str]
    unions: dict[str, UnionFields]

    @classmethod
    def parse(cls, obj: Any) -> WriterSchema:
        if type(obj) is not dict or obj.get("type") != "record":
            raise BadEvent("line 2 is not an Avro record schema")
        fields = {f.get("name"): f.get("type") for f in obj.get("fields") or () if type(f) is dict}
        enum_type, event_type = fields.get("type"), fields.get("event")
        symbols = enum_type.get("symbols") if type(enum_type) is dict else None
        if type(symbols) is not list or type(event_type) is not list:
            raise BadEvent("it lacks the `type` enum or the `event` union of records")
        unions: dict[str, UnionFields] = {}
        _walk(event_type, str(obj.get("namespace") or ""), unions)
        return cls(frozenset(s for s in symbols if type(s) is str), unions)

    @staticmethod
    def unwrap(payload: dict[str, Any], wrapped: UnionFields) -> None:
        for name, branches in wrapped:
            v = payload.get(name)
            if type(v) is dict and len(v) == 1:
                ((branch, inner),) = v.items()
                if branch in branches:
                    payload[name] = inner


def _qualify(name: str, namespace: str) -> str:
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _branch_names(branches: list[Any], namespace: str) -> frozenset[str]:
    names: set[str] = set()
    for b in branches:
        if type(b) is dict:
            b = b.get("name") or b.get("type")
        if type(b) is str:
            names.add(b)
            if b not in _PRIMITIVES:
                names.add(_qualify(b, namespace))
                names.add(b.rpartition(".")[2])
    return frozenset(names)


def _walk(t: Any, namespace: str, unions: dict[str, UnionFields]) -> None:
    if type(t) is list:
        for b in t:
            _walk(b, namespace, unions)
    elif type(t) is dict:
        kind = t.get("type")
        if kind == "record" and type(t.get("name")) is str:
            namespace = str(t.get("namespace") or namespace)
            found: list[tuple[str, frozenset[str]]] = []
            for f in t.get("fields") or ():
                if type(f) is not dict or type(f.get("name")) is not str:
                    raise BadEvent(f"record {t['name']} has a field without a name")
                if type(f.get("type")) is list:
                    found.append((f["name"], _branch_names(f["type"], namespace)))
                _walk(f.get("type"), namespace, unions)
            if found:
                unions[t["name"]] = unions[_qualify(t["name"], namespace)] = tuple(found)
        elif kind == "array":
            _walk(t.get("items"), namespace, unions)
        elif kind == "map":
            _walk(t.get("values"), namespace, unions)


# Type-wrapped values where the writer's schema has no union (accepted, as bare values are).
_WRAPPERS = frozenset({"string", "long", "int", "boolean", "double", "float"})


def _lenient(v: Any) -> Any:
    if type(v) is dict and len(v) == 1:
        ((branch, inner),) = v.items()
        if branch in _WRAPPERS:
            return inner
    return v


def _bad(v: Any, name: str, expected: str) -> BadEvent:
    return BadEvent(f"{name} is {type(v).__name__} {str(v)[:40]!r}, expected {expected}")


def opt_int(v: Any, name: str) -> int | None:
    """An Avro int/long field's value, or None when absent/null; one past 64 bits is a :class:`BadEvent`."""
    if v is None or (type(v) is int and INT64_MIN <= v <= INT64_MAX):
        return v  # (the usual case, first)
    v = _lenient(v)
    if v is None:
        return None
    number: int | None = None
    if type(v) is int or (type(v) is float and v.is_integer()):
        number = int(v)
    elif type(v) is str:
        number = parse_int64(v.strip())
    if number is not None and not INT64_MIN <= number <= INT64_MAX:  # (orjson reads a longer integer as a float)
        raise BadEvent(f"{name} is {str(v)[:40]}, past a 64-bit integer")
    if number is None:
        raise _bad(v, name, "a 64-bit integer")
    return number


def opt_str(v: Any, name: str) -> str | None:
    """An Avro string field's value, or None when absent/null."""
    if type(v) is str or v is None:
        return v
    v = _lenient(v)
    if type(v) is str or v is None:
        return v
    if type(v) is int:
        return str(v)
    raise _bad(v, name, "a string")


def opt_count(v: Any, name: str) -> int | None:
    """An Avro int/long field that counts something: None when absent, null or negative (Hadoop's -1)."""
    n = opt_int(v, name)
    return None if n is None or n < 0 else n


def opt_nonempty(v: Any, name: str) -> str | None:
    """An Avro string field's value, or None when absent, null or empty."""
    return opt_str(v, name) or None


def opt_bool(v: Any, name: str) -> bool | None:
    """An Avro boolean field's value, or None when absent/null."""
    v = _lenient(v)
    if type(v) is bool or v is None:
        return v
    raise _bad(v, name, "true or false")


def req_str(p: dict[str, Any], name: str) -> str:
    """A string field the event cannot do without (an id)."""
    v = p.get(name)
    if type(v) is str and v:
        return v  # (the usual case, first)
    v = opt_str(v, name)
    if not v:
        raise BadEvent(f"it lacks {name}")
    return v


def checked_counter(group: str, c: Any) -> tuple[str, int]:
    """``(name, value)`` of a JhCounter whose name or value is not plainly typed (slow path)."""
    if type(c) is not dict:
        raise BadEvent(f"a counter of group {group} is not a record")
    name = req_str(c, "name")
    value = opt_int(c.get("value"), "value")
    if value is None:
        raise BadEvent(f"counter {group}/{name} has no value")
    return name, value


def fallback_time(payload: dict[str, Any]) -> int | None:
    """The time of an event of a type phaseline does not know: its first integer time field, if any."""
    for name in FALLBACK_TIME_FIELDS:
        v = payload.get(name)
        if type(v) is int:
            return v
    return None
