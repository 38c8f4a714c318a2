"""Real 0.20 job-tracker logs damaged by hand and by mutation: only what is broken is lost."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reader_checks import mutations, read_checked

from ingest.base import ReadContext, Row, RowBlock
from ingest.history_v1 import read_history_v1
from ingest.pipeline import ingest_paths
from phaseline.store import Store
from tests.ingest.history_v1_helpers import RUMEN_TEST


def test_one_bad_counter_value_skips_that_counter_only(fixtures_dir: Path, tmp_path: Path) -> None:
    # Rumen's real 0.20 job-tracker log: the last job record's first counter value made '12x4'.
    # The record, its event and its 18 other counters land; only that counter is skipped and named.
    src = fixtures_dir / RUMEN_TEST / "sample-job-tracker-logs.gz"
    lines = (
        gzip.decompress(src.read_bytes()).decode().split("\n")
    )  # (not splitlines: a form feed is no line end)
    k = max(i for i, ln in enumerate(lines) if ln.startswith("Job ") and "COUNTERS=" in ln)
    m = re.search(r"\)\((\d+)\)\]", lines[k])
    assert m is not None
    lines[k] = lines[k][: m.start(1)] + "12x4" + lines[k][m.end(1) :]
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines))
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    (error,) = ctx.skipped
    assert error.line == k + 1
    assert "'12x4' is not an integer" in error.message
    pristine_ctx = ReadContext(src)
    pristine = list(read_history_v1(src, pristine_ctx))
    assert ctx.events_read == pristine_ctx.events_read

    def others(of: list[Row | RowBlock]) -> list[Row | RowBlock]:
        return [r for r in of if r.table not in ("counters", "events")]

    assert others(rows) == others(pristine)
    assert sum(r.table == "events" for r in rows) == sum(
        r.table == "events" for r in pristine
    )  # its event too
    assert (
        sum(r.n for r in rows if r.table == "counters")
        == sum(r.n for r in pristine if r.table == "counters") - 1
    )


def test_a_malformed_embedded_conf_keeps_the_rest_of_the_file(fixtures_dir: Path, tmp_path: Path) -> None:
    src = fixtures_dir / RUMEN_TEST / "sample-job-tracker-logs.gz"
    lines = gzip.decompress(src.read_bytes()).decode().split("\n")
    k = next(i for i, ln in enumerate(lines) if "</property>" in ln)
    lines[k] = lines[k].replace("</property>", "</propert>", 1)
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines))
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    (error,) = ctx.skipped
    assert (error.line, error.message.split(":")[0]) == (k + 1, "malformed XML")
    pristine = list(read_history_v1(src, ReadContext(src)))
    assert {r.table for r in rows} == {r.table for r in pristine}
    kept = [r for r in rows if r.table not in ("conf", "events")]
    assert kept == [r for r in pristine if r.table not in ("conf", "events")]  # every history record
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"


@pytest.fixture(scope="module")
def seed_bytes(fixtures_dir: Path) -> bytes:
    return gzip.decompress((fixtures_dir / RUMEN_TEST / "v20-single-input-log.gz").read_bytes())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), gz=st.booleans())
def test_mutated_real_history_raises_only_phaseline_errors(
    fuzz_dir: Path, seed_bytes: bytes, data: st.DataObject, gz: bool
) -> None:
    mutated = data.draw(mutations(seed_bytes))
    path = fuzz_dir / "mutated.log"
    path.write_bytes(gzip.compress(mutated) if gz else mutated)
    error = read_checked(read_history_v1, path)
    assert error is None or str(path) in str(error)
