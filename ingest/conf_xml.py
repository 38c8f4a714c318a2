"""Hadoop job configuration XML (``job_..._conf.xml``) -> ``conf`` rows.

Two styles are in the wild and both are read:

* Hadoop 0.23/2.0 wrote where a property was set as a comment inside it::

      <property><!--Loaded from job.xml--><name>k</name><value>v</value></property>

* later versions write one ``<source>`` element per layer, oldest first::

      <property><name>k</name><value>v</value><source>mapred-default.xml</source><source>job.xml</source></property>

``conf.source`` holds the comment's location, or the ``<source>`` chain joined
with ``", "`` (the last one is where the value finally came from).

The file is parsed incrementally with :mod:`defusedxml`: DTDs, entity
declarations and external references are refused (billion-laughs and XXE
inputs raise :class:`~phaseline.errors.TraceParseError`, nothing expands).

Bad input: a ``<property>`` without a name is skipped and remembered in
``ctx.skipped`` with its line (:func:`~ingest.base.skip_record`); XML that
breaks off mid-document (a cut file) keeps every property before the cut
(``ctx.cut``: the file lands as partial), and XML malformed mid-document keeps
every property before the fault, which is named as skipped with the rest of
the file (XML gives no place to resume).  A root other than
``<configuration>`` is no job conf: the file is refused.

Job id: the property ``mapreduce.job.id`` (or 1.x ``mapred.job.id``) when the
file sets it, else ``ctx.job_id_hint``, else a ``job_<digits>_<digits>`` found
in the file name (``job_1329348432655_0001_conf.xml`` or Rumen's
``host_ts_job_201002080801_40864_conf.xml``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree.ElementTree import ParseError
from xml.parsers.expat import errors as expat_errors

import defusedxml
from defusedxml.ElementTree import XMLParser

from ingest.base import MAX_RECORD_CHARS, ReadContext, Row, skip_or_raise, skip_record
from ingest.formats import Format
from ingest.mrcommon import event_row
from ingest.opening import open_binary
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import job_id_from_name

JOB_ID_KEYS = ("mapreduce.job.id", "mapred.job.id")
_CHUNK = 1 << 16
_LOADED_FROM = re.compile(r"^\s*Loaded from\s+(.*?)\s*$", re.S)
_COMMENT = re.compile(rb"<!--.*?-->", re.S)
_DOCTYPE = re.compile(rb"<!DOCTYPE[^\[>]*(\[.*?\])?\s*>", re.S)
_FIRST_ELEMENT = re.compile(rb"<(?![?!])([A-Za-z_][\w:.\-]*)")
#: Expat's errors for a document that ends before its root element closes (a cut file).
_CUT_CODES = frozenset(
    expat_errors.codes[e] for e in (expat_errors.XML_ERROR_NO_ELEMENTS, expat_errors.XML_ERROR_UNCLOSED_TOKEN,
                                    expat_errors.XML_ERROR_PARTIAL_CHAR, expat_errors.XML_ERROR_UNCLOSED_CDATA_SECTION)
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ConfProperty:
    """One ``<property>`` of a job configuration."""

    key: str
    value: str | None
    source: str | None
    line: int


class _ConfTarget:
    """An ElementTree parser target that keeps only ``<property>`` contents (and their comments)."""

    def __init__(self, path: Path, ctx: ReadContext | None) -> None:
        self.path = path
        self.ctx = ctx  # where a nameless property is skipped (without: it is an error)
        self.parser: XMLParser | None = None
        self.props: dict[str, ConfProperty] = {}
        self.root: str | None = None
        self._depth = 0
        self._in_prop = False
        self._field: str | None = None
        self._text: list[str] = []
        self._cur: dict[str, str] = {}
        self._sources: list[str] = []
        self._comment_source: str | None = None
        self._prop_line = 0

    def _line(self) -> int:
        parser = self.parser
        return int(parser.parser.CurrentLineNumber) if parser is not None else 0

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self._depth += 1
        if self._depth == 1:
            self.root = tag
            if tag != "configuration":
                raise TraceParseError(
                    self.path,
                    f"root element is <{tag}>, not <configuration>: not a Hadoop job conf",
                    line=self._line(),
                )
            return
        if self._depth == 2 and tag == "property":
            self._in_prop = True
            self._cur = {}
            self._sources = []
            self._comment_source = None
            self._prop_line = self._line()
        elif self._in_prop and self._depth == 3:
            self._field = tag
            self._text = []

    def end(self, tag: str) -> None:
        if self._in_prop and self._depth == 3 and self._field is not None:
            text = "".join(self._text)
            if self._field == "source":
                self._sources.append(text.strip())
            else:
                self._cur[self._field] = text
            self._field = None
        elif self._in_prop and self._depth == 2:
            self._finish_property()
        self._depth -= 1

    def _finish_property(self) -> None:
        self._in_prop = False
        name = self._cur.get("name")
        if name is None or not name.strip():
            skip_or_raise(self.ctx, TraceParseError(
                self.path, "a <property> has no <name>", line=self._prop_line, hint="is this a Hadoop conf?"
            ))  # fmt: skip
            return
        source = ", ".join(s for s in self._sources if s) or self._comment_source
        key = name.strip()
        self.props.pop(key, None)  # Hadoop's Configuration: the last definition wins
        self.props[key] = ConfProperty(key, self._cur.get("value"), source, self._prop_line)

    def data(self, text: str) -> None:
        if self._field is not None:
            self._text.append(text)

    def comment(self, text: str) -> None:
        if self._in_prop:
            m = _LOADED_FROM.match(text)
            if m:
                self._comment_source = m.group(1)

    def close(self) -> None:
        return None


def parse_conf(
    chunks: Iterable[bytes], path: Path, *, first_line: int = 1, ctx: ReadContext | None = None
) -> list[ConfProperty]:
    """Parse a job conf given as byte chunks; properties in file order, last definition winning.

    ``first_line`` shifts the line numbers in errors (for confs embedded in a
    concatenated 1.x history file).  With ``ctx``, what can be kept of bad XML
    is kept (module docstring); without, bad XML is a :class:`TraceParseError`.
    """
    target = _ConfTarget(path, ctx)
    parser = XMLParser(target=target, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    target.parser = parser
    shift = first_line - 1
    try:
        for chunk in chunks:
            parser.feed(chunk)
        parser.close()
    except TraceParseError as exc:
        if shift and exc.line is not None:
            raise TraceParseError(path, exc.message, line=exc.line + shift, hint=exc.hint) from exc
        raise
    except ParseError as exc:
        line, _col = exc.position
        if ctx is None or target.root is None:
            raise TraceParseError(path, f"malformed XML: {exc}", line=line + shift) from exc
        if exc.code in _CUT_CODES:
            ctx.cut = ctx.cut or TraceTruncatedError(
                path, f"the XML ends inside the document ({exc})", line=line + shift,
                hint="the conf was cut short; every property before the cut landed",
            )  # fmt: skip
        else:
            skip_record(ctx, TraceParseError(
                path, f"malformed XML: {exc}; no property after it is read", line=line + shift,
            ))  # fmt: skip
    except defusedxml.DefusedXmlException as exc:
        raise TraceParseError(
            path,
            f"refused: {type(exc).__name__} ({exc}); job confs never declare DTDs or entities",
            line=target._line() + shift,
            hint="DTD/entity declarations are rejected to prevent entity-expansion and external-entity attacks",
        ) from exc
    except (ValueError, LookupError) as exc:  # expat: an encoding it cannot decode (Big5, UTF-7, a bogus name)
        raise TraceParseError(path, f"the XML declares an encoding the parser cannot read: {exc}",
                              line=first_line, hint="job confs are written in UTF-8") from exc  # fmt: skip
    if target.root is None:
        raise TraceParseError(path, "no XML element found: empty job conf", line=first_line)
    return list(target.props.values())


def conf_job_id(props: Iterable[ConfProperty]) -> str | None:
    """The job id a conf declares (``mapreduce.job.id`` / ``mapred.job.id``), if any."""
    found = {p.key: p.value for p in props if p.key in JOB_ID_KEYS}
    for key in JOB_ID_KEYS:
        value = found.get(key)
        if value and value.strip():
            return value.strip()
    return None


def conf_rows(job_id: str, props: Iterable[ConfProperty]) -> Iterator[Row]:
    for p in props:
        yield Row("conf", {"job_id": job_id, "key": p.key, "value": p.value, "source": p.source})


def _chunks(path: Path, ctx: ReadContext) -> Iterator[bytes]:
    """The file's (decompressed) bytes in chunks; a conf larger than any real one is refused.

    A gzip stream cut short ends at the cut (``ctx.cut``), its properties before the cut kept.
    """
    total = 0
    with open_binary(path, ctx) as fh:
        while chunk := fh.read(_CHUNK):
            total += len(chunk)
            if total > MAX_RECORD_CHARS:
                raise TraceParseError(path, f"job conf larger than {MAX_RECORD_CHARS >> 20} MiB")
            yield chunk


def read_conf_xml(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read a Hadoop job conf XML into ``conf`` rows (plus one ``JobConf`` event).

    Raises
    ------
    TraceParseError
        XML malformed before the root element, a root other than
        ``<configuration>``, a DTD or entity declaration, or no way to tell the
        job id.  (A nameless property, XML cut or malformed later: see the module
        docstring.)
    """
    try:
        props = parse_conf(_chunks(path, ctx), path, ctx=ctx)
    except (OSError, EOFError) as exc:
        raise TraceParseError(path, f"cannot read the file: {exc}") from exc
    job_id = conf_job_id(props) or ctx.job_id_hint or job_id_from_name(path.name)
    if job_id is None:
        raise TraceParseError(
            path,
            "no job id: the conf sets neither mapreduce.job.id nor mapred.job.id and the file name has none",
            hint="name the file job_<id>_conf.xml",
        )
    ctx.events_read += len(props)
    yield from conf_rows(job_id, props)
    yield event_row(job_id, 0, "JobConf", None, {"path": str(path), "properties": len(props)})


def sniff_conf_xml(head: bytes, path: Path) -> bool:
    """A conf XML: the first element (after the prolog, comments, a doctype) is ``<configuration>``."""
    text = head.lstrip(b" \t\r\n")  # (read_head reads past a byte-order mark)
    if not text.startswith(b"<"):
        return False
    text = _DOCTYPE.sub(b"", _COMMENT.sub(b"", text))
    m = _FIRST_ELEMENT.search(text)
    return m is not None and m.group(1) == b"configuration"


FORMATS: tuple[Format, ...] = (
    Format(
        name="conf_xml",
        sniff=sniff_conf_xml,
        read=read_conf_xml,
        doc="Hadoop job configuration XML (<!--Loaded from--> and <source> styles)",
        record_tables=("conf",),  # one record per property; the JobConf event summarises the file
        job_from_name=True,  # a conf without mapreduce.job.id is the job its name says
    ),
)
