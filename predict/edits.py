"""What-if edits: the language people ask in (:func:`parse_edit`: ``io.sort.mb=256``, ``reduces 20 ->
240``, ``4 more nodes``, ``input_bytes=50G``) and the scenarios they make (:class:`Scenario`:
cluster, input and settings; :func:`apply_edits`).  :mod:`predict.whatif` prices the scenarios."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from phaseline.errors import PredictionError
from predict.core import Cluster, Dataset, JobSettings
from predict.settings import SETTING_KEYS, setting_field
from predict.tasks import resolve_input
from predict.units import SizeError, format_size, parse_size
from profiles.profile import JobProfile

__all__ = ["Edit", "Scenario", "apply_edit", "apply_edits", "parse_edit", "resolved"]

_CLUSTER_KEYS = {
    "nodes": "nodes",
    "map_slots_per_node": "map_slots_per_node",
    "reduce_slots_per_node": "reduce_slots_per_node",
    "mapred.tasktracker.map.tasks.maximum": "map_slots_per_node",
    "mapred.tasktracker.reduce.tasks.maximum": "reduce_slots_per_node",
}
_DATASET_KEYS = {"input_bytes": "input_bytes", "input_records": "input_records", "splits": "splits"}
_PHRASES = (
    (re.compile(r"^\s*compress(?:ed)?\s+map\s+outputs?\s*$", re.I), ("compress_map_output", "true")),
    (
        re.compile(r"^\s*(?:do\s+not|don't|no)\s+compress\s+map\s+outputs?\s*$", re.I),
        ("compress_map_output", "false"),
    ),
    (re.compile(r"^\s*(\d+)\s+more\s+nodes?\s*$", re.I), ("nodes", "+{0}")),
    (re.compile(r"^\s*(\d+)\s+fewer\s+nodes?\s*$", re.I), ("nodes", "-{0}")),
)
# OLD and NEW (and an assigned VALUE) run to the arrow and the end: JVM options have spaces
_ARROW = re.compile(r"^\s*(?P<key>[\w.\-]+)\s+(?P<old>[^\s=].*?)\s*->\s*(?P<value>\S.*?)\s*$")
_ASSIGN = re.compile(r"^\s*(?P<key>[\w.\-]+)\s*=\s*(?P<value>\S.*?)\s*$")
#: A relative value: a sign, then a number (``+4``, ``-0.1``, ``+.5``); ``-Xmx1g`` is a value.
_RELATIVE = re.compile(r"^[+-]\.?\d")
#: A size written with a unit (``15.0M``, ``-Xmx200m``): its written digits say how precise it is.
_WRITTEN_SIZE = re.compile(
    r"(?P<num>\d+(?:\.(?P<frac>\d*))?|\.(?P<frac2>\d+))\s*[KMGTP](?:I?B)?(?![A-Z])", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Edit:
    """One change: a key (Hadoop setting, cluster or dataset field) and its new value (``+4`` is relative).

    ``old`` is the value ``KEY OLD -> NEW`` says the baseline has; :func:`apply_edits` refuses
    the edit when the baseline has another.
    """

    key: str
    value: str
    old: str | None = None

    @property
    def label(self) -> str:
        return f"{self.key}={self.value}"


def parse_edit(text: str) -> Edit:
    """Read an edit: ``KEY=VALUE``, ``KEY OLD -> NEW``, ``compress map output`` or ``N more nodes``.

    A VALUE (and OLD, NEW) may have spaces: JVM options (``mapreduce.reduce.java.opts=-XX:+UseG1GC -Xmx1g``).

    >>> parse_edit("io.sort.mb 100 -> 256")
    Edit(key='io.sort.mb', value='256', old='100')
    >>> parse_edit("4 more nodes")
    Edit(key='nodes', value='+4', old=None)
    """
    for pattern, (key, value) in _PHRASES:
        match = pattern.match(text)
        if match:
            return Edit(key, value.format(*match.groups()))
    match = _ARROW.match(text) or _ASSIGN.match(text)
    if match is None or "->" in match["value"]:  # (KEY=OLD -> NEW: no value has an arrow)
        raise PredictionError(
            f"what-if edit {text!r} not understood; write KEY=VALUE (io.sort.mb=256, reduces=240, nodes=+4), "
            "KEY OLD -> NEW (reduces 20 -> 240), 'compress map output' or 'N more nodes'"
        )
    key = match["key"].replace("-", "_") if match["key"].replace("-", "_") in SETTING_KEYS else match["key"]
    old = match.groupdict().get("old")
    return Edit(key, match["value"], old)


@dataclass(frozen=True, slots=True)
class Scenario:
    """Everything a prediction depends on besides the profile and the platform."""

    cluster: Cluster
    dataset: Dataset
    settings: JobSettings

    @classmethod
    def for_profile(
        cls,
        profile: JobProfile,
        cluster: Cluster,
        *,
        input_bytes: float | None = None,
        input_records: float | None = None,
        splits: int | None = None,
        split_bytes: float | None = None,
        reduces: int | None = None,
    ) -> Scenario:
        """The profiled job's own settings (its recorded configuration) on a new input and cluster.

        Unset input size, records and reduces default to the profiled run's.
        """
        if reduces is None:
            reduces = profile.num_reduces
        settings = JobSettings.from_config(profile.source.config, reduces=reduces)
        if input_bytes is None:
            input_bytes = profile.input.total_bytes
            if input_records is None and profile.input.total_records > 0:
                input_records = profile.input.total_records
        return cls(cluster, Dataset(input_bytes, input_records, splits, split_bytes), settings)


def _magnitude(text: str) -> float:
    """A plain number (fractions kept: ``0.1``) or a size (``512M``)."""
    try:
        value = float(text)
    except ValueError:
        return float(parse_size(text))
    if not math.isfinite(value):
        raise SizeError(f"{text!r} is not finite")
    return value


def _relative(value: str) -> bool:
    """Whether an edit's value counts from the current one (``+4``, ``-0.1``), not replaces it (``-Xmx1g``).

    >>> _relative("+4"), _relative("-.5"), _relative("-Xmx1m"), _relative("256")
    (True, True, False, False)
    """
    return _RELATIVE.match(value) is not None


def _number(edit: Edit, current: float) -> float:
    """The edit's value, relative to ``current`` when it starts with ``+`` or ``-``."""
    raw = edit.value
    try:
        if raw[0] in "+-":
            return current + _magnitude(raw[1:]) * (1 if raw[0] == "+" else -1)
        return _magnitude(raw)
    except (SizeError, IndexError) as exc:
        raise PredictionError(f"what-if {edit.label}: {raw!r} is not a number") from exc


