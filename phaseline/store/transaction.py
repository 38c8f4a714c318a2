"""A store's transaction: stage sources, then publish them all in one atomic commit.

Sources are staged outside ``data/`` (by this process or by workers) and adopted
here; :meth:`Transaction.commit`, under the store's write lock, moves their files
into a new segment of ``data/``, writes the next ``sources`` table, makes them durable
(:func:`~phaseline.store.files.make_durable`) and renames a new ``MANIFEST.json`` into place: before the
rename nothing is visible, after it everything is.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.arrow import column, table_from_rows
from phaseline.errors import StoreError
from phaseline.staged_batch import StagedGroup
from phaseline.staging import SourceRecord, StagedFile, StagedSource
from phaseline.store.files import make_durable, write_parquet
from phaseline.store.manifest import DataFile, Manifest, schema_fingerprint

if TYPE_CHECKING:
    from phaseline.store.directory import Store

#: How the ``sources.error`` of a file skipped as a copy begins; the key of the source holding its bytes follows.
COPY_OF = "same content as "


class Transaction:
    """Stages sources; :meth:`commit` makes them visible atomically."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
        self.staging = store.root / ".tmp" / self.id
        self.staging.mkdir(parents=True)
        self._marker_fd = os.open(self.staging / ".inuse", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._marker_fd, fcntl.LOCK_EX)
        self._done: list[StagedGroup] = []
        self._pending = 0
        #: ``is_copy(key, format, other)``: whether a source read now is a copy of ``other``, live
        #: with the same bytes (the pipeline's rule); None: the same bytes under two keys are two
        #: sources.  :meth:`commit` asks it under the lock, where another ingest's commit shows.
        self.is_copy: Callable[[str, str | None, str], bool] | None = None
        # What this transaction's last commit wrote (manifest bytes, manifest, sources): the
        # next commit reuses it when the manifest on disk is still those bytes.
        self._committed: tuple[bytes, Manifest, pa.Table] | None = None

    def stage(self, path: str, sha256: str, size: int, fmt: str | None) -> StagedSource:
        return StagedSource(self.staging, path, sha256, size, fmt, self.adopt)

    def adopt(self, record: SourceRecord, files: tuple[StagedFile, ...]) -> None:
        """Queue a finished source (staged in this transaction's directory) for the next commit."""
        self.adopt_group(StagedGroup.single(record, files))

    def adopt_group(self, group: StagedGroup) -> None:
        """Queue finished sources whose files may hold rows of several of them (a :class:`StagedBatch`).

        Each multi-source file's sources must differ in content hash (their rows
        are told apart by ``source_sha256``) and a key appears once per group.
        """
        sha_of = {r.path: r.sha256 for r in group.records}
        if len(sha_of) != len(group.records):
            raise StoreError("a staged group names one source twice")
        for f, keys in group.files:
            if any(k not in sha_of for k in keys):
                raise StoreError(f"{f.path}: staged file of a source the group does not record")
            if len(keys) > 1 and len({sha_of[k] for k in keys}) != len(keys):
                raise StoreError(f"{f.path}: sources of one staged file share a content hash")
        self._done.append(group)
        self._pending += len(group.records)

    @property
    def pending(self) -> int:
        """Sources adopted since the last commit."""
        return self._pending

    def _current(self) -> tuple[Manifest, pa.Table]:
        """The committed manifest and sources table; call with the lock held.

        After this transaction's own commit, the sources table is not read again
        while the manifest on disk is the one that commit wrote.
        """
        store = self.store
        raw = store._manifest_bytes()
        if self._committed is not None and raw == self._committed[0]:
            return self._committed[1], self._committed[2]
        manifest = store._parse_manifest(raw)
        return manifest, store.sources(manifest)

    def commit(self) -> Manifest:
        """Publish every finished source; returns the new manifest.

        A source already live at the same path with the same content is dropped
        (idempotence); one whose path is live with other content replaces it.
        Sources are keyed by path: the same bytes under two paths are two
        sources (the pipeline decides what counts as a copy).  The files it
        replaces are retired (kept for readers of the generation before,
        :data:`RETAIN_REPLACED_S`).  The first commit of a transaction also
        removes what crashed ingests left behind and the retired files whose
        retention has passed; later ones remove only the latter.
        """
        store = self.store
        with store.lock():
            current, current_sources = self._current()
            paths = current_sources.column("path").to_pylist()
            sha_of = dict(zip(paths, current_sources.column("sha256").to_pylist(), strict=True))
            status_of = dict(zip(paths, current_sources.column("status").to_pylist(), strict=True))
            segment = f"{current.generation + 1:08d}-{self.id}"
            groups, self._done, self._pending = self._done, [], 0
            # Which group's version of each source is published: the last staged, except
            # that a source live with the same content (and not quarantined) is skipped.
            winner: dict[str, int] = {}
            for i, group in enumerate(groups):
                for record in group.records:
                    live = status_of.get(record.path)
                    if (
                        record.path not in winner
                        and sha_of.get(record.path) == record.sha256
                        and live != "quarantined"
                        and not (live == "skipped" and record.status != "skipped")  # a copy read now
                    ):
                        continue  # unchanged, or committed meanwhile by another ingest
                    winner[record.path] = i
            copies = self._copies_committed_meanwhile(groups, winner, sha_of, status_of)
            new_files: list[DataFile] = []
            new_records: dict[str, SourceRecord] = {}
            for i, group in enumerate(groups):
                published = {
                    r.path: r for r in group.records if winner.get(r.path) == i and r.path not in copies
                }
                new_records.update(published)
                new_records.update((r.path, copies[r.path]) for r in group.records if r.path in copies)
                for f, keys in group.files:
                    data_file = self._publish(
                        f, tuple(k for k in keys if k in published), keys, published, segment
                    )
                    if data_file is not None:
                        new_files.append(data_file)
            if not new_records:
                return current
            keep = store._without_sources(current.files, set(new_records), sha_of, segment)
            generation = current.generation + 1
            sources_table, sources_rel = self._write_sources(current_sources, new_records, generation)
            # Every file the new manifest names (staged by this process or by workers,
            # moved into data/, and the sources file) reaches the disk before it does.
            make_durable(store.root, [*(store.root / f.path for f in new_files), store.root / sources_rel])
            files = (*keep, *new_files)
            retired, expired = store._retire(current, files, sources_rel)
            manifest = Manifest(generation, sources_rel, files, retired)
            written = store._write_manifest(manifest)
            if self._committed is None:
                store.collect_garbage(manifest)
            else:
                store._delete(expired)
            self._committed = (written, manifest, sources_table)
            return manifest

    def _write_sources(
        self, current: pa.Table, new_records: Mapping[str, SourceRecord], generation: int
    ) -> tuple[pa.Table, str]:
        """Write generation ``generation``'s ``sources`` table: ``current`` with ``new_records``
        in place of the rows of their keys; returns it and its path (relative to the store root)."""
        root = self.store.root
        kept_sources = current.filter(
            pc.invert(pc.is_in(current.column("path"), value_set=column(list(new_records), pa.string())))
        )
        sources_table = pa.concat_tables(
            [kept_sources, table_from_rows([r.as_row() for r in new_records.values()], schemas.SOURCES.schema)]
        )
        sources_rel = f"meta/sources-{generation:08d}-{self.id}.parquet"
        (root / "meta").mkdir(exist_ok=True)
        tmp = root / (sources_rel + ".tmp")
        pq.write_table(sources_table, tmp, compression="zstd", write_page_checksum=True)
        os.replace(tmp, root / sources_rel)
        return sources_table, sources_rel

    def _copies_committed_meanwhile(
        self,
        groups: Sequence[StagedGroup],
        winner: Mapping[str, int],
        sha_of: Mapping[str, str],
        status_of: Mapping[str, str],
    ) -> dict[str, SourceRecord]:
        """Sources read now whose bytes another ingest landed under another key since this one
        planned (two ingests of copies at once): each becomes a skipped copy, its rows dropped.
        ``sha_of`` and ``status_of``: the committed sources' (by key)."""
        if self.is_copy is None:
            return {}
        held: dict[str, list[str]] = {}  # sha256 -> live landed keys
        for key, sha in sha_of.items():
            if status_of[key] in ("landed", "partial") and key not in winner:
                held.setdefault(sha, []).append(key)
        copies: dict[str, SourceRecord] = {}
        for i, group in enumerate(groups):
            for r in group.records:
                if winner.get(r.path) != i or r.status not in ("landed", "partial"):
                    continue
                twin = next((k for k in held.get(r.sha256, ()) if self.is_copy(r.path, r.format, k)), None)
                if twin is not None:
                    copies[r.path] = replace(
                        r,
                        format=None,
                        status="skipped",
                        error=f"{COPY_OF}{twin} (landed by another ingest meanwhile)",
                        events_read=0,
                        rows_written=0,
                        rows_quarantined=0,
                        job_ids=(),
                    )
        return copies

    def _publish(
        self,
        staged: StagedFile,
        kept: tuple[str, ...],
        keys: tuple[str, ...],
        published: Mapping[str, SourceRecord],
        segment: str,
    ) -> DataFile | None:
        """Move a staged file into ``data/``; rows of its sources that are not published are left out."""
        if not kept:
            staged.path.unlink(missing_ok=True)
            return None
        rel = f"data/{segment}/{staged.table}/{staged.path.name}"
        dest = self.store.root / rel
        rows = staged.rows
        if kept == keys:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged.path, dest)
        else:  # a batch file holding a source that is not published: rewritten without its rows
            table = pq.read_table(staged.path)
            shas = column([published[k].sha256 for k in kept], pa.string())
            table = table.filter(pc.is_in(table.column("source_sha256"), value_set=shas))
            write_parquet(dest, table, staged.table)
            staged.path.unlink(missing_ok=True)
            rows = table.num_rows
        return DataFile(staged.table, rel, kept, rows, schema_fingerprint(schemas.table(staged.table)))

    def close(self) -> None:
        """Drop whatever was not committed and release the staging area."""
        self._done = []
        self._pending = 0
        with contextlib.suppress(OSError):
            fcntl.flock(self._marker_fd, fcntl.LOCK_UN)
            os.close(self._marker_fd)
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
