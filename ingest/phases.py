"""Phases of one task attempt from its log events (``attempt_phases``).

The phases are those of Zhang et al. 2013, section 2 (read, map, collect,
spill, merge on the map side; shuffle, sort, reduce, write on the reduce side)
as far as Hadoop's own log lines delimit them, plus named overheads so that
nothing of an attempt's span is dropped.

Two lanes
---------
``main``: the attempt's task thread.  Its phases are consecutive, never
overlap, and cover the attempt's span [first line, last line] exactly
(boundaries are clamped to be monotonic; :data:`COVERAGE_TOLERANCE_MS`)::

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
numbered as ``MapOutputBuffer`` numbers them, see :func:`_spills`), and
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
  (:data:`PHASE_NANOS`).  read, collect and write get those times; map, or
  reduce, gets the rest of the span (:func:`timed_weights`).  Their rows keep
  the times to the microsecond (``dur_us``; the layout is in whole ms).
- else JDK Flight Recorder samples of the task thread (``--jfr``): a map's span
  is split into ``read``, ``map`` and ``collect`` by the share of the thread's
  samples inside the record reader, the user's map function and the output
  collector (:func:`map_stack_phase`), and a reduce's into ``reduce`` and
  ``write`` by the share inside the record writer (:func:`reduce_stack_phase`),
  given at least :data:`MIN_SPLIT_SAMPLES` samples.  JFR's sampler is starved
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
output materialized bytes: :func:`_map_merge_bytes`), and nothing (0 bytes, 0
records) when the map spilled exactly once: Hadoop's ``MapTask.mergeParts``
then renames the one spill file into the map output (``numSpills == 1``) and
merges no data.
Reduce: shuffle ``REDUCE_SHUFFLE_BYTES`` (else the fetched lengths) and
``REDUCE_INPUT_RECORDS``; sort the bytes of the final merge (from disk and from
memory, in one unit under compression: :func:`_sort_bytes`); reduce+write the
output-format bytes and ``REDUCE_OUTPUT_RECORDS``.

LocalJobRunner runs every task in one JVM, whose file-system statistics are
shared: the ``FileSystemCounter`` values of an attempt accumulate over the whole
job and are never used here, and the input/output-format byte counters (deltas
of those statistics) are inflated when attempts overlap (``parallel=True``):
log-line byte counts and record counters are used instead.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ingest.mrcommon import INT64_MAX, INT64_MIN, parse_int64
from ingest.tasklog_patterns import TaskEvent
from phaseline.hadoop_names import (
    FILE_INPUT_FORMAT_COUNTER_GROUP,
    FILE_OUTPUT_FORMAT_COUNTER_GROUP,
    FILE_SYSTEM_COUNTER_GROUP,
    TASK_COUNTER_GROUP,
    TaskLogEventKind,
)
from phaseline.schemas import Phase

COVERAGE_TOLERANCE_MS = 1  # main-lane phases cover [start, finish] of the attempt to this many ms
MIN_SPLIT_SAMPLES = 5  # task-thread samples needed to split read+map+collect (JFR samples every 10-20 ms)
#: A reduce's fetched bytes (``len``) below this share of their uncompressed ``decomp``: map output
#: was compressed (uncompressed, ``len`` is ``decomp`` plus IFile's 4-byte checksum).
COMPRESSED_BELOW = 0.99

TASK = TASK_COUNTER_GROUP
FIF = FILE_INPUT_FORMAT_COUNTER_GROUP
FOF = FILE_OUTPUT_FORMAT_COUNTER_GROUP
FS = FILE_SYSTEM_COUNTER_GROUP
#: The microbenchmark job's own phase timers (``platform_model/engine/java/PhaseNanos.java``): counters
#: ``READ``, ``COLLECT`` and ``WRITE``, nanoseconds inside its record reader, collect and record writer.
PHASE_NANOS = "phaseline.engine.PhaseNanos"


class Lane(enum.StrEnum):
    """Whether a phase is on the attempt's task thread or concurrent helper-thread work."""

    MAIN = "main"
    BACKGROUND = "background"


