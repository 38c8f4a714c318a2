"""The profile and the files `analyze`/`timeline` write, on inputs a helper's audit found them wrong on.

Each test names what the code did before; each fails on that code.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure

from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.errors import DataQualityWarning
from phaseline.hadoop_names import local_runner_job
from phaseline.store import Store
from profiles.extract import _first_wave_split, extract_profile
from profiles.merge_runs import merge_profiles
from profiles.profile import ProfileSource
from profiles.profile_stats import InputStats
from profiles.timeline_plot import save_figure
from tests.predict.doubles import toy_profile

SAMPLE = Path(__file__).parents[2] / "sample_traces"
JOB = "job_local1939662896_0001"


def _cut_log(tmp_path: Path) -> Path:
    """The bundled sample's LocalJobRunner log cut at line 95, a map attempt still running."""
    logs = tmp_path / "logs-only"
    shutil.copytree(SAMPLE / "bench-8mb-sel1.0" / "logs", logs)
    log = logs / "job.log"
    log.write_text("".join(log.read_text(encoding="utf-8").splitlines(keepends=True)[:95]), encoding="utf-8")
    return logs
QMC = "linkedin-dr-elephant/history-done/job_1526555215992_0002-*.jhist"


def _cut_at_reduce_start(fixtures_dir: Path, tmp_path: Path) -> Path:
    """The QuasiMonteCarlo .jhist cut just after its reduce attempt started (the reduce still running)."""
    src = next(fixtures_dir.glob(QMC))
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if line.lstrip().startswith('{"type":"REDUCE_ATTEMPT_STARTED"')) + 1
    path = tmp_path / src.name
    path.write_text("".join(lines[:cut]), encoding="utf-8")
    return path


def test_a_chrome_trace_of_an_attempt_without_status_is_json(tmp_path: Path) -> None:
    # the bundled sample's job log cut while a map ran: pandas gives its missing status as NaN, which
    # json.dumps wrote as a bare NaN: no JSON, refused by Perfetto and chrome://tracing
    log = _cut_log(tmp_path)
    store = Store(tmp_path / "s")
    ingest_paths([log], store)
    out = CliRunner().invoke(main, ["timeline", JOB, "--store", str(tmp_path / "s"), "--out", str(tmp_path / "t.json")])
    assert out.exit_code == 0, out.output

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in a trace")

    events = json.loads((tmp_path / "t.json").read_text(), parse_constant=refuse)["traceEvents"]
    assert None in {e["args"]["status"] for e in events if e["ph"] == "X" and "status" in e.get("args", {})}


def test_an_svg_of_a_title_with_control_characters_is_xml(tmp_path: Path) -> None:
    # a job name from a trace with U+0001 in it went into the SVG raw: no viewer opens it
    fig = Figure()
    fig.add_subplot().set_title("Quasi\u000bMonte\u0001Carlo", parse_math=False)
    save_figure(fig, tmp_path / "t.svg", "svg")
    ET.parse(tmp_path / "t.svg")  # well-formed
    assert "Quasi\ufffdMonte\ufffdCarlo" in (tmp_path / "t.svg").read_text(encoding="utf-8")


def test_a_merged_profiles_dataflow_ratios_are_its_own() -> None:
    # dataflow (Herodotou's ds*) and costs were weighted by map count, the top-level
    # selectivities by bytes and records: one merged profile gave two map selectivities
    a = toy_profile()
    b = replace(toy_profile(), source=ProfileSource(job_ids=("job_1_0002",), job_name="wordcount",
                                                   config={"io.sort.mb": "100"}),
                input=InputStats(60, 32 * 2**20, 40 * 2**20, 320_000, 330_000), map_size_sel=2.0, map_recs_sel=12.0)
    a = replace(a, dataflow=replace(a.dataflow, map_size_sel=a.map_size_sel, map_recs_sel=a.map_recs_sel,
                                    input_pair_width=a.input.total_bytes / a.input.total_records))  # fmt: skip
    b = replace(b, dataflow=replace(b.dataflow, map_size_sel=b.map_size_sel, map_recs_sel=b.map_recs_sel,
                                    input_pair_width=b.input.total_bytes / b.input.total_records))  # fmt: skip
    m = merge_profiles([a, b])
    assert m.dataflow.map_size_sel == pytest.approx(m.map_size_sel)
    assert m.dataflow.map_recs_sel == pytest.approx(m.map_recs_sel)
    records = a.input.total_records + b.input.total_records
    assert m.dataflow.input_pair_width == pytest.approx((a.input.total_bytes + b.input.total_bytes) / records)


