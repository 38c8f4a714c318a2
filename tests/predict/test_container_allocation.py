"""YARN's ApplicationMaster rule for a job's shared containers: the maps' average over the map stage
against a walk of the rule completion by completion."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from predict.container_allocation import map_containers, reduces_allowed


def _walk(containers: int, maps: int, reduces: int, slowstart: float, rampup: float) -> float:
    """The rule walked one completion at a time: the containers left to the maps, averaged."""
    if maps <= 0 or reduces <= 0:
        return float(containers)
    start_after = min(maps, math.ceil(slowstart * maps - 1e-9))
    held = total = 0
    for done in range(maps):
        if done >= start_after:
            waiting = max(0, maps - done - (containers - held))
            held = reduces_allowed(containers, maps, done, waiting, reduces, rampup)
        total += containers - held
    return total / maps


@given(
    containers=st.integers(1, 64),
    maps=st.integers(0, 400),
    reduces=st.integers(0, 80),
    slowstart=st.sampled_from([0.0, 0.05, 0.5, 1.0]) | st.floats(0.0, 1.0),
    rampup=st.sampled_from([0.5, 1.0]) | st.floats(0.01, 1.0),
)
def test_the_stage_summed_at_once_is_the_walk(
    containers: int, maps: int, reduces: int, slowstart: float, rampup: float
) -> None:
    expected = _walk(containers, maps, reduces, slowstart, rampup)
    assert map_containers(containers, maps, reduces, slowstart, rampup) == pytest.approx(expected, rel=1e-12)


def test_a_large_job_keeps_the_ramp_up_limits_share() -> None:
    # 6,400 containers, 240 reduces: the reduces' share reaches their 240 containers once 3.75 % of the
    # 80,000 maps are done (6,400 x done / 80,000 >= 240); the maps hold the other 6,160 from then on
    avg = map_containers(6_400, 80_000, 240, 0.05, 0.5)
    assert avg == pytest.approx(_walk(6_400, 80_000, 240, 0.05, 0.5), rel=1e-12)
    assert 6_400 - 240 < avg < 6_400
