r"""Hadoop 0.20/1.x escaped compact counters -> ``(group, group name, counter, counter name, value)``.

After the history layer's escapes are removed (``\.`` -> ``.``), a counters
value reads (Hadoop 1.x ``Counters.makeEscapedCompactString``)::

    {(org.apache.hadoop.mapred.Task$Counter)(Map-Reduce Framework)[(SPILLED_RECORDS)(Spilled Records)(0)]...}...

Inside the parentheses a second escape layer protects ``(){}[]`` and ``\``
(``\(ms\)`` in ``Total time spent ... \(ms\)``; ``SortFilter-#1\[id\]``).
Group display names may end in a space (``Job Counters ``): kept as written.

Hadoop 0.18 wrote ``group.counter:value,...`` instead; that older form is read too.

Given a read context, a counter whose value is no 64-bit integer is skipped
(``ctx.skipped``) and the others kept; where the text stops being counters (a
counter that is not ``[(id)(name)(value)]``, a group without its closing ``}``),
the complete counters before that point are kept, the rest up to the next group
is named as skipped, and reading goes on at that group.
Without one, either is a :class:`~phaseline.errors.TraceParseError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ingest.base import ReadContext, skip_or_raise
from ingest.mrcommon import int64_text, unescape_backslashes
from phaseline.errors import TraceParseError

_ESC = r"[^()\\]*(?:\\.[^()\\]*)*"  # unrolled (?:[^()\\]|\\.)*: no per-character alternation
_HEAD = re.compile(r"\{\((" + _ESC + r")\)\((" + _ESC + r")\)", re.S)
_COUNTER = re.compile(r"\[\((" + _ESC + r")\)\((" + _ESC + r")\)\((" + _ESC + r")\)\]", re.S)
_BRACE_OR_ESCAPE = re.compile(r"\\.|\{", re.S)
_LEGACY = re.compile(r"^(.+)\.([^.:]+):(-?\d+)$")

Counter = tuple[str, str, str, str, int]


def _unescape(text: str) -> str:
    return unescape_backslashes(text)


def _value(raw: str, path: Path, line: int, key: str) -> int:
    return int64_text(_unescape(raw).strip(), path, f"{key} counter value", line)


def parse_counters(
    text: str, path: Path, line: int, key: str = "COUNTERS", ctx: ReadContext | None = None
) -> Iterator[Counter]:
    """Yield ``(group, group_name, counter, counter_name, value)`` of a 1.x counters value.

    >>> list(parse_counters("{(g)(G )[(c)(C \\\\(ms\\\\))(3)]}", Path("f"), 1))
    [('g', 'G ', 'c', 'C (ms)', 3)]

    Raises
    ------
    TraceParseError
        Text that is neither the compact form nor the 0.18 ``group.counter:value``
        form, or a value that is no 64-bit integer (without ``ctx``: module docstring).
    """
    stripped = text.strip()
    if not stripped:
        return
    if not stripped.startswith("{"):
        yield from _legacy(stripped, path, line, key, ctx)
        return
    pos = 0
    while pos < len(stripped):
        head = _HEAD.match(stripped, pos)
        where = ""
        if head is not None:
            group, group_name = _unescape(head.group(1)), _unescape(head.group(2))
            pos = head.end()
            while (c := _COUNTER.match(stripped, pos)) is not None:
                pos = c.end()
                try:
                    value = _value(c.group(3), path, line, key)
                except TraceParseError as exc:
                    skip_or_raise(ctx, exc)
                    continue
                yield group, group_name, _unescape(c.group(1)), _unescape(c.group(2)), value
            if stripped.startswith("}", pos):
                pos += 1
                continue
            where = f" in group {group!r}"
        resume = _next_group(stripped, pos if head is not None else pos + 1)
        found = repr(stripped[pos : pos + 60]) if pos < len(stripped) else "the text ends before its '}'"
        then = f"; read on at the next group, character {resume}" if resume < len(stripped) else ""
        skip_or_raise(ctx, TraceParseError(
            path,
            f"{key}: malformed counters{where} at character {pos}: {found}{then}",
            line=line,
            hint="expected {(group-id)(group name)[(id)(name)(value)]...}; the counters before it are kept",
        ))  # fmt: skip
        pos = resume


def _next_group(text: str, pos: int) -> int:
    """Where the next group (``{(id)(name)``, its brace unescaped) starts from ``pos`` on; the text's end if none."""
    for m in _BRACE_OR_ESCAPE.finditer(text, pos):
        if m.group() == "{" and _HEAD.match(text, m.start()):
            return m.start()
    return len(text)


def _legacy(text: str, path: Path, line: int, key: str, ctx: ReadContext | None) -> Iterator[Counter]:
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        m = _LEGACY.match(item)
        try:
            if m is None:
                raise TraceParseError(
                    path, f"{key}: malformed counter {item[:60]!r}", line=line,
                    hint="expected the compact {(...)...} form or 0.18's group.counter:value",
                )  # fmt: skip
            value = _value(m.group(3), path, line, key)
        except TraceParseError as exc:
            skip_or_raise(ctx, exc)
            continue
        yield m.group(1), m.group(1), m.group(2), m.group(2), value
