"""What-if edits of a critical-path job shape (Desai et al. 2012, section 3.5): "shuffle 2x faster",
"one more reduce wave"; the path of the changed :class:`~predict.critical_path.JobShape` is recomputed
with :func:`~predict.critical_path.critical_path`."""

from __future__ import annotations

import dataclasses
import re

from phaseline.errors import PredictionError
from predict.critical_path import JobShape

__all__ = ["apply_whatif"]

_FASTER = re.compile(r"^\s*(map|shuffle|reduce)s?\s+(\d+(?:\.\d+)?)\s*x\s+(faster|slower)\s*$", re.I)
_WAVES = re.compile(r"^\s*(one|\d+)\s+(more|fewer)\s+(map|reduce)\s+waves?\s*$", re.I)


def apply_whatif(shape: JobShape, edit: str) -> JobShape:
    """Change a job shape by a what-if edit and return the new shape.

    Understood: ``"<map|shuffle|reduce> <f>x faster|slower"`` (scales that
    stage's task durations) and ``"<one|k> more|fewer <map|reduce> wave(s)"``
    (adds or removes that many slots' worth of tasks, each like the typical
    task).
    """
    m = _FASTER.match(edit)
    if m:
        stage, factor = m[1].lower(), float(m[2])
        if factor <= 0:
            raise PredictionError(f"what-if {edit!r}: the factor must be > 0")
        f = 1 / factor if m[3].lower() == "faster" else factor
        if stage == "map":
            return dataclasses.replace(shape, map_ms=tuple(d * f for d in shape.map_ms))
        if stage == "shuffle":
            return dataclasses.replace(
                shape, first_shuffle_ms=shape.first_shuffle_ms * f, shuffle_ms=shape.shuffle_ms * f
            )
        return dataclasses.replace(shape, reduce_ms=tuple(d * f for d in shape.reduce_ms))
    m = _WAVES.match(edit)
    if m:
        count = 1 if m[1].lower() == "one" else int(m[1])
        sign = 1 if m[2].lower() == "more" else -1
        if m[3].lower() == "map":
            tasks, slots = list(shape.map_ms), shape.map_slots
        else:
            tasks, slots = list(shape.reduce_ms), shape.reduce_slots
        if not tasks:
            raise PredictionError(f"what-if {edit!r}: the job has no {m[3].lower()} tasks")
        typical = tasks[-1]
        new_n = len(tasks) + sign * count * slots
        if new_n < 1:
            raise PredictionError(f"what-if {edit!r}: leaves no {m[3].lower()} tasks")
        tasks = tasks[:new_n] + [typical] * max(0, new_n - len(tasks))
        if m[3].lower() == "map":
            return dataclasses.replace(shape, map_ms=tuple(tasks))
        return dataclasses.replace(shape, reduce_ms=tuple(tasks))
    raise PredictionError(f"cannot read what-if {edit!r}; try 'shuffle 2x faster' or 'one more reduce wave'")
