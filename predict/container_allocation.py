"""How YARN's MapReduce ApplicationMaster shares a job's containers between its maps and reduces.

A YARN cluster has no map or reduce slots: every task container is one pool, and the
ApplicationMaster asks for reduces' containers as the maps complete (after slow start, which is the
caller's), up to a ramp-up share of the pool while maps still wait (Hadoop 2-3,
``RMContainerAllocator.scheduleReduces``; memory taken as whole containers).  Defined once here:
the simulation replays the rule event by event (:mod:`predict.sim_events`) and
``vianna_tripathi``'s precedence tree reads its average (:func:`map_containers`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["map_containers", "reduces_allowed"]


def reduces_allowed(
    containers: int, n_maps: int, maps_done: int, maps_waiting: int, n_reduces: int, rampup: float
) -> int:
    """How many reduces may hold containers, by the ApplicationMaster's rule.

    Once no map waits for a container, every reduce.  Before, the reduces'
    share of the ``containers`` grows with the maps completed, ``min(done / maps,
    rampup)``, and where the maps not yet done fit in what that leaves them, the
    rest goes to the reduces too.
    """
    if maps_waiting == 0:
        return n_reduces
    share = containers * min(maps_done / n_maps, rampup)
    if math.floor(containers - share) >= n_maps - maps_done:
        share = containers - (n_maps - maps_done)
    return min(n_reduces, max(0, math.floor(share)))


def map_containers(containers: int, maps: int, reduces: int, slowstart: float, rampup: float) -> float:
    """How many of ``containers`` hold maps through the map stage, on average over its completions.

    One term per map finished (``done`` = 0 .. maps - 1): the containers the reduces allowed
    (:func:`reduces_allowed`, from slow start on) leave to the maps while that many are done.  While
    more maps are left than there are containers, some wait and the rule's share is a function of
    ``done`` alone, summed at once; the last ``containers`` completions are walked one by one (an
    80,000-map job costs no Python loop of its length).

    >>> round(map_containers(3, 12, 1, 0.05, 0.5), 2)  # 3 containers for 4 completions, then 2
    2.33
    >>> map_containers(3, 12, 0, 0.05, 0.5)  # a map-only job keeps them all
    3.0
    """
    if maps <= 0 or reduces <= 0:
        return float(containers)
    start_after = min(maps, math.ceil(slowstart * maps - 1e-9))
    head_end = max(start_after, maps - containers)  # before it, maps wait for containers whatever is held
    done = np.arange(start_after, head_end, dtype=np.float64)
    held_head = np.minimum(reduces, np.floor(containers * np.minimum(done / maps, rampup)))
    total = float(containers * start_after + (containers - held_head).sum())
    held = int(held_head[-1]) if len(held_head) else 0
    for d in range(head_end, maps):
        waiting = max(0, maps - d - (containers - held))
        held = reduces_allowed(containers, maps, d, waiting, reduces, rampup)
        total += containers - held
    return total / maps
