"""Archives of history directories (``.tar``, ``.tar.gz``, ``.zip``), unpacked safely.

Users feed whole history-server directories packed as archives.  Members are
extracted into a private temporary directory and ingested like files; their
store key is ``<archive path>!<member name>``.  Nothing is ever written
outside that directory: absolute names, ``..`` components, links and device
files are refused (Python's ``tarfile`` ``data`` filter does this for tar;
zip members are checked the same way), and the unpacked size is capped.
"""

from __future__ import annotations

import io
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from ingest.base import is_gzip, read_head
from phaseline.errors import TraceParseError

MAX_UNPACKED_BYTES = 20 * 1024**3  # refuse archive bombs beyond 20 GiB
ZIP_MAGIC = b"PK\x03\x04"


def is_archive(path: Path, head: bytes | None = None) -> bool:
    """Whether a file is a tar (possibly gzipped) or zip archive, judged by content."""
    head = read_head(path, 1024) if head is None else head
    if head.startswith(ZIP_MAGIC):
        return zipfile.is_zipfile(path)
    return len(head) >= 262 and head[257:262] == b"ustar"


def _safe_member(name: str) -> PurePosixPath | None:
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        return None
    return pure


@contextmanager
def unpacked(path: Path) -> Iterator[list[tuple[str, Path]]]:
    """Unpack an archive into a temporary directory; yield ``(member name, file)`` pairs.

    Raises
    ------
    TraceParseError
        When the archive is corrupt, or a member would escape the target
        directory, or the unpacked size exceeds :data:`MAX_UNPACKED_BYTES`.
    """
    target = Path(tempfile.mkdtemp(prefix="phaseline-archive-"))
    try:
        members = _extract_zip(path, target) if read_head(path, 4).startswith(ZIP_MAGIC) else _extract_tar(path, target)
        yield members
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _extract_zip(path: Path, target: Path) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    try:
        with zipfile.ZipFile(path) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            if sum(i.file_size for i in infos) > MAX_UNPACKED_BYTES:
                raise TraceParseError(path, f"archive unpacks to more than {MAX_UNPACKED_BYTES} bytes")
            for info in infos:
                rel = _safe_member(info.filename)
                if rel is None:
                    raise TraceParseError(path, f"archive member {info.filename!r} would be written outside its directory")
                dest = target.joinpath(*rel.parts)
                if not dest.resolve().is_relative_to(target.resolve()):
                    raise TraceParseError(path, f"archive member {info.filename!r} escapes the target directory")
                dest.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(dest, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                out.append((info.filename, dest))
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, RuntimeError, NotImplementedError) as exc:
        if isinstance(exc, TraceParseError):
            raise
        raise TraceParseError(path, f"corrupt zip archive: {exc}") from exc
    return out


def _extract_tar(path: Path, target: Path) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    with open(path, "rb") as raw:
        gz = is_gzip(raw.read(2))
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
                        hint="links, devices, absolute and '..' paths are refused",
                    )
                total += member.size
                if total > MAX_UNPACKED_BYTES:
                    raise TraceParseError(path, f"archive unpacks to more than {MAX_UNPACKED_BYTES} bytes")
                tf.extract(member, target, filter="data")
                out.append((member.name, target.joinpath(*rel.parts)))
    except (tarfile.TarError, EOFError, OSError, io.UnsupportedOperation) as exc:
        raise TraceParseError(path, f"corrupt tar archive: {exc}") from exc
    return out
