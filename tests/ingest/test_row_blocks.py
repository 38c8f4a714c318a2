"""Row blocks: rows given column by column, from the readers through the pipeline to Parquet.

A :class:`~ingest.base.RowBlock` of ``n`` rows must land exactly as the same ``n``
rows given one by one (same Parquet, same order, same checks and errors), count
``n`` in the pipeline's reconciliation, and the ``.jhist`` reader's columnar
counters must equal its counter-by-counter reading on every input, good or bad.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ingest.pipeline as pipeline
import phaseline.table_writer as table_writer
from ingest import formats
from ingest.base import ReadContext, Row, RowBlock, iter_lines, iter_rows, row_count
from ingest.formats import Format
from ingest.jhist import read_jhist
from ingest.jhist_counters import counter_columns, counter_entries
from ingest.jhist_schema import BadEvent
from phaseline import schemas
from phaseline.errors import PhaselineError, SchemaError
from phaseline.runs import Runs
from phaseline.staging import StagedSource
from phaseline.store import Store

JOB = "job_1_0001"
COUNTERS = schemas.COUNTERS.row_columns  # job_id, task_id, attempt_id, scope, group_name, counter_name, value


def _block(
    task: str | None, attempt: str | None, scope: str, counters: list[tuple[str, str, int]]
) -> RowBlock:
    return RowBlock(
        "counters",
        len(counters),
        {
            "group_name": [g for g, _, _ in counters],
            "counter_name": [c for _, c, _ in counters],
            "value": [v for _, _, v in counters],
        },
        {"job_id": JOB, "task_id": task, "attempt_id": attempt, "scope": scope},
    )


#: Rows for one table as a reader may mix them: tuples, dicts and blocks with runs of constants.
MIXED: list[Row | RowBlock] = [
    Row("counters", (JOB, None, None, "job_total", "g", "A", 1)),
    _block("task_1", None, "task", [("g", "A", 2), ("g", "B", 3)]),
    _block("task_1", "attempt_1", "attempt", [("g", "A", 4)]),
    Row("counters", {"job_id": JOB, "scope": "job_map", "group_name": "h", "counter_name": "C", "value": 5}),
    _block("task_2", "attempt_2", "attempt", [("g", "A", 6), ("h", "C", -7), ("h", "D", 2**63 - 1)]),
    _block("task_2", "attempt_2", "attempt", []),
    _block("task_2", "attempt_3", "attempt", [("g", "A", 8)]),
    Row("counters", (JOB, "task_3", None, "task", "g", "A", 9)),
    # as the .jhist reader gathers records: scope, task, attempt and group names as runs
    RowBlock(
        "counters",
        4,
        {
            "scope": Runs(["task", "attempt"], [1, 3]),
            "task_id": Runs(["task_4", "task_4"], [1, 3]),
            "attempt_id": Runs([None, "attempt_4"], [1, 3]),
            "group_name": Runs(["g", "h", "g"], [2, 0, 2]),
            "counter_name": ["A", "B", "A", "B"],
            "value": [10, 11, 12, 13],
        },
        {"job_id": JOB},
    ),
    RowBlock(
        "counters",
        2,
        {
            "scope": Runs(["task"], [2]),
            "task_id": Runs(["task_5"], [2]),
            "attempt_id": Runs([None], [2]),
            "group_name": ["h", "g"],
            "counter_name": ["C", "A"],
            "value": [14, 15],
        },
        {"job_id": JOB},
    ),
]


def _staged(staging: Path, name: str, items: Sequence[Row | RowBlock]) -> StagedSource:
    """Items added to a StagedSource as the pipeline adds them (blocks by column, rows by value)."""
    staged = StagedSource(staging, name, "f" * 64, 0, "test")
    for item in items:
        if isinstance(item, RowBlock):
            staged.add_columns(item.table, item.n, item.columns, item.constants)
        else:
            staged.add(item.table, item.values)
    return staged


def _stage(tmp_path: Path, name: str, items: Sequence[Row | RowBlock], table: str = "counters") -> pa.Table:
    """Write items through a StagedSource as the pipeline does; the file it produced for ``table``."""
    staging = tmp_path / name / table
    staging.mkdir(parents=True)
    _, files = _staged(staging, name, items).finish("landed")
    (written,) = [f for f in files if f.table == table]
    return pq.read_table(written.path)


def _as_tuples(items: list[Row | RowBlock]) -> list[Row]:
    return [Row(r.table, tuple(r.as_dict().get(c) for c in COUNTERS)) for r in iter_rows(items)]


@pytest.mark.parametrize("flush_rows", [table_writer.FLUSH_ROWS, 1, 2, 3, 5])
def test_blocks_and_the_same_rows_one_by_one_give_identical_parquet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flush_rows: int
) -> None:
    monkeypatch.setattr(table_writer, "FLUSH_ROWS", flush_rows)  # flushes inside and between blocks
    by_block = _stage(tmp_path, "blocks", MIXED)
    by_row = _stage(tmp_path, "rows", list(iter_rows(MIXED)))
    as_tuples = _stage(tmp_path, "tuples", _as_tuples(MIXED))
    assert by_block.equals(by_row)
    assert by_block.equals(as_tuples)
    assert by_block.schema == schemas.COUNTERS.schema
    assert by_block.column("value").to_pylist() == [1, 2, 3, 4, 5, 6, -7, 2**63 - 1, 8, 9, *range(10, 16)]
    assert by_block.column("group_name").to_pylist()[-6:] == ["g", "g", "g", "g", "h", "g"]
    assert by_block.column("attempt_id").to_pylist()[-6:] == [None, *["attempt_4"] * 3, None, None]
    assert by_block.column("attempt_id").to_pylist()[3:9] == [
        "attempt_1", None, "attempt_2", "attempt_2", "attempt_2", "attempt_3",
    ]  # fmt: skip
    assert set(by_block.column("source_sha256").to_pylist()) == {"f" * 64}


@pytest.mark.parametrize("flush_rows", [table_writer.FLUSH_ROWS, 1, 3])
def test_a_source_names_the_jobs_of_its_rows_however_they_came(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flush_rows: int
) -> None:
    """``sources.job_ids``: a block's constant job id is read from its runs, per-row ids from the column."""
    monkeypatch.setattr(table_writer, "FLUSH_ROWS", flush_rows)
    items: list[Row | RowBlock] = [
        *MIXED,
        RowBlock("counters", 2, {"group_name": ["g", "g"], "counter_name": ["A", "B"], "value": [1, 2]},
                 {"job_id": "job_2_0002", "scope": "job_total"}),
        Row("counters", ("job_3_0003", None, None, "job_total", "g", "A", 1)),
    ]  # fmt: skip
    for name, ways in (("blocks", items), ("rows", list(iter_rows(items))), ("tuples", _as_tuples(items))):
        record, _ = _staged(tmp_path / name, name, ways).finish("landed")
        assert record.job_ids == (JOB, "job_2_0002", "job_3_0003"), name


