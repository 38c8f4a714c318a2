"""Values from traces that a terminal, a plot, a JSON reader or the file system would take as commands.

Found by a review walkthrough (2026-11-22): a job name with rich markup, a host
name with matplotlib mathtext, NaN inside a DuckDB list, a job id that is a
path, an encrypted zip, a FIFO in a walked directory.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from ingest import pipeline
from ingest.archives import unpacked
from phaseline.cli.output import emit, to_json
from phaseline.errors import PhaselineError
from phaseline.store import Store
from profiles.analyze import job_dir_name
from profiles.report_sections import _skew_svg
from profiles.timeline_plot import write_timeline
from tests.profiles.profiles_doubles import ATTEMPTS, CONF, COUNTERS, JOB, JOBS, make_con


def test_table_output_prints_markup_in_values_literally(capsys: pytest.CaptureFixture[str]) -> None:
    emit([{"name": "word count [/] [red]2015[/red]", "[b]col[/b]": 1}], "table", title="[i]t")
    out = capsys.readouterr().out
    assert "[red]2015[/red]" in out
    assert "[/]" in out
    assert "[b]col[/b]" in out


def test_json_output_has_no_nan_at_any_depth() -> None:
    text = to_json([{"l": [float("nan"), 1.0], "s": {"a": float("inf"), "b": [float("-inf")]}, "x": float("nan")}])
    assert json.loads(text) == [{"l": [None, 1.0], "s": {"a": None, "b": [None]}, "x": None}]


def test_plot_labels_are_not_mathtext(tmp_path: Path) -> None:
    # host names and attempt ids with "$...$" are drawn as written (an unbalanced one raised ParseFatalException)
    evil = "h$\\nosuch{$x"
    skew = pd.DataFrame({"phase": ["attempt"] * 2, "task_type": ["MAP"] * 2, "host": [evil, "h2"],
                         "normalized_dur": [1.0, 1.2]})  # fmt: skip
    assert "<svg" in _skew_svg(skew)
    attempts = [{**a, "attempt_id": f"{a['attempt_id']}{evil}"} for a in ATTEMPTS]
    con = make_con({"attempts": attempts, "counters": COUNTERS, "jobs": JOBS, "conf": CONF})
    write_timeline(con, JOB, tmp_path / "t.svg")
    assert "<svg" in (tmp_path / "t.svg").read_text()


@pytest.mark.parametrize("job_id", ["../../escaped", "/tmp/absolute", "a/b", ".hidden", "..", "x" * 300])
def test_job_output_directories_stay_inside_the_output(tmp_path: Path, job_id: str) -> None:
    name = job_dir_name(job_id)
    out = tmp_path / "out"
    target = (out / name).resolve()
    assert target.parent == out.resolve()
    assert len(name) <= 100
    assert name != job_dir_name(job_id + "_")  # two ids, two directories
    assert job_dir_name("job_1329348432655_0001") == "job_1329348432655_0001"


def test_an_encrypted_zip_member_is_quarantined_by_name_not_a_traceback(tmp_path: Path) -> None:
    archive = tmp_path / "enc.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("done/job.jhist", b"Avro-Json\n")
    raw = bytearray(archive.read_bytes())
    raw[6] |= 0x1  # general purpose flag bit 0 in the local header: "encrypted"
    central = raw.rfind(b"PK\x01\x02")
    raw[central + 8] |= 0x1  # ... and in the central directory
    archive.write_bytes(bytes(raw))
    with unpacked(archive) as got:
        (member,) = got.members
    assert (member.name, member.path) == ("done/job.jhist", None)
    assert "encrypted" in (member.error or "")
    (result,) = pipeline.ingest_paths([archive], Store(tmp_path / "store")).results
    assert result.status == "quarantined"
    assert (result.error or "").startswith(f"{archive.resolve()}!done/job.jhist: damaged zip member")


def _history_dir(fixtures_dir: Path, tmp_path: Path, copies: int) -> Path:
    """A history directory of real files: Dr. Elephant's two jobs (history + conf), ``copies`` times over
    (each copy ends in one more blank line: as a byte-identical copy it would be skipped as a copy)."""
    src = fixtures_dir / "linkedin-dr-elephant" / "history-done"
    folder = tmp_path / "done"
    for k in range(copies):
        (folder / f"day{k}").mkdir(parents=True)
        for f in sorted(src.iterdir()):
            (folder / f"day{k}" / f.name).write_bytes(f.read_bytes() + b"\n" * k)
    return folder


def test_a_cut_tar_gz_keeps_every_member_before_the_cut(fixtures_dir: Path, tmp_path: Path) -> None:
    folder = _history_dir(fixtures_dir, tmp_path, 3)
    archive = tmp_path / "history.tgz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(folder, arcname="done")
    whole = {r.path.split("!", 1)[1]: r for r in pipeline.ingest_paths([archive], Store(tmp_path / "whole")).results}
    assert len(whole) == 12
    archive.write_bytes(archive.read_bytes()[: archive.stat().st_size * 6 // 10])  # a download cut at 60 %
    results = pipeline.ingest_paths([archive], Store(tmp_path / "store")).results
    landed = [r for r in results if r.status == "landed"]
    assert 4 <= len(landed) < 12
    for r in landed:  # each complete member lands as it does from the whole archive
        assert r.rows == whole[r.path.split("!", 1)[1]].rows
    broken = [r for r in results if r.status == "quarantined"]
    assert [(r.error or "").split(": ", 1)[1].split(":")[0] for r in broken] == [
        "the tar archive breaks off inside this member", "corrupt tar archive"]
    assert broken[0].path.startswith(f"{archive.resolve()}!done/")
    assert broken[1].path == str(archive.resolve())
    assert f"(the {len(landed)} members before it were read)" in (broken[1].error or "")


def test_a_zip_with_one_damaged_member_lands_the_others(fixtures_dir: Path, tmp_path: Path) -> None:
    folder = _history_dir(fixtures_dir, tmp_path, 2)
    archive = tmp_path / "history.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(folder.rglob("*")):
            zf.write(f, f.relative_to(tmp_path).as_posix())
    with zipfile.ZipFile(archive) as zf:
        victim = next(i for i in zf.infolist() if i.filename.endswith(".jhist"))
    raw = bytearray(archive.read_bytes())
    data_at = victim.header_offset + 30 + len(victim.filename.encode()) + len(victim.extra)
    raw[data_at + victim.compress_size // 2] ^= 0xFF  # one byte of its compressed data
    archive.write_bytes(bytes(raw))
    results = {r.path.split("!", 1)[1]: r for r in pipeline.ingest_paths([archive], Store(tmp_path / "store")).results}
    assert len(results) == 8
    bad = results.pop(victim.filename)
    assert bad.status == "quarantined"
    assert "damaged zip member" in (bad.error or "")
    assert {r.status for r in results.values()} == {"landed"}
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_walked_directories_skip_fifos_and_broken_links(tmp_path: Path) -> None:
    (tmp_path / "a.jhist").write_text("x")
    os.mkfifo(tmp_path / "pipe.jhist")
    (tmp_path / "gone.jhist").symlink_to(tmp_path / "nowhere")
    assert [p.name for p in pipeline.iter_files([tmp_path])] == ["a.jhist"]
    with pytest.raises(PhaselineError, match="not a regular file"):
        list(pipeline.iter_files([tmp_path / "pipe.jhist"]))


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_a_member_that_cannot_be_placed_is_quarantined_and_the_others_land(
    fixtures_dir: Path, tmp_path: Path, kind: str
) -> None:
    # A file named like a directory another member needs ('done' and 'done/x'), and a 300-character
    # name: each raised an OSError out of the unpacking that stopped the whole ingest
    conf = (fixtures_dir / "linkedin-dr-elephant" / "history-done" / "job_1526555215992_0001_conf.xml").read_bytes()
    members = [("done", b"not a trace"), ("done/job_1526555215992_0001_conf.xml", conf), ("x" * 300, conf),
               ("ok/job_1526555215992_0001_conf.xml", conf + b"\n")]  # fmt: skip
    archive = tmp_path / f"h.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as zf:
            for name, data in members:
                zf.writestr(name, data)
    else:
        with tarfile.open(archive, "w") as tf:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    results = {r.path.split("!", 1)[1]: r for r in pipeline.ingest_paths([archive], Store(tmp_path / "s")).results}
    assert results["ok/job_1526555215992_0001_conf.xml"].status == "landed"
    for name in ("done/job_1526555215992_0001_conf.xml", "x" * 300):
        assert results[name].status == "quarantined"
        assert "cannot be unpacked" in (results[name].error or "")


def test_text_with_utf16_surrogates_lands_mended(fixtures_dir: Path, tmp_path: Path) -> None:
    # A Java-escaped lone surrogate in a .properties value failed the Parquet write outside the reader
    # (the whole ingest stopped); in a Rumen job name it failed the events payload.  A pair becomes its
    # character, a lone half U+FFFD; every other file of the batch lands.
    props = tmp_path / "conf.properties"
    props.write_text("mapreduce.job.name=ab\\uD800cd\nmapreduce.job.tags=\\uD83D\\uDE00\n")
    trace = json.loads((fixtures_dir / "apache-hadoop/hadoop-gridmix/wordcount.json").read_text())
    trace["jobName"] = "Word\ud800Count"
    trace["jobProperties"] = {"deep": json.loads("[" * 300 + "]" * 300)}  # past orjson's 255 levels
    rumen = tmp_path / "trace.json"
    rumen.write_text(json.dumps(trace))
    good = fixtures_dir / "linkedin-dr-elephant/history-done/job_1526555215992_0001_conf.xml"
    store = Store(tmp_path / "s")
    results = pipeline.ingest_paths([props, rumen, good], store).results
    assert [r.status for r in results] == ["landed"] * 3
    con = store.connect()
    values = dict(con.execute("SELECT key, value FROM conf WHERE key LIKE 'mapreduce.job.%' "
                              "AND job_id LIKE 'props_%'").fetchall())  # fmt: skip
    assert values == {"mapreduce.job.name": "ab\ufffdcd", "mapreduce.job.tags": "\U0001f600"}
    assert con.execute("SELECT name FROM jobs WHERE job_id = 'job_201009241532_0001'").fetchone() == (
        "Word\ufffdCount",)


def test_a_number_past_pythons_4300_digit_limit_is_named_not_an_internal_error(tmp_path: Path) -> None:
    # int() refuses more than 4,300 digits with a plain ValueError (not a JSONDecodeError): it escaped the
    # Rumen, REST and run.json readers.  Each now names the value as unreadable.
    digits = "7" * 5000
    rumen = tmp_path / "trace.json"
    rumen.write_text('{"jobID": "job_1_0001", "submitTime": ' + digits + '}\n{"jobID": "job_1_0002"}\n')
    rest = tmp_path / "rest.json"
    rest.write_text(json.dumps({"jobs": {"job": [{"id": "job_1_0003", "submitTime": digits},
                                                 {"id": "job_1_0004"}]}}))  # fmt: skip
    run = tmp_path / "run" / "run.json"
    run.parent.mkdir()
    run.write_text('{"format": "phaseline-engine-run", "version": 1, "job_id": "j", "submit_ms": ' + digits + "}")
    results = pipeline.ingest_paths([rumen, rest, run], Store(tmp_path / "s")).results
    assert [r.status for r in results] == ["partial", "partial", "quarantined"]
    assert "malformed JSON: Exceeds the limit (4300 digits)" in (results[0].error or "")
    assert "job_1_0003.submitTime = '777" in (results[1].error or "")
    assert "run.json is not valid JSON: ValueError" in (results[2].error or "")
    assert not [r for r in results if "internal error" in (r.error or "")]
