"""Parse human sizes (``50G``, ``512M``, ``1.5T``, ``4096``) into bytes.

Units are binary (``K`` = 1024 bytes), as in Hadoop's own settings
(``io.sort.mb``, ``dfs.blocksize=128m``).  An optional ``B``/``iB`` suffix is
accepted (``50GB``, ``50GiB``) and means the same.

>>> parse_size("50G")
53687091200
>>> parse_size("512M")
536870912
>>> parse_size("1.5T")
1649267441664
>>> parse_size("4096")
4096
"""

from __future__ import annotations

import re

from phaseline.errors import PhaselineError

__all__ = ["SizeError", "format_size", "parse_size"]

_FACTORS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
_SIZE = re.compile(r"^\s*(?P<num>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>[KMGTP]?)(?:I?B)?\s*$", re.IGNORECASE)


#: The largest size read: 2^63 bytes (8 EiB), an int64 in every table and computation.
MAX_BYTES = float(2**63)


class SizeError(PhaselineError, ValueError):
    """A size string cannot be read (e.g. ``50Q`` or ``-3G``)."""


def parse_size(text: str | int | float) -> int:
    """Return the number of bytes ``text`` denotes.

    Parameters
    ----------
    text
        ``"50G"``, ``"512m"``, ``"1.5T"``, ``"128MiB"``, ``"4096"`` or a number of bytes.

    Raises
    ------
    SizeError
        The text is not a non-negative number with an optional K/M/G/T/P unit,
        or it is above :data:`MAX_BYTES`.
    """
    if isinstance(text, bool):
        raise SizeError(f"size {text!r} is not a number of bytes")
    if isinstance(text, int | float):
        value = float(text)
        if value < 0:
            raise SizeError(f"size {text!r} is negative")
    else:
        match = _SIZE.match(text)
        if match is None:
            raise SizeError(
                f"size {text!r} is not understood; write a number with an optional unit K, M, G, T or P "
                "(e.g. 50G, 512M)"
            )
        value = float(match["num"]) * _FACTORS[match["unit"].upper()]
    if not value <= MAX_BYTES:  # also NaN
        raise SizeError(f"size {str(text)[:40]!r} is beyond {MAX_BYTES:.0e} bytes (or not a number)")
    return round(value)


def format_size(n_bytes: float) -> str:
    """Render bytes with a binary unit and three significant digits.

    >>> format_size(53687091200)
    '50.0G'
    >>> format_size(512)
    '512B'
    """
    for unit in ("P", "T", "G", "M", "K"):
        value = n_bytes / _FACTORS[unit]
        if abs(value) >= 1:
            return f"{value:.1f}{unit}" if abs(value) < 100 else f"{value:.0f}{unit}"
    return f"{n_bytes:.0f}B"
