"""Chunked ingest: small files share staged files, chunks commit whole, workers keep the results in order.

Toy formats as in test_store: ``TOY`` files (``job_id,name`` lines; ``BAD`` a parse
error, ``TYPO`` an unknown column) and ``TYPED`` files whose ``job_id,submit``
lines put ``submit`` into the integer column ``submit_ms`` as given, so a word
there only fails when the rows are converted to Arrow.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import ingest.pipeline as pipeline
from ingest import formats
from ingest.base import ReadContext, Row
from ingest.formats import Format
from ingest.opening import iter_lines
from phaseline.errors import StoreError
from phaseline.staged_batch import StagedBatch, StagedGroup
from phaseline.staging import StagedSource
from phaseline.store import Manifest, Store
from phaseline.verify import verify_store
from tests.phaseline.store_doubles import TOY, detect_among, job_ids, write


def read_typed(path: Path, ctx: ReadContext) -> Iterator[Row]:
    for line_no, line in iter_lines(path, ctx):
        if line_no == 1 or not line:
            continue
        ctx.events_read += 1
        job_id, submit = line.split(",")
        yield Row("jobs", {"job_id": job_id, "submit_ms": int(submit) if submit.isdigit() else submit})
        yield Row("events", {"job_id": job_id, "seq": line_no, "event_type": "TYPED", "payload_json": line})


TYPED = Format("typed", lambda head, path: head.startswith(b"TYPED"), read_typed, "typed toy format")


# The toy formats are patched into this process: the tests that run workers fork them so
# they inherit the patch (ingest's default, spawn, is tested with real formats elsewhere).
@pytest.fixture(autouse=True)
def _formats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "detect", detect_among(TYPED, TOY))


def typed(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(["TYPED", *lines]) + "\n")
    return path


def stage(txn_staging: Path, key: str, sha: str, job_id: str) -> StagedSource:
    """A source of one job: a jobs row and an events row (one record read)."""
    staged = StagedSource(txn_staging, key, sha, 10, "toy")
    staged.add("jobs", {"job_id": job_id, "name": "api"})
    staged.add("events", {"job_id": job_id, "seq": 1, "event_type": "TOY", "payload_json": job_id})
    return staged


def test_a_chunk_shares_one_file_per_table_and_each_source_lands_once(
    tmp_path: Path, store_dir: Path
) -> None:
    files = [write(tmp_path / f"f{i:02d}.toy", f"j{i:02d},x") for i in range(10)]
    store = Store(store_dir)
    summary = pipeline.ingest_paths(files, store)
    assert [r.status for r in summary.results] == ["landed"] * 10
    manifest = store.manifest()
    assert sorted(f.table for f in manifest.files) == ["events", "jobs"]
    keys = sorted(r.path for r in summary.results)
    assert all(sorted(f.sources) == keys for f in manifest.files)
    assert all(f.rows == 10 for f in manifest.files)
    assert job_ids(store) == [f"j{i:02d}" for i in range(10)]
    assert verify_store(store).ok
    again = pipeline.ingest_paths(files, store)
    assert {r.status for r in again.results} == {"unchanged"}
    assert store.manifest() == manifest


@pytest.mark.parametrize("workers", [1, 2])
def test_bad_files_in_a_chunk_do_not_hold_back_the_good_ones(
    tmp_path: Path, store_dir: Path, workers: int
) -> None:
    good = [write(tmp_path / f"g{i}.toy", f"g{i},x") for i in range(6)]
    parse_error = write(tmp_path / "bad.toy", "b1,x", "BAD")
    unknown_column = write(tmp_path / "typo.toy", "TYPO")
    wrong_type = typed(tmp_path / "nan.typed", "t1,12", "t2,soon")
    files = [good[0], parse_error, good[1], unknown_column, good[2], wrong_type, *good[3:]]
    store = Store(store_dir)
    summary = pipeline.ingest_paths(files, store, workers=workers, start_method="fork")
    assert [Path(r.path).name for r in summary.results] == [f.name for f in files]
    status = {Path(r.path).name: r for r in summary.results}
    assert {name: r.status for name, r in status.items()} == {
        **{g.name: "landed" for g in good},
        "bad.toy": "quarantined",
        "typo.toy": "quarantined",
        "nan.typed": "quarantined",
    }
    assert "do not fit" in (status["nan.typed"].error or "")
    assert status["nan.typed"].rows_quarantined == 4  # two jobs rows, two events rows
    assert job_ids(store) == [f"g{i}" for i in range(6)]
    rows = (
        store.connect()
        .execute("SELECT status, sum(rows_written) FROM sources GROUP BY 1 ORDER BY 1")
        .fetchall()
    )
    assert rows == [("landed", 12), ("quarantined", 0)]
    assert verify_store(store).ok


def test_results_and_progress_keep_the_input_order_with_workers(tmp_path: Path, store_dir: Path) -> None:
    store = Store(store_dir)
    old = write(tmp_path / "old.toy", "j0,x")
    pipeline.ingest_paths([old], store)
    files = [write(tmp_path / f"n{i}.toy", f"j{i + 1},x") for i in range(9)]
    (tmp_path / "copies").mkdir()
    copy = write(tmp_path / "copies" / "n3.toy", "j4,x")  # the bytes of n3.toy: skipped, not read
    order = [files[0], old, *files[1:5], copy, *files[5:]]
    seen: list[str] = []
    summary = pipeline.ingest_paths(
        order, store, workers=2, start_method="fork", on_file=lambda p, r: seen.append(p.name)
    )
    assert seen == [p.name for p in order]
    assert [Path(r.path).name for r in summary.results] == seen
    by_name = [r.status for r in summary.results]
    assert by_name == ["landed", "unchanged", *["landed"] * 4, "skipped", *["landed"] * 4]
    assert job_ids(store) == [f"j{i}" for i in range(10)]
    assert verify_store(store).ok


def test_an_interrupted_chunked_ingest_leaves_the_store_consistent_and_a_rerun_converges(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [write(tmp_path / f"f{i:02d}.toy", f"j{i:02d},x") for i in range(12)]
    store = Store(store_dir)
    real_write = Store._write_manifest
    written: list[int] = []

    def crash_on_the_second_commit(self: Store, manifest: Manifest) -> bytes:
        if written:  # the files are in data/ already; the manifest naming them never lands
            raise OSError("simulated crash before the manifest")
        written.append(manifest.generation)
        return real_write(self, manifest)

    monkeypatch.setattr(Store, "_write_manifest", crash_on_the_second_commit)
    with pytest.raises(OSError, match="simulated crash"):
        pipeline.ingest_paths(files, store, commit_every_files=4)  # chunks of 4, a commit after each
    monkeypatch.setattr(Store, "_write_manifest", real_write)
    assert job_ids(store) == [f"j{i:02d}" for i in range(4)]  # the first chunk, whole
    report = verify_store(store)
    assert report.ok
    assert {f.check for f in report.findings} == {"orphans"}  # the second chunk's files, never named
    summary = pipeline.ingest_paths(files, store, commit_every_files=4)
    assert [r.status for r in summary.results] == ["unchanged"] * 4 + ["landed"] * 8
    assert job_ids(store) == [f"j{i:02d}" for i in range(12)]
    report = verify_store(store)
    assert report.ok
    assert report.findings == ()
    assert not any((store_dir / ".tmp").iterdir())


def test_a_shared_file_loses_the_rows_of_a_source_that_is_already_live(
    tmp_path: Path, store_dir: Path
) -> None:
    store = Store(store_dir)
    a = write(tmp_path / "a.toy", "j1,x")
    pipeline.ingest_paths([a], store)
    before = store.sources().to_pylist()
    with store.begin() as txn:
        batch = StagedBatch(txn.staging)
        for key, sha, job_id in (
            (str(a.resolve()), before[0]["sha256"], "j1"),
            ("elsewhere/b.toy", "b" * 64, "j2"),
        ):
            assert batch.take(stage(txn.staging, key, sha, job_id), "landed", events_read=1) is not None
        group = batch.close()
        assert sorted(len(keys) for _, keys in group.files) == [2, 2]
        txn.adopt_group(group)
        txn.commit()
    assert job_ids(store) == ["j1", "j2"]
    after = {r["path"]: r for r in store.sources().to_pylist()}
    assert after[str(a.resolve())] == before[0]  # not re-published
    assert all(
        f.sources == ("elsewhere/b.toy",) for f in store.manifest().files if "elsewhere/b.toy" in f.sources
    )
    assert verify_store(store).ok


def test_sources_with_equal_bytes_never_share_a_file(tmp_path: Path, store_dir: Path) -> None:
    with Store(store_dir).begin() as txn:
        batch = StagedBatch(txn.staging)
        assert batch.take(stage(txn.staging, "job_1_0001.xml", "c" * 64, "j1"), "landed", events_read=1)
        second = stage(txn.staging, "job_1_0002.xml", "c" * 64, "j2")
        assert batch.take(second, "landed", events_read=1) is None  # it keeps files of its own
        batch.add(*second.finish("landed", events_read=1))
        group = batch.close()
        assert (
            sorted(keys for _, keys in group.files) == [("job_1_0001.xml",)] * 2 + [("job_1_0002.xml",)] * 2
        )
        mixed = StagedGroup(group.records, ((group.files[0][0], ("job_1_0001.xml", "job_1_0002.xml")),))
        with pytest.raises(StoreError, match="share a content hash"):
            txn.adopt_group(mixed)
        txn.adopt_group(group)
        txn.commit()
    assert job_ids(Store(store_dir)) == ["j1", "j2"]
    assert verify_store(Store(store_dir)).ok


def test_a_commit_after_another_ingest_committed_reads_the_store_again(
    tmp_path: Path, store_dir: Path
) -> None:
    store = Store(store_dir)
    with store.begin() as txn:
        txn.adopt(*stage(txn.staging, "a", "a" * 64, "ja").finish("landed", events_read=1))
        first = txn.commit()
        pipeline.ingest_paths([write(tmp_path / "b.toy", "jb,x")], store)  # another transaction commits
        txn.adopt(*stage(txn.staging, "c", "c" * 64, "jc").finish("landed", events_read=1))
        last = txn.commit()
    assert last.generation == first.generation + 2
    assert job_ids(store) == ["ja", "jb", "jc"]
    assert store.connect().execute("SELECT count(*) FROM sources").fetchone() == (3,)
    report = verify_store(store)
    assert report.ok
    assert report.findings == ()


def test_later_commits_remove_the_files_they_replace(tmp_path: Path, store_dir: Path) -> None:
    # ... once their retention has passed: until then they are retired, kept for older readers
    store = Store(store_dir)
    with store.begin() as txn:
        txn.adopt(*stage(txn.staging, "a", "1" * 64, "old").finish("landed", events_read=1))
        txn.commit()
        old = store.manifest()
        txn.adopt(*stage(txn.staging, "a", "2" * 64, "new").finish("landed", events_read=1))
        txn.commit()
        assert {r.path for r in store.manifest().retired} == old.referenced()
        store.retain_s = 0
        txn.adopt(*stage(txn.staging, "b", "3" * 64, "other").finish("landed", events_read=1))
        txn.commit()
    assert job_ids(store) == ["new", "other"]
    on_disk = {p.relative_to(store_dir).as_posix() for p in store_dir.rglob("*.parquet")}
    manifest = store.manifest()
    assert on_disk == {f.path for f in manifest.files} | {manifest.sources_file} | {
        r.path for r in manifest.retired
    }
    assert not on_disk & old.referenced()


def test_ingest_compacts_many_small_multi_source_files(tmp_path: Path, store_dir: Path) -> None:
    store = Store(store_dir)
    files = [write(tmp_path / f"f{i:02d}.toy", f"j{i:02d},x") for i in range(40)]
    pipeline.ingest_paths(
        files, store, compact_over=10, commit_every_files=2
    )  # 20 two-source files per table
    manifest = store.manifest()
    assert len(manifest.files) == 2
    assert all(len(f.sources) == 40 for f in manifest.files)
    assert job_ids(store) == [f"j{i:02d}" for i in range(40)]
    assert verify_store(store).ok


def test_workers_start_clean_rather_than_as_forks_of_this_process(tmp_path: Path, store_dir: Path) -> None:
    """By default a worker is not a copy of this process (its threads, their locks, its patches).

    The toy format exists only as a patch in this process, so a clean worker
    does not know it: no real format claims the toy files, so they are skipped.
    """
    files = [write(tmp_path / f"c{i}.toy", f"c{i},x") for i in range(4)]
    summary = pipeline.ingest_paths(files, Store(store_dir), workers=2)
    assert [r.status for r in summary.results] == ["skipped"] * 4
    assert all("format not recognised" in (r.error or "") for r in summary.results)
    forked = pipeline.ingest_paths(files, Store(tmp_path / "forked"), workers=2, start_method="fork")
    assert [r.status for r in forked.results] == ["landed"] * 4


def test_one_small_file_is_read_here_whatever_the_workers(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lone file below the range size has nothing to share: no worker process starts for it."""
    pools: list[int] = []
    real_pool = pipeline.worker_pool

    def counted(stack: object, workers: int, start_method: str) -> object:
        pools.append(workers)
        return real_pool(stack, workers, start_method)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "worker_pool", counted)
    one = typed(tmp_path / "one.typed", "j1,100")
    summary = pipeline.ingest_paths([one], Store(store_dir), workers=2, start_method="fork")
    assert [r.status for r in summary.results] == ["landed"]
    assert job_ids(Store(store_dir)) == ["j1"]
    assert pools == [1]
    # however large, a file that is no plain .jhist is never read in ranges: still here
    pipeline.ingest_paths([one], Store(tmp_path / "s3"), workers=2, start_method="fork", split_bytes=1)
    assert pools == [1, 1]
    # two files get the workers (a lone .jhist they read in ranges does too: test_jhist_split)
    two = typed(tmp_path / "two.typed", "j2,200")
    pipeline.ingest_paths([one, two], Store(tmp_path / "s2"), workers=2, start_method="fork")
    assert pools == [1, 1, 2]