class Overhead(enum.StrEnum):
    """Parts of an attempt's span that are no phase of the model, named so nothing is dropped."""

    SETUP = "setup"  # JVM/task start until the first phase marker
    WAIT = "wait"  # reduce: shuffle set up, no map output fetched yet
    COMMIT = "commit"  # 'is done. And is in the process of committing' .. "Task '...' done."
    OTHER = "other"  # after done: counters, metrics shutdown


def combined(*phases: Phase) -> str:
    """Name of a span holding several phases log lines cannot split, e.g. ``read+map+collect``."""
    return "+".join(p.value for p in phases)


READ_MAP_COLLECT = combined(Phase.READ, Phase.MAP, Phase.COLLECT)
READ_MAP_WRITE = combined(Phase.READ, Phase.MAP, Phase.WRITE)
REDUCE_WRITE = combined(Phase.REDUCE, Phase.WRITE)


@dataclass(frozen=True, slots=True)
class PhaseSpan:
    """One row of ``attempt_phases``."""

    phase: str
    lane: Lane
    start_ms: int
    end_ms: int
    dur_ms: int
    data_bytes: int | None = None
    data_records: int | None = None
    dur_us: int | None = None  # where timers measured it (:func:`_split`); log lines give whole ms


_READER_CLASSES = frozenset({"MapTask$NewTrackingRecordReader", "MapTask$TrackedRecordReader",
                             "MapTask$SkippingRecordReader"})
_COLLECTOR_CLASSES = frozenset({"MapTask$NewOutputCollector", "MapTask$OldOutputCollector",
                                "MapTask$DirectMapOutputCollector", "MapTask$NewDirectOutputCollector"})
_CONTEXT_CLASSES = frozenset({"WrappedMapper$Context", "MapContextImpl", "TaskInputOutputContextImpl"})
_CONTEXT_READS = frozenset({"nextKeyValue", "getCurrentKey", "getCurrentValue"})
_MAP_LOOPS = frozenset({"Mapper.run", "MapRunner.run"})


def map_stack_phase(frames: Sequence[str]) -> Phase | None:
    """Which of read, map, collect a map task thread's stack sample is in (``None``: none).

    ``frames`` are ``package.Class.method`` names, innermost first.  The innermost
    frame of the record reader (``*RecordReader``, the context's
    ``nextKeyValue``/``getCurrent*``) means read; of the output collector
    (``MapTask$MapOutputBuffer*``, the collectors, the context's ``write``) collect;
    otherwise a stack inside the map loop (``Mapper.run``) is the map function.

    >>> map_stack_phase(["org.apache.hadoop.io.Text.write",
    ...                  "org.apache.hadoop.mapred.MapTask$MapOutputBuffer.collect",
    ...                  "org.apache.hadoop.mapreduce.Mapper.run"])
    <Phase.COLLECT: 'collect'>
    """
    return _stack_phase(frames, _map_frame_phase, _MAP_LOOPS, Phase.MAP)


def _map_frame_phase(simple: str, method: str) -> Phase | None:
    if (simple.endswith("RecordReader") or simple in _READER_CLASSES
            or (simple in _CONTEXT_CLASSES and method in _CONTEXT_READS)):
        return Phase.READ
    if (simple.startswith("MapTask$MapOutputBuffer") or simple in _COLLECTOR_CLASSES
            or (simple in _CONTEXT_CLASSES and method == "write")):
        return Phase.COLLECT
    return None


_WRITER_CLASSES = frozenset({"ReduceTask$NewTrackingRecordWriter", "ReduceTask$OldTrackingRecordWriter"})
_REDUCE_LOOPS = frozenset({"Reducer.run", "ReduceTask.runNewReducer", "ReduceTask.runOldReducer"})


