"""The simulator's replays: a job by hand, seeds, slots, failures, and every replay a valid schedule."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phaseline.errors import PredictionError
from predict.simulate import SimJob, StageDist, replicate, simulate_once
from tests.predict.doubles import _job

#: Replications in the invariant tests (the model's default is 200).
REPS = 100


def test_deterministic_job_by_hand() -> None:
    # 4 maps of 10 on 2 slots -> maps end at 20; one reduce launched at slow start
    # (after the first map, t = 10): its shuffle ends one first-shuffle tail after
    # the map stage, 20 + 1 = 21, then 5 of reduce.
    #
    #   slot 0  [m0 0-10][m2 10-20]
    #   slot 1  [m1 0-10][m3 10-20]
    #   reduce            [shuffle 10 .... 21][reduce 21-26]
    job = SimJob(
        map_means_ms=(10.0,) * 4,
        map_cv=0.0,
        n_reduces=1,
        first_shuffle=StageDist(1.0),
        shuffle=StageDist(6.0),
        reduce=StageDist(5.0),
        nodes=1,
        map_slots_per_node=2,
        reduce_slots_per_node=1,
        slowstart=0.25,
    )
    run = simulate_once(job, np.random.default_rng(0), record=True)
    assert run.makespan_ms == 26
    reduce = next(a for a in run.attempts if a.task_type == "REDUCE")
    assert (reduce.start_ms, reduce.shuffle_end_ms, reduce.end_ms) == (10, 21, 26)
    # No slow start (LocalJobRunner): the first wave starts at 20 and only the tail is left: 20 + 1 + 5.
    assert simulate_once(dataclasses.replace(job, slowstart=1.0), np.random.default_rng(0)).makespan_ms == 26
    # A second reduce on the one slot is a later wave: a whole shuffle, 26 + 6 + 5.
    two = simulate_once(dataclasses.replace(job, n_reduces=2), np.random.default_rng(0), record=True)
    assert two.makespan_ms == 37


def test_same_seed_same_result_and_interval_order() -> None:
    a = replicate(_job(), replications=REPS, seed=7)
    b = replicate(_job(), replications=REPS, seed=7)
    assert np.array_equal(a.makespans_s, b.makespans_s)
    lo, hi = a.interval_s
    assert lo <= a.mean_s <= hi
    assert a.events >= REPS * (24 + 2 * 6)


def test_a_cluster_of_a_million_nodes_lists_no_more_slots_than_tasks() -> None:
    # `predict --nodes 1000000 --map-slots-per-node 1000000` had listed 10^12 slots here and in the
    # critical path (MemoryError, or the OOM killer); only as many slots as tasks are ever taken.
    from predict.critical_path import slot_predecessors

    wide = _job(nodes=10**6, map_slots_per_node=10**6, reduce_slots_per_node=10**6)
    enough = _job(nodes=1, map_slots_per_node=24, reduce_slots_per_node=6)  # one slot per task, one node
    a = simulate_once(wide, np.random.default_rng(5), record=True)
    b = simulate_once(enough, np.random.default_rng(5), record=True)
    assert a.makespan_ms == b.makespan_ms
    assert len(a.attempts) == len(b.attempts)
    durations = [3.0, 1.0, 2.0, 5.0]
    assert slot_predecessors(durations, 10**12) == slot_predecessors(durations, 4) == [None] * 4
    assert slot_predecessors(durations, 2) == [None, None, 1, 0]  # 2 and 0 both free at 3: the lower slot


@pytest.mark.parametrize("slots", [1, 2, 3, 4, 6])
def test_more_slots_never_slower(slots: int) -> None:
    # Identical tasks (cv = 0): list scheduling is monotone in the slots, replication by replication.
    fixed = _job(
        map_cv=0.0, shuffle=StageDist(2000.0), reduce=StageDist(1500.0), first_shuffle=StageDist(500.0)
    )
    base = simulate_once(dataclasses.replace(fixed, map_slots_per_node=slots), np.random.default_rng(0))
    more = simulate_once(dataclasses.replace(fixed, map_slots_per_node=slots + 1), np.random.default_rng(0))
    assert more.makespan_ms <= base.makespan_ms
    # Random durations: the mean over common seeds does not grow either.
    m1 = replicate(_job(map_slots_per_node=slots), replications=REPS, seed=3).mean_s
    m2 = replicate(_job(map_slots_per_node=slots + 1), replications=REPS, seed=3).mean_s
    assert m2 <= m1 * 1.001


def test_failures_cost_time_and_are_recorded() -> None:
    clean = replicate(_job(), replications=REPS, seed=5).mean_s
    failing = replicate(_job(failure_rate=0.2), replications=REPS, seed=5).mean_s
    assert failing > clean
    run = simulate_once(_job(failure_rate=0.2), np.random.default_rng(11), record=True)
    failed = [a for a in run.attempts if not a.succeeded]
    assert failed
    assert len({(a.task_type, a.task) for a in run.attempts if a.succeeded}) == 24 + 6
    with pytest.raises(PredictionError, match="failure_rate"):
        _job(failure_rate=1.0)


@pytest.mark.parametrize("max_attempts", [1, 4])
def test_a_higher_failure_rate_is_never_faster(max_attempts: int) -> None:
    # A task's last attempt, or a shuffle, had been cut short by the failure draw: with one attempt
    # a task "failed" into a success at a fraction of its time (3.10 s at failure rate 0, 2.22 s at
    # 0.9), and shuffles ran a fraction of their length without a failure recorded
    job = _job(map_cv=0.0, shuffle=StageDist(2000.0), first_shuffle=StageDist(500.0), reduce=StageDist(1500.0),
               max_attempts=max_attempts)  # fmt: skip
    means = [replicate(dataclasses.replace(job, failure_rate=rate), replications=REPS, seed=3).mean_s
             for rate in (0.0, 0.3, 0.6)]  # fmt: skip
    assert means == sorted(means)
    run = simulate_once(dataclasses.replace(job, failure_rate=0.6), np.random.default_rng(2), record=True)
    maps_end = max(a.end_ms for a in run.attempts if a.task_type == "MAP")
    reduces = [a for a in run.attempts if a.task_type == "REDUCE" and a.shuffle_end_ms is not None]
    assert reduces
    for a in reduces:  # every shuffle its set length: 500 ms past the maps in the first wave, else 2000
        assert a.shuffle_end_ms - max(a.start_ms, maps_end) == pytest.approx(500.0 if a.start_ms < maps_end
                                                                             else 2000.0)  # fmt: skip
    if max_attempts == 1:
        assert all(a.succeeded for a in run.attempts)
        assert all(
            a.end_ms - a.start_ms == pytest.approx(3000.0) for a in run.attempts if a.task_type == "MAP"
        )


@settings(max_examples=60, deadline=None)
@given(
    maps=st.integers(1, 40),
    reduces=st.integers(0, 6),
    nodes=st.integers(1, 3),
    map_slots=st.integers(1, 3),
    reduce_slots=st.integers(1, 2),
    failure_rate=st.sampled_from([0.0, 0.15, 0.5]),
    max_attempts=st.integers(1, 4),
    slowstart=st.sampled_from([0.0, 0.05, 0.5, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_recorded_replay_is_a_valid_schedule(
    maps: int, reduces: int, nodes: int, map_slots: int, reduce_slots: int,
    failure_rate: float, max_attempts: int, slowstart: float, seed: int,
) -> None:  # fmt: skip
    job = _job(
        map_means_ms=tuple(float(1000 + 137 * i % 900) for i in range(maps)), n_reduces=reduces, nodes=nodes,
        map_slots_per_node=map_slots, reduce_slots_per_node=reduce_slots, failure_rate=failure_rate,
        max_attempts=max_attempts, slowstart=slowstart, straggler_rate=0.1,
    )  # fmt: skip
    run = simulate_once(job, np.random.default_rng(seed), record=True)
    assert run.events == len(run.attempts) + sum(a.task_type == "REDUCE" for a in run.attempts)
    assert run.makespan_ms == max(a.end_ms for a in run.attempts)
    for kind, n, slots in (("MAP", maps, map_slots), ("REDUCE", reduces, reduce_slots)):
        mine = [a for a in run.attempts if a.task_type == kind]
        for task in range(n):  # attempts one after another, numbered; a failure retried until the limit
            tries = sorted((a for a in mine if a.task == task), key=lambda a: a.attempt)
            assert [a.attempt for a in tries] == list(range(len(tries)))
            assert all(x.end_ms <= y.start_ms for x, y in itertools.pairwise(tries))
            assert all(not a.succeeded for a in tries[:-1])
            assert tries[-1].succeeded or len(tries) == max_attempts
        for node in range(nodes):  # never more attempts at once on a node than its slots
            here = [a for a in mine if a.node == node]
            edges = sorted(
                [(a.start_ms, 1) for a in here] + [(a.end_ms, -1) for a in here]
            )  # ends first at a tie
            assert max(itertools.accumulate(d for _, d in edges), default=0) <= slots
    map_end = max(a.end_ms for a in run.attempts if a.task_type == "MAP")
    for a in run.attempts:  # a reduce's shuffle ends after the last map, and its reduce after that
        if a.task_type == "REDUCE":
            assert a.shuffle_end_ms is not None
            assert a.start_ms <= a.shuffle_end_ms <= a.end_ms
            assert a.shuffle_end_ms >= map_end
