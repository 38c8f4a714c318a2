"""Which files an ingest reads, and under which key: copies whose original changed, two
ingests of copies at once, links, names with glob characters or bytes that are not UTF-8,
and a phaseline store inside the directory being ingested.

Found by an audit (session 21); each test failed on the code before its fix.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ingest.pipeline import FileResult, ingest_paths
from ingest.walk import iter_files
from phaseline.store import Store
from phaseline.verify import verify_store

JHIST_A = Path("apache-hadoop/mapreduce-client-jobclient/job_1329348432655_0001-10.jhist")
JHIST_B = Path("apache-hadoop/mapreduce-client-hs/job_2.0.3-alpha-FAILED.jhist")


def _inputs(tmp_path: Path, fixtures_dir: Path, files: dict[str, Path]) -> Path:
    """``tmp_path/in`` holding copies of fixtures under the given names."""
    src = tmp_path / "in"
    src.mkdir()
    for name, fixture in files.items():
        shutil.copy(fixtures_dir / fixture, src / name)
    return src


def _ingested(tmp_path: Path, fixtures_dir: Path, store_dir: Path, files: dict[str, Path]) -> tuple[Path, Store]:
    """:func:`_inputs` ingested into a new store at ``store_dir``: the inputs' folder and the store."""
    src = _inputs(tmp_path, fixtures_dir, files)
    store = Store(store_dir)
    ingest_paths([src], store)
    return src, store


def _jobs(store: Store) -> list[tuple[str, int]]:
    return store.connect().execute("SELECT job_id, count(*) FROM attempts GROUP BY 1 ORDER BY 1").fetchall()


@pytest.mark.parametrize("copy_name", ["b.jhist", "0.jhist"])  # after its original in the walk, and before
def test_a_copy_is_read_once_its_original_holds_other_bytes(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path, copy_name: str
) -> None:
    # b.jhist was skipped as a copy of a.jhist; a.jhist was then replaced by another job's
    # history.  b's job had left the store, and every later ingest called b "unchanged".
    src = _inputs(tmp_path, fixtures_dir, {"a.jhist": JHIST_A})
    store = Store(store_dir)
    ingest_paths([src / "a.jhist"], store)
    shutil.copy(fixtures_dir / JHIST_A, src / copy_name)
    first = {Path(r.path).name: r.status for r in ingest_paths([src], store).results}
    assert first == {"a.jhist": "unchanged", copy_name: "skipped"}
    alone = _jobs(store)
    shutil.copy(fixtures_dir / JHIST_B, src / "a.jhist")
    again = ingest_paths([src], store)
    assert sorted(r.status for r in again.results) == ["landed", "landed"]
    both = _jobs(store)
    assert len(both) == 2
    assert alone[0] in both
    assert verify_store(store).ok
    assert [r.status for r in ingest_paths([src], store).results] == ["unchanged", "unchanged"]
    assert _jobs(store) == both


def test_verify_warns_of_a_copy_whose_original_was_replaced_alone(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path
) -> None:
    src, store = _ingested(tmp_path, fixtures_dir, store_dir, {"a.jhist": JHIST_A, "b.jhist": JHIST_A})
    assert not verify_store(store).findings
    shutil.copy(fixtures_dir / JHIST_B, src / "a.jhist")
    ingest_paths([src / "a.jhist"], store)  # the copy is not in this ingest
    report = verify_store(store)
    assert report.ok  # the store is sound; one file's rows are missing from it
    [finding] = report.findings
    assert (finding.severity, finding.check, finding.subject) == ("warning", "copies", str(src / "b.jhist"))
    assert [r.status for r in ingest_paths([src / "b.jhist"], store).results] == ["landed"]
    assert not verify_store(store).findings
    assert len(_jobs(store)) == 2


def test_two_ingests_of_copies_at_once_land_one(fixtures_dir: Path, tmp_path: Path, store_dir: Path) -> None:
    # The second ingest starts after the first planned and before it committed: each saw no
    # copy when it planned, both landed, and every row counted twice.
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    shutil.copy(fixtures_dir / JHIST_A, tmp_path / "x" / "a.jhist")
    shutil.copy(fixtures_dir / JHIST_A, tmp_path / "y" / "b.jhist")
    store = Store(store_dir)
    inner: list[FileResult] = []

    def meanwhile(path: Path, result: FileResult) -> None:
        if not inner:
            inner.extend(ingest_paths([tmp_path / "y"], Store(store_dir)).results)

    outer = ingest_paths([tmp_path / "x"], store, on_file=meanwhile)
    assert [r.status for r in inner] == ["landed"]
    assert [r.status for r in outer.results] == ["landed"]  # read, then found to be a copy at commit
    sources = store.sources().to_pylist()
    assert sorted(s["status"] for s in sources) == ["landed", "skipped"]
    skipped = next(s for s in sources if s["status"] == "skipped")
    assert skipped["path"] == str(tmp_path / "x" / "a.jhist")
    assert "landed by another ingest" in skipped["error"]
    assert store.connect().execute("SELECT count(*) FROM attempts").fetchone() == (11,)
    assert verify_store(store).ok