def test_a_table_of_wide_rows_is_written_in_smaller_row_groups(tmp_path: Path) -> None:
    # events rows carry whole trace lines: the store buffers schemas.EVENTS.flush_rows of them, not FLUSH_ROWS
    limit = schemas.EVENTS.flush_rows
    assert limit < table_writer.FLUSH_ROWS
    rows = [Row("events", {"job_id": JOB, "seq": i, "event_type": "E", "payload_json": "x" * 100})
            for i in range(2 * limit + 1)]  # fmt: skip
    staging = tmp_path / "events"
    staging.mkdir()
    staged = StagedSource(staging, "wide", "f" * 64, 0, "test")
    for row in rows:
        staged.add(row.table, row.values)
    _, files = staged.finish("landed")
    (written,) = files
    meta = pq.ParquetFile(written.path).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [limit, limit, 1]
    assert pq.read_table(written.path).column("seq").to_pylist() == list(range(2 * limit + 1))


def test_a_failed_background_write_surfaces_and_the_staged_file_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Mid-file flushes are written by the writer thread; a write that fails there (a full disk) is
    # raised by the source's next flush or its finish, and discarding the source removes its file.
    real = pq.ParquetWriter.write_table
    calls: list[int] = []

    def write_once(self: pq.ParquetWriter, table: pa.Table, *args: Any, **kw: Any) -> None:
        calls.append(table.num_rows)
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        real(self, table, *args, **kw)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", write_once)
    monkeypatch.setattr(table_writer, "FLUSH_ROWS", 2)
    staging = tmp_path / "counters"
    staging.mkdir()
    staged = StagedSource(staging, "full-disk", "f" * 64, 0, "test")
    with pytest.raises(OSError, match="No space left"):  # noqa: PT012 - the flushes come with the rows
        for item in MIXED:
            if isinstance(item, RowBlock):
                staged.add_columns(item.table, item.n, item.columns, item.constants)
            else:
                staged.add(item.table, item.values)
        staged.finish("landed")
    assert len(calls) == 2  # nothing written after the failure
    staged.discard("quarantined", "disk full")
    assert not list(staging.rglob("*.parquet"))


