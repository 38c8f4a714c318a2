"""What an ingest does with each file before reading it: hash it, unpack archives, and decide
whether it is read, unchanged (the store holds these bytes under its key), or a copy of another
source (:class:`Copies`); then cut the files to read into chunks (:class:`Planner`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from ingest import formats
from ingest.archives import MAX_NESTING, MAX_UNPACKED_BYTES, is_archive, unpacked
from ingest.file_reading import FileResult, Work
from ingest.jhist import sniff_jhist
from ingest.jhist_split import LineCuts
from ingest.opening import HEAD_BYTES
from ingest.walk import key_text
from phaseline.errors import TraceParseError
from phaseline.schemas import SourceStatus
from phaseline.store import COPY_OF, Transaction

#: Files read as one unit (by one worker, committed together); their small files share staged files.
CHUNK_FILES = 64
#: Bytes of input that close a chunk early (a large file is a chunk of its own).
CHUNK_BYTES = 32 << 20
_HASH_CHUNK = 1 << 20


def sha256_file(path: Path, cuts: LineCuts | None = None) -> tuple[str, int]:
    """The file's hash and size; ``cuts``: fed every block too (the ranges of a file read in ranges),
    in a thread beside the hash (both let the GIL go: the workers are not reading yet)."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh, ExitStack() as stack:
        beside = stack.enter_context(ThreadPoolExecutor(1)) if cuts is not None else None
        while chunk := fh.read(_HASH_CHUNK):
            if beside is not None and cuts is not None:
                fed = beside.submit(cuts.feed, chunk)
                digest.update(chunk)
                fed.result()
            else:
                digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


_JOB_IN_NAME = re.compile(r"job_(?:local)?\d+_\d+")


def read_in_ranges(path: Path, split_bytes: int | None) -> bool:
    """Whether workers that share a file read it in ranges: a plain ``.jhist`` of ``split_bytes`` or more,
    told by its own first bytes (a compressed stream, or a binary history read as JSON lines, has no
    place to start in the middle); False where it cannot be read."""
    try:
        if split_bytes is None or path.stat().st_size < split_bytes:
            return False
        with open(path, "rb") as fh:
            return sniff_jhist(fh.read(HEAD_BYTES), path)
    except OSError:
        return False


def _name_job(key: str) -> str | None:
    match = _JOB_IN_NAME.search(key.rsplit("/", 1)[-1])
    return match.group(0) if match else None


class Copies:
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
        fmt = formats.detect(member)
        if fmt is not None and fmt.job_from_name:
            return None
        return next(iter(seen.values()))


def is_copy(key: str, fmt_name: str | None, other: str) -> bool:
    """Whether a file read as ``fmt_name`` is a copy of ``other``, which holds the same bytes
    (:class:`Copies`' rule, for what the store finds at commit)."""
    if _name_job(key) == _name_job(other):
        return True
    fmt = next((f for f in formats.formats() if f.name == fmt_name), None)
    return not (fmt is not None and fmt.job_from_name)


@dataclass(slots=True)
class Chunk:
    """Files planned together, in order: a result decided without reading, or ``None`` for the next file read."""

    entries: list[tuple[Path, FileResult | None]] = field(default_factory=list)
    work: list[Work] = field(default_factory=list)
    size: int = 0
    #: One range of a file read in ranges (the file, the range's index) instead of whole files; the
    #: file's entry is in its last range's chunk.
    split: tuple[Work, int] | None = None


@dataclass
class Unpacking:
    """What the archives of one ingest may still unpack (bytes, all nesting levels together)."""

    budget: int = MAX_UNPACKED_BYTES


