"""The first reduces' warm-up, added once: the one-time reduce term of a profile of one JVM.

Where a profiled run's reduces shared one JVM, :mod:`profiles.first_reduces` keeps what its first
wave of reduces spent beyond the later ones (class loading and JIT compiles of the reduce side) out
of the typical reduce and out of the reduce function's cost per record, as a term per reduce slot.
:func:`with_reduce_one_time` adds it to every model's prediction, as :func:`predict.map_one_time.with_one_time`
adds the maps' (ARIA's first wave apart from the typical one: Verma et al. 2011, section 3): once per
job where the predicted run's tasks share one JVM too (the first wave of reduces runs on every reduce
slot at once, so its extra per slot lengthens the reduce stage once), and once per wave of reduces on
a cluster, whose every reduce starts a JVM of its own and so pays it again (the reduces of a wave run
side by side: the wave lengthens by the extra once).

>>> reduce_waves(10, 4)
3
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from predict.core import MS_PER_S, Prediction
from predict.map_one_time import shares_one_jvm

if TYPE_CHECKING:
    from predict.core import Inputs

__all__ = ["reduce_waves", "with_reduce_one_time"]


def reduce_waves(reduces: int, slots: int) -> int:
    """Waves ``reduces`` tasks take on ``slots`` reduce slots."""
    return math.ceil(reduces / max(1, slots))


def with_reduce_one_time(prediction: Prediction, inputs: Inputs) -> Prediction:
    """``prediction`` with the profile's one-time reduce term added (module docstring); unchanged for a
    run without reduces, or a profile without the term."""
    term = inputs.profile.reduce_one_time_ms or 0.0
    reduces = inputs.settings.reduces
    if term <= 0 or reduces <= 0:
        return prediction
    one_jvm = shares_one_jvm(inputs.profile, inputs.cluster)
    times = 1 if one_jvm else reduce_waves(reduces, inputs.cluster.reduce_slots)
    extra = term * times / MS_PER_S
    where = "once (the run's reduces share one JVM)" if one_jvm else f"once per reduce wave ({times}: a JVM per task)"
    note = (f"one-time reduce cost {term:.0f} ms (the first reduces' extra per slot in the profiled JVM) "
            f"added {where}, not per record")  # fmt: skip
    return prediction.lengthened({"reduce.one_time": extra}, (note,))