def test_a_forked_worker_gets_its_own_writer_thread() -> None:
    parent = table_writer._background()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:  # the parent's thread does not exist in the child: a new one is made there
        assert pool.apply(_child_writes) == 6
    assert table_writer._background() is parent


def _child_writes() -> int:
    return table_writer._background().submit(sum, [1, 2, 3]).result(timeout=10)


def test_constants_fill_every_row_and_absent_columns_are_null(tmp_path: Path) -> None:
    one_run = RowBlock("counters", 3, {"counter_name": ["A", "B", "C"], "value": [1, 2, 3]},
                       {"job_id": JOB, "scope": "job_total", "group_name": "g"})  # fmt: skip
    table = _stage(tmp_path, "const", [one_run])
    assert table.column("job_id").to_pylist() == [JOB] * 3
    assert table.column("group_name").to_pylist() == ["g"] * 3
    assert table.column("task_id").null_count == 3  # named nowhere: NULL
    assert table.column("attempt_id").null_count == 3
    # Constants that change from block to block are runs: each row keeps its own block's value.
    runs = [
        RowBlock("counters", n, {"counter_name": [f"c{i}"] * n, "value": list(range(n))},
                 {"job_id": JOB, "scope": "task", "group_name": "g", "task_id": f"task_{i}"})
        for i, n in enumerate([2, 1, 3])
    ]  # fmt: skip
    table = _stage(tmp_path, "runs", runs)
    assert table.column("task_id").to_pylist() == ["task_0"] * 2 + ["task_1"] + ["task_2"] * 3
    assert table.column("counter_name").to_pylist() == ["c0"] * 2 + ["c1"] + ["c2"] * 3


@pytest.mark.parametrize(
    ("block", "words"),
    [
        (RowBlock("counters", 1, {"counter_nmae": ["A"], "value": [1]},
                  {"job_id": JOB, "scope": "s", "group_name": "g"}), ["'counters'", "counter_nmae"]),
        (RowBlock("counters", 1, {"counter_name": ["A"], "value": [1]},
                  {"job_id": JOB, "scope": "s", "group_name": "g", "colour": "red"}), ["'counters'", "colour"]),
        (RowBlock("counters", 2, {"counter_name": ["A"], "value": [1, 2]},
                  {"job_id": JOB, "scope": "s", "group_name": "g"}), ["'counters'", "counter_name", "1 values"]),
        (RowBlock("counters", 1, {"counter_name": ["A"], "value": [1]},
                  {"job_id": JOB, "scope": "s", "group_name": "g", "value": 2}), ["'counters'", "value", "both"]),
        (RowBlock("counters", 1, {"counter_name": ["A"], "value": None},  # type: ignore[dict-item]
                  {"job_id": JOB, "scope": "s", "group_name": "g"}), ["'counters'", "value", "no sequence"]),
    ],
)  # fmt: skip
def test_a_block_that_does_not_fit_the_table_is_refused_by_name(
    tmp_path: Path, block: RowBlock, words: list[str]
) -> None:
    with pytest.raises(SchemaError) as store_error:
        _stage(tmp_path, "bad", [block])
    with pytest.raises(SchemaError) as expand_error:
        list(block.rows())
    for message in (str(store_error.value), str(expand_error.value)):
        for word in words:
            assert word in message


