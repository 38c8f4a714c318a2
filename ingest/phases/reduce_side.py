"""The phases of a reduce attempt from its log lines: setup, wait, shuffle, sort, reduce+write,
commit, other, and the merges its merger threads run while it shuffles (:func:`reduce_phases`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ingest.phases.spans import (
    FOF,
    REDUCE_WRITE,
    TASK,
    Lane,
    Overhead,
    PhaseSpan,
    field_int,
    first_of,
    sum_known,
    thread_of,
    usable_counter,
)
from ingest.phases.splits import main_lane
from ingest.tasklog_patterns import TaskEvent
from phaseline.hadoop_names import TaskLogEventKind
from phaseline.schemas import Phase

#: A reduce's fetched bytes (``len``) below this share of their uncompressed ``decomp``: map output
#: was compressed (uncompressed, ``len`` is ``decomp`` plus IFile's 4-byte checksum).
COMPRESSED_BELOW = 0.99


def _sort_bytes(events: Sequence[TaskEvent], fetches: Sequence[TaskEvent]) -> int | None:
    """The data of a reduce's final merge: its bytes from disk and from memory.

    Hadoop logs the files on disk by their length there and the segments in memory by their
    records' bytes; with map output compression the first are compressed and the second not.
    Where the fetches say so (their ``len``, the bytes fetched, below their ``decomp``), the
    bytes from memory are counted at the fetches' ratio, in the unit of the disk's and of the
    shuffle's bytes.
    """
    disk = sum_known([e.bytes for e in events if e.kind is TaskLogEventKind.FINAL_MERGE_DISK])
    memory = sum_known([e.bytes for e in events if e.kind is TaskLogEventKind.FINAL_MERGE_MEMORY])
    raw = sum_known([e.bytes for e in fetches])
    fetched = sum_known([field_int(e, "len") for e in fetches])
    if memory and raw and fetched is not None and fetched < COMPRESSED_BELOW * raw:
        memory = round(memory * fetched / raw)
    return sum_known([disk, memory])


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


def reduce_phases(
    events: Sequence[TaskEvent], counters: Mapping[tuple[str, str], int], start: int, finish: int,
    parallel: bool, samples: Mapping[Phase, int],
) -> list[PhaseSpan]:
    init = first_of(events, TaskLogEventKind.SHUFFLE_INIT) or first_of(events, TaskLogEventKind.MERGE_MANAGER)
    fetches = [e for e in events if e.kind is TaskLogEventKind.FETCH_START]
    fetched_at = fetches[0].ts_ms if fetches else next(  # 1.x: the first copy scheduled
        (e.ts_ms for e in events if e.kind is TaskLogEventKind.FETCH_SCHEDULED and (field_int(e, "outputs") or 0) > 0),
        None)
    final = first_of(events, TaskLogEventKind.FINAL_MERGE)
    pending = first_of(events, TaskLogEventKind.COMMIT_PENDING)
    done = first_of(events, TaskLogEventKind.DONE)
    main = thread_of(final or init or pending)
    reduce_at: int | None = None
    if final is not None:
        limit = pending.ts_ms if pending else finish
        merges = [e for e in events if e.kind in _MERGE_KINDS and thread_of(e) == main
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
        shuffle_bytes = sum_known([field_int(e, "len") or 0 for e in fetches])
    data = {
        Phase.SHUFFLE.value: (shuffle_bytes, counters.get((TASK, "REDUCE_INPUT_RECORDS"))),
        Phase.SORT.value: (final_bytes, counters.get((TASK, "REDUCE_INPUT_RECORDS"))),
        REDUCE_WRITE: (usable_counter(counters, FOF, "BYTES_WRITTEN", not parallel),
                       counters.get((TASK, "REDUCE_OUTPUT_RECORDS"))),
    }
    out = main_lane(start, finish, cuts, data, REDUCE_WRITE, counters, samples, {
        Phase.REDUCE: (None, counters.get((TASK, "REDUCE_INPUT_RECORDS"))),
        Phase.WRITE: data[REDUCE_WRITE],
    }, Phase.REDUCE)  # fmt: skip
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
                             sum(w[1] - w[0] for w in work), sum_known([w[2] for w in work]), None))
    return sorted(out, key=lambda p: (p.lane != Lane.MAIN, p.start_ms))