def reduce_stack_phase(frames: Sequence[str]) -> Phase | None:
    """Which of reduce, write a reduce task thread's stack sample is in (``None``: neither).

    The innermost record-writer frame (``*RecordWriter``, the tracking writers,
    the context's ``write``) means write; otherwise a stack inside the reduce
    loop (``Reducer.run``, ``ReduceTask.runNewReducer``; this includes reading
    the merged input, the last merge pass streaming into the reducer) is reduce.

    >>> reduce_stack_phase(["org.apache.hadoop.fs.FSOutputSummer.write",
    ...     "org.apache.hadoop.mapred.ReduceTask$NewTrackingRecordWriter.write",
    ...     "org.apache.hadoop.mapreduce.Reducer.run"])
    <Phase.WRITE: 'write'>
    """
    return _stack_phase(frames, _reduce_frame_phase, _REDUCE_LOOPS, Phase.REDUCE)


def _reduce_frame_phase(simple: str, method: str) -> Phase | None:
    if (simple.endswith("RecordWriter") or simple in _WRITER_CLASSES
            or (simple in ("TaskInputOutputContextImpl", "WrappedReducer$Context") and method == "write")):
        return Phase.WRITE
    return None


def _stack_phase(
    frames: Sequence[str], frame_phase: Callable[[str, str], Phase | None], loops: frozenset[str], loop_phase: Phase
) -> Phase | None:
    """The phase of the innermost frame ``frame_phase`` names, else ``loop_phase`` if a frame is one of ``loops``.

    ``frame_phase`` and ``loops`` see a frame as its simple class name and method
    (``"Mapper"``, ``"run"``; ``loops`` holds ``"Mapper.run"``).
    """
    in_loop = False
    for frame in frames:
        cls, _, method = frame.rpartition(".")
        simple = cls.rpartition(".")[2]
        phase = frame_phase(simple, method)
        if phase is not None:
            return phase
        in_loop = in_loop or f"{simple}.{method}" in loops
    return loop_phase if in_loop else None


def split_by_samples(
    span: PhaseSpan, counts: Mapping[Phase, int], data: Mapping[Phase, tuple[int | None, int | None]],
    parts: Sequence[Phase] = (Phase.READ, Phase.MAP, Phase.COLLECT), *, minimum: int = MIN_SPLIT_SAMPLES,
) -> list[PhaseSpan]:
    """Rows of ``parts`` laid out over ``span`` in order, in proportion to their sample counts.

    Returns ``[span]`` unchanged when the counts add up to less than ``minimum``
    (the samples a split needs; timed weights, :func:`timed_weights`, pass 1).
    """
    total = sum(counts.get(p, 0) for p in parts)
    if total < minimum:
        return [span]
    out: list[PhaseSpan] = []
    begin, seen = span.start_ms, 0
    for part in parts:
        seen += counts.get(part, 0)
        end = span.start_ms + round(span.dur_ms * seen / total)
        out.append(PhaseSpan(part.value, span.lane, begin, end, end - begin, *data.get(part, (None, None))))
        begin = end
    return out


def timed_weights(
    span: PhaseSpan, counters: Mapping[tuple[str, str], int], parts: Sequence[Phase], rest: Phase
) -> dict[Phase, int] | None:
    """Nanoseconds that split ``span`` into ``parts`` as the job's own timers measured them, else ``None``.

    Every part but ``rest`` needs its :data:`PHASE_NANOS` counter (the
    microbenchmark job's timers of its record reader, collect and record
    writer); ``rest``, the map or reduce function with the framework around it,
    gets what is left of the span (none if the timers add up to more).
    """
    weights: dict[Phase, int] = {}
    for part in parts:
        if part is not rest:
            nanos = counters.get((PHASE_NANOS, part.name))
            if nanos is None or nanos < 0:
                return None
            weights[part] = nanos
    weights[rest] = max(span.dur_ms * 1_000_000 - sum(weights.values()), 0)
    return weights


