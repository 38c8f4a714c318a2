r"""Hadoop 0.18-1.x job-tracker history (``Type KEY="value" ... .``) -> jobs, tasks, attempts, counters.

Format (Hadoop 1.x ``JobHistory``, history ``VERSION="1"``)::

    Meta VERSION="1" .
    Job JOBID="job_200904211745_0002" JOBNAME="word count" USER="hadoopqa" SUBMIT_TIME="1240335962848" .
    Task TASKID="task_..._m_000010" TASK_TYPE="MAP" START_TIME="1240336753705" SPLITS="/rack/host,..." .
    MapAttempt TASK_TYPE="MAP" TASKID="..." TASK_ATTEMPT_ID="attempt_..._0" START_TIME="..." TRACKER_NAME="..." .
    MapAttempt ... TASK_STATUS="SUCCESS" FINISH_TIME="..." HOSTNAME="/192\.30\.63\.192/host" COUNTERS="{...}" .

* Values escape ``.``, ``=``, ``"`` and ``\`` with a backslash; a value may
  span lines (stack traces), so a record ends at the first line that ends in
  ``.`` outside a quoted value.
* Counters are ``{(group-id)(group name)[(counter-id)(counter name)(value)]...}``
  with a second escaping layer for ``(){}[]`` (:mod:`ingest.counters_v1`).
* A history file may be a concatenation of several files, each after a
  ``!!FILE=name!!`` line (Rumen's test inputs); a section whose first line is
  XML is a job conf and lands in ``conf``.  Each job is its own ``jobs`` row.

A line that is not a history record, or a record with a field no reader can
take (a time that is no integer, an attempt without its id), is skipped and
remembered in ``ctx.skipped`` (:func:`~ingest.base.skip_record`: the file lands
as partial, every other record kept; what the record had set before its bad
field stays).  A counter whose value is no integer is skipped the same way, its
record and the record's other counters kept (counters text that breaks off
keeps the counters before the break); an embedded job conf keeps what
:mod:`ingest.conf_xml` can keep of it, or is skipped whole.  Like Hadoop's own parser, text between ``KEY="value"`` pairs that is not a pair
(a record cut mid-key, as in Rumen's ``truncated-job-tracker-log``) is skipped;
it is kept in the record's event and noted.  A record whose type is unknown
lands only in ``events``.  A file that ends inside a quoted value was cut
short: everything before the cut lands and :class:`TraceTruncatedError` says where.

Hadoop 0.18 and before wrote the same records without ``Meta VERSION="1" .``
and without the closing ``' .'``: their parser ended a record at the first
line that ends in ``"``, and so does this reader in a section whose first
record line ends so (``hadoop_version`` "0.18"); their counters are the
compact ``group.counter:value,...``.

Rows per job are built when its section ends (memory is one job, not one file);
every record is an ``events`` row with its fields unescaped but otherwise raw
(``TASK_STATUS="SUCCESS"`` stays ``SUCCESS`` there, and is ``SUCCEEDED`` in
``attempts``).  1.x has no map-finish time: ``map_finish_ms`` stays null.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ingest.base import ReadContext, Row, RowBlock, skip_record
from ingest.formats import Format
from ingest.history_v1_records import delimited_records, parse_record, record_end
from ingest.history_v1_state import V1Reader
from ingest.opening import iter_lines
from phaseline.errors import TraceParseError, TraceTruncatedError

MAX_RECORD_LINES = 20_000  # a stack trace in ERROR= is long, never this long
_FILE_MARK = re.compile(r"^\f?!!FILE=(.*)!!\s*$")  # Rumen writes a form feed first
_SNIFF_RECORD = re.compile(rb'^(Meta|Job|Task|MapAttempt|ReduceAttempt) [A-Z_]+="', re.M)


def read_history_v1(path: Path, ctx: ReadContext) -> Iterator[Row | RowBlock]:
    """Read a Hadoop 0.20/1.x history file (plain, gzipped, or ``!!FILE=`` concatenated).

    Yields
    ------
    Row | RowBlock
        ``events`` rows as records stream by; ``jobs``, ``attempts``, ``tasks``,
        ``counters`` (one :class:`~ingest.base.RowBlock` per counters value) and
        ``conf`` (for embedded confs) when each section ends.

    Raises
    ------
    TraceParseError
        A line that is not a record, a record without pairs or ids, a
        non-integer time/count, malformed counters, a malformed embedded conf.
    TraceTruncatedError
        The file ends inside a record (after every complete job was yielded).
    """
    reader = V1Reader(path, ctx)
    buf: list[str] = []
    open_quote = 0  # parity of unescaped quotes in buf: 1 while inside a value
    start = 0
    delimited: bool | None = None  # records end in ' .' (0.20+); None until a section's first record
    for line_no, line in iter_lines(path, ctx):
        mark = _FILE_MARK.match(line) if line.startswith(("!", "\f")) else None
        if mark:  # a file boundary ends whatever came before, even a record cut short
            if buf:
                yield reader.cut_record(buf, start)
                buf, open_quote = [], 0
            yield from reader.end_section()
            reader.section = mark.group(1)
            delimited = None
            continue
        if not buf:
            if reader.conf_lines is not None:
                reader.conf_lines.append(line)
                continue
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("<"):
                reader.conf_lines, reader.conf_start = [line], line_no
                continue
            start = line_no
            if delimited is None:
                delimited = delimited_records(stripped)
                reader.version = "0.20/1.x" if delimited else "0.18"
        buf.append(line)
        if len(buf) > MAX_RECORD_LINES:
            raise TraceParseError(
                path,
                f"the record starting at line {start} runs past {MAX_RECORD_LINES} lines without ending in '\" .'",
                line=start,
                hint="is this a job history file? (a value may span lines, a record may not)",
            )
        ended, open_quote, bad = record_end(path, line, line_no, start, open_quote, delimited)
        if not ended:
            continue
        if bad is not None:
            skip_record(ctx, bad)
            buf, open_quote = [], 0
            continue
        text = ("\n".join(buf) if len(buf) > 1 else line).strip()
        buf = []
        read_before = ctx.events_read
        try:
            rows = list(reader.handle(parse_record(text, start, path, delimited=delimited is not False)))
        except TraceParseError as exc:  # no record, or fields no reader can take: skipped, named
            ctx.events_read = read_before
            skip_record(ctx, exc)
            continue
        yield from rows
    yield from reader.end_section()
    if buf:
        raise TraceTruncatedError(
            path,
            f"file ends inside a record that starts at line {start} ({len(buf)} lines, no closing '\" .')",
            line=start,
            hint="the writer was cut off; everything before that record landed",
        )


def sniff_history_v1(head: bytes, path: Path) -> bool:
    """A 1.x history: ``!!FILE=`` concatenation, or a first record ``Meta|Job|Task... KEY="``."""
    text = head.lstrip(b" \t\r\n\f")  # (read_head reads past a byte-order mark)
    if text.startswith(b"!!FILE="):
        return True
    first = text.split(b"\n", 1)[0]
    return _SNIFF_RECORD.match(first) is not None


FORMATS: tuple[Format, ...] = (
    Format(
        name="history_v1",
        sniff=sniff_history_v1,
        read=read_history_v1,
        doc='Hadoop 0.18-1.x job-tracker history (Type KEY="value" records; !!FILE= concatenations)',
    ),
)
