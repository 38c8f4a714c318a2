"""Archives of history directories (``.tar``, ``.tar.gz``, ``.zip``), unpacked safely.

Users feed whole history-server directories packed as archives.  Members are
extracted into a private temporary directory and ingested like files; their
store key is ``<archive path>!<member name>``.  Nothing is ever written
outside that directory: absolute names, ``..`` components, links and device
files (tar member types; a zip member's Unix mode) are refused, and the
unpacked size is capped.  Tar and zip alike, an archive holding such a member,
or unpacking past the cap, is refused whole (:class:`TraceParseError`), never
partly unpacked: it is a hostile or foreign archive, not a damaged one, and its
other members are not trusted either.

A damaged archive gives up only what is damaged: a zip member whose data is
corrupt (a bad CRC, an encrypted member) is a :class:`Member` with an error and
the others unpack; a tar that breaks off (a cut download) keeps every member
before the break, the one it breaks off inside is a :class:`Member` with an
error, and :attr:`Unpacked.error` says where the archive ended.  Only an
archive that cannot be opened at all (a zip without its central directory) is
refused whole.
"""

from __future__ import annotations

import errno
import io
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TypeVar

from ingest.opening import is_gzip, read_head
from phaseline.errors import TraceParseError

MAX_UNPACKED_BYTES = 20 * 1024**3  # refuse archive bombs beyond 20 GiB (all nesting levels together)
MAX_NESTING = 3  # archives inside archives are unpacked this deep
ZIP_MAGIC = b"PK\x03\x04"
T = TypeVar("T")


def is_archive(path: Path, head: bytes | None = None) -> bool:
    """Whether a file is a tar (possibly gzipped) or zip archive, judged by content.

    A file starting with a zip member header counts even when its end is missing
    (a truncated download): unpacking it then fails and the file is quarantined,
    where it would otherwise be skipped as a format nobody reads.
    """
    head = read_head(path, 1024) if head is None else head
    if head.startswith(ZIP_MAGIC):
        return True
    return len(head) >= 262 and head[257:262] == b"ustar"


@dataclass(frozen=True, slots=True)
class Member:
    """One member of an unpacked archive: its name (``name#<k>`` when repeated) and its copy.

    ``path`` is None when the member could not be unpacked; ``error`` says why.
    """

    name: str
    path: Path | None
    error: str | None = None


@dataclass(slots=True)
class Unpacked:
    """What an archive gave: its members in order, and where it broke off (None: it did not)."""

    members: list[Member] = field(default_factory=list)
    error: str | None = None


#: What reading one member's data (or the next tar header) raises when the archive is damaged there.
_DAMAGE = (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, RuntimeError, NotImplementedError,
           ValueError, io.UnsupportedOperation)  # fmt: skip


_REFUSED = "links, devices, absolute and '..' paths are refused"


def _safe_member(name: str) -> PurePosixPath | None:
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        return None
    return pure


class _Names:
    """Where each member goes, and the name it is known by.

    Archives may hold one name twice (zip allows it, tar appends) or two names
    for one file (``./a`` and ``a``): every member keeps its own copy, in its
    place when that is free (so siblings such as ``syslog`` and
    ``syslog.shuffle`` stay together) and under ``#<k>/`` otherwise, and a
    repeated name is called ``name#<k>`` (the first ``k`` from 2 not yet used).
    """

    def __init__(self, target: Path) -> None:
        self.target = target
        self.names: set[str] = set()
        self.places: set[Path] = set()

    def place(self, name: str, rel: PurePosixPath) -> tuple[str, Path]:
        key = _first_free(self.names, lambda k: name if k == 1 else f"{name}#{k}")
        dest = _first_free(self.places, lambda k: self.target.joinpath(*([] if k == 1 else [f"#{k}"]), *rel.parts))
        return key, dest


def _first_free(taken: set[T], candidate: Callable[[int], T]) -> T:
    """``candidate(1)``, or the first of ``candidate(2), candidate(3)...`` not in ``taken``; now taken."""
    k = 1
    while (value := candidate(k)) in taken:
        k += 1
    taken.add(value)
    return value


