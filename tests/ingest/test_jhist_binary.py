"""Binary job history (Hadoop 3's default, ``Avro-Binary``) read as the JSON flavour is.

Two oracles: Hadoop's own JobHistoryParser on the binary files Hadoop 3.5 wrote
(``tests/data/yarn/binary-history``, README there), and the JSON fixtures re-encoded as binary
with fastavro against their own schema line, which must give the rows their JSON gives.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from oracle_util import actual_from_phaseline, expected_from_hadoop, hadoop_parse, phaseline_rows

from ingest.base import ReadContext
from ingest.formats import detect
from ingest.jhist import read_jhist
from ingest.opening import open_binary, read_head
from ingest.pipeline import ingest_paths
from phaseline.errors import TraceParseError
from phaseline.store import Store

BINARY = Path(__file__).parents[1] / "data" / "yarn" / "binary-history"
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from jhist_inputs import write_binary_history  # noqa: E402 - benchmarks/ is a script directory, not a package


def _binary_files() -> list[Path]:
    files = sorted(BINARY.glob("*.jhist"))
    assert len(files) == 2
    return files


def _rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    tables: dict[str, list[dict[str, Any]]] = phaseline_rows(path)[0]
    for row in tables.get("events", []):  # (in file order, as compared)
        row.pop("payload_json")  # a binary file's is the rendering of its datum,
        row.pop("seq")  # its line number that of the rendering (no blank lines between events)
    return tables


def test_a_binary_history_is_detected_and_read_as_its_json_lines() -> None:
    path = _binary_files()[0]
    assert path.read_bytes().startswith(b"Avro-Binary\n{")
    head = read_head(path)
    assert head.startswith(b"Avro-Json\n{")
    fmt = detect(path, head)
    assert fmt is not None
    assert fmt.name == "jhist"
    with open_binary(path) as fh:
        lines = fh.read().splitlines()
    assert len(lines) == 2 + 18
    first = orjson.loads(lines[2])
    assert first["type"] == "AM_STARTED"
    assert list(first["event"]) == ["org.apache.hadoop.mapreduce.jobhistory.AMStarted"]


def test_json_fixtures_written_as_binary_give_the_same_rows(fixtures_dir: Path, tmp_path: Path) -> None:
    compared = 0
    for path in sorted(fixtures_dir.rglob("*.jhist")):
        binary = write_binary_history(path, tmp_path / path.name)
        if binary is None:
            continue
        assert _rows(binary) == _rows(path), path.name
        compared += 1
    assert compared >= 6


@pytest.mark.slow
def test_hadoops_binary_histories_equal_hadoops_own_parse() -> None:
    files = _binary_files()
    hadoop = hadoop_parse(files)
    for path in files:
        h = hadoop[str(path)]
        assert h.get("fatal") is None, h
        assert h["parse_exception"] is None, h
        tables, cut, _ctx = phaseline_rows(path)
        assert cut is None
        expected, actual = expected_from_hadoop(path, h), actual_from_phaseline(tables)
        for key in ("jobs", "tasks", "attempts", "counters"):
            assert actual[key] == expected[key], (path.name, key)
        assert len(actual["attempts"]) >= 3


def test_a_binary_history_cut_short_keeps_every_event_before_the_cut(tmp_path: Path) -> None:
    path = _binary_files()[1]
    data = path.read_bytes()
    whole, _, _ = phaseline_rows(path)
    cut = tmp_path / path.name
    cut.write_bytes(data[: len(data) * 2 // 3])
    tables, truncated, _ctx = phaseline_rows(cut)
    assert truncated is not None
    assert "cut short" in str(truncated)
    assert 0 < len(tables["events"]) < len(whole["events"])
    result = ingest_paths([cut], Store(tmp_path / "store")).results[0]
    assert result.status == "partial", result


def test_a_binary_history_with_no_schema_is_refused_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "x.jhist"
    path.write_bytes(b"Avro-Binary\nnot a schema\n\x02\x04")
    with pytest.raises(TraceParseError, match="no Avro schema"):
        list(read_jhist(path, ReadContext(path)))
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "quarantined"
    assert "no Avro schema" in (result.error or "")


def test_a_compressed_binary_history_reads_as_the_plain_one(tmp_path: Path) -> None:
    import gzip

    import zstandard

    path = _binary_files()[1]
    plain = _rows(path)
    for name, data in (("x.jhist.gz", gzip.compress(path.read_bytes())),
                       ("x.jhist.zst", zstandard.ZstdCompressor().compress(path.read_bytes()))):  # fmt: skip
        packed = tmp_path / name
        packed.write_bytes(data)
        assert _rows(packed) == plain, name


def test_only_a_plain_json_history_is_read_in_ranges(tmp_path: Path) -> None:
    import gzip

    from ingest.plan import read_in_ranges

    json_history = tmp_path / "plain.jhist"
    json_history.write_bytes(next(p for p in sorted(BINARY.parent.parent.rglob("*.jhist"))
                                  if p.read_bytes().startswith(b"Avro-Json")).read_bytes())  # fmt: skip
    packed = tmp_path / "plain.jhist.gz"
    packed.write_bytes(gzip.compress(json_history.read_bytes()))
    assert read_in_ranges(json_history, 1)
    # a byte range of these has no line to start at: their bytes are not the lines the reader reads
    assert not read_in_ranges(packed, 1)
    assert not read_in_ranges(_binary_files()[0], 1)
