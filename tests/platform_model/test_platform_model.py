"""The platform profile SQL, the model file, and the Table-1 report.

The profile query gets golden tests on tiny inline tables (the store's views
are replaced by registered Arrow tables of the declared schemas)::

    map attempt m0:   read+map+collect |spill(main)| merge        spill(background) overlaps the map
                      [0 ............ 100] [100..130] [130..150]   [40 .. 60]
    reduce attempt r0: wait | shuffle | sort | reduce+write
                              [10..70]  [70..90]
"""

from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import orjson
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phaseline.errors import ExtrapolationWarning, InsufficientDataError, PlatformModelError, SchemaError
from phaseline.schemas import TABLES
from platform_model.accuracy import (
    _most_within,
    accuracy_report,
    noise_ceiling,
    relative_errors,
    render_markdown,
    table1,
)
from platform_model.model import PlatformModel, fit_platform
from platform_model.profile import (
    UNSPLIT_WITH_JFR,
    profile_from_arrays,
    profile_from_connection,
    profile_from_csv,
)

MIB = float(1 << 20)
JOB = "job_1_0001"


def _table(name: str, rows: list[dict[str, object]]) -> pa.Table:
    schema = TABLES[name].schema
    full = [{c: r.get(c) for c in schema.names} for r in rows]
    return pa.Table.from_pylist(full, schema=schema)


