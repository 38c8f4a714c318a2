"""Walk paths, detect formats, run readers, commit rows to the store.

Each file lands whole or not at all (see :mod:`phaseline.store`): a reader
error quarantines the file (its ``sources`` row says where and what), a
truncated file lands what came before the cut, and the other files of the same
ingest land regardless.  Per file the pipeline counts events read and rows
written, so nothing is dropped silently.

Files are read in chunks (up to :data:`CHUNK_FILES` files or
:data:`CHUNK_BYTES` bytes); a chunk's small files share one staged Parquet file
per table (:class:`~phaseline.staged_batch.StagedBatch`), because a Parquet
file per (file, table) cost more than reading a small history file.  Chunks are
read in this process or, with ``workers > 1``, in worker processes, which stage
into the transaction's staging directory; the parent hashes, plans and commits.
A per-file time limit turns a reader that hangs on hostile input into a
quarantined file instead of a stuck ingest.
"""

from __future__ import annotations

import glob
import hashlib
import multiprocessing
import os
import re
import signal
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from ingest.archives import MAX_NESTING, MAX_UNPACKED_BYTES, is_archive, unpacked
from ingest.base import NotATraceError, ReadContext, RowBlock, read_head
from ingest.formats import Format, detect, formats
from phaseline.errors import PhaselineError, SchemaError, TraceParseError, TraceTruncatedError
from phaseline.schemas import SourceStatus
from phaseline.staged_batch import StagedBatch, StagedGroup
from phaseline.staging import SourceRecord, StagedSource
from phaseline.store import COPY_OF, SMALL_FILE_ROWS, Store, Transaction

COMMIT_EVERY_FILES = 500
#: Files read as one unit (by one worker, committed together); their small files share staged files.
CHUNK_FILES = 64
#: Bytes of input that close a chunk early (a large file is a chunk of its own).
CHUNK_BYTES = 32 << 20
COMMIT_EVERY_S = 30.0
FILE_TIMEOUT_S = 600.0
COMPACT_OVER_FILES = 256
_SKIP_NAMES = {"MANIFEST.json", ".lock"}
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileResult:
    """What became of one file."""

    path: str
    sha256: str
    format: str | None
    status: str  # a SourceStatus value, or "unchanged"
    error: str | None
    events_read: int
    rows: dict[str, int]
    rows_quarantined: int = 0
    unknown: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def rows_written(self) -> int:
        return sum(self.rows.values())


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


def iter_files(paths: Iterable[str | Path], keep_dir: Callable[[Path], bool] | None = None) -> Iterator[Path]:
    """Files under the given paths: directories are walked, globs expanded, order is stable.

    Hidden files and directories (``.name``) inside walked directories are skipped,
    and so are a phaseline store met on the way and entries that are not regular
    files (FIFOs, sockets, devices, broken symbolic links).  ``keep_dir``: a
    directory met while walking for which it is false is not entered (a date
    window over a history server's ``done/`` tree, :mod:`ingest.history_dirs`).
    """
    return (path for path, _ in _iter_resolved(paths, keep_dir))


def _iter_resolved(
    paths: Iterable[str | Path], keep_dir: Callable[[Path], bool] | None = None
) -> Iterator[tuple[Path, Path]]:
    """:func:`iter_files`' files, each with its resolved path (what a store key is made of)."""
    seen: set[Path] = set()  # resolved: a file reached by a link or by another spelling is read once
    for raw in paths:
        text = str(raw)
        matches = (
            [Path(m) for m in sorted(glob.glob(text, recursive=True))]
            if glob.has_magic(text) and not os.path.lexists(text)  # `run[1].jhist` may be a name
            else [Path(text)]
        )
        if not matches:
            raise PhaselineError(f"{text}: no such file or directory")
        for path in matches:
            if path.is_dir():
                for root, dirs, files in os.walk(path):
                    if _is_store(Path(root)):
                        dirs[:] = []
                        continue  # a phaseline store, not traces
                    dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                                     and (keep_dir is None or keep_dir(Path(root) / d)))  # fmt: skip
                    for name in sorted(files):
                        if name.startswith(".") or name in _SKIP_NAMES:
                            continue
                        f = Path(root) / name
                        if not f.is_file():  # a FIFO (reading it would hang), socket, device, broken link
                            continue
                        if (real := f.resolve()) not in seen:
                            seen.add(real)
                            yield f, real
            elif path.exists():
                if not path.is_file():
                    raise PhaselineError(f"{path}: not a regular file (a FIFO, socket or device is not read)")
                if (real := path.resolve()) not in seen:
                    seen.add(real)
                    yield path, real
            else:
                raise PhaselineError(f"{path}: no such file or directory")


