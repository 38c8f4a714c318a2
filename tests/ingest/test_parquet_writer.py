"""The staged Parquet writer: row groups of wide rows, a failed background write, forked workers, plain payloads."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ingest.pipeline as pipeline
import phaseline.table_writer as table_writer
from ingest.base import Row, RowBlock
from phaseline import schemas
from phaseline.staging import StagedSource
from phaseline.store import Store
from tests.ingest.row_block_helpers import JOB, MIXED


def test_a_table_of_wide_rows_is_written_in_smaller_row_groups(tmp_path: Path) -> None:
    # events rows carry whole trace lines: the store buffers schemas.EVENTS.flush_rows of them, not FLUSH_ROWS
    limit = schemas.EVENTS.flush_rows
    assert limit < table_writer.FLUSH_ROWS
    rows = [Row("events", {"job_id": JOB, "seq": i, "event_type": "E", "payload_json": "x" * 100})
            for i in range(2 * limit + 1)]  # fmt: skip
    staging = tmp_path / "events"
    staging.mkdir()
    staged = StagedSource(staging, "wide", "f" * 64, 0, "test")
    for row in rows:
        staged.add(row.table, row.values)
    _, files = staged.finish("landed")
    (written,) = files
    meta = pq.ParquetFile(written.path).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [limit, limit, 1]
    assert pq.read_table(written.path).column("seq").to_pylist() == list(range(2 * limit + 1))


def test_a_failed_background_write_surfaces_and_the_staged_file_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Mid-file flushes are written by the writer thread; a write that fails there (a full disk) is
    # raised by the source's next flush or its finish, and discarding the source removes its file.
    real = pq.ParquetWriter.write_table
    calls: list[int] = []

    def write_once(self: pq.ParquetWriter, table: pa.Table, *args: Any, **kw: Any) -> None:
        calls.append(table.num_rows)
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        real(self, table, *args, **kw)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", write_once)
    monkeypatch.setattr(table_writer, "FLUSH_ROWS", 2)
    staging = tmp_path / "counters"
    staging.mkdir()
    staged = StagedSource(staging, "full-disk", "f" * 64, 0, "test")
    with pytest.raises(OSError, match="No space left"):  # noqa: PT012 - the flushes come with the rows
        for item in MIXED:
            if isinstance(item, RowBlock):
                staged.add_columns(item.table, item.n, item.columns, item.constants)
            else:
                staged.add(item.table, item.values)
        staged.finish("landed")
    assert len(calls) == 2  # nothing written after the failure
    staged.discard("quarantined", "disk full")
    assert not list(staging.rglob("*.parquet"))


def test_a_forked_worker_gets_its_own_writer_thread() -> None:
    parent = table_writer._background()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:  # the parent's thread does not exist in the child: a new one is made there
        assert pool.apply(_child_writes) == 6
    assert table_writer._background() is parent


def _child_writes() -> int:
    return table_writer._background().submit(sum, [1, 2, 3]).result(timeout=10)


def test_event_payloads_are_written_without_a_dictionary(fixtures_dir: Path, store_dir: Path) -> None:
    """``payload_json`` (``TableSpec.plain``) is stored plain; the other columns keep their dictionaries."""
    path = next(iter(sorted(fixtures_dir.rglob("mapreduce-client-jobclient/*.jhist"))))
    pipeline.ingest_paths([path], Store(store_dir))
    (events_file,) = sorted(store_dir.rglob("data/*/events/*.parquet"))
    meta = pq.ParquetFile(events_file).metadata
    names = meta.schema.names
    encodings = {names[i]: set(meta.row_group(0).column(i).encodings) for i in range(len(names))}
    assert not any("DICTIONARY" in e for e in encodings["payload_json"])
    assert any("DICTIONARY" in e for e in encodings["event_type"])
    assert pq.read_table(events_file).num_rows == meta.num_rows > 0
