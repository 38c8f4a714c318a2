"""A replay's standard normals made at once (predict.sim_draws) are ``random.normalvariate``'s, bit for bit."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predict.sim_draws import normals, stream_drawer
from predict.sim_events import StageDist


@settings(max_examples=200, deadline=None)
@given(seed=st.one_of(st.integers(0, 2**32 - 1), st.integers(0, 2**62 - 1)), count=st.integers(0, 700))
def test_the_stream_is_normalvariates(seed: int, count: int) -> None:
    """Seeds of one 32-bit word and of two (a replay's come from ``integers(2**62)``), streams
    longer than one block of tries; the generator itself is left where it was."""
    py = random.Random(seed)
    got = normals(py, count)
    assert py.getstate() == random.Random(seed).getstate()
    want = [py.normalvariate(0.0, 1.0) for _ in range(count)]
    assert got == want


@pytest.mark.parametrize("dist", [StageDist(120.0, 0.4), StageDist(7.5, 1e-3), StageDist(50.0, 0.0), StageDist(0.0, 0.3)])
def test_a_drawer_on_the_stream_draws_what_lognormvariate_does(dist: StageDist) -> None:
    """Two stages drawing in turn from one stream: each draw ``mean * py.lognormvariate(mu, sigma)``
    of the one generator (a stage without spread draws its mean and takes no normal)."""
    seed = 2**61 + 12_345
    stream = iter(normals(random.Random(seed), 200))
    mine, other = stream_drawer(dist, stream), stream_drawer(StageDist(30.0, 0.25), stream)
    got = [f() for _ in range(50) for f in (mine, other)]
    py = random.Random(seed)

    def want(d: StageDist) -> float:
        if not (d.cv > 0 and d.mean_ms > 0):
            return d.mean_ms
        s2 = math.log1p(d.cv * d.cv)
        return d.mean_ms * py.lognormvariate(-s2 / 2, math.sqrt(s2))

    assert got == [want(d) for _ in range(50) for d in (dist, StageDist(30.0, 0.25))]
