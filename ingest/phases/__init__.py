"""Phases of one task attempt from its log events (``attempt_phases``).

The phases are those of Zhang et al. 2013, section 2 (read, map, collect,
spill, merge on the map side; shuffle, sort, reduce, write on the reduce side)
as far as Hadoop's own log lines delimit them, plus named overheads so that
nothing of an attempt's span is dropped.

Two lanes
---------
``main``: the attempt's task thread.  Its phases are consecutive, never
overlap, and cover the attempt's span [first line, last line] exactly
(boundaries are clamped to be monotonic; :data:`~ingest.phases.spans.COVERAGE_TOLERANCE_MS`)::

    map:    setup | read+map+collect | spill | merge | commit | other
            ^first  ^Processing split ^Starting flush  ^last 'Finished spill' after the flush
                                              ^'is done. And is in the process of committing'
                                                        ^"Task '...' done."   ^last line
    map-only job: setup | read+map+write | commit | other
    reduce: setup | wait | shuffle | sort | reduce+write | commit | other
                  ^ShuffleConsumerPlugin  ^first fetch  ^EventFetcher stopped (else finalMerge)
            reduce+write from the task thread's last merge-pass line after finalMerge
            (the final merge streams into reduce)

A 1.x reduce (``ReduceTask.ReduceCopier``, no merge manager) marks the same
points with its own lines: wait at ``ShuffleRamManager: MemoryLimit=...``, shuffle
at the first ``Scheduled N outputs`` with N > 0 (its copier threads log no fetch
at INFO), sort at ``In-memory merge complete: N files left.`` (the copier's last
line; ``ReduceTask.run`` then enters its sort phase, whose first line is logged
only after the in-memory segments are merged to disk).

``background``: work of helper threads that runs while the main lane goes on:
map-side spills done by the ``SpillThread`` while the map function still ran
(each spill from its start line to its ``Finished spill N``, summed, and clipped
at the flush, after which the main lane's ``spill`` counts the wait; spills are
numbered as ``MapOutputBuffer`` numbers them, see :func:`~ingest.phases.map_side._spills`), and
reduce-side in-memory/on-disk merges done while shuffling (``merge``).  Zhang's
spill duration of an attempt is the sum of ``dur_ms`` of its ``spill`` rows over
both lanes; for a background row ``dur_ms`` is the summed work, which may be less
than ``end_ms - start_ms``.

Combined names (``read+map+collect``, ``reduce+write``) say what a span holds
because log lines cannot split it.  Two sources split them:

- the job's own timers: the microbenchmark job (``phaseline engine run``, on
  this machine or with its jar on a cluster) counts the nanoseconds its task
  thread spends in the record reader, in collect (``context.write`` of the map
  function: partition, serialize, and any wait for a spill to free the buffer,
  all inside Hadoop's ``MapOutputBuffer.collect``) and in the record writer
  (:data:`~ingest.phases.splits.PHASE_NANOS`).  read, collect and write get those times; map, or
  reduce, gets the rest of the span (:func:`~ingest.phases.splits.timed_weights`).  Their rows keep
  the times to the microsecond (``dur_us``; the layout is in whole ms).
- else JDK Flight Recorder samples of the task thread (``--jfr``): a map's span
  is split into ``read``, ``map`` and ``collect`` by the share of the thread's
  samples inside the record reader, the user's map function and the output
  collector (:func:`~ingest.phases.splits.map_stack_phase`), and a reduce's into ``reduce`` and
  ``write`` by the share inside the record writer (:func:`~ingest.phases.splits.reduce_stack_phase`),
  given at least :data:`~ingest.phases.splits.MIN_SPLIT_SAMPLES` samples.  JFR's sampler is starved
  when more threads than cores run (a 25 ms map on 2 cores got 1-3 of its ~12
  samples), so small maps stay combined.

The parts interleave record by record; they are laid out one after the other,
in that order, with the durations so found.

Data
----
Map: read+map+collect gets the split length of ``Processing split: path:off+len``
(else the input-format bytes counter) and ``MAP_INPUT_RECORDS``; spills their
serialized bytes and records from the ``bufstart/bufend`` and ``kvstart/kvend``
lines; merge the last merge pass's size (else, and after an intermediate merge
pass, whose logged size is no byte count under map output compression, map
output materialized bytes: :func:`~ingest.phases.map_side._map_merge_bytes`), and nothing (0 bytes, 0
records) when the map spilled exactly once: Hadoop's ``MapTask.mergeParts``
then renames the one spill file into the map output (``numSpills == 1``) and
merges no data.
Reduce: shuffle ``REDUCE_SHUFFLE_BYTES`` (else the fetched lengths) and
``REDUCE_INPUT_RECORDS``; sort the bytes of the final merge (from disk and from
memory, in one unit under compression: :func:`~ingest.phases.reduce_side._sort_bytes`); reduce+write the
output-format bytes and ``REDUCE_OUTPUT_RECORDS``.

LocalJobRunner runs every task in one JVM, whose file-system statistics are
shared: the ``FileSystemCounter`` values of an attempt accumulate over the whole
job and are never used here, and the input/output-format byte counters (deltas
of those statistics) are inflated when attempts overlap (``parallel=True``):
log-line byte counts and record counters are used instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ingest.phases.map_side import map_phases
from ingest.phases.reduce_side import reduce_phases
from ingest.phases.spans import Lane, Overhead, PhaseSpan
from ingest.tasklog_patterns import TaskEvent
from phaseline.schemas import Phase


def derive_phases(
    attempt_id: str,
    task_type: str,
    events: Sequence[TaskEvent],
    counters: Mapping[tuple[str, str], int],
    *,
    start_ms: int,
    finish_ms: int,
    parallel: bool = False,
    samples: Mapping[Phase, int] | None = None,
) -> list[PhaseSpan]:
    """The phases of one attempt from its events, sorted by time.

    Parameters
    ----------
    attempt_id, task_type
        The attempt and ``MAP``/``REDUCE``.
    events
        The attempt's events in time order (ties in line order).
    counters
        The attempt's ``Final Counters`` as ``{(group, counter): value}`` (internal names).
    start_ms, finish_ms
        The attempt's span (its first and last line).
    parallel
        Other attempts of the same JVM overlapped this one: input/output-format byte
        counters are inflated and unused.
    samples
        Stack samples of the task thread during read+map+collect (map, counted by
        :func:`~ingest.phases.splits.map_stack_phase`) or reduce+write (reduce, :func:`~ingest.phases.splits.reduce_stack_phase`):
        split that span (:func:`~ingest.phases.splits.split_by_samples`).
    """
    if task_type == "MAP":
        return map_phases(events, counters, start_ms, finish_ms, parallel, samples or {})
    if task_type == "REDUCE":
        return reduce_phases(events, counters, start_ms, finish_ms, parallel, samples or {})
    return [PhaseSpan(Overhead.OTHER.value, Lane.MAIN, start_ms, finish_ms, finish_ms - start_ms)]
