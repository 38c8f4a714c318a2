"""Task logs of Hadoop versions other than 3.x: 1.x child logs, 2.0.x containers, and spill numbering.

The 1.x and 2.0.x logs are written here line by line from the format strings of
Hadoop's own sources (1.2.1 ``MapTask``/``ReduceTask``/``Task``; the 2.0-era
``MergeManager``/``ShuffleScheduler``/``Fetcher``), since no real ones ship with
the fixtures; the one-record spill is a real TeraSort map container's log with
the line ``MapOutputBuffer.collect`` prints before ``spillSingleRecord`` put in.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reader_checks import table

from ingest.base import ReadContext, Row
from ingest.tasklog import read_task_log
from tests.ingest.tasklog_helpers import _container_files

MAP_1X = "attempt_201305020900_0001_m_000000_0"
REDUCE_1X = "attempt_201305020900_0001_r_000000_0"
REDUCE_20 = "attempt_1350000000000_0001_r_000000_0"
MAP_CONTAINER = "container_1756057717712_0002_01_000002"


def _ms(clock: str) -> int:
    """Milliseconds of ``HH:MM:SS,mmm`` on 2013-05-02 (UTC), the day of the 1.x logs below."""
    h, m, rest = clock.split(":")
    s, ms = rest.split(",")
    return 1367452800000 + ((int(h) * 60 + int(m)) * 60 + int(s)) * 1000 + int(ms)


def _read(path: Path) -> tuple[list[Row], ReadContext]:
    ctx = ReadContext(path)
    return list(read_task_log(path, ctx)), ctx


def _phases(rows: list[Row], lane: str = "main") -> list[tuple[Any, ...]]:
    return [(p["phase"], p["start_ms"], p["end_ms"], p["dur_ms"], p["data_bytes"], p["data_records"])
            for p in table(rows, "attempt_phases") if p["lane"] == lane]


def _write_1x(tmp_path: Path, attempt: str, lines: list[str]) -> Path:
    """A 1.x child log (``userlogs/<job>/<attempt>/syslog``): ``date level class: message``, no thread."""
    where = tmp_path / attempt
    where.mkdir()
    path = where / "syslog"
    path.write_text("".join(f"2013-05-02 {line}\n" for line in lines))
    return path


MAP_1X_LOG = [
    "10:00:00,050 INFO org.apache.hadoop.util.NativeCodeLoader: Loaded the native-hadoop library",
    "10:00:00,100 INFO org.apache.hadoop.mapred.MapTask: Processing split: hdfs://nn:8020/in/part-0:0+134217728",
    "10:00:00,110 INFO org.apache.hadoop.mapred.MapTask: numReduceTasks: 1",
    "10:00:00,120 INFO org.apache.hadoop.mapred.MapTask: io.sort.mb = 100",
    "10:00:00,300 INFO org.apache.hadoop.mapred.MapTask: data buffer = 79691776/99614720",
    "10:00:00,300 INFO org.apache.hadoop.mapred.MapTask: record buffer = 262144/327680",
    "10:00:05,000 INFO org.apache.hadoop.mapred.MapTask: Spilling map output: record full = true",
    "10:00:05,000 INFO org.apache.hadoop.mapred.MapTask: bufstart = 0; bufend = 26214400; bufvoid = 99614720",
    "10:00:05,000 INFO org.apache.hadoop.mapred.MapTask: kvstart = 0; kvend = 262144; length = 327680",
    "10:00:06,500 INFO org.apache.hadoop.mapred.MapTask: Finished spill 0",
    "10:00:10,000 INFO org.apache.hadoop.mapred.MapTask: Spilling map output: buffer full= true",
    "10:00:10,000 INFO org.apache.hadoop.mapred.MapTask: bufstart = 26214400; bufend = 6291456; bufvoid = 99614720",
    "10:00:10,000 INFO org.apache.hadoop.mapred.MapTask: kvstart = 262144; kvend = 196608; length = 327680",
    "10:00:12,000 INFO org.apache.hadoop.mapred.MapTask: Finished spill 1",
    "10:00:14,000 INFO org.apache.hadoop.mapred.MapTask: Starting flush of map output",
    "10:00:15,000 INFO org.apache.hadoop.mapred.MapTask: Finished spill 2",
    "10:00:15,100 INFO org.apache.hadoop.mapred.Merger: Merging 3 sorted segments",
    "10:00:15,100 INFO org.apache.hadoop.mapred.Merger: Down to the last merge-pass, with 3 segments left of "
    "total size: 140000000 bytes",
    f"10:00:17,000 INFO org.apache.hadoop.mapred.Task: Task:{MAP_1X} is done. And is in the process of commiting",
    f"10:00:17,100 INFO org.apache.hadoop.mapred.Task: Task '{MAP_1X}' done.",
]


def test_a_1x_map_gets_its_spills_merge_and_commit(tmp_path: Path) -> None:
    # 1.x logs 'Spilling map output: record full = true' / 'buffer full= true', its kvstart/kvend are
    # record indexes into a ring of `length` records, its flush spills on the task thread without a
    # start line, and Task.done says 'commiting': none of it had matched, the map had no spill at all
    rows, _ = _read(_write_1x(tmp_path, MAP_1X, MAP_1X_LOG))
    kinds = [e["kind"] for e in table(rows, "attempt_events")]
    assert kinds.count("spill_start") == 2
    assert kinds.count("spill_records") == 2
    # the events' records too: kvend - kvstart, wrapping round the ring of `length` slots
    assert [e["records"] for e in table(rows, "attempt_events") if e["kind"] == "spill_records"] == [
        262144, 327680 + 196608 - 262144
    ]
    assert kinds.count("commit_pending") == 1
    assert _phases(rows) == [
        ("setup", _ms("10:00:00,050"), _ms("10:00:00,100"), 50, None, None),
        ("read+map+collect", _ms("10:00:00,100"), _ms("10:00:14,000"), 13900, 134217728, None),
        ("spill", _ms("10:00:14,000"), _ms("10:00:15,000"), 1000, None, None),  # the flush's spill 2
        ("merge", _ms("10:00:15,000"), _ms("10:00:17,000"), 2000, 140000000, None),
        ("commit", _ms("10:00:17,000"), _ms("10:00:17,100"), 100, None, None),
        ("other", _ms("10:00:17,100"), _ms("10:00:17,100"), 0, None, None),
    ]
    # spills 0 and 1, by the spill thread: 1.5 s + 2 s; 26214400 + (6291456 - 26214400) mod 99614720
    # bytes; 262144 + (327680 + 196608 - 262144) records
    assert _phases(rows, "background") == [
        ("spill", _ms("10:00:05,000"), _ms("10:00:12,000"), 3500, 105906176, 524288),
    ]


REDUCE_1X_LOG = [
    "10:00:18,000 INFO org.apache.hadoop.util.NativeCodeLoader: Loaded the native-hadoop library",
    "10:00:19,000 INFO org.apache.hadoop.mapred.ReduceTask: ShuffleRamManager: MemoryLimit=130652568, "
    "MaxSingleShuffleLimit=32663142",
    f"10:00:20,000 INFO org.apache.hadoop.mapred.ReduceTask: {REDUCE_1X} Thread started: Thread for merging "
    "on-disk files",
    f"10:00:20,000 INFO org.apache.hadoop.mapred.ReduceTask: {REDUCE_1X} Thread waiting: Thread for merging "
    "on-disk files",
    f"10:00:20,001 INFO org.apache.hadoop.mapred.ReduceTask: {REDUCE_1X} Thread started: Thread for merging in "
    "memory files",
    f"10:00:20,002 INFO org.apache.hadoop.mapred.ReduceTask: {REDUCE_1X} Need another 3 map output(s) where 0 is "
    "already in progress",
    f"10:00:20,003 INFO org.apache.hadoop.mapred.ReduceTask: {REDUCE_1X} Thread started: Thread for polling Map "
    "Completion Events",
    f"10:00:20,004 INFO org.apache.hadoop.mapred.ReduceTask: {REDUCE_1X} Scheduled 0 outputs (0 slow hosts and0 "
    "dup hosts)",
    f"10:00:25,010 INFO org.apache.hadoop.mapred.ReduceTask: {REDUCE_1X} Scheduled 2 outputs (0 slow hosts and0 "
    "dup hosts)",
    "10:00:27,000 INFO org.apache.hadoop.mapred.ReduceTask: Read 40000000 bytes from map-output for "
    "attempt_201305020900_0001_m_000001_0",
    "10:00:27,500 INFO org.apache.hadoop.mapred.ReduceTask: Initiating in-memory merge with 2 segments...",
    f"10:00:28,500 INFO org.apache.hadoop.mapred.ReduceTask: {REDUCE_1X} Merge of the 2 files in-memory complete. "
    f"Local file is /data/mapred/local/taskTracker/jobcache/job_201305020900_0001/{REDUCE_1X}/output/"
    "map_0.out of size 3000000",
    f"10:00:30,010 INFO org.apache.hadoop.mapred.ReduceTask: {REDUCE_1X} Scheduled 1 outputs (0 slow hosts and0 "
    "dup hosts)",
    "10:00:40,000 INFO org.apache.hadoop.mapred.ReduceTask: GetMapEventsThread exiting",
    "10:00:40,001 INFO org.apache.hadoop.mapred.ReduceTask: getMapsEventsThread joined.",
    "10:00:40,001 INFO org.apache.hadoop.mapred.ReduceTask: Closed ram manager",
    "10:00:40,002 INFO org.apache.hadoop.mapred.ReduceTask: Interleaved on-disk merge complete: 2 files left.",
    "10:00:40,003 INFO org.apache.hadoop.mapred.ReduceTask: In-memory merge complete: 1 files left.",
    "10:00:41,000 INFO org.apache.hadoop.mapred.ReduceTask: Merged 1 segments, 1000000 bytes to disk to satisfy "
    "reduce memory limit",
    "10:00:41,001 INFO org.apache.hadoop.mapred.ReduceTask: Merging 3 files, 44000000 bytes from disk",
    "10:00:41,002 INFO org.apache.hadoop.mapred.ReduceTask: Merging 0 segments, 0 bytes from memory into reduce",
    "10:00:41,003 INFO org.apache.hadoop.mapred.Merger: Merging 3 sorted segments",
    "10:00:41,004 INFO org.apache.hadoop.mapred.Merger: Down to the last merge-pass, with 3 segments left of total "
    "size: 43990000 bytes",
    f"10:00:50,000 INFO org.apache.hadoop.mapred.Task: Task:{REDUCE_1X} is done. And is in the process of commiting",
    f"10:00:50,100 INFO org.apache.hadoop.mapred.Task: Task {REDUCE_1X} is allowed to commit now",
    f"10:00:50,200 INFO org.apache.hadoop.mapred.FileOutputCommitter: Saved output of task '{REDUCE_1X}' to "
    "hdfs://nn:8020/out",
    f"10:00:50,300 INFO org.apache.hadoop.mapred.Task: Task '{REDUCE_1X}' done.",
]


def test_a_1x_reduce_gets_shuffle_sort_and_reduce(tmp_path: Path) -> None:
    # 1.x has no MergeManager: ReduceTask itself logs the shuffle and merges.  The shuffle starts with the
    # first copy scheduled; the sort with the copier's last line (ReduceTask.run then sets Phase.SORT),
    # not with 'Merged ... to disk', which createKVIterator logs after that merge is done
    rows, _ = _read(_write_1x(tmp_path, REDUCE_1X, REDUCE_1X_LOG))
    (attempt,) = table(rows, "attempts")
    assert (attempt["attempt_id"], attempt["status"]) == (REDUCE_1X, "SUCCEEDED")
    assert (attempt["shuffle_finish_ms"], attempt["sort_finish_ms"]) == (_ms("10:00:40,003"), _ms("10:00:41,004"))
    assert _phases(rows) == [
        ("setup", _ms("10:00:18,000"), _ms("10:00:19,000"), 1000, None, None),
        ("wait", _ms("10:00:19,000"), _ms("10:00:25,010"), 6010, None, None),
        ("shuffle", _ms("10:00:25,010"), _ms("10:00:40,003"), 14993, None, None),
        ("sort", _ms("10:00:40,003"), _ms("10:00:41,004"), 1001, 44000000, None),
        ("reduce+write", _ms("10:00:41,004"), _ms("10:00:50,000"), 8996, None, None),
        ("commit", _ms("10:00:50,000"), _ms("10:00:50,300"), 300, None, None),
        ("other", _ms("10:00:50,300"), _ms("10:00:50,300"), 0, None, None),
    ]
    assert _phases(rows, "background") == [
        ("merge", _ms("10:00:27,500"), _ms("10:00:28,500"), 1000, 3000000, None),
    ]


REDUCE_20_LOG = [
    "10:00:00,500 INFO [main] org.apache.hadoop.mapred.Task:  Using ResourceCalculatorPlugin : "
    "org.apache.hadoop.yarn.util.LinuxResourceCalculatorPlugin@1b8a29df",
    "10:00:01,000 INFO [main] org.apache.hadoop.mapreduce.task.reduce.MergeManager: MergerManager: "
    "memoryLimit=130652568, maxSingleShuffleLimit=32663142, mergeThreshold=86230696, ioSortFactor=10, "
    "memToMemMergeOutputsThreshold=10",
    "10:00:01,010 INFO [EventFetcher for fetching Map Completion Events] "
    f"org.apache.hadoop.mapreduce.task.reduce.EventFetcher: {REDUCE_20} Thread started: EventFetcher for "
    "fetching Map Completion Events",
    "10:00:01,900 INFO [fetcher#2] org.apache.hadoop.mapreduce.task.reduce.Fetcher: fetcher#2 - MergerManager "
    "returned Status.WAIT ...",
    "10:00:02,000 INFO [fetcher#1] org.apache.hadoop.mapreduce.task.reduce.Fetcher: fetcher#1 about to shuffle "
    "output of map attempt_1350000000000_0001_m_000000_0 decomp: 2000000 len: 2000004 to MEMORY",
    "10:00:02,100 INFO [fetcher#1] org.apache.hadoop.mapreduce.task.reduce.Fetcher: Read 2000000 bytes from "
    "map-output for attempt_1350000000000_0001_m_000000_0",
    "10:00:02,101 INFO [fetcher#1] org.apache.hadoop.mapreduce.task.reduce.MergeManager: closeInMemoryFile -> "
    "map-output of size: 2000000, inMemoryMapOutputs.size() -> 1, commitMemory -> 0, usedMemory ->2000000",
    "10:00:02,102 INFO [fetcher#1] org.apache.hadoop.mapreduce.task.reduce.ShuffleScheduler: node1:8080 freed by "
    "fetcher#1 in 102s",
    "10:00:02,150 INFO [InMemoryMerger - Thread to merge in-memory shuffled map-outputs] "
    "org.apache.hadoop.mapreduce.task.reduce.MergeManager: Initiating in-memory merge with 1 segments...",
    "10:00:02,180 INFO [InMemoryMerger - Thread to merge in-memory shuffled map-outputs] "
    f"org.apache.hadoop.mapreduce.task.reduce.MergeManager: {REDUCE_20} Merge of the 1 files in-memory complete. "
    "Local file is /data/yarn/local/usercache/u/appcache/application_1350000000000_0001/output/"
    f"{REDUCE_20}/map_0.out.merged of size 1999990",
    "10:00:02,200 INFO [EventFetcher for fetching Map Completion Events] "
    "org.apache.hadoop.mapreduce.task.reduce.EventFetcher: EventFetcher is interrupted.. Returning",
    "10:00:02,300 INFO [main] org.apache.hadoop.mapreduce.task.reduce.MergeManager: finalMerge called with 0 "
    "in-memory map-outputs and 1 on-disk map-outputs",
    "10:00:03,001 INFO [main] org.apache.hadoop.mapreduce.task.reduce.MergeManager: Merging 1 files, 2000004 bytes "
    "from disk",
    "10:00:03,002 INFO [main] org.apache.hadoop.mapreduce.task.reduce.MergeManager: Merging 0 segments, 0 bytes "
    "from memory into reduce",
    "10:00:03,003 INFO [main] org.apache.hadoop.mapred.Merger: Merging 1 sorted segments",
    "10:00:03,004 INFO [main] org.apache.hadoop.mapred.Merger: Down to the last merge-pass, with 1 segments left "
    "of total size: 1999990 bytes",
    f"10:00:09,000 INFO [main] org.apache.hadoop.mapred.Task: Task:{REDUCE_20} is done. And is in the process of "
    "committing",
    f"10:00:09,100 INFO [main] org.apache.hadoop.mapred.Task: Task {REDUCE_20} is allowed to commit now",
    "10:00:09,200 INFO [main] org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter: Saved output of task "
    f"'{REDUCE_20}' to hdfs://nn:8020/out",
    f"10:00:09,300 INFO [main] org.apache.hadoop.mapred.Task: Task '{REDUCE_20}' done.",
]


def test_a_2_0_reduce_reads_merge_manager_scheduler_and_fetcher_lines(tmp_path: Path) -> None:
    # 2.0.x logs under MergeManager and ShuffleScheduler (later MergeManagerImpl/ShuffleSchedulerImpl), its
    # scheduler's 'freed by ... in Ns' prints milliseconds, its Fetcher logs the reads and 'MergerManager
    # returned Status.WAIT': the merge manager's lines had no patterns, so no wait, sort or reduce phase
    where = tmp_path / "container_1350000000000_0001_01_000005"
    where.mkdir()
    path = where / "syslog"
    path.write_text("".join(f"2013-01-10 {line}\n" for line in REDUCE_20_LOG))
    rows, _ = _read(path)
    events = table(rows, "attempt_events")
    assert [e["kind"] for e in events if e["kind"] != "other"] == [
        "merge_manager", "events_fetched", "fetch_wait", "fetch_start", "fetch_read", "fetch_close",
        "fetch_host_done", "inmem_merge_start", "inmem_merge_done", "events_fetched", "final_merge",
        "final_merge_disk", "final_merge_memory", "merge_pass", "merge_last_pass", "commit_pending",
        "commit_allowed", "commit_saved", "done",
    ]
    assert next(e for e in events if e["kind"] == "fetch_host_done")["detail"] == "fetcher=fetcher#1 host=node1:8080 ms=102"
    day = 1357776000000  # 2013-01-10 UTC

    def at(clock: str) -> int:
        return _ms(clock) - 1367452800000 + day

    # the sort begins where the event fetcher is stopped (Shuffle.run then sets Phase.SORT), before finalMerge
    assert _phases(rows) == [
        ("setup", at("10:00:00,500"), at("10:00:01,000"), 500, None, None),
        ("wait", at("10:00:01,000"), at("10:00:02,000"), 1000, None, None),
        ("shuffle", at("10:00:02,000"), at("10:00:02,200"), 200, 2000004, None),
        ("sort", at("10:00:02,200"), at("10:00:03,004"), 804, 2000004, None),
        ("reduce+write", at("10:00:03,004"), at("10:00:09,000"), 5996, None, None),
        ("commit", at("10:00:09,000"), at("10:00:09,300"), 300, None, None),
        ("other", at("10:00:09,300"), at("10:00:09,300"), 0, None, None),
    ]
    assert _phases(rows, "background") == [("merge", at("10:00:02,150"), at("10:00:02,180"), 30, 1999990, None)]


def _container_syslog(fixtures_dir: Path, container: str) -> list[str]:
    """The ``syslog`` lines of one container of the TeraSort `yarn logs` output (cut out by hand)."""
    return _container_files(fixtures_dir, container)["syslog"].splitlines()


def test_a_one_record_spill_leaves_the_later_spills_their_ends_and_sizes(fixtures_dir: Path, tmp_path: Path) -> None:
    # A record too large for the sort buffer is spilled alone (MapOutputBuffer.spillSingleRecord): it takes a
    # spill number and logs no 'Spilling map output' and no 'Finished spill'.  The flush's spill, the 2nd
    # 'Spilling map output', is spill 2; pairing the i-th start with 'Finished spill i' had left it unfinished:
    # a spill phase of 0 ms with no bytes, its time counted as merge.
    real = _container_syslog(fixtures_dir, MAP_CONTAINER)
    first = next(i for i, ln in enumerate(real) if ln.endswith("MapTask: Finished spill 0"))
    flush = next(i for i, ln in enumerate(real) if ln.endswith("MapTask: Starting flush of map output"))
    assert first < flush
    assert sum("Finished spill" in ln for ln in real) == 2
    stamp = real[flush].split(" INFO ")[0]
    one = [*real[:flush], f"{stamp} INFO [main] org.apache.hadoop.mapred.MapTask: Record too large for in-memory "
           "buffer: 90000000 bytes", *real[flush:]]
    one = [re.sub(r"MapTask: Finished spill 1$", "MapTask: Finished spill 2", ln) for ln in one]
    paths = []
    for label, lines in (("real", real), ("one", one)):
        where = tmp_path / label / MAP_CONTAINER
        where.mkdir(parents=True)
        (where / "syslog").write_text("\n".join(lines) + "\n")
        paths.append(where / "syslog")
    (rows_real, _), (rows_one, _) = _read(paths[0]), _read(paths[1])
    main_real, main_one = _phases(rows_real), _phases(rows_one)
    spill = next(p for p in main_one if p[0] == "spill")
    assert spill == next(p for p in main_real if p[0] == "spill")
    assert spill[3] > 0
    assert spill[4] is not None
    assert _phases(rows_one, "background") == _phases(rows_real, "background")
    merge_real, merge_one = (next(p for p in m if p[0] == "merge") for m in (main_real, main_one))
    assert merge_one[:5] == merge_real[:5]
    assert merge_one[5] == merge_real[5] + 1  # the merge's records count the one spilled alone


def test_the_local_fetchers_wait_line_is_a_fetch_wait() -> None:
    # Hadoop 3.5's LocalFetcher.copyMapOutput logs "fetcher#N - MergeManager returned Status.WAIT ..." (the
    # Fetcher's wording is "status WAIT"); in the bundled sample it had landed as an unknown line
    path = Path(__file__).parents[2] / "sample_traces" / "bench-8mb-sel1.8-merges" / "logs" / "job.log"
    lines = path.read_text().splitlines()
    line_no = next(i for i, ln in enumerate(lines, start=1) if ln.endswith("MergeManager returned Status.WAIT ..."))
    rows = list(read_task_log(path, ReadContext(path)))
    (event,) = [e for e in table(rows, "attempt_events") if e["line_no"] == line_no]
    assert (event["kind"], event["detail"]) == ("fetch_wait", "fetcher=fetcher#1")
    assert event["attempt_id"].endswith("_r_000000_0")
