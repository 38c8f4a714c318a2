"""LocalJobRunner's one-JVM task logs: which attempt each line belongs to (:func:`attribute_threads`).

LocalJobRunner runs every task of a job in one JVM, so most lines carry no attempt id and the
thread that wrote them decides; :mod:`ingest.tasklog` reads the attempts so found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ingest.base import ReadContext
from ingest.tasklog_patterns import (
    HELPER_NAMING_KINDS,
    REDUCE_SIDE_LOGGERS,
    AttemptLog,
    LogRecord,
    TaskEvent,
    attempt_named,
)
from phaseline.hadoop_names import TaskLogEventKind, attempt_task_type


def attribute_threads(
    records: list[LogRecord], events: list[TaskEvent], ctx: ReadContext
) -> tuple[dict[str, AttemptLog], list[int]]:
    """Attribute the lines of a LocalJobRunner log (all tasks in one JVM) to attempts.

    Returns the attempts and the indexes of job-level lines (client, job thread).

    * A task executor thread runs the attempt it announced with ``Starting task:
      <attempt>`` until ``Finishing task: <attempt>``; executor threads are
      reused, so the binding is by time on that thread (name and ``%tid``).
    * A helper thread (SpillThread, fetchers, mergers, the event fetcher) is
      created by one attempt and serves only it:

      1. it is bound to the attempt a line of its own names (the event
         fetcher's ``<attempt> Thread started``, ``<attempt> Merge of the N files
         in-memory complete``);
      2. a ``SpillThread`` whose first line is ``Finished spill N`` goes to the
         running map attempt whose spill N started and is not known finished: not
         finished by the task thread itself, and not acknowledged by the task
         thread's ``(RESET)`` line, which ``MapOutputBuffer`` logs only once the
         spill thread is done.  Every ``Finished spill`` line of the thread must fit
         so (judged by its first alone, two parallel maps' spill threads could
         swap).  When maps run in parallel that leaves, in the runs
         seen here, one candidate; if several remain, thread ids decide (they grow
         in creation order and each attempt creates its spill thread when its
         sort buffer is set up), which ``ctx.notes`` counts as a heuristic;
      3. any other helper goes to the only running attempt of the right type, or,
         with several, to the one whose already-bound helper thread ids are
         nearest (Java hands out ids in sequence, and a reduce creates its merger,
         event-fetcher and fetcher threads in one burst);
      4. when reduces run in parallel, their fetcher threads are then matched to
         them by bytes: the ``len`` of a fetcher's ``about to shuffle`` lines must
         add up, per reduce, to the ``Reduce shuffle bytes`` its final counters
         print (an exact check; without an exact match step 3's guess stays and
         ``ctx.notes`` says so).

    Lines of threads bound to no attempt are job-level.

    A log without thread ids (a layout without ``%tid``) names every attempt's
    helper threads alike (each map's ``SpillThread``, each reduce's
    ``localfetcher#1``): a helper is then known by its name and the attempts
    running at its line, so that the helpers of attempts that ran one after the
    other are never taken for one thread.  Where attempts ran in parallel such
    helpers may still be mixed up; ``ctx.notes`` says so.
    """
    attempts, job_level, helper_lines = _task_threads(records, events, ctx)
    bound = _bind_helpers(helper_lines, records, events, attempts, ctx)
    _match_fetchers_by_bytes(bound, helper_lines, records, events, attempts, ctx)
    for key, idxs in helper_lines.items():
        owner = bound.get(key)
        if owner is None:
            job_level.extend(idxs)
            continue
        for i in idxs:
            attempts[owner].records.append(records[i])
            attempts[owner].events.append(events[i])
    _sort_by_time(attempts)
    job_level.sort()
    return attempts, job_level


def _task_threads(
    records: list[LogRecord], events: list[TaskEvent], ctx: ReadContext
) -> tuple[dict[str, AttemptLog], list[int], dict[str, list[int]]]:
    """The lines of task executor threads, bound to the attempt each runs (``Starting task`` ..
    ``Finishing task``); the job-level lines; and the other lines by helper thread (its key, and
    for a log without thread ids the task starts and finishes before the line)."""
    attempts: dict[str, AttemptLog] = {}
    running: dict[str, str] = {}  # executor thread key -> attempt
    job_level: list[int] = []
    helper_lines: dict[str, list[int]] = {}
    epoch = 0  # task starts and finishes so far: which attempts run (for lines without a thread id)
    parallel_without_ids = False
    for i, (rec, ev) in enumerate(zip(records, events, strict=True)):
        key = rec.thread_key
        if ev.kind is TaskLogEventKind.TASK_START:
            attempt_id = ev.field("attempt")
            assert attempt_id is not None
            attempts.setdefault(attempt_id, AttemptLog(attempt_id, [], [], host="localhost"))
            running[key] = attempt_id
            epoch += 1
        current = running.get(key)
        if current is not None:
            attempts[current].records.append(rec)
            attempts[current].events.append(ev)
            if ev.kind is TaskLogEventKind.TASK_FINISH:
                del running[key]
                epoch += 1
        elif rec.logger.rsplit(".", 1)[-1] in ("LocalJobRunner", "Job", "JobSubmitter") or rec.thread == "main":
            job_level.append(i)
        elif rec.tid is None:
            helper_lines.setdefault(f"{key}\x00{epoch}", []).append(i)
            parallel_without_ids = parallel_without_ids or len(running) > 1
        else:
            helper_lines.setdefault(key, []).append(i)
    if parallel_without_ids:
        ctx.notes.append(
            "this LocalJobRunner log has no thread ids (add %tid to the log4j pattern) and tasks ran in "
            "parallel: helper threads of one name (SpillThread, fetchers, mergers) were told apart by the "
            "tasks running at the time, and some of their lines may be given to another attempt"
        )
    return attempts, job_level, helper_lines


def _sort_by_time(attempts: dict[str, AttemptLog]) -> None:
    """Each attempt's records and events in time order (ties in line order)."""
    for log in attempts.values():
        order = sorted(range(len(log.events)), key=lambda j: (log.events[j].ts_ms, log.events[j].line_no))
        log.records = [log.records[j] for j in order]
        log.events = [log.events[j] for j in order]


def _spans(attempts: dict[str, AttemptLog]) -> dict[str, tuple[int, int]]:
    return {a: (min(e.ts_ms for e in log.events), max(e.ts_ms for e in log.events))
            for a, log in attempts.items() if log.events}


def _pending_spill(log: AttemptLog, index: int, ts_ms: int) -> bool:
    """Whether spill ``index`` of the attempt had started by ``ts_ms`` and was not known finished before.

    Finished are spills whose ``Finished spill`` line is the task thread's own, and
    background spills the task thread acknowledged with its ``(RESET)`` line
    (``MapOutputBuffer.resetSpill``, logged once the spill thread is done) before ``ts_ms``.
    """
    starts = [e for e in log.events if e.kind is TaskLogEventKind.SPILL_START]
    if index >= len(starts) or starts[index].ts_ms > ts_ms:
        return False
    if any(e.kind is TaskLogEventKind.SPILL_FINISH and e.field("index") == str(index) for e in log.events):
        return False
    begun = starts[index].line_no
    return not any(e.kind is TaskLogEventKind.SPILL_RESET and e.line_no > begun and e.ts_ms < ts_ms for e in log.events)


def _bind_helpers(
    helper_lines: dict[str, list[int]], records: list[LogRecord], events: list[TaskEvent],
    attempts: dict[str, AttemptLog], ctx: ReadContext,
) -> dict[str, str]:
    bound: dict[str, str] = {}
    spans = _spans(attempts)
    # 1. helper lines that name their attempt
    for key, idxs in helper_lines.items():
        named = attempt_named((events[i] for i in idxs), HELPER_NAMING_KINDS)
        if named is not None and named in attempts:
            bound[key] = named
    # 2. spill threads, by the spills they finish (every one pending in the attempt when the thread
    #    finishes it; if none fits all, by the first); singletons first, then ties in thread-id order
    options: dict[str, set[str]] = {}
    for key, idxs in helper_lines.items():
        first = events[idxs[0]]
        if key in bound or records[idxs[0]].thread != "SpillThread" or first.kind is not TaskLogEventKind.SPILL_FINISH:
            continue
        finishes = [events[i] for i in idxs if events[i].kind is TaskLogEventKind.SPILL_FINISH]
        maps = [a for a in attempts if attempt_task_type(a) == "MAP"]
        fits = [{a for a in maps if spans[a][0] <= f.ts_ms <= spans[a][1]
                 and _pending_spill(attempts[a], int(f.field("index") or 0), f.ts_ms)} for f in finishes]
        options[key] = set.intersection(*fits) or fits[0]
    while options:
        taken = set(bound.values())
        for cands in options.values():
            cands -= taken
        sure = [k for k, cands in options.items() if len(cands) <= 1]
        if sure:
            for key in sure:
                cands = options.pop(key)
                if cands and not cands & set(bound.values()):
                    bound[key] = cands.pop()
            continue
        tied = next(iter(options.values()))
        keys = [k for k, cands in options.items() if cands == tied]
        by_init = sorted(tied, key=lambda a: next((e.ts_ms for e in attempts[a].events
                                                   if e.kind is TaskLogEventKind.SORT_BUFFER), spans[a][0]))
        by_tid = sorted(keys, key=lambda k: records[helper_lines[k][0]].tid or 0)
        for key, attempt_id in zip(by_tid, by_init, strict=False):
            bound[key] = attempt_id
        for key in keys:
            options.pop(key)
        ctx.notes.append(f"{len(keys)} spill threads matched to parallel map attempts by thread-id order")
    # 3. other helpers: the only running attempt of the right type, else the nearest thread ids
    anchors: dict[str, list[int]] = {}
    for key, owner in bound.items():
        tid = records[helper_lines[key][0]].tid
        if tid is not None:
            anchors.setdefault(owner, []).append(tid)
    for key, idxs in sorted(helper_lines.items(), key=lambda kv: kv[1][0]):
        if key in bound:
            continue
        head = records[idxs[0]]
        want = "REDUCE" if head.logger.rsplit(".", 1)[-1] in REDUCE_SIDE_LOGGERS else "MAP"
        if head.thread == "SpillThread":
            want = "MAP"
        t0, t1 = head.ts_ms, records[idxs[-1]].ts_ms
        choices = [a for a, (s, f) in spans.items() if attempt_task_type(a) == want and s <= t1 and t0 <= f]
        if not choices:
            continue
        if len(choices) > 1 and head.tid is not None:
            tid = head.tid
            choices.sort(key=lambda a: min((abs(tid - x) for x in anchors.get(a, [])), default=1 << 62))
            ctx.notes.append(f"thread {head.thread!r} attributed by thread-id proximity among {len(choices)} attempts")
        bound[key] = choices[0]
        if head.tid is not None:
            anchors.setdefault(choices[0], []).append(head.tid)
    return bound


_SHUFFLE_BYTES_LINE = re.compile(r"^\t\tReduce shuffle bytes=(\d+)$")
_MAX_SEARCH = 100_000


def _shuffle_bytes(log: AttemptLog) -> int | None:
    """The ``Reduce shuffle bytes`` of a reduce attempt's ``Final Counters`` block, if printed."""
    for rec, ev in zip(log.records, log.events, strict=True):
        if ev.kind is TaskLogEventKind.COUNTERS:
            for _, text in rec.extra:
                if (found := _SHUFFLE_BYTES_LINE.match(text)) is not None:
                    return int(found[1])
    return None


def _match_fetchers_by_bytes(
    bound: dict[str, str], helper_lines: dict[str, list[int]], records: list[LogRecord],
    events: list[TaskEvent], attempts: dict[str, AttemptLog], ctx: ReadContext,
) -> None:
    fetched = {key: sum(int(events[i].field("len") or 0) for i in idxs if events[i].kind is TaskLogEventKind.FETCH_START)
               for key, idxs in helper_lines.items()
               if any(events[i].kind is TaskLogEventKind.FETCH_START for i in idxs)}
    spans = _spans(attempts)
    reduces = {a for a in attempts if attempt_task_type(a) == "REDUCE"}
    options: dict[str, list[str]] = {}
    for key in fetched:
        t0, t1 = records[helper_lines[key][0]].ts_ms, records[helper_lines[key][-1]].ts_ms
        options[key] = sorted(a for a in reduces if spans[a][0] <= t1 and t0 <= spans[a][1])
    contested = [k for k, opts in options.items() if len(opts) > 1]
    if not contested:
        return
    targets = {a: _shuffle_bytes(attempts[a]) for a in reduces}
    if any(v is None for v in targets.values()):
        return
    left = {a: int(v or 0) for a, v in targets.items()}
    for key, opts in options.items():
        if len(opts) == 1:
            left[opts[0]] -= fetched[key]
    order = sorted(contested, key=lambda k: -fetched[k])
    choice: dict[str, str] = {}
    involved = {x for k in contested for x in options[k]}

    def search() -> bool:
        """Depth-first over ``order``: each fetcher to a reduce with bytes left for it, until every
        involved reduce's shuffled bytes are used up exactly (at most ``_MAX_SEARCH`` steps).  An
        explicit stack: one level per fetcher, and a JVM may run thousands of them."""
        n, budget = len(order), _MAX_SEARCH - 1
        tried = [0] * (n + 1)  # the next option to try at each depth
        i = 0
        while budget >= 0:
            if i == n:
                if all(left[a] == 0 for a in involved):
                    return True
            else:
                key, opts = order[i], options[order[i]]
                while tried[i] < len(opts) and left[opts[tried[i]]] < fetched[key]:
                    tried[i] += 1
                if tried[i] < len(opts):  # place it there, go one deeper
                    choice[key] = opts[tried[i]]
                    tried[i] += 1
                    left[choice[key]] -= fetched[key]
                    i += 1
                    tried[i] = 0
                    budget -= 1
                    continue
            if i == 0:  # nothing left to try
                return False
            i -= 1  # back up: undo this depth's placement, try its next option
            left[choice[order[i]]] += fetched[order[i]]
        return False

    if search():
        bound.update(choice)
        ctx.notes.append(f"{len(order)} fetcher threads matched to parallel reduces by shuffled bytes")
    else:
        ctx.notes.append(f"{len(order)} fetcher threads of parallel reduces attributed by thread ids only "
                         "(their bytes match no assignment exactly)")


def overlapping(logs: Iterable[AttemptLog]) -> set[str]:
    """Attempts of one JVM whose spans overlap another attempt's (their FS-derived counters are shared)."""
    spans = sorted((log.start_ms, log.finish_ms, log.attempt_id) for log in logs if log.events)
    out: set[str] = set()
    for i, (_s0, f0, a0) in enumerate(spans):
        for s1, _f1, a1 in spans[i + 1:]:
            if s1 >= f0:
                break
            out.update((a0, a1))
    return out
