"""How a ``.jhist`` file is framed: line 1 ``Avro-Json``, line 2 the writer's Avro schema
(:class:`JhistLines` ``.header``), then one event per line (``.lines``, read in blocks).  The
events themselves are :mod:`ingest.jhist`'s.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from functools import lru_cache, partial
from itertools import chain
from pathlib import Path
from typing import IO

import orjson

from ingest.base import ReadContext, skip_record
from ingest.counters_map import EVENT_SPECS
from ingest.jhist_binary import is_binary_history
from ingest.jhist_schema import BadEvent, WriterSchema
from phaseline.errors import TraceParseError, TraceTruncatedError

MAGIC = b"Avro-Json"
MAX_LINE_BYTES = 64 << 20  # no real event comes near; guards memory against garbage without line ends
_READ_BLOCK = 256 << 10  # (the lines of a block live on in the events rows until they leave: kept small)
BLANK = b" \t\r\n\x00"
_loads = orjson.loads
_JSONError = orjson.JSONDecodeError


@lru_cache(maxsize=64)
def _writer_schema(text: bytes) -> WriterSchema:
    """Line 2 parsed once per distinct schema (files of one Hadoop version share it)."""
    return WriterSchema.parse(_loads(text))


#: What a file whose line 2 is no usable schema is read with (:meth:`JhistLines._without_schema`).
_JH = "org.apache.hadoop.mapreduce.jobhistory."
#: Counters fields that Hadoop 2.7+ writes as ``["null", "JhCounters"]`` unions (type-wrapped); read
#: without a schema they are unwrapped too (a bare record is taken as it is), else every failed or
#: killed attempt of such a file was skipped as "counters are not a JhCounters record".
_COUNTER_UNIONS = ((("counters", frozenset({_JH + "JhCounters", "JhCounters"})),))
_NO_SCHEMA = WriterSchema(frozenset(EVENT_SPECS), {
    _JH + record: _COUNTER_UNIONS for record in ("TaskFailed", "TaskAttemptUnsuccessfulCompletion", "TaskFinished",
                                                  "MapAttemptFinished", "ReduceAttemptFinished")
})  # fmt: skip


def sniff_jhist(head: bytes, path: Path) -> bool:
    """True when the first line is ``Avro-Json`` (the JSON flavour of Hadoop's EventWriter)."""
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].rstrip() == MAGIC


def sniff_history(head: bytes, path: Path) -> bool:
    """Job history of either flavour: a binary one reaches detection as its JSON lines
    (:mod:`ingest.jhist_binary`), as itself where those fail at once (the reader then says why)."""
    return sniff_jhist(head, path) or is_binary_history(head)


class AnotherHistory(Exception):
    """A second ``Avro-Json`` line (files concatenated) at ``line_no`` / byte ``start``."""

    def __init__(self, line_no: int, start: int) -> None:
        super().__init__(line_no, start)
        self.line_no, self.start = line_no, start


def jhist_error(path: Path, message: str, line_no: int, offset: int) -> TraceParseError:
    """An error in the middle of a ``.jhist`` file (what to do: copy it again)."""
    return TraceParseError(
        path,
        message,
        line=line_no,
        offset=offset,
        hint="the file is corrupt in the middle; re-copy it from the history server's done dir",
    )