def _key_text(name: str) -> str:
    """A file name as a store key: text UTF-8 can hold.  Bytes of a name that are not UTF-8
    (kept by Python as lone surrogates) are written ``\\xff``, so that two such names stay two
    keys and the same name gives the same key in every ingest."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = name.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate that stands for no byte
            raw = name.encode("utf-8", "surrogatepass")
        return raw.decode("utf-8", "backslashreplace")
    return name


def _is_store(root: Path) -> bool:
    """A phaseline store's root: its manifest, and its data or (a store holding only skipped
    sources has no data yet) its sources directory."""
    return (root / "MANIFEST.json").is_file() and ((root / "data").is_dir() or (root / "meta").is_dir())


def sha256_file(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


_JOB_IN_NAME = re.compile(r"job_(?:local)?\d+_\d+")


def _name_job(key: str) -> str | None:
    match = _JOB_IN_NAME.search(key.rsplit("/", 1)[-1])
    return match.group(0) if match else None


class _Copies:
    """Which landed source a file is a copy of: the same bytes, and, for formats whose reader
    may take the job id from the file name (:attr:`~ingest.formats.Format.job_from_name`: conf
    XML), the same job id in the name.

    Two byte-identical confs named for different jobs are two sources; a ``.jhist`` copied
    under any other name is one (its events name its job), so it is skipped, not read twice.
    The format is only sniffed when the bytes match an earlier file's.
    """

    def __init__(self) -> None:
        self._by_sha: dict[str, dict[str | None, str]] = {}  # sha256 -> job id in the name -> key
        self._sha_of: dict[str, str] = {}

    def add(self, key: str, sha256: str) -> None:
        """``key`` now holds these bytes (a key read again with new bytes no longer holds the old)."""
        old = self._sha_of.get(key)
        if old is not None and old != sha256:
            held = self._by_sha.get(old, {})
            for job in [j for j, k in held.items() if k == key]:
                del held[job]
        self._sha_of[key] = sha256
        self._by_sha.setdefault(sha256, {}).setdefault(_name_job(key), key)

    def twin(self, key: str, sha256: str, member: Path) -> str | None:
        """The key of an earlier file ``key`` (read from ``member``) is a copy of, or None."""
        seen = self._by_sha.get(sha256)
        if not seen:
            return None
        job = _name_job(key)
        if job in seen:
            return seen[job]
        fmt = detect(member)
        if fmt is not None and fmt.job_from_name:
            return None
        return next(iter(seen.values()))


def _is_copy(key: str, fmt_name: str | None, other: str) -> bool:
    """Whether a file read as ``fmt_name`` is a copy of ``other``, which holds the same bytes
    (:class:`_Copies`' rule, for what the store finds at commit)."""
    if _name_job(key) == _name_job(other):
        return True
    fmt = next((f for f in formats() if f.name == fmt_name), None)
    return not (fmt is not None and fmt.job_from_name)


@dataclass(frozen=True, slots=True)
class _Work:
    """One file to read: its store key, where its bytes are, and their hash."""

    key: str
    path: Path
    sha256: str
    size: int


class _FileTimeout(PhaselineError, TimeoutError):
    pass


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise _FileTimeout("reading took longer than the per-file time limit")


def _by_key(message: str, work: _Work) -> str:
    """``message`` naming the file by its store key: an archive member is read from a temporary
    copy whose path means nothing once the ingest is over (``archive.zip!member`` does)."""
    where = str(work.path)
    if where == work.key or work.key in message:  # (already by key: a relative path is inside its key)
        return message
    return message.replace(where, work.key)


def _read_file(work: _Work, batch: StagedBatch, timeout_s: float | None) -> FileResult:
    """Read one file into ``batch`` (rows and ``sources`` row); never raises for bad content."""
    ctx = ReadContext(path=work.path, sha256=work.sha256)
    staged = StagedSource(batch.staging, work.key, work.sha256, work.size, None)

    def result(rec: SourceRecord, rows: dict[str, int]) -> FileResult:
        return FileResult(
            rec.path, rec.sha256, rec.format, rec.status, rec.error, ctx.events_read, rows,
            rec.rows_quarantined, dict(ctx.unknown), tuple(ctx.notes),
        )  # fmt: skip

    def discard(status: str, error: str, rows: dict[str, int] | None = None) -> FileResult:
        error = _by_key(error, work)
        quarantined = sum(rows.values()) if rows else 0
        rec, _ = staged.discard(status, error, events_read=ctx.events_read, rows_quarantined=quarantined)
        batch.add(rec, ())
        return result(rec, {})

    try:
        head = read_head(work.path)
        fmt: Format | None = detect(work.path, head)
    except OSError as exc:
        return discard(SourceStatus.QUARANTINED, f"{work.path}: cannot read: {exc}")
    if fmt is None:
        return discard(SourceStatus.SKIPPED, f"{work.path}: not a trace: format not recognised (no reader claims it)")
    staged.format = fmt.name
    staged.record_tables = fmt.record_tables
    if not fmt.landed:
        return discard(SourceStatus.SKIPPED, f"{work.path}: {fmt.doc}")
    status, error = SourceStatus.LANDED, None
    use_alarm = timeout_s is not None and hasattr(signal, "setitimer")
    previous = signal.signal(signal.SIGALRM, _on_alarm) if use_alarm else None
    try:
        if use_alarm and timeout_s is not None:
            signal.setitimer(signal.ITIMER_REAL, timeout_s)
        for item in fmt.read(work.path, ctx):
            if isinstance(item, RowBlock):  # n rows by column: appended whole, counted n
                staged.add_columns(item.table, item.n, item.columns, item.constants)
            else:
                staged.add(item.table, item.values)
        if ctx.cut is not None:  # a gzip stream cut short: the reader read up to the cut as the whole file
            raise ctx.cut
    except TraceTruncatedError as exc:
        status, error = SourceStatus.PARTIAL, _by_key(str(exc), work)
    except NotATraceError as exc:
        return discard(SourceStatus.SKIPPED, f"{work.path}: not a trace: {exc.why}")
    except (PhaselineError, RecursionError, MemoryError, UnicodeError, OverflowError) as exc:
        if isinstance(exc, TraceParseError):
            msg = str(exc)
        elif isinstance(exc, _FileTimeout):
            msg = f"{work.path}: {exc} ({timeout_s:g} s) after {ctx.events_read} events"
        else:
            msg = f"{work.path}: {type(exc).__name__}: {exc}"
        return discard(SourceStatus.QUARANTINED, msg, staged.rows_by_table())
    except Exception as exc:  # a reader's bug: this file is lost, not the whole batch
        if isinstance(exc, OSError):
            raise  # the machine's trouble (a disk error, a full disk), not the file's: stop
        msg = (f"{work.path}: internal error while reading it ({type(exc).__name__}: {exc}); a phaseline bug: "
               "please report it with this file")  # fmt: skip
        return discard(SourceStatus.QUARANTINED, msg, staged.rows_by_table())
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if ctx.skipped:  # unreadable records amid good ones: the rest lands, the file is partial
        first = ctx.skipped[0]
        if ctx.events_read == 0:
            return discard(SourceStatus.QUARANTINED, str(first), staged.rows_by_table())
        n = len(ctx.skipped)
        known = [e.line for e in ctx.skipped if e.line is not None]  # (a JSON document's records have none)
        where = (
            f" (line{'s' if len(known) > 1 else ''} {', '.join(map(str, known[:5]))}{', ...' if len(known) > 5 else ''})"
            if known else ""
        )
        skipped = _by_key(
            f"{n} unreadable record{'s' if n > 1 else ''} skipped{where}, {ctx.events_read} read; the first: {first}",
            work,
        )
        status, error = SourceStatus.PARTIAL, skipped if error is None else f"{error}; {skipped}"
    rows = staged.rows_by_table()
    kept = sum(rows.get(t, 0) for t in fmt.record_tables)
    if kept != ctx.events_read:
        ctx.notes.append(
            f"reconciliation: {ctx.events_read} records read, {kept} kept in {'+'.join(fmt.record_tables)}"
        )
    try:
        rec = batch.take(staged, status, error=error, events_read=ctx.events_read)
        if rec is None:  # streamed to its own files, or a second source with these bytes in the batch
            rec, files = staged.finish(status, error=error, events_read=ctx.events_read)
            batch.add(rec, files)
    except SchemaError as exc:
        return discard(SourceStatus.QUARANTINED, f"{work.path}: {exc}", rows)
    return result(rec, rows)


def _read_chunk(
    chunk: Sequence[_Work], staging: Path, timeout_s: float | None
) -> tuple[list[FileResult], StagedGroup]:
    """Read a chunk of files (in a worker or in the parent): one result per file, and their staged rows."""
    batch = StagedBatch(staging)
    results = [_read_file(work, batch, timeout_s) for work in chunk]
    return results, batch.close()


@dataclass(slots=True)
class _Chunk:
    """Files planned together, in order: a result decided without reading, or ``None`` for the next file read."""

    entries: list[tuple[Path, FileResult | None]] = field(default_factory=list)
    work: list[_Work] = field(default_factory=list)
    size: int = 0


@dataclass
class _Unpacking:
    """What the archives of one ingest may still unpack (bytes, all nesting levels together)."""

    budget: int = MAX_UNPACKED_BYTES


def _expand(
    path: Path, key: str, stack: ExitStack, unpacking: _Unpacking, depth: int = 0
) -> Iterator[tuple[str, Path, str | None]]:
    """A file, or the members of an archive (key ``archive!member``, and ``outer!inner!member``
    for archives in archives, :data:`~ingest.archives.MAX_NESTING` deep), each with the
    error that keeps it from being read (a corrupt or too deeply nested archive), if any."""
    if not is_archive(path):
        yield key, path, None
        return
    if depth > MAX_NESTING:
        yield key, path, f"{key}: an archive nested more than {MAX_NESTING} archives deep is not unpacked"
        return
    try:
        got = stack.enter_context(unpacked(path, max_bytes=unpacking.budget))
    except TraceParseError as exc:
        yield key, path, str(exc).replace(str(path), key)
        return
    unpacking.budget -= sum(m.path.stat().st_size for m in got.members if m.path is not None)
    for m in got.members:
        if m.path is None:  # damaged: recorded under its own key (the archive's bytes stand in for its own)
            yield f"{key}!{_key_text(m.name)}", path, f"{key}!{_key_text(m.name)}: {m.error}"
        else:
            yield from _expand(m.path, f"{key}!{_key_text(m.name)}", stack, unpacking, depth + 1)
    if got.error is not None:  # it broke off: the archive itself is recorded as damaged
        yield key, path, f"{key}: {got.error}"


def _known(key: str, path: Path, live_bytes: dict[str, int], live_status: dict[str, str]) -> bool:
    """A file the store holds under ``key`` with its size, not quarantined (``new_only``: not hashed again)."""
    size = live_bytes.get(key)
    if size is None or live_status.get(key) == SourceStatus.QUARANTINED:
        return False
    try:
        return path.stat().st_size == size
    except OSError:
        return False  # hashing it says why


def _unread(
    txn: Transaction, key: str, sha: str, size: int, fmt: str | None, status: str, error: str
) -> FileResult:
    """Record a file that is not read (quarantined before reading, or a copy): its sources row only."""
    rec, _ = txn.stage(key, sha, size, fmt).discard(status, error)
    return FileResult(rec.path, rec.sha256, rec.format, rec.status, rec.error, 0, {})


ProgressFn = Callable[[Path, FileResult], None]


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
        Parser processes; 1 parses in this process.  Workers read whole chunks;
        hashing, planning and commits stay in this process.
    start_method
        How worker processes start (a :mod:`multiprocessing` start method).
        ``"forkserver"`` by default, with this module preloaded: workers fork
        from a clean single-threaded server.  A plain fork copies this process
        mid-flight, with DuckDB's and Arrow's threads and whatever locks they
        hold, and a forked worker has crashed that way; ``"spawn"`` is as safe
        but starts each worker ~0.5 s slower.  ``"fork"`` lets workers inherit
        what was patched into this process (formats registered at run time).
        As with any start method but fork, a script that calls this with
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

    Returns
    -------
    IngestSummary
        One :class:`FileResult` per file, unchanged files included.
    """
    found = list(_iter_resolved(paths))
    files = [path for path, _ in found]
    sources = store.sources()
    live = dict(zip(sources.column("path").to_pylist(), sources.column("sha256").to_pylist(), strict=True))
    live_status = dict(
        zip(sources.column("path").to_pylist(), sources.column("status").to_pylist(), strict=True)
    )
    live_error = dict(zip(sources.column("path").to_pylist(), sources.column("error").to_pylist(), strict=True))
    live_bytes = (
        dict(zip(sources.column("path").to_pylist(), sources.column("bytes").to_pylist(), strict=True))
        if new_only
        else {}
    )
    copies = _Copies()
    for p, sha in live.items():
        if live_status.get(p) in (SourceStatus.LANDED, SourceStatus.PARTIAL):
            copies.add(p, sha)
    # A chunk is committed whole, so it is no larger than a commit; with workers, every
    # worker gets several chunks, or the last chunks leave all but one worker idle.
    chunk_files = max(1, min(CHUNK_FILES, commit_every_files))
    if workers > 1:
        chunk_files = max(1, min(chunk_files, -(-len(files) // (4 * workers))))
    results: list[FileResult] = []
    with ExitStack() as stack:
        txn = stack.enter_context(store.begin())
        txn.is_copy = _is_copy
        context = multiprocessing.get_context(start_method)
        if isinstance(context, multiprocessing.context.ForkServerContext):
            context.set_forkserver_preload([__name__])  # once the server runs, this is a no-op
        pool: Executor | None = executor
        if pool is None and workers > 1:
            pool = stack.enter_context(ProcessPoolExecutor(workers, mp_context=context))
        last_commit = time.monotonic()

        unpacking = _Unpacking()
        read_here: set[str] = set()  # keys read in this ingest (a copy of one is not "in the store")
        keys = [_key_text(str(real)) for _, real in found]
        not_planned = set(keys)  # a copy of one of these waits: its twin may come with new bytes

        def decide(path: Path, member_key: str, member: Path, sha: str, size: int) -> _Work | FileResult | None:
            """Read the file, or skip it as unchanged or as a copy; None: decide after the files planned."""
            live_copy = live_status.get(member_key) == SourceStatus.SKIPPED and (
                live_error.get(member_key) or ""
            ).startswith(COPY_OF)
            if (
                live.get(member_key) == sha
                and live_status.get(member_key) != SourceStatus.QUARANTINED
                and not live_copy
            ):
                return FileResult(member_key, sha, None, "unchanged", None, 0, {})
            twin = copies.twin(member_key, sha, member)
            if twin is not None and twin != member_key:
                if twin.split("!", 1)[0] in not_planned:
                    return None
                if live_copy and live.get(member_key) == sha:  # its twin still holds these bytes
                    return FileResult(member_key, sha, None, "unchanged", None, 0, {})
                where = "read in this ingest" if twin in read_here else "already in the store"
                error = f"{COPY_OF}{twin} ({where})"
                return _unread(txn, member_key, sha, size, None, SourceStatus.SKIPPED, error)
            copies.add(member_key, sha)
            read_here.add(member_key)
            return _Work(member_key, member, sha, size)

        def plan() -> Iterator[tuple[Path, _Work | FileResult]]:
            waiting: list[tuple[Path, str, Path, str, int]] = []
            for path, key in zip(files, keys, strict=True):
                not_planned.discard(key)
                if live_bytes and _known(key, path, live_bytes, live_status):
                    yield path, FileResult(key, live[key], None, "unchanged", None, 0, {})
                    continue
                for member_key, member, unreadable in _expand(path, key, stack, unpacking):
                    try:
                        sha, size = sha256_file(member)
                    except OSError as exc:
                        error = f"{member_key}: cannot read: {exc}"
                        yield path, _unread(txn, member_key, "", 0, None, SourceStatus.QUARANTINED, error)
                        continue
                    if unreadable is not None:
                        yield path, _unread(txn, member_key, sha, size, "archive", SourceStatus.QUARANTINED, unreadable)
                        continue
                    decided = decide(path, member_key, member, sha, size)
                    if decided is None:
                        waiting.append((path, member_key, member, sha, size))
                    else:
                        yield path, decided
            for path, member_key, member, sha, size in waiting:
                decided = decide(path, member_key, member, sha, size)
                assert decided is not None  # every twin is planned by now
                yield path, decided

        def chunks() -> Iterator[_Chunk]:
            chunk = _Chunk()
            for path, item in plan():
                if isinstance(item, FileResult):
                    chunk.entries.append((path, item))
                else:
                    chunk.entries.append((path, None))
                    chunk.work.append(item)
                    chunk.size += item.size
                # files decided without reading count too, so progress is reported as it is made
                if len(chunk.entries) >= chunk_files or chunk.size >= CHUNK_BYTES:
                    yield chunk
                    chunk = _Chunk()
            if chunk.entries:
                yield chunk

        def finish(chunk: _Chunk, outcome: tuple[list[FileResult], StagedGroup]) -> None:
            """Adopt a chunk's staged rows, report its files in order, commit when one is due."""
            nonlocal last_commit
            read, group = outcome
            txn.adopt_group(group)
            done = iter(read)
            for path, decided in chunk.entries:
                result = decided if decided is not None else next(done)
                results.append(result)
                if on_file is not None:
                    on_file(path, result)
            if txn.pending >= commit_every_files or (
                txn.pending and time.monotonic() - last_commit > commit_every_s
            ):
                txn.commit()
                last_commit = time.monotonic()

        if pool is None:
            for chunk in chunks():
                finish(chunk, _read_chunk(chunk.work, txn.staging, file_timeout_s))
        else:
            in_flight: deque[tuple[_Chunk, Future[tuple[list[FileResult], StagedGroup]]]] = deque()
            for chunk in chunks():
                if chunk.work:
                    future = pool.submit(_read_chunk, chunk.work, txn.staging, file_timeout_s)
                else:  # nothing to read: no round trip to a worker
                    future = Future()
                    future.set_result(([], StagedGroup((), ())))
                in_flight.append((chunk, future))
                if len(in_flight) > 2 * workers:
                    finish(*_result(in_flight.popleft()))
            while in_flight:
                finish(*_result(in_flight.popleft()))
        manifest = txn.commit()
    if compact_over is not None:
        # Batches of small files are multi-source files already; what counts is how many
        # small files a query of a table has to open.
        small = Counter(f.table for f in manifest.files if f.rows < SMALL_FILE_ROWS)
        if any(n > compact_over for n in small.values()):
            store.compact()
    return IngestSummary(tuple(results))


def _result(
    item: tuple[_Chunk, Future[tuple[list[FileResult], StagedGroup]]],
) -> tuple[_Chunk, tuple[list[FileResult], StagedGroup]]:
    chunk, future = item
    return chunk, future.result()
