"""What every reader shares: the row type, the read context, and opening files.

A reader is one module with one entry point, ``read_<format>(path, ctx)``, a
generator of :class:`Row` s (table name + column values, named as in
:mod:`phaseline.schemas`) and, where many rows share most of their values
(the counters of one record), :class:`RowBlock` s: rows given column by
column.  Readers stream: they never hold a whole file.

* A malformed file raises :class:`~phaseline.errors.TraceParseError` naming the
  line or byte offset; the ingest pipeline then quarantines the file (none of
  its rows land).
* A file cut short by a crash raises
  :class:`~phaseline.errors.TraceTruncatedError` *after* yielding every good
  row before the cut; the pipeline lands those rows and records the cut.
* Everything a reader consumed counts in ``ctx.events_read``; records it keeps
  only as raw events (unknown types, unknown log lines) are still rows of the
  ``events`` table, so nothing is dropped silently.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple

from ingest.compression import SNIFF_BYTES, ChunkStream, Codec, decompressed, sniff_codec
from ingest.jhist_binary import is_binary_history, json_history
from ingest.text_encoding import bom_encoding, past_bom
from ingest.yarn_ifile import is_ifile
from ingest.yarn_ifile import open_rendered as open_ifile
from ingest.yarn_tfile import is_tfile, open_rendered
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.schemas import table as table_spec

GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 8192
#: The largest single record (line, JSON value, document) a reader accepts.  No real
#: trace comes near; the cap keeps a hostile file (a 1 GB line) from exhausting memory.
MAX_RECORD_CHARS = 64 * 1024 * 1024
#: Unreadable records a reader skips in one file before it gives the whole file up (:func:`skip_record`).
MAX_SKIPPED_RECORDS = 100


class Row(NamedTuple):
    """One row for one table of the store.

    ``values`` is a dict by column name, or (the fast path for big tables) a
    tuple in the table's :attr:`~phaseline.schemas.TableSpec.row_columns` order.
    """

    table: str
    values: dict[str, Any] | tuple[Any, ...]

    def as_dict(self) -> dict[str, Any]:
        """The values by column name, whichever form the reader gave."""
        if isinstance(self.values, dict):
            return self.values
        return dict(zip(table_spec(self.table).row_columns, self.values, strict=True))


@dataclass(frozen=True, slots=True)
class RowBlock:
    """``n`` rows for one table, given column by column (the fast path for many similar rows).

    A reader may yield a block wherever it yields :class:`Row` s; it stands for
    ``n`` rows, in order, and the store appends its columns whole instead of
    receiving one row at a time (e.g. all counters of one JhCounters record).

    Attributes
    ----------
    table
        The table the rows are for.
    n
        How many rows the block holds.
    columns
        Per-row values by column name; each sequence has ``n`` values.
    constants
        Columns whose value is the same in all ``n`` rows, by name.

    Columns named in neither mapping are NULL.  A name that is not a column of
    the table, or a sequence of the wrong length, is a
    :class:`~phaseline.errors.SchemaError` when the block is written or expanded.

    Examples
    --------
    >>> block = RowBlock("counters", 2, {"counter_name": ["A", "B"], "value": [1, 2]},
    ...                  {"job_id": "job_1_1", "scope": "job_total", "group_name": "g"})
    >>> [r.as_dict()["counter_name"] for r in block.rows()]
    ['A', 'B']
    """

    table: str
    n: int
    columns: Mapping[str, Sequence[Any]]
    constants: Mapping[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        """Raise :class:`SchemaError` unless every name is a column and every sequence has ``n`` values."""
        # the store's own checks (imported here: staging pulls in pyarrow.parquet, which
        # readers that only yield blocks never need)
        from phaseline.table_writer import check_block_names, check_block_sizes

        check_block_names(self.table, table_spec(self.table).row_columns, self.columns, self.constants)
        check_block_sizes(self.table, self.n, self.columns)

    def rows(self) -> Iterator[Row]:
        """The block as :class:`Row` s, values as tuples in ``row_columns`` order (checked first)."""
        self.check()
        names = table_spec(self.table).row_columns
        per_column = [
            self.columns[name] if name in self.columns else [self.constants.get(name)] * self.n for name in names
        ]
        for values in zip(*per_column, strict=True):
            yield Row(self.table, values)


def iter_rows(items: Iterable[Row | RowBlock]) -> Iterator[Row]:
    """A reader's output with every :class:`RowBlock` expanded into its rows, in order.

    For callers that look at rows one by one (tests, small readers built on
    other readers); the store takes blocks whole.
    """
    for item in items:
        if isinstance(item, RowBlock):
            yield from item.rows()
        else:
            yield item


def row_count(item: Row | RowBlock) -> int:
    """How many rows one item of a reader's output stands for (``n`` for a block, else 1)."""
    return item.n if isinstance(item, RowBlock) else 1


