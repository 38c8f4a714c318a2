"""MVA solvers: exact answers worked by hand, approximate MVA against exact MVA, model invariants."""

from __future__ import annotations

import dataclasses
import itertools
import json
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phaseline.cli import main
from phaseline.errors import ConvergenceWarning, PredictionError
from predict.vianna.estimates import Moments, forkjoin_max, harmonic, mean_min_exponential, tripathi_max
from predict.vianna.layout import Formulation, Workload
from predict.vianna.model import Demands, Estimate, Overlap, evaluate_tree, solve
from predict.vianna.mva import (
    SparseWeights,
    eq5_mva,
    exact_mva,
    exact_mva_multiclass,
    overlap_amva,
    schweitzer_mva,
)
from predict.vianna.qnsim import simulate_network
from predict.vianna.tree import (
    Leaf,
    MapGroup,
    Node,
    ParallelAnd,
    ReduceGroup,
    Serial,
    build_timeline,
    serial_parts,
)

#: Bard-Schweitzer and eq. 5 aMVA: throughput error against exact MVA on small networks
#: (the known error is a few percent; Lazowska et al. 1984, section 7.4.2, quote < 5-10 %).
AMVA_THROUGHPUT_RTOL = 0.10
#: Floating-point tolerance for exact results.
EXACT_RTOL = 1e-12
#: Little's law / utilization law hold to this relative precision on every model solution.
LAW_RTOL = 1e-9


def test_exact_mva_two_queues_hand_worked() -> None:
    # Two queueing centers, D = (1.0, 0.5) s, N = 3, Z = 0 (Lazowska et al. 1984, Algorithm 6.1):
    # n=1: R = (1, 1/2),        R = 3/2,   X = 2/3,   Q = (2/3, 1/3)
    # n=2: R = (5/3, 2/3),      R = 7/3,   X = 6/7,   Q = (10/7, 4/7)
    # n=3: R = (17/7, 11/14),   R = 45/14, X = 14/15, Q = (34/15, 11/15)
    res = exact_mva([1.0, 0.5], 3)
    x = Fraction(14, 15)
    assert res.throughput[0] == pytest.approx(float(x), rel=EXACT_RTOL)
    assert res.response[0] == pytest.approx(45 / 14, rel=EXACT_RTOL)
    assert res.queue[0] == pytest.approx([34 / 15, 11 / 15], rel=EXACT_RTOL)
    assert res.utilization == pytest.approx([14 / 15, 7 / 15], rel=EXACT_RTOL)
    assert res.queue.sum() == pytest.approx(3.0)


def test_exact_mva_delay_center_and_think_time() -> None:
    # Queue D1 = 1, delay D2 = 2, N = 2, Z = 1:
    # n=1: R = (1, 2), X = 1/(1+3) = 1/4, Q1 = 1/4
    # n=2: R1 = 1 (1 + 1/4) = 5/4, R = 5/4 + 2 = 13/4, X = 2 / (1 + 13/4) = 8/17
    res = exact_mva([1.0, 2.0], 2, think_time=1.0, delay=[False, True])
    assert res.response[0] == pytest.approx(13 / 4, rel=EXACT_RTOL)
    assert res.throughput[0] == pytest.approx(8 / 17, rel=EXACT_RTOL)
    assert res.residence[0, 1] == pytest.approx(2.0)


def test_exact_multiclass_matches_single_class_when_classes_identical() -> None:
    # Two identical classes of 1 and 2 customers = one class of 3 customers.
    single = exact_mva([1.0, 0.5], 3)
    multi = exact_mva_multiclass([[1.0, 0.5], [1.0, 0.5]], [1, 2])
    assert multi.throughput.sum() == pytest.approx(single.throughput[0], rel=EXACT_RTOL)
    assert multi.queue.sum(axis=0) == pytest.approx(single.queue[0], rel=EXACT_RTOL)


@pytest.mark.parametrize("seed", range(12))
def test_approximate_mva_within_known_error_of_exact(seed: int) -> None:
    rng = np.random.default_rng(seed)
    demands = rng.uniform(0.05, 2.0, size=(2, 3))
    for pops in itertools.product(range(1, 4), range(1, 4)):
        exact = exact_mva_multiclass(demands, pops)
        for approx in (schweitzer_mva(demands, pops), eq5_mva(demands, pops)):
            assert approx.throughput == pytest.approx(exact.throughput, rel=AMVA_THROUGHPUT_RTOL)
            assert np.all(approx.utilization < 1.0)


def test_amva_exact_for_single_customer() -> None:
    # One customer meets no queue: every approximation must give R = sum of demands.
    for solver in (schweitzer_mva, eq5_mva):
        res = solver([[0.3, 0.7, 1.0]], [1])
        assert res.response[0] == pytest.approx(2.0)


def test_overlap_amva_with_full_overlap_is_eq5_on_one_center() -> None:
    # Three single-task classes that always overlap, one center: eq. 6 with alpha = 1 is eq. 2.
    d = np.array([[0.4], [1.0], [0.7]])
    weights = (1.0 - np.eye(3))[None, :, :]
    sol = overlap_amva(d, np.array([1.0]), weights)
    ref = eq5_mva(d, [1, 1, 1])
    assert sol.response == pytest.approx(ref.response, rel=1e-8)


def test_overlap_amva_without_overlap_is_contention_free() -> None:
    d = np.array([[0.4, 0.1], [1.0, 0.3]])
    sol = overlap_amva(d, np.array([2.0, 1.0]), np.zeros((2, 2, 2)))
    assert sol.response == pytest.approx(d @ np.array([2.0, 1.0]))


