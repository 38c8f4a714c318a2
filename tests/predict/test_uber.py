"""Uber mode (predict.uber): Hadoop's decision, and predictions of runs it uberizes.

Known answers from ``JobImpl.makeUberDecision`` (Hadoop 3): enabled, at most 9 maps and 1 reduce,
at most the block size of input, tasks that fit the AM's container, no chain job.  An uberized run
is predicted as one slot in one JVM with the reduces after the maps, whatever the cluster's size.
"""

from __future__ import annotations

import dataclasses

import pytest

from phaseline.errors import ProfileError
from predict import core
from predict.core import Cluster, Dataset
from predict.settings import JobSettings
from predict.uber import DEFAULT_BLOCK_BYTES, decide, uber_inputs
from profiles.profile import JobProfile
from tests.predict.doubles import MB, LinearPlatform, toy_profile

ON = JobSettings(reduces=1, ubertask_enable=True)


def test_hadoops_rule_known_answers() -> None:
    assert decide(ON, 9, DEFAULT_BLOCK_BYTES).uber  # every limit is inclusive
    assert decide(dataclasses.replace(ON, reduces=0), 1, 1.0).uber
    assert decide(JobSettings(reduces=1), 1, 1.0).reasons == ("not enabled (mapreduce.job.ubertask.enable)",)
    assert decide(ON, 10, 1.0).reasons == ("too many maps (10 > 9)",)
    assert decide(dataclasses.replace(ON, reduces=2), 1, 1.0).reasons == ("too many reduces (2 > 1)",)
    assert decide(ON, 1, DEFAULT_BLOCK_BYTES + 1).reasons[0].startswith("too much input")
    # the block size the job's configuration names is the default limit; maxbytes overrides it
    assert not decide(ON, 1, 65 * MB, {"dfs.blocksize": "64m"}).uber
    assert decide(dataclasses.replace(ON, ubertask_max_bytes=256 * MB), 1, 200 * MB, {"dfs.blocksize": "64m"}).uber
    assert decide(dataclasses.replace(ON, ubertask_max_maps=20), 20, 1.0).uber
    big = dataclasses.replace(ON, reduce_memory_mb=2048.0)
    assert decide(big, 1, 1.0).reasons == ("too much RAM (2048 MB > the AM's 1536 MB)",)
    assert decide(dataclasses.replace(big, reduces=0), 1, 1.0).uber  # a map-only job: the maps' memory alone
    assert decide(dataclasses.replace(ON, map_vcores=2), 1, 1.0).reasons == ("too much CPU (2 > the AM's 1 vcores)",)
    chain = {"mapreduce.job.map.class": "org.apache.hadoop.mapreduce.lib.chain.ChainMapper"}
    assert decide(ON, 1, 1.0, chain).reasons == ("chainjob",)


def test_the_settings_read_hadoops_uber_keys() -> None:
    s = JobSettings.from_config({
        "mapreduce.job.ubertask.enable": "true", "mapreduce.job.ubertask.maxmaps": "4",
        "mapreduce.job.ubertask.maxbytes": "32m", "yarn.app.mapreduce.am.resource.mb": "1024",
        "mapreduce.map.memory.mb": "512",
    })  # fmt: skip
    assert (s.ubertask_enable, s.ubertask_max_maps, s.ubertask_max_bytes) == (True, 4, 32 * MB)
    assert (s.am_memory_mb, s.map_memory_mb) == (1024.0, 512.0)
    assert not JobSettings.from_config({}).ubertask_enable


def _uber_profile(uberized: bool = True) -> JobProfile:
    p = toy_profile()
    config = {**p.source.config, "mapreduce.job.ubertask.enable": "true"}
    return dataclasses.replace(p, source=dataclasses.replace(p.source, config=config, uberized=uberized))


PLATFORM = LinearPlatform()
SMALL = Dataset(4 * 16 * MB, splits=4)


@pytest.mark.parametrize("model", core.models())
def test_an_uberized_run_is_one_slot_whatever_the_cluster(model: str) -> None:
    profile = _uber_profile()
    settings = JobSettings.from_config(profile.source.config, reduces=1)
    uber = core.get(model).predict(profile, PLATFORM, Cluster(2, 2, 2), SMALL, settings)
    sequential = core.get(model).predict(
        profile, PLATFORM, Cluster(1, 1, 1, uber=True), SMALL,
        dataclasses.replace(settings, ubertask_enable=False, slowstart=1.0),
    )  # fmt: skip
    assert uber.seconds == pytest.approx(sequential.seconds)
    assert any(a.startswith("uberized (4 map(s) + 1 reduce(s)") for a in uber.assumptions)
    parallel = core.get(model).predict(
        profile, PLATFORM, Cluster(2, 2, 2), SMALL, dataclasses.replace(settings, ubertask_enable=False)
    )
    assert uber.seconds > parallel.seconds  # four maps one after another, not on four slots


def test_a_profile_of_an_uberized_run_says_when_the_run_is_not() -> None:
    profile = _uber_profile()
    settings = JobSettings.from_config(profile.source.config, reduces=1)
    inputs = core.Inputs(profile, PLATFORM, Cluster(2, 2, 2), Dataset(20 * 16 * MB, splits=20), settings)
    same, said = uber_inputs(inputs, 20)
    assert same is inputs
    assert said is not None
    assert "too many maps (20 > 9)" in said
    assert "does not hold" in said
    # a profile of task JVMs of their own, predicted uberized: says the start-up stays in
    inputs = dataclasses.replace(inputs, profile=_uber_profile(uberized=False), dataset=SMALL)
    changed, said = uber_inputs(inputs, 4)
    assert changed.cluster == Cluster(1, 1, 1, uber=True)
    assert changed.settings.slowstart == 1.0
    assert said is not None
    assert "start-up stays in every task's cost" in said
    # neither uberized: nothing said, nothing changed
    plain = dataclasses.replace(inputs, settings=dataclasses.replace(settings, ubertask_enable=False))
    assert uber_inputs(plain, 4) == (plain, None)
    # asked for (--set mapreduce.job.ubertask.enable=true) where Hadoop would not: says why
    asked = dataclasses.replace(inputs, settings=dataclasses.replace(settings, ubertask_enable=True))
    assert uber_inputs(asked, 12)[1] == (
        "not uberized (12 map(s) + 1 reduce(s), 64.0 MiB of input): too many maps (12 > 9)"
    )


def test_a_profile_keeps_whether_its_run_was_uberized() -> None:
    profile = _uber_profile()
    assert profile.source.one_jvm
    assert not profile.source.local_runner
    again = JobProfile.from_json(profile.to_json())
    assert again.source.uberized
    data = profile.to_dict()
    del data["source"]["uberized"]  # a profile from before the field: not uberized
    assert not JobProfile.from_dict(data).source.uberized
    data["source"]["uberized"] = "yes"
    with pytest.raises(ProfileError, match=r"source\.uberized"):
        JobProfile.from_dict(data)
