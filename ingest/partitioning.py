"""``phaseline ingest --partition-by``: each input file into the partition store it belongs to.

A partitioned store is one store per partition under a root
(``<root>/day=2026-11-28/cluster=1526555215992/``; :mod:`phaseline.store.partitioned`
reads the root as one).  :func:`ingest_partitioned` routes every file the walk finds
to its partition (:func:`file_keys`, :func:`route`) and ingests each partition's files
into that partition's store, created as needed, with the ordinary pipeline (local
workers or Spark tasks): each partition has its own atomic commits, quarantine,
``phaseline verify``, and re-running the same ingest leaves every file unchanged,
because a file is always routed to the same partition.

The keys of a file
------------------
``cluster``
    The cluster part of the file's job id (``job_<cluster>_<seq>``: the ResourceManager's
    start time, or a LocalJobRunner's ``local<n>``), the job id being the first Hadoop id
    (job, task, attempt, application) in the file's name, else in its first
    :data:`HEAD_BYTES` (decompressed).
``day``
    The UTC day the job was submitted, taken from the first of:

    1. the history server's ``done/YYYY/MM/DD[/serial]/`` directory the file sits in:
       known without reading the file, and the same days ``--since``/``--until``
       select, so a day's directory lands in that day's partition whole (the server
       files a job under the day it finished, in its own time zone: a job that ran
       over midnight lands on its finish day);
    2. the submit time in a history server's done-file name
       (``job_<id>-<submit>-<user>-...jhist``), again without reading;
    3. the job's submit time in the file's first :data:`HEAD_BYTES` (a ``.jhist``'s
       ``JOB_SUBMITTED``, a 1.x history's ``SUBMIT_TIME``, Rumen's and the REST API's
       ``submitTime``), else its finish time there (``finishTime``, ``FINISH_TIME``):
       the first record of these formats carries it, so the head is enough;
    4. the day another file of the same job in this ingest gave (a job's
       ``_conf.xml`` or its task logs go with its history).

A file without a job id goes to ``cluster=unknown``, and one without a day to
``day=unknown`` (:data:`UNKNOWN`): it lands, it is not lost.  A file that describes
several jobs (a Rumen trace) goes whole to its first job's partition; so does an
archive, by its own name and first bytes.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingest.history_dirs import day_dir_span, done_name_times
from ingest.opening import open_binary
from ingest.pipeline import IngestSummary, ProgressFn, ingest_paths, worker_pool
from ingest.walk import iter_files
from phaseline.errors import StoreError
from phaseline.hadoop_names import cluster_of, first_job_id
from phaseline.store import PartitionSpec, Store, find_partitions, partition_dir

#: The keys a store may be partitioned by, in the order their directories nest.
PARTITION_KEYS = ("day", "cluster")
#: The value of a key a file does not give (no job id, no time).
UNKNOWN = "unknown"
#: How much of a file (decompressed) is searched for its job id and times.
HEAD_BYTES = 256 * 1024

_SUBMIT = re.compile(rb'(?:"submitTime"|SUBMIT_TIME)\s*[:=]\s*"?(\d{12,13})\b')
_FINISH = re.compile(rb'(?:"finishTime"|FINISH_TIME)\s*[:=]\s*"?(\d{12,13})\b')


class DayFrom(enum.StrEnum):
    """Where a file's day came from (see the module)."""

    DIRECTORY = "history server directory"
    NAME = "done-file name"
    SUBMIT = "submit time in the file"
    FINISH = "finish time in the file"
    JOB = "another file of the job"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class FileKeys:
    """What routes a file: its job id, the UTC day (``YYYY-MM-DD``) and where that came from."""

    job_id: str | None
    day: str | None
    day_from: DayFrom

    def value(self, key: str) -> str:
        """The file's value of a partition key (:data:`UNKNOWN` when it has none)."""
        if key == "day":
            return self.day or UNKNOWN
        if key == "cluster":
            return (cluster_of(self.job_id) if self.job_id else None) or UNKNOWN
        raise ValueError(f"{key!r} is not a partition key ({', '.join(PARTITION_KEYS)})")


def parse_partition_by(text: str) -> tuple[str, ...]:
    """``"day"``, ``"cluster"``, ``"day,cluster"``: the keys, in the order their directories nest.

    >>> parse_partition_by("day,cluster")
    ('day', 'cluster')
    >>> parse_partition_by("hour")
    Traceback (most recent call last):
    ...
    ValueError: --partition-by hour: each key is one of day, cluster, named once
    """
    keys = tuple(k.strip() for k in text.split(","))
    if not keys or len(set(keys)) != len(keys) or not set(keys) <= set(PARTITION_KEYS):
        raise ValueError(f"--partition-by {text}: each key is one of {', '.join(PARTITION_KEYS)}, named once")
    return keys


def _day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


