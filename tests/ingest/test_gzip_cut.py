"""Real gzipped traces cut short: every record before the cut lands, and the file lands as partial.

A gzip stream cut mid-way raises ``EOFError`` in :mod:`gzip` at the cut; the text and
buffer layers above it dropped the chunk they had gathered, and the 0.20 history reader
had quarantined the whole file (3 complete jobs in the first 15 kB of the compressed
JobTracker log were lost; a Rumen trace cut at 50 kB kept none of its 5 complete jobs).
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from tests.conftest import FIXTURES

JT_LOGS = FIXTURES / "apache-hadoop-mapreduce" / "rumen-small-trace-test" / "sample-job-tracker-logs.gz"
MUMAK = next(FIXTURES.rglob("19-jobs.trace.json.gz"), None)


def _cut(src: Path, n: int, target: Path) -> tuple[Path, str]:
    """``src``'s first ``n`` compressed bytes at ``target``, and the text they decompress to."""
    data = src.read_bytes()[:n]
    target.write_bytes(data)
    text = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data).decode("utf-8", "replace")
    return target, text


def _count(store: Store, sql: str) -> int:
    row = store.connect().execute(sql).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("n", [15_000, 25_000])
def test_a_cut_gzipped_job_tracker_log_keeps_what_its_plain_prefix_keeps(tmp_path: Path, n: int) -> None:
    cut, text = _cut(JT_LOGS, n, tmp_path / "jt.gz")
    # the same content, uncompressed: the complete lines before the cut
    plain = tmp_path / "plain" / "jt.log"
    plain.parent.mkdir()
    plain.write_text(text[: text.rindex("\n") + 1], encoding="utf-8")
    stores = {}
    for name, path in (("gz", cut), ("plain", plain)):
        store = Store(tmp_path / f"store-{name}")
        (result,) = ingest_paths([path], store).results
        stores[name] = (store, result)
    gz_store, gz_result = stores["gz"]
    plain_store, plain_result = stores["plain"]
    assert gz_result.status == "partial"
    assert "compressed stream ends early" in (gz_result.error or "")
    assert gz_result.events_read == plain_result.events_read > 0
    assert gz_result.rows == plain_result.rows
    assert _count(gz_store, "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'") >= 1
    for table in ("jobs", "tasks", "attempts", "counters"):
        sql = f"SELECT count(*) FROM {table}"
        assert _count(gz_store, sql) == _count(plain_store, sql), table


@pytest.mark.skipif(MUMAK is None, reason="the mumak trace is not among the fixtures")
@pytest.mark.parametrize("n", [50_000, 120_000])
def test_a_cut_gzipped_rumen_trace_keeps_every_complete_job(tmp_path: Path, n: int) -> None:
    assert MUMAK is not None
    cut, text = _cut(MUMAK, n, tmp_path / "trace.json.gz")
    decoder, pos, complete = json.JSONDecoder(), 0, 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        try:
            _, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        complete += 1
    assert complete >= 1
    store = Store(tmp_path / "store")
    (result,) = ingest_paths([cut], store).results
    assert result.status == "partial", result.error
    # every complete job, and the one the cut broke off inside its task lists (with its tasks before the cut)
    salvaged = sum("was cut short inside its task lists" in note for note in result.notes)
    assert salvaged == ('"mapTasks"' in text[pos:])
    assert _count(store, "SELECT count(*) FROM raw.jobs") == complete + salvaged


def test_a_cut_too_short_to_sniff_whole_is_still_recognised(tmp_path: Path) -> None:
    # the first 500 bytes of compressed log decompress to less than the 8 kB a sniff reads
    cut, text = _cut(JT_LOGS, 500, tmp_path / "jt.gz")
    assert 0 < len(text.encode()) < 8192
    (result,) = ingest_paths([cut], Store(tmp_path / "store")).results
    assert result.format == "history_v1"
    assert result.status == "partial", result.error
