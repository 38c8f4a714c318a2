"""The critical-path model (Desai et al. 2012): Figure 5 recurrences by hand, job graphs by hand, what-ifs."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phaseline.errors import PredictionError
from predict import core
from predict.core import Cluster, Dataset, JobSettings
from predict.critical_path import (
    END,
    START,
    JobShape,
    critical_path,
    job_graph,
    slot_chain_path,
    slot_predecessors,
    spread_durations,
)
from predict.longest_path import _dag_longest_path
from predict.map_pipeline import PipelineSchedule, map_task_pipeline, pipeline
from predict.shape_whatif import apply_whatif
from predict.tasks import TaskEstimate
from tests.predict.doubles import LinearPlatform, toy_profile

MB = 2**20
#: Hand-worked figures are exact up to floating point.
REL = 1e-12


# ---------------------------------------------------------------- Figure 5, by hand
def test_serial_pipeline_with_idle_flushes() -> None:
    # c_p = r_p = 1, T_r = 1, T_c = 2, DW = 1 each, buffer = 2, T_flush = 5.
    #
    #   time  0   1   2   3   4   5   6   7   8   9  ...  14
    #   core  R0  C0  C0  R1  C1  C1  R2  C2  C2
    #   W          .       W0          W1          W2
    #   flush                                       [final flush 9..14]
    #
    # eq. 1: EST_r(1) = 0; EST_r(2) = max(R0 + T_r = 1, C0 done = 3) = 3;
    #        EST_r(3) = max(R1 + 1 = 4, C1 done = 6) = 6
    # eq. 3: W2: writes W1 + W0 fill the buffer (1 + 1 >= 2) -> W0 + T_flush = 8 < 9: no stall.
    s = pipeline([1, 1, 1], [2, 2, 2], [1, 1, 1], buffer_bytes=2, t_flush=5)
    assert s.est_read == (0.0, 3.0, 6.0)
    assert s.est_compute == (1.0, 4.0, 7.0)
    assert s.est_write == (3.0, 6.0, 9.0)
    assert s.end == 14  # EST_e = 9, plus the final flush
    assert s.path == (START, "R0", "C0", "R1", "C1", "R2", "C2", "W2", END)


def test_flush_stall_is_on_the_path() -> None:
    # Same pipeline, T_flush = 10: the buffer filled at W0 (DW0 + DW1 = 2), so
    # W2 waits for W0's flush: EST_w(3) = max(9, 3 + 10) = 13; end = 13 + 10.
    #
    #   S -> R0 -> C0 -> W0 ~~flush~~> W2 -> E
    s = pipeline([1, 1, 1], [2, 2, 2], [1, 1, 1], buffer_bytes=2, t_flush=10)
    assert s.est_write == (3.0, 6.0, 13.0)
    assert s.end == 23
    assert s.path == (START, "R0", "C0", "W0", "W2", END)


def test_two_cores_one_source() -> None:
    # c_p = 2, r_p = 1, T_r = 1, T_c = 3, no buffer:
    #
    #   core A  R0 C0 C0 C0 R2 C2 C2 C2
    #   core B     R1 C1 C1 C1 R3 C3 C3 C3
    #   time    0  1  2  3  4  5  6  7  8  9
    #
    # EST_r(2) = R1 + 1 = 1 (one core free, the source free at 1);
    # EST_r(3) = max(R2-source 2, all but one compute done = C0 at 4) = 4;
    # EST_r(4) = max(R3 + 1 = 5, C1 done at 5) = 5 (a tie: the read binds).
    s = pipeline([1] * 4, [3] * 4, [0] * 4, cp=2, rp=1)
    assert s.est_read == (0.0, 1.0, 4.0, 5.0)
    assert s.end == 9
    assert s.path == (START, "R0", "C0", "R2", "R3", "C3", "W3", END)
    # The path's length is the sum of its edges' weights: T_r0 + T_c0 + T_r2 + T_r3 + T_c3.
    assert s.end == 1 + 3 + 1 + 1 + 3


def test_more_sources_than_cores_is_figure_5_clause_2() -> None:
    # r_p = 3 > c_p = 1: for c_p + 1 <= n <= r_p, EST_r(n) = min of the last c_p compute ends.
    s = pipeline([2, 2, 2], [1, 1, 1], [0, 0, 0], cp=1, rp=3)
    assert s.est_read == (0.0, 3.0, 6.0)


def test_pipeline_rejects_bad_input() -> None:
    with pytest.raises(PredictionError, match="same number"):
        pipeline([1], [1, 2], [1])
    with pytest.raises(PredictionError, match="c_p and r_p"):
        pipeline([1], [1], [1], cp=0)


# ---------------------------------------------------------------- section 3.5, by hand
def test_slots_are_taken_greedily_not_round_robin() -> None:
    # 10, 2, 2, 2 ms on 2 slots: the three short maps follow each other on the slot that keeps freeing
    # first (the job ends at 10); round robin would put the fourth behind the long one (12).
    #   slot 0: |---------- map:0 (10) ----------|
    #   slot 1: |map:1|map:2|map:3|
    assert slot_predecessors([10.0, 2.0, 2.0, 2.0], 2) == [None, None, 1, 2]
    shape = JobShape(map_ms=(10.0, 2.0, 2.0, 2.0), first_shuffle_ms=0.0, shuffle_ms=0.0, reduce_ms=(),
                     map_slots=2, reduce_slots=1)  # fmt: skip
    assert critical_path(job_graph(shape)).length_ms == 10
    # equal durations: round robin, task i after task i - k; a reduce's slot also holds its shuffle
    assert slot_predecessors([3.0] * 5, 2) == [None, None, 0, 1, 2]
    assert slot_predecessors([5.0, 1.0, 1.0], 2, first=1.0, later=4.0) == [None, None, 1]
    # a task of 0 ms frees its slot at 0 while others were never used: the next task takes an
    # unused one (it had queued behind the first, paying a later wave's whole shuffle: 25 ms, not 5)
    assert slot_predecessors([0.0, 0.0, 0.0, 0.0], 4) == [None, None, None, None]
    shape = JobShape(map_ms=(5.0,), first_shuffle_ms=0.0, shuffle_ms=20.0, reduce_ms=(0.0,) * 4,
                     map_slots=1, reduce_slots=4)  # fmt: skip
    assert critical_path(job_graph(shape)).length_ms == 5

def _shape() -> JobShape:
    return JobShape(
        map_ms=(4.0, 2.0, 1.0),
        first_shuffle_ms=1.0,
        shuffle_ms=3.0,
        reduce_ms=(5.0, 5.0),
        map_slots=2,
        reduce_slots=1,
    )


def test_job_graph_longest_path_by_hand() -> None:
    #   S ─0─> map:0 ─4────────────────> maps_done ─0─> shuffle:0 ─1─> reduce:0 ─5─> shuffle:1 ─3─> reduce:1 ─5─> E
    #   S ─0─> map:1 ─2─> map:2 ─1─────^
    # map:2 takes the slot that frees first (map:1's, at 2), not map:0's (at 4): maps_done = max(4, 2 + 1) = 4;
    # reduce:0 starts at 5; shuffle:1 at max(4, 10) = 10; reduce:1 at 13; E at 18.
    path = critical_path(job_graph(_shape()))
    assert path.length_ms == 18
    assert path.nodes == (
        START, "map:0", "maps_done", "shuffle:0", "reduce:0", "shuffle:1", "reduce:1", END,
    )  # fmt: skip
    assert path.stage_ms() == {"map": 4.0, "shuffle": 1.0 + 3.0, "reduce": 5.0 + 5.0}
    assert math.isclose(sum(path.weights_ms), path.length_ms, rel_tol=REL)


def test_map_only_job() -> None:
    #   S ─> map:0 ─3─> map:1 ─3─> maps_done ─0─> E    (one slot)
    shape = JobShape((3.0, 3.0), 0.0, 0.0, (), map_slots=1, reduce_slots=1)
    path = critical_path(job_graph(shape))
    assert path.length_ms == 6
    assert path.nodes == (START, "map:0", "map:1", "maps_done", END)


def test_whatif_recomputes_the_path() -> None:
    # Shuffle 2x faster: 4 + 0.5 + 5 + 1.5 + 5 = 16.
    assert critical_path(job_graph(apply_whatif(_shape(), "shuffle 2x faster"))).length_ms == 16
    # One more reduce wave (a third reduce like the last): 18 + 3 + 5 = 26.
    more = apply_whatif(_shape(), "one more reduce wave")
    assert more.reduce_ms == (5.0, 5.0, 5.0)
    assert critical_path(job_graph(more)).length_ms == 26
    # Maps 2x slower (8, 4, 2; map:2 after map:1): maps_done = max(8, 4 + 2) = 8, then 1 + 5 + 3 + 5 = 22.
    assert critical_path(job_graph(apply_whatif(_shape(), "map 2x slower"))).length_ms == 22
    with pytest.raises(PredictionError, match="cannot read"):
        apply_whatif(_shape(), "make it go faster")
    with pytest.raises(PredictionError, match="leaves no"):
        apply_whatif(_shape(), "3 fewer reduce waves")


def test_spread_keeps_the_mean_and_puts_the_largest_first() -> None:
    d = spread_durations(4, 10.0, 16.0)
    assert d == (16.0, 8.0, 8.0, 8.0)
    assert math.isclose(sum(d) / 4, 10.0, rel_tol=REL)


# ---------------------------------------------------------------- the registered model
@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_model_lies_within_aria_bounds(factor: float) -> None:
    profile, platform = toy_profile(), LinearPlatform()
    cluster, settings = Cluster(4, 2, 2), JobSettings(reduces=4)
    dataset = Dataset(profile.input.total_bytes * factor)
    cp = core.get("critical_path").predict(profile, platform, cluster, dataset, settings)
    b = core.get("bounds").predict(profile, platform, cluster, dataset, settings)
    assert b.low_s is not None
    assert b.high_s is not None
    assert b.low_s <= cp.seconds <= b.high_s
    (path,) = (a for a in cp.assumptions if a.startswith("critical path: "))
    assert path.startswith("critical path: S -> map:")
    assert " -> maps_done -> shuffle:" in path
    assert cp.stages["path.map"] > 0


def _path_length(
    s: PipelineSchedule, t_read: list[float], t_compute: list[float], final: float, t_flush: float
) -> float:
    """Sum of the weights of the edges on the reported path (each edge weighs its source's time)."""
    total = 0.0
    for u, v in itertools.pairwise(s.path):
        if u == START:
            continue
        k = int(u[1:])
        if u[0] == "R":
            total += t_read[k]
        elif u[0] == "C":
            total += t_compute[k]
        elif v == END:  # the final flush, if anything was written
            total += final
        elif v[0] == "W":  # a flush: W_i -> W_j
            total += t_flush
    return total


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 10, allow_nan=False),
            st.floats(0, 10, allow_nan=False),
            st.floats(0, 5, allow_nan=False),
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(1, 4),
    st.integers(1, 4),
    st.floats(0.5, 20, allow_nan=False),
    st.floats(0, 10, allow_nan=False),
)
def test_pipeline_path_explains_its_length(
    tasks: list[tuple[float, float, float]], cp: int, rp: int, buffer: float, t_flush: float
) -> None:
    # Property: the critical path's edges add up to EST_e (plus the final flush), and no
    # phase starts before its data-flow predecessor ends.
    t_read, t_compute, written = (list(x) for x in zip(*tasks, strict=True))
    s = pipeline(t_read, t_compute, written, cp=cp, rp=rp, buffer_bytes=buffer, t_flush=t_flush)
    final = t_flush if sum(written) > 0 else 0.0
    assert math.isclose(_path_length(s, t_read, t_compute, final, t_flush), s.end, rel_tol=1e-9, abs_tol=1e-9)
    for k in range(len(tasks)):
        assert s.est_compute[k] == s.est_read[k] + t_read[k]
        assert s.est_write[k] >= s.est_compute[k] + t_compute[k] - 1e-9
    assert s.end >= max(s.est_write)


