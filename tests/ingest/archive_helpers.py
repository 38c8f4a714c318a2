"""Archives written for the ingest tests: tars and zips of given members, a symlink where a member has no data."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

Pack = Callable[..., Path]


def tar_of(path: Path, *members: tuple[str, bytes | None]) -> Path:
    """A tar of plain files; a member whose data is None is a symlink to /etc/passwd."""
    with tarfile.open(path, "w") as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.SYMTYPE
                info.linkname = "/etc/passwd"
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return path


def zip_of(path: Path, *members: tuple[str, bytes | None]) -> Path:
    """A zip of plain files; a member whose data is None is a symlink (Unix mode) to /etc/passwd."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            if data is None:
                info = zipfile.ZipInfo(name)
                info.create_system = 3
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, "/etc/passwd")
            else:
                zf.writestr(name, data)
    return path
