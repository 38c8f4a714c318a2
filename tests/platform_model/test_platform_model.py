"""The platform model: fitted from a profile, saved and loaded, and a model file that is wrong refused."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phaseline.errors import ExtrapolationWarning, InsufficientDataError, PlatformModelError
from platform_model.model import PlatformModel, fit_platform
from platform_model.profile import (
    profile_from_arrays,
)
from tests.platform_model.platform_doubles import MIB, _synthetic_profile


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
