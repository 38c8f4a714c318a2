"""Store transactions: staged rows checked, a crash or a corrupt manifest, concurrent ingests, durable commits."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ingest.pipeline as pipeline
from phaseline.errors import SchemaError, StoreError
from phaseline.store import Store
from phaseline.store.files import FSYNC_FILES_AT_MOST
from phaseline.store.files import make_durable as files_make_durable
from tests.phaseline.store_doubles import (
    _toy_format,  # noqa: F401 - autouse: every test here reads the toy format
    job_ids,
    write,
)


def test_crash_before_manifest_leaves_store_as_before(tmp_path: Path, store_dir: Path) -> None:
    store = Store(store_dir)
    pipeline.ingest_paths([write(tmp_path / "a.toy", "j1,x")], store)
    before = store.manifest()
    txn = store.begin()
    staged = txn.stage(str(tmp_path / "b.toy"), "f" * 64, 10, "toy")
    staged.add("jobs", {"job_id": "j2"})
    staged.finish("landed")
    # simulate a kill: the staging area is abandoned, never committed
    os.close(txn._marker_fd)
    assert store.manifest() == before
    assert job_ids(store) == ["j1"]
    # the next commit cleans the orphaned staging directory
    pipeline.ingest_paths([write(tmp_path / "c.toy", "j3,x")], store)
    assert not any((store_dir / ".tmp").iterdir())
    assert job_ids(store) == ["j1", "j3"]


def test_corrupt_manifest_is_a_store_error(store_dir: Path) -> None:
    store_dir.mkdir()
    (store_dir / "MANIFEST.json").write_text("{not json")
    with pytest.raises(StoreError, match="corrupt manifest"):
        Store(store_dir).manifest()
    (store_dir / "MANIFEST.json").write_text(json.dumps({"format": "phaseline-store", "version": 99}))
    with pytest.raises(StoreError, match="version 99"):
        Store(store_dir).manifest()


def test_rows_must_fit_schema(store_dir: Path) -> None:
    txn = Store(store_dir).begin()
    staged = txn.stage("x", "a" * 64, 1, "toy")
    staged.add("jobs", {"job_id": "j", "submit_ms": "not a number"})
    with pytest.raises(SchemaError, match="jobs"):
        staged.finish("landed")
    txn.close()


def _ingest_worker(args: tuple[str, str]) -> int:
    paths, store = args
    summary = pipeline.ingest_paths(paths.split("|"), Store(store))
    return len(summary.results)


def test_two_concurrent_ingests_both_land(tmp_path: Path, store_dir: Path) -> None:
    files_a = [str(write(tmp_path / f"a{i}.toy", f"a{i},x")) for i in range(30)]
    files_b = [str(write(tmp_path / f"b{i}.toy", f"b{i},x")) for i in range(30)]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        # the toy format is patched in this process; forked workers inherit the patch
        counts = pool.map(
            _ingest_worker, [("|".join(files_a), str(store_dir)), ("|".join(files_b), str(store_dir))]
        )
    assert counts == [30, 30]
    assert len(job_ids(Store(store_dir))) == 60
    table = pq.read_table(store_dir / Store(store_dir).manifest().sources_file)  # type: ignore[operator]
    assert table.num_rows == 60


def test_rows_may_be_tuples_in_row_column_order(store_dir: Path) -> None:
    from phaseline.schemas import COUNTERS

    store = Store(store_dir)
    txn = store.begin()
    staged = txn.stage("x", "b" * 64, 1, "toy")
    staged.add("counters", ("j", None, None, "job_total", "g", "c", 5))
    staged.add(
        "counters", {"job_id": "j", "scope": "job_total", "group_name": "g", "counter_name": "d", "value": 6}
    )
    staged.finish("landed")
    txn.commit()
    txn.close()
    rows = (
        store.connect()
        .execute("SELECT counter_name, value, source_sha256 FROM counters ORDER BY 1")
        .fetchall()
    )
    assert rows == [("c", 5, "b" * 64), ("d", 6, "b" * 64)]
    assert len(COUNTERS.row_columns) == 7
    bad = store.begin()
    short = bad.stage("y", "c" * 64, 1, "toy")
    short.add("counters", ("j", "too", "short"))
    with pytest.raises(SchemaError, match="row tuple has 3 values"):
        short.finish("landed")
    bad.close()


def test_what_a_commit_publishes_is_made_durable_once_before_the_manifest(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import phaseline.store.transaction as store_module  # where a commit calls it

    order: list[str] = []
    durable: list[Path] = []
    real_durable, real_write = files_make_durable, Store._write_manifest

    def make_durable(root: Path, paths: Sequence[Path]) -> None:
        order.append("durable")
        durable.extend(paths)
        real_durable(root, paths)

    def write_manifest(self: Store, manifest: object) -> bytes:
        order.append("manifest")
        return real_write(self, manifest)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "make_durable", make_durable)
    monkeypatch.setattr(Store, "_write_manifest", write_manifest)
    files = [write(tmp_path / f"{i}.toy", f"j{i},n{i}") for i in range(5)]
    store = Store(store_dir)
    pipeline.ingest_paths(files, store, compact_over=None)
    assert order == ["durable", "manifest"]  # five sources, one commit, one sync, before the manifest
    manifest = store.manifest()
    assert manifest.sources_file is not None
    assert set(durable) == {store_dir / f.path for f in manifest.files} | {store_dir / manifest.sources_file}
    assert job_ids(Store(store_dir)) == [f"j{i}" for i in range(5)]


@pytest.mark.parametrize("count", [1, FSYNC_FILES_AT_MOST, FSYNC_FILES_AT_MOST + 1])
def test_a_few_files_are_fsynced_and_many_sync_the_filesystem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    """A few files wait on their own bytes (not on every writer's, as a filesystem sync does)."""
    import phaseline.store.files as files_module

    synced: list[Path] = []
    fsynced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        fsynced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(files_module, "sync_filesystem", synced.append)
    monkeypatch.setattr(os, "fsync", fsync)
    paths = [tmp_path / "data" / "seg" / f"t{i % 3}" / f"{i}.parquet" for i in range(count)]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    files_module.make_durable(tmp_path, paths)
    if count > FSYNC_FILES_AT_MOST:
        assert synced == [tmp_path]
        assert not fsynced
    else:  # each file, then its directories up to the root (data/seg/t*, data/seg, data, the root)
        assert not synced
        assert len(fsynced) == count + min(count, 3) + 3
