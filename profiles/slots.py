"""Slot lanes: which lane of its host each attempt ran in, by first-fit interval colouring (the
timeline's ``slot`` column; sequential, so it is Python's rather than ``timeline.sql``'s)."""

from __future__ import annotations

import heapq

import numpy as np
import pandas as pd

__all__ = ["assign_slots"]


def assign_slots(timeline_df: pd.DataFrame) -> pd.DataFrame:
    """Add a ``slot`` column: the lane of each attempt on its host (first-fit interval colouring).

    Attempts on one host are taken in start order; each takes the lowest-numbered
    slot free at its start (a slot frees at its attempt's finish, and a finish and
    a start at the same millisecond share it).  The number of slots on a host is
    therefore the host's peak concurrency.  Attempts without times get ``<NA>``.
    Returns a new frame; the input is not modified.
    """
    out = timeline_df.copy()
    n = len(out)
    slot: list[int | None] = [None] * n
    if n:
        host_code, _ = pd.factorize(out["host"].fillna(""))
        start = out["start_ms"].to_numpy(dtype="float64", na_value=np.nan)
        finish = out["finish_ms"].to_numpy(dtype="float64", na_value=np.nan)
        timed = ~(np.isnan(start) | np.isnan(finish))
        # host by host, each in start order: the heaps are reset at each new host
        order = np.lexsort((finish, start, host_code))
        order = order[timed[order]]
        hosts = host_code[order].tolist()
        starts, finishes = start[order].tolist(), np.maximum(finish, start)[order].tolist()
        push, pop = heapq.heappush, heapq.heappop
        current = None
        free: list[int] = []
        busy: list[tuple[float, int]] = []
        count = 0
        for i, host, t, f in zip(order.tolist(), hosts, starts, finishes, strict=True):
            if host != current:
                current, free, busy, count = host, [], [], 0
            while busy and busy[0][0] <= t:
                push(free, pop(busy)[1])
            if free:
                lane = pop(free)
            else:
                lane = count
                count += 1
            slot[i] = lane
            push(busy, (f, lane))
    out["slot"] = pd.array(slot, dtype="Int64")
    return out
