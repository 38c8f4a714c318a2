"""Counters of ``.jhist`` JhCounters records decoded as structs: their columns, a held task's layout,
and the blocks :class:`~ingest.jhist_counters.CounterBlocks` gathers (records as structs and as dicts)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from ingest.base import Row, RowBlock, iter_rows
from ingest.jhist_counters import CounterBlocks, counter_columns
from ingest.jhist_typed import JhCounters

Groups = list[tuple[str, list[tuple[str, int]]]]


def _record(groups: Groups) -> dict[str, Any]:
    """A JhCounters record as the JSON a history holds (display names too)."""
    return {"name": "COUNTERS", "groups": [
        {"name": g, "displayName": g.lower(), "counts": [{"name": n, "displayName": n.lower(), "value": v}
                                                         for n, v in counts]}
        for g, counts in groups
    ]}  # fmt: skip


def _struct(groups: Groups) -> JhCounters:
    """The same record decoded as structs, as the typed path decodes it (fresh strings each time)."""
    return msgspec.json.decode(msgspec.json.encode(_record(groups)), type=JhCounters)


TWO_GROUPS: Groups = [("g", [("a", 1), ("b", -2)]), ("h", [("c", 2**63 - 1)])]


def test_columns_are_those_of_the_record_read_as_a_dict() -> None:
    assert _struct(TWO_GROUPS).columns() == counter_columns(_record(TWO_GROUPS)) == (
        ["g", "h"], [2, 1], ["a", "b", "c"], [1, -2, 2**63 - 1])  # fmt: skip
    empty_group: Groups = [("g", []), ("h", [("c", 3)])]
    assert _struct(empty_group).columns() == counter_columns(_record(empty_group)) == (["g", "h"], [0, 1], ["c"], [3])


def test_held_shares_an_equal_layout_and_keeps_its_values() -> None:
    layout, values = _struct(TWO_GROUPS).held()
    assert layout == (("g", "h"), (2, 1), ("a", "b", "c"))
    assert values.typecode == "q"
    assert values.tolist() == [1, -2, 2**63 - 1]
    again, values_again = _struct([("g", [("a", 5), ("b", 6)]), ("h", [("c", 7)])]).held(layout)
    assert again is layout  # an equal layout: the one given, not a new object
    assert values_again.tolist() == [5, 6, 7]


@pytest.mark.parametrize(
    ("why", "groups"),
    [
        ("another group name", [("g", [("a", 1), ("b", 2)]), ("x", [("c", 3)])]),
        ("the same names split otherwise", [("g", [("a", 1)]), ("h", [("b", 2), ("c", 3)])]),
        ("another counter name", [("g", [("a", 1), ("x", 2)]), ("h", [("c", 3)])]),
        ("one counter more", [("g", [("a", 1), ("b", 2)]), ("h", [("c", 3), ("d", 4)])]),
        ("one group fewer", [("g", [("a", 1), ("b", 2)])]),
    ],
)
def test_held_tells_a_different_layout(why: str, groups: Groups) -> None:
    like, _ = _struct(TWO_GROUPS).held()
    layout, values = _struct(groups).held(like)
    assert layout != like, why
    names = counter_columns(_record(groups))
    assert layout == (tuple(names[0]), tuple(names[1]), tuple(names[2])), why
    assert values.tolist() == names[3], why


def _rows(out: list[Row | RowBlock]) -> list[tuple[Any, ...]]:
    columns = ("scope", "task_id", "attempt_id", "group_name", "counter_name", "value")
    return [tuple(r.as_dict()[c] for c in columns) for r in iter_rows(out)]


def _expected(records: list[tuple[str, str | None, str | None, Groups]]) -> list[tuple[Any, ...]]:
    return [(scope, task, attempt, g, n, v) for scope, task, attempt, groups in records
            for g, counts in groups for n, v in counts]  # fmt: skip


@pytest.mark.parametrize("as_dict", [(), (1,), (0, 2)], ids=["structs only", "a dict between", "dicts around"])
def test_a_block_holds_every_record_in_order_structs_or_dicts(as_dict: tuple[int, ...]) -> None:
    records: list[tuple[str, str | None, str | None, Groups]] = [
        ("attempt", "t1", "a1", TWO_GROUPS),
        ("task", "t1", None, [("g", [("a", 4)])]),
        ("attempt", "t2", "a2", [("k", []), ("g", [("b", 8), ("a", 9)])]),
    ]
    out: list[Row | RowBlock] = []
    blocks = CounterBlocks(out)
    for i, (scope, task, attempt, groups) in enumerate(records):
        if i in as_dict:
            blocks.add("job_1_1", scope, task, attempt, *counter_columns(_record(groups)))
        else:
            assert blocks.add_record("job_1_1", scope, task, attempt, _struct(groups)) == len(_expected([records[i]]))
    assert out == []  # (gathered until flushed)
    blocks.flush()
    (block,) = out
    assert isinstance(block, RowBlock)
    assert (block.table, block.n) == ("counters", 6)
    assert _rows(out) == _expected(records)
    assert {r.as_dict()["job_id"] for r in iter_rows(out)} == {"job_1_1"}


def test_a_record_without_counters_adds_no_rows() -> None:
    out: list[Row | RowBlock] = []
    blocks = CounterBlocks(out)
    assert blocks.add_record("job_1_1", "attempt", "t", "a", _struct([("g", [])])) == 0
    blocks.flush()
    assert out == []