def test_estimates() -> None:
    assert harmonic(4) == pytest.approx(25 / 12)
    assert harmonic(1000) == pytest.approx(sum(1 / i for i in range(1, 1001)), rel=1e-12)
    fj = forkjoin_max([(Moments.exponential(2.0), 1), (Moments.exponential(3.0), 1)])
    assert fj.mean == pytest.approx(1.5 * 3.0)
    # max of k iid exponentials has mean H_k * mean: Tripathi's numerical maximum must find it
    trip = tripathi_max([(Moments.exponential(3.0), 4)])
    assert trip.mean == pytest.approx(harmonic(4) * 3.0, rel=1e-4)
    assert trip.var == pytest.approx(9.0 * (1 + 1 / 4 + 1 / 9 + 1 / 16), rel=1e-3)
    # max of a deterministic 5 and an exponential(1): 5 + e^-5
    det = tripathi_max([(Moments(5.0, 0.0), 1), (Moments.exponential(1.0), 1)])
    assert det.mean == pytest.approx(5.0 + np.exp(-5.0), rel=1e-4)
    assert mean_min_exponential([8.0, 8.0, 4.0]) == pytest.approx(2.0)


def test_leaves_spread_as_measured_replace_the_exponential_in_tripathis_maximum() -> None:
    # four parallel maps of 3 s then a 1 s merge: exponential leaves give H_4 x 3 + 1; leaves of cv 0
    # the plain 3 + 1; cv 0.2 lies between, and fork/join (means only) is the same either way
    wave = ParallelAnd(((Leaf(0, 3.0), 4),), phase=True)
    tree = Serial((wave, Leaf(1, 1.0)))
    exponential = evaluate_tree(tree, Estimate.TRIPATHI)
    assert exponential.mean == pytest.approx(harmonic(4) * 3.0 + 1.0, rel=1e-4)
    assert evaluate_tree(tree, Estimate.TRIPATHI, [1.0, 1.0]) == exponential
    assert evaluate_tree(tree, Estimate.TRIPATHI, [0.0, 0.0]).mean == pytest.approx(4.0, rel=1e-9)
    spread = evaluate_tree(tree, Estimate.TRIPATHI, [0.2, 0.5])
    # the max of 4 gamma (shape 25) draws of mean 3: 3.6365 by 400,000 draws of numpy's gamma
    assert spread.mean - 1.0 == pytest.approx(3.6365, abs=2e-3)
    assert spread.var == pytest.approx(evaluate_tree(wave, Estimate.TRIPATHI, [0.2]).var + 0.25, rel=1e-9)
    for cv in (None, [0.0, 0.0], [0.2, 0.5]):
        assert evaluate_tree(tree, Estimate.FORKJOIN, cv).mean == pytest.approx(harmonic(1) * 3.0 + 1.0)


def test_solve_reads_each_task_kinds_spread_and_only_tripathi_uses_it() -> None:
    from predict.vianna.layout import TaskKind

    demands = Demands({"cpu": 1.0, "disk": 0.5}, {"cpu": 0.1, "disk": 0.1}, {"cpu": 2.0})
    work = Workload(2, 2, 1, 16, 2, 2, 1, 5)
    narrow = {TaskKind.MAP: 0.1, TaskKind.SHUFFLE_SORT: 0.1, TaskKind.MERGE: 0.1}
    exponential = dict.fromkeys(TaskKind, 1.0)
    plain = solve(demands, work, estimate=Estimate.TRIPATHI)
    assert solve(demands, work, estimate=Estimate.TRIPATHI, task_cv=exponential).response_time_s == plain.response_time_s
    assert solve(demands, work, estimate=Estimate.TRIPATHI, task_cv=narrow).response_time_s < plain.response_time_s
    fj = solve(demands, work, estimate=Estimate.FORKJOIN).response_time_s
    assert solve(demands, work, estimate=Estimate.FORKJOIN, task_cv=narrow).response_time_s == fj


def test_per_task_formulation_refuses_huge_jobs() -> None:
    demands = Demands({"cpu": 1.0}, {"cpu": 0.1}, {"cpu": 2.0})
    with pytest.raises(PredictionError, match="class formulation"):
        solve(demands, Workload(10, 4, 1, 1000, 100, 2, 1, 1), formulation=Formulation.PER_TASK)


@pytest.mark.parametrize(
    ("maps", "reduces"),
    # 400 map waves x 120 reduce waves; 12,701 map waves; 5,000,000 reduces (both refused unbuilt)
    [(800, 240), (25_402, 240), (8, 5_000_000)],
)
def test_a_job_of_too_many_waves_is_refused_at_once(maps: int, reduces: int) -> None:
    # Once, 800 x 240 tasks on one node of two slots built a 48,520-class layout and asked for
    # 15 GiB; now the model says why it cannot answer (`predict --model all` shows it as the note).
    demands = Demands({"cpu": 1.0}, {"cpu": 0.1}, {"cpu": 2.0})
    with pytest.raises(PredictionError, match=r"map waves on 1 node\(s\) of 2 map slot\(s\).*limit 2,500"):
        solve(demands, Workload(1, 4, 1, maps, reduces, 2, 2, 5))


def test_a_chain_deeper_than_the_recursion_limit_is_evaluated() -> None:
    node: Node = Leaf(0, 1.0)
    for _ in range(5_000):
        node = Serial((Leaf(0, 1.0), node))
    for estimate in Estimate:
        assert evaluate_tree(node, estimate).mean == pytest.approx(5_001.0)


