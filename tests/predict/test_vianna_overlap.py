"""The overlap weights of every (class, thread group) at once (predict.vianna.overlap._all_pairs) are the
pair-by-pair sums (``_each_pair``, also the fallback for a timeline out of start order), bit for bit: the
same integral tables, ``np.interp``'s reading and the same order of sums."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from predict.vianna.layout import Formulation, Workload, build_layout
from predict.vianna.overlap import _overlap_weights, overlap_weights
from predict.vianna.timeline import build_timeline


@settings(max_examples=150, deadline=None)
@given(
    nodes=st.integers(1, 4),
    maps=st.integers(1, 40),
    reduces=st.integers(0, 9),
    slots=st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(1, 4)),
    slowstart=st.sampled_from([None, 0.0, 0.5, 1.0]),
    means=st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.25, 1.0, 3.0, 7.5]), min_size=200, max_size=200),
)
def test_every_pair_at_once_is_pair_by_pair(
    nodes: int, maps: int, reduces: int, slots: tuple[int, int, int], slowstart: float | None, means: list[float]
) -> None:
    """Walks of few distinct durations (boxes that start where others end, tasks of no length), map-only
    jobs, slow start at 0 and 1: the weights are the pair-by-pair ones to the last bit."""
    pm, pr, ps = slots
    work = Workload(nodes, 2, 1, maps, reduces, pm, pr, ps, network_per_node=True, slowstart=slowstart)
    layout = build_layout(work, Formulation.CLASS)
    class_means = [max(means[c % len(means)], 0.01) if c % 7 else means[c % len(means)] for c in range(layout.size)]
    timeline = build_timeline(class_means, layout.map_groups, layout.reduce_groups, ps, map_stage_sync=True,
                              start_after_maps=work.start_after_maps)  # fmt: skip
    got, want = overlap_weights(layout, timeline), _overlap_weights(layout, timeline, pair_by_pair=True)
    assert got[0].tobytes() == want[0].tobytes()
    assert got[1].tobytes() == want[1].tobytes()
