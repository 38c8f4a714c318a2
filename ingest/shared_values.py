"""The values a history's records repeat, each kept as one object.

A job's tasks and attempts repeat a few dozen values (hosts, racks, statuses, localities, split
locations) and every decoded event brings fresh copies of them: held as they come, a large job's
state would keep one string per record.  :class:`SharedValues` keeps the first copy of each and
answers later ones with it, and turns a host or a status as written into phaseline's form once per
distinct value (:func:`~phaseline.hadoop_names.split_host`,
:func:`~phaseline.schemas.normalize_status`), not once per event.
"""

from __future__ import annotations

from phaseline.hadoop_names import split_host
from phaseline.schemas import normalize_status

__all__ = ["SharedValues"]


class SharedValues:
    """Equal strings as one object, with a host's and a status's phaseline form found once each.

    >>> shared = SharedValues()
    >>> a, b = "".join(["SUC", "CESS"]), "".join(["SU", "CCESS"])
    >>> shared.text(a) is shared.text(b)
    True
    >>> shared.host("/default-rack/node7:8041")
    ('node7', '/default-rack')
    """

    __slots__ = ("_hosts", "_statuses", "_strings")

    def __init__(self) -> None:
        self._strings: dict[str, str] = {}
        self._hosts: dict[str, tuple[str | None, str | None]] = {}  # a host as written -> (host, rack)
        self._statuses: dict[str | None, str | None] = {}  # a status as written -> as a Status value

    def text(self, text: str | None) -> str | None:
        """``text``, as the one object kept for equal strings."""
        if text is None:
            return None
        return self._strings.setdefault(text, text)

    def host(self, raw: str) -> tuple[str | None, str | None]:
        """:func:`split_host` of ``raw`` (host, rack), once per distinct value, as shared strings."""
        got = self._hosts.get(raw)
        if got is None:
            host, rack = split_host(raw)
            got = self._hosts[raw] = (self.text(host), self.text(rack))
        return got

    def status(self, raw: str | None) -> str | None:
        """:func:`normalize_status` of ``raw``, once per distinct value, as a shared string."""
        try:
            return self._statuses[raw]
        except KeyError:
            got = self._statuses[raw] = self.text(normalize_status(raw))
            return got
