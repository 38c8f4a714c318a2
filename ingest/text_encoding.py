"""Byte-order marks: one rule for every reader.

Hadoop writes its traces as UTF-8 without a byte-order mark, but a trace that
passed through other hands may start with one: a conf or a counters file saved
by a Windows editor, a CSV exported by a spreadsheet (UTF-8 with a BOM), the
output of ``yarn logs`` redirected by Windows PowerShell 5 (``>`` writes
UTF-16LE with a BOM).  :func:`past_bom` opens such a stream past its mark, as
UTF-8, so every sniffer and parser sees the text as Hadoop wrote it:

* a UTF-8 mark is skipped (on a plain file by reading past it, so byte offsets
  in error messages stay the file's own);
* UTF-16 and UTF-32 text (told by its mark) is transcoded to UTF-8 as it is
  read (offsets are then the UTF-8 text's); bytes that do not decode become
  U+FFFD, as :func:`ingest.opening.open_text` does for UTF-8.

Text in UTF-16 without a mark is not recognised: nothing tells it from binary.
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterator
from typing import IO

from ingest.compression import SNIFF_BYTES, ChunkStream

__all__ = ["bom_encoding", "past_bom"]

#: Marks, longest first where one begins another (UTF-32LE's begins with UTF-16LE's).
_MARKS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_CHUNK = 1 << 16


def bom_encoding(head: bytes) -> tuple[bytes, str] | None:
    """The byte-order mark ``head`` starts with and the encoding it names; ``None`` without one."""
    for mark, encoding in _MARKS:
        if head.startswith(mark):
            return mark, encoding
    return None


def past_bom(stream: IO[bytes]) -> IO[bytes]:
    """``stream`` (one that peeks: buffered, gzip) as UTF-8 past its byte-order mark; itself without one.

    A UTF-8 mark is read off ``stream`` and ``stream`` returned; other encodings come back as a new
    buffered stream of their UTF-8 text, which closes ``stream`` when it is closed.
    """
    found = bom_encoding(stream.peek(4)[:4])  # type: ignore[attr-defined]
    if found is None:
        return stream
    mark, encoding = found
    stream.read(len(mark))
    if encoding == "utf-8":
        return stream
    return io.BufferedReader(ChunkStream(_as_utf8(stream, encoding), stream), SNIFF_BYTES)


def _as_utf8(stream: IO[bytes], encoding: str) -> Iterator[bytes]:
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    while chunk := stream.read(_CHUNK):
        if text := decoder.decode(chunk):
            yield text.encode("utf-8")
    if tail := decoder.decode(b"", final=True):
        yield tail.encode("utf-8")
