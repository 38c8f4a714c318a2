"""The store and the ingest pipeline, with a toy reader so the mechanics are tested alone.

Toy format: a file whose first line is ``TOY``; each further line ``job_id,name``
becomes a ``jobs`` row and an ``events`` row; ``BAD`` raises a parse error,
``CUT`` ends the file as truncated.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ingest.pipeline as pipeline
from ingest import formats, plan
from ingest.base import ReadContext, Row, iter_lines
from ingest.formats import Format
from phaseline import schemas
from phaseline.errors import SchemaError, StoreError, TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import job_id_from_name
from phaseline.store import Store
from phaseline.store.files import FSYNC_FILES_AT_MOST
from phaseline.store.files import make_durable as files_make_durable
from phaseline.verify import verify_store


def read_toy(path: Path, ctx: ReadContext) -> Iterator[Row]:
    for line_no, line in iter_lines(path, ctx):
        if line_no == 1 or not line:
            continue
        ctx.events_read += 1
        if line == "BAD":
            raise TraceParseError(path, "toy record is BAD", line=line_no)
        if line == "CUT":
            raise TraceTruncatedError(path, "file ends mid-record", line=line_no)
        if line == "TYPO":
            yield Row("jobs", {"job_id": "j", "nmae": "typo"})
        job_id, name = line.split(",")
        if job_id == "?":  # the job named by the file's name (as a conf XML without mapreduce.job.id)
            job_id = job_id_from_name(path.name) or "?"
        yield Row("jobs", {"job_id": job_id, "name": name})
        yield Row("events", {"job_id": job_id, "seq": line_no, "event_type": "TOY", "payload_json": line})


TOY = Format("toy", lambda head, path: head.startswith(b"TOY"), read_toy, "toy format")


def detect_among(*formats: Format) -> Callable[..., Format | None]:
    """A stand-in for ``ingest.formats.detect`` that knows only ``formats`` (each by its own sniff)."""

    def detect(path: Path, head: bytes | None = None) -> Format | None:
        if head is None:
            head = path.read_bytes()[:4096]
        return next((f for f in formats if f.sniff(head, path)), None)

    return detect


@pytest.fixture(autouse=True)
def _toy_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "detect", detect_among(TOY))


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(["TOY", *lines]) + "\n")
    return path


def job_ids(store: Store) -> list[str]:
    return [r[0] for r in store.connect().execute("SELECT job_id FROM jobs ORDER BY job_id").fetchall()]


def test_empty_store_has_typed_empty_views(store_dir: Path) -> None:
    con = Store(store_dir).connect()
    assert con.execute("SELECT count(*) FROM attempts").fetchone() == (0,)
    assert "map_finish_ms" in con.sql("SELECT * FROM attempts").columns


def test_connection_shows_the_store_tables_and_nothing_of_its_making(tmp_path: Path, store_dir: Path) -> None:
    # `phaseline query "SHOW TABLES"` is a user's first look: the tables (most empty here, some
    # with rows) and the documented overlapping_sources, no helper relation of connect's own
    pipeline.ingest_paths([write(tmp_path / "a.toy", "j1,first")], Store(store_dir))
    con = Store(store_dir).connect()
    shown = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    assert shown == set(schemas.TABLES) | {"overlapping_sources"}
    assert con.execute("SELECT count(*) FROM attempts").fetchone() == (0,)  # empty, still typed
    assert [str(t) for t in con.sql("SELECT finish_ms FROM raw.attempts").types] == ["BIGINT"]


def test_a_column_added_after_a_file_was_written_reads_as_null(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store written before a column existed (attempt_phases.dur_us came in session 27): its views still
    # have every declared column, of its declared type, NULL for the older files' rows.
    spec = schemas.TABLES["jobs"]
    older = dataclasses.replace(spec, schema=spec.schema.remove(spec.schema.get_field_index("diagnostics")))
    monkeypatch.setitem(schemas.TABLES, "jobs", older)
    pipeline.ingest_paths([write(tmp_path / "a.toy", "j1,first")], Store(store_dir))
    monkeypatch.setitem(schemas.TABLES, "jobs", spec)
    con = Store(store_dir).connect()
    assert con.execute("SELECT job_id, diagnostics FROM jobs").fetchall() == [("j1", None)]
    assert [str(t) for t in con.sql("SELECT diagnostics FROM raw.jobs").types] == ["VARCHAR"]
    # ... and beside files of the current schema, which have it
    pipeline.ingest_paths([write(tmp_path / "b.toy", "j2,second")], Store(store_dir))
    con = Store(store_dir).connect()
    assert con.execute("SELECT job_id, name FROM jobs WHERE diagnostics IS NULL ORDER BY 1").fetchall() == [
        ("j1", "first"), ("j2", "second")]
    assert verify_store(Store(store_dir)).ok


def test_ingest_lands_rows_and_sources(tmp_path: Path, store_dir: Path) -> None:
    a = write(tmp_path / "a.toy", "j1,first", "j2,second")
    summary = pipeline.ingest_paths([a], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed"]
    assert summary.results[0].rows == {"jobs": 2, "events": 2}
    assert job_ids(Store(store_dir)) == ["j1", "j2"]
    src = (
        Store(store_dir)
        .connect()
        .execute("SELECT status, events_read, rows_written, format FROM sources")
        .fetchall()
    )
    assert src == [("landed", 2, 4, "toy")]


def test_same_file_twice_changes_nothing(tmp_path: Path, store_dir: Path) -> None:
    a = write(tmp_path / "a.toy", "j1,first")
    store = Store(store_dir)
    pipeline.ingest_paths([a], store)
    before = store.manifest()
    summary = pipeline.ingest_paths([a], store)
    assert [r.status for r in summary.results] == ["unchanged"]
    assert store.manifest() == before


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
    return {p.relative_to(store_dir).as_posix() for p in store_dir.rglob("*.parquet") if ".tmp" not in p.parts}


def test_a_reader_keeps_its_generation_through_commits_and_compaction(tmp_path: Path, store_dir: Path) -> None:
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


def test_bad_file_is_quarantined_and_others_land(tmp_path: Path, store_dir: Path) -> None:
    good = write(tmp_path / "good.toy", "j1,ok")
    bad = write(tmp_path / "bad.toy", "j2,fine", "BAD", "j3,after")
    summary = pipeline.ingest_paths([bad, good], Store(store_dir))
    status = {Path(r.path).name: r for r in summary.results}
    assert status["good.toy"].status == "landed"
    assert status["bad.toy"].status == "quarantined"
    assert "bad.toy:3" in (status["bad.toy"].error or "")
    assert status["bad.toy"].rows_quarantined == 2  # the jobs + events row of j2
    assert job_ids(Store(store_dir)) == ["j1"]
    err = (
        Store(store_dir).connect().execute("SELECT error FROM sources WHERE status='quarantined'").fetchone()
    )
    assert err is not None
    assert "toy record is BAD" in err[0]


def test_truncated_file_keeps_rows_before_the_cut(tmp_path: Path, store_dir: Path) -> None:
    cut = write(tmp_path / "cut.toy", "j1,ok", "CUT")
    summary = pipeline.ingest_paths([cut], Store(store_dir))
    assert summary.results[0].status == "partial"
    assert job_ids(Store(store_dir)) == ["j1"]
    err = Store(store_dir).connect().execute("SELECT error FROM sources").fetchone()
    assert err is not None
    assert "cut.toy:3" in err[0]


def test_unknown_format_is_skipped(tmp_path: Path, store_dir: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    summary = pipeline.ingest_paths([tmp_path], Store(store_dir))
    assert [r.status for r in summary.results] == ["skipped"]


def test_schema_mistake_in_reader_quarantines_with_message(tmp_path: Path, store_dir: Path) -> None:
    typo = write(tmp_path / "typo.toy", "TYPO")
    summary = pipeline.ingest_paths([typo], Store(store_dir))
    assert summary.results[0].status == "quarantined"
    assert "nmae" in (summary.results[0].error or "")


def test_identical_copy_is_recorded_not_duplicated(tmp_path: Path, store_dir: Path) -> None:
    a = write(tmp_path / "a.toy", "j1,first")
    (tmp_path / "sub").mkdir()
    b = write(tmp_path / "sub" / "copy.toy", "j1,first")
    summary = pipeline.ingest_paths([a, b], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed", "skipped"]
    assert job_ids(Store(store_dir)) == ["j1"]


def test_verify_names_a_copy_that_an_older_store_let_land(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a store written before ingest skipped copies holds both: their rows share one source_sha256,
    # so the views count them twice, and verify had called the store consistent
    from phaseline.verify import verify_store

    a = write(tmp_path / "a.toy", "j1,first")
    b = write(tmp_path / "b.toy", "j1,first")
    monkeypatch.setattr(plan.Copies, "twin", lambda self, key, sha256, member: None)  # the old ingest
    summary = pipeline.ingest_paths([a, b], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed", "landed"]
    report = verify_store(Store(store_dir))
    assert not report.ok
    (finding,) = report.findings
    assert (finding.check, finding.subject) == ("copies", str(b))
    assert f"same bytes as {a}" in finding.detail


def test_glob_and_directory_walk_skip_hidden(tmp_path: Path, store_dir: Path) -> None:
    write(tmp_path / "a.toy", "j1,x")
    write(tmp_path / ".hidden.toy", "j2,x")
    (tmp_path / "d").mkdir()
    write(tmp_path / "d" / "b.toy", "j3,x")
    assert sorted(p.name for p in pipeline.iter_files([tmp_path])) == ["a.toy", "b.toy"]
    assert [p.name for p in pipeline.iter_files([str(tmp_path / "*.toy")])] == ["a.toy"]


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


def test_verify_passes_on_a_consistent_store_and_catches_tampering(tmp_path: Path, store_dir: Path) -> None:
    from phaseline.verify import verify_store

    store = Store(store_dir)
    pipeline.ingest_paths(
        [write(tmp_path / "a.toy", "j1,x", "j2,y"), write(tmp_path / "b.toy", "BAD")], store
    )
    report = verify_store(store)
    assert report.ok, report.findings
    assert report.sources_checked == 2
    # an orphan left by a crash is a warning, not an error
    orphan = store_dir / "data" / "x" / "jobs" / "orphan.parquet"
    orphan.parent.mkdir(parents=True)
    pq.write_table(pq.read_table(store_dir / store.manifest().files[0].path), orphan)
    report = verify_store(store)
    assert report.ok
    assert [f.check for f in report.findings] == ["orphans"]
    # a missing data file is an error naming it
    missing = store.manifest().files[0].path
    (store_dir / missing).unlink()
    report = verify_store(store)
    assert not report.ok
    assert any(f.subject == missing and f.check == "manifest" for f in report.findings)


def test_identical_bytes_named_for_different_jobs_are_two_sources(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reader that may take the job id from the file name when the content lacks one (conf XML):
    # byte-identical files named for different jobs both land.
    monkeypatch.setattr(formats, "detect", detect_among(dataclasses.replace(TOY, job_from_name=True)))
    a = write(tmp_path / "job_1526555215992_0001_conf.toy", "?,first")
    b = write(tmp_path / "job_1526555215992_0002_conf.toy", "?,first")
    summary = pipeline.ingest_paths([a, b], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed", "landed"]
    # ...and re-ingesting the second one alone changes nothing
    assert [r.status for r in pipeline.ingest_paths([b], Store(store_dir)).results] == ["unchanged"]
    assert verify_store_ok(store_dir)


def test_identical_bytes_of_a_format_that_names_its_job_are_one_source_whatever_their_names(
    tmp_path: Path, store_dir: Path
) -> None:
    # The toy's job id is in its content (as a .jhist's is): a copy named for a job, or for none,
    # is the same source.  A .jhist copied to "teragen.jhist" had landed a second time, every row
    # twice, and the job's profile failed on its repeated attempt ids.
    a = write(tmp_path / "job_1526555215992_0001.toy", "j1,first")
    b = write(tmp_path / "copy.toy", "j1,first")
    c = write(tmp_path / "job_1526555215992_0009.toy", "j1,first")
    summary = pipeline.ingest_paths([a, b, c], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed", "skipped", "skipped"]
    assert all(f"same content as {a}" in (r.error or "") for r in summary.results[1:])
    # ...and so is a copy ingested later, against the store's sources
    d = write(tmp_path / "later.toy", "j1,first")
    later = pipeline.ingest_paths([d], Store(store_dir)).results
    assert [r.status for r in later] == ["skipped"]
    assert "already in the store" in (later[0].error or "")
    assert job_ids(Store(store_dir)) == ["j1"]


def verify_store_ok(store_dir: Path) -> bool:
    from phaseline.verify import verify_store

    return verify_store(Store(store_dir)).ok


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


@pytest.mark.parametrize(
    "command",
    [["compact"], ["jobs"], ["tables"], ["verify"], ["query", "SELECT 1"], ["phases", "job_1_0001"],
     ["profile", "job_1_0001", "--out", "p.json"], ["dataflow", "job_1_0001"], ["backtest", "--platform", __file__]],
)
@pytest.mark.parametrize("where", ["missing", "not-a-store"])
def test_reading_a_missing_store_says_so_and_creates_nothing(tmp_path: Path, command: list[str], where: str) -> None:
    # A mistyped --store (or a directory that is not a store) must not read as an empty store.
    from click.testing import CliRunner

    from phaseline.cli import main

    store = tmp_path / where
    if where == "not-a-store":
        store.mkdir()
    result = CliRunner().invoke(main, [*command, "--store", str(store)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"no store at {store}: it " in result.stderr
    assert store.exists() == (where == "not-a-store")
    assert not store.exists() or not any(store.iterdir())


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


def test_a_job_two_files_describe_has_one_account_in_the_views(tmp_path: Path, store_dir: Path) -> None:
    from phaseline.verify import verify_store

    store = Store(store_dir)
    a = write(tmp_path / "a.toy", "j1,first", "j2,second")
    b = write(tmp_path / "b.toy", "j2,again", "j3,third")
    pipeline.ingest_paths([a, b], store)
    con = store.connect()
    # j2 is one job: equal formats and rows, so the first path's account is kept
    assert con.execute("SELECT job_id, name FROM jobs ORDER BY job_id").fetchall() == [
        ("j1", "first"), ("j2", "second"), ("j3", "third"),
    ]
    assert con.execute("SELECT count(*) FROM raw.jobs").fetchone() == (4,)
    assert con.execute("SELECT count(*) FROM events").fetchone() == (4,)  # raw records are never merged
    report = verify_store(store)
    assert report.ok
    assert [(f.check, f.subject) for f in report.findings] == [("overlaps", "j2")]
    assert f"take its rows from {a.resolve()}" in report.findings[0].detail
    # the sources row names each source's jobs, so overlaps are found without reading the data
    assert sorted(map(tuple, store.sources().column("job_ids").to_pylist())) == [("j1", "j2"), ("j2", "j3")]
    # a store written before sources.job_ids existed: every job's rows are counted instead
    sources_file = store_dir / str(store.manifest().sources_file)
    pq.write_table(pq.read_table(sources_file).drop_columns(["job_ids"]), sources_file)
    con = store.connect()
    assert con.execute("SELECT job_id, name FROM jobs ORDER BY job_id").fetchall() == [
        ("j1", "first"), ("j2", "second"), ("j3", "third"),
    ]


def test_damaged_store_files_give_findings_and_clean_errors(tmp_path: Path, store_dir: Path) -> None:
    from click.testing import CliRunner

    from phaseline.cli import main
    from phaseline.verify import verify_store

    store = Store(store_dir)
    pipeline.ingest_paths([write(tmp_path / "a.toy", "j1,first")], store)
    data = next(f for f in store.manifest().files if f.table == "jobs")
    (store_dir / data.path).write_bytes(b"PAR1 not parquet")
    result = CliRunner().invoke(main, ["jobs", "--store", str(store_dir)])
    assert result.exit_code == 1, result.output
    assert "see `phaseline verify`" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)

    sources_file = store_dir / str(store.manifest().sources_file)
    sources_file.write_bytes(b"")
    with pytest.raises(StoreError, match="sources table cannot be read"):
        store.sources()
    report = verify_store(store)  # reports, does not raise
    assert not report.ok
    checks = {(f.check, f.subject) for f in report.findings}
    assert ("sources", str(store.manifest().sources_file)) in checks
    assert ("schema", data.path) in checks  # the file checks still ran
