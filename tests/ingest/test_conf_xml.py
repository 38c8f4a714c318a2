"""Job conf XML: both source styles, defused entities, damaged and cut files, encodings, mutations."""

from __future__ import annotations

import gzip
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reader_checks import mutations, parse_error, read_checked, read_reconciled, rows_of, table

from ingest import conf_xml
from ingest.base import ReadContext
from ingest.conf_xml import read_conf_xml, sniff_conf_xml
from ingest.formats import detect
from ingest.opening import read_head
from ingest.pipeline import ingest_paths
from phaseline.errors import TraceParseError
from phaseline.store import Store

HS_CONF = "apache-hadoop/mapreduce-client-hs/job_1329348432655_0001_conf.xml"
DRE_CONF = "linkedin-dr-elephant/history-done/job_1526555215992_0001_conf.xml"


def test_every_conf_fixture_parses(fixtures_dir: Path) -> None:
    files = sorted(p for p in fixtures_dir.rglob("*.xml") if sniff_conf_xml(read_head(p), p))
    assert len(files) == 6
    (fmt,) = conf_xml.FORMATS
    for path in files:
        rows, _ = read_reconciled(fmt, path)
        assert table(rows, "conf"), path


def test_loaded_from_comment_style(fixtures_dir: Path) -> None:
    rows = rows_of(read_conf_xml, fixtures_dir / HS_CONF)
    conf = table(rows, "conf")
    assert len(conf) == 387
    assert {c["job_id"] for c in conf} == {"job_1329348432655_0001"}  # from the file name
    assert Counter(c["source"] for c in conf) == {"job.xml": 381, "Unknown": 4, "mapred-default.xml": 2}
    got = {c["key"]: c["value"] for c in conf}
    assert got["mapreduce.job.ubertask.enable"] == "false"
    assert got["mapreduce.jobtracker.staging.root.dir"] == "${hadoop.tmp.dir}/mapred/staging"


def test_source_element_style(fixtures_dir: Path) -> None:
    conf = table(rows_of(read_conf_xml, fixtures_dir / DRE_CONF), "conf")
    assert len(conf) == 166
    src = {c["key"]: c["source"] for c in conf}
    assert src["mapreduce.job.maxtaskfailures.per.tracker"] == "mapred-default.xml, job.xml"
    assert src["mapreduce.job.application.attempt.id"] == "programatically"


def test_rumen_style_file_name(fixtures_dir: Path) -> None:
    path = next(
        (fixtures_dir / "apache-hadoop-mapreduce/rumen-small-trace-test/counters-format-test-logs").glob(
            "*40864_conf.xml"
        )
    )
    (row,) = table(rows_of(read_conf_xml, path), "conf")
    assert row["job_id"] == "job_201002080801_40864"
    assert row["key"] == "mapred.child.java.opts"


CONF = """<?xml version="1.0"?>
<configuration>
<property><name>a.b</name><value>1</value><source>core-default.xml</source></property>
<property><!--Loaded from mapred-site.xml--><name>c</name><value>x &amp; y</value></property>
<property><name>{key}</name><value>{job}</value></property>
<property><name>a.b</name><value>2</value></property>
</configuration>
"""


def test_job_id_property_wins_over_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "job_9_9_conf.xml"
    path.write_text(CONF.format(key="mapreduce.job.id", job="job_123_0007"))
    conf = {c["key"]: c for c in table(rows_of(read_conf_xml, path), "conf")}
    assert {c["job_id"] for c in conf.values()} == {"job_123_0007"}
    assert conf["a.b"]["value"] == "2"  # the last definition wins, as in Hadoop's Configuration
    assert conf["c"]["value"] == "x & y"
    assert conf["c"]["source"] == "mapred-site.xml"


def test_job_id_from_1x_key_or_hint(tmp_path: Path) -> None:
    path = tmp_path / "conf.xml"
    path.write_text(CONF.format(key="mapred.job.id", job="job_1_0002"))
    assert {c["job_id"] for c in table(rows_of(read_conf_xml, path), "conf")} == {"job_1_0002"}
    path.write_text(CONF.format(key="other", job="v"))
    assert {c["job_id"] for c in table(rows_of(read_conf_xml, path, hint="job_5_5"), "conf")} == {"job_5_5"}
    with pytest.raises(TraceParseError, match="no job id"):
        rows_of(read_conf_xml, path)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<configuration><property><name>x</name><value>&lol9;</value></property></configuration>
