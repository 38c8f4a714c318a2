"""Archives, worker processes and time limits in the ingest pipeline (toy format from test_store)."""

from __future__ import annotations

import io
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import ingest.pipeline as pipeline
from ingest.base import ReadContext, Row
from ingest.formats import Format
from phaseline.store import Store
from tests.test_store import TOY, detect_among, job_ids, write


def read_slow(path: Path, ctx: ReadContext) -> Iterator[Row]:
    yield Row("jobs", {"job_id": "slow"})
    time.sleep(5)


SLOW = Format("slow", lambda head, path: head.startswith(b"SLOW"), read_slow, "slow format")


@pytest.fixture(autouse=True)
def _formats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "detect", detect_among(SLOW, TOY))


def test_tar_gz_members_land_with_archive_keys(tmp_path: Path, store_dir: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    write(src / "a.toy", "j1,x")
    write(src / "b.toy", "j2,x")
    archive = tmp_path / "history.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(src, arcname="done")
    summary = pipeline.ingest_paths([archive], Store(store_dir))
    assert sorted(r.status for r in summary.results) == ["landed", "landed"]
    assert all("history.tar.gz!done/" in r.path for r in summary.results)
    assert job_ids(Store(store_dir)) == ["j1", "j2"]


def test_a_bad_archive_member_is_named_by_its_archive_key(tmp_path: Path, store_dir: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    write(src / "good.toy", "j1,x")
    (src / "odd.bin").write_bytes(b"\x00not a trace")
    archive = tmp_path / "history.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(src, arcname="done")
    summary = pipeline.ingest_paths([archive], Store(store_dir))
    (odd,) = [r for r in summary.results if r.path.endswith("odd.bin")]
    assert odd.status == "skipped"
    assert odd.error is not None
    assert odd.error.startswith(f"{archive}!done/odd.bin: ")  # not the temporary copy
    assert job_ids(Store(store_dir)) == ["j1"]


def test_zip_with_traversal_is_refused_and_writes_nothing_outside(tmp_path: Path, store_dir: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ok.toy", "TOY\nj1,x\n")
        zf.writestr("../../escaped.toy", "TOY\nj2,x\n")
    good = write(tmp_path / "good.toy", "j3,x")
    summary = pipeline.ingest_paths([archive, good], Store(store_dir))
    by_name = {Path(r.path.split("!")[0]).name: r for r in summary.results}
    assert by_name["evil.zip"].status == "quarantined"
    assert "outside" in (by_name["evil.zip"].error or "")
    assert by_name["good.toy"].status == "landed"
    assert not (tmp_path.parent / "escaped.toy").exists()
    assert not any(p.name == "escaped.toy" for p in tmp_path.parent.parent.rglob("escaped.toy"))


def test_tar_with_symlink_member_is_refused(tmp_path: Path, store_dir: Path) -> None:
    archive = tmp_path / "links.tar"
    with tarfile.open(archive, "w") as tf:
        info = tarfile.TarInfo("link")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tf.addfile(info)
        data = b"TOY\nj1,x\n"
        member = tarfile.TarInfo("a.toy")
        member.size = len(data)
        tf.addfile(member, io.BytesIO(data))
    summary = pipeline.ingest_paths([archive], Store(store_dir))
    assert [r.status for r in summary.results] == ["quarantined"]
    assert job_ids(Store(store_dir)) == []


def test_worker_processes_give_the_same_store_as_one_process(tmp_path: Path) -> None:
    files = [write(tmp_path / f"f{i}.toy", f"j{i:02d},x", f"k{i:02d},y") for i in range(12)]
    bad = write(tmp_path / "bad.toy", "BAD")
    one = pipeline.ingest_paths([*files, bad], Store(tmp_path / "s1"))
    two = pipeline.ingest_paths([*files, bad], Store(tmp_path / "s2"), workers=2)
    assert [(r.path, r.status, r.rows) for r in one.results] == [(r.path, r.status, r.rows) for r in two.results]
    assert job_ids(Store(tmp_path / "s1")) == job_ids(Store(tmp_path / "s2"))
    assert len(job_ids(Store(tmp_path / "s2"))) == 24


def test_a_reader_that_hangs_is_quarantined_after_the_time_limit(tmp_path: Path, store_dir: Path) -> None:
    slow = tmp_path / "slow.trace"
    slow.write_text("SLOW\n")
    good = write(tmp_path / "good.toy", "j1,x")
    started = time.monotonic()
    summary = pipeline.ingest_paths([slow, good], Store(store_dir), file_timeout_s=0.5)
    assert time.monotonic() - started < 4
    status = {Path(r.path).name: r for r in summary.results}
    assert status["slow.trace"].status == "quarantined"
    assert "time limit" in (status["slow.trace"].error or "")
    assert job_ids(Store(store_dir)) == ["j1"]


def test_quarantined_file_is_retried_and_lands_once_fixed(tmp_path: Path, store_dir: Path) -> None:
    f = write(tmp_path / "f.toy", "BAD")
    store = Store(store_dir)
    assert [r.status for r in pipeline.ingest_paths([f], store).results] == ["quarantined"]
    write(f, "j1,x")
    assert [r.status for r in pipeline.ingest_paths([f], store).results] == ["landed"]
    con = store.connect()
    assert con.execute("SELECT status FROM sources").fetchall() == [("landed",)]
