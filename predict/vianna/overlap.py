"""Which tasks run beside which: the overlap weights of the Vianna model's aMVA (eq. 6).

From a job's timeline, the intra-job overlap ``alpha_ij`` of Liang & Tripathi summed over
the class-j tasks (for a shared device) and over those on the class-i task's node (for a
node's own devices); and, for the other jobs of the workload, the class-j tasks a class-i
task's node holds (:func:`colocation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from predict.vianna.layout import JobLayout
from predict.vianna.mva import SparseWeights
from predict.vianna.tree import Timeline

__all__ = ["colocation", "copresence", "overlap_weights"]

def _integral_tables(
    starts: npt.NDArray[np.float64], ends: npt.NDArray[np.float64], weight: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Breakpoints and cumulative integral of a sum of weighted boxes [start, end].

    (Called once per class and thread group, 805 times a walk at 50 GiB on 64 nodes, on a few
    dozen boxes: the ufuncs are called directly, the area written in place; np.cumsum and
    np.diff are these same operations behind a Python wrapper each.)
    """
    times = np.concatenate((starts, ends))
    slope = np.concatenate((weight, -weight))
    order = np.argsort(times, kind="stable")
    times, slope = times[order], slope[order]
    level = np.add.accumulate(slope)  # running count just after each breakpoint
    area = np.empty(times.size)
    area[0] = 0.0
    np.add.accumulate(level[:-1] * (times[1:] - times[:-1]), out=area[1:])
    return times, area


