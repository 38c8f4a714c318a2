"""YARN's aggregated logs in the indexed format, as a NodeManager uploads them (one file per node and
application), read as the ``yarn logs`` output they hold, which :mod:`ingest.yarn_logs` reads.

Hadoop 3.1+ writes this format where ``yarn.log-aggregation.file-formats`` names ``IFile``
(``LogAggregationIndexedFileController``; files under ``<dir>/<user>/bucket-logs-ifile/<nnnn>/<app>/``)::

    the application's UUID (32 bytes) | each log file's bytes, stored by the meta's codec
    | the IndexedLogsMeta (Java serialization) | int32 its length | the UUID

Rolling aggregation appends another cycle (logs, the meta of every cycle so far, length, UUID), so
the meta at the end names every file.  It is read with javaobj-py3, which parses Java's
serialization stream without loading or running any class: per upload cycle the node's file name,
per container its files, each with its name, start, stored and raw size and modification time;
the codec (``compressName``: ``none``, ``gz``, ``snappy``, ``zstd``) is Hadoop's
``Compression.Algorithm`` (:func:`ingest.yarn_tfile.stored_bytes`).  A file is one of these when
it ends with the 32 bytes it starts with and a Java serialization stream of the stated length
stands before them.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from ingest.compression import ChunkStream, kept_until_damage
from ingest.yarn_log_frames import frame_end, frame_head, log_time
from ingest.yarn_tfile import stored_bytes

_UUID = 32
_TAIL = 4 + _UUID
_JAVA_STREAM = b"\xac\xed\x00\x05"
_READ = 1 << 18


def _meta_at(fh: IO[bytes], size: int, uuid: bytes) -> tuple[int, int] | None:
    """``(offset, length)`` of the serialized meta, or ``None`` when the file does not end as one does."""
    if size < _UUID + _TAIL or len(uuid) < _UUID:
        return None
    fh.seek(size - _TAIL)
    tail = fh.read(_TAIL)
    if tail[4:] != uuid[:_UUID]:
        return None
    length: int = struct.unpack(">i", tail[:4])[0]
    offset = size - _TAIL - length
    if length <= 0 or offset < _UUID:
        return None
    fh.seek(offset)
    return (offset, length) if fh.read(4) == _JAVA_STREAM else None


def is_ifile(path: Path, head: bytes) -> bool:
    """An indexed-format aggregated log: its end repeats its first 32 bytes after a Java stream's length."""
    try:
        with open(path, "rb") as fh:
            return _meta_at(fh, path.stat().st_size, head[:_UUID]) is not None
    except OSError:
        return False


def _fields(obj: Any) -> dict[str, Any]:
    """A deserialized Java object's fields by name (of its class and its superclasses)."""
    data = getattr(obj, "field_data", None)
    if not isinstance(data, Mapping):
        raise OSError(f"corrupt IFile meta: {type(obj).__name__} where an object was expected")
    return {f.name: v for fields in data.values() for f, v in fields.items()}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def rendered(path: Path) -> Iterator[bytes]:
    """The ``yarn logs`` output of the indexed-format file at ``path``, a piece at a time (``OSError``
    where its index or start is damaged, ``EOFError`` where a later log is)."""
    return kept_until_damage(_rendered(path))


def _rendered(path: Path) -> Iterator[bytes]:
    from javaobj.v2.main import loads  # (its import costs ~0.07 s: only here)

    size = path.stat().st_size
    with open(path, "rb") as fh:
        found = _meta_at(fh, size, fh.read(_UUID))
        if found is None:
            raise OSError("not an indexed-format (IFile) aggregated log: its trailer is missing")
        fh.seek(found[0])
        try:
            meta = _fields(loads(fh.read(found[1])))
            codec = _text(meta.get("compressName") or "none")
            cycles = list(meta["logMetas"])
        except Exception as exc:  # (javaobj raises errors of many kinds on a damaged stream)
            raise OSError(f"corrupt IFile meta: {exc!r}") from None
        for container, node, entry in _entries(cycles, path.name):
            log = _fields(entry)
            try:
                name, start, stored = _text(log["fileName"]), int(log["startIndex"]), int(log["fileCompressedSize"])
                modified, length = log_time(int(log["lastModifiedTime"])), int(log["fileSize"])
            except (KeyError, TypeError, ValueError, OverflowError, OSError) as exc:
                raise OSError(f"corrupt IFile meta: {container}'s file entry: {exc!r}") from None
            if not _UUID <= start <= start + stored <= found[0]:
                raise OSError(f"corrupt IFile meta: {container}'s {name} at {start:,} (+{stored:,}) is "
                              "outside the file's logs")  # fmt: skip
            yield frame_head(_text(container), node, name, modified, length)
            yield from stored_bytes(fh, codec, start, stored)
            yield frame_end(name)


def _entries(cycles: list[Any], file_name: str) -> Iterator[tuple[str, str, Any]]:
    """``(container, node, file entry)`` of every upload cycle's containers, in the index's order."""
    try:
        for cycle in cycles:
            per = _fields(cycle)
            node = _text(per.get("remoteNodeLogFileName") or file_name)
            for container, files in dict(per.get("logMetas") or {}).items():
                for entry in files:
                    yield _text(container), node, entry
    except (TypeError, ValueError, AttributeError) as exc:  # (an index whose shape is not IndexedLogsMeta's)
        raise OSError(f"corrupt IFile meta: {exc!r}") from None


def open_rendered(path: Path) -> io.BufferedReader:
    """:func:`rendered` as a buffered stream."""
    return io.BufferedReader(ChunkStream(rendered(path)), _READ)