class JhistLines:
    """The framing of one ``.jhist`` file: its header (the writer's schema) and its event lines.

    :attr:`unterminated` is 1 once the last line, without a line end, was read.
    """

    def __init__(self, path: Path, ctx: ReadContext) -> None:
        self.path = path
        self.ctx = ctx
        self.schema: WriterSchema | None = None
        self.unterminated = 0

    def header(self, fh: IO[bytes]) -> tuple[int, int]:
        """Check line 1, read the writer's schema; return ``(line_no, offset)`` after it."""
        first = fh.readline(4096)  # bounded: a binary file may have no line ends at all
        if not first.strip(BLANK):
            raise TraceTruncatedError(self.path, "the file is empty", line=1, offset=0)
        if first.strip(b"\xef\xbb\xbf" + BLANK) != MAGIC:
            raise TraceParseError(
                self.path,
                f"line 1 is {first[:40]!r}, not {MAGIC.decode()!r}",
                line=1,
                offset=0,
                hint="a job history file begins with 'Avro-Json' or 'Avro-Binary'",
            )
        line_no, offset = 1, len(first)
        for raw in iter(partial(fh.readline, MAX_LINE_BYTES), b""):
            line_no += 1
            start = offset
            offset += len(raw)
            text = raw.strip(BLANK)
            if not text:
                continue
            try:
                self.schema = _writer_schema(text)
            except _JSONError as exc:
                blank, lines, consumed = self.rest_is_blank(fh)
                if blank:
                    raise TraceTruncatedError(
                        self.path, f"cut short inside the writer's schema: {exc}", line=line_no, offset=start
                    ) from None
                self._without_schema(f"not JSON: {exc}", line_no, start)
                return line_no + lines, offset + consumed
            except BadEvent as exc:
                self._without_schema(str(exc), line_no, start)
            except (TypeError, AttributeError, KeyError, ValueError, RecursionError) as exc:  # not an Avro schema
                self._without_schema(f"{type(exc).__name__}: {exc}", line_no, start)
            return line_no, offset
        raise TraceTruncatedError(
            self.path, "the file ends before the writer's schema", line=line_no, offset=offset
        )

    def _without_schema(self, why: str, line_no: int, start: int) -> None:
        """Line 2 is no usable Avro schema: name it (skipped, the file partial) and read the events
        without it: known event types, and no union fields beyond the type-wrapped primitives every
        field accepts (every real history in the fixtures reads the same way so)."""
        skip_record(self.ctx, self._error(f"the writer's schema is unusable ({why}); the events are read without it",
                                          line_no, start))  # fmt: skip
        self.schema = _NO_SCHEMA

    @staticmethod
    def seek(fh: IO[bytes], span: tuple[int, int, int] | None, line_no: int, offset: int) -> tuple[int, int, int | None]:
        """Where reading goes on after the header (``line_no``, ``offset``): for a byte range ``span`` of the
        file (start, end, lines before start; :mod:`ingest.jhist_split`) its start unless the header is in
        it; ``(line_no, offset, bytes to read or None: all)``."""
        if span is None:
            return line_no, offset, None
        start, end, before = span
        if start > offset:
            fh.seek(start)
            line_no, offset = before, start
        return line_no, offset, max(0, end - offset)

    def lines(self, fh: IO[bytes], limit: int | None = None) -> Iterator[bytes]:
        """The rest of the file's lines, without their line ends (:meth:`blocks`, one line at a time)."""
        return chain.from_iterable(self.blocks(fh, limit))

    def blocks(self, fh: IO[bytes], limit: int | None = None) -> Iterator[list[bytes]]:
        """The rest of the file's lines, without their line ends, a list at a time.

        A plain file is read in blocks of :data:`_READ_BLOCK` split at ``\n``, and
        each block's complete lines come as one list (``readline`` cost about 2.5 us
        a line, and a generator resumed per line about 0.1 us); a compressed stream
        line by line, a list of one each, so that a stream cut short keeps every
        line before the cut.  A line of :data:`MAX_LINE_BYTES` or more is given as
        the first that many bytes or more (the caller refuses it) and nothing after
        it is read; the last line, when the file does not end with ``\n``, sets
        :attr:`unterminated`.  ``limit`` (a plain file only): read no more than that
        many bytes from here (one byte range of a split file, :mod:`ingest.jhist_split`).
        """
        if not isinstance(getattr(fh, "raw", None), io.FileIO):  # a compressed stream
            for raw in iter(partial(fh.readline, MAX_LINE_BYTES), b""):
                if raw[-1:] == b"\n":
                    yield [raw[:-1]]
                    continue
                if len(raw) < MAX_LINE_BYTES:
                    self.unterminated = 1
                yield [raw]
                return
            return
        read: Callable[[int], bytes] = fh.read
        if limit is not None:
            left = [limit]

            def read_within(n: int) -> bytes:
                block = fh.read(min(n, left[0]))
                left[0] -= len(block)
                return block

            read = read_within

        head: list[bytes] = []  # the pieces of a line that runs on past a block
        carried = 0
        while block := read(_READ_BLOCK):
            lines = block.split(b"\n")
            last = lines.pop()
            if head:
                if not lines:  # no line end in the block: the line runs on
                    head.append(last)
                    carried += len(last)
                    if carried >= MAX_LINE_BYTES:
                        yield [b"".join(head)]
                        return
                    continue
                head.append(lines[0])
                lines[0] = b"".join(head)
                head = []
            yield lines
            if last:
                head = [last]
                carried = len(last)
        if head:
            self.unterminated = 1
            yield [b"".join(head)]

    def rest_is_blank(self, fh: IO[bytes]) -> tuple[bool, int, int]:
        """Whether only blanks follow; and the lines and bytes of blanks it consumed to tell
        (the first block that is not blank is only peeked at: reading goes on from there)."""
        lines = consumed = 0
        while head := fh.peek(1 << 16):  # type: ignore[attr-defined]  # a BufferedReader (open_binary)
            if head.strip(BLANK):
                return False, lines, consumed
            fh.read(len(head))
            lines, consumed = lines + head.count(b"\n"), consumed + len(head)
        return True, lines, consumed

    def _error(self, message: str, line_no: int, offset: int) -> TraceParseError:
        return jhist_error(self.path, message, line_no, offset)
