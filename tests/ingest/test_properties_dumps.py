"""Dr. Elephant ``.properties`` dumps: job conf and counters, malformed and cut entries, the syntax, mutations."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reader_checks import mutations, read_checked, read_reconciled, rows_of, table

from ingest import properties
from ingest.base import ReadContext
from ingest.opening import read_head
from ingest.pipeline import ingest_paths
from ingest.properties import read_properties, sniff_properties
from phaseline.store import Store

MRDATA = "linkedin-dr-elephant/mrdata"


def test_every_properties_fixture_parses(fixtures_dir: Path) -> None:
    files = sorted((fixtures_dir / MRDATA).glob("*.properties"))
    assert len(files) == 6
    assert all(sniff_properties(read_head(p), p) for p in files)
    (fmt,) = properties.FORMATS
    for path in files:
        _, ctx = read_reconciled(fmt, path)
        assert ctx.events_read > 0, path


def test_job_conf_properties(fixtures_dir: Path) -> None:
    path = fixtures_dir / MRDATA / "sampleJobConf.properties"
    conf = table(rows_of(read_properties, path), "conf")
    assert len(conf) == 4
    assert {c["source"] for c in conf} == {"properties"}
    job_ids = {c["job_id"] for c in conf}
    assert len(job_ids) == 1
    assert job_ids.pop().startswith("props_")
    assert {c["job_id"] for c in table(rows_of(read_properties, path, hint="job_1_2"), "conf")} == {"job_1_2"}
    assert next(c["value"] for c in conf if c["key"] == "azkaban.link.execution.url").endswith(
        "execid=1654676"
    )


def test_counter_properties(fixtures_dir: Path) -> None:
    job = table(rows_of(read_properties, fixtures_dir / MRDATA / "sampleJobCounter.properties"), "counters")
    assert {c["scope"] for c in job} == {"job_total"}
    values = {(c["group_name"], c["counter_name"]): c["value"] for c in job}
    assert values[("org.apache.hadoop.mapreduce.JobCounter", "TOTAL_LAUNCHED_MAPS")] == 3
    assert ("Shuffle Errors", "BAD_ID") in values  # Dr. Elephant wrote "Shuffle&nbspErrors"
    mapper = table(
        rows_of(read_properties, fixtures_dir / MRDATA / "mapperTaskCounter1.properties"), "counters"
    )
    assert {c["scope"] for c in mapper} == {"task"}
    assert len(mapper) == 25
    same = table(
        rows_of(read_properties, fixtures_dir / MRDATA / "mapperTaskCounter2.properties"), "counters"
    )
    assert mapper == same  # identical content, identical stable id


def test_a_malformed_counter_entry_is_skipped_and_its_group_kept(fixtures_dir: Path, tmp_path: Path) -> None:
    # Dr. Elephant's real mapper counters with one entry made unreadable: the other 24 counters land
    src = fixtures_dir / MRDATA / "mapperTaskCounter1.properties"
    lines = src.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if "MAP_INPUT_RECORDS=" in ln)
    lines[at] = lines[at].replace("MAP_INPUT_RECORDS=", "MAP_INPUT_RECORDS=x", 1)
    path = tmp_path / "c.properties"
    path.write_text("".join(lines))
    ctx = ReadContext(path, job_id_hint="job_1_1")
    got = table(list(read_properties(path, ctx)), "counters")
    (error,) = ctx.skipped
    assert str(error).startswith(f"{path}:{at + 1}: counter group 'org.apache.hadoop.mapreduce.TaskCounter': "
                                 "malformed entry 'MAP_INPUT_RECORDS=x")  # fmt: skip
    pristine = table(rows_of(read_properties, src, hint="job_1_1"), "counters")
    assert got == [c for c in pristine if c["counter_name"] != "MAP_INPUT_RECORDS"]
    assert len(got) == 24
    assert ctx.events_read == 24
    assert ingest_paths([path], Store(tmp_path / "store")).results[0].status == "partial"


def test_a_counter_of_5000_digits_is_skipped_and_its_group_kept(tmp_path: Path) -> None:
    # int() refuses more than 4,300 digits: its ValueError had escaped the reader
    path = tmp_path / "c.properties"
    path.write_text("org.apache.hadoop.mapreduce.TaskCounter={A=1, B=" + "5" * 5000 + ", C=3}\n")
    ctx = ReadContext(path, job_id_hint="job_1_1")
    got = table(list(read_properties(path, ctx)), "counters")
    assert [(c["counter_name"], c["value"]) for c in got] == [("A", 1), ("C", 3)]
    (error,) = ctx.skipped
    assert "Exceeds the limit (4300 digits)" in error.message


def _read_conf(tmp_path: Path, text: str) -> tuple[dict[str, str], ReadContext]:
    """A ``.properties`` file of ``text``, read: its conf as a dict, and the read's context."""
    path = tmp_path / "p.properties"
    path.write_text(text)
    ctx = ReadContext(path)
    return {c["key"]: c["value"] for c in table(list(read_properties(path, ctx)), "conf")}, ctx


