"""Java ``.properties`` dumps of a job's conf or counters (LinkedIn Dr. Elephant's ``mrdata``).

Two kinds, told apart by content:

* counters: every value is a Java ``Map.toString()`` of one counter group::

      org.apache.hadoop.mapreduce.TaskCounter={MAP_INPUT_RECORDS=1, SPILLED_RECORDS=2}

  They land in ``counters``.  A dump that holds the ``JobCounter`` group (job
  totals such as ``TOTAL_LAUNCHED_MAPS``) is a job's: scope ``job_total``;
  otherwise it is one task's: scope ``task`` (task id unknown: null).
  HTML escapes in group names (``Shuffle&nbsp;Errors``) are undone.
* anything else (``mapreduce.job.queuename=default``): job conf -> ``conf``
  with source ``properties``.

The files carry no job id.  ``ctx.job_id_hint`` is used when the caller knows
it; otherwise the id is ``props_<first 16 hex digits of the file's sha256>``:
stable across machines and re-ingests, identical for identical files, and
visibly not a Hadoop id.  Relate such a file to its job by passing a hint.

Syntax follows ``java.util.Properties.load``: ``#``/``!`` comments, ``=``,
``:`` or blank as separator, backslash line continuation and escapes.

Bad input: a counter map entry that is not ``NAME=<integer>`` is skipped and
remembered in ``ctx.skipped`` with its line (:func:`~ingest.base.skip_record`),
its group's other counters kept; a file that ends in a line continuation was
cut: the entry it breaks off is dropped and ``ctx.cut`` says so (the rest lands
as partial).  So is a counters dump cut inside its last group (every entry
before it a ``{...}`` map, the last only a key or a map that never closes): it
is still read as counters, that group dropped.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterator
from pathlib import Path

from ingest.base import ReadContext, Row, skip_record
from ingest.formats import Format
from ingest.mrcommon import check_int64, counter_row, event_row
from ingest.opening import iter_lines
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import JOB_COUNTER_GROUP
from phaseline.schemas import CounterScope

JOB_COUNTER_GROUPS = frozenset(
    {JOB_COUNTER_GROUP, "org.apache.hadoop.mapred.JobInProgress$Counter"}
)
_KEY_END = re.compile(r"(?<!\\)(?:\\\\)*[=:\s]")
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_MAP = re.compile(r"^\{(.*)\}$", re.S)
_MAP_ENTRY = re.compile(r"^([^=]+)=(-?\d+)$")
_SNIFF_LINE = re.compile(rb"^[A-Za-z_][\w.\-$&;]*=")  # Dr. Elephant writes "Shuffle&nbsp;Errors="


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc.startswith("u") and len(esc) == 5:
            return chr(int(esc[1:], 16))
        return _ESCAPES.get(esc, esc)

    return _ESCAPE.sub(one, text) if "\\" in text else text


def iter_properties(path: Path, ctx: ReadContext) -> Iterator[tuple[int, str, str]]:
    """Yield ``(line, key, value)`` of a Java properties file (continuations joined)."""
    logical: list[str] = []
    start = 0
    for line_no, raw in iter_lines(path, ctx):
        text = raw.lstrip()
        if not logical:
            if not text or text[0] in "#!":
                continue
            start = line_no
        trailing = len(text) - len(text.rstrip("\\"))
        if trailing % 2 == 1:
            logical.append(text[:-1])
            continue
        logical.append(text)
        entry = "".join(logical)
        logical = []
        m = _KEY_END.search(entry)
        if m is None:
            key, value = entry, ""
        else:
            key = entry[: m.end() - 1]
            rest = entry[m.end() - 1 :].lstrip(" \t\f")
            if rest[:1] in ("=", ":"):
                rest = rest[1:].lstrip(" \t\f")
            value = rest
        yield start, _unescape(key), _unescape(value)
    if logical and ctx.cut is None:
        ctx.cut = TraceTruncatedError(
            path, "the file ends in a line continuation", line=start,
            hint="the file was cut short; the entry it breaks off is dropped, every one before it landed",
        )  # fmt: skip


def _job_id(path: Path, ctx: ReadContext) -> str:
    if ctx.job_id_hint:
        return ctx.job_id_hint
    sha = ctx.sha256
    if not sha:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        sha = digest.hexdigest()
    return f"props_{sha[:16]}"


def _group_name(raw: str) -> str:
    """Dr. Elephant HTML-escapes group names (``Shuffle&nbsp;Errors``): Hadoop's name is ``Shuffle Errors``."""
    if "&" not in raw:
        return raw
    return html.unescape(raw).replace("\xa0", " ")


