"""The pipeline counts a block of n rows as n, and quarantines a file whose block its table refuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import ingest.pipeline as pipeline
from ingest import formats
from ingest.base import ReadContext, Row, RowBlock
from ingest.formats import Format
from ingest.opening import iter_lines
from phaseline.store import Store


def read_blocky(path: Path, ctx: ReadContext) -> Iterator[Row | RowBlock]:
    """Toy format: line 2 is a job id; a further line ``n`` is n events as one block (``typo``: a bad one)."""
    job_id = ""
    for line_no, line in iter_lines(path, ctx):
        if line_no == 1:
            continue
        if line_no == 2:
            job_id = line
            yield Row("jobs", {"job_id": job_id})
            continue
        column = "sqe" if line == "typo" else "seq"
        n = 1 if line == "typo" else int(line)
        ctx.events_read += n
        yield RowBlock(
            "events", n, {column: [line_no * 1000 + i for i in range(n)], "payload_json": [line] * n},
            {"job_id": job_id, "event_type": "BLOCK"},
        )  # fmt: skip


BLOCKY = Format("blocky", lambda head, path: head.startswith(b"BLOCKY"), read_blocky, "block format")


@pytest.fixture
def blocky(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "detect", lambda path, head=None: BLOCKY)


@pytest.mark.usefixtures("blocky")
def test_reconciliation_counts_a_block_of_n_rows_as_n(tmp_path: Path, store_dir: Path) -> None:
    path = tmp_path / "a.blocky"
    path.write_text("BLOCKY\njob_1_0001\n3\n0\n4\n")
    summary = pipeline.ingest_paths([path], Store(store_dir))
    (result,) = summary.results
    assert result.status == "landed"
    assert result.events_read == 7
    assert result.rows == {"jobs": 1, "events": 7}
    assert not [n for n in result.notes if n.startswith("reconciliation")]
    con = Store(store_dir).connect()
    assert con.execute("SELECT events_read, rows_written FROM sources").fetchall() == [(7, 8)]
    seqs = [s for (s,) in con.execute("SELECT seq FROM events ORDER BY seq").fetchall()]
    assert seqs == [3000, 3001, 3002, 5000, 5001, 5002, 5003]


@pytest.mark.usefixtures("blocky")
def test_a_block_the_table_refuses_quarantines_the_file(tmp_path: Path, store_dir: Path) -> None:
    good = tmp_path / "a.blocky"
    good.write_text("BLOCKY\njob_1_0001\n2\n")
    bad = tmp_path / "b.blocky"
    bad.write_text("BLOCKY\njob_1_0002\n2\ntypo\n")
    results = {Path(r.path).name: r for r in pipeline.ingest_paths([good, bad], Store(store_dir)).results}
    assert results["a.blocky"].status == "landed"
    assert results["b.blocky"].status == "quarantined"
    assert "table 'events' has no column(s) ['sqe']" in (results["b.blocky"].error or "")
    assert results["b.blocky"].rows == {}