def _split(
    span: PhaseSpan, counters: Mapping[tuple[str, str], int], samples: Mapping[Phase, int],
    data: Mapping[Phase, tuple[int | None, int | None]], parts: Sequence[Phase], rest: Phase,
) -> list[PhaseSpan]:
    """``span`` split into ``parts`` by the job's timers (:func:`timed_weights`), else by its stack samples.

    Timed parts keep their measured duration to the microsecond (``dur_us``): the
    layout is in whole milliseconds, like the log lines, and a 5 ms read laid out
    so is up to 10 % off (the platform model fits ``dur_us`` where it is known).
    """
    timed = timed_weights(span, counters, parts, rest)
    if timed is None:
        return split_by_samples(span, samples, data, parts)
    out = split_by_samples(span, timed, data, parts, minimum=1)
    if len(out) == 1:  # nothing timed and an empty span: left whole
        return out
    return [replace(row, dur_us=round(timed[part] / 1000)) for row, part in zip(out, parts, strict=True)]


@dataclass(frozen=True, slots=True)
class _Spill:
    index: int
    start_ms: int
    finish_ms: int | None
    on_main: bool
    bytes: int | None
    records: int | None
    single: bool = False  # one record spilled from collect, before the flush


def _first(events: Sequence[TaskEvent], kind: TaskLogEventKind) -> TaskEvent | None:
    return next((e for e in events if e.kind is kind), None)


def _last(events: Sequence[TaskEvent], kind: TaskLogEventKind) -> TaskEvent | None:
    return next((e for e in reversed(events) if e.kind is kind), None)


def _thread(ev: TaskEvent | None) -> tuple[str | None, int | None] | None:
    return None if ev is None else (ev.thread_name, ev.thread_id)


def _partition(start: int, finish: int, cuts: Sequence[tuple[str, int | None]]) -> list[tuple[str, int, int]]:
    """Consecutive ``(name, start, end)`` spans from named start marks (``None``: phase absent)."""
    present = [(name, min(max(t, start), finish)) for name, t in cuts if t is not None]
    spans: list[tuple[str, int, int]] = []
    prev = start
    for i, (name, t) in enumerate(present):
        begin = start if i == 0 else max(t, prev)
        end = finish if i + 1 == len(present) else max(min(max(present[i + 1][1], begin), finish), begin)
        spans.append((name, begin, end))
        prev = end
    return spans


@dataclass(slots=True)
class _Started:
    ts_ms: int
    single: bool  # a one-record spill ('Record too large for in-memory buffer')
    bytes: int | None = None
    records: int | None = None


def _spill_records(ev: TaskEvent) -> int | None:
    """The records of a spill's ``kvstart = ...`` line.

    2.x+ prints metadata ints (counted into ``ev.records`` when the line was
    classified); 1.x prints record indexes into a ring of ``length`` records, and
    ``sortAndSpill`` spills ``(kvend > kvstart ? kvend : length + kvend) - kvstart``.
    """
    if ev.pattern != "spill_records_v1":
        return ev.records
    start, end, ring = _field_int(ev, "kvstart"), _field_int(ev, "kvend"), _field_int(ev, "length")
    if start is None or end is None or ring is None:
        return None
    return (end if end > start else ring + end) - start


