"""Row blocks staged to Parquet exactly as the same rows one by one: same file, same checks and errors."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import phaseline.table_writer as table_writer
from ingest.base import ReadContext, Row, RowBlock, iter_rows, row_count
from ingest.jhist import read_jhist
from phaseline import schemas
from phaseline.errors import PhaselineError, SchemaError
from phaseline.runs import Runs
from phaseline.staging import StagedSource
from tests.ingest.row_block_helpers import JOB, MIXED

COUNTERS = schemas.COUNTERS.row_columns  # job_id, task_id, attempt_id, scope, group_name, counter_name, value


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
