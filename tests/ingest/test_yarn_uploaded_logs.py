"""YARN's aggregated logs as the NodeManagers uploaded them (TFiles, the indexed format), read as
`yarn logs` prints them.

The files and Hadoop's own `yarn logs -applicationId` output of the same applications are in
`tests/data/yarn/uploaded` (README there): Hadoop's LogsCLI is the oracle, frame for frame.
"""

from __future__ import annotations

import datetime as dt
import gzip
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.formats import detect
from ingest.opening import open_binary, read_head
from ingest.pipeline import ingest_paths
from ingest.yarn_tfile import MAGIC, _Bytes, _Value, is_tfile, open_rendered
from phaseline.store import Store
from profiles import queries

DATA = Path(__file__).parents[1] / "data" / "yarn" / "uploaded"
NONE_APP = DATA / "tfile-none" / "application_1795978996971_0001"
GZ_APP = DATA / "tfile-gz" / "application_1795979106815_0001"
IFILE_APP = DATA / "ifile-gz" / "application_1795979624443_0001"


def _frames(text: bytes) -> list[bytes]:
    """`yarn logs` output cut at its `Container:` lines (one frame per container and file), sorted."""
    return sorted(f for f in re.split(rb"(?=^Container: )", text, flags=re.M) if f)


def _oracle(app: Path) -> bytes:
    return gzip.decompress((DATA / "yarn-logs" / f"{app.name}.log").with_suffix(".log.gz").read_bytes())


def _rendered(path: Path) -> bytes:
    with open_binary(path) as fh:  # as every reader opens a file
        return fh.read()


def _kept_mtime(copy: Path, original: Path) -> None:
    """The oracle's `LogLastModifiedTime` is the uploaded file's time; a checkout's files are newer."""
    node = re.escape(original.name.encode())
    found = re.search(rb"on " + node + rb"\n(?:.*\n){3}LogLastModifiedTime:(.*)", _oracle(original.parent))
    assert found is not None
    stamp = found.group(1).decode()
    when = dt.datetime.strptime(stamp, "%a %b %d %H:%M:%S %z %Y").timestamp()
    os.utime(copy, (when, when))


def test_vlongs_decode_as_hadoops_utils_reads_them() -> None:
    # bytes of the fixtures' own blocks: a 16-byte offset, a 45,737-byte value chunk, -1 (a null string)
    assert [_Bytes(iter((bytes.fromhex(h),))).vlong() for h in ("10", "a8b2a9", "ff", "e0", "df00", "840100000000")] == [
        16, 45737, -1, -32, 4864, 1 << 32]  # fmt: skip


@pytest.mark.parametrize("app", [NONE_APP, GZ_APP, IFILE_APP], ids=["tfile-none", "tfile-gz", "ifile-gz"])
def test_each_node_file_renders_as_hadoops_yarn_logs_prints_it(app: Path, tmp_path: Path) -> None:
    oracle = _frames(_oracle(app))
    rendered: list[bytes] = []
    for node_file in sorted(app.iterdir()):
        copy = tmp_path / node_file.name
        shutil.copyfile(node_file, copy)
        _kept_mtime(copy, node_file)
        frames = _frames(_rendered(copy))
        assert frames, node_file
        assert all(f.startswith(b"Container: container_") and f" on {node_file.name}\n".encode() in f
                   for f in frames)  # fmt: skip
        rendered += frames
    if app is not NONE_APP:  # both nodes' files are here: the whole output, byte for byte
        assert sorted(rendered) == oracle
    else:  # one node of two: its frames are the oracle's frames of that node
        assert rendered == [f for f in oracle if b" on localhost_33093\n" in f.split(b"\n", 1)[0] + b"\n"]


def test_a_tfile_is_sniffed_from_its_magic_and_detected_as_yarn_logs() -> None:
    node_file = next(GZ_APP.iterdir())
    assert is_tfile(node_file.read_bytes()[:64])
    assert node_file.read_bytes().endswith(MAGIC)
    head = read_head(node_file)
    assert head.startswith(b"Container: container_1795979106815_0001_01_")
    fmt = detect(node_file, head)
    assert fmt is not None
    assert fmt.name == "yarn-aggregated-logs"