@contextmanager
def unpacked(path: Path, max_bytes: int = MAX_UNPACKED_BYTES) -> Iterator[Unpacked]:
    """Unpack an archive into a temporary directory; yield its members (module docstring).

    Raises
    ------
    TraceParseError
        When the archive cannot be opened, or a member would escape the target
        directory or is no plain file, or the unpacked size exceeds ``max_bytes``.
    """
    target = Path(tempfile.mkdtemp(prefix="phaseline-archive-"))
    try:
        extract = _extract_zip if read_head(path, 4).startswith(ZIP_MAGIC) else _extract_tar
        yield extract(path, target, max_bytes)
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _extract_zip(path: Path, target: Path, max_bytes: int) -> Unpacked:
    out = Unpacked()
    names = _Names(target)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise TraceParseError(path, f"corrupt zip archive: {exc}") from exc
    with zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        if sum(i.file_size for i in infos) > max_bytes:
            raise TraceParseError(path, f"archive unpacks to more than {max_bytes} bytes")
        members = []
        for info in infos:
            rel = _safe_member(info.filename)
            if rel is None:
                raise TraceParseError(path, f"archive member {info.filename!r} would be written outside its directory")
            if stat.S_IFMT(info.external_attr >> 16) not in (0, stat.S_IFREG):  # 0: no Unix mode recorded
                raise TraceParseError(path, f"archive member {info.filename!r} is not a plain file", hint=_REFUSED)
            members.append((info, rel))
        for info, rel in members:
            name, dest = names.place(info.filename, rel)
            if not dest.resolve().is_relative_to(target.resolve()):
                raise TraceParseError(path, f"archive member {info.filename!r} escapes the target directory")
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                dst = open(dest, "wb")  # noqa: SIM115 - closed below, after the copy
            except OSError as exc:
                if not _placement(exc):
                    raise
                out.members.append(Member(name, None, f"cannot be unpacked: {exc.strerror or exc}"))
                continue
            try:
                with dst, zf.open(info) as src:
                    shutil.copyfileobj(src, dst)
            except _DAMAGE as exc:
                dest.unlink(missing_ok=True)
                out.members.append(Member(name, None, f"damaged zip member: {exc}"))
                continue
            out.members.append(Member(name, dest))
    return out


def _placement(exc: OSError) -> bool:
    """An error of where a member would go (a name too long, a file where its directory would be),
    not of the machine (a full disk): the member is not unpacked, the others are."""
    return exc.errno in (errno.ENAMETOOLONG, errno.EEXIST, errno.ENOTDIR, errno.EISDIR)


def _extract_tar(path: Path, target: Path, max_bytes: int) -> Unpacked:
    out = Unpacked()
    names = _Names(target)
    with open(path, "rb") as raw:
        gz = is_gzip(raw.read(2))
    current: tuple[str, Path] | None = None  # the member being unpacked
    try:
        with tarfile.open(path, mode="r:gz" if gz else "r:") as tf:
            total = 0
            for member in tf:
                if member.isdir():
                    continue
                rel = _safe_member(member.name)
                if rel is None or not member.isfile():
                    raise TraceParseError(
                        path,
                        f"archive member {member.name!r} is not a plain file inside the archive's directory",
                        hint=_REFUSED,
                    )
                total += member.size
                if total > max_bytes:
                    raise TraceParseError(path, f"archive unpacks to more than {max_bytes} bytes")
                current = names.place(member.name, rel)
                member.name = current[1].relative_to(target).as_posix()
                try:
                    tf.extract(member, target, filter="data")
                except OSError as exc:
                    if not _placement(exc):
                        raise
                    out.members.append(Member(current[0], None, f"cannot be unpacked: {exc.strerror or exc}"))
                    current = None
                    continue
                out.members.append(Member(*current))
                current = None
    except TraceParseError:
        raise  # a refusal (module docstring), though a ValueError like the damage below
    except (*_DAMAGE, OSError) as exc:
        if not out.members and current is None:
            raise TraceParseError(path, f"corrupt tar archive: {exc}") from exc
        if current is not None:  # broken off inside this member: its copy is incomplete
            current[1].unlink(missing_ok=True)
            out.members.append(Member(current[0], None, f"the tar archive breaks off inside this member: {exc}"))
        n = sum(m.path is not None for m in out.members)
        out.error = f"corrupt tar archive: {exc} (the {n} member{'s' if n != 1 else ''} before it were read)"
    return out
