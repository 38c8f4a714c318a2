"""Faults amid good data: 1.x counters strings that break off, and archives refused whole, not partly read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.archives import unpacked
from ingest.base import ReadContext
from ingest.counters_v1 import parse_counters
from phaseline.errors import TraceParseError
from tests.ingest.archive_helpers import Pack, tar_of, zip_of

FS = "{(FileSystemCounters)(FileSystemCounters)[(HDFS_BYTES_READ)(HDFS_BYTES_READ)(100)]" \
     "[(FILE_BYTES_WRITTEN)(FILE_BYTES_WRITTEN)(200)]"  # fmt: skip
JOB = "{(org.apache.hadoop.mapred.JobInProgress$Counter)(Job Counters )[(TOTAL_LAUNCHED_MAPS)(Launched map tasks)(2)]}"


def counters(text: str) -> tuple[list[tuple[str, str, int]], ReadContext]:
    ctx = ReadContext(Path("h.log"))
    got = [(g, c, v) for g, _, c, _, v in parse_counters(text, Path("h.log"), 7, ctx=ctx)]
    return got, ctx


@pytest.mark.parametrize(
    ("bad", "at"),
    [
        ("[(X)(Total time (ms))(5)]}", "'[(X)(Total time (ms))(5)]}"),  # an unescaped "(" in a name
        ("[(X)(X)(5)", "'[(X)(X)(5){(org"),  # a counter without its "]"
        ("", "'{(org"),  # a group without its "}"
    ],
)
def test_a_bad_counter_keeps_the_counters_before_it_and_the_groups_after(bad: str, at: str) -> None:
    got, ctx = counters(FS + bad + JOB)
    assert got == [
        ("FileSystemCounters", "HDFS_BYTES_READ", 100),
        ("FileSystemCounters", "FILE_BYTES_WRITTEN", 200),
        ("org.apache.hadoop.mapred.JobInProgress$Counter", "TOTAL_LAUNCHED_MAPS", 2),
    ]
    (error,) = ctx.skipped
    assert error.line == 7
    assert f"COUNTERS: malformed counters in group 'FileSystemCounters' at character {len(FS)}: {at}" in str(error)
    assert f"read on at the next group, character {len(FS) + len(bad)}" in error.message


def test_counters_whose_closing_brace_was_cut_are_kept() -> None:
    got, ctx = counters("{(g)(G)" + "[(c)(C)(1)]" * 3)
    assert got == [("g", "c", 1)] * 3
    (error,) = ctx.skipped
    assert "malformed counters in group 'g' at character 40: the text ends before its '}'" in error.message


def test_text_that_is_no_group_is_skipped_up_to_the_next_group() -> None:
    got, ctx = counters("{garbage \\{(x)(y) {(a)}" + JOB)  # an escaped brace starts no group
    assert got == [("org.apache.hadoop.mapred.JobInProgress$Counter", "TOTAL_LAUNCHED_MAPS", 2)]
    (error,) = ctx.skipped
    assert error.message.startswith("COUNTERS: malformed counters at character 0: '{garbage")


def test_without_a_context_a_bad_group_raises_after_the_counters_before_it() -> None:
    gen = parse_counters(FS + "[(X)(Total time (ms))(5)]}" + JOB, Path("h.log"), 7)
    assert next(gen)[2] == "HDFS_BYTES_READ"
    assert next(gen)[2] == "FILE_BYTES_WRITTEN"
    with pytest.raises(TraceParseError, match=r"h.log:7: COUNTERS: malformed counters in group"):
        next(gen)


# -- archives ------------------------------------------------------------------------------


@pytest.mark.parametrize("pack", [tar_of, zip_of])
def test_an_archive_past_the_size_cap_is_refused_whole(tmp_path: Path, pack: Pack) -> None:
    archive = pack(tmp_path / "three", ("a.txt", b"0123456789"), ("b.txt", b"0123456789"), ("c.txt", b"x"))
    with pytest.raises(TraceParseError, match=r"archive unpacks to more than 15 bytes") as info, unpacked(
        archive, max_bytes=15
    ):
        pass
    assert "corrupt" not in str(info.value)


@pytest.mark.parametrize("pack", [tar_of, zip_of])
@pytest.mark.parametrize("unsafe", ["link", "../evil.txt"])
def test_an_unsafe_member_amid_good_ones_refuses_the_archive(tmp_path: Path, pack: Pack, unsafe: str) -> None:
    data = None if unsafe == "link" else b"evil"
    archive = pack(tmp_path / "mixed", ("a.txt", b"ok"), (unsafe, data), ("b.txt", b"ok"))
    with pytest.raises(TraceParseError, match=rf"archive member '{unsafe}' .*(refused|outside)") as info, unpacked(
        archive
    ):
        pass
    assert "corrupt" not in str(info.value)
    assert not (tmp_path / "evil.txt").exists()


def test_a_tar_cut_short_still_keeps_the_members_before_the_cut(tmp_path: Path) -> None:
    archive = tar_of(tmp_path / "two.tar", ("a.txt", b"ok"), ("b.txt", b"x" * 4096))
    cut = tmp_path / "cut.tar"
    cut.write_bytes(archive.read_bytes()[:1024 + 512 + 100])
    with unpacked(cut) as got:
        assert [(m.name, m.path is not None) for m in got.members] == [("a.txt", True), ("b.txt", False)]
        assert got.error is not None
        assert got.error.startswith("corrupt tar archive")


def test_a_counter_value_is_read_as_long_parse_long_reads_it() -> None:
    # int() takes '1_000' (and blanks inside the parentheses); Hadoop's Long.parseLong refuses it
    got, ctx = counters("{(FileSystemCounters)(FileSystemCounters)[(A)(A)(5)][(B)(B)(1_000)][(C)(C)(7)]}")
    assert got == [("FileSystemCounters", "A", 5), ("FileSystemCounters", "C", 7)]
    (error,) = ctx.skipped
    assert "COUNTERS counter value = '1_000' is not an integer" in error.message
