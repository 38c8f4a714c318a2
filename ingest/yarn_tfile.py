"""YARN's aggregated container logs as a NodeManager uploads them (a TFile per node and application),
read as the ``yarn logs`` output of that node's containers, which :mod:`ingest.yarn_logs` reads.

Where log aggregation is on, each NodeManager writes an application's container logs to one file
under ``yarn.nodemanager.remote-app-log-dir`` (``<dir>/<user>/bucket-logs-tfile/<nnnn>/<app>/<host>_<port>``
in Hadoop 3, ``<dir>/<user>/logs/<app>/<host>_<port>`` before), and ``yarn logs -applicationId``
prints them.  A user who copies these files (``hdfs dfs -get``) instead of that output ingests them
as they are: :func:`rendered` gives the bytes ``yarn logs`` would print for the file (the layout of
Hadoop 3's ``LogToolUtils``: one frame per container and log file, the node named by the file's
name and the time by the file's modification time), so the one reader of that layout reads both.

The file is Hadoop's TFile in a BCFile container (``org.apache.hadoop.io.file.tfile``)::

    magic (16 bytes) | data blocks | meta blocks | meta index | int64 offset of the meta index
    | version (int16 major, int16 minor) | magic

The meta index names each meta block with its compression and region (offset, stored size, raw
size); ``BCFile.index`` lists the data blocks' regions and their compression (the NodeManager's
``yarn.nodemanager.log-aggregation.compression-type``: ``none``, ``gz``, which is a zlib stream,
``snappy`` or ``zstd``; ``lzo`` is refused).  A data block is a run of entries: a key (a VInt
length and its bytes) and a value in chunks (a VInt ``-n`` before ``n`` bytes with more to come,
``n`` before the last ``n``).  The keys of an aggregated log (``AggregatedLogFormat``) are Java
``writeUTF`` strings: ``VERSION``, ``APPLICATION_ACL`` and ``APPLICATION_OWNER``, then one key per
container, its id; a container's value holds, per log file, its name and its length (``writeUTF``
of the decimal) and then its bytes.  Numbers are TFile's VInt/VLong (``Utils.readVLong``).

A file whose trailer is missing (an upload cut short) is read from its first block on, as far as
its entries are whole, and ends with ``EOFError`` (the ingest keeps every container before the cut
and lands the file as partial).  Memory stays bounded: log bytes are handed on in pieces of
:data:`_PIECE`.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ingest.compression import ChunkStream, Codec, decompressed, kept_until_damage
from ingest.yarn_log_frames import frame_end, frame_head, log_time

#: The BCFile magic, at the start and at the end of every TFile.
MAGIC = bytes.fromhex("d111d36891b5d7b639df414092bae150")
#: int64 meta-index offset, two int16 version numbers, the magic.
_TRAILER = 8 + 4 + len(MAGIC)
_DATA_INDEX = "data:BCFile.index"
#: The keys AggregatedLogFormat writes before the containers'.
_RESERVED_KEYS = frozenset(("VERSION", "APPLICATION_ACL", "APPLICATION_OWNER"))
_PIECE = 1 << 20
_INFLATE_STEP = 1 << 12
_READ = 1 << 18


def is_tfile(head: bytes) -> bool:
    """A BCFile/TFile: it starts with the BCFile magic."""
    return head.startswith(MAGIC)


class _Bytes:
    """Sequential reads from an iterator of byte chunks (a block's bytes); ``EOFError`` past its end."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._buf = b""
        self._pos = 0

    def _fill(self) -> bool:
        while self._pos >= len(self._buf):
            chunk = next(self._chunks, None)
            if chunk is None:
                return False
            self._buf, self._pos = chunk, 0
        return True

    def at_end(self) -> bool:
        return not self._fill()

    def take(self, n: int) -> Iterator[bytes]:
        """The next ``n`` bytes, in the pieces they come in."""
        while n > 0:
            if not self._fill():
                raise EOFError(f"{n:,} bytes short")
            piece = self._buf[self._pos : self._pos + n]
            self._pos += len(piece)
            n -= len(piece)
            yield piece

    def read(self, n: int) -> bytes:
        return b"".join(self.take(n))

    def vlong(self) -> int:
        """TFile's variable-length integer (``Utils.readVLong``)."""
        first: int = struct.unpack(">b", self.read(1))[0]
        if first >= -32:
            return first
        kind = (first + 128) // 8
        if kind >= 7:
            return ((first + 52) << 8) | self.read(1)[0]
        if kind >= 3:
            return ((first + 88) << 16) | int.from_bytes(self.read(2), "big")
        if kind >= 1:
            return ((first + 112) << 24) | int.from_bytes(self.read(3), "big")
        return int.from_bytes(self.read(first + 129), "big", signed=True)

    def string(self) -> str:
        """``Utils.readString``: a VInt length (-1: null) and that many UTF-8 bytes."""
        n = self.vlong()
        return "" if n < 0 else self.read(n).decode("utf-8", "replace")


class _Value:
    """The chunks of one TFile value as one stream (``Chunk.ChunkDecoder``)."""

    def __init__(self, block: _Bytes) -> None:
        self._block = block
        self._remain = 0
        self._last = False

    def _next_chunk(self) -> bool:
        while self._remain == 0:
            if self._last:
                return False
            n = self._block.vlong()
            self._last, self._remain = n >= 0, abs(n)
        return True

    def take(self, n: int) -> Iterator[bytes]:
        while n > 0:
            if not self._next_chunk():
                raise EOFError(f"a value ends {n:,} bytes short")
            step = min(n, self._remain, _PIECE)
            yield from self._block.take(step)
            self._remain -= step
            n -= step

    def read(self, n: int) -> bytes:
        return b"".join(self.take(n))

    def utf(self) -> str | None:
        """Java's ``writeUTF``: an unsigned int16 length and modified UTF-8; ``None`` at the value's end."""
        if not self._next_chunk():
            return None
        return self.read(struct.unpack(">H", self.read(2))[0]).decode("utf-8", "replace")

    def skip_rest(self) -> None:
        while self._next_chunk():
            for _ in self.take(self._remain):
                pass


def _region(fh: IO[bytes], offset: int, size: int) -> Iterator[bytes]:
    fh.seek(offset)
    while size > 0:
        piece = fh.read(min(size, _READ))
        if not piece:
            raise EOFError(f"the file ends inside a block ({size:,} bytes short)")
        size -= len(piece)
        yield piece


def _zlib(chunks: Iterator[bytes], *, blocks: bool = False) -> Iterator[bytes]:
    """TFile's ``gz``: Hadoop's DefaultCodec, a zlib stream (with ``blocks``, one after another).

    It is fed :data:`_INFLATE_STEP` bytes at a time, so that damage keeps the output before it.
    """
    inflate = zlib.decompressobj()
    for piece in chunks:
        for at in range(0, len(piece), _INFLATE_STEP):
            chunk = piece[at : at + _INFLATE_STEP]
            while chunk:
                if inflate.eof:
                    if not blocks:
                        break
                    inflate = zlib.decompressobj()
                try:
                    out = inflate.decompress(chunk)
                except zlib.error as exc:
                    raise OSError(f"corrupt gz (zlib) data: {exc}") from None
                chunk = inflate.unused_data
                if out:
                    yield out
    if not inflate.eof:
        raise EOFError("a gz block ends inside its zlib stream")


def _is_zlib(head: bytes) -> bool:
    return len(head) == 2 and head[0] & 0x0F == 8 and int.from_bytes(head, "big") % 31 == 0


def _through(stream: IO[bytes]) -> Iterator[bytes]:
    while piece := stream.read(_READ):
        yield piece


_CODECS = {"snappy": Codec.HADOOP_SNAPPY, "zstd": Codec.ZSTD, "lz4": Codec.HADOOP_LZ4}


def stored_bytes(fh: IO[bytes], algorithm: str, offset: int, size: int) -> Iterator[bytes]:
    """The ``size`` bytes at ``offset``, decompressed by Hadoop's ``Compression.Algorithm`` named
    ``algorithm`` (as TFile blocks and indexed-format logs are stored)."""
    raw = _region(fh, offset, size)
    if algorithm == "none":
        return raw
    if algorithm == "gz":
        return _zlib(raw)
    if algorithm in _CODECS:
        return _through(decompressed(io.BufferedReader(ChunkStream(raw)), _CODECS[algorithm]))
    raise OSError(f"aggregated logs compressed with {algorithm!r}, which phaseline cannot read "
                  "(run `yarn logs -applicationId <app>` and ingest its output)")  # fmt: skip


def _block(fh: IO[bytes], algorithm: str, offset: int, size: int) -> _Bytes:
    return _Bytes(stored_bytes(fh, algorithm, offset, size))


def _trailer(fh: IO[bytes], size: int) -> int | None:
    """The meta index's offset, or ``None`` when the file does not end with a BCFile trailer."""
    if size < len(MAGIC) + _TRAILER:
        return None
    fh.seek(size - _TRAILER)
    tail = fh.read(_TRAILER)
    if tail[-len(MAGIC) :] != MAGIC:
        return None
    offset: int = struct.unpack(">q", tail[:8])[0]
    return offset if len(MAGIC) <= offset < size - _TRAILER else None


def _data_blocks(fh: IO[bytes], meta_offset: int, size: int) -> list[tuple[str, int, int]]:
    """``(compression, offset, stored size)`` of each data block, from the meta index and ``BCFile.index``."""
    meta = _Bytes(_region(fh, meta_offset, size - _TRAILER - meta_offset))
    index: tuple[str, int, int] | None = None
    for _ in range(meta.vlong()):
        name, algorithm = meta.string(), meta.string()
        offset, stored, _raw = meta.vlong(), meta.vlong(), meta.vlong()
        if name == _DATA_INDEX:
            index = (algorithm, offset, stored)
    if index is None:
        raise OSError(f"corrupt TFile: its meta index has no {_DATA_INDEX}")
    data_index = _block(fh, *index)
    algorithm = data_index.string()
    blocks = []
    for _ in range(data_index.vlong()):
        offset, stored, _raw = data_index.vlong(), data_index.vlong(), data_index.vlong()
        blocks.append((algorithm, offset, stored))
    return blocks


def _container_frames(container: str, node: str, mtime: str, value: _Value) -> Iterator[bytes]:
    """One container's log files framed as ``yarn logs`` prints them (Hadoop 3's ``LogToolUtils``)."""
    while (name := value.utf()) is not None:
        length_text = value.utf()
        try:
            length = int(length_text or "")
        except ValueError:
            raise OSError(f"corrupt aggregated log: container {container}'s {name} has length {length_text!r}") from None
        yield frame_head(container, node, name, mtime, length)
        yield from value.take(length)
        yield frame_end(name)


def _entries(block: _Bytes, node: str, mtime: str) -> Iterator[bytes]:
    while not block.at_end():
        key = block.read(block.vlong())  # a LogKey: writeUTF of the name
        name = key[2 : 2 + int.from_bytes(key[:2], "big")].decode("utf-8", "replace")
        value = _Value(block)
        if name in _RESERVED_KEYS:
            value.skip_rest()
        elif name.startswith("container_"):
            yield from _container_frames(name, node, mtime, value)
        else:
            raise OSError(f"a TFile whose key {name[:60]!r} is no container of YARN's aggregated logs")


def rendered(path: Path) -> Iterator[bytes]:
    """The ``yarn logs`` output of the aggregated-log TFile at ``path``, a piece at a time.

    Raises ``OSError`` for a file that is not one (or whose start is damaged), ``EOFError`` where it
    was cut short or damaged later (after every piece before the cut or damage).
    """
    stat = path.stat()
    mtime = log_time(int(stat.st_mtime * 1000))
    node = path.name
    yield from kept_until_damage(_checked(path, node, mtime, stat.st_size))


def _checked(path: Path, node: str, mtime: str, size: int) -> Iterator[bytes]:
    try:
        yield from _rendered(path, node, mtime, size)
    except (zlib.error, struct.error, ValueError, IndexError, OverflowError) as exc:
        raise OSError(f"corrupt TFile: {exc}") from None


def _rendered(path: Path, node: str, mtime: str, size: int) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        meta_offset = _trailer(fh, size)
        if meta_offset is None:  # cut short: its blocks from the first on, as far as they are whole
            blocks = _region(fh, len(MAGIC), size - len(MAGIC))
            fh.seek(len(MAGIC))
            if _is_zlib(fh.read(2)):
                blocks = _zlib(blocks, blocks=True)
            try:
                yield from _entries(_Bytes(blocks), node, mtime)
            except EOFError as exc:
                raise EOFError(f"the TFile has no trailer (its upload was cut short): {exc}") from None
            raise EOFError("the TFile has no trailer (its upload was cut short)")
        try:
            for block in _data_blocks(fh, meta_offset, size):
                yield from _entries(_block(fh, *block), node, mtime)
        except EOFError as exc:  # a whole file (its trailer is there) whose blocks or values do not add up
            raise OSError(f"corrupt TFile: {exc}") from None


def open_rendered(path: Path) -> io.BufferedReader:
    """:func:`rendered` as a buffered stream."""
    return io.BufferedReader(ChunkStream(rendered(path)), _READ)