def _con(phases: list[dict[str, object]], attempts: list[dict[str, object]],
         counters: list[dict[str, object]] | None = None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.register("attempts", _table("attempts", attempts))
    con.register("attempt_phases", _table("attempt_phases", phases))
    con.register("counters", _table("counters", counters or []))
    con.register("conf", _table("conf", [
        {"job_id": JOB, "key": "mapreduce.task.io.sort.factor", "value": "10"},
        {"job_id": JOB, "key": "mapreduce.reduce.memory.totalbytes", "value": str(8 << 20)},
        {"job_id": JOB, "key": "unrelated.key", "value": "x"},
    ]))
    con.register("jobs", _table("jobs", [{"job_id": JOB, "hadoop_version": "3.4.1", "source_format": "engine",
                                          "submit_ms": 0, "finish_ms": 1000}]))
    return con


def _attempt(aid: str, ttype: str, status: str = "SUCCEEDED") -> dict[str, object]:
    return {"job_id": JOB, "task_id": aid.replace("attempt", "task")[:-2], "attempt_id": aid,
            "task_type": ttype, "status": status, "host": "localhost"}


def _phase(aid: str, ttype: str, phase: str, start: int, end: int, data: int | None, lane: str = "main",
           dur: int | None = None) -> dict[str, object]:
    return {"job_id": JOB, "attempt_id": aid, "task_type": ttype, "phase": phase, "start_ms": start,
            "end_ms": end, "dur_ms": end - start if dur is None else dur, "data_bytes": data, "lane": lane}


def golden_connection() -> duckdb.DuckDBPyConnection:
    m0, r0, m_failed = "attempt_1_0001_m_000000_0", "attempt_1_0001_r_000000_0", "attempt_1_0001_m_000001_0"
    phases = [
        _phase(m0, "MAP", "read+map+collect", 0, 100, 1000),
        _phase(m0, "MAP", "spill", 40, 60, 600, lane="background"),
        _phase(m0, "MAP", "spill", 100, 130, 400),
        _phase(m0, "MAP", "merge", 130, 150, 333),  # one partition's last merge pass
        _phase(r0, "REDUCE", "wait", 0, 10, None),
        _phase(r0, "REDUCE", "shuffle", 10, 70, 5000),
        _phase(r0, "REDUCE", "merge", 20, 40, 2000, lane="background"),  # reduce-side merge: not the map merge
        _phase(r0, "REDUCE", "sort", 70, 90, 5000),
        _phase(r0, "REDUCE", "reduce+write", 90, 120, 4000),
        _phase(m_failed, "MAP", "spill", 0, 10, 10),
    ]
    attempts = [_attempt(m0, "MAP"), _attempt(r0, "REDUCE"), _attempt(m_failed, "MAP", "FAILED")]
    counters = [{"job_id": JOB, "attempt_id": m0, "scope": "attempt", "group_name": "org.apache.hadoop.mapreduce.TaskCounter",
                 "counter_name": "MAP_OUTPUT_BYTES", "value": 1010}]
    return _con(phases, attempts, counters)


def test_profile_sql_golden() -> None:
    prof = profile_from_connection(golden_connection(), source="golden")
    rows = {(r.phase, r.attempt_id[-10:]): (r.data_bytes, r.dur_ms) for r in prof.frame.itertuples()}
    assert rows == {
        ("spill", "m_000000_0"): (1000.0, 50.0),  # both lanes' spills: 20 + 30 ms, 600 + 400 bytes
        ("merge", "m_000000_0"): (1010.0, 20.0),  # the whole map output merged: MAP_OUTPUT_BYTES
        ("shuffle", "r_000000_0"): (5000.0, 80.0),  # shuffle + sort (section 2), the shuffle's bytes
    }
    # read and collect only exist inside read+map+collect, write inside reduce+write: listed, not dropped
    missing = {(m.phase, m.reason) for m in prof.missing}
    assert missing == {
        ("read", "only inside the combined span read+map+collect"),
        ("collect", "only inside the combined span read+map+collect"),
        ("write", "only inside the combined span reduce+write"),
    }
    assert prof.runs_missing("read") == (JOB,)
    assert prof.settings["mapreduce.task.io.sort.factor"] == "10"
    assert "unrelated.key" not in prof.settings
    assert prof.cluster["hosts"] == 1
    assert prof.cluster["hadoop_versions"] == "3.4.1"


def test_timed_phases_are_profiled_to_the_microsecond() -> None:
    # The benchmark job's timers give read, collect and write in microseconds (attempt_phases.dur_us);
    # laid out in whole ms a 4.6 ms read is 5 ms, 9 % off.  Phases without a timer keep their ms.
    m0, r0 = "attempt_1_0001_m_000000_0", "attempt_1_0001_r_000000_0"
    phases = [
        _phase(m0, "MAP", "read", 0, 5, 1000) | {"dur_us": 4_600},
        _phase(m0, "MAP", "map", 5, 70, None) | {"dur_us": 65_200},
        _phase(m0, "MAP", "collect", 70, 100, 1000) | {"dur_us": 30_200},
        _phase(m0, "MAP", "spill", 100, 130, 400),
        _phase(r0, "REDUCE", "shuffle", 10, 70, 5000),
        _phase(r0, "REDUCE", "reduce", 90, 100, 4000) | {"dur_us": 9_750},
        _phase(r0, "REDUCE", "write", 100, 120, 4000) | {"dur_us": 20_250},
    ]
    con = _con(phases, [_attempt(m0, "MAP"), _attempt(r0, "REDUCE")])
    rows = {r.phase: r.dur_ms for r in profile_from_connection(con).frame.itertuples()}
    assert rows == {"read": 4.6, "collect": 30.2, "spill": 30.0, "shuffle": 60.0, "write": 20.25}


def test_a_span_a_jfr_recording_left_combined_is_said_to_want_larger_tasks() -> None:
    # On 2 cores JFR took 1-3 of a 25 ms map's ~12 samples: the scaled backtest plan's maps of 0.25 and
    # 1 MiB stayed combined, read had one data size and `fit` refused it, saying only "run benchmarks
    # whose data sizes differ" (the plan had them).  A run with a recording now says what to change.
    con = golden_connection()
    con.register("samples", _table("samples", [{"job_id": JOB, "source": "jfr", "ts_ms": 5}]))
    reasons = {m.phase: m.reason for m in profile_from_connection(con).missing}
    assert reasons["read"] == "only inside the combined span read+map+collect" + UNSPLIT_WITH_JFR
    assert reasons["write"] == "only inside the combined span reduce+write" + UNSPLIT_WITH_JFR
    assert "`phaseline bench plan --task-scale`" in UNSPLIT_WITH_JFR
    other = golden_connection()  # samples of another job, or from jstack, say nothing of this run
    other.register("samples", _table("samples", [{"job_id": "job_2_0001", "source": "jfr"},
                                                  {"job_id": JOB, "source": "jstack"}]))
    assert {m.reason for m in profile_from_connection(other).missing if m.phase == "read"} == {
        "only inside the combined span read+map+collect"}


def test_profile_merge_of_a_single_spill_processed_nothing() -> None:
    # ingest's merge row of a one-spill map says 0 bytes (a rename): the counter must not override it
    m0, r0 = "attempt_1_0001_m_000000_0", "attempt_1_0001_r_000000_0"
    phases = [
        _phase(m0, "MAP", "read+map+collect", 0, 100, 1000),
        _phase(m0, "MAP", "spill", 100, 130, 900),
        _phase(m0, "MAP", "merge", 130, 132, 0),
        _phase(r0, "REDUCE", "shuffle", 10, 70, 5000),
    ]
    counters = [{"job_id": JOB, "attempt_id": m0, "scope": "attempt", "group_name": "org.apache.hadoop.mapreduce.TaskCounter",
                 "counter_name": "MAP_OUTPUT_BYTES", "value": 910}]
    prof = profile_from_connection(_con(phases, [_attempt(m0, "MAP"), _attempt(r0, "REDUCE")], counters))
    rows = {r.phase: (r.data_bytes, r.dur_ms) for r in prof.frame.itertuples()}
    assert rows["merge"] == (0.0, 2.0)
    assert rows["spill"] == (900.0, 30.0)


def test_profile_sql_empty_store() -> None:
    prof = profile_from_connection(_con([], []))
    assert len(prof) == 0
    assert prof.missing == ()
    with pytest.raises(InsufficientDataError, match="no generic phase has data"):
        fit_platform(prof)


def test_profile_lists_an_attempt_without_a_phase_row() -> None:
    m0 = "attempt_1_0001_m_000000_0"
    con = _con([_phase(m0, "MAP", "spill", 0, 10, 100)], [_attempt(m0, "MAP"),
                                                            _attempt("attempt_1_0001_r_000000_0", "REDUCE")])
    prof = profile_from_connection(con)
    reasons = {(m.phase, m.reason) for m in prof.missing if m.attempt_id == m0}
    assert ("merge", "no duration (no phase row in the attempt's log)") in reasons


def _write_csv(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(["phase,data_bytes,dur_ms", *rows]) + "\n")
    return path


def test_csv_profile_and_errors(tmp_path: Path) -> None:
    good = _write_csv(tmp_path / "ok.csv", ["read,16777216,2010", "Read, 16777216 ,2020", "collect,8388608,1210"])
    prof = profile_from_csv(good)
    assert prof.frame["phase"].tolist() == ["read", "read", "collect"]
    assert prof.frame["data_bytes"].tolist() == [16777216.0] * 2 + [8388608.0]
    with pytest.raises(SchemaError, match=r"bad\.csv:3: unknown phase 'mapp'"):
        profile_from_csv(_write_csv(tmp_path / "bad.csv", ["read,1,2", "mapp,1,2"]))
    with pytest.raises(SchemaError, match=r"neg\.csv:2: dur_ms '-5' is not a non-negative number"):
        profile_from_csv(_write_csv(tmp_path / "neg.csv", ["read,1,-5"]))
    (tmp_path / "cols.csv").write_text("phase,bytes,ms\nread,1,2\n")
    with pytest.raises(SchemaError, match="missing column"):
        profile_from_csv(tmp_path / "cols.csv")
    with pytest.raises(SchemaError, match=r"wide\.csv:3: 5 cells where the header has 3"):
        profile_from_csv(_write_csv(tmp_path / "wide.csv", ["read,1,2", "read,1,2,3,4"]))
    # a line is the file's own: blank lines count, a quoted cell's line break stays in the cell; a
    # column named twice is refused (it had raised out of pandas, 'DataFrame' object has no attribute 'str')
    with pytest.raises(SchemaError, match=r"blank\.csv:4: data_bytes 'abc' is not a non-negative number"):
        profile_from_csv(_write_csv(tmp_path / "blank.csv", ["read,1,2", "", "read,abc,5"]))
    with pytest.raises(SchemaError, match=r"quoted\.csv:3: data_bytes '1\\n2' is not a non-negative number"):
        profile_from_csv(_write_csv(tmp_path / "quoted.csv", ['read,"1\n2",5']))
    for header in ("phase,data_bytes,dur_ms,dur_ms", "phase,data_bytes,dur_ms,run_id,Run_ID"):
        (tmp_path / "twice.csv").write_text(f"{header}\nread,1,2,3\n")
        with pytest.raises(SchemaError, match=r"twice\.csv:1: column\(s\) (dur_ms|run_id) given twice"):
            profile_from_csv(tmp_path / "twice.csv")
    with pytest.raises(SchemaError, match=r"huge\.csv:3: not a well-formed CSV \(field larger than field limit"):
        profile_from_csv(_write_csv(tmp_path / "huge.csv", ["read,1,2", "read,1," + "2" * 200_000]))
    assert profile_from_csv(_write_csv(tmp_path / "gaps.csv", ["read,1,2", "", "read,3,4"])).frame["attempt_id"].tolist() == [
        "row2",
        "row4",
    ]
    (tmp_path / "utf16.csv").write_bytes("phase,data_bytes,dur_ms\n".encode("utf-16"))
    with pytest.raises(SchemaError, match=r"utf16\.csv:1: not a CSV of UTF-8 text"):
        profile_from_csv(tmp_path / "utf16.csv")


def _synthetic_profile(seed: int = 0, runs: int = 10, per_run: int = 20):
    rng = np.random.default_rng(seed)
    phase, x, y, run = [], [], [], []
    for r in range(runs):
        for ph, a, b in (("spill", 20.0, 8.0), ("merge", 5.0, 3.0), ("shuffle", 100.0, 12.0)):
            d = rng.uniform(1, 64, per_run) * MIB
            t = (a + b * d / MIB) * rng.normal(1.0, 0.04, per_run)
            phase += [ph] * per_run
            x += d.tolist()
            y += t.tolist()
            run += [f"job_{r}"] * per_run
    return profile_from_arrays(phase, x, y, run)


def test_runs_that_differed_in_a_setting_fit_without_a_configured_break() -> None:
    # A store's runs with io.sort.factor 10 and 2 (the bundled sample's) record "10,2": no one break.
    settings = {"mapreduce.reduce.memory.totalbytes": str(700 << 20), "mapreduce.task.io.sort.factor": "10,2"}
    model = fit_platform(_synthetic_profile(), settings=settings)
    assert model.shuffle_thresholds is None
    assert model.phases["shuffle"].config_break_bytes is None
    assert model.duration_ms("shuffle", 32 * MIB) == pytest.approx(100 + 12 * 32, rel=0.05)


def test_model_round_trip_and_evaluation(tmp_path: Path) -> None:
    prof = _synthetic_profile()
    model = fit_platform(prof, settings={"mapreduce.reduce.memory.totalbytes": str(700 << 20)})
    assert set(model.phases) == {"spill", "merge", "shuffle"}
    assert set(model.unfitted) == {"read", "collect", "write"}
    assert model.shuffle_thresholds is not None
    assert model.phases["shuffle"].config_break_bytes == pytest.approx(model.shuffle_thresholds.break_bytes)
    path = model.save(tmp_path / "platform.json")
    loaded = PlatformModel.load(path)
    for phase in model.phases:
        for x in (2 * MIB, 30 * MIB, 60 * MIB):
            assert loaded.duration_ms(phase, x) == pytest.approx(model.duration_ms(phase, x), rel=1e-12)
    assert loaded.duration_ms("spill", 32 * MIB) == pytest.approx(20 + 8 * 32, rel=0.03)
    assert loaded.hadoop_settings["mapreduce.reduce.memory.totalbytes"] == str(700 << 20)
    with pytest.warns(ExtrapolationWarning, match="outside the fitted range"):
        loaded.duration_ms("spill", 1024 * MIB)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded.duration_ms("spill", 10 * MIB)  # inside: no warning
        top = loaded.phases["spill"].data_max_bytes
        loaded.duration_ms("spill", top * (1 + 1e-15) + 0.5)  # the end point give or take rounding: inside
    with pytest.warns(ExtrapolationWarning, match="outside the fitted range"):
        loaded.duration_ms("spill", top + 2.0)
    with pytest.raises(PlatformModelError, match="no submodel for phase 'read'"):
        loaded.duration_ms("read", MIB)
    with pytest.raises(PlatformModelError, match="unknown phase 'sorting'"):
        loaded.duration_ms("sorting", MIB)


def test_model_load_validates(tmp_path: Path) -> None:
    model = fit_platform(_synthetic_profile())
    doc = model.to_json()
    bad_version = doc | {"version": 99}
    (tmp_path / "v.json").write_bytes(orjson.dumps(bad_version))
    with pytest.raises(PlatformModelError, match="version 99 is not supported"):
        PlatformModel.load(tmp_path / "v.json")
    broken = copy.deepcopy(doc)
    broken["phases"]["spill"]["segments"][0]["slope_ms_per_byte"] = "fast"
    (tmp_path / "b.json").write_bytes(orjson.dumps(broken))
    with pytest.raises(PlatformModelError, match=r"segments\[0\]\.slope_ms_per_byte must be a finite number"):
        PlatformModel.load(tmp_path / "b.json")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(PlatformModelError, match="cannot read"):
        PlatformModel.load(tmp_path / "x.json")
    # every field of the wrong type or value is named, never a Python error
    bad_values: list[tuple[tuple[str | int, ...], object, str]] = [
        (("segments", 0, "n"), "abc", r"segments\[0\]\.n must be an integer >= 0"),
        (("segments", 0, "iterations"), None, r"segments\[0\]\.iterations must be an integer >= 0"),
        (("segments", 0, "norm"), [], r"segments\[0\]\.norm \[\] is unknown"),
        (("segments", 0, "slope_ms_per_byte"), -1e-6, r"segments\[0\]\.slope_ms_per_byte is negative"),
        (("runs",), {}, r"phases\.spill\.runs must be an integer >= 0"),
        (("two_segment_test",), True, r"phases\.spill\.two_segment_test must be an object"),
    ]
    for path, value, message in bad_values:
        mutated = copy.deepcopy(doc)
        target: Any = mutated["phases"]["spill"]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        (tmp_path / "m.json").write_bytes(orjson.dumps(mutated))
        with pytest.raises(PlatformModelError, match=message):
            PlatformModel.load(tmp_path / "m.json")


def test_model_load_refuses_lines_that_contradict_their_ranges(tmp_path: Path) -> None:
    """A hand-edited model: two lines swapped priced every size with the other line's (an audit's spill at
    1 MiB: 44.9 ms against 30.1 ms), a line's range outside its phase's, a version of true read as 1, a
    line that overflows had printed {"dur_ms": null} with numpy's RuntimeWarning."""
    doc = fit_platform(_synthetic_profile()).to_json()
    phase = doc["phases"]["spill"]
    lo, hi = phase["data_min_bytes"], phase["data_max_bytes"]
    mid = (lo + hi) / 2
    first = phase["segments"][0] | {"data_min_bytes": lo, "data_max_bytes": mid}
    second = phase["segments"][0] | {"data_min_bytes": mid, "data_max_bytes": hi, "intercept_ms": first["intercept_ms"] + 50}

    def load(mutate: Any) -> PlatformModel:
        mutated = copy.deepcopy(doc)
        mutate(mutated["phases"]["spill"], mutated)
        (tmp_path / "m.json").write_bytes(orjson.dumps(mutated))
        return PlatformModel.load(tmp_path / "m.json")

    ok = load(lambda p, d: p.update(segments=[first, second], break_bytes=mid))
    assert ok.duration_ms("spill", mid + 1) > ok.duration_ms("spill", mid - 1) + 49  # the second line beyond the break
    with pytest.raises(PlatformModelError, match=r"phases\.spill\.segments: the first line must hold the smaller data"):
        load(lambda p, d: p.update(segments=[second, first], break_bytes=mid))
    with pytest.raises(PlatformModelError, match=r"segments\[1\]: data range .* does not lie within the phase's"):
        load(lambda p, d: p.update(segments=[first, second | {"data_max_bytes": 2 * hi}], break_bytes=mid))
    with pytest.raises(PlatformModelError, match="version True is not supported"):
        load(lambda p, d: d.update(version=True))
    huge = load(lambda p, d: p["segments"][0].update(intercept_ms=1e308, slope_ms_per_byte=1e308))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning either
        with pytest.raises(PlatformModelError, match=f"gives no finite duration at {mid:.0f} bytes"):
            huge.duration_ms("spill", mid)


def test_too_few_points_says_how_many_more_runs() -> None:
    prof = profile_from_arrays(["spill"] * 4, [1e6, 2e6, 3e6, 4e6], [10, 20, 30, 40], ["a", "a", "b", "b"])
    with pytest.raises(InsufficientDataError, match=r"phase 'spill': 4 point\(s\) from 2 run\(s\).*about 1 more"):
        fit_platform(prof)


def test_skip_unfittable_records_the_reason_instead_of_raising() -> None:
    rng = np.random.default_rng(1)
    sizes = rng.uniform(1e6, 5e7, 40)
    phases = ["spill"] * 40 + ["read"] * 6 + ["merge"] * 3
    data = [*sizes, *([4194300.0] * 6), 1e6, 2e6, 3e6]  # read: one size only; merge: too few points
    dur = [*(5 + 2e-6 * sizes), *([40.0] * 6), 1.0, 2.0, 3.0]
    prof = profile_from_arrays(phases, data, dur, [f"run{i % 8}" for i in range(len(data))])
    with pytest.raises(InsufficientDataError, match="same data size"):
        fit_platform(prof)  # strict by default: the error says what to run
    model = fit_platform(prof, skip_unfittable=True)
    assert set(model.phases) == {"spill"}
    assert "same data size" in model.unfitted["read"]
    assert "more" in model.unfitted["merge"]
    with pytest.raises(PlatformModelError, match="read"):
        model.duration_ms("read", 1e6)


def test_table1_and_cross_validation() -> None:
    prof = _synthetic_profile(seed=3)
    model = fit_platform(prof)
    rows = table1(model, prof)
    assert {r.phase for r in rows} == {"spill", "merge", "shuffle"}
    for r in rows:
        # 4 % noise: ~99 % of points within 10 %
        assert r.within[0] > 0.95
        assert r.within[0] <= r.within[1] <= r.within[2]
    rep = accuracy_report(model, prof, folds=5)
    assert rep.folds == 5
    assert len(rep.held_out) == 3
    for r in rep.held_out:
        assert r.within_15 > 0.95
    text = render_markdown(rep, model)
    assert "| spill |" in text
    assert "held-out" in text
    assert "Not fitted: read" in text


def test_most_within_is_the_deepest_overlap_of_the_tolerance_intervals() -> None:
    # 100 and 120 share c in [102, 115] (15 %); 200 is alone: two of three at best
    assert _most_within(np.array([100.0, 120.0, 200.0]), 0.15) == 2
    assert _most_within(np.array([100.0, 140.0]), 0.15) == 1  # 115 < 119: no common value
    assert _most_within(np.array([100.0, 100.0, 100.0]), 0.10) == 3


def test_noise_ceiling_bounds_every_model_of_the_data() -> None:
    """Same-size rows of one run: no function of the data does better than the ceiling."""
    rng = np.random.default_rng(5)
    runs = np.repeat([f"job_{k}" for k in range(30)], 4)
    data = np.repeat(rng.uniform(1e6, 1e8, 30), 4)  # a run's 4 tasks process the same data
    dur = (50 + 2e-6 * data) * rng.lognormal(0.0, 0.3, data.size)  # 30 % task-to-task noise
    prof = profile_from_arrays(["spill"] * data.size, data, dur, runs)
    (ceiling,) = noise_ceiling(prof)
    assert ceiling.phase == "spill"
    assert ceiling.n == data.size
    assert ceiling.within[0] <= ceiling.within[1] <= ceiling.within[2] < 1.0
    model = fit_platform(prof)
    (fitted,) = table1(model, prof)
    assert fitted.within[1] <= ceiling.within[1]
    report = accuracy_report(model, prof, folds=3)
    assert report.ceiling == (ceiling,)
    assert f"| {100 * ceiling.within[1]:.0f} % |" in render_markdown(report, model)
    doc = report.to_json()
    w10, w15, w20 = ceiling.within
    assert doc["ceiling"] == [{"phase": "spill", "n": data.size, "within_10": w10, "within_15": w15, "within_20": w20}]
    in_sample = doc["in_sample"]
    assert isinstance(in_sample, list)
    (row,) = in_sample
    assert list(row) == ["phase", "n", "within_10", "within_15", "within_20", "median_error", "zero_ms"]
    assert (row["within_10"], row["within_15"], row["within_20"]) == fitted.within
    # the same rows without noise: everything can be matched
    quiet = profile_from_arrays(["spill"] * data.size, data, 50 + 2e-6 * data, runs)
    assert noise_ceiling(quiet)[0].within == (1.0, 1.0, 1.0)
    # a row alone at its size in its run is not counted
    lone = profile_from_arrays(["spill"] * 3, [1e6, 1e6, 5e7], [10.0, 11.0, 90.0], ["a", "a", "a"])
    assert noise_ceiling(lone)[0].n == 2


def test_relative_error_definition() -> None:
    """Zhang et al. 2013, section 6: |measured - predicted| / measured; undefined at 0 ms."""
    err = relative_errors([100.0, 200.0, 0.0], [110.0, 150.0, 5.0])
    assert err[:2].tolist() == pytest.approx([0.10, 0.25])
    assert np.isnan(err[2])


@settings(max_examples=60, deadline=None)
@given(
    a=st.floats(-500, 5000), b=st.floats(0, 1e-3), a2=st.floats(-5000, 5000), b2=st.floats(0, 1e-3),
    lo=st.floats(0, 1e8), span=st.floats(1.0, 1e10), frac=st.floats(0.05, 0.95), two=st.booleans(),
    probe=st.floats(0, 1),
)
def test_model_json_round_trip_property(a: float, b: float, a2: float, b2: float, lo: float, span: float,
                                        frac: float, two: bool, probe: float) -> None:
    """Any valid model survives save/load unchanged, and its predictions are never negative."""
    from platform_model.fit import LineFit, Norm
    from platform_model.model import PhaseModel

    hi = lo + span
    brk = lo + frac * span if two else None

    def line(ia: float, ib: float) -> LineFit:
        return LineFit(ia, ib, 1.0, 1e-9, 2.0, True, 5, 50, Norm.HUBER, False, lo, hi)

    segs = (line(a, b), line(a2, b2)) if two else (line(a, b),)
    nan = float("nan")
    sub = PhaseModel("spill", segs, brk, None, 100, 4, lo, hi, "bic", nan, nan, nan, nan, nan)
    model = PlatformModel({"spill": sub}, {"read": "no data"})
    back = PlatformModel.from_json(orjson.loads(orjson.dumps(model.to_json())))
    x = lo + probe * span
    assert back.phases["spill"].predict(x) == model.phases["spill"].predict(x)
    assert float(back.phases["spill"].predict(x)) >= 0.0
    assert back.unfitted == model.unfitted


def test_a_phase_with_no_measurable_row_leaves_the_overall_shares_alone() -> None:
    # a phase whose rows all measured 0 ms has n = 0 and NaN shares; NaN x 0 had made every
    # overall share NaN (the report's 'all' row blank)
    from platform_model.accuracy import AccuracyReport, AccuracyRow

    nan = float("nan")
    rows = (AccuracyRow("read", 20, (0.9, 1.0, 1.0), 0.05, 0), AccuracyRow("write", 0, (nan, nan, nan), nan, 10))
    report = AccuracyReport(in_sample=rows, held_out=rows, folds=2)
    assert report.overall_within() == pytest.approx((0.9, 1.0, 1.0))
    assert report.overall_within(held_out=True) == pytest.approx((0.9, 1.0, 1.0))