def _head(path: Path) -> bytes:
    """The file's first :data:`HEAD_BYTES`, decompressed; ``b""`` when it cannot be read (the
    ingest then says why, in the partition it lands in)."""
    try:
        with open_binary(path) as fh:
            return fh.read(HEAD_BYTES)
    except Exception:  # unreadable, cut or corrupt (zlib.error is no OSError): routed as unknown
        return b""


def file_keys(path: Path) -> FileKeys:
    """A file's job id and day, from its place, its name and its first bytes (see the module)."""
    done = done_name_times(path.name)
    job = first_job_id(path.name)
    head: bytes | None = None
    if job is None:
        head = _head(path)
        job = first_job_id(head.decode("latin-1"))
    span = day_dir_span(path)
    if span is not None:
        return FileKeys(job, _day(span[0]), DayFrom.DIRECTORY)
    if done is not None:
        return FileKeys(job, _day(done[1]), DayFrom.NAME)
    head = _head(path) if head is None else head
    for pattern, source in ((_SUBMIT, DayFrom.SUBMIT), (_FINISH, DayFrom.FINISH)):
        if m := pattern.search(head):
            return FileKeys(job, _day(int(m.group(1))), source)
    return FileKeys(job, None, DayFrom.NONE)


def route(files: Iterable[Path], keys: Sequence[str]) -> dict[PartitionSpec, list[Path]]:
    """The files of each partition (in walk order), partitions in sorted order."""
    found = [(f, file_keys(f)) for f in files]
    day_of_job = {k.job_id: k.day for _, k in found if k.job_id and k.day}
    routed: dict[PartitionSpec, list[Path]] = {}
    for f, k in found:
        if k.day is None and k.job_id in day_of_job:
            k = FileKeys(k.job_id, day_of_job[k.job_id], DayFrom.JOB)
        routed.setdefault(tuple((key, k.value(key)) for key in keys), []).append(f)
    return dict(sorted(routed.items()))


@dataclass(frozen=True, slots=True)
class PartitionedIngest:
    """Each partition's ingest: its keys, its store and its results."""

    root: Path
    parts: tuple[tuple[PartitionSpec, Store, IngestSummary], ...]

    @property
    def summary(self) -> IngestSummary:
        """Every file's result, partition after partition."""
        return IngestSummary(tuple(r for _, _, s in self.parts for r in s.results))


def check_root(root: Path, keys: Sequence[str]) -> None:
    """Refuse a root that is a store itself, or whose partitions have other keys, before any write."""
    if Store(root).exists():
        raise StoreError(
            f"{root} is a store (it holds a MANIFEST.json): a partitioned store's root holds "
            "only partition directories (key=value); give another --store, or ingest without --partition-by"
        )
    have = {tuple(k for k, _ in spec) for spec, _ in find_partitions(root)}
    if have and have != {tuple(keys)}:
        raise StoreError(
            f"{root}: its partitions are by {','.join(next(iter(have)))}, not by {','.join(keys)}; "
            "give the same --partition-by, or another --store"
        )


def ingest_partitioned(
    paths: Iterable[str | Path],
    root: Path,
    keys: Sequence[str],
    *,
    engine: str = "local",
    master: str | None = None,
    spark: Any = None,
    on_file: ProgressFn | None = None,
    workers: int = 1,
    **options: Any,
) -> PartitionedIngest:
    """Ingest files into the partition stores of ``root`` by ``keys`` (see the module).

    Parameters
    ----------
    paths
        Files or directories (walked as :func:`ingest.walk.iter_files` walks them).
    root
        The partitioned store's root (no store itself).
    keys
        Partition keys from :data:`PARTITION_KEYS`, outermost first.
    engine, master, spark
        ``"local"`` (``workers`` processes, one pool for every partition) or ``"spark"``
        (one session for every partition, :mod:`ingest.spark_ingest`: ``spark``, else one
        started on ``master`` and stopped after).
    on_file, **options
        As :func:`ingest.pipeline.ingest_paths` (``commit_every_files``, ``new_only``, ...).
    """
    for key in keys:
        FileKeys(None, None, DayFrom.NONE).value(key)  # an unknown key raises here, before any write
    check_root(root, keys)
    routed = route(iter_files(paths), keys)
    with ExitStack() as stack:
        ingest_one: Callable[[list[Path], Store], IngestSummary]
        if engine == "spark":
            from ingest.spark_ingest import ingest_paths_spark
            from phaseline.spark import DEFAULT_MASTER, spark_session

            session = spark or stack.enter_context(spark_session(master or DEFAULT_MASTER))

            def ingest_one(files: list[Path], store: Store) -> IngestSummary:
                return ingest_paths_spark(files, store, spark=session, on_file=on_file, **options)
        else:
            pool = worker_pool(stack, workers, "forkserver")

            def ingest_one(files: list[Path], store: Store) -> IngestSummary:
                return ingest_paths(files, store, on_file=on_file, workers=workers, executor=pool, **options)

        done = []
        for spec, files in routed.items():
            store = Store(partition_dir(root, spec))
            done.append((spec, store, ingest_one(files, store)))
    return PartitionedIngest(root, tuple(done))