def test_a_job_that_never_finished_is_profiled_with_a_warning_and_no_completion_time(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    # a .jhist cut while its reduce ran has no job status: its profile had been a complete run's,
    # 2.3 s long where the run took 7.2 s, without a word
    path = _cut_at_reduce_start(fixtures_dir, tmp_path)
    store = Store(tmp_path / "s")
    (landed,) = ingest_paths([path], store).results
    assert landed.status == "partial", landed.error
    with pytest.warns(DataQualityWarning, match=r"never finished in its trace \(1 attempt\(s\) still running"):
        profile = extract_profile(store.connect(), "job_1526555215992_0002")
    assert profile.makespans_ms == ()
    full = Store(tmp_path / "full")
    ingest_paths([next(fixtures_dir.glob(QMC))], full)
    assert extract_profile(full.connect(), "job_1526555215992_0002").makespans_ms != ()


def test_a_task_logs_overhead_is_the_span_its_generic_phases_leave(fixtures_dir: Path, tmp_path: Path) -> None:
    # the task log's own setup, commit and other spans had counted as covering the attempt: the
    # overhead (JVM start, setup, commit) came out 0 for every task log
    store = Store(tmp_path / "s")
    ingest_paths([SAMPLE / "bench-8mb-sel1.0"], store)
    con = store.connect()
    job = con.execute("SELECT job_id FROM jobs").fetchone()[0]
    profile = extract_profile(con, job)
    # over the typical maps: a slow first map's extra is the profile's one-time term, not overhead
    _split, atypical = _first_wave_split(con, job, local_runner_job(job))
    (expected,) = con.execute("""
        SELECT avg(a.finish_ms - a.start_ms - coalesce(p.covered, 0))
        FROM attempts a LEFT JOIN (
            SELECT attempt_id, sum(dur_ms) AS covered FROM attempt_phases
            WHERE lane = 'main' AND phase NOT IN ('setup', 'commit', 'other')
            GROUP BY attempt_id) p USING (attempt_id)
        WHERE a.job_id = ? AND a.task_type = 'MAP' AND a.status = 'SUCCEEDED'
          AND NOT list_contains(?, a.attempt_id)""", [job, sorted(atypical)]).fetchone()  # fmt: skip
    assert profile.map_task_overhead_ms is not None
    assert profile.map_task_overhead_ms > 0
    assert profile.map_task_overhead_ms == pytest.approx(expected, rel=0.05)


def test_analyze_removes_a_profile_an_earlier_run_left(tmp_path: Path) -> None:
    # analyze into the same --out after the job's data changed so that no profile can be made: the
    # first run's profile.json had stayed beside a report saying there is none
    out, job = tmp_path / "out", JOB
    first = CliRunner().invoke(main, ["analyze", str(SAMPLE / "bench-8mb-sel1.0"), "--store", str(tmp_path / "s1"),
                                      "--out", str(out), "--format", "csv"])  # fmt: skip
    assert first.exit_code == 0, first.output
    assert (out / job / "profile.json").exists()
    logs_only = _cut_log(tmp_path)
    second = CliRunner().invoke(main, ["analyze", str(logs_only), "--store", str(tmp_path / "s2"), "--out",
                                       str(out), "--format", "csv"])  # fmt: skip
    assert second.exit_code == 0, second.output
    assert f"warning: no profile.json for {job}" in second.stderr
    assert not (out / job / "profile.json").exists()


def _sample_frames(tmp_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    from profiles import queries as q

    store = Store(tmp_path / "sample")
    ingest_paths([SAMPLE / "bench-8mb-sel1.8-merges"], store)
    con = store.connect()
    (job,) = con.execute("SELECT job_id FROM jobs").fetchone() or ("",)
    frames = q.JobFrames.query(con, job)
    return frames.timeline(), frames.phases


def test_the_gantt_draws_a_helper_threads_phases_beside_the_task_thread(tmp_path: Path) -> None:
    # The SpillThread's spills (lane 'background') had been painted at full height over the map's
    # collect: ~0.9 s of a map's collect was drawn as spill.  Now they are thin bars at the row's foot.
    from matplotlib.collections import PolyCollection

    from profiles.timeline_plot import gantt_figure

    timeline, phases = _sample_frames(tmp_path)
    background = phases[phases["lane"] == "background"]
    assert len(background) > 0
    fig = gantt_figure(timeline, phases)
    bars = [path.vertices for c in fig.axes[0].collections if isinstance(c, PolyCollection) for path in c.get_paths()]
    heights = sorted({round(float(v[:, 1].max() - v[:, 1].min()), 2) for v in bars})
    assert heights == [0.18, 0.8]
    thin = [v for v in bars if v[:, 1].max() - v[:, 1].min() < 0.5]
    assert len(thin) == len(background)
    # every thin bar lies in the lower part of its row (rows grow downwards: row + 0.22 .. row + 0.4)
    assert all(float(v[:, 1].min()) % 1 == pytest.approx(0.22) for v in thin)


def test_a_chrome_trace_puts_helper_phases_on_a_companion_thread_with_their_work(tmp_path: Path) -> None:
    from profiles.timeline_plot import chrome_trace

    timeline, phases = _sample_frames(tmp_path)
    events = chrome_trace(timeline, phases, job_id="j")["traceEvents"]
    drawn = [e for e in events if e["ph"] == "X" and e["cat"] == "phase"]
    assert {e["args"]["lane"] for e in drawn} == {"main", "background"}
    for e in drawn:
        assert (e["tid"] > 10_000) == (e["args"]["lane"] == "background")
        assert e["args"]["busy_ms"] <= e["dur"] / 1000 + 1e-6


def test_an_attempt_without_a_finish_is_drawn_to_the_jobs_last_time(fixtures_dir: Path, tmp_path: Path) -> None:
    # A history cut while its reduce ran: the running reduce, the attempt a user of a hung job looks
    # for, had been left out of the Gantt chart and the Chrome trace without a word.
    from profiles import queries as q
    from profiles.timeline_plot import chrome_trace, gantt_figure

    path = _cut_at_reduce_start(fixtures_dir, tmp_path)
    store = Store(tmp_path / "s")
    ingest_paths([path], store)
    frames = q.JobFrames.query(store.connect(), "job_1526555215992_0002")
    timeline = frames.timeline()
    running = timeline[timeline["start_ms"].notna() & timeline["finish_ms"].isna()]
    assert len(running) == 1
    (attempt,) = running["attempt_id"]
    events = chrome_trace(timeline, frames.phases, job_id="j")["traceEvents"]
    (event,) = [e for e in events if e["ph"] == "X" and e["name"] == attempt]
    assert "unfinished" in event["args"]
    last = float(timeline[["start_ms", "finish_ms"]].max().max())
    assert event["ts"] + event["dur"] == pytest.approx((last - _t0(timeline)) * 1000)
    fig = gantt_figure(timeline, frames.phases)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert attempt in labels
    assert "no finish (history cut)" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def _t0(timeline: pd.DataFrame) -> float:
    return float(timeline["t0_ms"].dropna().min())


def test_a_gantt_of_a_cjk_job_name_warns_of_no_glyph_and_lists_plain_phases_once(tmp_path: Path) -> None:
    # matplotlib had printed a "Glyph ... missing" warning, with its source lines, per character of a
    # CJK job name in report and timeline; and setup, commit, wait and "(no phase)" were four legend
    # entries in one grey.
    import warnings

    from profiles.timeline_plot import gantt_figure

    timeline, phases = _sample_frames(tmp_path)
    fig = gantt_figure(timeline, phases, title="日本語のジョブ")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save_figure(fig, tmp_path / "g.png", "png")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    greys = [label for label in legend if "no phase" in label]
    assert len(greys) == 1
    assert "setup" in greys[0]
    assert "setup" not in legend
