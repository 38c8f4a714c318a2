"""Compressed traces, told from their first bytes and read as streams.

Hadoop and Spark compress history files, event logs and aggregated logs with
the codec a cluster is configured for.  :func:`sniff_codec` names it from the
content (never from the name); :func:`decompressed` gives the decompressed
bytes as a stream, a buffer at a time, so a file of any size is read in
constant memory.

=====================  ==========================================  ==========================
codec                  written by                                   first bytes
=====================  ==========================================  ==========================
gzip                   ``GzipCodec``, ``gzip``                      ``1f 8b`` (read by base)
bzip2                  ``BZip2Codec``, ``bzip2``                    ``BZh1``..``BZh9``
zstd                   ``ZStandardCodec``, Spark's ``zstd``         ``28 b5 2f fd``
lz4 frame              the ``lz4`` command                          ``04 22 4d 18``
snappy framing         ``snzip``, Google's framing format           ``ff 06 00 00 sNaPpY``
Spark lz4              Spark's ``lz4`` (lz4-java LZ4BlockOutputStream) ``LZ4Block``
Spark snappy           Spark's ``snappy`` (snappy-java stream)      ``82 SNAPPY 00``
Hadoop block snappy    ``SnappyCodec`` (BlockCompressorStream)      no magic: a block header
Hadoop block lz4       ``Lz4Codec`` (BlockCompressorStream)         no magic: a block header
=====================  ==========================================  ==========================

Hadoop's block streams have no magic number: each block is the big-endian
length of its raw bytes, then chunks of (big-endian length, compressed
bytes).  A file is taken for one only when its first chunk decompresses, by
snappy or by lz4, to exactly the length its header announces (a text file's
first byte alone puts the announced length past any Hadoop buffer).

The libraries are zstandard, lz4 (frames and blocks) and cramjam (snappy);
bz2 is the standard library's.  A stream that ends inside a frame or block
raises ``EOFError`` after every byte before it (the readers keep those
records and land the file as partial, as for gzip); corrupt data raises
``OSError`` naming the codec.
"""

from __future__ import annotations

import bz2
import enum
import io
import struct
from collections.abc import Callable, Iterator
from typing import IO, Any

import cramjam
import lz4.block  # type: ignore[import-untyped]
import lz4.frame  # type: ignore[import-untyped]
import zstandard

_READ = 1 << 18
#: How much of a file :func:`sniff_codec` is given (a Hadoop block stream's first chunk must be in it).
SNIFF_BYTES = 1 << 20
#: Hadoop's block streams buffer 256 KiB by default (io.compression.codec.*.buffersize); allow far more.
_MAX_HADOOP_BLOCK = 64 << 20


class Codec(enum.StrEnum):
    GZIP = "gzip"
    BZIP2 = "bzip2"
    ZSTD = "zstd"
    LZ4_FRAME = "lz4"
    SNAPPY_FRAMED = "snappy (framing format)"
    SPARK_LZ4 = "lz4 (Spark, LZ4BlockOutputStream)"
    SPARK_SNAPPY = "snappy (Spark, snappy-java stream)"
    HADOOP_SNAPPY = "snappy (Hadoop SnappyCodec block stream)"
    HADOOP_LZ4 = "lz4 (Hadoop Lz4Codec block stream)"


_MAGICS: tuple[tuple[bytes, Codec], ...] = (
    (b"\x1f\x8b", Codec.GZIP),
    (b"\x28\xb5\x2f\xfd", Codec.ZSTD),
    (b"\x04\x22\x4d\x18", Codec.LZ4_FRAME),
    (b"\xff\x06\x00\x00sNaPpY", Codec.SNAPPY_FRAMED),
    (b"LZ4Block", Codec.SPARK_LZ4),
    (b"\x82SNAPPY\x00", Codec.SPARK_SNAPPY),
)


def sniff_codec(head: bytes) -> Codec | None:
    """The codec of a file whose first bytes are ``head`` (at least the first 64 KiB for Hadoop's
    block streams); None: not compressed (or by nothing phaseline reads).

    >>> sniff_codec(b"BZh91AY&SY..."), sniff_codec(b"Avro-Json\\n"), sniff_codec(bytes(cramjam.zstd.compress(b"x")))
    (<Codec.BZIP2: 'bzip2'>, None, <Codec.ZSTD: 'zstd'>)
    """
    for magic, codec in _MAGICS:
        if head.startswith(magic):
            return codec
    if head[:3] == b"BZh" and head[3:4] in b"123456789" and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return Codec.BZIP2
    return _hadoop_block(head)


