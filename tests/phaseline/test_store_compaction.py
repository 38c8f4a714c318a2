"""Store generations: files replaced or compacted are retired, kept for earlier readers, then deleted."""

from __future__ import annotations

from pathlib import Path

import ingest.pipeline as pipeline
from phaseline.store import Store
from phaseline.verify import verify_store
from tests.phaseline.store_doubles import (
    _toy_format,  # noqa: F401 - autouse: every test here reads the toy format
    job_ids,
    write,
)


def test_changed_file_replaces_its_rows(tmp_path: Path, store_dir: Path) -> None:
    a = write(tmp_path / "a.toy", "j1,first")
    b = write(tmp_path / "b.toy", "j9,other")
    store = Store(store_dir)
    pipeline.ingest_paths([a, b], store)
    write(a, "j1,renamed", "j3,new")
    pipeline.ingest_paths([a], store)
    con = store.connect()
    assert con.execute("SELECT job_id, name FROM jobs ORDER BY 1").fetchall() == [
        ("j1", "renamed"),
        ("j3", "new"),
        ("j9", "other"),
    ]
    assert con.execute("SELECT count(*) FROM sources").fetchone() == (2,)
    # the replaced file's Parquet has left the manifest's files; it stays on disk, retired, for the
    # readers of the generation before, until the retention has passed and a commit deletes it
    manifest = store.manifest()
    assert on_disk(store_dir) == manifest.referenced()
    assert {r.path for r in manifest.retired} - {manifest.sources_file} != set()
    store.retain_s = 0
    pipeline.ingest_paths([write(tmp_path / "c.toy", "j4,later")], store)
    after = store.manifest()
    assert on_disk(store_dir) == after.referenced()
    assert not {r.path for r in manifest.retired} & on_disk(store_dir)


def on_disk(store_dir: Path) -> set[str]:
    return {
        p.relative_to(store_dir).as_posix() for p in store_dir.rglob("*.parquet") if ".tmp" not in p.parts
    }


def test_a_reader_keeps_its_generation_through_commits_and_compaction(
    tmp_path: Path, store_dir: Path
) -> None:
    # A report or a notebook connects, and an ingest commits meanwhile: the connection's views name
    # files that the commit replaced (the sources file is rewritten by every commit) or that a
    # compaction merged.  They had been deleted at once, and the reader's next query failed.
    a = write(tmp_path / "a.toy", "j1,first")
    store = Store(store_dir)
    pipeline.ingest_paths([a], store)
    first = store.connect()
    write(a, "j1,renamed")
    pipeline.ingest_paths([a, write(tmp_path / "b.toy", "j2,second")], store)
    second = store.connect()
    pipeline.ingest_paths([write(tmp_path / "c.toy", "j3,third")], store)
    assert store.compact(min_files=2) > 0
    assert first.execute("SELECT job_id, name FROM jobs").fetchall() == [("j1", "first")]
    assert first.execute("SELECT count(*) FROM sources").fetchone() == (1,)
    assert second.execute("SELECT name FROM jobs ORDER BY 1").fetchall() == [("renamed",), ("second",)]
    assert job_ids(store) == ["j1", "j2", "j3"]
    report = verify_store(store)
    assert report.ok
    assert not [f for f in report.findings if f.check == "orphans"]
    # a compaction with nothing to merge still deletes the retired files whose hour has passed
    retired = {r.path for r in store.manifest().retired}
    assert retired & on_disk(store_dir) == retired
    store.retain_s = 0
    assert store.compact() == 0
    assert not retired & on_disk(store_dir)
    assert on_disk(store_dir) == store.manifest().referenced()
    assert job_ids(store) == ["j1", "j2", "j3"]


def test_compaction_keeps_contents_and_replacement_still_works(tmp_path: Path, store_dir: Path) -> None:
    from phaseline.verify import verify_store

    store = Store(store_dir)
    files = [write(tmp_path / f"f{i:02d}.toy", f"j{i:02d},x") for i in range(40)]
    # a commit per file: each source's rows in files of their own (a chunk would share them)
    pipeline.ingest_paths(files, store, compact_over=None, commit_every_files=1)
    before = job_ids(store)
    n_files = len(store.manifest().files)
    assert n_files == 80  # jobs + events per source
    assert store.compact(min_files=8) == 80
    manifest = store.manifest()
    assert len(manifest.files) == 2
    assert all(len(f.sources) == 40 for f in manifest.files)
    assert job_ids(store) == before
    assert verify_store(store).ok
    # a changed file inside a compacted one: its old rows go, the others stay
    write(files[3], "j03,changed", "k03,new")
    pipeline.ingest_paths([files[3]], store, compact_over=None)
    con = store.connect()
    assert con.execute("SELECT name FROM jobs WHERE job_id = 'j03'").fetchall() == [("changed",)]
    assert con.execute("SELECT count(*) FROM jobs").fetchone() == (41,)
    assert verify_store(store).ok


def test_ingest_compacts_when_a_table_has_many_small_files(tmp_path: Path, store_dir: Path) -> None:
    store = Store(store_dir)
    files = [write(tmp_path / f"f{i:02d}.toy", f"j{i:02d},x") for i in range(20)]
    pipeline.ingest_paths(files, store, compact_over=10, commit_every_files=1)  # 40 one-source files
    assert len(store.manifest().files) < 40
    assert len(job_ids(store)) == 20


def test_ingest_compacts_by_default_once_a_table_has_min_small_files(tmp_path: Path, store_dir: Path) -> None:
    from phaseline.store import MIN_SMALL_FILES

    files = [write(tmp_path / f"f{i:02d}.toy", f"j{i:02d},x") for i in range(MIN_SMALL_FILES)]
    fewer = Store(store_dir / "fewer")  # one file short of the rule: left as it is
    pipeline.ingest_paths(files[1:], fewer, commit_every_files=1)
    assert len(fewer.manifest().files) == 2 * (MIN_SMALL_FILES - 1)  # jobs + events per source
    store = Store(store_dir / "enough")
    pipeline.ingest_paths(files, store, commit_every_files=1)
    assert len(store.manifest().files) == 2  # a table each
    assert len(job_ids(store)) == MIN_SMALL_FILES
