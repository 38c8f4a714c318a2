"""The sections of ``yarn logs`` output: each container's files (``Container:`` .. ``LogType:`` ..
``LogContents:`` .. ``End of LogType:``), framed line by line (:class:`_Frames`) and gathered per
container (:func:`sections`); :mod:`ingest.yarn_logs` reads them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ingest.base import ReadContext, skip_record
from ingest.mrcommon import parse_int64
from ingest.opening import iter_lines
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import node_manager_host

CONTAINER = re.compile(r"^Container: (?P<id>container_(?:e\d+_)?(?P<cluster>\d+)_(?P<app>\d+)_\d+_\d+) on (?P<host>\S+)\s*$")
LOGTYPE = re.compile(r"^LogType:\s?(?P<name>.+?)\s*$")
_LENGTH = re.compile(r"^LogLength:\s?(?P<n>\d+)\s*$")
_CONTENTS = re.compile(r"^Log ?Contents:\s*$")
_END = re.compile(r"^End of LogType:\s?(?P<name>.+?)\s*$")
_RULE = re.compile(r"^={10,}\s*$")  # under a 'Container:' line
_AGGREGATION = re.compile(r"^LogAggregationType:")
_ATTRIBUTE = re.compile(r"^(?:LogAggregationType|LogLastModifiedTime|Log Upload Time):")
_YARN_CHILD = re.compile(r"org\.apache\.hadoop\.mapred\.YarnChild \S+ \d+ (?P<attempt>attempt_[A-Za-z0-9]+_\d+_[mr]_\d+_\d+) \d+")
_SUBMIT = re.compile(r'^export APP_SUBMIT_TIME_ENV="(?P<ms>\d+)"')
_USER = re.compile(r'^export USER="(?P<user>[^"]*)"')


def is_task_log(name: str) -> bool:
    return name == "syslog" or name.startswith("syslog.")


@dataclass(slots=True)
class Container:
    """The files of one container read so far."""

    container_id: str
    host: str | None
    line_no: int  # of its first 'Container:' header
    logs: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # syslog* lines, numbered
    other: list[tuple[str, int, list[str]]] = field(default_factory=list)  # (log type, first line, text)
    repeats: list[tuple[str, int, int]] = field(default_factory=list)  # (log type, contents line, first copy's)
    attempt_hint: str | None = None
    is_am: bool = False
    submit_ms: int | None = None
    user: str | None = None


def sections(path: Path, ctx: ReadContext) -> Iterator[Container]:
    """Containers in file order, each with its files (a container's files are contiguous).

    A file's contents end at ``End of LogType:<name>``; output without end lines
    (Hadoop 2.x) ends a file at the next ``LogType:``/``Container:`` line once
    ``LogLength`` bytes were read, or at a ``LogLength:`` line or a container's
    ``=====`` rule, whose frame lines above it are then unreadable (:class:`_Frames`).
    """
    frames = _Frames(path, ctx)
    for line_no, text in iter_lines(path, ctx):
        yield from frames.line(line_no, text)
    yield from frames.finish()


class _Frames:
    """The frame (container, then file) each line of the output is in.

    Every frame starts afresh: its file's type is its own ``LogType:`` line, and
    its container its own ``Container:`` line (the line above the ``=====`` rule
    that opens a container in both layouts; in 2.9+/3.x, which write
    ``LogAggregationType:`` under it, each file has its own).  A file whose
    ``LogType:`` line, or whose frame's ``Container:`` line, is unreadable is
    skipped and named, and the files around it land: carried over from the
    frame before, its lines would land as another file, or as another
    container's (an attempt read as the AM).  Where no file at all is readable,
    the output is not one this reader knows, and that raises.  A container's
    file met again (output written twice) is read from its first copy: counted
    twice, its attempts, counters and lines would double.  Only the same text is a
    copy: rolling log aggregation uploads one log in parts under one name, each read.
    """

    def __init__(self, path: Path, ctx: ReadContext) -> None:
        self.path, self.ctx = path, ctx
        self.current: Container | None = None  # the container whose files are being read
        self.owner: Container | None = None  # the frame's container: None where its header is unreadable
        self.headed = False  # a 'Container:' line was read since the last '=====' rule
        self.per_file = False
        self.log_type: str | None = None
        self.log_length: int | None = None
        self.expect_contents = False  # the line after 'LogLength:' is the contents marker
        self.body: list[tuple[int, str]] | None = None  # the lines of the file being read
        self.contents_line = 0
        self.consumed = 0
        self.replaced = 0  # U+FFFD in the body: 3 bytes in `consumed`, maybe 1 undecodable byte in the file
        self.within = 0  # body lines that begin inside its LogLength bytes
        # (container, log type, its text) -> the contents line it was read from; a file of another
        # text under the same name (rolling log aggregation uploads a log in parts) is read too
        self.read: dict[tuple[str, str, bytes], int] = {}
        self.held: list[tuple[int, str]] | None = []  # unreadable files (line, what) before any file was read

    def line(self, line_no: int, text: str) -> Iterator[Container]:
        if self.body is not None:
            if _END.match(text) is not None:
                self._end_file(len(self.body))
                return
            header = self.consumed >= (self.log_length or 0) and (CONTAINER.match(text) or LOGTYPE.match(text))
            beyond = self.log_length is not None and self.consumed - 2 * self.replaced >= self.log_length
            damaged_frame = beyond and (_RULE.match(text) or _LENGTH.match(text))
            if not header and not damaged_frame:
                if not beyond:
                    self.within = len(self.body) + 1
                self.body.append((line_no, text))
                self.consumed += len(text.encode("utf-8", "replace")) + 1
                self.replaced += text.count("\ufffd")
                return
            if damaged_frame:  # the lines from the frame's top on are read again, as frame lines
                keep = self._frame_top(CONTAINER if _RULE.match(text) else LOGTYPE)
                again = [*self.body[keep:], (line_no, text)]
                self._end_file(keep)
                for again_no, again_text in again:
                    yield from self.line(again_no, again_text)
                return
            self._end_file(len(self.body))
        expecting, self.expect_contents = self.expect_contents, False
        if (header_line := CONTAINER.match(text)) is not None:
            if self.current is None or self.current.container_id != header_line["id"]:
                if self.current is not None:
                    yield self._done(self.current)
                self.current = Container(header_line["id"], node_manager_host(header_line["host"]), line_no)
            self.owner, self.headed, self.log_type = self.current, True, None
            return
        if _AGGREGATION.match(text) is not None:
            self.per_file = True
            return
        if _RULE.match(text) is not None:
            if not self.headed:
                self.owner = None
            self.headed, self.log_type = False, None
            return
        if (found := LOGTYPE.match(text)) is not None:
            self.log_type, self.log_length = found["name"], None
            return
        if (length := _LENGTH.match(text)) is not None:
            self.log_length = parse_int64(length["n"])  # (None: no 64-bit size, unknown)
            self.expect_contents = True
            return
        contents = _CONTENTS.match(text) is not None
        damaged = expecting and not contents and text.strip() != ""
        if damaged:
            skip_record(self.ctx, TraceParseError(
                self.path, f"a damaged 'LogContents:' line {text[:60]!r} after 'LogLength:': read as one",
                line=line_no,
            ))  # fmt: skip
        if damaged or contents:
            self.body, self.contents_line = [], line_no
            self.consumed = self.replaced = self.within = 0

    def _frame_top(self, header: re.Pattern[str]) -> int:
        """Where the file being read ends, at a frame line past its ``LogLength`` bytes.

        The frame's header (``header``, then attributes) is above it: read as the
        file's lines where ``LogLength`` overstated the file; else unreadable, and
        the lines past ``LogLength`` are the frame's damaged ones.
        """
        assert self.body is not None
        top = len(self.body)
        while top > self.within and _ATTRIBUTE.match(self.body[top - 1][1]):
            top -= 1
        if top > 0 and header.match(self.body[top - 1][1]):
            return top - 1
        return self.within

    def finish(self) -> Iterator[Container]:
        if self.body is not None:
            name, consumed, log_length = self.log_type or "of no readable type", self.consumed, self.log_length
            self._end_file(len(self.body))
            if log_length is not None and consumed < log_length and self.ctx.cut is None:
                self.ctx.cut = TraceTruncatedError(
                    self.path, f"the last file ({name}) ends after {consumed} of its {log_length} bytes",
                    hint="the output was cut short; every line before the cut landed",
                )  # fmt: skip
        if self.held:
            line, what = self.held[0]
            raise TraceParseError(self.path, f"{what}; no file of the output is readable", line=line,
                                  hint="is this the complete output of `yarn logs`?")
        if self.current is not None:
            yield self._done(self.current)

    def _end_file(self, keep: int) -> None:
        """The file being read ends with the first ``keep`` lines of its body (the rest is its next frame's)."""
        assert self.body is not None
        body, owner, log_type = self.body[:keep], self.owner, self.log_type
        self.body, self.log_type, self.log_length = None, None, None
        if self.per_file:
            self.owner = None
        if owner is None or log_type is None:
            unread = " and ".join(name for name, known in (("'Container:'", owner), ("'LogType:'", log_type))
                                  if known is None)
            last = body[-1][0] if body else self.contents_line
            what = f"log contents (lines {self.contents_line}-{last}) before any readable {unread} line of their frame"
            if self.held is None:
                self._skip(self.contents_line, what)
            else:
                self.held.append((self.contents_line, what))
            return
        digest = hashlib.blake2b("\n".join(t for _, t in body).encode("utf-8", "replace"), digest_size=16).digest()
        first = self.read.setdefault((owner.container_id, log_type, digest), self.contents_line)
        if first != self.contents_line:
            owner.repeats.append((log_type, self.contents_line, first))
            return
        for line, what in self.held or ():
            self._skip(line, what)
        self.held = None
        _store(owner, log_type, body)

    def _skip(self, line: int, what: str) -> None:
        skip_record(self.ctx, TraceParseError(self.path, f"{what}: skipped", line=line,
                                              hint="a damaged frame header; the files around it are read"))

    def _done(self, container: Container) -> Container:
        if container.repeats:
            log_type, line, first = container.repeats[0]
            names = ", ".join(name for name, _, _ in container.repeats)
            self.ctx.notes.append(
                f"{container.container_id}'s {names} written again from line {line} ({log_type} was read from "
                f"line {first}): each read once, from its first copy"
            )
        return container


def _store(container: Container, log_type: str, body: list[tuple[int, str]]) -> None:
    while body and body[-1][1] == "":
        body = body[:-1]  # the writer's blank line(s) before 'End of LogType' / the next file
    if is_task_log(log_type):
        container.logs.setdefault(log_type, []).extend(body)
        return
    if log_type == "launch_container.sh":
        for _, text in body:
            if (child := _YARN_CHILD.search(text)) is not None:
                container.attempt_hint = child["attempt"]
            if "org.apache.hadoop.mapreduce.v2.app.MRAppMaster" in text:
                container.is_am = True
            if (submit := _SUBMIT.match(text)) is not None:
                container.submit_ms = parse_int64(submit["ms"])
            if (user := _USER.match(text)) is not None:
                container.user = user["user"]
    container.other.append((log_type, body[0][0] if body else 0, [text for _, text in body]))