def _hadoop_block(head: bytes) -> Codec | None:
    if len(head) < 9:
        return None
    raw_len, chunk_len = struct.unpack_from(">II", head)
    if not 0 < raw_len <= _MAX_HADOOP_BLOCK or not 0 < chunk_len <= len(head) - 8:
        return None
    chunk = head[8 : 8 + chunk_len]
    for codec, decode in ((Codec.HADOOP_SNAPPY, _snappy_raw), (Codec.HADOOP_LZ4, _lz4_block)):
        try:
            out = decode(chunk, raw_len)
        except OSError:
            continue
        if 0 < len(out) <= raw_len:  # (a block may take several chunks)
            return codec
    return None


def _snappy_raw(chunk: bytes, limit: int) -> bytes:
    n, shift, i = 0, 0, 0  # the raw length snappy puts first (a varint): checked before any work
    while i < min(len(chunk), 5):
        n |= (chunk[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not chunk[i - 1] & 0x80:
            break
    if n > limit:
        raise OSError(f"a snappy chunk of {n:,} bytes, past its block's {limit:,}")
    try:
        return bytes(cramjam.snappy.decompress_raw(chunk))
    except cramjam.DecompressionError as exc:
        raise OSError(f"corrupt snappy chunk: {exc}") from None


def _lz4_block(chunk: bytes, limit: int) -> bytes:
    try:
        return bytes(lz4.block.decompress(chunk, uncompressed_size=limit, return_bytearray=False))
    except lz4.block.LZ4BlockError as exc:
        raise OSError(f"corrupt lz4 block: {exc}") from None


def _exactly(raw: IO[bytes], n: int, what: str) -> bytes:
    data = raw.read(n)
    if len(data) < n:
        raise EOFError(f"the stream ends inside {what}")
    return data


def _objects(raw: IO[bytes], new: Callable[[], Any], name: str) -> Iterator[bytes]:
    """Frames decompressed by ``new()`` objects (``decompress``, ``eof``, ``unused_data``), one after another."""
    d, started = new(), False
    while data := raw.read(_READ):
        while data:
            started = True
            yield bytes(d.decompress(data))
            if not d.eof:
                break
            data, d, started = bytes(d.unused_data or b""), new(), False
    if started:
        raise EOFError(f"the {name} stream ends inside a frame")


def _bzip2(raw: IO[bytes]) -> Iterator[bytes]:
    return _objects(raw, bz2.BZ2Decompressor, "bzip2")


def _zstd(raw: IO[bytes]) -> Iterator[bytes]:
    return _objects(raw, zstandard.ZstdDecompressor().decompressobj, "zstd")


def _lz4_frame(raw: IO[bytes]) -> Iterator[bytes]:
    return _objects(raw, lz4.frame.LZ4FrameDecompressor, "lz4")


def _snappy_framed(raw: IO[bytes]) -> Iterator[bytes]:
    """Google's snappy framing format: chunks of (type, 3-byte little-endian length, data)."""
    while header := raw.read(4):
        if len(header) < 4:
            raise EOFError("the snappy stream ends inside a chunk header")
        kind, size = header[0], int.from_bytes(header[1:4], "little")
        data = _exactly(raw, size, "a snappy chunk")
        if kind == 0x00:  # compressed: a 4-byte masked CRC-32C, then raw snappy
            yield _snappy_raw(data[4:], 1 << 16)
        elif kind == 0x01:  # uncompressed
            yield data[4:]
        elif kind <= 0x7F:
            raise OSError(f"a snappy chunk of reserved type {kind:#x}")
        # 0x80-0xfe: skippable (padding), 0xff: the stream identifier again (streams concatenated)


def _hadoop_blocks(raw: IO[bytes], decode: Callable[[bytes, int], bytes]) -> Iterator[bytes]:
    """Hadoop's BlockCompressorStream: per block, its raw length, then (length, chunk) until it is whole."""
    while header := raw.read(4):
        (raw_len,) = struct.unpack(">I", _exactly(raw, 4 - len(header), "a block header") if len(header) < 4
                                   else header)  # fmt: skip
        if raw_len > _MAX_HADOOP_BLOCK:
            raise OSError(f"a block of {raw_len:,} bytes: not a Hadoop block stream, or corrupt")
        done = 0
        while done < raw_len:
            (size,) = struct.unpack(">I", _exactly(raw, 4, "a chunk header"))
            out = decode(_exactly(raw, size, "a chunk"), raw_len - done)
            if not out:
                raise OSError("an empty chunk inside a block")
            done += len(out)
            yield out


def _spark_lz4(raw: IO[bytes]) -> Iterator[bytes]:
    """lz4-java's LZ4BlockOutputStream: blocks of ``LZ4Block``, token, compressed/raw length, checksum."""
    while magic := raw.read(8):
        if magic != b"LZ4Block":
            raise OSError(f"an LZ4Block stream whose next block starts {magic!r}")
        token, size, raw_len, _check = struct.unpack("<BiiI", _exactly(raw, 13, "a block header"))
        if size == 0 and raw_len == 0:
            continue  # the end mark (streams may be concatenated)
        data = _exactly(raw, size, "a block")
        yield data if token & 0xF0 == 0x10 else _lz4_block(data, raw_len)


def _spark_snappy(raw: IO[bytes]) -> Iterator[bytes]:
    """snappy-java's SnappyOutputStream: an 8-byte magic and two versions, then (length, raw snappy)."""
    _exactly(raw, 16, "the stream header")
    while header := raw.read(4):
        if header == b"\x82SNA":  # another stream concatenated
            _exactly(raw, 12, "the stream header")
            continue
        (size,) = struct.unpack(">I", _exactly(raw, 4 - len(header), "a block header") if len(header) < 4
                                else header)  # fmt: skip
        yield _snappy_raw(_exactly(raw, size, "a block"), _MAX_HADOOP_BLOCK)


_STREAMS: dict[Codec, Callable[[IO[bytes]], Iterator[bytes]]] = {
    Codec.BZIP2: _bzip2,
    Codec.ZSTD: _zstd,
    Codec.LZ4_FRAME: _lz4_frame,
    Codec.SNAPPY_FRAMED: _snappy_framed,
    Codec.SPARK_LZ4: _spark_lz4,
    Codec.SPARK_SNAPPY: _spark_snappy,
    Codec.HADOOP_SNAPPY: lambda raw: _hadoop_blocks(raw, _snappy_raw),
    Codec.HADOOP_LZ4: lambda raw: _hadoop_blocks(raw, _lz4_block),
}


class ChunkStream(io.RawIOBase):
    """An iterator of byte chunks as a raw stream (``io.BufferedReader`` reads it); closing it closes
    the iterator (a generator's ``with`` blocks end) and ``source``, the stream the chunks come from."""

    def __init__(self, chunks: Iterator[bytes], source: IO[bytes] | None = None) -> None:
        self._chunks = chunks
        self._source = source
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def _next(self) -> bytes | None:
        return next(self._chunks, None)

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            chunk = self._next()
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        if self._source is not None:
            self._source.close()
        super().close()


class _Decompressed(ChunkStream):
    """The decompressed bytes of ``raw`` as a raw stream (codec errors as ``OSError``, a cut as ``EOFError``)."""

    def __init__(self, raw: IO[bytes], codec: Codec) -> None:
        super().__init__(_STREAMS[codec](raw), raw)
        self._codec = codec

    def _next(self) -> bytes | None:
        try:
            return super()._next()
        except (EOFError, OSError):
            raise
        except (zstandard.ZstdError, RuntimeError, ValueError, cramjam.DecompressionError) as exc:
            raise OSError(f"corrupt {self._codec} stream: {exc}") from None


def kept_until_damage(pieces: Iterator[bytes], *, after: int = 1) -> Iterator[bytes]:
    """``pieces``, where damage (``OSError``) once ``after`` pieces were given ends them as a cut
    (``EOFError``): what came before it lands (the file as partial, the damage named), as before a cut."""
    given = 0
    try:
        for piece in pieces:
            given += 1
            yield piece
    except OSError as exc:
        if given < after:
            raise
        raise EOFError(f"damaged, what follows unread: {exc}") from None


def decompressed(raw: IO[bytes], codec: Codec) -> IO[bytes]:
    """A buffered stream of ``raw``'s decompressed bytes (``raw`` is closed with it); not for gzip,
    which :func:`ingest.opening.open_binary` reads with :mod:`gzip`."""
    return io.BufferedReader(_Decompressed(raw, codec), _READ)