@dataclass(slots=True)
class ReadContext:
    """Per-file state a reader updates while it streams.

    Attributes
    ----------
    path
        The file being read (as given by the user).
    sha256
        Content hash of the file; the store stamps it on every row.
    events_read
        Records/events/lines of meaning consumed from the file.
    unknown
        Counts of records the reader kept only as raw events, by kind.
    notes
        Non-fatal remarks for the ingest summary (e.g. inflated counters).
    job_id_hint
        A job id known from outside the content (e.g. the file name), for
        formats whose content may lack it.
    """

    path: Path
    sha256: str = ""
    events_read: int = 0
    unknown: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    job_id_hint: str | None = None
    #: Set where a gzip stream opened with this context ended early (:func:`open_binary`):
    #: the reader saw every byte before the cut as the whole file, and the ingest lands
    #: its rows as a partial source with this error.
    cut: TraceTruncatedError | None = None
    #: Records the reader could not read and skipped (a malformed line amid good ones,
    #: :func:`skip_record`): the file lands as partial, its error naming them.
    skipped: list[TraceParseError] = field(default_factory=list)


def skip_record(ctx: ReadContext, error: TraceParseError, *, limit: int = MAX_SKIPPED_RECORDS) -> None:
    """Skip one unreadable record of a file that is otherwise read, or give the file up.

    The record is remembered in ``ctx.skipped`` (the ingest lands the file as
    partial and names it); past ``limit`` such records the file is not a trace of
    its format, or too corrupt to trust, and :class:`TraceParseError` says so,
    naming the first.
    """
    ctx.skipped.append(error)
    if len(ctx.skipped) > limit:
        first = ctx.skipped[0]
        raise TraceParseError(
            error.path,
            f"more than {limit} unreadable records; the first: {first.message}",
            line=first.line,
            offset=first.offset,
            hint="not a trace of this format, or too corrupt to trust",
        )


def skip_or_raise(ctx: ReadContext | None, error: TraceParseError) -> None:
    """:func:`skip_record` where the caller reads on past bad records (it gave a context); else raise ``error``."""
    if ctx is None:
        raise error
    skip_record(ctx, error)


class NotATraceError(TraceParseError):
    """A file a reader took for its format turns out to be no trace at all (a daemon's log with no
    line of a job, task or attempt): the pipeline skips it, ``not a trace: <why>``, landing nothing."""

    def __init__(self, path: str | Path, why: str) -> None:
        super().__init__(path, why, hint="nothing in it is about a MapReduce job; it is skipped, not quarantined")
        self.why = why


def is_gzip(head: bytes) -> bool:
    return head[:2] == GZIP_MAGIC


