"""Ingest on Spark: the same readers, staged rows and commits, with chunks read as Spark tasks.

:func:`ingest_paths_spark` is :func:`ingest.pipeline.ingest_paths` with its chunks
read by Spark instead of worker processes.  Everything else is the pipeline's own:
the driver walks the paths, hashes each file, decides what is unchanged or a copy,
cuts the rest into chunks (up to :data:`~ingest.plan.CHUNK_FILES` small files,
a large file whole in a chunk of its own), and commits finished chunks through
the store's manifest.  A chunk is an RDD of one partition whose task runs the
pipeline's chunk reader (the one ``-j N`` workers run) on an executor: it detects
each file's format, runs its reader, quarantines a bad file with its reason and
stages the rows of the others as Parquet in the transaction's staging directory,
with the same schemas (:mod:`phaseline.schemas`).  The task hands back the files'
results and the staged files' names; the driver adopts them and commits.

Atomicity is the store's: staged files are invisible until the driver renames a
new manifest into place, so a driver that dies (and with it its Spark application)
leaves the store as its last commit left it, and the next ingest removes the
staged files and reads the files not yet committed.  Chunks are submitted from
driver threads, several in flight (Spark runs jobs of several threads at once on
its slots), so progress, ordered reporting and periodic commits work as in a
local ingest.

Executors write to the store's staging directory and read the input paths the
driver names: with ``local[N]`` that is this machine; on a cluster both must be on
a filesystem every node mounts at the same path (``docs/SCALE.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ingest.pipeline import IngestSummary, ProgressFn, ingest_paths
from phaseline.errors import EngineError, first_line
from phaseline.spark import DEFAULT_MASTER, spark_session
from phaseline.store import Store

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

T = TypeVar("T")

_Call = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


def _run_calls(calls: Iterable[_Call]) -> Iterator[Any]:
    """A Spark task's body: each call of its partition (one chunk read), its result handed back."""
    for fn, args, kwargs in calls:
        yield fn(*args, **kwargs)


class SparkChunkExecutor(Executor):
    """A :class:`concurrent.futures.Executor` whose calls run as Spark tasks.

    Each :meth:`submit` is one Spark job over an RDD of one partition (the call,
    pickled with its arguments: a chunk of files), started from a driver thread;
    up to ``in_flight`` jobs run at once and share the application's task slots.
    A call that raises in its task (the pipeline's reader raises only for the
    machine's trouble, a disk error) fails its future with :class:`EngineError`.
    """

    def __init__(self, context: SparkContext, in_flight: int) -> None:
        self._context = context
        self._threads = ThreadPoolExecutor(max_workers=max(1, in_flight), thread_name_prefix="spark-chunk")

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        return self._threads.submit(self._run, fn, args, kwargs)

    def _run(self, fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
        from py4j.protocol import Py4JError  # type: ignore[import-untyped]

        call: _Call = (fn, args, kwargs)
        try:
            results = self._context.parallelize([call], 1).mapPartitions(_run_calls).collect()
        except Py4JError as exc:
            raise EngineError(f"a Spark task failed: {_spark_message(exc)}") from exc
        except Exception as exc:  # pyspark's own errors (a PythonException of the task) carry Spark's message
            if type(exc).__module__.startswith("pyspark"):
                raise EngineError(f"a Spark task failed: {_spark_message(exc)}") from exc
            raise
        if len(results) != 1:
            raise EngineError(f"a Spark task returned {len(results)} results for one chunk")
        result: T = results[0]
        return result

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._threads.shutdown(wait, cancel_futures=cancel_futures)


def _spark_message(exc: BaseException) -> str:
    """The line of a Spark failure that says what went wrong (the Python error of the task when there is one)."""
    text = str(exc)
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.endswith("Error") or ("Error: " in stripped and not stripped.startswith("at ")):
            return stripped
    return first_line(exc)


def ingest_paths_spark(
    paths: Sequence[str | Path],
    store: Store,
    *,
    spark: SparkSession | None = None,
    master: str = DEFAULT_MASTER,
    on_file: ProgressFn | None = None,
    **options: Any,
) -> IngestSummary:
    """Ingest files into a store with Spark reading the chunks (see the module's docstring).

    Parameters
    ----------
    paths, store, on_file
        As :func:`ingest.pipeline.ingest_paths`.
    spark
        The session to run on; ``None`` starts one on ``master`` for this ingest
        (:func:`phaseline.spark.spark_session`) and stops it after.
    master
        The Spark master URL (``local[2]``, ``spark://host:7077``, ``yarn``).
    **options
        Further :func:`~ingest.pipeline.ingest_paths` options (``file_timeout_s``,
        ``commit_every_files``, ...); ``workers`` defaults to the application's
        default parallelism (its task slots).

    Returns
    -------
    IngestSummary
        One result per file, as a local ingest gives.
    """
    if spark is None:
        with spark_session(master) as session:
            return ingest_paths_spark(paths, store, spark=session, on_file=on_file, **options)
    slots = max(1, spark.sparkContext.defaultParallelism)
    workers = int(options.pop("workers", None) or slots)
    # The pipeline keeps 2 x workers + 1 chunks in flight: one driver thread each.
    with SparkChunkExecutor(spark.sparkContext, 2 * workers + 1) as executor:
        return ingest_paths(
            paths, store, on_file=on_file, workers=max(2, workers), executor=executor, **options
        )
