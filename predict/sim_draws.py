"""A replay's lognormal draws from Python's ``random``, made many at once: the same numbers.

The replays of :mod:`predict.simulate` draw each reduce's shuffle and reduce phase with
``random.Random.lognormvariate`` (:func:`predict.sim_events.drawer`): ``exp(mu + z sigma)``, ``z``
from ``normalvariate``, Kinderman and Monahan's ratio of uniforms (a pair of ``random()`` per
try, about 1.37 tries a draw).  Where nothing else draws from the generator between them (no
stragglers), the k-th draw of a replay takes the k-th standard normal of one stream, whatever
its stage's mean and spread.  :func:`normals` makes that stream in one go: the generator's
Mersenne Twister state copied into numpy's (the same MT19937, and ``random_sample`` the same
53-bit doubles as ``random()``), the pairs of uniforms, the same ratio in the same float
operations and the same acceptance test (``math.log`` deciding wherever numpy's ``log`` comes
within 1e-12 of the bound, where the two logarithms could round apart).  A prediction's 200
replays of 240 reduces draw up to 96,000 (a shuffle and a reduce each; 48,000 in bench_predict's
50 GiB job, whose shuffles have no spread), one Python call each.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Iterator

import numpy as np

from predict.sim_events import StageDist

__all__ = ["normals", "stream_drawer"]

#: Kinderman and Monahan's constant, as random.py computes its NV_MAGICCONST.
_NV_MAGICCONST = 4 * math.exp(-0.5) / math.sqrt(2.0)
#: Relative closeness of ``zz`` to ``-log(u2)`` within which ``math.log`` decides a try.
_CLOSE = 1e-12
#: Each thread's Mersenne Twister the streams are made with (its state set from the replay's generator
#: at every call; making one per call cost 0.14 ms a replay).
_LOCAL = threading.local()


def _twister() -> np.random.RandomState:
    mt = getattr(_LOCAL, "mt", None)
    if mt is None:
        mt = _LOCAL.mt = np.random.RandomState(0)
    return mt


def normals(py: random.Random, count: int) -> list[float]:
    """The next ``count`` values of ``py.normalvariate(0.0, 1.0)``, in order; ``py`` itself is not advanced."""
    words = py.getstate()[1]  # 624 words and the position (random.Random.getstate, version 3)
    mt = _twister()
    mt.set_state(("MT19937", np.asarray(words[:-1], dtype=np.uint32), words[-1], 0, 0.0))
    out: list[float] = []
    while len(out) < count:
        tries = (count - len(out)) * 3 // 2 + 8  # ~1.37 tries a value
        u = mt.random_sample(2 * tries)
        u1, u2 = u[0::2], 1.0 - u[1::2]
        z = _NV_MAGICCONST * (u1 - 0.5) / u2
        zz = z * z / 4.0
        bound = -np.log(u2)
        accept = zz <= bound
        for k in np.flatnonzero(np.abs(zz - bound) <= _CLOSE * bound).tolist():
            accept[k] = zz[k] <= -math.log(u2[k])
        out += z[accept][: count - len(out)].tolist()
    return out


def stream_drawer(dist: StageDist, stream: Iterator[float]) -> Callable[[], float]:
    """:func:`predict.sim_events.drawer` without stragglers, its normals taken from ``stream``:
    ``mean * exp(mu + z * sigma)``, as ``mean * py.lognormvariate(mu, sigma)`` computes it."""
    mean = dist.mean_ms
    s2 = math.log1p(dist.cv * dist.cv)
    mu, sigma = -s2 / 2, math.sqrt(s2)
    if not (dist.cv > 0 and mean > 0):
        return lambda: mean
    exp, take = math.exp, stream.__next__

    def draw() -> float:
        return mean * exp(mu + take() * sigma)

    return draw
