"""The overlap weights of every (class, thread group) at once (predict.vianna.overlap._all_pairs) are the
pair-by-pair sums, bit for bit: the same integral tables, ``np.interp``'s reading and the same order of sums."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from predict.vianna.layout import Formulation, JobLayout, Workload, build_layout
from predict.vianna.overlap import _integral_tables, overlap_weights
from predict.vianna.timeline import Timeline, build_timeline


def _pair_by_pair(layout: JobLayout, timeline: Timeline) -> tuple[np.ndarray, np.ndarray]:
    """overlap_weights as it was first written: one (class, thread group) at a time (the reference)."""
    inst = timeline.instances
    size = layout.size
    owners = sorted(set(inst.owner))
    owner_index = {o: k for k, o in enumerate(owners)}
    profile = np.vstack([layout.owner_nodes[o] for o in owners])
    together = profile @ profile.T
    cls, cnt = np.array(inst.cls), np.array(inst.count, dtype=np.float64)
    own = np.array([owner_index[o] for o in inst.owner])
    s, e = np.array(inst.start), np.array(inst.end)
    live = e - s > 0
    scale = np.where(live, cnt / np.where(live, e - s, 1.0), 0.0)
    anywhere, same_node = np.zeros((size, size)), np.zeros((size, size))
    live_at = np.flatnonzero(live)
    key = cls[live_at] * len(owners) + own[live_at]
    by_key = np.argsort(key, kind="stable")
    order, sorted_key = live_at[by_key], key[by_key]
    for pair in np.unique(key).tolist():
        j, o = divmod(pair, len(owners))
        sel = order[sorted_key == pair]
        times, area = _integral_tables(s[sel], e[sel], cnt[sel])
        near = np.flatnonzero((e >= times[0]) & (s <= times[-1]))
        covered = scale[near] * (np.interp(e[near], times, area) - np.interp(s[near], times, area))
        np.add.at(anywhere[:, j], cls[near], covered)
        np.add.at(same_node[:, j], cls[near], covered * together[own[near], o])
    per_task = np.zeros(size)
    np.add.at(per_task, cls[live], cnt[live])
    out = []
    for weights in (anywhere, same_node):
        weights -= np.diag(per_task)
        weights /= layout.counts[:, None]
        out.append(np.maximum(weights, 0.0))
    return out[0], out[1]


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
    got, want = overlap_weights(layout, timeline), _pair_by_pair(layout, timeline)
    assert got[0].tobytes() == want[0].tobytes()
    assert got[1].tobytes() == want[1].tobytes()
