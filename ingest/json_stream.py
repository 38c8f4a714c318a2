"""A stream of concatenated JSON values (Rumen traces, saved REST responses), decoded one at a time
from a growing buffer, so memory is one value (:func:`iter_json_objects`).

A malformed value is skipped and reading resumes at the next line that starts a top-level value;
a stream that ends inside a value raises :class:`~phaseline.errors.TraceTruncatedError` after the
values before it (and what a format salvages of the cut one).
"""

from __future__ import annotations

import json
import re
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ingest.base import MAX_RECORD_CHARS, ReadContext, skip_or_raise
from phaseline.errors import TraceParseError, TraceTruncatedError

_CHUNK = 1 << 20
_BLANK = re.compile(r"\s*")
#: Where a top-level value may start again after a malformed one: a line whose first non-blank is ``{``.
_LINE_OBJECT = re.compile(r"\n[ \t]*\{")
#: Characters a value cut at the buffer's end can still need before the decoder sees the cut
#: (it names a bad literal or number by its start: ``tru``, ``-1.5e``).
_DECODE_SLACK = 64

#: What a step of the stream found: the stream is over, more text was read (look again), a value starts here.
_END, _MORE, _READY = "end", "more", "ready"


def iter_json_objects(
    fh: IO[str], path: Path, ctx: ReadContext | None = None, top: Callable[[Any], bool] | None = None,
    salvage: Callable[[str], Any] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for each top-level JSON value of a concatenated stream.

    With ``ctx`` and ``top`` (which top-level values the format expects), a
    malformed value is skipped (:func:`~ingest.base.skip_record`) and reading
    resumes at the next line starting with ``{`` whose value ``top`` accepts
    (values that fail to decode there, or that ``top`` refuses, e.g. the nested
    objects of a pretty-printed value, are passed over silently).  Where the
    stream ends inside a value, ``salvage`` may make a value of its text (or
    None): it is yielded before the :class:`TraceTruncatedError`.

    Raises
    ------
    TraceTruncatedError
        The stream ends inside a value.
    TraceParseError
        Malformed JSON (with the line where the decoder stopped), without ``ctx``.
    """
    return _JsonStream(fh, path, ctx if top is not None else None, top, salvage).values()


class _JsonStream:
    """The buffer of :func:`iter_json_objects`: ``buf[pos:]`` is unread text, ``line`` the line of ``buf[pos]``.

    Values are decoded in place (no slicing per value: buffers hold many small jobs).
    """

    def __init__(
        self, fh: IO[str], path: Path, skipping: ReadContext | None, top: Callable[[Any], bool] | None,
        salvage: Callable[[str], Any] | None,
    ) -> None:  # fmt: skip
        self.fh = fh
        self.path = path
        self.skipping = skipping  # where a malformed value is skipped (None: it raises)
        self.top = top
        self.salvage = salvage
        self.buf = ""
        self.pos = 0
        self.line = 1
        self.eof = False
        self.resyncing = False  # after a malformed value: looking for the next top-level value

    def read(self, n: int) -> str:
        try:
            return self.fh.read(n)
        except (EOFError, OSError, zlib.error) as exc:
            raise TraceTruncatedError(self.path, f"the compressed stream is corrupt or cut short: {exc}") from exc

    def values(self) -> Iterator[tuple[int, Any]]:
        decoder = json.JSONDecoder()
        while True:
            if self.resyncing and not self.buf.startswith("{", self.pos):  # (at "{": a candidate waiting for more)
                step = self.resync()
                if step is _END:
                    return
                if step is _MORE:
                    continue
            step = self.skip_blanks()
            if step is _END:
                return
            if step is _MORE:
                continue
            try:
                value, end = decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                yield from self.malformed(exc)
                continue
            except RecursionError:
                self.undecodable(f"a JSON value nested deeper than {sys.getrecursionlimit()} levels",
                                 "no Hadoop writer nests so deep; the values after it are read")
                continue
            except ValueError as exc:  # not a JSONDecodeError: a number past Python's 4,300-digit limit
                self.undecodable(f"malformed JSON: {exc}")
                continue
            if self.resyncing and (self.top is None or not self.top(value)):
                self.pos += 1  # a nested value of the malformed one: look further
                continue
            self.resyncing = False
            yield self.line, value
            self.line += self.buf.count("\n", self.pos, end)
            self.pos = end

    def resync(self) -> str:
        """Move to the next line that starts with ``{`` (reading more text to find one)."""
        buf, pos = self.buf, self.pos
        found = _LINE_OBJECT.search(buf, pos)
        if found is None:
            if self.eof:
                return _END
            self.line += buf.count("\n", pos)
            keep = buf.rfind("\n")  # the last partial line may start the next value
            more = self.read(_CHUNK)
            self.eof = not more
            self.buf, self.pos = (buf[keep:] if keep >= pos else "") + more, 0
            self.line -= self.buf.count("\n", 0, len(self.buf) - len(more))
            return _MORE
        self.line += buf.count("\n", pos, found.end() - 1)
        self.pos = found.end() - 1
        return _READY

    def skip_blanks(self) -> str:
        """Move past white space; at the buffer's end, read more text (a byte-order mark first is passed over)."""
        buf, pos = self.buf, self.pos
        blank_end = _BLANK.match(buf, pos).end()  # type: ignore[union-attr]  # matches the empty string
        self.line += buf.count("\n", pos, blank_end)
        self.pos = blank_end
        if blank_end < len(buf):
            return _READY
        if self.eof:
            return _END
        first = not buf and self.line == 1
        self.buf, self.pos = self.read(_CHUNK), 0
        if first and self.buf.startswith("\ufeff"):
            self.pos = 1  # a byte-order mark
        self.eof = not self.buf
        return _MORE

    def malformed(self, exc: json.JSONDecodeError) -> Iterator[tuple[int, Any]]:
        """A value the decoder refused: wait for more text, or skip it, or end the stream where it was cut."""
        buf, pos = self.buf, self.pos
        # Where the decoder stopped well before the buffer's end (not in a string, which it names
        # by its start), more text cannot mend the value: it is malformed, whatever follows.
        inside = exc.pos < len(buf) - _DECODE_SLACK and not exc.msg.startswith("Unterminated string")
        if not self.eof and not inside:
            if len(buf) - pos > MAX_RECORD_CHARS:
                raise TraceParseError(
                    self.path, f"a JSON value starting at line {self.line} is larger than {MAX_RECORD_CHARS >> 20} "
                    "Mi characters", line=self.line,
                ) from None  # fmt: skip
            more = self.read(max(_CHUNK, len(buf) - pos))
            self.eof = not more
            self.buf, self.pos = buf[pos:] + more, 0
            return
        at = self.line + buf.count("\n", pos, exc.pos)
        if self.resyncing:
            self.pos += 1  # not a value here either: look further
            return
        if not inside and (exc.pos >= len(buf.rstrip()) or exc.msg.startswith("Unterminated string")):
            kept = self.salvage(buf[pos:]) if self.salvage is not None else None
            if kept is not None:
                yield self.line, kept
            raise TraceTruncatedError(
                self.path, f"the JSON stream ends inside a value that starts at line {self.line}", line=at,
                hint="the trace was cut short; every complete object before it landed"
                + (", and the complete parts of the one it cut" if kept is not None else ""),
            ) from exc  # fmt: skip
        skip_or_raise(self.skipping, TraceParseError(self.path, f"malformed JSON: {exc.msg}", line=at))
        self.pos, self.resyncing = pos + 1, True

    def undecodable(self, message: str, hint: str | None = None) -> None:
        """A value no decoder takes (too deep, a number too long): skipped, unless already resyncing past it."""
        if not self.resyncing:
            skip_or_raise(self.skipping, TraceParseError(self.path, message, line=self.line, hint=hint))
        self.pos, self.resyncing = self.pos + 1, True