@pytest.mark.parametrize(
    ("block", "column"),
    [
        (RowBlock("counters", 2, {"counter_name": ["A", "B"], "value": [1, 2]},
                  {"job_id": None, "scope": "s", "group_name": "g"}), "job_id"),
        (RowBlock("counters", 2, {"counter_name": ["A", None], "value": [1, 2]},
                  {"job_id": JOB, "scope": "s", "group_name": "g"}), "counter_name"),
        (RowBlock("counters", 2, {"counter_name": ["A", "B"], "value": [1, 2]},
                  {"job_id": JOB, "group_name": "g"}), "scope"),
    ],
)  # fmt: skip
def test_null_in_a_required_column_of_a_block_is_a_schema_error(
    tmp_path: Path, block: RowBlock, column: str
) -> None:
    with pytest.raises(SchemaError, match=f"table 'counters': required column '{column}' has empty values"):
        _stage(tmp_path, "null", [block])


def test_values_of_the_wrong_type_name_table_and_column(tmp_path: Path) -> None:
    block = RowBlock("counters", 1, {"counter_name": ["A"], "value": ["not a number"]},
                     {"job_id": JOB, "scope": "s", "group_name": "g"})  # fmt: skip
    with pytest.raises(SchemaError, match="table 'counters' do not fit its schema: column 'value'"):
        _stage(tmp_path, "type", [block])
    runs = [RowBlock("counters", 1, {"counter_name": ["A"], "value": [1]},
                     {"job_id": JOB, "scope": "s", "group_name": "g", "task_id": t}) for t in ("t1", 7)]  # fmt: skip
    with pytest.raises(SchemaError, match="column 'task_id'"):
        _stage(tmp_path, "runs", runs)


def test_iter_rows_and_row_count() -> None:
    rows = list(iter_rows(MIXED))
    assert len(rows) == sum(map(row_count, MIXED)) == 16
    assert all(type(r) is Row for r in rows)
    assert rows[1].as_dict() == {"job_id": JOB, "task_id": "task_1", "attempt_id": None, "scope": "task",
                                 "group_name": "g", "counter_name": "A", "value": 2}  # fmt: skip
    assert row_count(MIXED[0]) == 1
    assert row_count(MIXED[4]) == 3
    assert rows[11].as_dict() == {"job_id": JOB, "task_id": "task_4", "attempt_id": "attempt_4", "scope": "attempt",
                                  "group_name": "g", "counter_name": "B", "value": 11}  # fmt: skip
    assert list(RowBlock("counters", 0, {}).rows()) == []


# -- the pipeline counts a block of n rows as n ---------------------------------------------


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


# -- the .jhist reader: counters as blocks, equal to reading them one by one -----------------


def _entries(counters: Any) -> tuple[list[str], list[str], list[int]] | str:
    try:
        got = list(counter_entries(counters))
    except BadEvent as exc:
        return f"BadEvent: {exc}"
    return [g for g, _, _ in got], [n for _, n, _ in got], [v for _, _, v in got]


def _columns(counters: Any) -> tuple[list[str], list[str], list[int]] | str:
    try:
        groups, sizes, names, values = counter_columns(counters)
    except BadEvent as exc:
        return f"BadEvent: {exc}"
    assert len(groups) == len(sizes)
    return list(Runs(groups, sizes)), names, values  # group names come as runs: compare them expanded


_scalars = st.one_of(
    st.text(max_size=3), st.integers(-(2**70), 2**70), st.booleans(), st.none(), st.floats(allow_nan=False),
    st.fixed_dictionaries({"long": st.integers(-5, 5)}), st.just([]),
)  # fmt: skip
_counter = st.one_of(
    st.fixed_dictionaries({"name": st.text(max_size=3), "value": st.integers(-(2**63), 2**63 - 1)}),
    st.dictionaries(st.sampled_from(["name", "value", "displayName"]), _scalars, max_size=3),
    _scalars,
)
_group = st.one_of(
    st.fixed_dictionaries({"name": st.text(max_size=3), "counts": st.lists(_counter, max_size=4)}),
    st.dictionaries(st.sampled_from(["name", "counts"]), st.one_of(_scalars, st.lists(_counter, max_size=2))),
    _scalars,
)
_record = st.one_of(
    st.fixed_dictionaries({"groups": st.lists(_group, max_size=4)}),
    st.dictionaries(st.sampled_from(["groups", "name"]), st.one_of(_scalars, st.lists(_group, max_size=2))),
    _scalars,
)