def test_a_job_of_hundreds_of_phases_is_solved() -> None:
    # 1,000 maps on 2 slots: 500 phases chained by S nodes, deeper than Python's recursion limit once.
    demands = Demands({"cpu": 1.0, "disk": 0.5}, {"cpu": 0.1, "disk": 0.1}, {"cpu": 2.0})
    sol = solve(demands, Workload(1, 4, 1, 1000, 2, 2, 2, 5))
    assert sol.layout.size > 1000 / 2
    # the maps alone take 500 waves of at least their demand (1.5 s) each
    assert sol.tree_response_s > 500 * 1.5


_demand = st.floats(min_value=0.0, max_value=5.0, allow_nan=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dm=st.tuples(st.floats(0.1, 5.0), _demand, _demand, _demand),
    ds=st.tuples(_demand, _demand, _demand, _demand),
    dr=st.tuples(st.floats(0.1, 20.0), _demand, _demand, _demand),
    nodes=st.integers(1, 3),
    cpus=st.integers(1, 4),
    maps=st.integers(1, 12),
    reduces=st.integers(1, 4),
    pm=st.integers(1, 3),
    ps=st.integers(1, 3),
    jobs=st.integers(1, 3),
    estimate=st.sampled_from(list(Estimate)),
    overlap=st.sampled_from(list(Overlap)),
    network_per_node=st.booleans(),
)
def test_littles_law_and_utilization_on_every_solution(
    dm: tuple[float, ...],
    ds: tuple[float, ...],
    dr: tuple[float, ...],
    nodes: int,
    cpus: int,
    maps: int,
    reduces: int,
    pm: int,
    ps: int,
    jobs: int,
    estimate: Estimate,
    overlap: Overlap,
    network_per_node: bool,
) -> None:
    devices = ("cpu", "disk", "fiber", "network")
    demands = Demands(
        dict(zip(devices, dm, strict=True)),
        dict(zip(devices, ds, strict=True)),
        dict(zip(devices, dr, strict=True)),
    )
    work = Workload(nodes, cpus, 1, maps, reduces, pm, 1, ps, jobs, network_per_node=network_per_node)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = solve(demands, work, estimate=estimate, overlap=overlap)
    # Little's law for the jobs: N = X R
    assert sol.throughput_per_s * sol.response_time_s == pytest.approx(jobs, rel=LAW_RTOL)
    for dev, u in sol.utilization.items():
        assert 0.0 <= u <= 1.0 + LAW_RTOL, (dev, u)
        # a server's queue holds at least the customer in service: Q >= U (Little's law at the server)
        assert sol.queue_length[dev] >= u * (1 - LAW_RTOL)
    # every task takes at least its demand; the job at least its longest task
    assert sol.task_response_s["map"] >= sum(dm[:3]) * (1 - LAW_RTOL)  # maps put nothing on the network
    assert sol.response_time_s >= max(sol.task_response_s.values()) * (1 - LAW_RTOL)


TABLE2_PM1_PS1 = (
    "task,cpu,fiber,disk,network\n"
    "map,5.0764,0.0677,3.1844,0.0000\n"
    "shuffle_sort,0.5217,0.0087,0.4082,0.1850\n"
    "merge,37.4983,1.2583,59.2157,0.0000\n"
)


def test_a_network_link_per_node_shares_the_shuffle_out() -> None:
    # A shuffle-heavy job on 4 nodes: the paper's one network serializes every fetch; a link per node
    # (the predictor's reading) spreads them over the reduces' nodes.  On one node the two are the same.
    demands = Demands({"cpu": 2.0, "disk": 1.0}, {"network": 1.5, "disk": 0.2}, {"cpu": 3.0, "disk": 2.0})
    shared = solve(demands, Workload(4, 4, 1, 32, 8, 2, 2, 5))
    per_node = solve(demands, Workload(4, 4, 1, 32, 8, 2, 2, 5, network_per_node=True))
    # both are network-bound: 8 reduces x 32 fetches x 1.5 s x 3/4 remote = 288 s on one server, a quarter
    # of it on each of the 4 links
    assert shared.response_time_s == pytest.approx(288.0)
    assert per_node.response_time_s == pytest.approx(288.0 / 4)
    assert shared.utilization["network"] == pytest.approx(1.0) == per_node.utilization["network"]
    one = [solve(demands, Workload(1, 4, 1, 8, 2, 2, 2, 5, network_per_node=b)) for b in (False, True)]
    assert one[0].response_time_s == pytest.approx(one[1].response_time_s, rel=1e-9)
    with pytest.raises(PredictionError, match="one shared network"):
        simulate_network(demands, Workload(4, 4, 1, 32, 8, 2, 2, 5, network_per_node=True))