def expand(
    path: Path, key: str, stack: ExitStack, unpacking: Unpacking, depth: int = 0
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
            yield f"{key}!{key_text(m.name)}", path, f"{key}!{key_text(m.name)}: {m.error}"
        else:
            yield from expand(m.path, f"{key}!{key_text(m.name)}", stack, unpacking, depth + 1)
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


def unread(
    txn: Transaction, key: str, sha: str, size: int, fmt: str | None, status: str, error: str
) -> FileResult:
    """Record a file that is not read (quarantined before reading, or a copy): its sources row only."""
    rec, _ = txn.stage(key, sha, size, fmt).discard(status, error)
    return FileResult(rec.path, rec.sha256, rec.format, rec.status, rec.error, 0, {})


@dataclass(frozen=True, slots=True)
class Live:
    """What the store holds before the ingest, by key: each source's bytes' hash, status, error,
    and (``new_only``) size."""

    sha256: dict[str, str]
    status: dict[str, str]
    error: dict[str, str | None]
    size: dict[str, int]

    @classmethod
    def of(cls, sources: pa.Table, new_only: bool) -> Live:
        """The store's ``sources`` table, by key (sizes only when ``new_only`` needs them)."""
        keys = sources.column("path").to_pylist()

        def by_key(column: str) -> dict[str, Any]:
            return dict(zip(keys, sources.column(column).to_pylist(), strict=True))

        return cls(by_key("sha256"), by_key("status"), by_key("error"), by_key("bytes") if new_only else {})

    def copies(self) -> Copies:
        """The landed sources, as the first of their bytes a later file may copy."""
        copies = Copies()
        for p, sha in self.sha256.items():
            if self.status.get(p) in (SourceStatus.LANDED, SourceStatus.PARTIAL):
                copies.add(p, sha)
        return copies


class Planner:
    """The files of one ingest in order, each read (:class:`~ingest.file_reading.Work`) or decided
    without reading (a :class:`~ingest.file_reading.FileResult`: unchanged, a copy, unreadable),
    cut into :class:`Chunk` s (:meth:`chunks`).

    A copy of a file not planned yet waits until every file is: its twin may come with new bytes.
    """

    def __init__(
        self, found: Sequence[tuple[Path, Path]], live: Live, txn: Transaction, stack: ExitStack,
        split_bytes: int | None = None, split_ranges: int = 0,
    ) -> None:  # fmt: skip
        #: A plain ``.jhist`` of ``split_bytes`` or more is read in ``split_ranges`` ranges (0: none is).
        self.split_bytes, self.split_ranges = split_bytes, split_ranges
        self.files = [path for path, _ in found]
        self.keys = [key_text(str(real)) for _, real in found]
        self.live = live
        self.txn = txn
        self.stack = stack
        self.copies = live.copies()
        self.unpacking = Unpacking()
        self.read_here: set[str] = set()  # keys read in this ingest (a copy of one is not "in the store")
        self.not_planned = set(self.keys)  # a copy of one of these waits: its twin may come with new bytes

    def decide(self, member_key: str, member: Path, sha: str, size: int) -> Work | FileResult | None:
        """Read the file, or skip it as unchanged or as a copy; None: decide after the files planned."""
        live = self.live
        live_copy = live.status.get(member_key) == SourceStatus.SKIPPED and (
            live.error.get(member_key) or ""
        ).startswith(COPY_OF)
        if (
            live.sha256.get(member_key) == sha
            and live.status.get(member_key) != SourceStatus.QUARANTINED
            and not live_copy
        ):
            return FileResult(member_key, sha, None, "unchanged", None, 0, {})
        twin = self.copies.twin(member_key, sha, member)
        if twin is not None and twin != member_key:
            if twin.split("!", 1)[0] in self.not_planned:
                return None
            if live_copy and live.sha256.get(member_key) == sha:  # its twin still holds these bytes
                return FileResult(member_key, sha, None, "unchanged", None, 0, {})
            where = "read in this ingest" if twin in self.read_here else "already in the store"
            error = f"{COPY_OF}{twin} ({where})"
            return unread(self.txn, member_key, sha, size, None, SourceStatus.SKIPPED, error)
        self.copies.add(member_key, sha)
        self.read_here.add(member_key)
        return Work(member_key, member, sha, size)

    def plan(self) -> Iterator[tuple[Path, Work | FileResult]]:
        """Every file (an archive's members each), in order, with what becomes of it."""
        txn, live = self.txn, self.live
        waiting: list[tuple[Path, str, Path, str, int]] = []
        for path, key in zip(self.files, self.keys, strict=True):
            self.not_planned.discard(key)
            if live.size and _known(key, path, live.size, live.status):
                yield path, FileResult(key, live.sha256[key], None, "unchanged", None, 0, {})
                continue
            for member_key, member, unreadable in expand(path, key, self.stack, self.unpacking):
                try:
                    cuts = self._cuts(member)
                    sha, size = sha256_file(member, cuts)
                except OSError as exc:
                    error = f"{member_key}: cannot read: {exc}"
                    yield path, unread(txn, member_key, "", 0, None, SourceStatus.QUARANTINED, error)
                    continue
                if unreadable is not None:
                    yield path, unread(txn, member_key, sha, size, "archive", SourceStatus.QUARANTINED, unreadable)
                    continue
                decided = self.decide(member_key, member, sha, size)
                if isinstance(decided, Work) and cuts is not None and len(spans := cuts.spans()) > 1:
                    decided = replace(decided, spans=tuple(spans))
                if decided is None:
                    waiting.append((path, member_key, member, sha, size))
                else:
                    yield path, decided
        for path, member_key, member, sha, size in waiting:
            decided = self.decide(member_key, member, sha, size)
            assert decided is not None  # every twin is planned by now
            yield path, decided

    def _cuts(self, member: Path) -> LineCuts | None:
        """Where to cut a file read in ranges (fed as it is hashed), or None: it is read whole.

        Only a plain ``.jhist`` is cut (a compressed stream has no place to start
        in the middle), in ``split_ranges`` ranges of at least half ``split_bytes``.
        """
        if not self.split_ranges or self.split_bytes is None or not read_in_ranges(member, self.split_bytes):
            return None
        try:
            size = member.stat().st_size
        except OSError:
            return None  # hashing it says why
        return LineCuts(max(self.split_bytes // 2, -(-size // self.split_ranges)))

    def chunks(self, chunk_files: int) -> Iterator[Chunk]:
        """:meth:`plan` cut into chunks of at most ``chunk_files`` files or :data:`CHUNK_BYTES` bytes;
        a file read in ranges is a chunk per range."""
        chunk = Chunk()
        for path, item in self.plan():
            if isinstance(item, Work) and item.spans:
                if chunk.entries:
                    yield chunk
                    chunk = Chunk()
                last = len(item.spans) - 1
                for index in range(last + 1):
                    yield Chunk([(path, None)] if index == last else [], split=(item, index))
                continue
            if isinstance(item, FileResult):
                chunk.entries.append((path, item))
            else:
                chunk.entries.append((path, None))
                chunk.work.append(item)
                chunk.size += item.size
            # files decided without reading count too, so progress is reported as it is made
            if len(chunk.entries) >= chunk_files or chunk.size >= CHUNK_BYTES:
                yield chunk
                chunk = Chunk()
        if chunk.entries:
            yield chunk
