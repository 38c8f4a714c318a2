"""The benchmark harness: ``benchmarks/run --quick`` end to end, and its shared pieces.

The end-to-end test runs every benchmark at tiny sizes (a 1 MB and a 2 MB
``.jhist``, 200 small files, small model sizes) and checks the structure of
``results.json`` and ``RESULTS.md``; the figures themselves are not asserted
(they are measurements on a shared machine).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import common  # noqa: E402 - benchmarks/ is a script directory, not a package
import results_files  # noqa: E402

FIGURE_KEYS = {
    "area",
    "name",
    "value",
    "unit",
    "peer",
    "peer_value",
    "ratio",
    "target",
    "met",
    "note",
    "details",
}


def _run_module() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("bench_run", str(BENCH / "run"))
    spec = importlib.util.spec_from_loader("bench_run", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module
    loader.exec_module(module)
    return module


# ---------------------------------------------------------------------- shared pieces
def test_target_ratio_and_absolute_goals() -> None:
    at_least = common.Target(common.Goal.RATIO_AT_LEAST, 2.0)
    assert at_least.met(10.0, 5.0) is True
    assert at_least.met(9.9, 5.0) is False
    assert at_least.met(10.0, None) is None  # no peer measured: not judged
    at_most = common.Target(common.Goal.AT_MOST, 1.0)
    assert at_most.met(0.99, None) is True
    assert at_most.met(1.01, 0.1) is False
    assert at_most.describe("s") == "<= 1 s"
    assert at_least.describe("MB/s") == ">= 2x peer"


def test_figure_dict_has_ratio_and_verdict() -> None:
    fig = common.Figure(
        "ingest", "reader", 30.0, "MB/s", "hadoop", 10.0, common.Target(common.Goal.RATIO_AT_LEAST, 2.0)
    )
    d = fig.as_dict()
    assert set(d) == FIGURE_KEYS
    assert d["ratio"] == pytest.approx(3.0)
    assert d["met"] is True
    assert d["target"] == {"goal": "ratio_at_least", "threshold": 2.0, "text": ">= 2x peer"}


def test_run_measured_reports_child_peak_rss_and_cpu() -> None:
    code = "x = bytearray(150_000_000); sum(range(3_000_000)); print('{\"ok\": 1}')"
    run = common.run_measured([sys.executable, "-c", code])
    assert run.returncode == 0
    assert run.peak_rss_mb >= 140  # the child's own 150 MB, not this process's
    assert run.cpu_s > 0
    assert run.last_json() == {"ok": 1}


def test_run_measured_peak_rss_is_the_childs_own_not_its_parents() -> None:
    # Linux carries a process's peak RSS across exec, and Python spawns from its own address space
    ballast = bytearray(400 << 20)
    ballast[:: 4096] = b"\x01" * len(ballast[:: 4096])  # touch every page, so it is resident
    run = common.run_measured([sys.executable, "-c", "print('{}')"])
    assert run.peak_rss_mb < 100, run.peak_rss_mb
    assert len(ballast) == 400 << 20


def test_run_measured_reports_a_signal_as_a_negative_code() -> None:
    run = common.run_measured([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"], check=False)
    assert run.returncode == -15


def test_run_measured_kills_at_the_time_limit_and_keeps_output() -> None:
    code = "import time; print('{\"step\": 1}', flush=True); time.sleep(30)"
    run = common.run_measured([sys.executable, "-c", code], timeout_s=2.0, check=False)
    assert run.returncode == -9
    assert run.wall_s < 20
    assert run.last_json() == {"step": 1}


def test_markdown_escapes_table_cells() -> None:
    fig = common.Figure("area | one", "a|b", 1.5, "s", "peer|x", 3.0, common.Target(common.Goal.AT_MOST, 2.0))
    payload = results_files.results_payload(
        [fig.as_dict()], [], started="2026-01-01T00:00:00+00:00", finished="2026-01-01T00:01:00+00:00",
        mach={"cpu_model": "cpu", "cores": 2, "memory_gb": 1.0, "os": "Linux", "load_average_1m": 0.1},
        vers={"python": "3.11"}, settings={"mode": "quick"},
    )  # fmt: skip
    md = results_files.render_markdown(payload)
    assert "| a\\|b | 1.50 s | peer\\|x | 3.00 s | 0.50x | <= 2 s | yes |" in md
    assert payload["summary"] == {"figures": 1, "with_target": 1, "met": 1, "missed": [], "errors": 0}


def test_mva_adapter_reads_the_table_by_its_last_column() -> None:
    out = (
        "           m x r  formulation  estimate  classes   C=m+r(m+1)  phases  iter    R_job s  solve s\n"
        "         150 x 3        class  forkjoin      101          603      51     2      722.2     0.19\n"
        "         150 x 3     per_task  forkjoin      603          603      51     2      722.2     2.02\n"
        "  10,000 x 1,000        class  forkjoin       15     10011000       8     4     5522.2    12.50\n"
        "queuing network simulated (150 x 3, 100 replications): 0.65 s, R_job 592.0 +- 16.1 s\n"
    )
    figs = _run_module().figures_mva(out)
    assert [(f.value, f.peer_value) for f in figs] == [(0.19, 2.02), (12.5, None), (0.65, 0.19)]
    assert figs[1].met is False  # 10,000 x 1,000 must be answered within 10 s
    assert "simulated" in figs[2].name


def test_columnar_probe_adapter_reads_its_total_and_steps() -> None:
    out = (
        "big-50mb.jhist: 50.0 MB; {'events': 29325, 'tasks': 7330, 'attempts': 7330, 'counters': 417810}; best of 5\n"
        "  read the bytes                                 0.028 s\n"
        "  decode to Arrow (pyarrow.json, all cores)      0.150 s\n"
        "  columnar probe, total                          0.302 s  (166 MB/s)\n"
        "  orjson.loads per line, nothing else            0.146 s  (341 MB/s)\n"
        "  probe / bare decode: 0.49x (issue 10's target for the reader: >= 0.5x)\n"
    )
    (fig,) = _run_module().figures_columnar_probe(out)
    assert (fig.value, fig.peer_value, fig.unit) == (166.0, 341.0, "MB/s")
    assert fig.name.startswith("50 MB: ")
    assert fig.target is None  # a probe, not a target of phaseline's
    assert fig.details["seconds"] == {"probe": 0.302, "bare": 0.146, "read the bytes": 0.028,
                                      "decode to Arrow (pyarrow.json, all cores)": 0.15}  # fmt: skip


def test_adapter_reports_changed_output() -> None:
    run = _run_module()
    with pytest.raises(run.OutputChanged):
        run.figures_simulate("nothing the adapter knows\n")


def test_only_keeps_the_other_benchmarks_last_figures() -> None:
    run = _run_module()

    def fig(bench: str, name: str, value: float) -> dict[str, object]:
        return {"area": f"area {bench}", "name": name, "value": value, "bench": bench}

    prev = {
        "date": "2026-01-01T00:00:00+00:00",
        "settings": {"mode": "full"},
        "figures": [fig("ingest", "a", 1.0), fig("profiles", "b", 2.0), fig("mva", "c", 3.0)],
        "runs": [{"name": n, "stdout": ""} for n in ("ingest", "profiles", "mva")],
        "errors": [{"area": "samples", "command": "x", "error": "boom"}],
    }
    new_run = {"name": "profiles", "date": "2026-02-02T00:00:00+00:00", "stdout": ""}
    figures, runs, errors, settings = run.merge_previous(
        prev, [fig("profiles", "b", 0.5)], [new_run], [], {"mode": "full"}, rerun={"profiles"}
    )
    assert [(f["bench"], f["value"]) for f in figures] == [("ingest", 1.0), ("profiles", 0.5), ("mva", 3.0)]
    assert [r["name"] for r in runs] == ["ingest", "profiles", "mva"]
    assert runs[1] is new_run
    assert [e.area for e in errors] == ["samples"]  # not re-run: its failure stands
    assert settings["rerun"] == "profiles"
    assert settings["rest_from"] == "2026-01-01T00:00:00+00:00"
    # a quick run never mixes with a full one
    assert run.merge_previous(prev, [], [], [], {"mode": "quick"}, rerun={"profiles"})[0] == []


# ---------------------------------------------------------------------- end to end
@pytest.mark.slow
def test_run_quick_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run"), "--quick", "--out", str(out),
         "--ingest-args", f"--workdir {tmp_path / 'work'}"],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    assert results["errors"] == [], proc.stdout[-3000:]
    assert proc.returncode == 0, proc.stderr[-3000:]

    assert results["format"] == "phaseline-benchmarks"
    datetime.fromisoformat(results["date"])
    assert {"cpu_model", "cores", "memory_gb", "load_average_1m"} <= set(results["machine"])
    for key in ("python", "duckdb", "pyarrow", "java", "hadoop"):
        assert results["versions"][key], key
    assert results["settings"]["mode"] == "quick"

    figures = results["figures"]
    assert figures
    assert all(set(f) == FIGURE_KEYS | {"bench"} for f in figures)  # results name each figure's benchmark
    assert {f["bench"] for f in figures} <= {r["name"] for r in results["runs"]}
    for f in figures:
        assert f["value"] >= 0, f  # a number (NaN compares false)
        if f["peer_value"]:
            assert f["ratio"] == pytest.approx(f["value"] / f["peer_value"])
        assert (f["met"] is None) == (f["target"] is None or (f["target"]["goal"].startswith("ratio") and
                                                               not f["peer_value"]))  # fmt: skip
    names = " / ".join(f["name"] for f in figures)
    for expected in ("1 MB: read_jhist, process incl. start-up", "workers=2 vs workers=1",
                     "timeline + phases + skew of one job", "peak RSS growth", "fit_platform"):  # fmt: skip
        assert expected in names
    hadoop_peers = [f for f in figures if f["peer"] and "JobHistoryParser" in f["peer"]]
    assert hadoop_peers
    assert all(f["peer_value"] > 0 for f in hadoop_peers)
    s = results["summary"]
    assert s["figures"] == len(figures)
    assert s["met"] + len(s["missed"]) == s["with_target"]
    assert {r["name"] for r in results["runs"]} >= {"ingest_scale", "platform", "mva", "simulate", "samples"}

    md = (out / "RESULTS.md").read_text()
    assert md.startswith("# phaseline benchmarks")
    for area in {f["area"] for f in figures}:
        assert f"## {area}" in md
    assert results["versions"]["hadoop"] in md
