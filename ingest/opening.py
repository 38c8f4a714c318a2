"""Opening a trace file, whatever it is stored as: compressed or plain, with or without a byte-order mark,
a binary job history, YARN's aggregated logs as a NodeManager uploads them; its head, for sniffing; its
lines, bounded.  What a reader yields and records is :mod:`ingest.base`.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ingest.base import MAX_RECORD_CHARS, ReadContext
from ingest.compression import SNIFF_BYTES, ChunkStream, Codec, decompressed, sniff_codec
from ingest.jhist_binary import is_binary_history, json_history
from ingest.text_encoding import bom_encoding, past_bom
from ingest.yarn_ifile import is_ifile
from ingest.yarn_ifile import open_rendered as open_ifile
from ingest.yarn_tfile import is_tfile, open_rendered
from phaseline.errors import TraceParseError, TraceTruncatedError

GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 8192


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
    # (a regular file, as the walk finds them: its head read at once, where a BufferedReader's peek this
    # large faults its buffer in, ~0.7 ms; a plain file's block reads then go straight into their bytes)
    fio = io.FileIO(path)  # returned to the caller (buffered), who closes it
    try:
        head = fio.read(SNIFF_BYTES)
        fio.seek(0)
        codec = sniff_codec(head)
        uploaded = None if codec is not None else uploaded_logs(path, head)
    except BaseException:
        fio.close()
        raise
    if codec is None and uploaded is None and not is_binary_history(head):
        return past_bom(io.BufferedReader(fio, _PLAIN_BUFFER))
    raw = io.BufferedReader(fio, SNIFF_BYTES)
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
