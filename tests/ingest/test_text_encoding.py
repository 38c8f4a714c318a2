"""Traces that start with a byte-order mark read as the file without it (:mod:`ingest.text_encoding`).

Copies of real fixtures of every text format, re-encoded here as a Windows editor, a spreadsheet's CSV
export or PowerShell 5's ``>`` redirect writes them: UTF-8 with a mark, UTF-16LE and UTF-16BE with one
(and a gzipped copy of the UTF-8 one).  Before the rule was one (2026-11-30), a UTF-8 mark left
properties, ``yarn logs`` output and HiTune CSVs unrecognised ("not a trace") and cost 1.x histories
their first record.
"""

from __future__ import annotations

import codecs
import gzip
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from ingest.base import ReadContext, iter_rows
from ingest.formats import detect
from ingest.opening import open_binary, read_head
from ingest.text_encoding import bom_encoding, past_bom
from tests.conftest import FIXTURES

#: One real file of each text format a mark can stand before (name patterns under tests/data/fixtures).
SOURCES = (
    "mapperTaskCounter1.properties",
    "application_1756057717712_0001.yarn-logs.txt.gz",
    "instruments_map.csv",
    "JobHistory.log",
    "job_1526555215992_0001_conf.xml",
    "job_1526555215992_0001-*.jhist",
)


def _plain(pattern: str) -> bytes:
    path = next(FIXTURES.rglob(pattern))
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


ENCODINGS: dict[str, Callable[[bytes], bytes]] = {
    "utf-8-bom": lambda d: codecs.BOM_UTF8 + d,
    "utf-16le-bom": lambda d: codecs.BOM_UTF16_LE + d.decode("utf-8").encode("utf-16-le"),
    "utf-16be-bom": lambda d: codecs.BOM_UTF16_BE + d.decode("utf-8").encode("utf-16-be"),
    "gzip-utf-8-bom": lambda d: gzip.compress(codecs.BOM_UTF8 + d, mtime=0),
}


def _rows(path: Path) -> tuple[str, list[tuple[str, dict[str, object]]], str | None]:
    fmt = detect(path, read_head(path))
    assert fmt is not None, f"{path.name}: no reader claims it"
    ctx = ReadContext(path)
    rows = [(r.table, r.as_dict()) for r in iter_rows(fmt.read(path, ctx))]
    return fmt.name, rows, None if ctx.cut is None else ctx.cut.message


def _own(value: object, path: Path) -> object:
    """A value with what names the file itself taken out: its path (a conf's JobConf event records it), and
    the job id a properties file without one is given from its bytes' hash (``props_<hash>``)."""
    if not isinstance(value, str):
        return value
    return "props_<hash>" if value.startswith("props_") else value.replace(str(path), "<path>")


def _without_path(rows: list[tuple[str, dict[str, object]]], path: Path) -> list[tuple[str, dict[str, object]]]:
    return [(t, {k: _own(v, path) for k, v in r.items()}) for t, r in rows]


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("pattern", SOURCES)
def test_marked_copy_reads_as_the_plain_file(pattern: str, encoding: str, tmp_path: Path) -> None:
    plain = _plain(pattern)
    name = pattern.replace("*", "x").removesuffix(".gz")
    (tmp_path / "plain").mkdir()
    (tmp_path / "marked").mkdir()
    original, marked = tmp_path / "plain" / name, tmp_path / "marked" / name
    original.write_bytes(plain)
    marked.write_bytes(ENCODINGS[encoding](plain))
    fmt, rows, cut = _rows(original)
    assert rows, "the plain file gave no rows"
    marked_fmt, marked_rows, marked_cut = _rows(marked)
    assert (marked_fmt, marked_cut) == (fmt, cut)
    assert _without_path(marked_rows, marked) == _without_path(rows, original)


def test_a_utf8_mark_is_read_past_in_the_file_itself(tmp_path: Path) -> None:
    path = tmp_path / "conf.properties"
    path.write_bytes(codecs.BOM_UTF8 + b"a=1\n")
    with open_binary(path) as fh:
        assert isinstance(fh.raw, io.FileIO)  # type: ignore[attr-defined]  # no copy: offsets stay the file's
        assert fh.tell() == 3
        assert fh.read() == b"a=1\n"
    assert read_head(path) == b"a=1\n"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_text_comes_out_as_utf8(encoding: str) -> None:
    text = "task,cpu\nmap,1.5 \u00e9\n" * 10_000  # several of the transcoder's chunks, a character beyond ASCII
    mark = bom_encoding(codecs.lookup(encoding).encode("\ufeff")[0])
    assert mark is not None
    assert mark[1] == encoding  # UTF-32LE's mark begins with UTF-16LE's: the longer wins
    stream = past_bom(io.BufferedReader(io.BytesIO(mark[0] + text.encode(encoding))))  # type: ignore[arg-type]
    assert stream.read() == text.encode("utf-8")


def test_undecodable_utf16_becomes_replacement_characters() -> None:
    odd = codecs.BOM_UTF16_LE + "ab".encode("utf-16-le") + b"\x00\xd8" + "c".encode("utf-16-le")  # a lone surrogate
    assert past_bom(io.BufferedReader(io.BytesIO(odd))).read().decode("utf-8") == "ab\ufffdc"  # type: ignore[arg-type]


def test_text_without_a_mark_is_the_stream_itself() -> None:
    stream = io.BufferedReader(io.BytesIO(b"Avro-Json\n"))  # type: ignore[arg-type]
    assert past_bom(stream) is stream
    assert stream.read() == b"Avro-Json\n"
    assert bom_encoding(b"\xef\xbb") is None  # a mark cut short is no mark
