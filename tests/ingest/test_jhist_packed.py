"""Bounded memory on large .jhist files: the packed record index and event blocks bounded in bytes."""

from __future__ import annotations

from operator import attrgetter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ingest.jhist as jhist_module
from ingest.base import ReadContext, RowBlock
from ingest.jhist import read_jhist
from ingest.jhist_packed import Packed
from ingest.jhist_records import AttemptRecord


class _SameHash(str):
    """An id whose hash collides with every other's: the packed index must still tell them apart."""

    def __hash__(self) -> int:
        return 7


def test_packed_records_are_found_by_id_through_hash_collisions() -> None:
    packed: Packed[AttemptRecord] = Packed(
        lambda a: _SameHash(a.attempt_id), attrgetter(*AttemptRecord.__slots__), lambda v: AttemptRecord(*v)
    )
    packed.pack([AttemptRecord(f"attempt_{i}", "task_1", status="SUCCEEDED", start_ms=i) for i in range(3)])
    packed.pack([AttemptRecord("attempt_9", "task_2", status="KILLED", start_ms=9)])
    assert packed.take(_SameHash("attempt_5")) is None  # same hash, no such id
    got = packed.take(_SameHash("attempt_1"))
    assert got is not None
    assert (got.attempt_id, got.start_ms) == ("attempt_1", 1)
    assert packed.take(_SameHash("attempt_1")) is None  # taken: no longer packed
    assert [(a.attempt_id, a.status) for a in packed.records()] == [
        ("attempt_0", "SUCCEEDED"), ("attempt_2", "SUCCEEDED"), ("attempt_9", "KILLED"),
    ]  # fmt: skip
    # taken, changed and packed again: found in its new chunk, and listed once
    got.status = "KILLED"
    packed.pack([got])
    assert [a.attempt_id for a in packed.records()] == ["attempt_0", "attempt_2", "attempt_9", "attempt_1"]
    again = packed.take(_SameHash("attempt_1"))
    assert again is not None
    assert again.status == "KILLED"


class _FewHashes(str):
    """Ids whose hashes fall on three values: many collisions, in every order of packing."""

    def __hash__(self) -> int:
        return int(self.rsplit("_", 1)[1]) % 3 - 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 30), max_size=8), st.lists(st.integers(0, 30), max_size=4)),
                max_size=12))  # fmt: skip
def test_packed_records_behave_as_the_dict_they_stand_for(steps: list[tuple[list[int], list[int]]]) -> None:
    """Chunks packed one after another (the index merged, not sorted again), ids taken between: every
    take finds what a dict would, and the records left come back in the order they were packed."""
    packed: Packed[AttemptRecord] = Packed(
        lambda a: _FewHashes(a.attempt_id), attrgetter(*AttemptRecord.__slots__), lambda v: AttemptRecord(*v)
    )
    model: dict[str, int] = {}  # packed id -> start_ms, in packing order
    for step, (to_pack, to_take) in enumerate(steps):
        fresh = [f"attempt_{i}" for i in dict.fromkeys(to_pack) if f"attempt_{i}" not in model]
        packed.pack([AttemptRecord(a, "task_1", status="SUCCEEDED", start_ms=step) for a in fresh])
        model.update((a, step) for a in fresh)
        for i in to_take:
            got = packed.take(_FewHashes(f"attempt_{i}"))
            expected = model.pop(f"attempt_{i}", None)
            assert (None if got is None else got.start_ms) == expected
    assert [(a.attempt_id, a.start_ms) for a in packed.records()] == list(model.items())


def test_event_blocks_are_bounded_in_bytes(
    fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # events that carry counters run to kilobytes: a block leaves once its text passes the bound
    monkeypatch.setattr(jhist_module, "_EVENT_BLOCK_BYTES", 20_000)
    path = max(sorted(fixtures_dir.rglob("*.jhist")), key=lambda p: p.stat().st_size)
    sizes: list[tuple[int, int]] = []
    rows = 0
    for item in read_jhist(path, ReadContext(path)):
        if isinstance(item, RowBlock) and item.table == "events":
            payloads = item.columns["payload_json"]
            sizes.append((item.n, sum(map(len, payloads))))
            rows += item.n
    longest = max(len(line) for line in path.read_bytes().splitlines())
    assert len(sizes) > 2
    assert all(text < 20_000 + longest for _, text in sizes)
    assert rows == sum(1 for line in path.read_bytes().splitlines()[2:] if line.strip())