def _spills(
    events: Sequence[TaskEvent], main: tuple[str | None, int | None] | None, flush_ms: int | None
) -> list[_Spill]:
    """The map's spills, numbered as ``MapOutputBuffer`` numbers them (``numSpills``).

    Every start line takes the next number: ``Spilling map output`` (1.x: ``...:
    record full = true`` / ``buffer full= true``) and ``Record too large for in-memory
    buffer``, a spill of one record that ``spillSingleRecord`` writes on the task
    thread without a ``Finished spill`` line; ``Finished spill N`` ends spill N, so
    the spills after a one-record spill keep their own ends, bytes and records.
    A ``Finished spill N`` with no start line (1.x's ``flush`` calls ``sortAndSpill``
    without logging one) is the task thread's spill from the flush on.  A spill is
    on the task thread (``on_main``) when its ``Finished spill`` line is; in logs
    without thread names (1.x child logs), when it began at or after the flush
    (before it, ``startSpill`` hands the spill to the ``SpillThread``).  A
    one-record spill is the task thread's, records 1 and bytes unknown (the
    line's size is the part of the record serialized when the buffer ran out).
    """
    started: list[_Started] = []
    finishes: dict[int, TaskEvent] = {}
    for ev in events:
        if ev.kind is TaskLogEventKind.SPILL_START:
            single = ev.pattern == "spill_single_record"
            started.append(_Started(ev.ts_ms, single, None, 1 if single else None))
        elif ev.kind is TaskLogEventKind.SPILL_BYTES and started and not started[-1].single:
            started[-1].bytes = ev.bytes
        elif ev.kind is TaskLogEventKind.SPILL_RECORDS and started and not started[-1].single:
            started[-1].records = _spill_records(ev)
        elif ev.kind is TaskLogEventKind.SPILL_FINISH:
            finishes.setdefault(_field_int(ev, "index") or 0, ev)
    threaded = main is not None and main != (None, None)
    out = []
    for i in sorted(set(range(len(started))) | finishes.keys()):
        fin = finishes.get(i)
        if i < len(started):
            spill = started[i]
            if spill.single:
                on_main = True
            elif threaded:
                on_main = fin is not None and _thread(fin) == main
            else:
                on_main = flush_ms is not None and spill.ts_ms >= flush_ms
            out.append(_Spill(i, spill.ts_ms, fin.ts_ms if fin else None, on_main, spill.bytes, spill.records,
                              spill.single))
            continue
        assert fin is not None
        after_flush = flush_ms is not None and fin.ts_ms >= flush_ms
        on_main = _thread(fin) == main if threaded else after_flush
        begin = flush_ms if on_main and after_flush and flush_ms is not None else fin.ts_ms
        out.append(_Spill(i, begin, fin.ts_ms, on_main, None, None))
    return out


def _sum(values: Sequence[int | None]) -> int | None:
    """The sum of the known values (None: none known, or a sum past 64 bits, which only corrupt sizes give)."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    total = sum(present)
    return total if INT64_MIN <= total <= INT64_MAX else None


def _sum_all(values: Sequence[int | None]) -> int | None:
    """The sum of the values when every one is known (None otherwise: a part would be missing)."""
    return None if any(v is None for v in values) else _sum(values)


def _field_int(ev: TaskEvent, key: str) -> int | None:
    """An integer a log line names (``len: 1234``), None when absent or no 64-bit integer."""
    text = ev.field(key)
    return parse_int64(text) if text else None


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
        :func:`map_stack_phase`) or reduce+write (reduce, :func:`reduce_stack_phase`):
        split that span (:func:`split_by_samples`).
    """
    if task_type == "MAP":
        return _map_phases(events, counters, start_ms, finish_ms, parallel, samples or {})
    if task_type == "REDUCE":
        return _reduce_phases(events, counters, start_ms, finish_ms, parallel, samples or {})
    return [PhaseSpan(Overhead.OTHER.value, Lane.MAIN, start_ms, finish_ms, finish_ms - start_ms)]


def _counter(counters: Mapping[tuple[str, str], int], group: str, name: str, usable: bool = True) -> int | None:
    return counters.get((group, name)) if usable else None