def test_map_task_pipeline_overlaps_spills_by_hand() -> None:
    # Map output 2.5 sort buffers -> N = 3 chunks: T_r = 400/3, T_c = 200/3, DW = one buffer's worth,
    # T_flush = 600/3 = 200; the buffer holds one chunk, so W_n waits for W_{n-1}'s flush:
    #
    #   map thread  [R0 C0][R1 C1][R2 C2]
    #   time        0     200    400    600          800
    #   spills             [W0 ---200---][W1 ---][W2 ---]      (final flush 600..800)
    #
    # end = 800, + merge 100 + overhead 50 = 950 (the phases in series would take 1350).
    task = TaskEstimate(
        phases_ms={"read": 400.0, "map": 0.0, "collect": 200.0, "spill": 600.0, "merge": 100.0},
        data_bytes={},
        overhead_ms=50.0,
    )
    buffer = 10 * MB * 0.8
    got = map_task_pipeline(task, JobSettings(reduces=1, io_sort_mb=10), 2.5 * buffer)
    assert math.isclose(got, 950.0, rel_tol=REL)
    # Output within one buffer: nothing overlaps, the phases add up.
    assert math.isclose(
        map_task_pipeline(task, JobSettings(reduces=1, io_sort_mb=10), buffer), 1350.0, rel_tol=REL
    )
    # ... unless its records' 16 accounting bytes each (Hadoop 2+: one buffer for both) pass it: one
    # buffer of 14-byte records uses 2 1/7 buffers with their accounting -> N = 3 chunks again, 950 ms.
    records = buffer / 14
    got = map_task_pipeline(task, JobSettings(reduces=1, io_sort_mb=10), buffer, records)
    assert math.isclose(got, 950.0, rel_tol=REL)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 30).flatmap(
        lambda n: st.lists(
            st.tuples(st.integers(0, n - 2), st.integers(1, n - 1), st.sampled_from([0.0, 1.0, 2.0, 2.5, -1.0])),
            min_size=1,
            max_size=3 * n,
        )
    )
)
def test_longest_path_is_networkx_path_for_path(edges: list[tuple[int, int, float]]) -> None:
    """The model's longest path is networkx's dag_longest_path, ties and negative weights included."""
    g = nx.DiGraph()
    for u, v, w in edges:
        if u < v:  # acyclic: edges go up
            g.add_edge(f"n{u}", f"n{v}", weight=w)
        else:
            g.add_node(f"n{u}")
    assert _dag_longest_path(g) == nx.dag_longest_path(g, weight="weight", default_weight=0.0)
    g.add_edge("n1", "n0", weight=1.0)
    if nx.is_directed_acyclic_graph(g):
        return
    with pytest.raises(nx.NetworkXUnfeasible):
        _dag_longest_path(g)


