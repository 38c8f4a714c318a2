"""A generator's profile (profiles.generated_input): its maps make their records, so what they make is
its input.  Known answers from a real TeraGen (Hadoop 3.4.1, 10 GB in 2 maps) and from small frames."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.errors import DataQualityWarning
from phaseline.store import Store
from platform_model.model import fit_platform
from platform_model.profile import profile_from_arrays
from profiles.extract import extract_profile
from profiles.generated_input import generated_input

TERAGEN = "job_1756057717712_0001"


def _maps(read: list[int | None], made: list[int | None], out: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"input_bytes": pd.array(read, dtype="Int64"), "input_records": pd.array(made, dtype="Int64"),
                         "output_bytes": out})  # fmt: skip


def test_maps_that_read_nothing_but_made_records_take_their_output_as_input() -> None:
    with pytest.warns(DataQualityWarning, match=r"job_1: its maps read no input but made 300 records .* 30,000 bytes"):
        got = generated_input("job_1", _maps([0, 0], [100, 200], [10_000, 20_000]))
    assert list(got["input_bytes"]) == [10_000, 20_000]


@pytest.mark.parametrize(
    ("read", "made", "out"),
    [
        ([0, 64], [100, 200], [10_000, 20_000]),  # one map read bytes: a reader, not a generator
        ([0, 0], [0, 200], [10_000, 20_000]),  # a map made nothing: no generator's evidence
        ([0, 0], [100, 200], [0, 20_000]),  # a map wrote nothing
        ([None, None], [100, 200], [10_000, 20_000]),  # bytes read not counted (Rumen's -1): unknown, not 0
        ([0, None], [100, 200], [10_000, 20_000]),
        ([0, 0], [100, None], [10_000, 20_000]),  # records not counted
    ],
)
def test_any_other_run_is_left_as_it_is(read: list[int | None], made: list[int | None], out: list[int]) -> None:
    maps = _maps(read, made, out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert generated_input("job_1", maps) is maps
    assert generated_input("job_1", maps.iloc[0:0]).empty


def test_a_real_teragen_is_profiled_by_what_it_generated(tmp_path: Path, fixtures_dir: Path) -> None:
    logs = fixtures_dir / "splitlog-yarn-logs" / "application_1756057717712_0001.yarn-logs.txt.gz"
    store = Store(tmp_path / "store")
    ingest_paths([logs], store)
    with warnings.catch_warnings(record=True) as said:  # (its one wave of maps is warned of too)
        warnings.simplefilter("always", DataQualityWarning)
        profile = extract_profile(store.connect(), TERAGEN)
    assert any("made 100,000,000 records" in str(w.message) and "10,000,000,000 bytes" in str(w.message)
               for w in said)  # fmt: skip
    # 2 maps of 50,000,000 rows of 100 bytes, each row written as it was made
    assert (profile.input.splits, profile.input.avg_split_bytes, profile.input.avg_split_records) == (
        2, 5e9, 5e7)  # fmt: skip
    assert profile.map_size_sel == 1.0
    assert profile.map_recs_sel == 1.0
    assert profile.dataflow.input_pair_width == 100.0
    assert profile.num_reduces == 0
    # as a user would: twice the data on twice the maps, two waves on one node's two slots; every model answers
    profile.save(tmp_path / "teragen.json")
    mb = 2.0**20
    x = np.array([1, 4, 16, 256, 4096, 16384] * 6, dtype=float) * mb
    phases = np.repeat(["read", "collect", "spill", "merge", "shuffle", "write"], 6)
    platform = fit_platform(profile_from_arrays(phases, x, 50 + x / 2e5), split=False).save(tmp_path / "platform.json")
    result = CliRunner().invoke(main, ["predict", "--profile", str(tmp_path / "teragen.json"), "--platform",
                                       str(platform), "--input-bytes", "20000000000", "--splits", "4",
                                       "--nodes", "1", "--map-slots-per-node", "2", "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {r["model"] for r in rows} >= {"bounds", "herodotou", "critical_path", "simulation", "vianna"}
    assert all(r["seconds"] is not None and r["seconds"] > 0 for r in rows), rows
