"""Inside a map task: Desai et al. 2012's read/compute/write pipeline (section 3.3, Figure 5), the
task level of the critical-path model (:mod:`predict.critical_path` is the job level).

A map task is a read/compute/write
pipeline over ``N`` chunks of its split.  The dependencies are the data flow
``R_i -> C_i -> W_i``; the degree of parallelism ``c_p`` (``C_i -> R_j``:
a chunk's read needs a core, free once all but ``c_p - 1`` earlier computes
are done); the read parallelism ``r_p`` (``R_{n-r_p} -> R_n``: reads from one
source are serial); and the finite output buffer (``W_i -> W_n``: a write
waits ``T_flush`` after the write at which the buffer filled).  The
earliest start times are the recurrences of Figure 5, eqs. 1-4
(:func:`pipeline`).  In Hadoop the map thread is one core (``c_p = 1``)
reading one split (``r_p = 1``); the chunks are one sort buffer's worth of
input each (``io.sort.mb x spill percent`` of map output), the flush is the
spill, done by the spill thread while the map thread goes on.  The map-side
merge is appended after the pipeline (phaseline's composition: it starts
once the last spill is written).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from phaseline.errors import PredictionError
from phaseline.schemas import Phase
from predict.core import JobSettings
from predict.dataflow import ACCOUNTING_BYTES_PER_RECORD
from predict.tasks import TaskEstimate

__all__ = ["END", "START", "PipelineSchedule", "map_task_pipeline", "pipeline"]

#: The first and last node of a path (a pipeline's, a job graph's).
START, END = "S", "E"


@dataclass(frozen=True, slots=True)
class PipelineSchedule:
    """Earliest start times of a pipeline's phases (Desai et al. 2012, Figure 5), 0-based tasks.

    ``end`` is ``EST_e(N)`` (eq. 4) plus the last flush, the pipeline's ideal
    execution time; ``path`` the binding dependencies from ``S`` to ``E`` as
    node names (``R0``, ``C0``, ``W0``...).
    """

    est_read: tuple[float, ...]
    est_compute: tuple[float, ...]
    est_write: tuple[float, ...]
    end: float
    path: tuple[str, ...]


def pipeline(
    t_read: Sequence[float],
    t_compute: Sequence[float],
    data_written: Sequence[float],
    *,
    cp: int = 1,
    rp: int = 1,
    buffer_bytes: float = math.inf,
    t_flush: float = 0.0,
    final_flush: bool = True,
) -> PipelineSchedule:
    """Solve the earliest-start-time recurrences of Desai et al. 2012, Figure 5.

    * eq. 1: ``EST_r(n)`` = 0 for the first ``min(r_p, c_p)`` tasks; after that
      the later of the read from the same source (``EST_r(n - r_p) + T_r``) and
      a free core: the time at which all but ``c_p - 1`` of the earlier
      computes have completed (the ``(n - c_p)``-th earliest completion, as
      the paper's text and last clause have it; its printed second clause,
      the minimum over the last ``c_p`` computes only, differs from that when
      ``c_p > 1`` and the compute times vary);
    * eq. 2: ``EST_c(n) = EST_r(n) + T_r(n)``;
    * eq. 3: ``EST_w(n)`` = the end of its compute, or later if the buffer is
      full: ``EST_w(n - i) + T_flush`` for the smallest ``i`` whose writes
      ``n - i .. n - 1`` together reach ``bufferSize``;
    * eq. 4: ``EST_e(N) = max EST_w(i)``; with ``final_flush`` the data left in
      the buffer is flushed once more after the last write (Hadoop's final
      spill), if anything was written.

    Writes into the buffer take no time (as in the paper); flushes run beside
    the pipeline.
    """
    n = len(t_read)
    if not (len(t_compute) == n == len(data_written)) or n == 0:
        raise PredictionError("a pipeline needs the same number (>= 1) of read, compute and write entries")
    if cp < 1 or rp < 1:
        raise PredictionError(f"c_p and r_p must be >= 1, got c_p={cp}, r_p={rp}")
    est_r = [0.0] * n
    est_c = [0.0] * n
    est_w = [0.0] * n
    why_r: list[str | None] = [None] * n  # the binding predecessor of each node
    why_w: list[str] = [""] * n
    done: list[tuple[float, int]] = []  # sorted (compute end, task)
    for k in range(n):
        if k >= min(rp, cp):
            best, why = 0.0, None
            if k >= rp:
                best, why = est_r[k - rp] + t_read[k - rp], f"R{k - rp}"
            if k >= cp:
                free, who = done[k - cp]
                if free > best:
                    best, why = free, f"C{who}"
            est_r[k], why_r[k] = best, why
        est_c[k] = est_r[k] + t_read[k]
        bisect.insort(done, (est_c[k] + t_compute[k], k))
        est_w[k], why_w[k] = est_c[k] + t_compute[k], f"C{k}"
        filled = 0.0
        # eq. 3: wait for the flush of the nearest write at which the buffer filled
        for i in range(1, k + 1 if math.isfinite(buffer_bytes) else 1):
            filled += data_written[k - i]
            if filled >= buffer_bytes:
                if est_w[k - i] + t_flush > est_w[k]:
                    est_w[k], why_w[k] = est_w[k - i] + t_flush, f"W{k - i}"
                break
    last = max(range(n), key=lambda k: (est_w[k], k))
    end = est_w[last] + (t_flush if final_flush and sum(data_written) > 0 else 0.0)
    path = [END, f"W{last}"]
    node = f"W{last}"
    while True:
        kind, k = node[0], int(node[1:])
        prev = why_w[k] if kind == "W" else f"R{k}" if kind == "C" else why_r[k]
        if prev is None:
            break
        path.append(prev)
        node = prev
    path.append(START)
    return PipelineSchedule(tuple(est_r), tuple(est_c), tuple(est_w), end, tuple(reversed(path)))


def map_task_pipeline(
    task: TaskEstimate, settings: JobSettings, map_output_bytes: float, map_output_records: float = 0.0
) -> float:
    """A map task's time (ms) as a Figure 5 pipeline plus the sequential merge and the task overhead.

    Chunks are one spill's worth each: ``N = ceil((output + 16 x records) /
    (io.sort.mb x spill percent))``, the buffer's use counted as Hadoop 2+ and
    :func:`predict.tasks.single_spill` count it (serialized bytes plus 16
    accounting bytes per record); read ``T_r = read / N``, compute ``T_c =
    (map + collect) / N``, ``DW = output / N``, ``T_flush`` = the spill time of
    one chunk; ``c_p = r_p = 1``.  Map-only jobs write straight to the output
    (no buffer): the write is part of the compute.  The merge is appended after
    the pipeline's end (it starts once the last spill is written); that
    composition is phaseline's, not one of the paper's.
    """
    ph = task.phases_ms
    read = ph.get(Phase.READ.value, 0.0)
    compute = ph.get(Phase.MAP.value, 0.0) + ph.get(Phase.COLLECT.value, 0.0)
    spill = ph.get(Phase.SPILL.value, 0.0)
    tail = ph.get(Phase.MERGE.value, 0.0)
    if Phase.SPILL.value not in ph:  # map-only: no sort buffer
        compute += ph.get(Phase.WRITE.value, 0.0)
    buffer = settings.io_sort_mb * 2**20 * settings.sort_spill_percent
    used = map_output_bytes + ACCOUNTING_BYTES_PER_RECORD * map_output_records
    chunks = max(1, math.ceil(used / buffer)) if map_output_bytes > 0 else 1
    chunks = min(chunks, 10_000)
    sched = pipeline(
        [read / chunks] * chunks,
        [compute / chunks] * chunks,
        [map_output_bytes / chunks] * chunks,
        buffer_bytes=map_output_bytes / chunks if map_output_bytes > 0 else math.inf,
        t_flush=spill / chunks,
    )
    return max(0.0, sched.end + tail + task.overhead_ms)
