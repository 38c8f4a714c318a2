"""Binary job history (``mapreduce.jobhistory.jhist.format=binary``, Hadoop 3's default), read as the
JSON flavour's lines, which :mod:`ingest.jhist` reads.

Hadoop's ``EventWriter`` in binary mode writes ``Avro-Binary`` on line 1, the writer's Avro schema
(the ``Event`` record) on line 2, then every event as one Avro binary datum of that schema, back to
back (no container file: no sync markers, no blocks).  :func:`json_history` decodes the datums with
fastavro against line 2's schema and yields what the JSON flavour would hold: ``Avro-Json``, the
same schema line, then one line per event, ``{"type": ..., "event": {<record's full name>: {...}}}``.
Union fields come bare (``"counters": {...}``, not ``{"org...JhCounters": {...}}``), which the
reader takes everywhere as Hadoop's own parser does; so the ``events`` table's ``payload_json`` of
a binary file is this rendering, not bytes of the file.  Line numbers in errors count these lines
(the n-th event is line n + 2).

An event cut short ends the stream with :class:`BinaryHistoryEnd`, an ``EOFError`` (the reader keeps
every event before it and lands the file as partial); an event that does not decode ends it the
same way once an event was read (:func:`~ingest.compression.kept_until_damage`), with ``OSError``
before.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, Any

import orjson

from ingest.compression import kept_until_damage

MAGIC = b"Avro-Binary"
#: The schema line is a few tens of kB (Hadoop 3's Event schema: ~30 kB).
_MAX_SCHEMA_BYTES = 16 << 20
_BOM_AND_BLANKS = b"\xef\xbb\xbf \t\r\n"
#: Bytes of datums decoded from memory at a time (an event is a few kB; one larger than this is read
#: again with the next block joined to it).
_BLOCK = 4 << 20
_MAX_EVENT_BYTES = 64 << 20  # as a JSON event line (ingest.jhist_lines.MAX_LINE_BYTES)


class BinaryHistoryEnd(EOFError):
    """A binary history ends early: cut short, or damaged after its first event (every event before
    is kept, as before a compressed stream's cut)."""


def is_binary_history(head: bytes) -> bool:
    """The first line is ``Avro-Binary`` (the binary flavour of Hadoop's EventWriter)."""
    return head.lstrip(_BOM_AND_BLANKS).split(b"\n", 1)[0].rstrip() == MAGIC


def _text_of(value: Any) -> Any:
    if isinstance(value, bytes):  # Avro bytes/fixed: the JSON encoding's ISO-8859-1 string
        return value.decode("latin-1")
    raise TypeError(f"{type(value).__name__} is not JSON")


def _events(stream: Any) -> Iterator[bytes]:
    from fastavro import parse_schema  # (imported with the first binary history)

    first = stream.readline(256)
    while first and not first.strip(_BOM_AND_BLANKS):
        first = stream.readline(256)
    schema_line = stream.readline(_MAX_SCHEMA_BYTES)
    try:
        schema = parse_schema(orjson.loads(schema_line))
    except Exception as exc:  # (fastavro raises errors of several kinds on a schema it cannot take)
        raise OSError(f"line 2 of a binary history is no Avro schema fastavro can read: {exc}") from None
    yield b"Avro-Json\n" + schema_line.rstrip(b"\r\n") + b"\n"
    for n, datum in enumerate(_datums(stream, schema), 1):
        if not isinstance(datum, dict):
            raise OSError(f"binary event {n} is no Event record")
        event = datum.get("event")
        if isinstance(event, tuple):  # the union of event records: (full name, fields)
            event = {event[0]: event[1]}
        yield orjson.dumps({"type": datum.get("type"), "event": event}, default=_text_of) + b"\n"


def _datums(stream: IO[bytes], schema: Any) -> Iterator[Any]:
    """The datums of ``stream``, decoded from blocks of :data:`_BLOCK` bytes held in memory (fastavro reads
    a ``BytesIO`` far faster than a file's buffered reader); a datum across a block's end is decoded again
    from its start once the next block is there."""
    from fastavro import schemaless_reader

    data, ended, n = b"", False, 0
    block = io.BytesIO(data)  # (one per block: a datum is read where the one before it ended)
    while True:
        at = block.tell()
        if at >= len(data):
            if ended:
                return
            data = stream.read(_BLOCK)
            ended, block = len(data) < _BLOCK, io.BytesIO(data)
            continue
        try:
            datum = schemaless_reader(block, schema, None, return_record_name=True, return_record_name_override=True)
        except EOFError:
            if ended:
                raise EOFError(f"binary event {n + 1} is cut short") from None
            if len(data) - at > _MAX_EVENT_BYTES:
                raise OSError(f"binary event {n + 1} runs past {_MAX_EVENT_BYTES >> 20} MiB: damaged") from None
            more = stream.read(_BLOCK)
            data, ended = data[at:] + more, len(more) < _BLOCK
            block = io.BytesIO(data)
            continue
        except Exception as exc:  # (a damaged datum: an index out of range, bad UTF-8, a negative length)
            raise OSError(f"binary event {n + 1} does not decode: {type(exc).__name__}: {exc}") from None
        n += 1
        yield datum


def json_history(stream: IO[bytes]) -> Iterator[bytes]:
    """The JSON flavour's lines of the binary history ``stream``; :class:`BinaryHistoryEnd` where it ends early."""
    try:
        yield from kept_until_damage(_events(stream), after=2)  # (the header, then an event)
    except EOFError as exc:
        raise BinaryHistoryEnd(str(exc)) from None