def test_a_properties_file_cut_in_a_continuation_keeps_the_entries_before(tmp_path: Path) -> None:
    conf, ctx = _read_conf(tmp_path, "a=1\nb=2\nc=three \\\n")
    assert conf == {"a": "1", "b": "2"}
    assert ctx.cut is not None
    assert ctx.cut.line == 3
    result = ingest_paths([ctx.path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert "ends in a line continuation" in (result.error or "")


@pytest.mark.parametrize(
    "cut_after", ["TaskCounter", "TaskCounter=", "TaskCounter={MAP_OUTPUT_MATERIALIZED_BYTES=84, "]
)
def test_a_counters_dump_cut_inside_its_last_group_keeps_the_groups_before(
    fixtures_dir: Path, tmp_path: Path, cut_after: str
) -> None:
    # Dr. Elephant's job counters cut inside the TaskCounter line: they had all landed as conf strings
    src = fixtures_dir / MRDATA / "sampleJobCounter.properties"
    data = src.read_bytes()
    path = tmp_path / "c.properties"
    path.write_bytes(data[: data.index(cut_after.encode()) + len(cut_after)])
    ctx = ReadContext(path, job_id_hint="job_1_1")
    rows = list(read_properties(path, ctx))
    assert table(rows, "conf") == []
    got = table(rows, "counters")
    pristine = table(rows_of(read_properties, src, hint="job_1_1"), "counters")
    assert got == [c for c in pristine if c["group_name"] == "org.apache.hadoop.mapreduce.JobCounter"
                   or c["group_name"].startswith("org.apache.hadoop.mapreduce.lib.")
                   or c["group_name"].endswith("FileSystemCounter")]  # fmt: skip
    assert {c["scope"] for c in got} == {"job_total"}
    assert ctx.cut is not None
    assert ctx.cut.line == 5
    assert "ends inside counter group 'org.apache.hadoop.mapreduce.Task" in ctx.cut.message
    assert ctx.skipped == []
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert result.rows.get("counters") == len(got)


def test_a_conf_whose_first_values_look_like_maps_stays_a_conf(tmp_path: Path) -> None:
    conf, ctx = _read_conf(tmp_path, "a={x=1}\nb=plain")
    assert conf == {"a": "{x=1}", "b": "plain"}
    assert ctx.cut is None


def test_properties_syntax(tmp_path: Path) -> None:
    path = tmp_path / "p.properties"
    path.write_text("a.b = one\\\n    two\nc:3\n! note\nd\\u0041=x\\ty\n")
    conf = {c["key"]: c["value"] for c in table(rows_of(read_properties, path), "conf")}
    assert conf == {"a.b": "onetwo", "c": "3", "dA": "x\ty"}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_properties_raise_only_phaseline_errors(
    fuzz_dir: Path, fixtures_dir: Path, data: st.DataObject
) -> None:
    seed = (fixtures_dir / MRDATA / "sampleJobCounter.properties").read_bytes()
    path = fuzz_dir / "c.properties"
    path.write_bytes(data.draw(mutations(seed)))
    error = read_checked(read_properties, path)
    assert error is None or str(path) in str(error)
