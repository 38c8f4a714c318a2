"""Files phaseline recognises but deliberately does not land (status ``skipped``).

Spark event logs (JSON lines ``{"Event": "SparkListener...", ...}``, or
``org.apache.spark...`` event names in newer versions), plain or zipped, are
traces of Spark applications, not of MapReduce jobs: phaseline's tables have no
place for stages and executors.  Recognising them gives a clear ``skipped``
status instead of "format not recognised".

The pipeline does not call a skipped format's reader; :func:`read_spark_event_log`
exists for callers who want to check such a file: it counts the events (in
``ctx.events_read``), notes why nothing lands, and yields no rows.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import orjson

from ingest.base import ReadContext, Row
from ingest.formats import Format
from ingest.opening import iter_lines
from phaseline.errors import TraceParseError

SPARK_REASON = "Spark event log: not a MapReduce trace (phaseline reads Hadoop MapReduce traces only)"
ZIP_REASON = "zipped Spark event log: not a MapReduce trace (phaseline reads Hadoop MapReduce traces only)"
_SPARK_EVENT = re.compile(rb'^\s*\{\s*"Event"\s*:\s*"(SparkListener|org\.apache\.spark\.)')
_ZIP_MAGIC = b"PK\x03\x04"
_ZIP_PEEK = 4096


def sniff_spark_event_log(head: bytes, path: Path) -> bool:
    """The first line is a JSON object whose first key is a Spark ``Event``."""
    return _SPARK_EVENT.match(head.lstrip(b"\xef\xbb\xbf")) is not None


def sniff_zipped_spark_event_log(head: bytes, path: Path) -> bool:
    """A zip archive whose first member starts like a Spark event log (only its first bytes are read)."""
    if not head.startswith(_ZIP_MAGIC):
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            members = [i for i in zf.infolist() if not i.is_dir()]
            if not members:
                return False
            with zf.open(members[0]) as member:
                return sniff_spark_event_log(member.read(_ZIP_PEEK), path)
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError, ValueError):
        return False  # a damaged zip is not a Spark event log we could skip knowingly


def read_spark_event_log(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Check a Spark event log line by line, count its events, land nothing.

    Raises
    ------
    TraceParseError
        A non-blank line that is not a JSON object with an ``Event`` key.
    """
    for line_no, line in iter_lines(path, ctx):
        if not line.strip():
            continue
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise TraceParseError(path, f"not a JSON line: {exc}", line=line_no) from exc
        if not isinstance(event, dict) or "Event" not in event:
            raise TraceParseError(path, 'a Spark event log line without an "Event" key', line=line_no)
        ctx.events_read += 1
        ctx.unknown[str(event["Event"])] += 1
    ctx.notes.append(f"{path}: {SPARK_REASON}; {ctx.events_read} events checked, none landed")
    yield from ()


def read_zipped_spark_event_log(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Count the members of a zipped Spark event log; land nothing."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = [i.filename for i in zf.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError) as exc:
        raise TraceParseError(path, f"not a readable zip archive: {exc}") from exc
    ctx.events_read += len(names)
    ctx.notes.append(f"{path}: {ZIP_REASON}; members: {', '.join(names[:5])}")
    yield from ()


FORMATS: tuple[Format, ...] = (
    Format(
        name="spark_event_log",
        sniff=sniff_spark_event_log,
        read=read_spark_event_log,
        doc=SPARK_REASON,
        landed=False,
    ),
    Format(
        name="spark_event_log_zip",
        sniff=sniff_zipped_spark_event_log,
        read=read_zipped_spark_event_log,
        doc=ZIP_REASON,
        landed=False,
    ),
)