@settings(max_examples=400, deadline=None)
@given(_record)
def test_counter_columns_equal_counter_by_counter_reading(counters: Any) -> None:
    assert _columns(counters) == _entries(counters)


def test_plain_and_odd_counters_read_alike() -> None:
    plain = {"groups": [{"name": "g", "counts": [{"name": "A", "value": 1}, {"name": "B", "value": 2}]},
                        {"name": "h", "counts": []}, {"name": "i", "counts": [{"name": "C", "value": 3}]}]}  # fmt: skip
    assert _columns(plain) == (["g", "g", "i"], ["A", "B", "C"], [1, 2, 3])
    odd = {"groups": [{"name": "g", "counts": [{"name": "A", "value": {"long": 5}}]}]}  # Avro-wrapped value
    assert _columns(odd) == _entries(odd)
    bad: Any
    for bad in ({"groups": [{"name": "g", "counts": [{"name": "A"}]}]}, {"groups": [{"counts": []}]}, 7,
                {"groups": [{"name": "g", "counts": [{"name": "A", "value": True}]}]}):  # fmt: skip
        assert isinstance(_columns(bad), str)
        assert _columns(bad) == _entries(bad)


def test_jhist_rows_come_as_blocks_and_land_like_rows(fixtures_dir: Path, tmp_path: Path) -> None:
    with_blocks = 0
    for number, path in enumerate(sorted(fixtures_dir.rglob("*.jhist"))):
        items: list[Row | RowBlock] = []
        with contextlib.suppress(PhaselineError):  # cut or corrupt fixtures: the rows before the error
            items.extend(read_jhist(path, ReadContext(path)))
        blocks = [i for i in items if isinstance(i, RowBlock) and i.table == "counters"]
        assert all(b.n > 0 for b in blocks)
        assert {i.table for i in items if isinstance(i, RowBlock)} <= {
            "events",
            "counters",
            "tasks",
            "attempts",
        }
        assert not [i for i in items if isinstance(i, Row) and i.table != "jobs"]
        if not blocks:
            continue
        with_blocks += 1
        rows: list[Row | RowBlock] = list(iter_rows(items))
        assert sum(r.table == "counters" for r in rows) == sum(b.n for b in blocks)
        for table in ("events", "counters", "tasks", "attempts"):
            assert _stage(tmp_path, f"{number}-b", items, table).equals(
                _stage(tmp_path, f"{number}-r", rows, table)
            )
    assert with_blocks >= 5


def test_runs_are_the_list_they_stand_for() -> None:
    r = Runs(["a", None, "b"], [2, 0, 3])
    expanded = ["a", "a", "b", "b", "b"]
    assert len(r) == 5
    assert list(r) == expanded
    assert r == expanded
    assert expanded == r
    assert r != ["a"]
    assert [r[i] for i in range(-5, 5)] == expanded + expanded
    assert r[1:4] == expanded[1:4]
    with pytest.raises(IndexError):
        r[5]
    with pytest.raises(ValueError, match="one count per value"):
        Runs(["a"], [1, 2])
    with pytest.raises(ValueError, match="negative"):
        Runs(["a"], [-1])


def test_event_payloads_are_written_without_a_dictionary(fixtures_dir: Path, store_dir: Path) -> None:
    """``payload_json`` (``TableSpec.plain``) is stored plain; the other columns keep their dictionaries."""
    path = next(iter(sorted(fixtures_dir.rglob("mapreduce-client-jobclient/*.jhist"))))
    pipeline.ingest_paths([path], Store(store_dir))
    (events_file,) = sorted(store_dir.rglob("data/*/events/*.parquet"))
    meta = pq.ParquetFile(events_file).metadata
    names = meta.schema.names
    encodings = {names[i]: set(meta.row_group(0).column(i).encodings) for i in range(len(names))}
    assert not any("DICTIONARY" in e for e in encodings["payload_json"])
    assert any("DICTIONARY" in e for e in encodings["event_type"])
    assert pq.read_table(events_file).num_rows == meta.num_rows > 0
