"""The phases of a map attempt from its log lines: setup, read+map+collect (or read+map+write),
spill, merge, commit, other, and the ``SpillThread``'s background spills (:func:`map_phases`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ingest.phases.spans import (
    FIF,
    READ_MAP_COLLECT,
    READ_MAP_WRITE,
    TASK,
    Lane,
    Overhead,
    PhaseSpan,
    field_int,
    first_of,
    sum_all,
    sum_known,
    thread_of,
    usable_counter,
)
from ingest.phases.splits import main_lane
from ingest.tasklog_patterns import TaskEvent
from phaseline.hadoop_names import TaskLogEventKind
from phaseline.schemas import Phase


@dataclass(frozen=True, slots=True)
class _Spill:
    index: int
    start_ms: int
    finish_ms: int | None
    on_main: bool
    bytes: int | None
    records: int | None
    single: bool = False  # one record spilled from collect, before the flush


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
    start, end, ring = field_int(ev, "kvstart"), field_int(ev, "kvend"), field_int(ev, "length")
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
            finishes.setdefault(field_int(ev, "index") or 0, ev)
    threaded = main is not None and main != (None, None)
    out = []
    for i in sorted(set(range(len(started))) | finishes.keys()):
        fin = finishes.get(i)
        if i < len(started):
            spill = started[i]
            if spill.single:
                on_main = True
            elif threaded:
                on_main = fin is not None and thread_of(fin) == main
            else:
                on_main = flush_ms is not None and spill.ts_ms >= flush_ms
            out.append(_Spill(i, spill.ts_ms, fin.ts_ms if fin else None, on_main, spill.bytes, spill.records,
                              spill.single))
            continue
        assert fin is not None
        after_flush = flush_ms is not None and fin.ts_ms >= flush_ms
        on_main = thread_of(fin) == main if threaded else after_flush
        begin = flush_ms if on_main and after_flush and flush_ms is not None else fin.ts_ms
        out.append(_Spill(i, begin, fin.ts_ms, on_main, None, None))
    return out


def map_phases(
    events: Sequence[TaskEvent], counters: Mapping[tuple[str, str], int], start: int, finish: int,
    parallel: bool, samples: Mapping[Phase, int],
) -> list[PhaseSpan]:
    split = first_of(events, TaskLogEventKind.SPLIT)
    flush = first_of(events, TaskLogEventKind.FLUSH)
    main = thread_of(split or flush or first_of(events, TaskLogEventKind.COMMIT_PENDING))
    spills = _spills(events, main, flush.ts_ms if flush is not None else None)
    pending = first_of(events, TaskLogEventKind.COMMIT_PENDING)
    done = first_of(events, TaskLogEventKind.DONE)
    collects = flush is not None or first_of(events, TaskLogEventKind.SORT_BUFFER) is not None
    input_bytes = (split.bytes if split and split.bytes is not None
                   else usable_counter(counters, FIF, "BYTES_READ", not parallel))
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
        last_pass = [e for e in events if e.kind is TaskLogEventKind.MERGE_LAST_PASS and thread_of(e) == main]
        intermediate = any(e.kind is TaskLogEventKind.MERGE_PASS and e.field("total") is not None and thread_of(e) == main
                           for e in events)  # fmt: skip
        data[READ_MAP_COLLECT] = (input_bytes, input_records)
        data[Phase.SPILL.value] = (sum_known([s.bytes for s in after_flush]), sum_known([s.records for s in after_flush]))
        if len(spills) == 1 and not last_pass:
            data[Phase.MERGE.value] = (0, 0)  # one spill file is renamed, not merged
        else:
            data[Phase.MERGE.value] = (
                _map_merge_bytes(last_pass, intermediate, counters.get((TASK, "MAP_OUTPUT_MATERIALIZED_BYTES"))),
                sum_all([s.records for s in spills]),
            )
    else:
        cuts = [(Overhead.SETUP.value, start), (READ_MAP_WRITE, split.ts_ms if split else None),
                (Overhead.COMMIT.value, pending.ts_ms if pending else None),
                (Overhead.OTHER.value, done.ts_ms if done else None)]
        data[READ_MAP_WRITE] = (input_bytes, input_records)
    out = main_lane(start, finish, cuts, data, READ_MAP_COLLECT, counters, samples, {
        Phase.READ: (input_bytes, input_records),
        Phase.MAP: (None, input_records),
        Phase.COLLECT: (counters.get((TASK, "MAP_OUTPUT_BYTES")), counters.get((TASK, "MAP_OUTPUT_RECORDS"))),
    }, Phase.MAP)  # fmt: skip
    background = [s for s in spills if not s.on_main and s.finish_ms is not None]
    if background:
        limit = flush.ts_ms if flush is not None else finish
        ends = [min(s.finish_ms or limit, limit) for s in background]
        out.append(PhaseSpan(
            Phase.SPILL.value, Lane.BACKGROUND, min(s.start_ms for s in background), max(ends),
            sum(max(0, e - s.start_ms) for s, e in zip(background, ends, strict=True)),
            sum_known([s.bytes for s in background]), sum_known([s.records for s in background]),
        ))
    return sorted(out, key=lambda p: (p.lane != Lane.MAIN, p.start_ms))


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
    logged = sum_known([e.bytes for e in last_pass])
    if last_pass and not intermediate and logged is not None and logged >= 0:
        return logged
    if materialized is not None:
        return materialized
    return logged if logged is not None and logged >= 0 else None
