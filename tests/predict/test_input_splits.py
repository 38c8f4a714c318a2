"""How a prediction cuts its input into splits, as FileInputFormat does, at and past the profiled size."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from pathlib import Path

import pytest

from predict import core
from predict.core import Cluster, Dataset, JobSettings
from predict.tasks import resolve_input
from profiles.profile import ProfileSource
from profiles.profile_stats import InputStats
from tests.predict.doubles import CLUSTER, GB, MB, LinearPlatform, toy_profile


def test_input_is_cut_like_file_input_format() -> None:
    prof = toy_profile()
    same = resolve_input(prof, Dataset(20 * 64 * MB), JobSettings(reduces=1))
    assert same.splits == 20
    assert same.max_split_records == 650_000
    # the profiled size with other records (narrower ones): the splits stay, their records follow
    narrow = resolve_input(
        prof, Dataset(20 * 64 * MB, input_records=2 * 20 * 640_000), JobSettings(reduces=1)
    )
    assert (narrow.splits, narrow.avg_split_records, narrow.max_split_records) == (20, 1_280_000, 1_300_000)
    bigger = resolve_input(prof, Dataset(129 * MB), JobSettings(reduces=1, split_bytes=128 * MB))
    assert (bigger.splits, bigger.max_split_bytes, bigger.avg_split_bytes) == (2, 128 * MB, 64.5 * MB)
    assert bigger.avg_split_records == pytest.approx(64.5 * MB / (64 * MB / 640_000))
    given = resolve_input(prof, Dataset(10 * GB, splits=7, input_records=7e6), JobSettings(reduces=1))
    assert given.splits == 7
    assert given.avg_split_records == pytest.approx(1e6)
    # a count of splits and no split size: the count says how the input was cut (the profile how
    # unevenly); the assumed 128 MB block had made the largest of 2 x 2 MB splits 4 MB
    one = replace(prof, input=InputStats(1, 2 * MB, 2 * MB, 20_000, 20_000))
    cut = resolve_input(one, Dataset(4 * MB, splits=2), JobSettings(reduces=1))
    assert (cut.splits, cut.avg_split_bytes, cut.max_split_bytes, cut.max_split_records) == (
        2,
        2 * MB,
        2 * MB,
        20_000,
    )
    uneven = replace(prof, input=InputStats(2, 3 * MB, 4 * MB, 30_000, 40_000))
    cut = resolve_input(uneven, Dataset(12 * MB, splits=4), JobSettings(reduces=1))
    assert (cut.avg_split_bytes, cut.max_split_bytes) == (3 * MB, 4 * MB)
    default = resolve_input(
        replace(prof, input=replace(prof.input, splits=1)), Dataset(1 * GB), JobSettings(1)
    )
    assert default.splits == 8  # 1 GB of 128 MB blocks
    assert any("HDFS default" in a for a in default.assumptions)


def test_an_input_past_the_profiled_size_keeps_the_profiled_splits_size() -> None:
    # 20 splits of 64 MB profiled under a 128 MB dfs.blocksize (files smaller than a block): 1 %
    # more input had been cut by that block size, 10 splits instead of 21, and every model's time
    # fell by ~40 % (or, with no block size, by the largest split: uneven splits, fewer maps).
    prof = toy_profile(source=ProfileSource(job_ids=("job_1_0001",), job_name="wordcount",
                                            config={"dfs.blocksize": str(128 * MB)}))  # fmt: skip
    for profile in (prof, toy_profile()):
        settings = JobSettings.from_config(profile.source.config, reduces=4)
        at = resolve_input(profile, Dataset(20 * 64 * MB), settings)
        past = resolve_input(profile, Dataset(20 * 64 * MB * 1.0101), settings)
        assert (at.splits, past.splits) == (20, 21)
        assert past.avg_split_bytes == pytest.approx(20 * 64 * MB * 1.0101 / 21)
        assert past.max_split_bytes == pytest.approx(past.avg_split_bytes)  # as even as the profiled
        assert resolve_input(profile, Dataset(40 * 64 * MB), settings).splits == 40
        for m in ("bounds", "herodotou", "critical_path"):
            times = [
                core.get(m)
                .predict(profile, LinearPlatform(), CLUSTER, Dataset(20 * 64 * MB * f), settings)
                .seconds
                for f in (0.98, 1.0, 1.0101, 1.02, 1.5)
            ]
            # one more split than the profiled run's may end its waves a little sooner (smaller
            # maps in as many waves: critical path 38.2 -> 37.7 s), but never ~40 % sooner
            assert all(b >= 0.97 * a for a, b in itertools.pairwise(times)), (m, times)
            assert times[-1] > times[1] * 1.3, (m, times)
    # one profiled split larger than the block assumed (no block size in its config): its input
    # format did not cut by block, so 98 % of its input is one split too, not 4 of 128 MB (which
    # had made the time fall ~50 % on entering the profiled size's 1 % window)
    one = toy_profile(input=InputStats(1, 442 * MB, 442 * MB, 4_420_000, 4_420_000), num_maps=1)
    one_settings = JobSettings.from_config(one.source.config, reduces=4)
    assert [resolve_input(one, Dataset(442 * MB * f), one_settings).splits for f in (0.5, 0.98, 1.0, 1.02, 2.5)] == [
        1, 1, 1, 2, 3]  # fmt: skip
    # a block size the user sets still cuts every input
    settings = JobSettings.from_config(prof.source.config, reduces=4, split_bytes=256 * MB)
    assert resolve_input(prof, Dataset(20 * 64 * MB * 1.0101), settings).splits == 6


def test_the_profiled_runs_own_block_size_does_not_recut_its_input(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    # SLS's TeraGen ran 96 maps over 8 kB of (synthetic) input with dfs.blocksize 128 MB in its conf:
    # read as a split size someone gave, it had re-cut the profiled input into 1 map, so every model
    # predicted one map's job whatever the cluster (and critical_path, recalibrated on it, 0 s).
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from predict.tasks import profiled_settings
    from profiles.extract import extract_profile

    store = Store(tmp_path / "store")
    ingest_paths([fixtures_dir / "apache-hadoop" / "hadoop-sls" / "2jobs2min-rumen-jh.json"], store)
    profile = extract_profile(store.connect(), "job_1369942127770_1205")
    settings = profiled_settings(profile)
    assert profile.input.splits == 96
    assert settings.split_bytes == 128 * MB
    shape = resolve_input(profile, Dataset(profile.input.total_bytes), settings)
    assert shape.splits == 96
    assert any("its 96 splits are reused" in a for a in shape.assumptions)
    # a split size that is a change still cuts the input (the profiled one too)
    recut = resolve_input(profile, Dataset(profile.input.total_bytes, split_bytes=1024), settings)
    assert recut.splits == math.ceil(profile.input.total_bytes / 1024)

    # every model predicts the profiled run from its 96 maps (a platform of straight lines here)
    def seconds(nodes: int) -> dict[str, float]:
        cluster = Cluster(nodes=nodes, map_slots_per_node=2, reduce_slots_per_node=2)
        dataset = Dataset(profile.input.total_bytes)
        return {
            m: core.get(m).predict(profile, LinearPlatform(), cluster, dataset, settings).seconds
            for m in core.models()
        }

    few, many = seconds(4), seconds(48)
    assert all(many[m] < few[m] for m in few), (few, many)
