"""Walk paths, detect formats, run readers, commit rows to the store.

Each file lands whole or not at all (see :mod:`phaseline.store`): a reader
error quarantines the file (its ``sources`` row says where and what), a
truncated file lands what came before the cut, and the other files of the same
ingest land regardless.  Per file the pipeline counts events read and rows
written, so nothing is dropped silently.

The steps have their own modules: :mod:`ingest.walk` finds the files,
:mod:`ingest.plan` hashes them, unpacks archives and decides which are read, in
chunks (up to :data:`~ingest.plan.CHUNK_FILES` files or :data:`~ingest.plan.CHUNK_BYTES`
bytes); :mod:`ingest.file_reading` reads a chunk.  A chunk's small files share one
staged Parquet file per table (:class:`~phaseline.staged_batch.StagedBatch`), because
a Parquet file per (file, table) cost more than reading a small history file.  Chunks
are read in this process or, with ``workers > 1``, in worker processes, which stage
into the transaction's staging directory; this module commits them (:class:`_Commits`).
A per-file time limit turns a reader that hangs on hostile input into a
quarantined file instead of a stuck ingest.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path

from ingest.archives import is_archive
from ingest.file_reading import FileResult, read_chunk
from ingest.plan import CHUNK_FILES, Chunk, Live, Planner, is_copy, read_in_ranges
from ingest.split_reading import RangeOutcome, land_split, read_range_work
from ingest.walk import iter_files, resolved_files
from phaseline.schemas import SourceStatus
from phaseline.staged_batch import StagedGroup
from phaseline.store import MIN_SMALL_FILES, SMALL_FILE_ROWS, Manifest, Store, Transaction

__all__ = ["FileResult", "IngestSummary", "ProgressFn", "ingest_paths", "iter_files"]

COMMIT_EVERY_FILES = 500
COMMIT_EVERY_S = 30.0
FILE_TIMEOUT_S = 600.0
#: Compact at the end once a table has more small files than this: compaction's own rule
#: (:data:`phaseline.store.MIN_SMALL_FILES`, where it is measured).
COMPACT_OVER_FILES = MIN_SMALL_FILES - 1
#: A plain ``.jhist`` this large is read in ranges by the workers (``workers > 1``), two per worker.
#: A split costs its file a process hand-off and a staged result per range, a probe of the file's
#: head per range after the first and the merge in this process (tasks and attempts rows from tuples):
#: measured on the generated 50 MB history, about 0.1 s in all, a sixth of reading it; at 64 MiB a
#: range is 32 MiB or more and the split gains more than that where two cores are free.
SPLIT_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class IngestSummary:
    """Per-file results of one ingest and their totals."""

    results: tuple[FileResult, ...]

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def quarantined(self) -> int:
        return self.count(SourceStatus.QUARANTINED)

    def rows_per_table(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for r in self.results:
            total.update(r.rows)
        return dict(sorted(total.items()))


ProgressFn = Callable[[Path, FileResult], None]

_Outcome = tuple[list[FileResult], StagedGroup]


class _Commits:
    """Adopts each chunk's staged rows, reports its files in order, and commits when one is due:
    every ``every_files`` files, or ``every_s`` seconds after the last commit.  The ranges of a file
    read in ranges are gathered and merged here, once its last range is read."""

    def __init__(
        self, txn: Transaction, on_file: ProgressFn | None, every_files: int, every_s: float,
        file_timeout_s: float | None = None,
    ) -> None:  # fmt: skip
        self.txn = txn
        self.on_file = on_file
        self.every_files = every_files
        self.every_s = every_s
        self.file_timeout_s = file_timeout_s
        self.results: list[FileResult] = []
        self.last_commit = time.monotonic()
        self._ranges: list[RangeOutcome] = []  # of the file being read in ranges

    def finish(self, chunk: Chunk, outcome: _Outcome | RangeOutcome) -> None:
        """Adopt a chunk's staged rows, report its files in order, commit when one is due."""
        txn = self.txn
        if isinstance(outcome, RangeOutcome):
            assert chunk.split is not None
            work, index = chunk.split
            self._ranges.append(outcome)
            if index < len(work.spans) - 1:
                return
            ranges, self._ranges = self._ranges, []
            outcome = land_split(work, ranges, txn.staging, self.file_timeout_s)
        read, group = outcome
        txn.adopt_group(group)
        done = iter(read)
        for path, decided in chunk.entries:
            result = decided if decided is not None else next(done)
            self.results.append(result)
            if self.on_file is not None:
                self.on_file(path, result)
        if txn.pending >= self.every_files or (txn.pending and time.monotonic() - self.last_commit > self.every_s):
            txn.commit()
            self.last_commit = time.monotonic()