def overlap_weights(
    layout: JobLayout, timeline: Timeline
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Class-j tasks of the same job running beside a class-i task, each weighted by its overlap.

    Returns ``(anywhere, same_node)``:
    ``anywhere[i, j] = (1 / n_i) sum_{a in i} sum_{b in j, b != a} |a cap b| / |a|`` -- the
    intra-job overlap factor ``alpha_ij`` of Liang & Tripathi summed over the
    class-j tasks (for the shared network) -- and ``same_node``, the same sum
    over the class-j tasks on the class-i task's node (for CPUs, disks and
    fiber).  Co-location comes from the threads' node shares, so lock-step
    tasks on one reduce thread are on one node while those of different
    reduces are not.  Computed with cumulative integrals of the number of
    running tasks per (class, thread group): O(classes x instances).
    """
    return _overlap_weights(layout, timeline, pair_by_pair=False)


def _overlap_weights(
    layout: JobLayout, timeline: Timeline, *, pair_by_pair: bool
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """:func:`overlap_weights`, its sums taken every pair at once where the timeline allows (the same
    floats as ``pair_by_pair``, which takes them one (class, thread group) at a time)."""
    inst = timeline.instances
    size = layout.size
    owners = sorted(set(inst.owner))
    owner_index = {o: k for k, o in enumerate(owners)}
    profile = np.vstack([layout.owner_nodes[o] for o in owners])
    together = profile @ profile.T  # chance that tasks of two thread groups share a node
    cls = np.array(inst.cls)
    own = np.array([owner_index[o] for o in inst.owner])
    cnt = np.array(inst.count, dtype=np.float64)
    s = np.array(inst.start)
    e = np.array(inst.end)
    length = e - s
    live = length > 0
    anywhere = np.zeros((size, size))
    same_node = np.zeros((size, size))
    scale = np.where(live, cnt / np.where(live, length, 1.0), 0.0)
    # the live tasks of each (class, thread group), in timeline order: one stable sort, not a mask each
    live_at = np.flatnonzero(live)
    key = cls[live_at] * len(owners) + own[live_at]
    by_key = np.argsort(key, kind="stable")
    order = live_at[by_key]
    keys, first = np.unique(key[by_key], return_index=True)
    bounds = np.append(first, order.size)
    # The tasks that meet a pair's [t0, t1] lie between the first whose running latest end reaches t0
    # and the last that starts by t1, the timeline being in start order (as the walk makes it): every
    # pair at once; else every task is tested, pair by pair.
    boxes = _Boxes(s, e, cnt, cls, own, scale)
    if keys.size and not pair_by_pair and bool(np.all(s[1:] >= s[:-1])):
        _all_pairs(anywhere, same_node, boxes, order, bounds, keys, together)
    else:
        _each_pair(anywhere, same_node, boxes, order, bounds, keys, together)
    per_task = np.zeros(size)
    np.add.at(per_task, cls[live], cnt[live])
    out = []
    for weights in (anywhere, same_node):
        weights -= np.diag(per_task)  # a task does not run beside itself
        weights /= layout.counts[:, None]
        out.append(np.maximum(weights, 0.0))
    return out[0], out[1]


@dataclass(frozen=True, slots=True)
class _Boxes:
    """A timeline's instances as columns: start, end, task count, class, thread group (index), and
    the weight of a second of overlap (count / length; 0 for an instance of no length)."""

    s: npt.NDArray[np.float64]
    e: npt.NDArray[np.float64]
    cnt: npt.NDArray[np.float64]
    cls: npt.NDArray[np.int_]
    own: npt.NDArray[np.int_]
    scale: npt.NDArray[np.float64]


def _all_pairs(
    anywhere: npt.NDArray[np.float64], same_node: npt.NDArray[np.float64], box: _Boxes, order: npt.NDArray[np.intp],
    bounds: npt.NDArray[np.intp], keys: npt.NDArray[np.int_], together: npt.NDArray[np.float64],
) -> None:
    """:func:`overlap_weights`' sums for every (class, thread group) at once, into ``anywhere`` and ``same_node``.

    The same floats as one pair at a time (:func:`_integral_tables`, ``np.interp``, ``np.add.at``): a
    pair's table a row, accumulated along it; each task that meets the pair's span read off its row by
    ``np.interp``'s rule (:func:`_read`); the shares added in the pair-by-pair order.  At 50 GiB on 64
    nodes (805 pairs, 10,889 instances) 37 -> 12 ms a walk.
    """
    size = anywhere.shape[0]
    times, area, n = _pair_tables(box, order, bounds)
    rows = np.arange(keys.size)
    t0, t1 = times[:, 0], times[rows, n - 1]
    lo = np.maximum.accumulate(box.e).searchsorted(t0)  # the first task whose latest end reaches t0
    span = np.maximum(box.s.searchsorted(t1, side="right") - lo, 0)  # ... to the last that starts by t1
    pair = np.repeat(rows, span)
    task = np.repeat(lo, span) + np.arange(pair.size) - np.repeat(np.cumsum(span) - span, span)
    meets = (box.e[task] >= t0[pair]) & (box.s[task] <= t1[pair])
    near, pair = task[meets], pair[meets]
    ends = _read(times, area, n, np.repeat(pair, 2), np.stack((box.e[near], box.s[near]), axis=1).reshape(-1))
    covered = box.scale[near] * (ends[0::2] - ends[1::2])
    j, o = np.divmod(keys, together.shape[0])
    cells = box.cls[near] * size + j[pair]
    np.add.at(anywhere.reshape(-1), cells, covered)
    np.add.at(same_node.reshape(-1), cells, covered * together[box.own[near], o[pair]])



def _each_pair(
    anywhere: npt.NDArray[np.float64], same_node: npt.NDArray[np.float64], box: _Boxes, order: npt.NDArray[np.intp],
    bounds: npt.NDArray[np.intp], keys: npt.NDArray[np.int_], together: npt.NDArray[np.float64],
) -> None:
    """:func:`_all_pairs`' sums one (class, thread group) at a time, every task tested against each (any
    timeline; the reference :func:`_all_pairs` is held to, bit for bit)."""
    for pair, start_at, stop_at in zip(keys.tolist(), bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        j, o = divmod(pair, together.shape[0])
        sel = order[start_at:stop_at]
        times, area = _integral_tables(box.s[sel], box.e[sel], box.cnt[sel])
        # Only tasks that meet [times[0], times[-1]] get a share: for the others both ends read
        # the same end of the table and add exactly 0 (the order of the others' sums is kept).
        near = np.flatnonzero((box.e >= times[0]) & (box.s <= times[-1]))
        covered = box.scale[near] * (np.interp(box.e[near], times, area) - np.interp(box.s[near], times, area))
        np.add.at(anywhere[:, j], box.cls[near], covered)
        np.add.at(same_node[:, j], box.cls[near], covered * together[box.own[near], o])

def _pair_tables(
    box: _Boxes, order: npt.NDArray[np.intp], bounds: npt.NDArray[np.intp]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.intp]]:
    """:func:`_integral_tables` of every pair, a row each (+inf after a pair's breakpoints: sorted after
    them, never read): (breakpoints, cumulative integral, breakpoints per row)."""
    n_box = np.diff(bounds)
    pairs, width = n_box.size, 2 * int(n_box.max())
    row = np.repeat(np.arange(pairs), n_box)
    at = np.arange(order.size) - np.repeat(bounds[:-1], n_box)  # each box's place in its pair
    times, slope = np.full((pairs, width), np.inf), np.zeros((pairs, width))
    times[row, at], times[row, n_box[row] + at] = box.s[order], box.e[order]
    slope[row, at], slope[row, n_box[row] + at] = box.cnt[order], -box.cnt[order]
    by_time = np.argsort(times, axis=1, kind="stable")
    times = np.take_along_axis(times, by_time, axis=1)
    level = np.add.accumulate(np.take_along_axis(slope, by_time, axis=1), axis=1)
    area = np.zeros((pairs, width))
    with np.errstate(invalid="ignore"):  # (inf - inf past a pair's breakpoints)
        np.add.accumulate(level[:, :-1] * (times[:, 1:] - times[:, :-1]), axis=1, out=area[:, 1:])
    return times, area, 2 * n_box


def _read(
    times: npt.NDArray[np.float64], area: npt.NDArray[np.float64], n: npt.NDArray[np.intp],
    rows: npt.NDArray[np.intp], x: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """``np.interp(x[k], times[r, :n[r]], area[r, :n[r]])`` with ``r = rows[k]`` (``rows`` sorted), by numpy's
    rule (numpy/_core/src/multiarray/compiled_base.c, arr_interp): the last breakpoint at or before x,
    the value there where x is on it, the ends' values outside, else the segment's slope times the way in."""
    j = np.empty(x.size, dtype=np.intp)
    cuts = np.searchsorted(rows, np.arange(times.shape[0] + 1)).tolist()
    for r, (a, b, k) in enumerate(zip(cuts[:-1], cuts[1:], n.tolist(), strict=True)):
        if b > a:
            j[a:b] = times[r, :k].searchsorted(x[a:b], side="right")
    j -= 1
    last = n[rows] - 1
    inside = (j >= 0) & (j < last)
    jj = np.where(inside, j, 0)
    x0, x1, y0, y1 = times[rows, jj], times[rows, jj + 1], area[rows, jj], area[rows, jj + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (y1 - y0) / (x1 - x0)
        out = slope * (x - x0) + y0
        if np.isnan(out).any():  # numpy's second try from the segment's end, then a flat segment's value
            out = np.where(np.isnan(out), slope * (x - x1) + y1, out)
            out = np.where(np.isnan(out) & (y0 == y1), y0, out)
    out = np.where(inside & (x0 == x), y0, out)
    out = np.where(j < 0, area[rows, 0], out)
    return np.asarray(np.where(j >= last, area[rows, last], out), dtype=np.float64)


def colocation(layout: JobLayout) -> npt.NDArray[np.float64]:
    """Class-j tasks of another job on a class-i task's node (jobs are placed alike)."""
    pn = layout.per_node
    return np.asarray((pn @ pn.T) / layout.counts[:, None])


