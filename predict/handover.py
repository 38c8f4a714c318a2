"""The slot handover: the time a freed slot stands idle before the scheduler gives it the next task.

A Hadoop 1 JobTracker hands a TaskTracker's freed slot the next pending task on the tracker's
next heartbeat (3 s by default); a YARN ApplicationMaster gets the freed container back from the
ResourceManager on its next allocate call, and the NodeManager then launches it (1 s heartbeats
each).  ARIA's bounds and Herodotou's waves compose tasks back to back on their slots (Verma et
al. 2011, section 3; Herodotou 2011, eqs. 92-94), as do the other models: none of them prices
the wait between two tasks of one slot, and no task's duration holds it.  The platform model
measures it on its benchmark runs (``profiles/sql/slot_handover.sql``: the median over every
handover, as ``phaseline fit`` records it under :data:`~platform_model.profile.SLOT_HANDOVER`),
a property of the cluster's scheduler like its phases' costs are of its disks and network.

:func:`with_handover` adds it to every model's prediction, once per handover a slot makes: ``n``
tasks on ``k`` slots leave ``max(0, n - k)`` tasks to freed slots, ``(n - k) / k`` per slot, each
after one handover; the map stage lengthens by that many map handovers, the reduce stage by its
reduces' (the reduces of a later wave wait for a freed reduce slot, as ARIA's typical shuffle
does).  A platform model without the measurement (fitted from a CSV, or before it was recorded)
adds nothing, and neither does an uberized run (:mod:`predict.uber`): the ApplicationMaster's
``LocalContainerLauncher`` runs its next task as the last one ends, with no scheduler between them.

>>> handovers_per_slot(10, 4)
1.5
>>> handovers_per_slot(3, 4)
0.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from phaseline.schemas import TaskType
from platform_model.profile import SLOT_HANDOVER
from predict.core import MS_PER_S, Prediction

if TYPE_CHECKING:
    from predict.core import Inputs

__all__ = ["handovers_per_slot", "slot_handover_ms", "with_handover"]


def handovers_per_slot(tasks: int, slots: int) -> float:
    """How many times each of ``slots`` slots is handed a next task, on average, to run ``tasks``."""
    return max(0, tasks - slots) / slots if slots > 0 else 0.0


def slot_handover_ms(platform: object, task_type: TaskType) -> float:
    """The platform model's measured handover of ``task_type``'s slots (ms); 0 where it has none."""
    cluster: Mapping[str, Any] = getattr(platform, "cluster", None) or {}
    record = (cluster.get(SLOT_HANDOVER) or {}).get(task_type.value) or {}
    ms = record.get("ms")
    return float(ms) if isinstance(ms, (int, float)) and ms > 0 else 0.0


def with_handover(prediction: Prediction, inputs: Inputs, maps: int) -> Prediction:
    """``prediction`` with the slots' handovers added (estimate and interval alike): ``maps`` map
    tasks on the cluster's map slots, the settings' reduces on its reduce slots."""
    cluster, reduces = inputs.cluster, inputs.settings.reduces
    if cluster.uber:  # one task after another in the AM's JVM: no slot is handed anything
        return prediction
    stages: dict[str, float] = {}
    notes: list[str] = []
    for stage, task_type, tasks, slots in (
        ("map.handover", TaskType.MAP, maps, cluster.map_slots),
        ("reduce.handover", TaskType.REDUCE, reduces, cluster.reduce_slots),
    ):
        ms = slot_handover_ms(inputs.platform, task_type)
        per_slot = handovers_per_slot(tasks, slots)
        if ms <= 0 or per_slot <= 0:
            continue
        stages[stage] = ms * per_slot / MS_PER_S
        notes.append(
            f"slot handover: a freed {task_type.value.lower()} slot idles {ms:.0f} ms before the next task "
            f"(the platform's benchmark runs), {per_slot:.3g} per slot for {tasks:,} tasks on {slots:,}: "
            f"+{stages[stage]:.3g} s"
        )
    if not stages:
        return prediction
    return prediction.lengthened(stages, tuple(notes))
