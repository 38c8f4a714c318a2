"""Spark event logs are recognised and skipped with a reason; nothing else is claimed by those sniffers."""

from __future__ import annotations

import zipfile
from pathlib import Path

from reader_checks import parse_error

from ingest.base import ReadContext
from ingest.formats import detect
from ingest.opening import read_head
from ingest.pipeline import ingest_paths
from ingest.skipped import (
    SPARK_REASON,
    read_spark_event_log,
    read_zipped_spark_event_log,
    sniff_spark_event_log,
    sniff_zipped_spark_event_log,
)
from phaseline.store import Store

SPARK_DIRS = (
    "apache-spark",
    "groupon-sparklint",
    "qubole-sparklens",
    "linkedin-dr-elephant/spark_event_logs",
)


def all_fixtures(fixtures: Path) -> list[Path]:
    return sorted(
        p for p in fixtures.rglob("*") if p.is_file() and p.name not in ("MANIFEST.tsv", "SOURCES.md")
    )


def is_spark_fixture(rel: str) -> bool:
    return rel.startswith(SPARK_DIRS) or rel == "linkedin-dr-elephant/derived-hand-made/event_log_2"


def test_spark_sniffers_claim_exactly_the_spark_logs(fixtures_dir: Path) -> None:
    claimed = []
    for path in all_fixtures(fixtures_dir):
        head = read_head(path)
        rel = str(path.relative_to(fixtures_dir))
        if sniff_spark_event_log(head, path) or sniff_zipped_spark_event_log(head, path):
            claimed.append(rel)
            assert is_spark_fixture(rel), rel
    # every Spark log except the two empty marker files of the legacy directory layout
    assert len(claimed) == 15
    assert "groupon-sparklint/history_source/eventLogs-application_1489705648216_1600.zip" in claimed


def test_detected_as_not_landed(fixtures_dir: Path) -> None:
    for rel, name in [
        ("apache-spark/spark-events/local-1426633911242", "spark_event_log"),
        ("qubole-sparklens/local-1532512550423", "spark_event_log"),
        (
            "groupon-sparklint/history_source/eventLogs-application_1489705648216_1600.zip",
            "spark_event_log_zip",
        ),
    ]:
        fmt = detect(fixtures_dir / rel)
        assert fmt is not None
        assert (fmt.name, fmt.landed) == (name, False)
        assert "not a MapReduce trace" in fmt.doc


def test_reader_checks_and_counts_without_landing(fixtures_dir: Path) -> None:
    path = fixtures_dir / "groupon-sparklint/spark_event_log_example"
    ctx = ReadContext(path)
    assert list(read_spark_event_log(path, ctx)) == []
    lines = [x for x in path.read_text().splitlines() if x.strip()]
    assert ctx.events_read == len(lines) > 0
    assert ctx.unknown["SparkListenerApplicationStart"] == 1
    assert any(SPARK_REASON in note for note in ctx.notes)
    zipped = fixtures_dir / "groupon-sparklint/history_source/eventLogs-application_1489705648216_1600.zip"
    zctx = ReadContext(zipped)
    assert list(read_zipped_spark_event_log(zipped, zctx)) == []
    assert zctx.events_read == 1


def test_broken_spark_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "app-1"
    path.write_text('{"Event":"SparkListenerLogStart","Spark Version":"2.4.0"}\n{"Event": oops\n')
    parse_error(read_spark_event_log, path, 2)


def test_not_fooled_by_other_zips_or_json(tmp_path: Path) -> None:
    other = tmp_path / "x.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("notes.txt", "hello")
    assert not sniff_zipped_spark_event_log(read_head(other), other)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    assert not sniff_zipped_spark_event_log(read_head(broken), broken)
    assert not sniff_spark_event_log(b'{"job": {"id": "job_1_1"}}', tmp_path / "j")


def test_pipeline_marks_spark_logs_skipped_with_the_reason(fixtures_dir: Path, store_dir: Path) -> None:
    paths = [
        fixtures_dir / "qubole-sparklens/local-1532512550423",
        fixtures_dir / "linkedin-dr-elephant/spark_event_logs/event_log_1",
    ]
    summary = ingest_paths(paths, Store(store_dir))
    assert [r.status for r in summary.results] == ["skipped", "skipped"]
    assert all(r.error and "Spark event log: not a MapReduce trace" in r.error for r in summary.results)
    assert sum(summary.rows_per_table().get(t, 0) for t in ("jobs", "attempts", "events")) == 0