def _whole(edit: Edit, number: float) -> int:
    """A count (nodes, slots, splits): a number with a fraction is refused, not rounded."""
    if not float(number).is_integer():
        raise PredictionError(f"what-if {edit.label}: {edit.value!r} gives {number:g}, not a whole number")
    return int(number)


def _derived(profile: JobProfile | None, scenario: Scenario, field: str, edit: Edit) -> float:
    """The value an unset dataset field takes (the splits or records the input is cut into), for a
    relative edit of it: ``splits=+2`` is two more than the job's own, not 2."""
    if profile is None:
        raise PredictionError(f"what-if {edit.label}: {field} is derived from the input; give it as a number")
    shape = resolve_input(profile, scenario.dataset, scenario.settings)
    return float(shape.splits) if field == "splits" else shape.splits * shape.avg_split_records


def apply_edits(base: Scenario, edits: Iterable[Edit], profile: JobProfile | None = None) -> Scenario:
    """The scenario after ``edits``, applied in order; a relative edit of the splits or records
    (``splits=+2``) counts from what ``profile``'s job would cut the input into.

    An edit's ``old`` (``reduces 20 -> 2``) must be ``base``'s value (not what the edits before
    it made), else :class:`~phaseline.errors.PredictionError` says what the baseline has.
    """
    edits = list(edits)
    for edit in edits:
        _check_old(base, edit, profile)
    scenario = base
    for edit in edits:
        scenario = apply_edit(scenario, edit, profile)
    return scenario


def apply_edit(scenario: Scenario, edit: Edit, profile: JobProfile | None) -> Scenario:
    """``scenario`` after ``edit``, its ``old`` unchecked (:func:`apply_edits` checks every edit's
    against the baseline first)."""
    part, field = _target(edit)
    if part == "cluster":
        count: dict[str, Any] = {field: _whole(edit, _number(edit, getattr(scenario.cluster, field)))}
        return dataclasses.replace(scenario, cluster=dataclasses.replace(scenario.cluster, **count))
    if part == "dataset":
        current = getattr(scenario.dataset, field)
        if current is None and _relative(edit.value):
            current = _derived(profile, scenario, field, edit)
        number = _number(edit, current or 0)
        # a new input size invalidates derived records/splits unless they are edited too
        changes: dict[str, Any] = {"input_records": None, "splits": None} if field == "input_bytes" else {}
        changes[field] = _whole(edit, number) if field == "splits" else number
        return dataclasses.replace(scenario, dataset=dataclasses.replace(scenario.dataset, **changes))
    raw = edit.value
    if _relative(raw) and field:
        current = getattr(scenario.settings, field)
        if not isinstance(current, int | float) or isinstance(current, bool):
            raise PredictionError(
                f"what-if {edit.label}: the baseline's {edit.key} is {_shown(field, current)}, no number "
                "to count from; give the new value itself"
            )
        raw = str(_number(edit, float(current)))
    return dataclasses.replace(scenario, settings=scenario.settings.with_setting(edit.key, raw))


