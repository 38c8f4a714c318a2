"""A ``.jhist`` event line read the orjson way: any line the typed decoder
(:func:`~ingest.jhist_typed.decode_event`) does not take, such as the job's own events, a line of a type it
does not know, or one in an unusual shape.

The line decodes into ``(type, record name, payload dict or None, line as UTF-8)``.  A line that is not
JSON (or not UTF-8) is repaired where it can be (invalid UTF-8 read with U+FFFD) and skipped where it
cannot; a JSON value that is no history event is skipped too.  Each skip is recorded in ``ctx.skipped``
with its line and byte offset (:func:`~ingest.base.skip_record`).  A second ``Avro-Json`` line raises
:class:`~ingest.jhist_lines.AnotherHistory`: another history begins there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ingest.base import ReadContext, skip_record
from ingest.jhist_lines import MAGIC, AnotherHistory, jhist_error

__all__ = ["decode_untyped"]

_loads = orjson.loads
_JSONError = orjson.JSONDecodeError

#: An event line decoded: (type, record name, payload dict or None, the line as UTF-8).
Decoded = tuple[str, str, dict[str, Any] | None, bytes]
#: A line skipped as not JSON: (line, offset, why); the reader tells at the end whether it was the last.
BadJson = tuple[int, int, str]


def decode_untyped(
    path: Path, ctx: ReadContext, text: bytes, line_no: int, start: int
) -> tuple[Decoded | None, BadJson | None]:
    """The event of line ``line_no`` (at byte ``start``), or None where it was skipped; and, where it was
    skipped as not JSON, which line, where and why (a writer cut off mid-line leaves such a last line).

    >>> decode_untyped(Path("x.jhist"), ReadContext(Path("x.jhist")), b'{"type": "AM_STARTED", "event": {"r": {}}}', 3, 0)
    (('AM_STARTED', 'r', {}, b'{"type": "AM_STARTED", "event": {"r": {}}}'), None)
    """
    try:
        ev = _loads(text)  # (valid UTF-8, or it raises)
        payload_json = text
    except _JSONError as exc:
        if text == MAGIC:
            raise AnotherHistory(line_no, start) from None
        ev, repaired = _repaired(text, exc)
        if repaired is None:
            skip_record(ctx, jhist_error(path, f"malformed event line: {ev}", line_no, start))
            return None, (line_no, start, str(ev))
        payload_json = repaired
    body = ev.get("event") if type(ev) is dict else None
    if type(body) is dict and len(body) == 1 and type(etype := ev.get("type")) is str:
        ((record, payload),) = body.items()
        if type(payload) is dict:
            return (etype, record, payload, payload_json), None
    split = _split_event(path, ctx, ev, line_no, start)  # not the usual shape: an event-only type, or no event
    return (None if split is None else (*split, payload_json)), None


def _repaired(text: bytes, exc: Exception) -> tuple[Any, bytes | None]:
    """A line orjson refused: ``(value, line as UTF-8)`` where it was invalid UTF-8 (read with U+FFFD);
    else ``(the error, None)``."""
    try:
        text.decode()
    except UnicodeDecodeError:
        decoded = text.decode("utf-8", "replace")
        try:
            return _loads(decoded), decoded.encode()
        except _JSONError as again:
            exc = again
    return exc, None


def _split_event(
    path: Path, ctx: ReadContext, ev: Any, line_no: int, start: int
) -> tuple[str, str, dict[str, Any] | None] | None:
    """``(type, record name, payload)`` of a decoded event line; ``None``: not an event, skipped."""
    if type(ev) is dict:
        etype = ev.get("type")
        body = ev.get("event")
        if type(etype) is str:
            if type(body) is dict and len(body) == 1:
                ((record, payload),) = body.items()
                if type(payload) is dict:
                    return etype, record, payload
            elif body is None:
                return etype, "", None
            skip_record(ctx, jhist_error(path, f"{etype}: `event` is not one typed record", line_no, start))
            return None
    skip_record(ctx, jhist_error(path, "a JSON value that is not a history event", line_no, start))
    return None
