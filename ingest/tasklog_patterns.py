"""The MapTask/ReduceTask/Merger/Fetcher/Task log messages phaseline reads, in one table.

Each :class:`LinePattern` names one message of Hadoop's task-side code, the
event kind it marks, the logger class that writes it, a regular expression over
the message text (after the ``date level [thread] class:`` prefix), and the
Hadoop versions it was seen in:

* ``3.4.1``: the ``yarn logs`` output of three real Hadoop 3.4.1 jobs
  (``fixtures/splitlog-yarn-logs``);
* ``3.5.0``: LocalJobRunner runs made on this machine with the Hadoop client
  jars of the ``pyspark`` wheel;
* ``2.x``: message text checked against Hadoop 2.6/2.7 ``MapTask.java``,
  ``MergeManagerImpl.java``, ``Fetcher.java`` and ``Merger.java``;
* ``2.0.x``: message text checked against the 2.0-era ``MergeManager.java``,
  ``ShuffleScheduler.java`` and ``Fetcher.java`` of apache/hadoop, whose merge
  manager and shuffle scheduler log under ``MergeManager`` and
  ``ShuffleScheduler``: :func:`patterns_for` gives those loggers the patterns
  of the later ``MergeManagerImpl`` and ``ShuffleSchedulerImpl``
  (:data:`LOGGER_ALIASES`);
* ``1.x``: message text checked against Hadoop 1.2.1 ``MapTask.java``,
  ``ReduceTask.java`` and ``Task.java`` and 1.0 ``Merger.java`` (the 1.x reduce has
  no merge manager: its copier, merge threads and final merge all log under
  ``ReduceTask``; 1.x child logs print no thread).

Named groups of a pattern become columns of ``attempt_events``: ``bytes``,
``records``, ``segments``, ``attempt`` (an attempt id the line names) and
``index`` (a spill number); other groups go into ``detail``.

Counter display names of the ``Final Counters for ...`` blocks map to Hadoop's
internal group and counter names in :mod:`ingest.tasklog_counters`, the names
``.jhist`` files use, so counters from logs and from histories join.

The module also holds the vocabulary the task-log readers share (so that
:mod:`ingest.tasklog`, :mod:`ingest.runner_threads` and :mod:`ingest.phases` do not
import each other in a circle): :class:`LogRecord` (one log4j record),
:class:`TaskEvent` (a classified line) and :class:`AttemptLog` (one attempt's
lines).  The kinds of lines (:class:`~phaseline.hadoop_names.TaskLogEventKind`), counter
group names and attempt-id helpers are in :mod:`phaseline.hadoop_names`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from phaseline.hadoop_names import (
    TaskLogEventKind,
)


@dataclass(frozen=True, slots=True)
class LinePattern:
    """One known log message: its kind, the logger that writes it, and where it was seen."""

    name: str
    kind: TaskLogEventKind
    logger: str  # simple class name of the logger (last component of %c)
    regex: re.Pattern[str]
    versions: tuple[str, ...]


def _p(name: str, kind: TaskLogEventKind, logger: str, regex: str, *versions: str) -> LinePattern:
    return LinePattern(name, kind, logger, re.compile(regex), versions)


_A = r"(?P<attempt>attempt_[A-Za-z0-9]+_\d+_[mr]_\d+_\d+)"
_N = r"\d+"
_ALL = ("2.x", "3.4.1", "3.5.0")
_YARN = ("2.x", "3.4.1")
_LJR = ("3.5.0",)
_V1 = ("1.x",)
_V20 = ("2.0.x",)

# Message texts several loggers print (each once per logger in the table below).
_READ = r"^Read (?P<bytes>\d+) bytes from map-output for (?P<map_attempt>attempt_\S+)$"
_INMEM_START = r"^Initiating in-memory merge with (?P<segments>\d+) segments\.\.\.$"
_INMEM_DONE = (rf"^{_A} Merge of the (?P<segments>\d+) files in-memory complete\. Local file is (?P<path>\S+) "
               r"of size (?P<bytes>\d+)$")
_ONDISK_DONE = (rf"^{_A} Finished merging (?P<segments>\d+) map output files on disk of total-size (?P<total>\d+)\. "
                r"Local output file is (?P<path>\S+) of size (?P<bytes>\d+)$")
_FINAL_SPILL = r"^Merged (?P<segments>\d+) segments, (?P<bytes>\d+) bytes to disk to satisfy reduce memory limit$"
_FINAL_KEEP = r"^Keeping (?P<segments>\d+) segments, (?P<bytes>\d+) bytes in memory for intermediate, on-disk merge$"
_FINAL_DISK = r"^Merging (?P<segments>\d+) files, (?P<bytes>\d+) bytes from disk$"
_FINAL_MEMORY = r"^Merging (?P<segments>\d+) segments, (?P<bytes>\d+) bytes from memory into reduce$"

# The table.  Order matters only among patterns of the same logger (first match wins).
PATTERNS: tuple[LinePattern, ...] = (
    # --- LocalJobRunner (one JVM runs every task) ---------------------------------------
    _p("ljr_starting_task", TaskLogEventKind.TASK_START, "LocalJobRunner", rf"^Starting task: {_A}$", *_LJR),
    _p("ljr_finishing_task", TaskLogEventKind.TASK_FINISH, "LocalJobRunner", rf"^Finishing task: {_A}$", *_LJR),
    _p("ljr_status", TaskLogEventKind.STATUS, "LocalJobRunner",
       r"^(?P<state>map|map > sort|reduce > (?:copy|sort|reduce)|\d+ / \d+ copied\.|)\s*$", *_LJR),
    # --- map side: MapTask and its MapOutputBuffer -----------------------------------
    # a CombineFileSplit (CombineTextInputFormat, Hive's combined input): "Paths:" then path:offset+length
    # of each file, comma separated, maybe " Locations:..." after; its bytes are their sum (tasklog_lines)
    _p("combined_split", TaskLogEventKind.SPLIT, "MapTask",
       r"^Processing split: (?P<split>Paths:.*?)(?: Locations:.*)?$", *_ALL),
    _p("split", TaskLogEventKind.SPLIT, "MapTask",
       r"^Processing split: (?P<split>.*?)(?::(?P<offset>\d+)\+(?P<bytes>\d+))?$", *_ALL),
    _p("sort_mb", TaskLogEventKind.SORT_BUFFER, "MapTask", r"^mapreduce\.task\.io\.sort\.mb: (?P<io_sort_mb>\d+)$", *_ALL),
    _p("soft_limit", TaskLogEventKind.SORT_BUFFER, "MapTask", r"^soft limit at (?P<bytes>\d+)$", *_ALL),
    _p("buffer_init", TaskLogEventKind.SORT_BUFFER, "MapTask", r"^bufstart = (?P<bufstart>\d+); bufvoid = (?P<bytes>\d+)$", *_ALL),
    _p("kv_init", TaskLogEventKind.SORT_BUFFER, "MapTask", r"^kvstart = (?P<kvstart>\d+); length = (?P<records>\d+)$", *_ALL),
    _p("equator", TaskLogEventKind.SORT_BUFFER, "MapTask", rf"^\(EQUATOR\) (?P<equator>{_N}) kvi {_N}\({_N}\)$", *_ALL),
    _p("collector", TaskLogEventKind.SORT_BUFFER, "MapTask", r"^Map output collector class = (?P<collector>\S+)$", *_ALL),
    # 1.x MapOutputBuffer(): "io.sort.mb = " + sortmb, "data buffer = " + softBufferLimit + "/" + kvbuffer.length,
    # "record buffer = " + softRecordLimit + "/" + kvoffsets.length
    _p("sort_mb_v1", TaskLogEventKind.SORT_BUFFER, "MapTask", r"^io\.sort\.mb = (?P<io_sort_mb>\d+)$", *_V1),
    _p("data_buffer_v1", TaskLogEventKind.SORT_BUFFER, "MapTask", r"^data buffer = (?P<soft_limit>\d+)/(?P<bytes>\d+)$", *_V1),
    _p("record_buffer_v1", TaskLogEventKind.SORT_BUFFER, "MapTask",
       r"^record buffer = (?P<soft_records>\d+)/(?P<records>\d+)$", *_V1),
    _p("spill_start", TaskLogEventKind.SPILL_START, "MapTask", r"^(?:Sorting & )?Spilling map output$", *_ALL),
    # 1.x MapOutputBuffer.collect: "Spilling map output: record full = " + kvsoftlimit; Buffer.write:
    # "Spilling map output: buffer full= " + bufsoftlimit (each then calls startSpill)
    _p("spill_start_v1", TaskLogEventKind.SPILL_START, "MapTask",
       r"^Spilling map output: (?:record full = |buffer full= )(?:true|false)$", *_V1),
    # MapOutputBuffer.collect (1.x to 3.x): "Record too large for in-memory buffer: " + e.getMessage(), the
    # MapBufferTooSmallException(size + " bytes") of Buffer.write; spillSingleRecord then writes spill
    # number numSpills (++numSpills) on the task thread and logs no "Finished spill": a spill of one record
    _p("spill_single_record", TaskLogEventKind.SPILL_START, "MapTask",
       r"^Record too large for in-memory buffer: (?P<bytes>\d+) bytes$", *_V1, *_ALL),
    _p("spill_bytes", TaskLogEventKind.SPILL_BYTES, "MapTask",
       r"^bufstart = (?P<bufstart>\d+); bufend = (?P<bufend>\d+); bufvoid = (?P<bufvoid>\d+)$", *_V1, *_ALL),
    _p("spill_records", TaskLogEventKind.SPILL_RECORDS, "MapTask",
       rf"^kvstart = {_N}\({_N}\); kvend = {_N}\({_N}\); length = (?P<length>\d+)/(?P<max_records>\d+)$", *_ALL),
    # 1.x MapOutputBuffer.startSpill: "kvstart = " + kvstart + "; kvend = " + kvindex + "; length = " +
    # kvoffsets.length: record indexes into a ring of `length` records, so ingest.phases counts the spill's
    # records as sortAndSpill does ((kvend > kvstart ? kvend : length + kvend) - kvstart), not from `length`
    _p("spill_records_v1", TaskLogEventKind.SPILL_RECORDS, "MapTask",
       r"^kvstart = (?P<kvstart>\d+); kvend = (?P<kvend>\d+); length = (?P<length>\d+)$", *_V1),
    _p("spill_reset", TaskLogEventKind.SPILL_RESET, "MapTask", r"^\(RESET\) equator \d+ kv \d+\(\d+\) kvi \d+\(\d+\)$", *_ALL),
    _p("spill_finish", TaskLogEventKind.SPILL_FINISH, "MapTask", r"^Finished spill (?P<index>\d+)$", *_V1, *_ALL),
    _p("flush", TaskLogEventKind.FLUSH, "MapTask", r"^Starting flush of map output$", *_V1, *_ALL),
    # --- Merger (map-side merge, reduce-side merges) ----------------------------------
    _p("merge_sorted", TaskLogEventKind.MERGE_PASS, "Merger", r"^Merging (?P<segments>\d+) sorted segments$", *_V1, *_ALL),
    _p("merge_intermediate", TaskLogEventKind.MERGE_PASS, "Merger",
       r"^Merging (?P<segments>\d+) intermediate segments out of a total of (?P<total>\d+)$", *_V1, *_YARN),
    _p("merge_last_pass", TaskLogEventKind.MERGE_LAST_PASS, "Merger",
       r"^Down to the last merge-pass, with (?P<segments>\d+) segments left of total size: (?P<bytes>-?\d+) bytes$",
       *_V1, *_ALL),
    # --- reduce side: shuffle ----------------------------------------------------------
    _p("shuffle_plugin", TaskLogEventKind.SHUFFLE_INIT, "ReduceTask", r"^Using ShuffleConsumerPlugin: (?P<plugin>\S+)$", *_ALL),
    _p("merge_manager", TaskLogEventKind.MERGE_MANAGER, "MergeManagerImpl",
       r"^MergerManager: memoryLimit=(?P<bytes>\d+), maxSingleShuffleLimit=(?P<max_single>\d+), "
       r"mergeThreshold=(?P<merge_threshold>\d+), ioSortFactor=(?P<io_sort_factor>\d+), "
       r"memToMemMergeOutputsThreshold=(?P<mem2mem_threshold>\d+)$", *_V20, *_ALL),
    _p("event_fetcher_start", TaskLogEventKind.EVENTS_FETCHED, "EventFetcher", rf"^{_A} Thread started: .*$", *_ALL),
    _p("events_got", TaskLogEventKind.EVENTS_FETCHED, "EventFetcher", rf"^{_A}: Got (?P<records>\d+) new map-outputs$", *_ALL),
    _p("event_fetcher_stop", TaskLogEventKind.EVENTS_FETCHED, "EventFetcher", r"^EventFetcher is interrupted\.\. Returning$", *_ALL),
    _p("fetch_start", TaskLogEventKind.FETCH_START, "Fetcher",
       r"^(?P<fetcher>\S+) about to shuffle output of map (?P<map_attempt>attempt_\S+) "
       r"decomp: (?P<bytes>\d+) len: (?P<len>\d+) to (?P<target>MEMORY|DISK)$", *_V20, *_YARN),
    _p("local_fetch_start", TaskLogEventKind.FETCH_START, "LocalFetcher",
       r"^(?P<fetcher>\S+) about to shuffle output of map (?P<map_attempt>attempt_\S+) "
       r"decomp: (?P<bytes>\d+) len: (?P<len>\d+) to (?P<target>MEMORY|DISK)$", *_LJR),
    _p("fetch_wait", TaskLogEventKind.FETCH_WAIT, "Fetcher", r"^(?P<fetcher>\S+) - MergeManager returned status WAIT \.\.\.$", *_YARN),
    # 2.0.x Fetcher.copyMapOutput: "fetcher#" + id + " - MergerManager returned Status.WAIT ..."
    _p("fetch_wait_v20", TaskLogEventKind.FETCH_WAIT, "Fetcher",
       r"^(?P<fetcher>\S+) - MergerManager returned Status\.WAIT \.\.\.$", *_V20),
    # LocalFetcher.copyMapOutput: "fetcher#" + id + " - MergeManager returned Status.WAIT ..."
    _p("local_fetch_wait", TaskLogEventKind.FETCH_WAIT, "LocalFetcher",
       r"^(?P<fetcher>\S+) - MergeManager returned Status\.WAIT \.\.\.$", *_LJR),
    _p("read_memory", TaskLogEventKind.FETCH_READ, "InMemoryMapOutput", _READ, *_ALL),
    _p("read_disk", TaskLogEventKind.FETCH_READ, "OnDiskMapOutput", _READ, "2.x"),
    # 2.0.x Fetcher.shuffleToMemory/shuffleToDisk: "Read " + n + " bytes from map-output for " + mapId
    _p("read_fetcher_v20", TaskLogEventKind.FETCH_READ, "Fetcher", _READ, *_V20),
    _p("close_in_memory", TaskLogEventKind.FETCH_CLOSE, "MergeManagerImpl",
       r"^closeInMemoryFile -> map-output of size: (?P<bytes>\d+), inMemoryMapOutputs\.size\(\) -> (?P<segments>\d+)"
       r", commitMemory -> (?P<commit_memory>\d+), usedMemory ->\s*(?P<used_memory>\d+)$", *_V20, *_ALL),
    # ShuffleSchedulerImpl.freeHost: host + " freed by " + thread + " in " + ms + "ms"; 2.0.x
    # ShuffleScheduler.freeHost printed the same milliseconds followed by "s"
    _p("host_freed", TaskLogEventKind.FETCH_HOST_DONE, "ShuffleSchedulerImpl",
       r"^(?P<host>\S+) freed by (?P<fetcher>\S+) in (?P<ms>\d+)m?s$", *_V20, *_YARN),
    # --- reduce side: merges while shuffling --------------------------------------------
    _p("inmem_trigger", TaskLogEventKind.INMEM_MERGE_TRIGGER, "MergeManagerImpl",
       r"^Starting inMemoryMerger's merge since commitMemory=(?P<bytes>\d+) > mergeThreshold=\d+\. "
       r"Current usedMemory=\d+$", *_V20, *_YARN),
    _p("merge_thread_start", TaskLogEventKind.INMEM_MERGE_TRIGGER, "MergeThread",
       r"^(?P<merger>.+?): Starting merge with (?P<segments>\d+) segments, while ignoring (?P<ignored>\d+) segments$",
       *_YARN),
    _p("inmem_start", TaskLogEventKind.INMEM_MERGE_START, "MergeManagerImpl", _INMEM_START, *_V20, *_YARN),
    _p("inmem_done", TaskLogEventKind.INMEM_MERGE_DONE, "MergeManagerImpl", _INMEM_DONE, *_V20, *_YARN),
    _p("mem2mem_start", TaskLogEventKind.MEM2MEM_MERGE_START, "MergeManagerImpl",
       r"^Initiating Memory-to-Memory merge with (?P<segments>\d+) segments of total-size: (?P<bytes>\d+)$",
       *_V20, "2.x"),
    _p("ondisk_start", TaskLogEventKind.ONDISK_MERGE_START, "MergeManagerImpl",
       r"^OnDiskMerger: We have\s+(?P<segments>\d+) map outputs on disk\. Triggering merge\.\.\.$", *_V20, "2.x"),
    _p("ondisk_done", TaskLogEventKind.ONDISK_MERGE_DONE, "MergeManagerImpl", _ONDISK_DONE, *_V20, "2.x"),
    # --- reduce side: final merge ---------------------------------------------------------
    _p("final_merge", TaskLogEventKind.FINAL_MERGE, "MergeManagerImpl",
       r"^finalMerge called with (?P<segments>\d+) in-memory map-outputs and (?P<on_disk>\d+) on-disk map-outputs$",
       *_V20, *_ALL),
    _p("final_merge_spill", TaskLogEventKind.FINAL_MERGE_SPILL, "MergeManagerImpl", _FINAL_SPILL, *_V20, *_ALL),
    _p("final_merge_keep", TaskLogEventKind.FINAL_MERGE_KEEP, "MergeManagerImpl", _FINAL_KEEP, *_V20, "2.x"),
    _p("final_merge_disk", TaskLogEventKind.FINAL_MERGE_DISK, "MergeManagerImpl", _FINAL_DISK, *_V20, *_ALL),
    _p("final_merge_memory", TaskLogEventKind.FINAL_MERGE_MEMORY, "MergeManagerImpl", _FINAL_MEMORY, *_V20, *_ALL),
    # --- 1.x reduce side: ReduceTask.ReduceCopier and createKVIterator ----------------------
    # ShuffleRamManager(): "ShuffleRamManager: MemoryLimit=" + maxSize + ", MaxSingleShuffleLimit=" + ...
    _p("ram_manager_v1", TaskLogEventKind.MERGE_MANAGER, "ReduceTask",
       r"^ShuffleRamManager: MemoryLimit=(?P<bytes>\d+), MaxSingleShuffleLimit=(?P<max_single>\d+)$", *_V1),
    # fetchOutputs: reduceTask.getTaskID() + " Scheduled " + numScheduled + " outputs (" + penaltyBox.size() +
    # " slow hosts and" + numDups + " dup hosts)": the copier threads fetch what was scheduled at once
    _p("fetch_scheduled_v1", TaskLogEventKind.FETCH_SCHEDULED, "ReduceTask",
       rf"^{_A} Scheduled (?P<outputs>\d+) outputs \((?P<slow_hosts>\d+) slow hosts and(?P<dup_hosts>\d+) dup hosts\)$",
       *_V1),
    # MapOutputCopier.shuffleToDisk (shuffleInMemory logs its read at DEBUG only)
    _p("read_disk_v1", TaskLogEventKind.FETCH_READ, "ReduceTask", _READ, *_V1),
    # InMemFSMergeThread.doInMemMerge and LocalFSMerger.run
    _p("inmem_start_v1", TaskLogEventKind.INMEM_MERGE_START, "ReduceTask", _INMEM_START, *_V1),
    _p("inmem_done_v1", TaskLogEventKind.INMEM_MERGE_DONE, "ReduceTask", _INMEM_DONE, *_V1),
    # reduceTask.getTaskID() + "We have  " + mapOutputFilesOnDisk.size() + " map outputs on disk. " +
    # "Triggering merge of " + ioSortFactor + " files"
    _p("ondisk_start_v1", TaskLogEventKind.ONDISK_MERGE_START, "ReduceTask",
       rf"^{_A}We have\s+(?P<on_disk>\d+) map outputs on disk\. Triggering merge of (?P<segments>\d+) files$", *_V1),
    _p("ondisk_done_v1", TaskLogEventKind.ONDISK_MERGE_DONE, "ReduceTask", _ONDISK_DONE, *_V1),
    # fetchOutputs' last line, "In-memory merge complete: " + mapOutputsFilesInMemory.size() + " files left.",
    # once the merge threads are joined; ReduceTask.run then sets Phase.SORT and calls createKVIterator, whose
    # first line ("Merged ...") is logged only after its merge to disk: the sort starts here
    _p("inmem_merge_complete_v1", TaskLogEventKind.FINAL_MERGE, "ReduceTask",
       r"^In-memory merge complete: (?P<segments>\d+) files left\.$", *_V1),
    _p("final_merge_spill_v1", TaskLogEventKind.FINAL_MERGE_SPILL, "ReduceTask", _FINAL_SPILL, *_V1),
    _p("final_merge_keep_v1", TaskLogEventKind.FINAL_MERGE_KEEP, "ReduceTask", _FINAL_KEEP, *_V1),
    _p("final_merge_disk_v1", TaskLogEventKind.FINAL_MERGE_DISK, "ReduceTask", _FINAL_DISK, *_V1),
    _p("final_merge_memory_v1", TaskLogEventKind.FINAL_MERGE_MEMORY, "ReduceTask", _FINAL_MEMORY, *_V1),
    # --- Task: commit, done, counters -------------------------------------------------
    # Task.done: "Task:" + taskId + " is done. And is in the process of committing" (1.x: "commiting")
    _p("commit_pending", TaskLogEventKind.COMMIT_PENDING, "Task",
       rf"^Task:{_A} is done\. And is in the process of (?:committing|commiting)$", *_V1, *_ALL),
    _p("commit_allowed", TaskLogEventKind.COMMIT_ALLOWED, "Task", rf"^Task {_A} is allowed to commit now$", *_V1, *_ALL),
    _p("commit_saved", TaskLogEventKind.COMMIT_SAVED, "FileOutputCommitter", rf"^Saved output of task '{_A}' to (?P<path>\S+)$",
       *_ALL),
    _p("done", TaskLogEventKind.DONE, "Task", rf"^Task '{_A}' done\.$", *_V1, *_ALL),
    _p("final_counters", TaskLogEventKind.COUNTERS, "Task", rf"^Final Counters for {_A}: Counters: (?P<records>\d+)$",
       "3.4.1", "3.5.0"),
    _p("child_exception", TaskLogEventKind.ERROR, "YarnChild", r"^(?:Exception|Error) running child ?: ?(?P<error>.*)$", *_YARN),
)

#: Loggers of 2.0.x whose classes were renamed: their lines take the patterns of the later class.
LOGGER_ALIASES: dict[str, str] = {"MergeManager": "MergeManagerImpl", "ShuffleScheduler": "ShuffleSchedulerImpl"}

_BY_LOGGER: dict[str, tuple[LinePattern, ...]] = {}
for _pat in PATTERNS:
    _BY_LOGGER[_pat.logger] = (*_BY_LOGGER.get(_pat.logger, ()), _pat)


def patterns_for(logger: str) -> tuple[LinePattern, ...]:
    """The patterns of one logger, given its full or simple class name (``o.a.h.mapred.MapTask``).

    A 2.0.x logger of :data:`LOGGER_ALIASES` gets the patterns of the class it became.
    """
    simple = logger.rsplit(".", 1)[-1]
    return _BY_LOGGER.get(LOGGER_ALIASES.get(simple, simple), ())


def match(logger: str, message: str) -> tuple[LinePattern, dict[str, str]] | None:
    """The first pattern of ``logger`` matching ``message``, with its named groups (``None`` if none).

    >>> pat, groups = match("org.apache.hadoop.mapred.MapTask", "Finished spill 3")
    >>> pat.kind.value, groups["index"]
    ('spill_finish', '3')
    """
    for pat in patterns_for(logger):
        found = pat.regex.match(message)
        if found is not None:
            return pat, {k: v for k, v in found.groupdict().items() if v is not None}
    return None


@dataclass(frozen=True, slots=True)
class TaskEvent:
    """One classified log line of one task attempt (a row of ``attempt_events`` plus parsed fields)."""

    line_no: int
    ts_ms: int
    thread_name: str | None
    thread_id: int | None
    kind: TaskLogEventKind
    pattern: str | None
    fields: tuple[tuple[str, str], ...]
    message: str
    bytes: int | None = None
    records: int | None = None
    segments: int | None = None

    def field(self, name: str) -> str | None:
        """A named group of the matching pattern (``None`` if the line had none)."""
        for key, value in self.fields:
            if key == name:
                return value
        return None


# ---- records, attempts and ids shared by the task-log readers -------------------------------
# Loggers of the reduce-side shuffle/merge threads (fetchers, mergers, the event fetcher).
REDUCE_SIDE_LOGGERS = frozenset(
    {"Fetcher", "LocalFetcher", "InMemoryMapOutput", "OnDiskMapOutput", "MergeManagerImpl", "MergeThread",
     "ShuffleSchedulerImpl", "EventFetcher", "Merger", *LOGGER_ALIASES}
)


def am_logger(logger: str) -> bool:
    """Whether a logger is one of the MapReduce ApplicationMaster's own classes (``...mapreduce.v2.app``)."""
    return ".v2.app." in logger


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One log4j record: the prefixed line plus the unprefixed lines that continue it."""

    line_no: int
    ts_ms: int
    level: str
    thread: str | None
    tid: int | None
    logger: str
    message: str
    extra: tuple[tuple[int, str], ...] = ()

    @property
    def thread_key(self) -> str:
        """Identity of the writing thread (name plus id where the pattern prints ``%tid``)."""
        return f"{self.thread}#{self.tid}" if self.tid is not None else str(self.thread)


@dataclass(slots=True)
class AttemptLog:
    """Everything one attempt's lines said (built while reading, then turned into rows)."""

    attempt_id: str
    records: list[LogRecord]
    events: list[TaskEvent]
    host: str | None = None
    container_id: str | None = None

    @property
    def start_ms(self) -> int:
        return min(e.ts_ms for e in self.events)

    @property
    def finish_ms(self) -> int:
        return max(e.ts_ms for e in self.events)


# Events of the attempt's own task thread that name the attempt, and those of helper threads.
OWNING_KINDS = frozenset({TaskLogEventKind.COMMIT_PENDING, TaskLogEventKind.COMMIT_ALLOWED, TaskLogEventKind.COMMIT_SAVED,
                           TaskLogEventKind.DONE, TaskLogEventKind.COUNTERS})
HELPER_NAMING_KINDS = frozenset({TaskLogEventKind.EVENTS_FETCHED, TaskLogEventKind.INMEM_MERGE_DONE,
                                  TaskLogEventKind.ONDISK_MERGE_DONE})


def attempt_named(events: Iterable[TaskEvent], kinds: frozenset[TaskLogEventKind] = OWNING_KINDS) -> str | None:
    """The attempt id the first owning line (commit, done, counters) of a log names."""
    for ev in events:
        if ev.kind in kinds:
            named = ev.field("attempt")
            if named is not None:
                return named
    return None