def copresence(
    weights: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
    layout: JobLayout,
    by_job: npt.NDArray[np.float64] | None,
    means: npt.NDArray[np.float64],
    job: float,
    node_local: npt.NDArray[np.bool_],
    n_jobs: int,
) -> list[npt.NDArray[np.float64] | SparseWeights]:
    """Eq. 6's weights per device type: this job's overlaps (``alpha_ij``) and the other jobs' (``beta_ij``).

    ``weights`` are :func:`overlap_weights`' (anywhere, same node); ``by_job`` each class's mean over
    the job's, where the overlaps are normalised by the job (``Overlap.JOB``), else ``None``.  A job
    alone (``n_jobs`` 1) adds ``(n_jobs - 1) beta_ij = +0.0`` (``beta >= 0``): its weights are its
    own overlaps, which touch few classes, so they go to the aMVA by their nonzero entries
    (:class:`~predict.vianna.mva.SparseWeights`, scaled entry by entry as the dense matrix would be).
    """
    beta = means / job if job > 0 else np.zeros_like(means)  # inter-job overlap of one task
    local = node_local.tolist()
    if n_jobs == 1 and bool(np.all(np.isfinite(beta))):
        sparse = {at: SparseWeights.of(weights[int(at)]) for at in set(local)}  # (anywhere, same node)[local]
        if by_job is not None:
            sparse = {at: m.scaled_rows(by_job) for at, m in sparse.items()}
        return [sparse[at] for at in local]
    over, over_local = weights if by_job is None else (m * by_job[:, None] for m in weights)
    with_self = colocation(layout)
    out: list[npt.NDArray[np.float64] | SparseWeights] = []
    for here in local:
        inter = (with_self if here else np.broadcast_to(layout.counts, over.shape)) * beta[None, :]
        out.append((over_local if here else over) + (n_jobs - 1) * inter)
    return out
