"""The .jhist reader's counters as columns equal its counter-by-counter reading, on any input."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.jhist_counters import counter_columns, counter_entries
from ingest.jhist_schema import BadEvent
from phaseline.runs import Runs


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
