"""The JIT's compiles of the profiled JVM, added once: the one-time term of a profile read on its warm clock.

Where the profiled run's tasks ran one at a time in one JVM that compiles in the tasks' threads,
:mod:`profiles.jit_clock` reads every task without the compiles that stalled it, so the profile's
per-task and per-record costs are the warm code's, and the compile time is
:attr:`~profiles.profile.JobProfile.jit_one_time_ms`.  :func:`with_jit_one_time` adds it once per job
to every model's prediction, as the maps' and the reduces' one-time terms are (ARIA keeps the first
wave apart from the typical one: Verma et al. 2011, section 3).

How much a run ``k`` times the profiled input compiles is bounded by what one size says: at least
the profiled compiles (the same methods get hot) and at most ``k`` times them (every compile priced
per record, as the spans did before).  Measured, it lies between: sort, 4 maps, 1.6 s of compiles in
its tasks at 4 MiB and 2.9 s at 32 MiB; grep 1.5 and 4.1 s (2026-12-02, benchmarks/BACKTEST.md): the
more records, the more methods pass the tiered compiler's thresholds and are compiled again at the
optimizing tier.  With nothing known between the bounds from one size, the term is their geometric
mean, ``C x sqrt(k)``, the choice whose worst ratio to either bound is least (:func:`compile_growth`);
a smaller run (``k < 1``) compiles less the same way.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from predict.core import MS_PER_S, Prediction

if TYPE_CHECKING:
    from predict.core import Inputs

__all__ = ["compile_growth", "with_jit_one_time"]


def compile_growth(k: float) -> float:
    """The factor on the profiled compile time for an input ``k`` times the profiled one: the geometric
    mean of its bounds 1 and ``k`` (module docstring).

    >>> compile_growth(4.0), compile_growth(1.0), compile_growth(0.25)
    (2.0, 1.0, 0.5)
    """
    return math.sqrt(max(k, 0.0))


def with_jit_one_time(prediction: Prediction, inputs: Inputs) -> Prediction:
    """``prediction`` with the profile's JIT compile time added once (module docstring); unchanged for a
    profile without the term."""
    term = inputs.profile.jit_one_time_ms or 0.0
    profiled = inputs.profile.input.total_bytes
    if term <= 0 or profiled <= 0:
        return prediction
    k = inputs.dataset.input_bytes / profiled
    ms = term * compile_growth(k)
    note = (f"the JIT's compiles {ms:.0f} ms, added once per job, not per task or record: {term:.0f} ms in the "
            f"profiled run's tasks x sqrt({k:.3g}), the input's ratio to the profiled one")  # fmt: skip
    return prediction.lengthened({"job.jit_compiles": ms / MS_PER_S}, (note,))
