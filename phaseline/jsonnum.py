"""Whole numbers read back from the JSON documents phaseline writes (profiles, platform models).

JSON has one number type; a reader of a hand-edited or foreign document meets
``3``, ``3.0``, ``true``, ``NaN`` and ``1e300`` where it wants a count.
:func:`json_int` is the one rule for all of them.
"""

from __future__ import annotations

from typing import Any

#: JSON numbers (IEEE doubles) are exact integers up to 2^53: 9 PB of bytes, 104 days in ns.
MAX_JSON_INT = 2**53


def json_int(value: Any) -> int | None:
    """The integer a JSON value stands for, or ``None`` when it stands for none.

    An ``int``, or a ``float`` of integral value, of magnitude at most
    :data:`MAX_JSON_INT`; ``None`` for booleans, fractions, NaN, infinities,
    larger magnitudes and non-numbers.

    Examples
    --------
    >>> json_int(3), json_int(3.0), json_int(3.5), json_int(True), json_int(float("nan")), json_int(2**60)
    (3, 3, None, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not abs(value) <= MAX_JSON_INT or value != int(value):  # also NaN
        return None
    return int(value)
