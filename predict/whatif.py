"""What-if questions: change a setting, the cluster or the input, and see time and dataflow move.

Edits read like the questions people ask::

    io.sort.mb=256            mapreduce.job.reduces=240     reduces 20 -> 240
    compress map output       4 more nodes                  nodes=+4
    input_bytes=50G           map_slots_per_node=4

The edits and the scenarios they make are :mod:`predict.edits`'s.  Each scenario is priced
with a registered model (Herodotou's phase cost model by default, Herodotou 2011 eqs. 2-94),
and its dataflow (spills, merge passes, shuffle files...) is shown beside its time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from predict import core
from predict.core import PhaseDurationModel, Prediction
from predict.edits import Edit, Scenario, apply_edit, apply_edits, resolved
from predict.units import format_size
from profiles.profile import JobProfile

__all__ = ["WhatIfRow", "format_figure", "sweep", "whatif", "whatif_table"]


@dataclass(frozen=True, slots=True)
class WhatIfRow:
    """One scenario's label and its prediction; ``resolved`` says what its relative edits
    (``reduces=-1``, ``nodes=+4``) come to."""

    label: str
    prediction: Prediction
    resolved: str = ""


def whatif(
    profile: JobProfile,
    platform: PhaseDurationModel,
    base: Scenario,
    edits: Sequence[Edit],
    *,
    model: str = "herodotou",
) -> list[WhatIfRow]:
    """Baseline, each edit alone (when there are several), and all edits together.

    Every edit's ``old`` is checked against ``base``; a label given twice is told apart
    (``nodes=+1``, ``nodes=+1 (2)``).
    """
    predictor = core.get(model)

    def run(scenario: Scenario) -> Prediction:
        return predictor.predict(profile, platform, scenario.cluster, scenario.dataset, scenario.settings)

    rows = [WhatIfRow("baseline", run(base))]
    alone = [apply_edits(base, [e], profile) for e in edits]  # each edit on the baseline (its OLD checked)
    if len(edits) > 1:
        rows.extend(WhatIfRow(e.label, run(s), resolved([(e, s)])) for e, s in zip(edits, alone, strict=True))
    if edits:
        label = "all edits" if len(edits) > 1 else edits[0].label
        steps, scenario = [], base  # each edit on what the ones before it made: relative edits compose
        for edit in edits:
            scenario = apply_edit(scenario, edit, profile)
            steps.append(scenario)
        rows.append(WhatIfRow(label, run(scenario), resolved(zip(edits, steps, strict=True))))
    # an edit given twice (nodes=+1 twice, or '4 more nodes' and nodes=+4) gets a column of its own
    labels = _unique(r.label for r in rows)
    return [dataclasses.replace(r, label=label) for r, label in zip(rows, labels, strict=True)]


def _unique(labels: Iterable[str]) -> list[str]:
    """``labels`` with repeats told apart by a count: the second ``nodes=+1`` is ``nodes=+1 (2)``.

    >>> _unique(["baseline", "nodes=+1", "nodes=+1", "all edits"])
    ['baseline', 'nodes=+1', 'nodes=+1 (2)', 'all edits']
    """
    out: list[str] = []
    for label in labels:
        unique, n = label, 1
        while unique in out:
            n += 1
            unique = f"{label} ({n})"
        out.append(unique)
    return out


def sweep(
    profile: JobProfile,
    platform: PhaseDurationModel,
    base: Scenario,
    configurations: Iterable[Sequence[Edit]],
    *,
    model: str = "herodotou",
) -> list[Prediction]:
    """Predict every configuration (each a list of edits on ``base``), e.g. to search for the best one."""
    predictor = core.get(model)
    out = []
    for edits in configurations:
        s = apply_edits(base, edits, profile)
        out.append(predictor.predict(profile, platform, s.cluster, s.dataset, s.settings))
    return out


def format_figure(figure: str, value: object) -> str:
    """Render one what-if figure for people: sizes with units, counts as integers, times in seconds.

    >>> format_figure("map_output_bytes", 104857600.0), format_figure("spills", 25.0), format_figure("map_s", 3.14159)
    ('100M', '25', '3.14')
    """
    if value is None:
        return ""
    if not isinstance(value, int | float):
        return str(value)
    if figure.endswith("bytes") or figure.endswith("_bytes_per_reduce"):
        return format_size(value)
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"


def whatif_table(rows: Sequence[WhatIfRow]) -> list[dict[str, object]]:
    """One row per figure (time, stages, dataflow), one column per scenario, for side-by-side display.

    The time's interval follows it (``low_s``, ``high_s``) when the model gives one (bounds does);
    rows with one label (not :func:`whatif`'s) get columns of their own (``nodes=+1 (2)``).
    """
    labels = _unique(r.label for r in rows)
    figures: dict[str, list[float | None]] = {"seconds": [r.prediction.seconds for r in rows]}
    for end in ("low_s", "high_s"):  # the time's interval, where the model gives one
        ends = [getattr(r.prediction, end) for r in rows]
        if any(e is not None for e in ends):
            figures[end] = ends
    for i, r in enumerate(rows):
        values: dict[str, float] = {f"{k}_s": v for k, v in r.prediction.stages.items()}
        values.update(r.prediction.dataflow)
        for key, value in values.items():
            figures.setdefault(key, [None] * len(rows))[i] = value
    table: list[dict[str, object]] = []
    for key, column in figures.items():
        row: dict[str, object] = {"figure": key}
        for label, cell in zip(labels, column, strict=True):
            row[label] = None if cell is None else round(cell, 3)
        table.append(row)
    if any(r.resolved for r in rows):  # a relative edit is never read silently
        resolved = dict(zip(labels, (r.resolved for r in rows), strict=True))
        table.append({"figure": "relative edits", **resolved})
    return table