def test_a_file_reached_twice_is_read_once(fixtures_dir: Path, tmp_path: Path, store_dir: Path) -> None:
    # A link beside its target, or one file given under two spellings, had stopped the whole
    # ingest with "a staged group names one source twice" (naming no file).
    src = _inputs(tmp_path, fixtures_dir, {"a.jhist": JHIST_A, "c.jhist": JHIST_B})
    (src / "latest.jhist").symlink_to("a.jhist")
    assert [p.name for p in iter_files([src])] == ["a.jhist", "c.jhist"]
    store = Store(store_dir)
    summary = ingest_paths([src, src / ".." / "in" / "a.jhist"], store)
    assert [r.status for r in summary.results] == ["landed", "landed"]
    assert len(_jobs(store)) == 2


def test_a_name_with_glob_characters_is_that_file(fixtures_dir: Path, tmp_path: Path) -> None:
    # "run[1].jhist" had been read as a pattern: it matched run1.jhist, another job, silently.
    shutil.copy(fixtures_dir / JHIST_A, tmp_path / "run[1].jhist")
    shutil.copy(fixtures_dir / JHIST_B, tmp_path / "run1.jhist")
    (tmp_path / "runs [1]").mkdir()
    shutil.copy(fixtures_dir / JHIST_A, tmp_path / "runs [1]" / "a.jhist")
    assert [p.name for p in iter_files([str(tmp_path / "run[1].jhist")])] == ["run[1].jhist"]
    assert list(iter_files([str(tmp_path / "runs [1]" / "a.jhist")])) == [tmp_path / "runs [1]" / "a.jhist"]
    # a pattern that names no file is still a pattern
    assert [p.name for p in iter_files([str(tmp_path / "run[0-9].jhist")])] == ["run1.jhist"]


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="macOS refuses names that are not UTF-8")
def test_a_name_that_is_not_utf8_gets_a_key(fixtures_dir: Path, tmp_path: Path, store_dir: Path) -> None:
    # The commit had failed with a UnicodeEncodeError traceback on every try, leaving files behind.
    src = _inputs(tmp_path, fixtures_dir, {"good.jhist": JHIST_A})
    shutil.copy(fixtures_dir / JHIST_B, os.fsdecode(os.fsencode(src) + b"/bad\xff.jhist"))
    store = Store(store_dir)
    assert [r.status for r in ingest_paths([src], store).results] == ["landed", "landed"]
    assert str(src / "bad\\xff.jhist") in store.sources().column("path").to_pylist()
    assert verify_store(store).ok
    assert [r.status for r in ingest_paths([src], store).results] == ["unchanged", "unchanged"]


def test_a_store_of_skipped_files_inside_the_input_is_not_read(tmp_path: Path) -> None:
    # A store holding only skipped sources has no data/ directory; it had been walked into and its
    # sources file recorded as one more (skipped) source at every ingest.
    src = tmp_path / "in"
    src.mkdir()
    (src / "notes.txt").write_text("nothing phaseline reads\n")
    store = Store(src / "phaseline-store")
    ingest_paths([src], store)
    assert not (src / "phaseline-store" / "data").exists()
    assert [p.name for p in iter_files([src])] == ["notes.txt"]
    ingest_paths([src], store)
    assert store.sources().column("path").to_pylist() == [str(src / "notes.txt")]


def test_a_damaged_shared_file_is_named_when_a_source_in_it_is_replaced(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path
) -> None:
    # Two sources share one batch file per table; replacing one rewrites that file without its
    # rows.  A damaged file had raised a bare OSError from pyarrow, naming no file.
    from phaseline.errors import StoreError

    src, store = _ingested(tmp_path, fixtures_dir, store_dir, {"a.jhist": JHIST_A, "b.jhist": JHIST_B})
    shared = next(f for f in store.manifest().files if f.table == "counters" and len(f.sources) == 2)
    damaged = store_dir / shared.path
    damaged.write_bytes(damaged.read_bytes()[:-100])
    before = store.manifest()
    shutil.copy(fixtures_dir / JHIST_A, src / "b.jhist")
    with pytest.raises(StoreError, match=str(damaged)):
        ingest_paths([src / "b.jhist", fixtures_dir / JHIST_B], store)
    assert store.manifest() == before  # nothing half-committed
