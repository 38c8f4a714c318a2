"""Helper threads of attempts that ran at once: fetchers, spill threads, and logs without thread ids."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from reader_checks import table

from ingest.base import ReadContext
from ingest.tasklog import read_task_log
from phaseline.cli import main
from tests.ingest.tasklog_helpers import _read


def _parallel_reduces_log(lens: list[int], owner: list[int]) -> str:
    """A LocalJobRunner log of two reduces running at once, their local fetchers' threads named by no
    reduce: fetcher k shuffles ``lens[k]`` bytes for reduce ``owner[k]`` (what the matching must find)."""
    head = "2026-11-21 13:23:{s:02d},{ms:03d} INFO  [{thread}] [tid:{tid}] org.apache.hadoop."
    out = [
        head.format(s=0, ms=0, thread=f"pool-1-thread-{r + 1}", tid=10 + r)
        + f"mapred.LocalJobRunner: Starting task: attempt_local1_0001_r_00000{r}_0"
        for r in (0, 1)
    ]
    for k, n in enumerate(lens):
        out.append(
            head.format(s=1 + k // 1000, ms=k % 1000, thread=f"localfetcher#{k}", tid=1000 + k)
            + f"mapreduce.task.reduce.LocalFetcher: localfetcher#{k} about to shuffle output of map "
            f"attempt_local1_0001_m_{k:06d}_0 decomp: {n} len: {n} to MEMORY"
        )
    for r in (0, 1):
        total = sum(n for n, o in zip(lens, owner, strict=True) if o == r)
        out += [
            head.format(s=59, ms=0, thread=f"pool-1-thread-{r + 1}", tid=10 + r)
            + f"mapred.Task: Final Counters for attempt_local1_0001_r_00000{r}_0: Counters: 1",
            "\tMap-Reduce Framework",
            f"\t\tReduce shuffle bytes={total}",
        ]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize(
    ("lens", "owner"),
    [
        ([100, 50, 20, 9, 3, 1], [0, 1, 0, 1, 0, 1]),  # one assignment: 100 + 20 + 3 and 50 + 9 + 1
        ([10] * 1200, [k % 2 for k in range(1200)]),  # 1,200 fetchers: a recursion 1,200 deep had overflowed
    ],
)
def test_fetchers_of_parallel_reduces_are_matched_by_bytes(
    tmp_path: Path, lens: list[int], owner: list[int]
) -> None:
    path = tmp_path / "job.log"
    path.write_text(_parallel_reduces_log(lens, owner))
    rows, ctx = _read(path)
    assert f"{len(lens)} fetcher threads matched to parallel reduces by shuffled bytes" in ctx.notes
    fetched = Counter()
    for e in table(rows, "attempt_events"):
        if e["kind"] == "fetch_start":
            fetched[e["attempt_id"]] += e["bytes"]
    for r in (0, 1):
        assert fetched[f"attempt_local1_0001_r_00000{r}_0"] == sum(
            n for n, o in zip(lens, owner, strict=True) if o == r
        )


@pytest.mark.parametrize("run", ["bench-8mb-sel1.8-merges", "bench-8mb-sel1.0", "bench-8mb-sel0.6-jfr"])
def test_every_spill_a_spill_thread_finishes_is_one_its_map_had_pending(run: str) -> None:
    # Two maps run at once in the bundled samples.  Their spill threads had been bound by their
    # first 'Finished spill' line alone: in bench-8mb-sel1.8-merges the two swapped, and one map's
    # spill 1 finished 80 ms after that map had logged its (RESET) for it (MapOutputBuffer logs
    # it only once the spill thread is done).
    path = Path(__file__).parents[2] / "sample_traces" / run / "logs" / "job.log"
    rows = list(read_task_log(path, ReadContext(path)))
    events = table(rows, "attempt_events")
    checked = 0
    for attempt in {e["attempt_id"] for e in events if "_m_" in (e["attempt_id"] or "")}:
        own = sorted((e for e in events if e["attempt_id"] == attempt), key=lambda e: e["line_no"])
        starts = [e for e in own if e["kind"] == "spill_start"]
        for fin in (e for e in own if e["kind"] == "spill_finish" and e["thread_name"] == "SpillThread"):
            k = int(fin["detail"].removeprefix("index="))
            reset = next(
                (e for e in own if e["kind"] == "spill_reset" and e["line_no"] > starts[k]["line_no"]), None
            )
            assert starts[k]["ts_ms"] <= fin["ts_ms"], (attempt, k)
            assert reset is None or fin["ts_ms"] <= reset["ts_ms"], (attempt, k, fin, reset)
            checked += 1
    assert checked


def _attribution(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]], tuple[str, ...]]:
    ctx = ReadContext(path)
    rows = list(read_task_log(path, ctx))
    events = sorted((e["attempt_id"], e["line_no"], e["kind"]) for e in table(rows, "attempt_events"))
    phases = sorted((p["attempt_id"], p["phase"], p["lane"], p["start_ms"], p["end_ms"], p["data_bytes"])
                    for p in table(rows, "attempt_phases"))  # fmt: skip
    return events, phases, tuple(ctx.notes)


@pytest.mark.parametrize(
    ("run", "parallel"), [("bench-8mb-sel1.0", False), ("bench-8mb-sel1.8-merges", True)]
)
def test_a_log_without_thread_ids_keeps_helpers_of_successive_attempts_apart(
    tmp_path: Path, run: str, parallel: bool
) -> None:
    # A LocalJobRunner layout without %tid names every attempt's helpers alike: each reduce's
    # 'localfetcher#1', each map's 'SpillThread'.  Keyed by name alone they had been one thread, bound to
    # one attempt: a 4-map, 2-reduce word count without its ids gave 42 and 38 events to its reduces
    # (40 and 40 with them).  Now attempts that ran one after the other are attributed as with the ids;
    # where attempts ran in parallel the reader says it may have mixed some up.
    src = Path(__file__).parents[2] / "sample_traces" / run / "logs" / "job.log"
    stripped = tmp_path / "job.log"
    stripped.write_text(re.sub(r" \[tid:\d+\]", "", src.read_text()))
    assert "[tid:" not in stripped.read_text()
    with_ids, without = _attribution(src), _attribution(stripped)
    assert any("no thread ids" in n for n in without[2]) == parallel
    assert not any("no thread ids" in n for n in with_ids[2])
    if not parallel:
        assert without[0] == with_ids[0]
        assert without[1] == with_ids[1]
    else:
        moved = len(set(without[0]) ^ set(with_ids[0])) // 2
        assert moved < len(with_ids[0]) // 20  # a few helper lines of two maps at once, not whole threads
        # `phaseline ingest` prints a file's notes under its line (they had reached no output at all)
        res = CliRunner().invoke(main, ["ingest", "--store", str(tmp_path / "store"), str(stripped)])
        assert res.exit_code == 0, res.output
        assert "note: this LocalJobRunner log has no thread ids" in res.stderr
