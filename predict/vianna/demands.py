"""Service demands of the Vianna model's tasks (Vianna et al. 2013, Table 2): the record and its CSV.

A task kind's mean demand (seconds) on each device type (:data:`DEVICES`): a map, a
shuffle-sort (one map's output for one reduce) and a merge.  :func:`read_demands` reads the
table ``phaseline mva --demands`` takes; :class:`Demands` is what
:func:`predict.vianna.model.solve` prices.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from phaseline.errors import PredictionError
from phaseline.text_file import read_text_file
from predict.vianna.layout import TaskKind

__all__ = ["DEVICES", "MAX_DEMAND_S", "Demands", "read_demands"]

#: Device types, in the order of the demand matrices.
DEVICES: tuple[str, ...] = ("cpu", "disk", "fiber", "network")


@dataclass(frozen=True, slots=True)
class Demands:
    """Mean service demands (seconds) of one task of each kind on each device type (Table 2).

    ``network`` is the demand of a shuffle-sort whose map ran on another node.
    A local one has none (the paper); with ``local_network_to`` naming a device,
    a local shuffle-sort puts that demand on the device instead (a prediction
    whose shuffle time was measured as a whole, on one node: the same fetch
    costs its local copy there).  Only shuffle-sorts use the network (section
    4.1): a ``network`` entry in ``map`` or ``merge`` is priced nowhere
    (:func:`read_demands` refuses one).
    """

    map: Mapping[str, float]
    shuffle_sort: Mapping[str, float]
    merge: Mapping[str, float]
    local_network_to: str | None = None

    def __post_init__(self) -> None:
        for kind in TaskKind:
            row = self.row(kind)
            unknown = set(row) - set(DEVICES)
            if unknown:
                raise PredictionError(
                    f"unknown devices {sorted(unknown)} for {kind}; known: {', '.join(DEVICES)}"
                )
            bad = {k: v for k, v in row.items() if not (math.isfinite(v) and v >= 0)}
            if bad:
                raise PredictionError(f"{kind} demands must be finite and >= 0, got {bad}")
        if self.local_network_to is not None and self.local_network_to not in DEVICES[:-1]:
            raise PredictionError(
                f"local_network_to must be one of {', '.join(DEVICES[:-1])}, got {self.local_network_to!r}"
            )

    def row(self, kind: TaskKind) -> Mapping[str, float]:
        return {TaskKind.MAP: self.map, TaskKind.SHUFFLE_SORT: self.shuffle_sort, TaskKind.MERGE: self.merge}[
            kind
        ]

    def vector(self, kind: TaskKind) -> npt.NDArray[np.float64]:
        row = self.row(kind)
        return np.array([float(row.get(dev, 0.0)) for dev in DEVICES])


#: A task's demand on one device beyond this (31 years) is no measurement; past it the solution overflows.
MAX_DEMAND_S = 1e9


def read_demands(path: str | Path, *, map_only: bool = False) -> Demands:
    """Read a demand table like Vianna et al. 2013, Table 2: CSV ``task,<device>,...``, seconds.

    One row per task kind (``map``, ``shuffle_sort``, ``merge``); device
    columns among :data:`DEVICES`; a missing device column means zero demand.
    For a ``map_only`` job (no reduces) the ``map`` row is enough.

    A network demand on the ``map`` or ``merge`` row is refused: the model
    puts network demand on shuffle-sorts only, and only when their map ran on
    another node (section 4.1; section 5.1: "the network is used only by the
    shuffle-sort tasks"; Table 2's map and merge rows are 0), so such a demand
    was read and then priced nowhere, the answer the same as with 0.

    The file is UTF-8, with or without a byte order mark (as spreadsheets save
    CSV).  A demand is an ASCII decimal number (``0.5``, ``12``, ``1e-3``): a
    cell that Python's ``float`` alone would take but no spreadsheet writes
    (``1_0``, full-width or other non-ASCII digits, ``nan``, ``inf``) is
    refused, as are negative demands and demands past :data:`MAX_DEMAND_S`.
    """

    where = Path(path)
    text = read_text_file(where, "demand table", PredictionError, encoding="utf-8-sig")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    # csv over the text itself (not its lines): a quoted cell may hold a line break, and
    # reader.line_num is then the file's line, blank lines included
    try:
        fields = _header(reader, where)
        rows: dict[str, dict[str, float]] = {}
        for raw in reader:
            task, row = _row(raw, fields, where, reader.line_num, rows.keys())
            rows[task] = row
    except csv.Error as exc:  # a cell past the csv module's size limit (DictReader's own line_num lags: its reader's)
        raise PredictionError(f"{where}:{reader.reader.line_num}: not a well-formed CSV ({exc})") from None
    if map_only:
        rows.setdefault(str(TaskKind.SHUFFLE_SORT), {})
        rows.setdefault(str(TaskKind.MERGE), {})
    missing = [str(k) for k in TaskKind if str(k) not in rows]
    if missing:
        raise PredictionError(f"{where}: no row for {', '.join(missing)}; give one row per task kind")
    return Demands(rows["map"], rows["shuffle_sort"], rows["merge"])


#: A demand cell: an ASCII decimal number (``\d`` is any Unicode digit without ``re.ASCII``).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def _header(reader: csv.DictReader[str], where: Path) -> list[str]:
    """The header's columns: ``task``, then known devices, each once."""
    fields = [f.strip() for f in (reader.fieldnames or [])]
    if not fields or fields[0] != "task":
        raise PredictionError(
            f"{where}:1: the header must start with 'task', then device columns ({', '.join(DEVICES)})"
        )
    unknown = [f for f in fields[1:] if f not in DEVICES]
    if unknown:
        raise PredictionError(f"{where}:1: unknown device columns {unknown}; use {', '.join(DEVICES)}")
    twice = sorted({f for f in fields if fields.count(f) > 1})
    if twice:
        raise PredictionError(f"{where}:1: columns {twice} appear twice")
    return fields


def _row(
    raw: dict[str | None, str | None], fields: list[str], where: Path, line: int, seen: Collection[str]
) -> tuple[str, dict[str, float]]:
    """One task kind's demands (seconds per device), every cell checked; a task in ``seen`` is refused."""
    if None in raw:  # DictReader's key for cells beyond the header
        raise PredictionError(f"{where}:{line}: more cells than the header's {len(fields)} columns")
    if any(v is None for v in raw.values()):  # DictReader's value for cells the row does not reach
        raise PredictionError(
            f"{where}:{line}: fewer cells than the header's {len(fields)} columns (an empty cell is 0 s)"
        )
    row = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
    task = row.get("task", "")
    if task not in {str(k) for k in TaskKind}:
        raise PredictionError(f"{where}:{line}: task {task!r} is not one of map, shuffle_sort, merge")
    if task in seen:
        raise PredictionError(f"{where}:{line}: task {task!r} appears twice")
    cells = {dev: row.get(dev, "") for dev in fields[1:]}
    odd = {dev: cell for dev, cell in cells.items() if cell and _NUMBER.fullmatch(cell) is None}
    if odd:
        raise PredictionError(
            f"{where}:{line}: demands must be numbers of seconds, in ASCII decimal digits (e.g. 0.25 or "
            f"1e-3), got {odd}"
        )
    demands = {dev: float(cell) if cell else 0.0 for dev, cell in cells.items()}
    bad = {dev: v for dev, v in demands.items() if not (math.isfinite(v) and 0 <= v <= MAX_DEMAND_S)}
    if bad:
        raise PredictionError(
            f"{where}:{line}: {task} demands must be finite, >= 0 and <= {MAX_DEMAND_S:.0e} seconds, got {bad}"
        )
    if task != TaskKind.SHUFFLE_SORT and demands.get("network", 0.0) > 0:
        raise PredictionError(
            f"{where}:{line}: {task} has a network demand ({demands['network']:g} s), but only "
            "shuffle-sorts use the network (Vianna et al. 2013, section 4.1; Table 2 gives maps and "
            "merges none): leave it 0, or charge the transfer to the shuffle_sort row"
        )
    return task, demands