_durations = st.lists(st.sampled_from([0.0, 1.0, 2.0, 2.5, 3.0, 7.25, 1e-9]), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    maps=_durations,
    reds=st.lists(st.sampled_from([0.0, 1.0, 2.0, 4.5, 1e-9]), max_size=12),
    first=st.sampled_from([0.0, 0.5, 3.0]),
    later=st.sampled_from([0.0, 2.0, 6.0]),
    map_slots=st.integers(1, 6),
    reduce_slots=st.integers(1, 4),
)
def test_the_slot_chains_give_the_graphs_path(
    maps: list[float], reds: list[float], first: float, later: float, map_slots: int, reduce_slots: int
) -> None:
    """Read off the slot chains, the path is the graph's: the same nodes, weights and length, ties and
    zero durations included; where it cannot say (E not alone at the greatest distance) it says None."""
    shape = JobShape(tuple(maps), first, later, tuple(reds), map_slots, reduce_slots)
    fast = slot_chain_path(shape)
    graph = critical_path(job_graph(shape))
    if fast is not None:
        assert (fast.length_ms, fast.nodes, fast.weights_ms) == (graph.length_ms, graph.nodes, graph.weights_ms)
    else:
        assert 0.0 in (*maps, *reds)  # only a task of 0 ms puts another node beside E at its distance


def test_the_slot_chains_answer_a_large_job_and_refuse_a_negative_duration() -> None:
    """25,601 maps of the 50 GiB benchmark's spread on 128 slots, 240 reduces on 128: read off the chains
    (no graph), the graph's path; a negative duration (a distance the walk would cut to 0) is left to the graph."""
    shape = JobShape(spread_durations(25_601, 900.0, 1300.0), 40.0, 300.0, spread_durations(240, 500.0, 800.0), 128, 128)
    fast = slot_chain_path(shape)
    assert fast is not None
    graph = critical_path(job_graph(shape))
    assert (fast.length_ms, fast.nodes, fast.weights_ms) == (graph.length_ms, graph.nodes, graph.weights_ms)
    assert slot_chain_path(JobShape((3.0, -1.0), 0.0, 0.0, (1.0,), 1, 1)) is None
