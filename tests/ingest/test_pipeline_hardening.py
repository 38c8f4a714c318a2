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
from ingest import formats
from ingest.archives import MAX_NESTING
from ingest.base import ReadContext, Row
from ingest.formats import Format
from phaseline.store import Store
from tests.ingest.archive_helpers import tar_of, zip_of
from tests.phaseline.store_doubles import TOY, detect_among, job_ids, write


def read_slow(path: Path, ctx: ReadContext) -> Iterator[Row]:
    yield Row("jobs", {"job_id": "slow"})
    time.sleep(5)


SLOW = Format("slow", lambda head, path: head.startswith(b"SLOW"), read_slow, "slow format")


@pytest.fixture(autouse=True)
def _formats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "detect", detect_among(SLOW, TOY))


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


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_a_symlink_amid_good_members_quarantines_the_archive_whole(
    tmp_path: Path, store_dir: Path, kind: str
) -> None:
    # a tar read a.toy, met the link, and called the rest "corrupt"; a zip wrote the link out as a file
    data = b"TOY\nj1,x\n"
    pack = tar_of if kind == "tar" else zip_of
    archive = pack(tmp_path / f"links.{kind}", ("a.toy", data), ("link", None), ("b.toy", data))
    (result,) = pipeline.ingest_paths([archive], Store(store_dir)).results
    assert result.status == "quarantined"
    assert "archive member 'link' is not a plain file" in (result.error or "")
    assert "corrupt" not in (result.error or "")
    assert job_ids(Store(store_dir)) == []


def test_worker_processes_give_the_same_store_as_one_process(tmp_path: Path) -> None:
    files = [write(tmp_path / f"f{i}.toy", f"j{i:02d},x", f"k{i:02d},y") for i in range(12)]
    bad = write(tmp_path / "bad.toy", "BAD")
    one = pipeline.ingest_paths([*files, bad], Store(tmp_path / "s1"))
    # forked, so the workers inherit the toy format patched into this process (spawned workers,
    # the default, are compared with one process on real traces in test_analyze)
    two = pipeline.ingest_paths([*files, bad], Store(tmp_path / "s2"), workers=2, start_method="fork")
    assert [(r.path, r.status, r.rows) for r in one.results] == [(r.path, r.status, r.rows) for r in two.results]
    assert job_ids(Store(tmp_path / "s1")) == job_ids(Store(tmp_path / "s2"))
    assert len(job_ids(Store(tmp_path / "s2"))) == 24


@pytest.mark.alone  # asserts the limit ends the read within seconds
def test_a_reader_that_hangs_is_quarantined_after_the_time_limit(tmp_path: Path, store_dir: Path) -> None:
    slow = tmp_path / "slow.trace"
    slow.write_text("SLOW\n")
    good = write(tmp_path / "good.toy", "j1,x")
    started = time.monotonic()
    summary = pipeline.ingest_paths([slow, good], Store(store_dir), file_timeout_s=0.5)
    assert time.monotonic() - started < 4
    status = {Path(r.path).name: r for r in summary.results}
    assert status["slow.trace"].status == "quarantined"
    assert "time limit (0.5 s)" in (status["slow.trace"].error or "")  # as given, not rounded to 0 or 1
    assert job_ids(Store(store_dir)) == ["j1"]


def test_quarantined_file_is_retried_and_lands_once_fixed(tmp_path: Path, store_dir: Path) -> None:
    f = write(tmp_path / "f.toy", "BAD")
    store = Store(store_dir)
    assert [r.status for r in pipeline.ingest_paths([f], store).results] == ["quarantined"]
    write(f, "j1,x")
    assert [r.status for r in pipeline.ingest_paths([f], store).results] == ["landed"]
    con = store.connect()
    assert con.execute("SELECT status FROM sources").fetchall() == [("landed",)]


