"""attempt_phases' main lane partitions the attempt's span, whatever its events, samples and timers."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.phases import derive_phases
from ingest.phases.spans import Lane
from ingest.phases.splits import (
    PHASE_NANOS,
)
from phaseline.hadoop_names import TaskLogEventKind
from phaseline.schemas import Phase
from tests.ingest.phase_helpers import ev

_MARKERS = (
    TaskLogEventKind.SPLIT,
    TaskLogEventKind.SORT_BUFFER,
    TaskLogEventKind.SPILL_START,
    TaskLogEventKind.SPILL_FINISH,
    TaskLogEventKind.FLUSH,
    TaskLogEventKind.MERGE_PASS,
    TaskLogEventKind.COMMIT_PENDING,
    TaskLogEventKind.DONE,
    TaskLogEventKind.SHUFFLE_INIT,
    TaskLogEventKind.FETCH_START,
    TaskLogEventKind.FINAL_MERGE,
    TaskLogEventKind.MERGE_LAST_PASS,
    TaskLogEventKind.INMEM_MERGE_START,
    TaskLogEventKind.INMEM_MERGE_DONE,
)


@settings(max_examples=300, deadline=None)
@given(
    task_type=st.sampled_from(["MAP", "REDUCE"]),
    marks=st.lists(
        st.tuples(st.integers(0, 1000), st.sampled_from(_MARKERS), st.sampled_from(["main", "T2"])),
        max_size=25,
    ),
    start=st.integers(0, 500),
    length=st.integers(0, 1000),
    samples=st.dictionaries(
        st.sampled_from([Phase.READ, Phase.MAP, Phase.COLLECT, Phase.REDUCE, Phase.WRITE]), st.integers(0, 50)
    ),
    timers=st.dictionaries(st.sampled_from(["READ", "COLLECT", "WRITE"]), st.integers(0, 2_000_000_000)),
)
def test_main_lane_always_partitions_the_span(
    task_type: str,
    marks: list[tuple[int, TaskLogEventKind, str]],
    start: int,
    length: int,
    samples: dict[Phase, int],
    timers: dict[str, int],
) -> None:
    finish = start + length
    events = sorted(
        (ev(ts, kind, thread, index="0", len="5") for ts, kind, thread in marks),
        key=lambda e: (e.ts_ms, e.line_no),
    )
    counters = {(PHASE_NANOS, name): nanos for name, nanos in timers.items()}
    spans = derive_phases("a", task_type, events, counters, start_ms=start, finish_ms=finish, samples=samples)
    main = [p for p in spans if p.lane is Lane.MAIN]
    assert main
    assert main[0].start_ms == start
    assert main[-1].end_ms == finish
    assert all(p.dur_ms >= 0 and p.dur_ms == p.end_ms - p.start_ms for p in main)
    assert all(a.end_ms == b.start_ms for a, b in itertools.pairwise(main))
    assert all(p.dur_ms >= 0 for p in spans)
    # timed parts: their microseconds are the timers', and the rest gets what is left of the span (if any)
    timed = [p for p in spans if p.dur_us is not None]
    assert all(p.dur_us is not None and p.dur_us >= 0 for p in timed)
    for p in timed:
        nanos = timers.get(p.phase.upper())
        if nanos is not None:
            assert p.dur_us == round(nanos / 1000)
    if timed and all(p.phase.upper() in timers or p.dur_us > 0 for p in timed):
        span_us = 1000 * sum(p.dur_ms for p in timed)
        assert abs(sum(p.dur_us for p in timed) - span_us) <= len(timed)