def _map_phases(
    events: Sequence[TaskEvent], counters: Mapping[tuple[str, str], int], start: int, finish: int,
    parallel: bool, samples: Mapping[Phase, int],
) -> list[PhaseSpan]:
    split = _first(events, TaskLogEventKind.SPLIT)
    flush = _first(events, TaskLogEventKind.FLUSH)
    main = _thread(split or flush or _first(events, TaskLogEventKind.COMMIT_PENDING))
    spills = _spills(events, main, flush.ts_ms if flush is not None else None)
    pending = _first(events, TaskLogEventKind.COMMIT_PENDING)
    done = _first(events, TaskLogEventKind.DONE)
    collects = flush is not None or _first(events, TaskLogEventKind.SORT_BUFFER) is not None
    input_bytes = (split.bytes if split and split.bytes is not None
                   else _counter(counters, FIF, "BYTES_READ", not parallel))
    input_records = counters.get((TASK, "MAP_INPUT_RECORDS"))
    data: dict[str, tuple[int | None, int | None]] = {}
    if collects:
        flush_ms = flush.ts_ms if flush is not None else None
        after_flush = [s for s in spills
                       if s.on_main and not s.single and flush_ms is not None and s.start_ms >= flush_ms]
        merge_at = max((s.finish_ms or s.start_ms) for s in after_flush) if after_flush else flush_ms
        cuts = [(Overhead.SETUP.value, start), (READ_MAP_COLLECT, split.ts_ms if split else None),
                (Phase.SPILL.value, flush.ts_ms if flush else None), (Phase.MERGE.value, merge_at),
                (Overhead.COMMIT.value, pending.ts_ms if pending else None),
                (Overhead.OTHER.value, done.ts_ms if done else None)]
        last_pass = [e for e in events if e.kind is TaskLogEventKind.MERGE_LAST_PASS and _thread(e) == main]
        intermediate = any(e.kind is TaskLogEventKind.MERGE_PASS and e.field("total") is not None and _thread(e) == main
                           for e in events)  # fmt: skip
        data[READ_MAP_COLLECT] = (input_bytes, input_records)
        data[Phase.SPILL.value] = (_sum([s.bytes for s in after_flush]), _sum([s.records for s in after_flush]))
        if len(spills) == 1 and not last_pass:
            data[Phase.MERGE.value] = (0, 0)  # one spill file is renamed, not merged
        else:
            data[Phase.MERGE.value] = (
                _map_merge_bytes(last_pass, intermediate, counters.get((TASK, "MAP_OUTPUT_MATERIALIZED_BYTES"))),
                _sum_all([s.records for s in spills]),
            )
    else:
        cuts = [(Overhead.SETUP.value, start), (READ_MAP_WRITE, split.ts_ms if split else None),
                (Overhead.COMMIT.value, pending.ts_ms if pending else None),
                (Overhead.OTHER.value, done.ts_ms if done else None)]
        data[READ_MAP_WRITE] = (input_bytes, input_records)
    out: list[PhaseSpan] = []
    for name, b, e in _partition(start, finish, cuts):
        span = PhaseSpan(name, Lane.MAIN, b, e, e - b, *data.get(name, (None, None)))
        if name != READ_MAP_COLLECT:
            out.append(span)
            continue
        out.extend(_split(span, counters, samples, {
            Phase.READ: (input_bytes, input_records),
            Phase.MAP: (None, input_records),
            Phase.COLLECT: (counters.get((TASK, "MAP_OUTPUT_BYTES")), counters.get((TASK, "MAP_OUTPUT_RECORDS"))),
        }, (Phase.READ, Phase.MAP, Phase.COLLECT), Phase.MAP))
    background = [s for s in spills if not s.on_main and s.finish_ms is not None]
    if background:
        limit = flush.ts_ms if flush is not None else finish
        ends = [min(s.finish_ms or limit, limit) for s in background]
        out.append(PhaseSpan(
            Phase.SPILL.value, Lane.BACKGROUND, min(s.start_ms for s in background), max(ends),
            sum(max(0, e - s.start_ms) for s, e in zip(background, ends, strict=True)),
            _sum([s.bytes for s in background]), _sum([s.records for s in background]),
        ))
    return sorted(out, key=lambda p: (p.lane != Lane.MAIN, p.start_ms))


def _sort_bytes(events: Sequence[TaskEvent], fetches: Sequence[TaskEvent]) -> int | None:
    """The data of a reduce's final merge: its bytes from disk and from memory.

    Hadoop logs the files on disk by their length there and the segments in memory by their
    records' bytes; with map output compression the first are compressed and the second not.
    Where the fetches say so (their ``len``, the bytes fetched, below their ``decomp``), the
    bytes from memory are counted at the fetches' ratio, in the unit of the disk's and of the
    shuffle's bytes.
    """
    disk = _sum([e.bytes for e in events if e.kind is TaskLogEventKind.FINAL_MERGE_DISK])
    memory = _sum([e.bytes for e in events if e.kind is TaskLogEventKind.FINAL_MERGE_MEMORY])
    raw = _sum([e.bytes for e in fetches])
    fetched = _sum([_field_int(e, "len") for e in fetches])
    if memory and raw and fetched is not None and fetched < COMPRESSED_BELOW * raw:
        memory = round(memory * fetched / raw)
    return _sum([disk, memory])