class _UntilCut(io.RawIOBase):
    """A compressed stream that ends, instead of raising, where its compressed data was cut short.

    A read that meets the cut raises ``EOFError`` (in :mod:`gzip`, or
    :mod:`ingest.compression`), and the buffered and text layers above drop
    what that read had gathered (up to a chunk of good data before the cut).
    Here the stream simply ends after its last decompressed byte, and the cut
    is recorded in ``ctx.cut``.
    """

    def __init__(self, stream: IO[bytes], path: Path, ctx: ReadContext, what: str = "the compressed stream ends") -> None:
        self._stream = stream
        self._path = path
        self._ctx = ctx
        self._what = what  # what ends early, with its verb, in the message
        self._ended = False
        self._delivered = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._ended:
            return 0
        try:
            data = self._stream.read1(len(buffer))  # type: ignore[attr-defined]  # gzip or buffered streams
        except EOFError as exc:
            self._ended = True
            self._ctx.cut = TraceTruncatedError(
                self._path,
                f"{self._what} early, after {self._delivered:,} bytes of content ({exc})",
                hint="the file was cut short or damaged there; every record before it was kept",
            )
            return 0
        n = len(data)
        buffer[:n] = data
        self._delivered += n
        return n

    def close(self) -> None:
        self._stream.close()
        super().close()


#: A plain file's read buffer: larger than the peeks of its readers (64 KiB), smaller than their block reads.
_PLAIN_BUFFER = 1 << 17


def open_binary(path: Path, ctx: ReadContext | None = None) -> IO[bytes]:
    """Open a file for reading, decompressing it transparently (by content, not name): gzip, and
    the other codecs Hadoop and Spark write (:mod:`ingest.compression`); YARN's aggregated logs as a
    NodeManager uploads them (a TFile or the indexed format) as the ``yarn logs`` output they hold
    (:mod:`ingest.yarn_tfile`, :mod:`ingest.yarn_ifile`); binary job history (plain or compressed) as
    the JSON flavour's lines (:mod:`ingest.jhist_binary`).

    With ``ctx``, a compressed stream cut short ends at the cut (:class:`_UntilCut`)
    and ``ctx.cut`` says so; without, reading at the cut raises ``EOFError``.
    A plain file comes back as the ``io.BufferedReader`` of the file itself. Text that starts
    with a byte-order mark is read past it, as UTF-8 (:mod:`ingest.text_encoding`).
    """
    fio = io.FileIO(path)  # returned to the caller (buffered), who closes it
    peeked: io.BufferedReader | None = None  # a pipe's: what is read from it is gone, so it is peeked at
    try:
        if fio.seekable():  # (one read: a BufferedReader's peek this large faults its buffer in, ~0.7 ms)
            head = fio.read(SNIFF_BYTES)
            fio.seek(0)
        else:
            peeked = io.BufferedReader(fio, SNIFF_BYTES)
            head = peeked.peek(SNIFF_BYTES)
        codec = sniff_codec(head)
        uploaded = None if codec is not None else uploaded_logs(path, head)
    except BaseException:
        fio.close()
        raise
    if codec is None and uploaded is None and not is_binary_history(head):
        # a plain file: reads larger than the buffer go straight from the file into their bytes
        return past_bom(peeked or io.BufferedReader(fio, _PLAIN_BUFFER))
    raw = peeked or io.BufferedReader(fio, SNIFF_BYTES)
    stream: IO[bytes]
    what = "the compressed stream ends"
    if uploaded is not None:  # YARN's aggregated logs as a NodeManager uploads them: read as `yarn logs` prints them
        raw.close()
        stream, what = uploaded(path), "the uploaded logs end"
    elif codec is None:
        stream = raw
    elif codec is Codec.GZIP:
        stream = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]
    else:
        stream = decompressed(raw, codec)
    if uploaded is None and _binary_history(stream):
        stream = io.BufferedReader(ChunkStream(json_history(stream), stream), SNIFF_BYTES)
        what = "the binary history ends" if codec is None else "the compressed stream of a binary history ends"
    elif codec is not None:
        stream = _past_bom_of(stream)
    if ctx is None:
        return stream
    return io.BufferedReader(_UntilCut(stream, path, ctx, what))


def _past_bom_of(stream: IO[bytes]) -> IO[bytes]:
    """A decompressed stream past its byte-order mark; one whose first bytes do not come is left as it is
    (reading it raises where a reader expects it, inside :class:`_UntilCut`)."""
    try:
        return past_bom(stream)
    except (EOFError, OSError, zlib.error):
        return stream


