"""Hadoop's names, one home for every reader: counter groups, task types, ids, hosts, event kinds.

Each reader (``.jhist``, 0.20/1.x history, Rumen, REST, task logs, YARN logs,
HiTune, Dr. Elephant counters) turns Hadoop's spellings into the store's through
this module, so that one fact has one definition and a new Hadoop version means
one new entry here.  Over 400 lines, it reads better whole: issue 38 asks for
one module of Hadoop's names, and a reader looks a spelling up in one place.

Counter groups
    The 2.x framework group names (:data:`TASK_COUNTER_GROUP`...) and the 0.20/1.x
    names Hadoop 2 maps onto them (:data:`LEGACY_COUNTER_GROUPS`, :func:`counter_group`).
Task types
    :data:`TASK_TYPES`: Hadoop's ``TaskType`` names (``JOB_SETUP``...) and 0.20's
    (``SETUP``...) -> :class:`phaseline.schemas.TaskType`.  :func:`task_type` reads a
    ``.jhist`` or HiTune value as written (unknown names kept); :func:`task_type_lenient`
    also takes blanks around it, lower case and the id letters ``m``/``r`` (1.x, Rumen, REST).
Ids
    Hadoop ids follow fixed shapes across versions::

        job_<cluster-ts>_<seq>                       job_200904211745_0002
        task_<cluster-ts>_<seq>_<m|r>_<index>        task_200904211745_0002_m_000010
        attempt_<cluster-ts>_<seq>_<m|r>_<index>_<n> attempt_200904211745_0002_m_000010_0

    Three readings, by how much of the shape a source guarantees:

    * :func:`job_id_of`, :func:`task_id_of` (``.jhist``): any id whose job part is
      ``<digits>_<digits>`` (also ``application_``/``appattempt_``), ``None`` otherwise.
    * :func:`job_of_task`, :func:`job_of_attempt`, :func:`task_of_attempt` (1.x history,
      Rumen, REST): old History Server documentation shows ids with an extra ``_<n>`` in
      the job part (``task_1326381300833_2_2_m_0``) and task-type words (``MAP``,
      ``SETUP``); any number of id parts before the type is accepted, so the job id is
      still recoverable; ``None`` for other shapes.
    * :func:`attempt_job_id`, :func:`attempt_task_id`, :func:`attempt_task_type` (task
      logs): exactly ``attempt_<job>_<m|r>_<task>_<n>``, the job part may be a
      LocalJobRunner's (``local2090949264_0001``); anything else is a ``ValueError``.
    * :func:`first_job_id`, :func:`cluster_of` (a file's partition): the first id in a text, its cluster;
      :func:`local_runner_job`: whether a job id is LocalJobRunner's (one JVM for all its tasks).
Hosts
    Three spellings, three functions: :func:`split_host` (``.jhist``: ``/rack/host:port``
    and 1.x ``tracker_host:...``), :func:`split_rack_host` (1.x history and Rumen:
    ``/dc/rack/host``, racks of several levels), :func:`node_manager_host` (YARN
    aggregated logs: ``host_port``).
Event kinds
    :class:`HistoryEventKind`: what a ``.jhist`` event does to the store's tables.
    :class:`TaskLogEventKind`: what one task-log line marks (``attempt_events.kind``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from phaseline.schemas import TaskType

# ---------------------------------------------------------------------------------------- counter groups

#: The framework's task counters (``MAP_INPUT_RECORDS``, ``SPILLED_RECORDS``, ``CPU_MILLISECONDS``...).
TASK_COUNTER_GROUP = "org.apache.hadoop.mapreduce.TaskCounter"
#: Per-scheme file-system counters (``HDFS_BYTES_READ``, ``FILE_BYTES_WRITTEN``...).
FILE_SYSTEM_COUNTER_GROUP = "org.apache.hadoop.mapreduce.FileSystemCounter"
#: Job-level counters (``TOTAL_LAUNCHED_MAPS``, ``DATA_LOCAL_MAPS``...).
JOB_COUNTER_GROUP = "org.apache.hadoop.mapreduce.JobCounter"
#: The input format's ``BYTES_READ``.
FILE_INPUT_FORMAT_COUNTER_GROUP = "org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter"
#: The output format's ``BYTES_WRITTEN``.
FILE_OUTPUT_FORMAT_COUNTER_GROUP = "org.apache.hadoop.mapreduce.lib.output.FileOutputFormatCounter"

#: Hadoop 0.20/1.x counter group names -> the 2.x names (Hadoop 2 ``AbstractCounters.legacyMap``, and
#: ``mapred.Counters``' deprecated groups: the old and new APIs' ``File{Input,Output}Format$Counter``).
LEGACY_COUNTER_GROUPS: Mapping[str, str] = MappingProxyType(
    {
        "org.apache.hadoop.mapred.Task$Counter": TASK_COUNTER_GROUP,
        "org.apache.hadoop.mapred.JobInProgress$Counter": JOB_COUNTER_GROUP,
        "FileSystemCounters": FILE_SYSTEM_COUNTER_GROUP,
        "org.apache.hadoop.mapred.FileInputFormat$Counter": FILE_INPUT_FORMAT_COUNTER_GROUP,
        "org.apache.hadoop.mapreduce.lib.input.FileInputFormat$Counter": FILE_INPUT_FORMAT_COUNTER_GROUP,
        "org.apache.hadoop.mapred.FileOutputFormat$Counter": FILE_OUTPUT_FORMAT_COUNTER_GROUP,
        "org.apache.hadoop.mapreduce.lib.output.FileOutputFormat$Counter": FILE_OUTPUT_FORMAT_COUNTER_GROUP,
    }
)


def counter_group(raw: str) -> str:
    """The store's name of a counter group (legacy 1.x names mapped to 2.x ones).

    >>> counter_group("FileSystemCounters")
    'org.apache.hadoop.mapreduce.FileSystemCounter'
    >>> counter_group("my.group")
    'my.group'
    """
    return LEGACY_COUNTER_GROUPS.get(raw, raw)


# ---------------------------------------------------------------------------------------- task types

TASK_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "MAP": TaskType.MAP.value,
        "REDUCE": TaskType.REDUCE.value,
        "JOB_SETUP": TaskType.SETUP.value,  # 0.23+ TaskType enum
        "SETUP": TaskType.SETUP.value,  # 0.20 history
        "JOB_CLEANUP": TaskType.CLEANUP.value,
        "CLEANUP": TaskType.CLEANUP.value,
        "TASK_CLEANUP": TaskType.TASK_CLEANUP.value,
    }
)
#: The task-type letters of task and attempt ids (upper-cased).
_ID_LETTERS: Mapping[str, str] = MappingProxyType({"M": TaskType.MAP.value, "R": TaskType.REDUCE.value})


def task_type(raw: str | None) -> str | None:
    """Hadoop's task type name as written -> :class:`~phaseline.schemas.TaskType` value (unknown names kept).

    >>> task_type("JOB_SETUP")
    'SETUP'
    """
    if raw is None or raw == "":
        return None
    return TASK_TYPES.get(raw, raw)


def task_type_lenient(raw: str | None) -> str | None:
    """Normalize a task type (``MAP``, ``m``, ``JOB_SETUP``...) to :class:`TaskType`; unknown ones pass upper-cased.

    >>> task_type_lenient("m"), task_type_lenient("JOB_CLEANUP"), task_type_lenient(None)
    ('MAP', 'CLEANUP', None)
    """
    if raw is None or raw == "":
        return None
    key = raw.strip().upper()
    return TASK_TYPES.get(key) or _ID_LETTERS.get(key) or key


# ---------------------------------------------------------------------------------------- ids

# ids: job_<cluster>_<n>, task_<cluster>_<n>_m_<i>, attempt_<cluster>_<n>_m_<i>_<k>,
# appattempt_<cluster>_<n>_<k>, application_<cluster>_<n>.
_ID_RE = re.compile(r"(?:job|task|attempt|application|appattempt)_(\d+)_(\d+)")
_TASK_ID = re.compile(r"^task_(\w+?)_([mrMR]|MAP|REDUCE|SETUP|CLEANUP|[sc])_\d+$")
_ATTEMPT_ID = re.compile(r"^attempt_(\w+?)_([mrMR]|MAP|REDUCE|SETUP|CLEANUP|[sc])_\d+_\d+$")
_JOB_ID_IN_TEXT = re.compile(r"job_\d+_\d+")
#: A map or reduce attempt id exactly, its job part possibly a LocalJobRunner's (``local<n>_<seq>``).
ATTEMPT_RE = re.compile(r"attempt_(?P<job>[A-Za-z0-9]+_\d+)_(?P<type>[mr])_(?P<task>\d+)_(?P<n>\d+)")


def job_id_of(any_id: str) -> str | None:
    """The job id a task/attempt/application id belongs to.

    >>> job_id_of("attempt_1399356417814_19732_m_000000_3")
    'job_1399356417814_19732'
    >>> job_id_of("appattempt_1329348432655_0001_000001")
    'job_1329348432655_0001'
    """
    m = _ID_RE.match(any_id)
    return f"job_{m.group(1)}_{m.group(2)}" if m else None


def task_id_of(attempt_id: str) -> str | None:
    """The task id of an attempt id (``attempt_X_Y_m_000001_0`` -> ``task_X_Y_m_000001``).

    >>> task_id_of("attempt_1329348432655_0001_r_000000_0")
    'task_1329348432655_0001_r_000000'
    """
    if not attempt_id.startswith("attempt_"):
        return None
    head, sep, _ = attempt_id.rpartition("_")
    return "task_" + head[len("attempt_") :] if sep else None


def _job_by(pattern: re.Pattern[str], some_id: str | None) -> str | None:
    """The job id in ``some_id`` (``pattern``'s first group after ``job_``), or ``None``."""
    if not some_id:
        return None
    m = pattern.match(some_id)
    return f"job_{m.group(1)}" if m else None


def job_of_task(task_id: str | None) -> str | None:
    """The job id a task id belongs to, or ``None`` if the id has no known shape.

    >>> job_of_task("task_200904211745_0002_m_000010")
    'job_200904211745_0002'
    >>> job_of_task("task_1326381300833_2_2_m_0")
    'job_1326381300833_2_2'
    """
    return _job_by(_TASK_ID, task_id)


def job_of_attempt(attempt_id: str | None) -> str | None:
    """The job id an attempt id belongs to, or ``None``.

    >>> job_of_attempt("attempt_200904211745_0002_r_000000_1")
    'job_200904211745_0002'
    """
    return _job_by(_ATTEMPT_ID, attempt_id)


def task_of_attempt(attempt_id: str | None) -> str | None:
    """The task id of an attempt id (drop the attempt number), or ``None``.

    >>> task_of_attempt("attempt_200904211745_0002_r_000000_1")
    'task_200904211745_0002_r_000000'
    """
    if not attempt_id or not _ATTEMPT_ID.match(attempt_id):
        return None
    return "task_" + attempt_id[len("attempt_") :].rsplit("_", 1)[0]


def job_id_from_name(name: str) -> str | None:
    """A job id found in a file name (``job_..._conf.xml``, ``host_ts_job_2010..._40864_conf.xml``).

    >>> job_id_from_name("megacluster.megacorp.com_1265616107882_job_201002080801_40864_conf.xml")
    'job_201002080801_40864'
    """
    m = _JOB_ID_IN_TEXT.search(name)
    return m.group(0) if m else None


#: Any Hadoop id in free text, its cluster part a timestamp or a LocalJobRunner's ``local<n>``.
_ANY_ID_IN_TEXT = re.compile(r"(?<![A-Za-z])(?:job|task|attempt|application|appattempt)_((?:local)?\d+)_(\d+)")


def first_job_id(text: str) -> str | None:
    """The job id of the first Hadoop id (job, task, attempt, application) in ``text``, or ``None``.

    >>> first_job_id("attempt_1526555215992_0001_m_000000_0"), first_job_id("h_1265_job_2010_40864_conf.xml")
    ('job_1526555215992_0001', 'job_2010_40864')
    """
    m = _ANY_ID_IN_TEXT.search(text)
    return f"job_{m.group(1)}_{m.group(2)}" if m else None


def cluster_of(job_id: str) -> str | None:
    """A job id's cluster part (``job_<cluster>_<seq>``: the ResourceManager's start time, or
    ``local<n>``), or ``None``.

    >>> cluster_of("job_1526555215992_0001"), cluster_of("job_local42_0001"), cluster_of("x")
    ('1526555215992', 'local42', None)
    """
    m = _ANY_ID_IN_TEXT.fullmatch(job_id)
    return m.group(1) if m and job_id.startswith("job_") else None


#: The engine name of a YARN cluster (``Cluster.engine``, a platform model's ``cluster.engine.name``):
#: its nodes' containers run maps and reduces alike, each task in its own JVM.
YARN_ENGINE = "yarn"
#: The engine name of Hadoop's LocalJobRunner: one node, every task of a job in the JVM that submitted it.
LOCAL_ENGINE = "local-hadoop"


def local_runner_job(job_id: str) -> bool:
    """Whether a job id is the LocalJobRunner's (``job_local<n>_<seq>``): one JVM, reduces after the maps.

    >>> local_runner_job("job_local1827494099_0001"), local_runner_job("job_1416424547277_0002")
    (True, False)
    """
    return job_id.startswith("job_local")


def _attempt(attempt_id: str) -> re.Match[str]:
    found = ATTEMPT_RE.fullmatch(attempt_id)
    if found is None:
        raise ValueError(f"not an attempt id: {attempt_id!r}")
    return found


def attempt_job_id(attempt_id: str) -> str:
    """``attempt_<cluster>_<n>_m_<task>_<k>`` -> ``job_<cluster>_<n>``.

    >>> attempt_job_id("attempt_local2090949264_0001_m_000000_0")
    'job_local2090949264_0001'
    """
    return f"job_{_attempt(attempt_id)['job']}"


def attempt_task_id(attempt_id: str) -> str:
    """``attempt_..._m_000003_0`` -> ``task_..._m_000003``."""
    found = _attempt(attempt_id)
    return f"task_{found['job']}_{found['type']}_{found['task']}"


def attempt_task_type(attempt_id: str) -> str:
    """``MAP`` or ``REDUCE`` from an attempt id."""
    return "MAP" if _attempt(attempt_id)["type"] == "m" else "REDUCE"


# ---------------------------------------------------------------------------------------- hosts


@lru_cache(maxsize=65536)
def split_host(raw: str) -> tuple[str | None, str | None]:
    """A host as a ``.jhist`` writes it -> ``(host, rack)``: port, rack path and 1.x tracker prefix removed.

    >>> split_host("/default-rack/node17.example.com:8041")
    ('node17.example.com', '/default-rack')
    >>> split_host("tracker_node3:localhost/127.0.0.1:41234")
    ('node3', None)
    >>> split_host("localhost")
    ('localhost', None)
    """
    text = raw.strip()
    rack: str | None = None
    if text.startswith("tracker_"):
        text = text[len("tracker_") :]
    if text.startswith("/"):
        rack_part, _, text = text.rpartition("/")
        rack = rack_part or None
    host = text.split(":", 1)[0]
    return (host or None), rack


def split_rack_host(raw: str | None) -> tuple[str | None, str | None]:
    """Split a 1.x/Rumen host name ``/rack/host`` into ``(host, rack)``.

    Racks may have several levels (``/dc1/rack7/host``): everything before the
    last component is the rack, written as Hadoop's topology does (``/dc1/rack7``,
    leading slash, as in 2.x ``.jhist`` ``rackname``).  A name without a leading
    ``/`` is a bare host.

    >>> split_rack_host("/192.30.63.192/cluster1020.secondleveldomain.com")
    ('cluster1020.secondleveldomain.com', '/192.30.63.192')
    >>> split_rack_host("cluster1670.secondleveldomain.com")
    ('cluster1670.secondleveldomain.com', None)
    >>> split_rack_host(None)
    (None, None)
    """
    if raw is None:
        return None, None
    text = raw.strip()
    if not text:
        return None, None
    if not text.startswith("/"):
        return text, None
    parts = [p for p in text.split("/") if p]
    if not parts:
        return None, None
    rack = "/" + "/".join(parts[:-1]) if len(parts) > 1 else None
    return parts[-1], rack


def node_manager_host(raw: str) -> str:
    """``hadoopnode_34573`` (node manager host and port, as YARN's aggregated logs name it) -> ``hadoopnode``.

    >>> node_manager_host("hadoopnode_34573"), node_manager_host("hadoopnode")
    ('hadoopnode', 'hadoopnode')
    """
    host, sep, port = raw.rpartition("_")
    return host if sep and port.isdigit() else raw


# ---------------------------------------------------------------------------------------- event kinds


class HistoryEventKind(enum.StrEnum):
    """What a history event does to phaseline's tables."""

    JOB_SUBMITTED = "job_submitted"
    JOB_INITED = "job_inited"
    JOB_INFO_CHANGED = "job_info_changed"
    JOB_QUEUE_CHANGED = "job_queue_changed"
    JOB_FINISHED = "job_finished"
    JOB_UNSUCCESSFUL = "job_unsuccessful"
    TASK_STARTED = "task_started"
    TASK_FINISHED = "task_finished"
    TASK_FAILED = "task_failed"
    TASK_UPDATED = "task_updated"
    ATTEMPT_STARTED = "attempt_started"
    ATTEMPT_FINISHED = "attempt_finished"
    ATTEMPT_UNSUCCESSFUL = "attempt_unsuccessful"
    EVENT_ONLY = "event_only"  # kept in ``events`` only (Hadoop's parser ignores it too)


class TaskLogEventKind(enum.StrEnum):
    """What one task-log line marks (``attempt_events.kind``)."""

    TASK_START = "task_start"  # LocalJobRunner: Starting task: <attempt>
    TASK_FINISH = "task_finish"  # LocalJobRunner: Finishing task: <attempt>
    SPLIT = "split"  # MapTask: Processing split: <split>
    SORT_BUFFER = "sort_buffer"  # io.sort.mb, soft limit, equator, kvstart, collector class
    SPILL_START = "spill_start"  # MapTask: Spilling map output; Record too large for in-memory buffer (1 record)
    SPILL_BYTES = "spill_bytes"  # MapTask: bufstart = ; bufend = ; bufvoid =
    SPILL_RECORDS = "spill_records"  # MapTask: kvstart = ; kvend = ; length = L/max (1.x: length = ring size)
    SPILL_RESET = "spill_reset"  # MapTask: (RESET) equator ...
    SPILL_FINISH = "spill_finish"  # MapTask: Finished spill N
    FLUSH = "flush"  # MapTask: Starting flush of map output
    MERGE_PASS = "merge_pass"  # Merger: Merging N sorted segments / N intermediate segments
    MERGE_LAST_PASS = "merge_last_pass"  # Merger: Down to the last merge-pass ...
    SHUFFLE_INIT = "shuffle_init"  # ReduceTask: Using ShuffleConsumerPlugin
    MERGE_MANAGER = "merge_manager"  # MergeManagerImpl: MergerManager: memoryLimit=... (1.x: ShuffleRamManager)
    EVENTS_FETCHED = "events_fetched"  # EventFetcher: Got N new map-outputs / thread started
    FETCH_START = "fetch_start"  # Fetcher: about to shuffle output of map ... to MEMORY|DISK
    FETCH_SCHEDULED = "fetch_scheduled"  # ReduceTask (1.x): <attempt> Scheduled N outputs (...)
    FETCH_READ = "fetch_read"  # InMemoryMapOutput/OnDiskMapOutput: Read N bytes from map-output
    FETCH_CLOSE = "fetch_close"  # MergeManagerImpl: closeInMemoryFile -> ...
    FETCH_HOST_DONE = "fetch_host_done"  # ShuffleSchedulerImpl: host freed by fetcher#N in Nms
    FETCH_WAIT = "fetch_wait"  # Fetcher/LocalFetcher: MergeManager returned status WAIT / Status.WAIT
    INMEM_MERGE_TRIGGER = "inmem_merge_trigger"  # Starting inMemoryMerger's merge since ...
    INMEM_MERGE_START = "inmem_merge_start"  # Initiating in-memory merge with N segments...
    INMEM_MERGE_DONE = "inmem_merge_done"  # <attempt> Merge of the N files in-memory complete
    MEM2MEM_MERGE_START = "mem2mem_merge_start"  # Initiating Memory-to-Memory merge ...
    ONDISK_MERGE_START = "ondisk_merge_start"  # OnDiskMerger: We have N map outputs on disk
    ONDISK_MERGE_DONE = "ondisk_merge_done"  # <attempt> Finished merging N map output files
    FINAL_MERGE = "final_merge"  # finalMerge called with N in-memory and M on-disk (1.x: In-memory merge complete)
    FINAL_MERGE_SPILL = "final_merge_spill"  # Merged N segments, B bytes to disk to satisfy ...
    FINAL_MERGE_KEEP = "final_merge_keep"  # Keeping N segments, B bytes in memory ...
    FINAL_MERGE_DISK = "final_merge_disk"  # Merging N files, B bytes from disk
    FINAL_MERGE_MEMORY = "final_merge_memory"  # Merging N segments, B bytes from memory into reduce
    COMMIT_PENDING = "commit_pending"  # Task:<attempt> is done. And is in the process of committing (1.x: commiting)
    COMMIT_ALLOWED = "commit_allowed"  # Task <attempt> is allowed to commit now
    COMMIT_SAVED = "commit_saved"  # Saved output of task '<attempt>' to <dir>
    DONE = "done"  # Task '<attempt>' done.
    COUNTERS = "counters"  # Final Counters for <attempt>: Counters: N
    STATUS = "status"  # LocalJobRunner status strings: 'map > sort', 'N / M copied.'
    ERROR = "error"  # YarnChild: Exception running child / Error running child
    OTHER = "other"  # any other line: kept, counted in ctx.unknown
