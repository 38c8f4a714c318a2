"""`phaseline mva`: the JSON contract, slow start, --simulate, and the demand files and values it refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from phaseline.cli import main

TABLE2_PM1_PS1 = (
    "task,cpu,fiber,disk,network\n"
    "map,5.0764,0.0677,3.1844,0.0000\n"
    "shuffle_sort,0.5217,0.0087,0.4082,0.1850\n"
    "merge,37.4983,1.2583,59.2157,0.0000\n"
)


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
    for text, message in [
        (
            "task,cpu,disk\nmap,1,1\nshuffle_sort,1,-0.5\nmerge,1,1\n",
            ":3: shuffle_sort demands must be finite, >= 0 and <= 1e+09 seconds, got {'disk': -0.5}",
        ),
        # an absurd demand overflowed the solution (numpy's raw RuntimeWarnings, a 300-digit answer, exit 0)
        (
            "task,cpu,disk\nmap,1e300,1\nshuffle_sort,1,1\nmerge,1,1\n",
            ":2: map demands must be finite, >= 0 and <= 1e+09 seconds, got {'cpu': 1e+300}",
        ),
        (
            "task,cpu,disk\nmap,1,2,3\nshuffle_sort,1,1\nmerge,1,1\n",
            ":2: more cells than the header's 3 columns",
        ),
        # a short row's missing demand was read as 0 s (the map's disk here)
        (
            "task,cpu,disk\nmap,1\nshuffle_sort,1,1\nmerge,1,1\n",
            ":2: fewer cells than the header's 3 columns",
        ),
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
        assert (f"{path}{message}" if message.startswith(":") else message) in result.stderr, result.stderr
        assert "RuntimeWarning" not in result.stderr
    # a map-only job of zero demands had come out at 0 s and 0 jobs/s with exit 0 (with reduces, an error)
    path.write_text("task,cpu\nmap,0\n")
    result = CliRunner().invoke(main, [*args, "--reduces", "0", "--pm", "1", "--pr", "1", "--ps", "1"])
    assert result.exit_code == 1
    assert "every task's service demand is 0 s" in result.stderr
    assert "RuntimeWarning" not in result.stderr
    path.write_text("task,cpu\nmap,1\n")  # the simulator needs reduces: a usage error, as --jobs is
    result = CliRunner().invoke(
        main, [*args, "--reduces", "0", "--pm", "1", "--pr", "1", "--ps", "1", "--simulate", "10"]
    )
    assert result.exit_code == 2
    assert "--simulate simulates a job with reduces" in result.output
    path.write_bytes("task,cpu\nmap,1\n".encode("utf-16"))
    result = CliRunner().invoke(main, [*args, "--reduces", "1", "--pm", "1", "--pr", "1", "--ps", "1"])
    assert f"{path}:1: not a demand table (not UTF-8 text at byte 0: " in result.stderr


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
    args = [
        "--nodes",
        "3",
        "--cpus",
        "4",
        "--disks",
        "1",
        "--maps",
        "150",
        "--reduces",
        "3",
        "--pm",
        "4",
        "--pr",
        "1",
    ]
    result = CliRunner().invoke(main, ["mva", "--demands", str(path), *args, "--ps", "5"])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("warning: Vianna model: task response times still moved by")
    assert "response_time_s" in result.stdout


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
        given = {
            "nodes": 2,
            "cpus": 1,
            "disks": 1,
            "maps": 4,
            "reduces": 2,
            "pm": 1,
            "pr": 1,
            "ps": 1,
            **opts,
        }
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
    for option, value in [
        ("cpus", huge),
        ("disks", huge),
        ("jobs", huge),
        ("maps", 10**11),
        ("reduces", 10**11),
    ]:
        result = run(**{option: value})
        assert result.exit_code == 2, (option, result.output)
        assert f"Invalid value for '--{option}'" in result.stderr
        assert "Traceback" not in result.output
    args = [
        "--nodes",
        "2",
        "--cpus",
        "1",
        "--disks",
        "1",
        "--maps",
        "4",
        "--reduces",
        "2",
        "--pm",
        "1",
        "--pr",
        "1",
    ]
    for extra, option in [
        (["--simulate", "10", "--seed", "-1"], "--seed"),
        (["--simulate", str(huge)], "--simulate"),
    ]:
        result = CliRunner().invoke(main, ["mva", "--demands", str(path), *args, "--ps", "1", *extra])
        assert result.exit_code == 2, result.output
        assert f"Invalid value for '{option}'" in result.stderr