def _binary_history(stream: IO[bytes]) -> bool:
    """Whether ``stream`` (buffered or gzip: both peek) begins as a binary history; a stream whose first
    bytes do not come is not one here (reading it raises where a reader expects it)."""
    try:
        return is_binary_history(stream.peek(64))  # type: ignore[attr-defined]
    except (EOFError, OSError, zlib.error):
        return False


def uploaded_logs(path: Path, head: bytes) -> Callable[[Path], IO[bytes]] | None:
    """How to open YARN's aggregated logs as a NodeManager uploads them (a TFile, or the indexed
    format), as the ``yarn logs`` output they hold; ``None`` for any other file."""
    if is_tfile(head):
        return open_rendered
    if is_ifile(path, head):
        return open_ifile
    return None


def open_text(path: Path, ctx: ReadContext | None = None) -> IO[str]:
    """Open a (possibly gzipped) file as UTF-8 text; undecodable bytes become U+FFFD.

    ``ctx``: as for :func:`open_binary` (a gzip stream cut short ends at the cut).
    """
    return io.TextIOWrapper(open_binary(path, ctx), encoding="utf-8", errors="replace", newline=None)


def read_head(path: Path, n: int = HEAD_BYTES) -> bytes:
    """The first ``n`` decompressed bytes of a file, for format sniffing (of a gzip stream
    cut short, the bytes before the cut)."""
    with io.FileIO(path) as raw:  # (read, not peeked at through a buffer this large: open_binary)
        head = raw.read(SNIFF_BYTES)
    compressed = sniff_codec(head) is not None
    rendered = not compressed and (uploaded_logs(path, head) is not None or is_binary_history(head))
    if not compressed and not rendered and bom_encoding(head[:4]) is None:
        return head[:n]
    try:
        with open_binary(path, ReadContext(path)) as fh:
            text = fh.read(n)
    except (OSError, EOFError, zlib.error):
        text = b""
    if text or not rendered:
        return text
    return bytes(head[:n])  # a rendering that fails at once: the file's own bytes name it (the reader says why)


def iter_lines(path: Path, ctx: ReadContext, *, max_chars: int = MAX_RECORD_CHARS) -> Iterator[tuple[int, str]]:
    """Yield ``(line_no, line)`` of a text file (1-based, line ending stripped).

    A gzip stream cut short ends after its last complete line (the line the cut
    broke off is dropped) and ``ctx.cut`` records the cut: the ingest keeps
    every line before it and lands the file as partial.  A corrupt gzip stream
    raises :class:`TraceParseError` naming the last good line, after every line
    before it was yielded; so does a line longer than ``max_chars`` (read no
    further than the cap).
    """
    line_no = 0
    try:
        with open_text(path, ctx) as fh:
            while line := fh.readline(max_chars):
                line_no += 1
                if len(line) == max_chars and not line.endswith("\n"):
                    raise TraceParseError(
                        path,
                        f"line {line_no} is longer than {max_chars >> 20} Mi characters",
                        line=line_no,
                        hint="not a trace phaseline reads, or a corrupt one",
                    )
                if ctx.cut is not None and not line.endswith(("\n", "\r")):
                    ctx.cut = TraceTruncatedError(
                        path,
                        f"{ctx.cut.message}; line {line_no}, which the cut broke off, was dropped",
                        line=line_no,
                        hint=ctx.cut.hint,
                    )
                    return
                yield line_no, line.rstrip("\r\n")
    except (EOFError, OSError, zlib.error) as exc:
        raise TraceParseError(
            path, f"compressed stream is corrupt or cut short after line {line_no}: {exc}"
        ) from exc


def read_text_bounded(path: Path, max_chars: int = MAX_RECORD_CHARS) -> str:
    """A whole (possibly gzipped) text document, refusing one larger than ``max_chars``."""
    try:
        with open_text(path) as fh:
            text = fh.read(max_chars + 1)
    except (EOFError, OSError, zlib.error) as exc:
        raise TraceParseError(path, f"cannot read: {exc}") from exc
    if len(text) > max_chars:
        raise TraceParseError(path, f"document is larger than {max_chars >> 20} Mi characters")
    return text
