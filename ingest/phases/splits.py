"""Spans log lines cannot split (``read+map+collect``, ``reduce+write``), split by the job's own
timers (:func:`timed_weights`) or by stack samples of the task thread (:func:`map_stack_phase`,
:func:`reduce_stack_phase`, :func:`split_by_samples`); :mod:`ingest.phases` says when each applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ingest.phases.spans import Lane, PhaseSpan, partition
from phaseline.schemas import Phase

MIN_SPLIT_SAMPLES = 5  # task-thread samples needed to split read+map+collect (JFR samples every 10-20 ms)
#: The microbenchmark job's own phase timers (``platform_model/engine/java/PhaseNanos.java``): counters
#: ``READ``, ``COLLECT`` and ``WRITE``, nanoseconds inside its record reader, collect and record writer.
PHASE_NANOS = "phaseline.engine.PhaseNanos"




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


def split_span(
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


def main_lane(
    start: int, finish: int, cuts: Sequence[tuple[str, int | None]], data: Mapping[str, tuple[int | None, int | None]],
    combined: str, counters: Mapping[tuple[str, str], int], samples: Mapping[Phase, int],
    parts: Mapping[Phase, tuple[int | None, int | None]], rest: Phase,
) -> list[PhaseSpan]:  # fmt: skip
    """The task thread's consecutive phases from their start marks ``cuts`` (:func:`~ingest.phases.spans.partition`),
    each with its ``data``; the span ``combined`` is split into ``parts`` (in order, with their data),
    ``rest`` taking what the timers leave (:func:`split_span`)."""
    out: list[PhaseSpan] = []
    for name, b, e in partition(start, finish, cuts):
        span = PhaseSpan(name, Lane.MAIN, b, e, e - b, *data.get(name, (None, None)))
        out.extend(split_span(span, counters, samples, parts, tuple(parts), rest) if name == combined else (span,))
    return out
