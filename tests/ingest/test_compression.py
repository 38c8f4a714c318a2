"""Compressed traces: each codec Hadoop and Spark write is told from content and read like the plain file.

The compressed copies are made here from real fixtures: gzip, bzip2, zstd and
lz4 frames and the snappy framing format with their libraries' own writers;
Hadoop's block streams (``SnappyCodec`` / ``Lz4Codec`` through
``BlockCompressorStream``: per block the big-endian raw length, then
big-endian chunk length + raw snappy or lz4 block) and Spark's streams
(lz4-java ``LZ4BlockOutputStream``: ``LZ4Block``, a token, little-endian
compressed and raw lengths and a checksum per block; snappy-java
``SnappyOutputStream``: ``\\x82SNAPPY\\x00``, two big-endian versions, then
big-endian length + raw snappy per block) laid out as those classes write
them, with the libraries compressing each block.
"""

from __future__ import annotations

import bz2
import gzip
import struct
from collections.abc import Callable
from pathlib import Path

import cramjam
import lz4.block  # type: ignore[import-untyped]
import lz4.frame  # type: ignore[import-untyped]
import pytest
import zstandard

from ingest.base import ReadContext, iter_rows
from ingest.compression import Codec, sniff_codec
from ingest.formats import detect
from ingest.opening import read_head
from ingest.pipeline import ingest_paths
from phaseline.store import Store
from tests.conftest import FIXTURES

BLOCK = 1 << 16  # small blocks, so that a fixture spans several


def _blocks(data: bytes) -> list[bytes]:
    return [data[i : i + BLOCK] for i in range(0, len(data), BLOCK)]


def _hadoop(compress: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    def write(data: bytes) -> bytes:
        out = b""
        for block in _blocks(data):
            chunk = compress(block)
            out += struct.pack(">II", len(block), len(chunk)) + chunk
        return out

    return write


def _spark_lz4(data: bytes) -> bytes:
    out = b""
    for block in _blocks(data):
        chunk = lz4.block.compress(block, store_size=False)
        out += b"LZ4Block" + struct.pack("<BiiI", 0x20 | 0x0C, len(chunk), len(block), 0) + chunk
    return out + b"LZ4Block" + struct.pack("<BiiI", 0x10, 0, 0, 0)


def _spark_snappy(data: bytes) -> bytes:
    out = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    for block in _blocks(data):
        chunk = bytes(cramjam.snappy.compress_raw(block))
        out += struct.pack(">I", len(chunk)) + chunk
    return out


def _snappy_raw(block: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(block))


def _lz4_raw(block: bytes) -> bytes:
    return bytes(lz4.block.compress(block, store_size=False))


WRITERS: dict[Codec, Callable[[bytes], bytes]] = {
    Codec.GZIP: lambda d: gzip.compress(d, mtime=0),
    Codec.BZIP2: bz2.compress,
    Codec.ZSTD: lambda d: zstandard.ZstdCompressor().compress(d),
    Codec.LZ4_FRAME: lz4.frame.compress,
    Codec.SNAPPY_FRAMED: lambda d: bytes(cramjam.snappy.compress(d)),
    Codec.SPARK_LZ4: _spark_lz4,
    Codec.SPARK_SNAPPY: _spark_snappy,
    Codec.HADOOP_SNAPPY: _hadoop(_snappy_raw),
    Codec.HADOOP_LZ4: _hadoop(_lz4_raw),
}
JHIST = next(FIXTURES.rglob("job_1526555215992_0001-*.jhist"))
YARN_LOGS_BIG = next(FIXTURES.rglob("application_1756057717712_0002.yarn-logs.txt.gz"))
YARN_LOGS = next(FIXTURES.rglob("application_1756057717712_0001.yarn-logs.txt.gz"))


def _rows(path: Path) -> tuple[str | None, list[tuple[str, dict[str, object]]]]:
    fmt = detect(path, read_head(path))
    assert fmt is not None
    ctx = ReadContext(path)
    return fmt.name, [(r.table, r.as_dict()) for r in iter_rows(fmt.read(path, ctx))]


@pytest.mark.parametrize("codec", list(WRITERS), ids=str)
@pytest.mark.parametrize("source", [JHIST, YARN_LOGS], ids=lambda p: p.name)
def test_compressed_copy_reads_as_the_plain_file(codec: Codec, source: Path, tmp_path: Path) -> None:
    plain = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
    (tmp_path / "plain").write_bytes(plain)
    packed = WRITERS[codec](plain)
    assert sniff_codec(packed[: 1 << 20]) is codec
    (tmp_path / "packed").write_bytes(packed)
    expected = _rows(tmp_path / "plain")
    assert expected[1], "the plain file gave no rows"
    assert _rows(tmp_path / "packed") == expected


@pytest.mark.parametrize("codec", [c for c in WRITERS if c is not Codec.GZIP], ids=str)
def test_stream_cut_short_lands_what_came_before(codec: Codec, tmp_path: Path) -> None:
    packed = WRITERS[codec](gzip.decompress(YARN_LOGS_BIG.read_bytes()))  # 3.4 MB: several blocks of any codec
    cut = tmp_path / "cut.log"
    cut.write_bytes(packed[: len(packed) * 2 // 3])
    summary = ingest_paths([cut], Store(tmp_path / "store"))
    (result,) = summary.results
    assert (result.status, result.format) == ("partial", "yarn-aggregated-logs"), result.error
    assert "compressed stream ends early" in (result.error or "")
    assert result.rows_written > 0


def test_text_and_binary_that_is_no_codec_are_not_taken_for_one() -> None:
    assert sniff_codec(b"2026-11-28 18:00:00,000 INFO a log line\n") is None
    assert sniff_codec(b"Avro-Json\n{") is None
    assert sniff_codec(struct.pack(">II", 100, 4) + b"\x00\x01\x02\x03") is None  # header, no valid chunk
    assert sniff_codec(b"BZh9 not bzip2") is None