def _check_old(base: Scenario, edit: Edit, profile: JobProfile | None) -> None:
    """Refuse ``KEY OLD -> NEW`` where ``base``'s value of KEY is not OLD.

    OLD is read as NEW would be (a setting as the setting reads it: sizes, ``-Xmx``, booleans;
    a cluster or dataset field as a number or size); numbers agree within float noise, and a size
    with a unit to the digits it is written with, at most as coarse as the table shows sizes
    (:func:`~predict.units.format_size`): ``15.0M`` and ``15M`` are 14.95M to 15.05M, ``1.25G``
    is 1.245G to 1.255G.
    """
    if edit.old is None:
        return
    part, field = _target(edit)
    said: object
    reason = ""
    if part == "settings":
        if not field:
            return  # no such setting: applying the edit says so
        have = getattr(base.settings, field)
        try:
            said = getattr(base.settings.with_setting(edit.key, edit.old), field)
        except PredictionError as exc:
            said, reason = None, f" ({exc})"
    else:
        have = getattr(getattr(base, part), field)
        if have is None:  # derived from the input (splits, records)
            if profile is None:
                raise PredictionError(
                    f"what-if '{edit.key} {edit.old} -> {edit.value}': the baseline's {field} is derived "
                    f"from the input and no profile was given to derive it; write {edit.key}={edit.value}"
                )
            have = _derived(profile, base, field, edit)
        try:
            said = _magnitude(edit.old)
        except SizeError as exc:
            said, reason = None, f" ({exc})"
    if said is None or not _agrees(said, have, edit.old):
        named = edit.key if edit.key.replace("-", "_") == field else f"{edit.key} ({field})"
        raise PredictionError(
            f"what-if '{edit.key} {edit.old} -> {edit.value}': the baseline's {named} is "
            f"{_shown(field, have)}, not {edit.old}{reason}; write {edit.key}={edit.value} to set it "
            "whatever it is"
        )


def _agrees(said: object, have: object, written: str) -> bool:
    """Whether OLD (``said``, read from ``written``) is the baseline's value ``have``."""
    if isinstance(said, bool) or isinstance(have, bool) or not (
        isinstance(said, int | float) and isinstance(have, int | float)
    ):
        return said == have
    tol = 1e-9 * max(abs(said), abs(have))
    sized = list(_WRITTEN_SIZE.finditer(written))
    if sized:  # half the last digit written, at most as coarse as format_size rounds (15.0M, 150M)
        digits = sized[-1]["frac"] or sized[-1]["frac2"] or ""
        mantissa = float(sized[-1]["num"])
        step = min(10.0 ** -len(digits), 0.1 if mantissa < 100 else 1.0)
        if mantissa > 0:
            tol = max(tol, abs(said) * 0.5 * step / mantissa)
    return abs(said - have) <= tol


def _shown(field: str, value: object) -> str:
    """A baseline value for a message: ``1``, ``15728640 (15.0M)``, ``200 MB`` (heap), ``true``, ``unset``."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    if not isinstance(value, int | float):
        return str(value)
    text = f"{value:.10g}"
    if field == "reduce_task_heap_mb":
        return f"{text} MB"
    return f"{text} ({format_size(value)})" if field in ("input_bytes", "split_bytes") else text


def _target(edit: Edit) -> tuple[str, str]:
    """The part of a scenario an edit changes and its field there: ``("cluster", "nodes")``,
    ``("dataset", "input_bytes")``, or ``("settings", field)`` (``""`` for a key no setting has)."""
    key = edit.key.replace("-", "_")
    if key in _CLUSTER_KEYS:
        return "cluster", _CLUSTER_KEYS[key]
    if key in _DATASET_KEYS:
        return "dataset", _DATASET_KEYS[key]
    return "settings", setting_field(edit.key) or ""


def resolved(applied: Iterable[tuple[Edit, Scenario]]) -> str:
    """What the relative edits among ``applied`` (each with the scenario it made alone) come to
    (``reduces = 19``); '' if none is relative."""
    out = []
    for edit, after in applied:
        if _relative(edit.value):
            part, field = _target(edit)
            out.append(f"{edit.key} = {getattr(getattr(after, part), field):g}")
    return ", ".join(out)