def _phases(con: Any, job_id: str) -> list[tuple[Any, ...]]:
    frame = queries.phases(con, job_id)
    columns = ["attempt_id", "phase", "start_ms", "end_ms", "data_bytes", "data_records"]
    return sorted(frame[columns].astype(str).itertuples(index=False, name=None))


@pytest.mark.parametrize("app", [GZ_APP, IFILE_APP], ids=["tfile", "ifile"])
def test_the_uploaded_files_land_the_same_rows_as_their_yarn_logs_output(app: Path, tmp_path: Path) -> None:
    oracle = tmp_path / f"{app.name}.log"
    oracle.write_bytes(_oracle(app))
    from_files = ingest_paths([app], Store(tmp_path / "a"))
    from_output = ingest_paths([oracle], Store(tmp_path / "b"))
    assert [r.status for r in from_files.results] == ["landed", "landed"]
    assert {r.format for r in from_files.results} == {"yarn-aggregated-logs"}
    assert from_output.results[0].status == "landed"
    rows = {t: sum(r.rows.get(t, 0) for r in from_files.results) for t in ("attempts", "tasks", "counters", "attempt_phases")}
    assert rows == {t: from_output.results[0].rows.get(t, 0) for t in rows}
    job = app.name.replace("application_", "job_")
    a, b = Store(tmp_path / "a").connect(), Store(tmp_path / "b").connect()
    assert _phases(a, job) == _phases(b, job)
    assert len(_phases(a, job)) > 20
    for con in (a, b):
        summary = queries.job_summary(con, job)
        assert summary[["status", "total_maps", "total_reduces"]].values.tolist() == [["SUCCEEDED", 2, 1]]


def test_an_upload_cut_short_keeps_the_files_before_the_cut(tmp_path: Path) -> None:
    node_file = NONE_APP / "localhost_33093"
    data = node_file.read_bytes()
    whole = _rendered(node_file)
    syslog_at = data.index(b"syslog\x00")  # the task's syslog, the container's last file
    cut = tmp_path / "localhost_33093"
    cut.write_bytes(data[: syslog_at + 4000])
    result = ingest_paths([cut], Store(tmp_path / "store")).results[0]
    assert result.status == "partial", result
    assert "trailer" in (result.error or "") or "cut" in (result.error or ""), result.error
    text = bytearray()

    def read_all() -> None:
        with open_rendered(cut) as fh:
            while piece := fh.read1(1 << 16):
                text.extend(piece)

    with pytest.raises(EOFError, match="no trailer"):
        read_all()
    files = re.findall(rb"^LogType:(\S+)", text, flags=re.M)
    assert files == re.findall(rb"^LogType:(\S+)", whole, flags=re.M)  # every file's frame, the last one cut
    assert text.count(b"End of LogType:") == len(files) - 1
    assert whole.startswith(text.split(b"LogLastModifiedTime")[0])


@pytest.mark.parametrize("damage", ["lzo", "not-logs", "ifile-codec", "ifile-index"])
def test_uploaded_logs_it_cannot_read_are_quarantined_with_the_reason(damage: str, tmp_path: Path) -> None:
    source = {"lzo": GZ_APP / "localhost_46247", "not-logs": NONE_APP / "localhost_33093"}.get(
        damage, IFILE_APP / "localhost_34781")
    data = bytearray(source.read_bytes())
    want: str | None = None
    if damage == "lzo":  # the meta index names the data index's compression: `gz` -> one it cannot read
        at = data.index(b"data:BCFile.index\x02gz") + len(b"data:BCFile.index")
        data[at : at + 3] = b"\x02lz"
        want = "'lz'"
    elif damage == "not-logs":  # the first key of an aggregated log is VERSION; another key is no log of containers
        at = data.index(b"\x00\x07VERSION")
        data[at + 2 : at + 9] = b"VARSION"
    elif damage == "ifile-codec":  # the serialized index names the logs' codec; its first log is empty
        at = data.index(b"\x00\x02gz")
        data[at + 2 : at + 4] = b"lz"
        want = "'lz'"
    else:  # a file's start, past the logs
        at = data.index(b"startIndex")
        data[at - 40 : at] = bytes(40)
        want = "IFile"
    bad = tmp_path / source.name
    bad.write_bytes(bytes(data))
    result = ingest_paths([bad], Store(tmp_path / "store")).results[0]
    # a codec it cannot read, met after the first log (an empty one) was rendered: what came before lands
    assert result.status == ("partial" if damage == "ifile-codec" else "quarantined"), result
    assert str(bad) in (result.error or "")
    if want is not None:
        assert want in (result.error or "")
        assert "yarn logs -applicationId" in (result.error or "")


