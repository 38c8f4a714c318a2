"""The manifest: what one generation of a store holds, and its JSON form.

``MANIFEST.json`` is the one source of truth of a store: the data files of each
table (with the sources whose rows they hold), the ``sources`` table's file, and
the files earlier generations named that stay on disk for their readers
(``retired``).  :class:`~phaseline.store.directory.Store` reads and replaces it;
this module only says what it is.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from phaseline import schemas
from phaseline.errors import StoreError

STORE_FORMAT = "phaseline-store"
STORE_VERSION = 2  # 2: data files list several sources (compaction)


@dataclass(frozen=True, slots=True)
class DataFile:
    """One Parquet file of one table: the rows of one source, or of many after compaction."""

    table: str
    path: str  # relative to the store root
    sources: tuple[str, ...]  # the keys (``sources.path``) of the sources whose rows it holds
    rows: int
    schema: str = ""  # fingerprint of the table schema the file was written with


@dataclass(frozen=True, slots=True)
class Retired:
    """A file an earlier generation named, kept on disk for its readers until ``at`` + the retention."""

    path: str  # relative to the store root
    at: float  # Unix time it left the manifest's files


@dataclass(frozen=True, slots=True)
class Manifest:
    """The committed state of a store."""

    generation: int
    sources_file: str | None
    files: tuple[DataFile, ...]
    retired: tuple[Retired, ...] = ()

    def referenced(self) -> set[str]:
        """Every path the manifest names: its data files, its sources file, the retired files."""
        paths = {f.path for f in self.files} | {r.path for r in self.retired}
        if self.sources_file:
            paths.add(self.sources_file)
        return paths

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STORE_FORMAT,
            "version": STORE_VERSION,
            "schema_version": schemas.SCHEMA_VERSION,
            "generation": self.generation,
            "sources_file": self.sources_file,
            "files": [
                {
                    "table": f.table,
                    "path": f.path,
                    "sources": list(f.sources),
                    "rows": f.rows,
                    "schema": f.schema,
                }
                for f in self.files
            ],
            "retired": [{"path": r.path, "at": r.at} for r in self.retired],
        }


EMPTY_MANIFEST = Manifest(0, None, ())


def parse_manifest(raw: bytes | None, path: Path) -> Manifest:
    """The manifest in ``raw`` (the bytes of ``path``; ``None``: a store never written)."""
    if raw is None:
        return EMPTY_MANIFEST
    try:
        doc = orjson.loads(raw)
        if doc.get("format") != STORE_FORMAT:
            raise StoreError(f"{path}: not a phaseline store manifest")
        if doc.get("version") != STORE_VERSION:
            raise StoreError(
                f"{path}: store version {doc.get('version')} is not supported "
                f"(this phaseline reads version {STORE_VERSION})"
            )
        files = tuple(
            DataFile(
                str(f["table"]),
                str(f["path"]),
                tuple(str(x) for x in f["sources"]),
                int(f["rows"]),
                str(f.get("schema", "")),
            )
            for f in doc["files"]
        )
        retired = tuple(Retired(str(r["path"]), float(r["at"])) for r in doc.get("retired", ()))
        return Manifest(int(doc["generation"]), doc.get("sources_file"), files, retired)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StoreError(f"{path}: corrupt manifest ({exc})") from exc


def schema_fingerprint(spec: schemas.TableSpec) -> str:
    """A short hash of a table's declared schema (names and types)."""
    text = ";".join(f"{f.name}:{f.type}" for f in spec.schema)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
