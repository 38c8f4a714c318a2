"""How the lines of a 0.18-1.x history become records (``Type KEY="value" ... .``): a record's end
(:func:`record_end`, values may span lines), its pairs (:func:`parse_record`), and whether a
section's records end in ``' .'`` (:func:`delimited_records`).  :mod:`ingest.history_v1` has the format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ingest.mrcommon import unescape_v1
from phaseline.errors import TraceParseError

#: A key starts only where a word does: tried inside a long run of word characters that is no pair,
#: every start would scan to the run's end (a 100 kB word took a minute).
_PAIR = re.compile(r'(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)="([^"\\]*(?:\\.[^"\\]*)*)"', re.S)
_TYPE = re.compile(r"([A-Za-z][A-Za-z0-9_]*)(?=\s)")
_ESCAPED = re.compile(r"\\.", re.S)
_CLOSES = re.compile(r'"\s*\.\s*$')


@dataclass(slots=True)
class Record:
    kind: str
    fields: dict[str, str]
    junk: str
    line: int


def unescaped(line: str) -> str:
    """``line`` without its backslash escapes: what is left of ``"`` opens or closes a value.

    Escapes never span lines, so a record's quote parity is the XOR of its lines'.  A 1.x value
    escapes its quotes and dots, so no line inside a value ends in an unescaped ``" .``
    (:data:`_CLOSES`): such a line ends its record whatever the parity.
    """
    return _ESCAPED.sub("", line) if "\\" in line else line


def parse_record(text: str, line: int, path: Path, *, delimited: bool = True) -> Record:
    m = _TYPE.match(text)
    if m is None:
        raise TraceParseError(
            path,
            f"not a history record (expected 'Type KEY=\"value\" ... .'): {text[:80]!r}",
            line=line,
        )
    end = len(text.rstrip())
    body = text[m.end() : end - 1 if delimited else end]  # drop the type and the final '.' (0.20+)
    fields: dict[str, str] = {}
    junk: list[str] = []
    pos = 0
    for pm in _PAIR.finditer(body):
        start, end = pm.span()
        if start - pos > 1:  # more than the one separating blank: maybe text that is not a pair
            gap = body[pos:start].strip()
            if gap:
                junk.append(gap)
        key, value = pm.groups()
        fields[key] = unescape_v1(value) if "\\" in value else value
        pos = end
    tail = body[pos:].strip()
    if tail:
        junk.append(tail)
    if not fields:
        raise TraceParseError(path, f'{m.group(1)} record without any KEY="value" pair', line=line)
    return Record(m.group(1), fields, " ".join(junk), line)


def delimited_records(first: str) -> bool:
    """Whether the records of a section whose first record line is ``first`` end in ``' .'``.

    Hadoop 0.20+ writes ``Meta VERSION="1" .`` first and ends every record with
    ``' .'``; 0.18 and before wrote no Meta record and ended a record with its
    last value's ``"`` (``Job JOBID="job_..." ... JOBCONF="..." ``).
    """
    return first.startswith("Meta ") or not first.rstrip().endswith('"')




def record_end(
    path: Path, line: str, line_no: int, start: int, open_quote: int, delimited: bool | None
) -> tuple[bool, int, TraceParseError | None]:
    """Whether the record that began at line ``start`` ends at ``line``; the quote parity after
    ``line`` (1 while inside a value); and, where it ends damaged, why it is skipped."""
    plain = unescaped(line)
    open_quote ^= plain.count('"') & 1
    if not delimited:  # 0.18 and before: a record ends at a line that ends in '"' (as their parser reads)
        if open_quote or not line.rstrip().endswith('"'):
            return False, open_quote, None
    elif open_quote and _CLOSES.search(plain) is None:
        return False, open_quote, None  # inside a value that spans lines
    if open_quote:  # ends here with a stray quote (as Hadoop's parser, which ends a record at its
        # line delimiter, would): only this record is lost, not all after it
        return True, open_quote, TraceParseError(
            path, f"the record of lines {start}-{line_no} holds an unescaped quote (an odd number of '\"')",
            line=start, hint="1.x history escapes quotes in values as \\\"; the file was damaged or hand-edited",
        )  # fmt: skip
    if delimited and not line.rstrip().endswith("."):
        return True, open_quote, TraceParseError(
            path, f"a record line that does not end in ' .' outside a quoted value: {line[:80]!r}",
            line=line_no, hint="records end with ' .'; only quoted values may span lines",
        )  # fmt: skip
    return True, open_quote, None