def _map_merge_bytes(last_pass: Sequence[TaskEvent], intermediate: bool, materialized: int | None) -> int | None:
    """The data of a map's merge (``MapTask.mergeParts``: one merge per reduce partition, one last pass each).

    After single passes, the last passes' ``total size`` (the spills' bytes it merges).  Hadoop
    logs that figure from its progress arithmetic (``Merger.MergeQueue.merge``): the segment
    lengths of every pass's input less the bytes the intermediate passes read, which are
    positions in the uncompressed records; with map output compression the two units differ, and
    after an intermediate pass the figure is no byte count (often negative: -2,173,356 bytes for
    a map of 2,180,986 bytes merged in two passes, a real LocalJobRunner run with
    ``mapreduce.map.output.compress=true``).  So after an intermediate pass, the bytes the merge
    wrote (``MAP_OUTPUT_MATERIALIZED_BYTES``) are taken; without the counter, the logged figure
    unless it is negative.
    """
    logged = _sum([e.bytes for e in last_pass])
    if last_pass and not intermediate and logged is not None and logged >= 0:
        return logged
    if materialized is not None:
        return materialized
    return logged if logged is not None and logged >= 0 else None


_MERGE_KINDS = frozenset({TaskLogEventKind.MERGE_PASS, TaskLogEventKind.MERGE_LAST_PASS, TaskLogEventKind.FINAL_MERGE_SPILL,
                          TaskLogEventKind.FINAL_MERGE_KEEP, TaskLogEventKind.FINAL_MERGE_DISK, TaskLogEventKind.FINAL_MERGE_MEMORY})
_BG_START = frozenset({TaskLogEventKind.INMEM_MERGE_START, TaskLogEventKind.ONDISK_MERGE_START, TaskLogEventKind.MEM2MEM_MERGE_START})
_BG_DONE = frozenset({TaskLogEventKind.INMEM_MERGE_DONE, TaskLogEventKind.ONDISK_MERGE_DONE})
# Without thread names (1.x child logs) each merger thread is known by the merges it logs.
_MERGER_OF_KIND = {TaskLogEventKind.INMEM_MERGE_START: "in-memory", TaskLogEventKind.INMEM_MERGE_DONE: "in-memory",
                   TaskLogEventKind.ONDISK_MERGE_START: "on-disk", TaskLogEventKind.ONDISK_MERGE_DONE: "on-disk",
                   TaskLogEventKind.MEM2MEM_MERGE_START: "memory-to-memory"}


def _merger(ev: TaskEvent, main: tuple[str | None, int | None] | None) -> object:
    """The merge thread a background-merge line is from (``None``: the task thread's own line)."""
    thread = (ev.thread_name, ev.thread_id)
    if thread != (None, None):
        return None if thread == main else thread
    return _MERGER_OF_KIND.get(ev.kind)


def _sort_start(events: Sequence[TaskEvent], final: TaskEvent | None, fetched_at: int | None) -> int | None:
    """Where a reduce's sort begins: where Hadoop's ``Shuffle.run`` sets ``Phase.SORT`` (the history's
    ``shuffleFinishTime``), known by the event fetcher's ``EventFetcher is interrupted.. Returning``.

    ``Shuffle.run`` stops the event fetcher (which logs that line), then the
    fetchers and the scheduler, sets the phase, and only then calls
    ``MergeManager.close``: that waits for the in-memory and on-disk merges still
    running (on TeraSort's reduce 1.6 s of in-memory merge) before it logs
    ``finalMerge called``.  That wait is Hadoop's sort, not its shuffle.  Without
    the fetcher's line (it logs nothing when it sees the stop flag before the
    interrupt; 1.x has no event fetcher) the sort begins at ``finalMerge``.
    """
    if final is None:
        return None
    low = fetched_at if fetched_at is not None else -(1 << 62)
    stops = [e.ts_ms for e in events if e.pattern == "event_fetcher_stop" and low <= e.ts_ms <= final.ts_ms]
    return stops[-1] if stops else final.ts_ms