def _chunk_files(files: int, workers: int, commit_every_files: int) -> int:
    """Files per chunk.  A chunk is committed whole, so it is no larger than a commit; with workers,
    every worker gets several chunks, or the last chunks leave all but one worker idle."""
    chunk_files = max(1, min(CHUNK_FILES, commit_every_files))
    if workers > 1:
        chunk_files = max(1, min(chunk_files, -(-files // (4 * workers))))
    return chunk_files


def worker_pool(stack: ExitStack, workers: int, start_method: str) -> Executor | None:
    """Worker processes for ``workers > 1``, else None.

    ``"forkserver"`` by default, with this module preloaded: workers fork from a clean
    single-threaded server.  A plain fork copies this process mid-flight, with DuckDB's and
    Arrow's threads and whatever locks they hold, and a forked worker has crashed that way;
    ``"spawn"`` is as safe but starts each worker ~0.5 s slower.  ``"fork"`` lets workers
    inherit what was patched into this process (formats registered at run time).

    Unless they fork from this process, the workers start in a thread while this one plans
    (hashes) the first files: the first ``submit`` waits for the server's start and its
    preload, about half a second, which a large file read in ranges would otherwise wait too.
    """
    context = multiprocessing.get_context(start_method)
    if isinstance(context, multiprocessing.context.ForkServerContext):
        context.set_forkserver_preload([__name__])  # once the server runs, this is a no-op
    if workers <= 1:
        return None
    pool = stack.enter_context(ProcessPoolExecutor(workers, mp_context=context))
    if start_method != "fork":
        starting = threading.Thread(target=_start_workers, args=(pool, workers), name="start-workers", daemon=True)
        starting.start()
        stack.callback(starting.join)  # (before the pool shuts down)
    return pool


def _start_workers(pool: Executor, workers: int) -> None:
    """Have ``pool`` start its ``workers`` processes (one each per ``submit`` of a no-op)."""
    with suppress(RuntimeError, BrokenProcessPool):  # shut down or broken already: the ingest says why
        for _ in range(workers):
            pool.submit(int)


def _read_in_pool(
    pool: Executor, chunks: Iterable[Chunk], commits: _Commits, workers: int, staging: Path,
    file_timeout_s: float | None,
) -> None:  # fmt: skip
    """Read the chunks in ``pool``, up to ``2 * workers + 1`` in flight, finished in order."""
    in_flight: deque[tuple[Chunk, Future[_Outcome | RangeOutcome]]] = deque()
    for chunk in chunks:
        future: Future[_Outcome | RangeOutcome]
        if chunk.split is not None:
            work, index = chunk.split
            future = pool.submit(read_range_work, work, work.spans, index, staging, file_timeout_s)
        elif chunk.work:
            future = pool.submit(read_chunk, chunk.work, staging, file_timeout_s)
        else:  # nothing to read: no round trip to a worker
            future = Future()
            future.set_result(([], StagedGroup((), ())))
        in_flight.append((chunk, future))
        if len(in_flight) > 2 * workers:
            commits.finish(*_result(in_flight.popleft()))
    while in_flight:
        commits.finish(*_result(in_flight.popleft()))


def _compact_if_many(store: Store, manifest: Manifest, compact_over: int | None) -> None:
    """Compact the store when a table has more than ``compact_over`` small files (None: never).

    Batches of small files are multi-source files already; what counts is how many
    small files a query of a table has to open.
    """
    if compact_over is None:
        return
    small = Counter(f.table for f in manifest.files if f.rows < SMALL_FILE_ROWS)
    if any(n > compact_over for n in small.values()):
        store.compact()


def ingest_paths(
    paths: Sequence[str | Path],
    store: Store,
    *,
    on_file: ProgressFn | None = None,
    workers: int = 1,
    start_method: str = "forkserver",
    file_timeout_s: float | None = FILE_TIMEOUT_S,
    commit_every_files: int = COMMIT_EVERY_FILES,
    commit_every_s: float = COMMIT_EVERY_S,
    compact_over: int | None = COMPACT_OVER_FILES,
    new_only: bool = False,
    executor: Executor | None = None,
    split_bytes: int | None = SPLIT_BYTES,
) -> IngestSummary:
    """Ingest files, directories, globs and archives into a store.

    Parameters
    ----------
    paths
        Files, directories (walked), glob patterns, or archives (``.tar[.gz]``,
        ``.zip``) of any of these.
    store
        The target store (created if missing).
    on_file
        Called for each file with its result, in input order, once its chunk
        is read (progress reporting).
    workers
        Parser processes; 1 parses in this process (as does a lone file too small for ranges).
        Workers read whole chunks; hashing, planning and commits stay in this process.
    start_method
        How worker processes start (a :mod:`multiprocessing` start method; ``"forkserver"`` by default,
        why in :func:`worker_pool`).  As with any start method but fork, a script that calls this with
        workers needs the ``if __name__ == "__main__":`` guard.
    file_timeout_s
        A file whose reading takes longer is quarantined (``None``: no limit).
    commit_every_files, commit_every_s
        Long ingests commit in batches so an interruption keeps finished work;
        a chunk (committed whole) holds at most ``commit_every_files`` files.
    compact_over
        When a table ends up with more files of fewer than
        :data:`~phaseline.store.SMALL_FILE_ROWS` rows than this, the store is
        compacted (:meth:`~phaseline.store.Store.compact`); ``None``
        never compacts.
    new_only
        Resume an ever-growing directory: a file the store already holds
        under its key (its resolved path) with the same size is reported
        ``unchanged`` without being hashed or read (history files do not
        change once written; a file that grew is hashed and read again).
        Archives are always unpacked (their members are the store's keys).
    executor
        Reads chunks instead of worker processes (``executor.submit(read_chunk, ...)``,
        the futures' results come back here): Spark tasks, :mod:`ingest.spark_ingest`.
        ``workers`` then sizes the chunks and how many are in flight.
    split_bytes
        A plain ``.jhist`` this large is read in ranges by the workers (:func:`_split`); ``None``: never.

    Returns
    -------
    IngestSummary
        One :class:`FileResult` per file, unchanged files included.
    """
    found = list(resolved_files(paths))
    workers = _useful_workers(found, workers, executor, split_bytes)
    live = Live.of(store.sources(), new_only)
    chunk_files = _chunk_files(len(found), workers, commit_every_files)
    with ExitStack() as stack:
        txn = stack.enter_context(store.begin())
        txn.is_copy = is_copy
        pool = executor if executor is not None else worker_pool(stack, workers, start_method)
        commits = _Commits(txn, on_file, commit_every_files, commit_every_s, file_timeout_s)
        chunks = Planner(found, live, txn, stack, *_split(workers, executor, split_bytes)).chunks(chunk_files)
        if pool is None:
            for chunk in chunks:
                commits.finish(chunk, read_chunk(chunk.work, txn.staging, file_timeout_s))
        else:
            _read_in_pool(pool, chunks, commits, workers, txn.staging, file_timeout_s)
        manifest = txn.commit()
    _compact_if_many(store, manifest, compact_over)
    return IngestSummary(tuple(commits.results))


def _useful_workers(
    found: Sequence[tuple[Path, Path]], workers: int, executor: Executor | None, split_bytes: int | None
) -> int:
    """``workers``, or 1 where there is one file, not an archive, that the workers would not read in ranges
    (:func:`~ingest.plan.read_in_ranges`): there is nothing to share among processes, and starting them would
    be all they add."""
    if workers <= 1 or executor is not None or len(found) != 1:
        return workers
    path = found[0][0]
    try:
        return workers if is_archive(path) or read_in_ranges(path, split_bytes) else 1
    except OSError:  # gone or unreadable: the read names it, as with workers
        return workers


def _split(workers: int, executor: Executor | None, split_bytes: int | None) -> tuple[int | None, int]:
    """The size from which a file is read in ranges, and in how many: two per worker process
    (:mod:`ingest.split_reading`: the same rows as read whole); none with one process or an executor."""
    return (split_bytes, 2 * workers) if workers > 1 and executor is None and split_bytes is not None else (None, 0)


def _result(item: tuple[Chunk, Future[_Outcome | RangeOutcome]]) -> tuple[Chunk, _Outcome | RangeOutcome]:
    chunk, future = item
    return chunk, future.result()
