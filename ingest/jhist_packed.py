"""Finished tasks or attempts of a ``.jhist`` file, packed until the file ends (:class:`Packed`).

:class:`ingest.jhist_state.HistoryState` holds a job's tasks and attempts as objects while events
may still change them, and moves the finished among the older ones here (:func:`pack_done`), so a
large history's memory stays about flat.
"""

from __future__ import annotations

import marshal
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, compress, islice
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import zstandard


class _Record(Protocol):
    status: str | None  # None until the record is finished


_R = TypeVar("_R", bound=_Record)


#: A packed id's hash sets one bit of a bitmap of this many bytes (2**21 bits, made at the first pack):
#: an id never packed, as every new one, is nearly always told so by its bit alone, without the sorted
#: index (a bisect there makes an int of every entry it probes: ~1 us at 150,000 records).  Up to
#: 150,000 records ~7 % of new ids find their bit set by another and are looked up.
_BITMAP_BYTES = 1 << 18
_BITMAP_MASK = _BITMAP_BYTES - 1


class Packed(Generic[_R]):
    """Finished tasks or attempts, packed: what a large history holds until its end, kept small.

    A job's rows can only be written when its file ends (a later event may
    still change a finished task or attempt), so a file of 70,000 tasks and
    attempts would hold 70,000 objects (about 1 kB each with their strings
    and ints).  Finished records are instead packed a batch at a time into
    one zstd-compressed ``marshal`` chunk of their field values (by field: each
    a tuple of the chunk's values), indexed by
    the hash of their id in one sorted array (16 bytes a record; a hash
    match is confirmed on the unpacked id).  A packed record an event touches
    again is unpacked (:meth:`take`) and lives on as an object; the rest come
    back at the end, a chunk at a time (:meth:`records`, or by field: :meth:`columns`).  ``to_values`` /
    ``from_values`` turn a record into marshal-able values and back.
    """

    def __init__(
        self,
        key: Callable[[_R], str],
        to_values: Callable[[_R], tuple[Any, ...]],
        from_values: Callable[[tuple[Any, ...]], _R],
    ) -> None:
        self.key = key
        self.to_values = to_values
        self.from_values = from_values
        self.chunks: list[bytes] = []
        self.alive: list[np.ndarray[Any, Any]] = []  # per chunk: which records are still packed there
        # The records' id hashes, sorted (an array: bisect gets no numpy scalar per look-up) ...
        self._search = array("q")
        self._where = np.empty(0, np.int64)  # ... and their records: chunk << 32 | position
        self._cached: tuple[int, list[tuple[Any, ...]]] = (-1, [])  # the last chunk unpacked (by field)
        self._bitmap = bytearray()  # which id hashes may be packed (:data:`_BITMAP_BYTES`)
        # zstd at level 1: a chunk of 1,024 attempts packed in ~0.09 ms to ~3.5 kB (zlib at level 1:
        # ~0.36 ms to ~9.7 kB), unpacked in ~0.04 ms (zlib: ~0.15 ms)
        self._zip = zstandard.ZstdCompressor(level=1)
        self._unzip = zstandard.ZstdDecompressor()

    def pack(self, records: Sequence[_R]) -> None:
        """Pack ``records`` as one chunk (the caller drops its own references)."""
        number, n = len(self.chunks), len(records)
        # By field: turned so while the records are at hand, the rows at the end are the fields
        # laid side by side (a field's values in one tuple also unmarshal faster than a tuple each).
        by_field = list(zip(*map(self.to_values, records), strict=True))
        # (copied: zstandard's result keeps the allocation of its worst-case bound, ~the uncompressed size;
        # 150,000 records packed so held ~25 MB more at their peak)
        self.chunks.append(memoryview(self._zip.compress(marshal.dumps(by_field))).tobytes())
        self.alive.append(np.ones(n, np.bool_))
        hashes = np.fromiter(map(hash, map(self.key, records)), np.int64, n)
        if not self._bitmap:
            self._bitmap = bytearray(_BITMAP_BYTES)
        bits = np.frombuffer(self._bitmap, np.uint8)
        np.bitwise_or.at(bits, (hashes >> 3) & _BITMAP_MASK, (1 << (hashes & 7)).astype(np.uint8))
        order = np.argsort(hashes, kind="stable")
        # The new chunk's hashes merged into the sorted ones (after equal ones), not all sorted again:
        # a large history's index is copied twice per chunk instead of ten times.
        at = np.searchsorted(np.frombuffer(self._search, np.int64), hashes[order], side="right")
        merged = np.insert(np.frombuffer(self._search, np.int64), at, hashes[order])
        self._where = np.insert(self._where, at, (number << 32) + order)
        self._search = array("q")
        self._search.frombytes(merged.data.cast("B"))

    def _chunk(self, number: int) -> list[tuple[Any, ...]]:
        if self._cached[0] != number:
            self._cached = (number, marshal.loads(self._unzip.decompress(self.chunks[number])))
        return self._cached[1]

    def take(self, key: str) -> _R | None:
        """The packed record with id ``key``, unpacked and no longer packed; None if there is none."""
        h = hash(key)
        bitmap = self._bitmap
        if not bitmap or not bitmap[(h >> 3) & _BITMAP_MASK] >> (h & 7) & 1:
            return None  # (never packed)
        hashes = self._search
        i = bisect_left(hashes, h)
        n = len(hashes)
        while i < n and hashes[i] == h:
            where = int(self._where[i])
            number, pos = where >> 32, where & 0xFFFFFFFF
            if self.alive[number][pos]:
                record = self.from_values(tuple(field[pos] for field in self._chunk(number)))
                if self.key(record) == key:  # not another id of the same hash
                    self.alive[number][pos] = False
                    return record
            i += 1
        return None

    def records(self) -> Iterator[_R]:
        """Every record still packed, chunk by chunk, in the order they were packed."""
        for by_field in self.columns():
            yield from map(self.from_values, zip(*by_field, strict=True))

    def columns(self) -> Iterator[list[Sequence[Any]]]:
        """The values (``to_values``) of the records still packed, by field, a chunk at a time in the
        order they were packed (a chunk whose every record was taken gives empty fields, or none):
        rows are written from them without making each record an object again."""
        for blob, alive in zip(self.chunks, self.alive, strict=True):
            by_field: list[Sequence[Any]] = marshal.loads(self._unzip.decompress(blob))
            if alive.all():
                yield by_field
            else:
                keep = alive.tolist()
                yield [list(compress(field, keep)) for field in by_field]


def pack_done(live: dict[str, _R], packed: Packed[_R]) -> None:
    """Move the finished records among the older half of ``live`` to ``packed``."""
    done = [r for r in islice(live.values(), len(live) // 2) if r.status is not None]
    if done:
        packed.pack(done)
        for r in done:
            del live[packed.key(r)]


def held(packed: Packed[_R], live: dict[str, _R]) -> Iterator[_R]:
    """Every task (or attempt): the packed ones, then those held as objects."""
    return chain(packed.records(), live.values())