"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE configuration [ <!ENTITY secret SYSTEM "file:///etc/passwd"> ]>
<configuration><property><name>x</name><value>&secret;</value></property></configuration>
"""


@pytest.mark.alone  # asserts nothing was expanded by the time taken
@pytest.mark.parametrize("doc", [BILLION_LAUGHS, EXTERNAL_ENTITY], ids=["billion-laughs", "external-entity"])
def test_entity_attacks_are_refused(tmp_path: Path, doc: str) -> None:
    path = tmp_path / "job_1_0001_conf.xml"
    path.write_text(doc)
    fmt = detect(path)
    assert fmt is not None
    assert fmt.name == "conf_xml"
    started = time.perf_counter()
    with pytest.raises(TraceParseError, match="refused") as info:
        rows_of(read_conf_xml, path)
    assert time.perf_counter() - started < 1.0  # nothing expanded
    assert info.value.path == str(path)
    assert info.value.line is not None


@pytest.mark.parametrize(
    ("doc", "line", "what"),
    [
        ("<settings>\n<property/></settings>", 1, "not <configuration>"),
        ("", 1, "no element found"),
    ],
)
def test_malformed_conf_names_file_and_line(tmp_path: Path, doc: str, line: int, what: str) -> None:
    path = tmp_path / "job_1_0001_conf.xml"
    path.write_text(doc)
    parse_error(read_conf_xml, path, line, what)


def _conf_damaged(fixtures_dir: Path, tmp_path: Path, damage: str) -> tuple[Path, list[str], int]:
    """The Hadoop 2 History Server's real conf, damaged halfway: the file, its lines, the damaged line (1-based)."""
    lines = (fixtures_dir / HS_CONF).read_text().splitlines(keepends=True)
    at = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].lstrip().startswith("<property>"))
    if damage == "nameless":
        lines.insert(at, "<property><value>orphan</value><source>job.xml</source></property>\n")
    elif damage == "cut":
        lines = [*lines[:at], lines[at][: len(lines[at]) // 2]]
    else:  # a tag broken by a flipped byte
        lines[at] = lines[at].replace("<name>", "<na#me>", 1)
    path = tmp_path / "job_1329348432655_0001_conf.xml"
    path.write_text("".join(lines))
    return path, lines, at + 1


@pytest.mark.parametrize(
    ("damage", "status", "message"),
    [
        ("nameless", "partial", "1 unreadable record skipped (line {at})"),
        ("cut", "partial", "the XML ends inside the document"),
        ("malformed", "partial", "1 unreadable record skipped (line {at})"),
    ],
)
def test_a_damaged_conf_keeps_every_property_it_can(
    fixtures_dir: Path, tmp_path: Path, damage: str, status: str, message: str
) -> None:
    path, _, at = _conf_damaged(fixtures_dir, tmp_path, damage)
    ctx = ReadContext(path)
    got = table(list(read_conf_xml(path, ctx)), "conf")
    pristine = table(rows_of(read_conf_xml, fixtures_dir / HS_CONF), "conf")
    if damage == "nameless":  # every property but the nameless one
        assert got == pristine
        assert [(e.line, e.message) for e in ctx.skipped] == [(at, "a <property> has no <name>")]
    else:  # the properties before the damaged line, in file order
        keys = [row["key"] for row in got]
        assert 100 < len(got) < len(pristine)
        assert keys == [row["key"] for row in pristine][: len(keys)]
        assert got == [row for row in pristine if row["key"] in set(keys)]
        error = ctx.cut if damage == "cut" else ctx.skipped[0]
        assert error is not None
        assert error.line == at
    assert ctx.events_read == len(got)
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == status
    assert message.format(at=at) in (result.error or "")


def test_a_cut_gzipped_conf_keeps_the_properties_before_the_cut(fixtures_dir: Path, tmp_path: Path) -> None:
    text = (fixtures_dir / HS_CONF).read_bytes()
    cut = gzip.compress(text)
    path = tmp_path / "job_1329348432655_0001_conf.xml.gz"
    path.write_bytes(cut[: len(cut) * 95 // 100])
    ctx = ReadContext(path)
    got = table(list(read_conf_xml(path, ctx)), "conf")
    pristine = table(rows_of(read_conf_xml, fixtures_dir / HS_CONF), "conf")
    assert 100 < len(got) < len(pristine)
    assert [r["key"] for r in got] == [r["key"] for r in pristine][: len(got)]
    assert ctx.cut is not None
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"


def test_a_conf_unreadable_from_its_first_property_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "job_1_0001_conf.xml"
    path.write_text("<configuration>\n<property><name>a</name>\n<value>1</valu></property></configuration>")
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "quarantined"
    assert "malformed XML: mismatched tag: line 3" in (result.error or "")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_conf_raises_only_phaseline_errors(
    fuzz_dir: Path, fixtures_dir: Path, data: st.DataObject
) -> None:
    seed = (fixtures_dir / DRE_CONF).read_bytes()[:6000]
    path = fuzz_dir / "job_1_0001_conf.xml"
    path.write_bytes(data.draw(mutations(seed)))
    error = read_checked(read_conf_xml, path)
    assert error is None or str(path) in str(error)


@pytest.mark.parametrize("encoding", ["Big5", "UTF-7", "bogus"])
def test_a_conf_in_an_encoding_the_parser_cannot_read_is_refused_by_name(
    tmp_path: Path, encoding: str
) -> None:
    # expat raised a ValueError (or LookupError) that escaped the reader
    path = tmp_path / "job_1_0001_conf.xml"
    path.write_bytes(f'<?xml version="1.0" encoding="{encoding}"?>\n<configuration><property><name>a</name>'
                     "<value>1</value></property></configuration>\n".encode())  # fmt: skip
    with pytest.raises(TraceParseError, match="declares an encoding the parser cannot read") as info:
        list(read_conf_xml(path, ReadContext(path)))
    assert info.value.line == 1


def test_an_embedded_conf_in_such_an_encoding_costs_only_itself(fixtures_dir: Path, tmp_path: Path) -> None:
    from ingest.history_v1 import read_history_v1

    src = fixtures_dir / "apache-hadoop-mapreduce/rumen-small-trace-test/sample-job-tracker-logs.gz"
    text = gzip.decompress(src.read_bytes()).decode()
    damaged = text.replace('encoding="UTF-8"', 'encoding="Big5"', 1)
    assert damaged != text
    path = tmp_path / "log.txt"
    path.write_text(damaged)
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    (error,) = ctx.skipped
    assert "declares an encoding the parser cannot read" in error.message
    pristine = list(read_history_v1(src, ReadContext(src)))
    assert len([r for r in rows if r.table == "jobs"]) == len([r for r in pristine if r.table == "jobs"]) == 4