def test_damage_after_the_first_container_keeps_the_containers_before_it(tmp_path: Path) -> None:
    node_file = GZ_APP / "localhost_36643"  # the ApplicationMaster's container first, then a map and the reduce
    data = bytearray(node_file.read_bytes())
    at = len(data) * 3 // 4  # inside the one gz block, past the AM's logs
    data[at : at + 8] = bytes(8)
    damaged = tmp_path / node_file.name
    damaged.write_bytes(bytes(data))
    result = ingest_paths([damaged], Store(tmp_path / "store")).results[0]
    assert result.status == "partial", result
    assert "damaged, what follows unread" in (result.error or "")
    assert result.rows.get("jobs") == 1  # the AM's container: the job's row
    assert result.rows.get("events", 0) > 100


def test_a_value_in_several_chunks_reads_as_one() -> None:
    # Chunk.ChunkEncoder: -n before n bytes with more to come, n before the last n (here a log file's
    # name, length and bytes split across three chunks, one boundary inside the name's length)
    body = b"\x00" + b"\x06syslog" + b"\x00\x011" + b"x"
    chunks = [body[:1], body[1:9], body[9:]]
    encoded = b"".join(bytes([256 - len(c)]) + c for c in chunks[:-1]) + bytes([len(chunks[-1])]) + chunks[-1]
    value = _Value(_Bytes(iter((encoded[:5], encoded[5:]))))
    assert value.utf() == "syslog"
    assert value.utf() == "1"
    assert value.read(1) == b"x"
    assert value.utf() is None


def _hadoop_vlong(n: int) -> bytes:
    """TFile's ``Utils.writeVLong`` (Hadoop's encoder, its Java cases in Python), for the round trip."""
    if -32 <= n < 128:
        return n.to_bytes(1, "big", signed=True)
    length = (~n if n < 0 else n).bit_length() // 8 + 1
    first = n >> ((length - 1) * 8)
    if length <= 2:
        first >>= 8 * (2 - length)  # (case 1 falls through to case 2 with one more shift)
        if -20 <= first < 20:
            return (first - 52).to_bytes(1, "big", signed=True) + (n & 0xFF).to_bytes(1, "big")
        first >>= 8
    if length <= 3:
        if -16 <= first < 16:
            return (first - 88).to_bytes(1, "big", signed=True) + (n & 0xFFFF).to_bytes(2, "big")
        first >>= 8
    if length <= 4:
        if -8 <= first < 8:
            return ((first - 112).to_bytes(1, "big", signed=True) + ((n & 0xFFFFFFFF) >> 8 & 0xFFFF).to_bytes(2, "big")
                    + (n & 0xFF).to_bytes(1, "big"))  # fmt: skip
        return (length - 129).to_bytes(1, "big", signed=True) + (n & 0xFFFFFFFF).to_bytes(4, "big")
    return (length - 129).to_bytes(1, "big", signed=True) + (n & ((1 << 8 * length) - 1)).to_bytes(length, "big")


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_vlongs_round_trip_through_hadoops_encoding(n: int) -> None:
    assert _Bytes(iter((_hadoop_vlong(n),))).vlong() == n
