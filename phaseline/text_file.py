"""A text file a user names (a profile, a dataflow specification, a demand table), read whole.

Its errors name the file and, for bytes that are not UTF-8, the line and byte where they are;
each kind of file raises its own error class (:mod:`phaseline.errors`).
"""

from __future__ import annotations

import codecs
from pathlib import Path

from phaseline.errors import PhaselineError

__all__ = ["read_text_file"]


def read_text_file(path: Path, what: str, error: type[PhaselineError], *, encoding: str = "utf-8") -> str:
    """The text of ``path`` (a ``what``: "profile", "demand table" ...), decoded as ``encoding``.

    ``utf-8-sig`` drops a leading byte order mark.  A file that cannot be read, or is not UTF-8 text,
    raises ``error`` naming the file (and the line and byte of the first bad byte).
    """
    try:
        return path.read_text(encoding=encoding)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raw = path.read_bytes()
        at = exc.start + (len(codecs.BOM_UTF8) if encoding == "utf-8-sig" and raw.startswith(codecs.BOM_UTF8) else 0)
        line = raw[:at].count(b"\n") + 1
        raise error(f"{path}:{line}: not a {what} (not UTF-8 text at byte {at}: {exc.reason})") from None
