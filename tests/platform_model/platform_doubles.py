"""Shared by the platform_model tests: the TaskCounter group's name, and a synthetic profile of known lines."""

from __future__ import annotations

import numpy as np

from platform_model.profile import profile_from_arrays

TASK = "org.apache.hadoop.mapreduce.TaskCounter"


MIB = float(1 << 20)


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
