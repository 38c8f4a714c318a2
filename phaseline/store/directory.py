"""The store directory: its manifest, its write lock, and the files no manifest names any more.

:class:`Store` reads the committed generation (:meth:`Store.manifest`,
:meth:`Store.sources`, :meth:`Store.connect`), starts transactions
(:meth:`Store.begin`, :mod:`phaseline.store.transaction`), compacts
(:mod:`phaseline.store.compaction`) and removes what no manifest references.
The guarantees these keep together are listed in :mod:`phaseline.store`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.arrow import column
from phaseline.errors import StoreError, StoreLockedError, first_line
from phaseline.store.compaction import MIN_SMALL_FILES, SMALL_FILE_ROWS, compact
from phaseline.store.files import conform, fsync_dir, staging_in_use, write_parquet
from phaseline.store.manifest import DataFile, Manifest, Retired, parse_manifest
from phaseline.store.transaction import Transaction
from phaseline.store.views import create_views, duckdb_memory

if TYPE_CHECKING:
    import duckdb

    from phaseline.store.partitioned import PartitionFilter, PartitionSpec

DEFAULT_STORE = "phaseline-store"
LOCK_TIMEOUT_S = 600.0
#: Seconds a file replaced by a commit or a compaction stays on disk for readers of older generations.
RETAIN_REPLACED_S = 3600.0


def default_store_path() -> Path:
    """``$PHASELINE_STORE`` or ``./phaseline-store``."""
    return Path(os.environ.get("PHASELINE_STORE") or DEFAULT_STORE)


class Store:
    """A phaseline store directory.

    Parameters
    ----------
    root
        The store directory; created on first write.
    where
        For the root of a partitioned store (:mod:`phaseline.store.partitioned`): the partitions
        that :meth:`connect`, :meth:`compact` and :meth:`partitions` read (``{"day":
        ("2026-11-28",)}``); the others are never opened.  A store of its own has no partitions
        to choose: those methods raise :class:`StoreError` when it is given one.
    """

    def __init__(self, root: str | Path | None = None, *, where: PartitionFilter | None = None) -> None:
        self.root = Path(root) if root is not None else default_store_path()
        #: Seconds replaced files stay on disk (:data:`RETAIN_REPLACED_S`).
        self.retain_s = RETAIN_REPLACED_S
        #: The partitions read of a partitioned root (``None``: all of them).
        self.where: PartitionFilter | None = dict(where) if where else None

    # -- reading -----------------------------------------------------------------

    @property
    def manifest_path(self) -> Path:
        return self.root / "MANIFEST.json"

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def manifest(self) -> Manifest:
        """The committed manifest (an empty one for a store never written)."""
        return self._parse_manifest(self._manifest_bytes())

    def _manifest_bytes(self) -> bytes | None:
        """The manifest file's bytes (``None`` for a store never written)."""
        try:
            return self.manifest_path.read_bytes()
        except FileNotFoundError:
            if self.root.exists() and not self.root.is_dir():
                raise StoreError(f"{self.root} is not a directory") from None
            return None

    def _parse_manifest(self, raw: bytes | None) -> Manifest:
        return parse_manifest(raw, self.manifest_path)

    def is_root(self) -> bool:
        """Whether this is the root of a partitioned store (no store itself, partition stores under
        it), or is told to choose partitions (``where``: then :meth:`partitions` says if it can)."""
        from phaseline.store.partitioned import is_partitioned  # (it imports Store)

        return self.where is not None or is_partitioned(self.root)

    def partitions(self) -> list[tuple[PartitionSpec, Store]]:
        """The partition stores read (:func:`~phaseline.store.partitioned.select_partitions` by
        ``where``): a store of its own is its only partition, without keys."""
        from phaseline.store.partitioned import select_partitions

        return select_partitions(self.root, self.where) if self.is_root() else [((), self)]

    def sources(self, manifest: Manifest | None = None) -> pa.Table:
        """The ``sources`` table of a generation (empty table for a new store)."""
        manifest = manifest or self.manifest()
        spec = schemas.SOURCES
        if manifest.sources_file is None:
            return pa.Table.from_batches([], schema=spec.schema)
        path = self.root / manifest.sources_file
        try:
            # Not pq.read_table nor Schema.empty_table: both import pandas, ~0.25 s of every ingest's start-up.
            return conform(pq.ParquetFile(path).read(), spec)
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise StoreError(f"{path}: the sources table cannot be read ({exc}); see `phaseline verify`") from exc

    def connect(self, manifest: Manifest | None = None) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with the store's tables as views.

        Schema ``raw`` holds one view per table over every row of every source.
        The default schema's views, the ones to query, hold the same rows except
        where several sources describe one unit (:attr:`~phaseline.schemas.TableSpec.unit`:
        the same job, task, attempt or counter set; say a 0.20 history log and
        Rumen's parse of it): there only the preferred source's rows of that unit
        are kept, so nothing is counted twice.  The sources of a job are ranked
        once, for all tables: a first-hand format before a derived one
        (:data:`~phaseline.schemas.DERIVED_FORMATS`), a source whose successful
        tasks fit its own job totals before one with more (edited by hand, or
        two runs under one id), the job's own complete history before its task
        logs (:data:`~phaseline.schemas.HISTORY_FORMATS`: an attempt's launch and
        end as the ApplicationMaster recorded them), the source with more rows
        about the job (a complete copy before a truncated one), a landed
        source before a partial one, the first path in sort order.  A derived
        source stands in only where no first-hand one has rows of the table for
        the job; it adds no unit to a first-hand account.  Sources that say the
        job was submitted at another time than the kept one (by more than
        :data:`SAME_RUN_SLACK_MS`) are another run under the same id: they add
        nothing, and ``phaseline verify`` names them.  The temporary table
        ``overlapping_sources`` (``table_name, job_id, path, format, rows,
        preference, stand_in, other_run, submit_ms``; preference 1 is kept; a
        ``stand_in`` source adds no unit to the others') lists every such case.

        A directory that is no store but holds partition stores (``day=2026-11-28/``...,
        :mod:`phaseline.store.partitioned`) gives the partitions' unions, with the keys as
        VARCHAR columns (:func:`~phaseline.store.partitioned.connect_partitions`), of the
        partitions ``where`` chooses.
        """
        import duckdb  # loaded by duckdb_memory already

        if manifest is None and self.is_root():
            from phaseline.store.partitioned import connect_partitions  # (it imports Store)

            return connect_partitions(self.root, self.partitions())
        manifest = manifest or self.manifest()
        con = duckdb_memory()
        try:
            create_views(con, self.root, manifest)
        except duckdb.Error as exc:
            raise StoreError(
                f"{self.root}: the store's files cannot be read ({first_line(exc)}); see `phaseline verify`"
            ) from exc
        return con

    # -- writing -----------------------------------------------------------------

    def begin(self) -> Transaction:
        """Start staging files; nothing is visible until :meth:`Transaction.commit`.

        A partitioned root is refused: a manifest written there would make the root one store
        and hide its partitions from every reader.
        """
        if self.is_root():
            raise StoreError(
                f"{self.root}: a root of partition stores is read, not written; write into one "
                "partition's store (`phaseline ingest --partition-by` chooses it)"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        return Transaction(self)

    @contextlib.contextmanager
    def lock(self, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """Hold the store's exclusive write lock."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise StoreLockedError(
                            f"{self.root}: another phaseline process holds the write lock "
                            f"for more than {timeout_s:.0f} s"
                        ) from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _write_manifest(self, manifest: Manifest) -> bytes:
        """Replace the manifest atomically (fsynced, then renamed); returns the bytes written."""
        tmp = self.root / f".MANIFEST.{uuid.uuid4().hex}.tmp"
        # orjson: ~0.013 s per commit for the ~15 MB manifest of 20,000 sources (json.dumps: ~0.1 s)
        data = orjson.dumps(manifest.to_json(), option=orjson.OPT_INDENT_2)
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.manifest_path)
        fsync_dir(self.root)
        return data

    def _without_sources(
        self, files: Sequence[DataFile], removed: set[str], sha_of: Mapping[str, str], segment: str
    ) -> list[DataFile]:
        """``files`` minus the rows of the ``removed`` sources (by path); call with the lock held.

        A single-source file of a removed source is dropped; a compacted file
        holding other sources too is rewritten without the removed sources' rows
        (identified by ``source_sha256``, unique within a compacted file).
        """
        kept: list[DataFile] = []
        for f in files:
            gone = removed.intersection(f.sources)
            if not gone:
                kept.append(f)
                continue
            rest = tuple(src for src in f.sources if src not in gone)
            if not rest:
                continue
            try:
                table = pq.read_table(self.root / f.path)
            except (OSError, ValueError, pa.ArrowException) as exc:
                raise StoreError(
                    f"{self.root / f.path}: cannot be rewritten without the sources replaced now "
                    f"({first_line(exc)}); see `phaseline verify`"
                ) from exc
            drop = column([sha_of[src] for src in gone if src in sha_of], pa.string())
            table = table.filter(pc.invert(pc.is_in(table.column("source_sha256"), value_set=drop)))
            rel = f"data/{segment}/{f.table}/rewrite-{uuid.uuid4().hex[:12]}.parquet"
            write_parquet(self.root / rel, table, f.table)
            kept.append(DataFile(f.table, rel, rest, table.num_rows, f.schema))
        return kept

    def compact(
        self, *, min_files: int = MIN_SMALL_FILES, target_rows: int = 2_000_000, small_rows: int = SMALL_FILE_ROWS
    ) -> int:
        """Merge small Parquet files of each table into few large ones; returns files merged
        (:func:`phaseline.store.compaction.compact`).  A partitioned root: in each of its
        :meth:`partitions`, one after the other (each atomically)."""
        if self.is_root():
            return sum(
                one.compact(min_files=min_files, target_rows=target_rows, small_rows=small_rows)
                for _, one in self.partitions()
            )
        return compact(self, min_files=min_files, target_rows=target_rows, small_rows=small_rows)

    def collect_garbage(self, manifest: Manifest) -> int:
        """Delete data, meta and staging files the manifest does not reference; returns how many.

        Call with the lock held.  Retired files still in their retention are
        referenced; staging directories of transactions still in progress in
        other processes are kept (they hold their own marker lock).
        """
        live = manifest.referenced()
        removed = 0
        for sub in ("data", "meta"):
            base = self.root / sub
            if not base.exists():
                continue
            for path in base.rglob("*.parquet"):
                rel = path.relative_to(self.root).as_posix()
                if rel not in live:
                    path.unlink(missing_ok=True)
                    removed += 1
            for d in sorted((p for p in base.rglob("*") if p.is_dir()), reverse=True):
                with contextlib.suppress(OSError):
                    d.rmdir()  # only empty ones
        tmp = self.root / ".tmp"
        if tmp.exists():
            for d in tmp.iterdir():
                if not staging_in_use(d):
                    shutil.rmtree(d, ignore_errors=True)
                    removed += 1
        for stale in self.root.glob(".MANIFEST.*.tmp"):
            stale.unlink(missing_ok=True)
        return removed

    def _retire(
        self, before: Manifest, files: Sequence[DataFile], sources_file: str | None
    ) -> tuple[tuple[Retired, ...], list[str]]:
        """The ``retired`` list of the generation after ``before`` (whose files are ``files`` and
        ``sources_file``), and the retired paths whose retention has passed (to delete once the
        new manifest is written).  Call with the lock held."""
        now = time.time()
        live = {f.path for f in files}
        gone = [f.path for f in before.files if f.path not in live]
        if before.sources_file and before.sources_file != sources_file:
            gone.append(before.sources_file)
        kept: list[Retired] = []
        expired: list[str] = []
        for r in before.retired:
            if r.path in live:  # (names are never used twice; a live file is never deleted)
                continue
            if now - r.at >= self.retain_s:
                expired.append(r.path)
            else:
                kept.append(r)
        return (*kept, *(Retired(p, now) for p in gone)), expired

    def _delete(self, paths: Sequence[str]) -> None:
        """Delete files (relative paths) and the data directories they leave empty."""
        parents: set[Path] = set()
        for rel in paths:
            path = self.root / rel
            path.unlink(missing_ok=True)
            parents.update((path.parent, path.parent.parent))
        for d in sorted(parents, key=lambda p: len(p.parts), reverse=True):
            if d.is_relative_to(self.root / "data"):
                with contextlib.suppress(OSError):
                    d.rmdir()  # only empty ones
