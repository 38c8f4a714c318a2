"""The token walk's rounds of shuffle-sorts (predict.vianna.timeline._Walk.rounds) against the plain event walk."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predict.vianna import timeline
from predict.vianna.timeline import MapGroup, ReduceGroup, Timeline, build_timeline

MAP, SHUFFLE, MERGE = 0, 1, 2


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every round of shuffle-sorts through the heap, one event at a time (the walk without rounds)."""
    monkeypatch.setattr(timeline._Walk, "rounds", lambda self, r, now: now)


def _rows(t: Timeline) -> tuple[list[tuple[object, ...]], tuple[float, ...]]:
    return [(i.cls, i.count, i.start, i.end, i.owner, i.lanes) for i in t.instances], t.sync_points


def test_a_waves_tokens_run_in_rounds_of_every_lane() -> None:
    # 4 map threads, 2 maps each; one reduce thread, 2 lanes, 8 shuffle-sorts of 0.1 s, a 0.5 s merge:
    #
    #   maps     |  M (x4)  |  M (x4)  |
    #   lane 0              |S|S|      |S|S|
    #   lane 1              |S|S|      |S|S|
    #   merge                                |  merge  |
    #            0          1   1.2    2   2.2       2.7
    #
    # each map wave leaves 4 tokens: two rounds of both lanes, the second before any other event
    t = build_timeline([1.0, 0.1, 0.5], [MapGroup(4, (MAP, MAP))], [ReduceGroup(1, {MAP: SHUFFLE}, MERGE, 8)], 2)
    kinds = [(i.cls, i.count, i.lanes) for i in t.instances]
    assert kinds == [
        (MAP, 4, (0,)), (MAP, 4, (0,)),
        (SHUFFLE, 2, (0, 1)), (SHUFFLE, 2, (0, 1)), (SHUFFLE, 2, (0, 1)), (SHUFFLE, 2, (0, 1)),
        (MERGE, 1, (-1,)),
    ]  # fmt: skip
    spans = [x for i in t.instances for x in (i.start, i.end)]
    assert spans == pytest.approx([0, 1, 1, 2, 1, 1.1, 1.1, 1.2, 2, 2.1, 2.1, 2.2, 2.2, 2.7])
    assert t.sync_points == pytest.approx((0.0, 1.0, 2.0, 2.7))


@st.composite
def _jobs(draw: st.DrawFn) -> tuple[list[float], list[MapGroup], list[ReduceGroup], int, int]:
    n_map_classes = draw(st.integers(1, 3))
    # few distinct durations, so that events often fall on the same instant
    means = draw(st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.3, 1.0, 3.0]), min_size=n_map_classes + 4,
                          max_size=n_map_classes + 4))  # fmt: skip
    maps = [
        MapGroup(draw(st.integers(1, 6)), tuple(draw(st.lists(st.integers(0, n_map_classes - 1), min_size=1, max_size=5))))
        for _ in range(draw(st.integers(1, 3)))
    ]
    total = sum(g.count * len(g.maps) for g in maps)
    shuffle_classes = (n_map_classes, n_map_classes + 1)
    reduces = []
    for r in range(draw(st.integers(0, 3))):
        shuffle_of = {c: draw(st.sampled_from(shuffle_classes)) for c in range(n_map_classes)}
        after = r - 1 if r > 0 and draw(st.booleans()) else None
        reduces.append(ReduceGroup(draw(st.integers(1, 4)), shuffle_of, n_map_classes + 2 + r % 2, total, after))
    return means, maps, reduces, draw(st.integers(1, 6)), draw(st.integers(0, total))


@settings(max_examples=300, deadline=None)
@given(_jobs())
def test_rounds_give_the_plain_walks_timeline(job: tuple[list[float], list[MapGroup], list[ReduceGroup], int, int]) -> None:
    means, maps, reduces, ps, start_after = job
    with_rounds = build_timeline(means, maps, reduces, ps, map_stage_sync=True, start_after_maps=start_after)
    with pytest.MonkeyPatch.context() as mp:
        _plain(mp)
        plain = build_timeline(means, maps, reduces, ps, map_stage_sync=True, start_after_maps=start_after)
    assert _rows(with_rounds) == _rows(plain)  # the same instances in the same order, the same floats