def _reduce_phases(
    events: Sequence[TaskEvent], counters: Mapping[tuple[str, str], int], start: int, finish: int,
    parallel: bool, samples: Mapping[Phase, int],
) -> list[PhaseSpan]:
    init = _first(events, TaskLogEventKind.SHUFFLE_INIT) or _first(events, TaskLogEventKind.MERGE_MANAGER)
    fetches = [e for e in events if e.kind is TaskLogEventKind.FETCH_START]
    fetched_at = fetches[0].ts_ms if fetches else next(  # 1.x: the first copy scheduled
        (e.ts_ms for e in events if e.kind is TaskLogEventKind.FETCH_SCHEDULED and (_field_int(e, "outputs") or 0) > 0),
        None)
    final = _first(events, TaskLogEventKind.FINAL_MERGE)
    pending = _first(events, TaskLogEventKind.COMMIT_PENDING)
    done = _first(events, TaskLogEventKind.DONE)
    main = _thread(final or init or pending)
    reduce_at: int | None = None
    if final is not None:
        limit = pending.ts_ms if pending else finish
        merges = [e for e in events if e.kind in _MERGE_KINDS and _thread(e) == main
                  and final.ts_ms <= e.ts_ms <= limit]
        reduce_at = merges[-1].ts_ms if merges else final.ts_ms
    cuts = [(Overhead.SETUP.value, start), (Overhead.WAIT.value, init.ts_ms if init else None),
            (Phase.SHUFFLE.value, fetched_at),
            (Phase.SORT.value, _sort_start(events, final, fetched_at)), (REDUCE_WRITE, reduce_at),
            (Overhead.COMMIT.value, pending.ts_ms if pending else None),
            (Overhead.OTHER.value, done.ts_ms if done else None)]
    final_bytes = _sort_bytes(events, fetches)
    shuffle_bytes = counters.get((TASK, "REDUCE_SHUFFLE_BYTES"))
    if shuffle_bytes is None:
        shuffle_bytes = _sum([_field_int(e, "len") or 0 for e in fetches])
    data = {
        Phase.SHUFFLE.value: (shuffle_bytes, counters.get((TASK, "REDUCE_INPUT_RECORDS"))),
        Phase.SORT.value: (final_bytes, counters.get((TASK, "REDUCE_INPUT_RECORDS"))),
        REDUCE_WRITE: (_counter(counters, FOF, "BYTES_WRITTEN", not parallel),
                       counters.get((TASK, "REDUCE_OUTPUT_RECORDS"))),
    }
    out: list[PhaseSpan] = []
    for name, b, e in _partition(start, finish, cuts):
        span = PhaseSpan(name, Lane.MAIN, b, e, e - b, *data.get(name, (None, None)))
        if name != REDUCE_WRITE:
            out.append(span)
            continue
        out.extend(_split(span, counters, samples, {
            Phase.REDUCE: (None, counters.get((TASK, "REDUCE_INPUT_RECORDS"))),
            Phase.WRITE: data[REDUCE_WRITE],
        }, (Phase.REDUCE, Phase.WRITE), Phase.REDUCE))
    # background merges: a *_START opens a merge on its thread, the next *_DONE there closes it
    open_at: dict[object, int] = {}
    work: list[tuple[int, int, int | None]] = []
    for ev in events:
        if ev.kind not in _BG_START and ev.kind not in _BG_DONE:
            continue
        key = _merger(ev, main)
        if key is None:
            continue
        if ev.kind in _BG_START:
            open_at[key] = ev.ts_ms
        elif key in open_at:
            work.append((open_at.pop(key), ev.ts_ms, ev.bytes))
    if work:
        out.append(PhaseSpan(Phase.MERGE.value, Lane.BACKGROUND, min(w[0] for w in work), max(w[1] for w in work),
                             sum(w[1] - w[0] for w in work), _sum([w[2] for w in work]), None))
    return sorted(out, key=lambda p: (p.lane != Lane.MAIN, p.start_ms))
