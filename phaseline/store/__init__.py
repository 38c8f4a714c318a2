"""The store: Parquet files per table, a manifest, and DuckDB views over them.

Layout of a store directory::

    MANIFEST.json                  the one source of truth (replaced atomically)
    meta/sources-<gen>.parquet     the ``sources`` table of generation <gen>
    data/<segment>/<table>/<name>.parquet
                                   one file per (ingested file, table), or per
                                   (chunk of small files, table), or compacted
    .tmp/                          staging of uncommitted ingests
    .lock                          advisory write lock (fcntl)

Guarantees
----------
* **Atomic per file.** A file's rows are staged outside ``data/`` and become
  visible only when a new ``MANIFEST.json`` is renamed into place.  A crash or
  kill at any moment leaves the old manifest (the store as it was) or the new
  one (the store after); staged or orphaned Parquet files are never referenced
  and are removed by the first commit of the next ingest.  Sources staged
  together (:class:`~phaseline.staged_batch.StagedGroup`) may share data files
  and are published by one commit (one already live with the same content is
  left out of the shared files).
* **Readers keep reading.** A file that a commit or a compaction replaces
  leaves the manifest's ``files`` for its ``retired`` list and stays on disk
  for :data:`RETAIN_REPLACED_S`: a reader that opened the store before (its
  views name the old files) goes on reading the generation it opened.  A
  later commit or compaction deletes the retired files whose time has passed.
* **Idempotent.** A file whose content hash is already live is not written
  again; a changed file at the same path replaces its earlier rows in the same
  commit that adds the new ones.
* **Concurrent ingests.** Parsing happens without the lock; commits are
  serialised by an exclusive ``flock`` and re-read the manifest under it.

Readers open the manifest once and get a DuckDB connection with one view per
table of :data:`phaseline.schemas.TABLES`; such a connection reads the
generation it opened for :data:`RETAIN_REPLACED_S` at least.

The parts, mechanism first, then the one policy:

=====================  =====================================================
``manifest``           what a generation holds (:class:`Manifest`) and its JSON
``files``              durable writes, the filesystem sync, staging markers
``directory``          :class:`Store`: reading, the write lock, garbage
``transaction``        :class:`Transaction`: stage, then commit atomically
``compaction``         merging small files
``views``              the ``raw`` DuckDB views over a generation's files
``one_account``        the policy: one account per job where sources overlap
``partitioned``        a root of partition stores (``day=.../cluster=...``) read as one
``sql/``               the SQL of the views and of ``phaseline verify``
=====================  =====================================================
"""

from phaseline.store.compaction import MIN_SMALL_FILES, SMALL_FILE_ROWS
from phaseline.store.directory import (
    DEFAULT_STORE,
    LOCK_TIMEOUT_S,
    RETAIN_REPLACED_S,
    Store,
    default_store_path,
)
from phaseline.store.files import sync_filesystem
from phaseline.store.manifest import EMPTY_MANIFEST, DataFile, Manifest, Retired, schema_fingerprint
from phaseline.store.one_account import SAME_RUN_SLACK_MS
from phaseline.store.partitioned import (
    PartitionFilter,
    PartitionSpec,
    connect_partitions,
    describe_filter,
    find_partitions,
    is_partitioned,
    partition_dir,
    partition_filter,
    partitions,
    select_partitions,
)
from phaseline.store.transaction import COPY_OF, Transaction

__all__ = [
    "COPY_OF",
    "DEFAULT_STORE",
    "EMPTY_MANIFEST",
    "LOCK_TIMEOUT_S",
    "MIN_SMALL_FILES",
    "RETAIN_REPLACED_S",
    "SAME_RUN_SLACK_MS",
    "SMALL_FILE_ROWS",
    "DataFile",
    "Manifest",
    "PartitionFilter",
    "PartitionSpec",
    "Retired",
    "Store",
    "Transaction",
    "connect_partitions",
    "default_store_path",
    "describe_filter",
    "find_partitions",
    "is_partitioned",
    "partition_dir",
    "partition_filter",
    "partitions",
    "schema_fingerprint",
    "select_partitions",
    "sync_filesystem",
]