def test_cli_mva_json_contract(tmp_path: Path) -> None:
    path = tmp_path / "demands.csv"
    path.write_text(TABLE2_PM1_PS1)
    args = ["mva", "--demands", str(path), "--nodes", "3", "--cpus", "4", "--disks", "1", "--maps", "150"]
    args += ["--reduces", "3", "--pm", "1", "--pr", "1", "--ps", "1", "--format", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    (out,) = json.loads(result.stdout)  # one array of objects, like every --format json
    assert out["response_time_s"] > 0
    assert out["throughput_per_s"] * out["response_time_s"] == pytest.approx(1.0)
    assert set(out["utilization"]) == {"cpu", "disk", "fiber", "network"}
    text = CliRunner().invoke(main, [*args[:-2], "--jobs", "2", "--estimate", "tripathi"])
    assert text.exit_code == 0, text.output
    assert "response_time_s" in text.output
    assert "utilization.disk" in text.output
    assert "simulated" not in out
    # --simulate: the same network replayed task by task beside the analytical answer
    sim = CliRunner().invoke(main, [*args[:9], "--maps", "12", *args[11:], "--simulate", "20", "--seed", "5"])
    assert sim.exit_code == 0, sim.output
    (got,) = json.loads(sim.stdout)
    assert got["simulated_response_time_s"] > got["simulated_half_width_s"] > 0
    again = json.loads(CliRunner().invoke(main, [*args[:9], "--maps", "12", *args[11:], "--simulate", "20",
                                                 "--seed", "5"]).stdout)[0]  # fmt: skip
    assert again["simulated_response_time_s"] == got["simulated_response_time_s"]
    text = CliRunner().invoke(main, [*args[:9], "--maps", "12", *args[11:-2], "--simulate", "5"])
    assert "simulated_response_time_s" in text.output
    refused = CliRunner().invoke(main, [*args, "--jobs", "2", "--simulate", "5"])
    assert refused.exit_code == 2  # a usage error
    assert "one job at a time" in refused.output


def test_cli_mva_slowstart(tmp_path: Path) -> None:
    # Table 2's pm = ps = 1 demands on a one-node, one-slot cluster: with every map done before the
    # reduces start, no shuffle-sort overlaps a map and the job is slower than by the paper's rule.
    path = tmp_path / "demands.csv"
    path.write_text(TABLE2_PM1_PS1)
    args = ["mva", "--demands", str(path), "--nodes", "1", "--cpus", "2", "--disks", "1", "--maps", "8"]
    args += ["--reduces", "1", "--pm", "1", "--pr", "1", "--ps", "1", "--format", "json"]

    def answer(*more: str) -> dict[str, Any]:
        result = CliRunner().invoke(main, [*args, *more])
        assert result.exit_code == 0, result.output
        return dict(json.loads(result.stdout)[0])

    paper, late = answer(), answer("--slowstart", "1")
    assert late["phases"] < paper["phases"]  # no phase per map wave: the maps run alone, then the reduce
    assert answer("--slowstart", "0.05")["response_time_s"] == pytest.approx(paper["response_time_s"])
    assert answer("--slowstart", "1", "--simulate", "50")["simulated_response_time_s"] > 0
    bad = CliRunner().invoke(main, [*args, "--slowstart", "1.5"])
    assert bad.exit_code == 2
    assert "--slowstart" in bad.output


def test_cli_mva_bad_demand_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "demands.csv"
    path.write_text("task,cpu,disk\nmap,1,1\nshuffle,1,1\nmerge,1,1\n")
    args = ["mva", "--demands", str(path), "--nodes", "1", "--cpus", "1", "--disks", "1", "--maps", "2"]
    result = CliRunner().invoke(main, [*args, "--reduces", "1", "--pm", "1", "--pr", "1", "--ps", "1"])
    assert result.exit_code != 0
    assert "demands.csv:3" in result.output
    assert "shuffle_sort" in result.output
    path.write_text("task,cpu,disk\nmap,1,1\nshuffle_sort,1,-0.5\nmerge,1,1\n")
    result = CliRunner().invoke(main, [*args, "--reduces", "1", "--pm", "1", "--pr", "1", "--ps", "1"])
    assert result.exit_code == 1
    assert f"{path}:3: shuffle_sort demands must be finite, >= 0 and <= 1e+09 seconds, got {{'disk': -0.5}}" in result.stderr
    # an absurd demand overflowed the solution (numpy's raw RuntimeWarnings, a 300-digit answer, exit 0)
    path.write_text("task,cpu,disk\nmap,1e300,1\nshuffle_sort,1,1\nmerge,1,1\n")
    result = CliRunner().invoke(main, [*args, "--reduces", "1", "--pm", "1", "--pr", "1", "--ps", "1"])
    assert result.exit_code == 1
    assert f"{path}:2: map demands must be finite, >= 0 and <= 1e+09 seconds, got {{'cpu': 1e+300}}" in result.stderr
    assert "RuntimeWarning" not in result.stderr
    for text, message in [
        ("task,cpu,disk\nmap,1,2,3\nshuffle_sort,1,1\nmerge,1,1\n", ":2: more cells than the header's 3 columns"),
        # a short row's missing demand was read as 0 s (the map's disk here)
        ("task,cpu,disk\nmap,1\nshuffle_sort,1,1\nmerge,1,1\n", ":2: fewer cells than the header's 3 columns"),
        ("task,cpu,cpu\nmap,1,2\nshuffle_sort,1,1\nmerge,1,1\n", ":1: columns ['cpu'] appear twice"),
        ("task,cpu,disk\nmap,0,0\nshuffle_sort,0,0\nmerge,0,0\n", "no phase of positive, finite length"),
        # the file's own line: a blank line counts (it had said :4)
        ("task,cpu\nmap,1\n\nshuffle_sort,1\nmerge,abc\n", ":5: demands must be numbers of seconds"),
        # a quoted line break stays in its cell (read line by line, '"1\n2"' had become a 12 s demand)
        ('task,cpu\nmap,"1\n2"\nshuffle_sort,1\nmerge,1\n', ":3: demands must be numbers of seconds"),
        # past the csv module's field size limit (it had raised out of the command)
        ("task,cpu\nmap,1\nshuffle_sort," + "1" * 200_000 + "\nmerge,1\n", ":3: not a well-formed CSV"),
    ]:
        path.write_text(text)
        result = CliRunner().invoke(main, [*args, "--reduces", "1", "--pm", "1", "--pr", "1", "--ps", "1"])
        assert result.exit_code == 1, text
        assert message in result.stderr, result.stderr
    # a map-only job of zero demands had come out at 0 s and 0 jobs/s with exit 0 (with reduces, an error)
    path.write_text("task,cpu\nmap,0\n")
    result = CliRunner().invoke(main, [*args, "--reduces", "0", "--pm", "1", "--pr", "1", "--ps", "1"])
    assert result.exit_code == 1
    assert "every task's service demand is 0 s" in result.stderr
    assert "RuntimeWarning" not in result.stderr
    path.write_text("task,cpu\nmap,1\n")  # the simulator needs reduces: a usage error, as --jobs is
    result = CliRunner().invoke(main, [*args, "--reduces", "0", "--pm", "1", "--pr", "1", "--ps", "1", "--simulate", "10"])
    assert result.exit_code == 2
    assert "--simulate simulates a job with reduces" in result.output
    path.write_bytes("task,cpu\nmap,1\n".encode("utf-16"))
    result = CliRunner().invoke(main, [*args, "--reduces", "1", "--pm", "1", "--pr", "1", "--ps", "1"])
    assert f"{path}:1: not a demand table (not UTF-8 text at byte 0: " in result.stderr


def test_predictor_charges_phase_times_to_devices() -> None:
    # read/spill -> disk, map function + overhead -> cpu, shuffle -> network (predict.vianna.predictor).
    from predict.vianna.predictor import _charge

    notes: list[str] = []
    charged = _charge("map", {"read": 1000.0, "map": 2000.0, "spill": 500.0, "shuffle": 250.0}, 100.0, notes)
    assert charged == pytest.approx({"cpu": 2.1, "disk": 1.5, "network": 0.25})
    assert notes == []


def test_predictor_scales_demands_down_for_a_negative_calibrated_overhead() -> None:
    # The platform model prices the phases above the measured task: the calibrated overhead is
    # negative; the demands are scaled together to the calibrated task time (never below 0).
    from predict.vianna.predictor import _charge

    notes: list[str] = []
    charged = _charge("map", {"read": 1000.0, "map": 500.0, "spill": 500.0}, -1000.0, notes)
    assert charged == pytest.approx({"cpu": 0.25, "disk": 0.75})  # 2 s priced, 1 s measured: x 0.5
    assert sum(charged.values()) == pytest.approx(1.0)
    assert len(notes) == 1
    assert "map overhead calibrated negative (-1000 ms" in notes[0]
    assert "scaled by 0.50" in notes[0]
    notes.clear()
    assert _charge("merge", {"merge": 100.0}, -500.0, notes) == {"cpu": 0.0, "disk": 0.0}
    assert "scaled by 0.00" in notes[0]


def test_tripathi_prices_a_map_beside_a_tiny_fetch_as_the_map() -> None:
    # The local engine's shape (one node, one map slot, one reduce): each map wave is a parallel phase
    # of the map (0.26 s) and the reduce's fetch of the previous map's output (0.007 s).  Fork/join
    # prices it at H_2 x the larger mean (0.39 s a wave); Tripathi's maximum of the two branches is
    # about the map.  8 maps: the grep backtest case measured 1.79 s, fork/join gave 3.05 s.
    work = Workload(nodes=1, cpus=2, disks=1, maps=8, reduces=1, pm=1, pr=1, ps=5, network_per_node=True)
    demands = Demands(map={"cpu": 0.09, "disk": 0.17}, shuffle_sort={"network": 0.007},
                      merge={"cpu": 0.01, "disk": 0.07}, local_network_to="disk")  # fmt: skip
    forkjoin = solve(demands, work, estimate=Estimate.FORKJOIN).response_time_s
    tripathi = solve(demands, work, estimate=Estimate.TRIPATHI).response_time_s
    sequential = 8 * 0.26 + 0.007 + 0.08
    assert tripathi == pytest.approx(sequential, rel=0.1)
    assert forkjoin > 1.3 * sequential
    # both are models of the prediction core, each with its estimate (the same profile, the same demands)
    from predict import core

    assert {"vianna", "vianna_tripathi"} <= set(core.models())
    assert core.get("vianna").estimate is Estimate.FORKJOIN  # type: ignore[attr-defined]
    assert core.get("vianna_tripathi").estimate is Estimate.TRIPATHI  # type: ignore[attr-defined]


def test_reduces_wait_for_the_slow_start_share_of_the_maps() -> None:
    # The same local-engine shape with Hadoop's slow-start: LocalJobRunner starts its reduces after the
    # last map (slowstart 1.0), so no fetch runs beside a map and every phase has one branch:
    #
    #   map thread   |M1|M2|M3|...|M8|
    #   reduce                        |S1..S8 (5 at a time)|merge|
    #
    # Both estimates then give the serial sum (fork/join's H_2 per map wave had made it 1.3x that).
    work = Workload(nodes=1, cpus=2, disks=1, maps=8, reduces=1, pm=1, pr=1, ps=5, network_per_node=True,
                    slowstart=1.0)  # fmt: skip
    demands = Demands(map={"cpu": 0.09, "disk": 0.17}, shuffle_sort={"network": 0.007},
                      merge={"cpu": 0.01, "disk": 0.07}, local_network_to="disk")  # fmt: skip
    assert work.start_after_maps == 8
    forkjoin = solve(demands, work, estimate=Estimate.FORKJOIN)
    tripathi = solve(demands, work, estimate=Estimate.TRIPATHI)
    sequential = 8 * 0.26 + 2 * 0.007 + 0.08  # the 8 fetches in two rounds of <= 5
    assert forkjoin.response_time_s == pytest.approx(sequential, rel=0.02)
    assert tripathi.response_time_s == pytest.approx(sequential, rel=0.02)
    last_map_end = max(i.end for i in forkjoin.timeline.instances if forkjoin.layout.kinds[i.cls] == "map")
    fetches = [i for i in forkjoin.timeline.instances if forkjoin.layout.kinds[i.cls] == "shuffle_sort"]
    assert min(i.start for i in fetches) == pytest.approx(last_map_end)
    assert last_map_end in forkjoin.timeline.sync_points  # the reduces' start ends the map stage's phase
    # the paper's rule (None) and a slow-start that one finished map reaches are the same walk
    paper = solve(demands, dataclasses.replace(work, slowstart=None))
    assert solve(demands, dataclasses.replace(work, slowstart=0.05)).response_time_s == pytest.approx(
        paper.response_time_s
    )
    assert paper.response_time_s > 1.3 * sequential
    # half the maps: the reduce's first fetches wait for map 4, then run beside maps 5-8
    half = solve(demands, dataclasses.replace(work, slowstart=0.5), estimate=Estimate.FORKJOIN)
    first_fetch = min(i.start for i in half.timeline.instances if half.layout.kinds[i.cls] == "shuffle_sort")
    assert first_fetch == pytest.approx(4 * 0.26, rel=0.05)
    assert forkjoin.response_time_s < half.response_time_s < paper.response_time_s
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(PredictionError, match="slowstart"):
            dataclasses.replace(work, slowstart=bad)
    with pytest.raises(PredictionError, match="between 0 and the job's 8 maps, got 9"):
        build_timeline([1.0, 0.1, 1.0], [MapGroup(1, (0,) * 8)], [ReduceGroup(1, {0: 1}, 2, 8)], 5,
                       start_after_maps=9)  # fmt: skip


def test_a_local_fetch_can_be_served_by_the_disk() -> None:
    # The paper gives a shuffle-sort whose map ran on the reduce's node no network demand.  The vianna
    # predictor's shuffle time is one figure measured whole, so it charges such fetches to the disk:
    # left out, every shuffle of a one-node cluster (the local engine) cost nothing.
    one_node = Workload(1, 2, 1, 4, 1, 2, 1, 1)
    plain = Demands(map={"cpu": 1.0}, shuffle_sort={"network": 0.5}, merge={"cpu": 1.0})
    local = Demands(map={"cpu": 1.0}, shuffle_sort={"network": 0.5}, merge={"cpu": 1.0}, local_network_to="disk")
    assert solve(plain, one_node).task_response_s["shuffle_sort"] == 0.0
    served = solve(local, one_node)
    assert served.task_response_s["shuffle_sort"] >= 0.5
    assert served.utilization["disk"] > 0
    assert served.utilization["network"] == 0.0
    # the simulator serves them alike: the last map's shuffle-sort (0.5 s) at least is added
    gained = simulate_network(local, one_node, replications=200).mean_s - simulate_network(
        plain, one_node, replications=200
    ).mean_s
    assert gained > 0.5
    with pytest.raises(PredictionError, match="local_network_to"):
        Demands(map={}, shuffle_sort={}, merge={}, local_network_to="network")


def test_cli_mva_map_only_needs_only_the_map_row(tmp_path: Path) -> None:
    # --reduces 0 is a map-only job (the help says so): its demand table has no shuffle-sort or merge
    path = tmp_path / "maps.csv"
    path.write_text("task,cpu,disk\nmap,1,1\n")
    args = ["mva", "--demands", str(path), "--nodes", "2", "--cpus", "2", "--disks", "1", "--maps", "8"]
    args += ["--pm", "2", "--pr", "1", "--ps", "1", "--format", "json"]
    result = CliRunner().invoke(main, [*args, "--reduces", "0"])
    assert result.exit_code == 0, result.output
    (out,) = json.loads(result.stdout)
    # 8 maps on 2 x 2 threads: two waves of the map's response (two maps share each node's disk)
    assert out["response_time_s"] == pytest.approx(2 * out["task_response_s"]["map"], rel=1e-6)
    assert out["utilization"]["network"] == 0
    with_reduces = CliRunner().invoke(main, [*args, "--reduces", "1"])
    assert with_reduces.exit_code == 1
    assert "no row for shuffle_sort, merge" in with_reduces.output


def test_cli_mva_warns_like_every_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that has not converged is a `warning: ...` line on stderr, the result still on stdout
    (the README's contract); mva had no such handling, so Python's own warning format (or, under
    pytest, an error) came out instead."""
    import predict.vianna.model as model

    monkeypatch.setattr(model, "MAX_ITERATIONS", 1)
    path = tmp_path / "d.csv"
    path.write_text("task,cpu,disk\nmap,10,3\nshuffle_sort,0.2,2\nmerge,5,59\n")
    args = ["--nodes", "3", "--cpus", "4", "--disks", "1", "--maps", "150", "--reduces", "3", "--pm", "4", "--pr", "1"]
    result = CliRunner().invoke(main, ["mva", "--demands", str(path), *args, "--ps", "5"])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("warning: Vianna model: task response times still moved by")
    assert "response_time_s" in result.stdout


def test_a_phase_of_one_branch_keeps_its_phase_mark() -> None:
    """A parallel phase whose tree is a Serial (the map threads' common maps, then the rest) came out of
    build_tree without its P_A phase mark; evaluate_tree then took every P_A inside it for a phase root
    and applied H_k to each: 5 maps and 4 reduces took 27.9 s on 2 nodes, 40.0 s on 3, 14.8 s on 4
    (found by an audit).  Every phase is a P_A marked as one, and a node more is never slower here."""
    demands = Demands({"fiber": 0.1}, {"cpu": 3.0, "disk": 3.0}, {"cpu": 1.0, "disk": 0.1})
    sols = [solve(demands, Workload(n, 4, 2, 5, 4, 3, 1, 3)) for n in (2, 3, 4)]
    for sol in sols:
        phases = serial_parts(sol.tree) if isinstance(sol.tree, Serial) else [sol.tree]
        assert len(phases) == sol.phases
        assert all(isinstance(p, ParallelAnd) and p.phase for p in phases), phases
    times = [s.response_time_s for s in sols]
    assert all(b <= a * (1 + 1e-9) for a, b in itertools.pairwise(times)), times
    assert times[1] == pytest.approx(times[0], rel=1e-3)  # the third node holds no more than the second's share


def test_cli_mva_refuses_a_network_demand_on_maps_and_merges(tmp_path: Path) -> None:
    """Only shuffle-sorts use the network (Vianna et al. 2013, section 4.1; Table 2's map and merge rows are
    0): a network demand on the map or merge row was read and priced nowhere, the answer the same with
    100,000 s as with 0 (found by an audit).  It is refused, naming the file, the line and the row."""
    path = tmp_path / "demands.csv"
    args = ["mva", "--demands", str(path), "--nodes", "2", "--cpus", "1", "--disks", "1", "--maps", "4"]
    args += ["--reduces", "2", "--pm", "1", "--pr", "1", "--ps", "1"]
    path.write_text("task,cpu,disk,network\nmap,1,1,0\nshuffle_sort,1,1,1\nmerge,1,1,0\n")
    assert CliRunner().invoke(main, args).exit_code == 0
    for text, line, row in [
        ("task,cpu,disk,network\nmap,1,1,100000\nshuffle_sort,1,1,1\nmerge,1,1,0\n", 2, "map"),
        ("task,cpu,disk,network\nmap,1,1,0\nshuffle_sort,1,1,1\nmerge,1,1,0.5\n", 4, "merge"),
    ]:
        path.write_text(text)
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith(f"Error: {path}:{line}: {row} has a network demand"), result.stderr
        assert "only shuffle-sorts use the network" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_cli_mva_answers_or_refuses_huge_values(tmp_path: Path) -> None:
    """--nodes 10^11 built per-node arrays of that length (numpy's MemoryError), --ps 10^20 a lane list
    (OverflowError), --pm 10^400 found 0.0 map waves (KeyError), --pr 10^400 dropped the reduces (4.0 s,
    exit 0), --cpus/--disks/--jobs 10^400 overflowed a float, --seed -1 was numpy's ValueError (found by an
    audit).  Nodes, threads and shuffle lanes past one per task are idle: the answer is that of as many as
    hold a task; the other options are usage errors naming themselves."""
    path = tmp_path / "demands.csv"
    path.write_text("task,cpu,disk,network\nmap,1,1,0\nshuffle_sort,1,1,1\nmerge,1,1,0\n")

    def run(**opts: int) -> Result:
        given = {"nodes": 2, "cpus": 1, "disks": 1, "maps": 4, "reduces": 2, "pm": 1, "pr": 1, "ps": 1, **opts}
        args = [x for k, v in given.items() for x in (f"--{k}", str(v))]
        return CliRunner().invoke(main, ["mva", "--demands", str(path), *args, "--format", "json"])

    def answer(**opts: int) -> dict[str, Any]:
        result = run(**opts)
        assert result.exit_code == 0, result.output
        (out,) = json.loads(result.stdout)
        return out

    huge = 10**400
    for idle, busy in [
        ({"nodes": 10**11}, {"nodes": 4}),
        ({"nodes": huge}, {"nodes": 4}),
        ({"ps": 10**20}, {"ps": 4}),
        ({"ps": huge}, {"ps": 4}),
        ({"pm": huge}, {"pm": 2}),  # 2 nodes x 2 threads run the 4 maps at once
        ({"pr": huge}, {"pr": 1}),  # 2 reduces on 2 nodes
    ]:
        got, want = answer(**idle), answer(**busy)
        assert got["response_time_s"] == pytest.approx(want["response_time_s"], rel=1e-12), idle
        assert got["utilization"] == pytest.approx(want["utilization"], rel=1e-12), idle
    assert answer(nodes=10**11)["busy_nodes"] == 4
    assert answer(pr=huge)["task_response_s"]["merge"] > 0  # the reduces are still there
    for option, value in [("cpus", huge), ("disks", huge), ("jobs", huge), ("maps", 10**11), ("reduces", 10**11)]:
        result = run(**{option: value})
        assert result.exit_code == 2, (option, result.output)
        assert f"Invalid value for '--{option}'" in result.stderr
        assert "Traceback" not in result.output
    args = ["--nodes", "2", "--cpus", "1", "--disks", "1", "--maps", "4", "--reduces", "2", "--pm", "1", "--pr", "1"]
    for extra, option in [(["--simulate", "10", "--seed", "-1"], "--seed"), (["--simulate", str(huge)], "--simulate")]:
        result = CliRunner().invoke(main, ["mva", "--demands", str(path), *args, "--ps", "1", *extra])
        assert result.exit_code == 2, result.output
        assert f"Invalid value for '{option}'" in result.stderr


def _overlap_amva_whole(demands: np.ndarray, widths: np.ndarray, weights: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Eqs. 1, 5 and 6 over the whole C x C matrix, as overlap_amva first computed them (the reference)."""
    d, w = demands, widths
    residence = np.maximum(start, d)
    for _ in range(500):
        resp = residence @ w
        safe_resp = np.where(resp > 0, resp, 1.0)
        arrival = np.empty_like(d)
        for k in range(d.shape[1]):
            if not np.any(d[:, k] > 0):
                arrival[:, k] = 0.0
                continue
            presence_i = residence[:, k] / safe_resp
            r_jk = residence[:, k]
            removed = np.maximum(d[None, :, k], r_jk[None, :] - d[None, :, k] * presence_i[:, None])
            removed_resp = resp[None, :] - w[k] * (r_jk[None, :] - removed)
            q = removed / np.where(removed_resp > 0, removed_resp, 1.0)
            arrival[:, k] = np.einsum("ij,ij->i", weights[k], q)
        new = d * (1.0 + arrival)
        if np.allclose(new, residence, rtol=1e-10, atol=1e-15):
            return new
        residence = new
    raise AssertionError("the reference did not converge")


def _task_demands(rng: np.random.Generator, n: int, *, maps: int) -> np.ndarray:
    """Demands of ``n`` task classes on CPU, disk, fiber, network: ``maps`` maps (no network), then
    shuffle-sorts (no CPU); no fiber, and five classes that never use a disk."""
    d = rng.uniform(0.1, 2.0, (n, 4))
    d[:maps, 3] = 0.0  # maps: no network
    d[maps:, 0] = 0.0  # shuffle-sorts: no CPU
    d[:, 2] = 0.0  # no fiber
    d[:5, 1] = 0.0  # tasks that never use a disk
    return d


@pytest.mark.parametrize("negative", [False, True])
def test_overlap_amva_block_is_the_whole_matrix(negative: bool) -> None:
    """Only the rows and columns where a task is removed are computed: the same residences, bit for bit.

    Zero demands on a device (a shuffle-sort's CPU, a map's network) make rows and columns of
    eq. 5 that remove nothing; a negative weight (a residence below its demand) is not a case
    for the shortcut, and still gives the whole matrix's residences.
    """
    rng = np.random.default_rng(7)
    n = 40
    d = _task_demands(rng, n, maps=15)
    weights = rng.uniform(0.0, 0.05, (4, n, n))
    if negative:
        weights[1, 7, :] = -0.3  # class 7's disk residence falls below its demand
    widths = np.array([4.0, 2.0, 1.0, 1.0])
    start = d * rng.uniform(1.0, 1.5, d.shape)
    got = overlap_amva(d, widths, weights, start=start, tol=1e-10)
    expected = _overlap_amva_whole(d, widths, weights, start)
    assert got.residence.tolist() == expected.tolist()


def test_a_kept_first_walk_gives_the_solve_it_replaces() -> None:
    """Both estimates start from the demands' sums: the second solve of a job reuses the first's walk
    (timeline, tree, overlap weights), and comes out as it does walked afresh."""
    import predict.vianna.model as model

    demands = Demands({"cpu": 2.0, "disk": 1.0}, {"network": 0.4}, {"cpu": 1.0, "disk": 3.0})
    work = Workload(3, 4, 1, 40, 7, 2, 1, 3, slowstart=0.5)
    model._FIRST_WALK.clear()
    fresh = solve(demands, work, estimate=Estimate.TRIPATHI)
    solve(demands, work, estimate=Estimate.FORKJOIN)
    assert len(model._FIRST_WALK) == 1
    reused = solve(demands, work, estimate=Estimate.TRIPATHI)
    assert reused.response_time_s == fresh.response_time_s
    assert reused.class_response_s.tolist() == fresh.class_response_s.tolist()
    assert reused.iterations == fresh.iterations


@pytest.mark.parametrize("negative", [False, True])
def test_overlap_amva_by_nonzero_weights_is_the_whole_matrix(negative: bool) -> None:
    """Weights given by their nonzero entries (a job alone: its own overlaps, few) give the whole
    matrix's residences: the same presences entry for entry, only a row's sum in another order."""
    rng = np.random.default_rng(11)
    n = 60
    d = _task_demands(rng, n, maps=20)
    weights = rng.uniform(0.0, 0.5, (4, n, n)) * (rng.random((4, n, n)) < 0.05)
    weights[:, 3, :] = 0.0  # a class beside nothing
    if negative:
        weights[1, 7, :4] = -0.3  # class 7's disk residence falls below its demand
    widths = np.array([4.0, 2.0, 1.0, 1.0])
    start = d * rng.uniform(1.0, 1.5, d.shape)
    sparse = [SparseWeights.of(weights[k]) for k in range(4)]
    assert sum(s.values.size for s in sparse) < 0.1 * weights.size
    got = overlap_amva(d, widths, sparse, start=start, tol=1e-10)
    expected = _overlap_amva_whole(d, widths, weights, start)
    np.testing.assert_allclose(got.residence, expected, rtol=1e-12, atol=0.0)
    mixed = overlap_amva(d, widths, [weights[0], sparse[1], weights[2], sparse[3]], start=start, tol=1e-10)
    np.testing.assert_allclose(mixed.residence, expected, rtol=1e-12, atol=0.0)