def _counter_map(text: str, path: Path, line: int, group: str, ctx: ReadContext) -> list[tuple[str, int]]:
    """A group's ``{NAME=value, ...}`` map; an entry that cannot be read is skipped (``ctx.skipped``)."""
    m = _MAP.match(text.strip())
    if m is None:
        raise TraceParseError(path, f"counter group {group!r} is not a {{NAME=value, ...}} map", line=line)
    out = []
    for item in m.group(1).split(","):
        item = item.strip()
        if not item:
            continue
        try:
            e = _MAP_ENTRY.match(item)
            if e is None:
                raise TraceParseError(path, f"counter group {group!r}: malformed entry {item[:60]!r}", line=line)
            out.append((e.group(1).strip(), check_int64(int(e.group(2)), path, f"{group}.{e.group(1)}", line)))
        except ValueError as exc:  # (a TraceParseError, or int() past 4,300 digits)
            skip_record(ctx, exc if isinstance(exc, TraceParseError) else TraceParseError(
                path, f"counter group {group!r}: {item[:40]!r}...: {exc}", line=line))  # fmt: skip
    return out


def _counter_groups(
    entries: list[tuple[int, str, str]], path: Path, ctx: ReadContext
) -> list[tuple[int, str, str]] | None:
    """The entries of a counters dump (each a ``{...}`` map), or None for a conf.

    A dump cut inside its last line still is one: every entry before that line
    is a map, and the last is a group broken off (only its key, or a map that
    never closes).  That group is dropped and ``ctx.cut`` says so.
    """
    if all(_MAP.match(v.strip()) for _, _, v in entries):
        return entries
    *complete, (line, group, value) = entries
    if not complete or not all(_MAP.match(v.strip()) for _, _, v in complete):
        return None
    if value and not value.lstrip().startswith("{"):
        return None  # a conf that happens to begin with map-like values
    if ctx.cut is None:
        ctx.cut = TraceTruncatedError(
            path, f"the file ends inside counter group {_group_name(group)!r}", line=line,
            hint="the file was cut short; that group's counters are dropped, every group before it landed",
        )  # fmt: skip
    return complete


def read_properties(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read a Dr. Elephant conf or counters ``.properties`` dump.

    Raises
    ------
    TraceParseError
        No properties in the file.  (A malformed counter entry, a dangling
        continuation: see the module docstring.)
    """
    entries = list(iter_properties(path, ctx))
    if not entries:
        raise TraceParseError(path, "no properties in the file")
    job_id = _job_id(path, ctx)
    groups = _counter_groups(entries, path, ctx)
    if groups is not None:
        scope = (
            CounterScope.JOB_TOTAL
            if any(k in JOB_COUNTER_GROUPS for _, k, _ in entries)
            else CounterScope.TASK
        )
        n = 0
        for line, raw_group, value in groups:
            group = _group_name(raw_group)
            for name, count in _counter_map(value, path, line, group, ctx):
                yield counter_row(job_id, scope.value, group, name, count)
                n += 1
        ctx.events_read += n
        payload: dict[str, object] = {
            "kind": "counters",
            "scope": scope.value,
            "groups": len(groups),
            "counters": n,
        }
    else:
        seen: dict[str, str] = {}
        for _line, key, value in entries:
            seen.pop(key, None)
            seen[key] = value  # Properties.load: the last definition wins
        ctx.events_read += len(seen)
        for key, value in seen.items():
            yield Row("conf", {"job_id": job_id, "key": key, "value": value, "source": "properties"})
        payload = {"kind": "conf", "properties": len(seen)}
    payload["path"] = str(path)
    yield event_row(job_id, 0, "PropertiesFile", None, payload)


def sniff_properties(head: bytes, path: Path) -> bool:
    """Every complete non-comment line of the head is ``key=...`` with a Java-identifier-like key.

    The last line may be cut (at the head's end, or the file's: a dump cut
    inside a key is still one): it counts only when it reads ``key=...``.
    """
    if b"\x00" in head:
        return False
    lines = head.split(b"\n")
    if not _SNIFF_LINE.match(lines[-1].strip()):
        lines = lines[:-1]
    seen = 0
    for raw in lines:
        line = raw.strip()
        if not line or line[:1] in (b"#", b"!"):
            continue
        if not _SNIFF_LINE.match(line):
            return False
        seen += 1
    return seen > 0


FORMATS: tuple[Format, ...] = (
    Format(
        name="properties",
        sniff=sniff_properties,
        read=read_properties,
        doc="Java .properties dumps of a job's conf or counters (Dr. Elephant mrdata)",
        record_tables=("conf", "counters"),  # one record per effective property / per counter
    ),
)
