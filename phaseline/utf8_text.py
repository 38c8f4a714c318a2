"""A text column kept as the UTF-8 bytes it was read as: what a reader hands the store without decoding it.

A ``.jhist`` file's ``events.payload_json`` is each event line's own text, about
1.7 kB a line; decoding every line to ``str`` only for the store to join and
encode the strings again into an Arrow buffer copied each byte three times more
(about 0.06 s of CPU per 50 MB of history).  :class:`Utf8Text` holds the lines'
bytes; the store joins them into the column's buffer as they are, and Arrow
checks that they are UTF-8 (:func:`phaseline.arrow.column`).  Read as a
sequence, it gives the decoded strings, so a reader's rows mean the same to
every other caller.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

__all__ = ["Utf8Text"]


class Utf8Text(Sequence[str]):
    """Strings given by their UTF-8 bytes (``pieces``); the store reads :attr:`pieces` directly.

    >>> t = Utf8Text([b"caf\\xc3\\xa9", b"{}"])
    >>> len(t), list(t), t[0], t == ["café", "{}"]
    (2, ['café', '{}'], 'café', True)
    """

    __slots__ = ("pieces",)

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    def __len__(self) -> int:
        return len(self.pieces)

    def __iter__(self) -> Iterator[str]:
        return map(bytes.decode, self.pieces)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [p.decode() for p in self.pieces[index]]
        return self.pieces[index].decode()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self.pieces) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mutable list inside, like a list

    def __repr__(self) -> str:
        return f"Utf8Text({self.pieces!r})"
