"""Which tasks run beside which: the overlap weights of the Vianna model's aMVA (eq. 6).

From a job's timeline, the intra-job overlap ``alpha_ij`` of Liang & Tripathi summed over
the class-j tasks (for a shared device) and over those on the class-i task's node (for a
node's own devices); and, for the other jobs of the workload, the class-j tasks a class-i
task's node holds (:func:`colocation`).
"""

from __future__ import annotations

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
    # The tasks that meet [t0, t1] lie between the first whose running latest end reaches t0 and
    # the last that starts by t1, the timeline being in start order (as the walk makes it).
    by_start = bool(np.all(s[1:] >= s[:-1]))
    latest_end = np.maximum.accumulate(e) if by_start else e
    for pair, start_at, stop_at in zip(keys.tolist(), bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        j, o = divmod(pair, len(owners))
        sel = order[start_at:stop_at]
        times, area = _integral_tables(s[sel], e[sel], cnt[sel])
        # Only tasks that meet [times[0], times[-1]] get a share: for the others both ends read
        # the same end of the table and add exactly 0 (the order of the others' sums is kept).
        lo, hi = 0, s.size
        if by_start:
            lo, hi = int(latest_end.searchsorted(times[0])), int(s.searchsorted(times[-1], side="right"))
        near = lo + np.flatnonzero((e[lo:hi] >= times[0]) & (s[lo:hi] <= times[-1]))
        covered = scale[near] * (np.interp(e[near], times, area) - np.interp(s[near], times, area))
        np.add.at(anywhere[:, j], cls[near], covered)
        np.add.at(same_node[:, j], cls[near], covered * together[own[near], o])
    per_task = np.zeros(size)
    np.add.at(per_task, cls[live], cnt[live])
    out = []
    for weights in (anywhere, same_node):
        weights -= np.diag(per_task)  # a task does not run beside itself
        weights /= layout.counts[:, None]
        out.append(np.maximum(weights, 0.0))
    return out[0], out[1]


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