def test_repeated_member_names_all_land_under_their_own_keys(tmp_path: Path, store_dir: Path) -> None:
    archive = tmp_path / "repeats.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.toy", "TOY\nj1,x\n")
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("a.toy", "TOY\nj2,x\n")  # zip allows a name twice
        zf.writestr("./a.toy", "TOY\nj3,x\n")  # another name for the same place
        zf.writestr("#2/a.toy", "TOY\nj6,x\n")  # where a repeat would go
        zf.writestr("a.toy#2", "TOY\nj7,x\n")  # what a repeat would be called
    tar = tmp_path / "repeats.tar"
    with tarfile.open(tar, "w") as tf:
        for job in ("j4", "j5"):  # tar appends; extracting naively keeps only the last
            data = f"TOY\n{job},x\n".encode()
            info = tarfile.TarInfo("done/b.toy")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    summary = pipeline.ingest_paths([archive, tar], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed"] * 7
    assert [r.path.split("!", 1)[1] for r in summary.results] == [
        "a.toy", "a.toy#2", "./a.toy", "#2/a.toy", "a.toy#2#2", "done/b.toy", "done/b.toy#2",
    ]
    assert job_ids(Store(store_dir)) == ["j1", "j2", "j3", "j4", "j5", "j6", "j7"]


def test_archives_inside_archives_are_unpacked(tmp_path: Path, store_dir: Path) -> None:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("day1/a.toy", "TOY\nj1,x\n")
    broken = io.BytesIO()
    with zipfile.ZipFile(broken, "w") as zf:
        zf.writestr("b.toy", "TOY\nj2,x\n")
    outer = tmp_path / "month.tar.gz"
    with tarfile.open(outer, "w:gz") as tf:
        for name, data in (("day1.zip", inner.getvalue()), ("day2.zip", broken.getvalue()[:-30])):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("c.toy")
        info.size = len(b"TOY\nj3,x\n")
        tf.addfile(info, io.BytesIO(b"TOY\nj3,x\n"))
    summary = pipeline.ingest_paths([outer], Store(store_dir))
    by_key = {r.path.split("!", 1)[1]: r for r in summary.results}
    assert by_key["day1.zip!day1/a.toy"].status == "landed"
    assert by_key["c.toy"].status == "landed"
    # the cut inner zip is quarantined under its own key, named in its error; the rest lands
    assert by_key["day2.zip"].status == "quarantined"
    assert (by_key["day2.zip"].error or "").startswith(f"{outer.resolve()}!day2.zip: corrupt zip archive")
    assert job_ids(Store(store_dir)) == ["j1", "j3"]


def test_archive_nesting_is_bounded(tmp_path: Path, store_dir: Path) -> None:
    data = b"TOY\nj1,x\n"
    for depth in range(MAX_NESTING + 2):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            zf.writestr("x.toy" if depth == 0 else f"level{depth}.zip", data)
        data = buffer.getvalue()
    archive = tmp_path / "deep.zip"
    archive.write_bytes(data)
    (result,) = pipeline.ingest_paths([archive], Store(store_dir)).results
    assert result.status == "quarantined"
    assert f"nested more than {MAX_NESTING} archives deep" in (result.error or "")


def test_a_cut_zip_is_quarantined_not_skipped(tmp_path: Path, store_dir: Path) -> None:
    archive = tmp_path / "history.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.toy", "TOY\nj1,x\n" * 50)
    archive.write_bytes(archive.read_bytes()[:-40])  # the central directory is lost
    (result,) = pipeline.ingest_paths([archive], Store(store_dir)).results
    assert result.status == "quarantined"
    assert "corrupt zip archive" in (result.error or "")


def test_ingest_lines_name_each_archive_member(tmp_path: Path, store_dir: Path) -> None:
    from click.testing import CliRunner

    from phaseline.cli import main

    archive = tmp_path / "h.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("done/a.toy", "TOY\nj1,x\n")
        zf.writestr("done/b.toy", "TOY\nj2,x\n")
    result = CliRunner().invoke(main, ["ingest", str(archive), "--store", str(store_dir)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("landed")]
    assert [line.split()[1] for line in lines] == [f"{archive}!done/a.toy", f"{archive}!done/b.toy"]


def read_buggy(path: Path, ctx: ReadContext) -> Iterator[Row]:
    yield Row("jobs", {"job_id": "buggy"})
    raise ValueError("a reader's bug")  # no phaseline error: what the fuzzers look for in real readers


BUGGY = Format("buggy", lambda head, path: head.startswith(b"BUGGY"), read_buggy, "a reader with a bug")


def test_a_readers_bug_loses_its_file_not_the_batch(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A jstack dump time of month 13 raised a ValueError out of the reader: the ingest stopped and every
    # other file of the batch was lost.  Such a bug now quarantines its file only, saying what happened.
    monkeypatch.setattr(formats, "detect", detect_among(BUGGY, TOY))
    bad = tmp_path / "bad.trace"
    bad.write_text("BUGGY\n")
    good = tmp_path / "a.toy"
    write(good, "j1,x")
    summary = pipeline.ingest_paths([bad, good], Store(store_dir))
    by_name = {Path(r.path).name: r for r in summary.results}
    assert by_name["a.toy"].status == "landed"
    assert by_name["bad.trace"].status == "quarantined"
    assert "internal error while reading it (ValueError: a reader's bug); a phaseline bug" in (
        by_name["bad.trace"].error or "")
    assert job_ids(Store(store_dir)) == ["j1"]  # the buggy file's row before the error is not kept
