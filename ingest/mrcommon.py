"""What the MapReduce readers other than ``.jhist`` share: 64-bit numbers, counter and event rows.

Hadoop's names (ids, hosts, task types, counter groups) are in :mod:`phaseline.hadoop_names`.

Done files: Hadoop 2/3's history server names a finished job's ``.jhist`` after the
job (``FileNameIndexUtils``); :func:`done_file_fields` reads those facts back from a
name that a log mentions.

Counter rows carry the store's group names: Hadoop 0.20/1.x named the framework groups
differently from 2.x, and :func:`~phaseline.hadoop_names.counter_group` maps them as Hadoop 2
does when it reads old counters, so one counter has one name in the store whatever version
wrote it.  Raw names stay in ``events``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

import orjson

from ingest.base import Row, RowBlock
from phaseline.errors import TraceParseError
from phaseline.hadoop_names import counter_group

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


#: A done file's name, wherever it appears: ``job_<id>-`` then 8 or 9 more ``-`` separated fields.
DONE_FILE_NAME = re.compile(r"(?<![\w%])job_\d+_\d+(?:-[^-\s/]*){8,9}\.jhist")
_DONE_FIELDS = ("job_id", "submit_ms", "user", "name", "finish_ms", "maps", "reduces", "status", "queue",
                "start_ms")  # fmt: skip
_DONE_NUMBERS = frozenset(("submit_ms", "finish_ms", "maps", "reduces", "start_ms"))


def done_file_fields(name: str) -> dict[str, Any] | None:
    """The job facts in a done file's name (Hadoop's ``FileNameIndexUtils``), or None if it is not one.

    ``job-submit-user-name-finish-maps-reduces-status-queue[-start].jhist``: each field
    URL-encoded with ``-`` written ``%2D``; Hadoop may cut a long job name
    (``mapreduce.jobhistory.jobname.limit``).  Numbers are ints (-1, unknown, is None).

    >>> f = done_file_fields("job_1_0002-1756058294334-sandbox-Tera%2DSort+2-1756058471984-76-1-SUCCEEDED-root.default-1756058297641.jhist")
    >>> f["name"], f["queue"], f["maps"], f["start_ms"]
    ('Tera-Sort 2', 'root.default', 76, 1756058297641)
    >>> done_file_fields("job_1_0001_1.jhist") is None
    True
    >>> done_file_fields("job_1_2-1-u-n-2-%2D%2D2-99999999999999999999-SUCCEEDED-q-1.jhist")["maps"] is None  # not '--2'
    True
    """
    base = name.rsplit("/", 1)[-1]
    if not base.endswith(".jhist") or DONE_FILE_NAME.fullmatch(base) is None:
        return None
    fields: dict[str, Any] = {}
    for key, raw in zip(_DONE_FIELDS, base.removesuffix(".jhist").split("-"), strict=False):
        value = unquote_plus(raw)
        if key in _DONE_NUMBERS:
            number = parse_int64(value)  # a count or time: '-1', '--2', '²' or past 64 bits is unknown
            fields[key] = number if number is not None and number >= 0 else None
        else:
            fields[key] = value or None
    return fields


_DOT_ESCAPE = re.compile(r"\\(.)")


def unescape_v1(text: str) -> str:
    r"""Remove Hadoop 1.x history escapes (``\.``, ``\=``, ``\"``, ``\\``) from a value.

    >>> unescape_v1(r"cluster1020\.secondleveldomain\.com")
    'cluster1020.secondleveldomain.com'
    """
    return unescape_backslashes(text)


def unescape_backslashes(text: str) -> str:
    r"""``\x`` -> ``x`` for every character ``x`` (so ``\\`` -> ``\``), read left to right.

    Three ``str.replace`` passes (escaped backslashes parked on a NUL sentinel)
    are several times faster than a regex substitution on counter strings full
    of ``\.``; text that already holds a NUL takes the regex path.

    >>> unescape_backslashes(r"a\.b\\\.c\\")
    'a.b\\.c\\'
    """
    if "\\" not in text:
        return text
    if "\x00" in text:
        return _DOT_ESCAPE.sub(_group1, text)
    return text.replace("\\\\", "\x00").replace("\\", "").replace("\x00", "\\")


def _group1(m: re.Match[str]) -> str:
    return m.group(1)


_DECIMAL = re.compile(r"-?\d{1,19}")


def parse_int64(text: str) -> int | None:
    """``text`` as an integer a signed 64-bit column holds, or None: decimal digits only
    (``str.isdigit`` takes '²', which int() refuses), at most 19 of them (int() refuses more than
    4,300), within 64 bits.

    >>> parse_int64("-12"), parse_int64("\u00b2"), parse_int64("9" * 19), parse_int64("--2")
    (-12, None, None, None)
    """
    if _DECIMAL.fullmatch(text) is None:
        return None
    value = int(text)
    return value if INT64_MIN <= value <= INT64_MAX else None


def int64_text(text: str, path: Path, what: str, line: int | None = None) -> int:
    """``text`` as the 64-bit integer Java's ``Long.parseLong`` reads in it, else a
    :class:`TraceParseError` naming ``what``: Python's ``int()`` also takes blanks around the
    digits and ``_`` between them (``"1_240"``), which no Hadoop writer produces.

    >>> int64_text("-12", Path("h.log"), "START_TIME")
    -12
    >>> int64_text("1_240", Path("h.log"), "START_TIME", 3)
    Traceback (most recent call last):
    ...
    phaseline.errors.TraceParseError: h.log:3: START_TIME = '1_240' is not an integer
    """
    value = parse_int64(text)
    if value is not None:
        return value
    if text.removeprefix("-").isdecimal():
        raise TraceParseError(path, f"{what} = {text} does not fit in 64 bits", line=line)
    raise TraceParseError(path, f"{what} = {text[:40]!r} is not an integer", line=line)


def int64(value: int, what: str = "a number") -> int:
    """``value`` if it fits a signed 64-bit column, else a ``ValueError`` (for readers that keep bad records).

    >>> int64(int("99999999999999999999"), "thread id")
    Traceback (most recent call last):
    ...
    ValueError: thread id 99999999999999999999 does not fit in 64 bits
    """
    if value < INT64_MIN or value > INT64_MAX:
        raise ValueError(f"{what} {value} does not fit in 64 bits")
    return value


def check_int64(value: int, path: Path, what: str, line: int | None = None) -> int:
    """``value`` if it fits a signed 64-bit column, else a :class:`TraceParseError`."""
    if value < INT64_MIN or value > INT64_MAX:
        raise TraceParseError(path, f"{what} = {value} does not fit in 64 bits", line=line)
    return value


def _big_ints_as_text(value: Any) -> Any:
    """``value`` with every integer orjson cannot write (beyond 64 bits) as its decimal text.

    >>> _big_ints_as_text({"a": [1, 2**70]})
    {'a': [1, '1180591620717411303424']}
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if INT64_MIN <= value <= 2**64 - 1 else str(value)
    if isinstance(value, dict):
        return {k: _big_ints_as_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_big_ints_as_text(v) for v in value]
    return value


def payload_json(payload: Any) -> str:
    """A decoded record as JSON text; an integer past 64 bits (a stdlib-decoded trace may hold
    one in any field, e.g. a corrupted Rumen ``jobProperties`` value) is kept as its digits.

    What orjson refuses besides (nesting past 255 levels, a lone UTF-16 surrogate from a JSON
    ``\\ud800`` escape) is written by the standard library (surrogates as ``\\u`` escapes); a value
    nested deeper than a Python walk of it can go (the standard library's decoder reads up to
    about 1,000 levels) is written by the standard library's encoder as it is, big integers
    as numbers."""
    try:
        return orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        pass
    try:
        kept = _big_ints_as_text(payload)
    except RecursionError:
        return json.dumps(payload, default=str, separators=(",", ":"))
    try:
        return orjson.dumps(kept, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(kept, default=str, separators=(",", ":"))


def event_row(job_id: str | None, seq: int, event_type: str, ts_ms: int | None, payload: Any) -> Row:
    """One row of the ``events`` table with the raw record as JSON."""
    return Row(
        "events",
        {
            "job_id": job_id,
            "seq": seq,
            "event_type": event_type,
            "ts_ms": ts_ms,
            "payload_json": payload_json(payload),
        },
    )


def counter_row(
    job_id: str,
    scope: str,
    group: str,
    name: str,
    value: int,
    *,
    task_id: str | None = None,
    attempt_id: str | None = None,
) -> Row:
    """One row of the ``counters`` table (group names normalized by :func:`counter_group`)."""
    return Row(
        "counters",
        {
            "job_id": job_id,
            "task_id": task_id,
            "attempt_id": attempt_id,
            "scope": scope,
            "group_name": counter_group(group),
            "counter_name": name,
            "value": value,
        },
    )


def counters_block(
    job_id: str | None,
    scope: str,
    groups: Sequence[str],
    names: Sequence[str],
    values: Sequence[int],
    *,
    task_id: str | None = None,
    attempt_id: str | None = None,
) -> RowBlock:
    """``counters`` rows of one job/task/attempt and scope as one block: one row per counter.

    ``groups``, ``names`` and ``values`` are the columns as the store keeps them (no
    group-name mapping here; :func:`counter_block` maps 0.20/1.x names first).
    """
    return RowBlock(
        "counters",
        len(names),
        {"group_name": groups, "counter_name": names, "value": values},
        {"job_id": job_id, "task_id": task_id, "attempt_id": attempt_id, "scope": scope},
    )


def counter_block(
    job_id: str,
    scope: str,
    counters: Iterable[tuple[str, str, int]],
    *,
    task_id: str | None = None,
    attempt_id: str | None = None,
) -> RowBlock | None:
    """The rows :func:`counter_row` gives for ``(group, name, value)`` s, as one block (``None`` if none).

    >>> block = counter_block("job_1_1", "task", [("FileSystemCounters", "HDFS_BYTES_READ", 5)], task_id="t")
    >>> block.n, block.columns["group_name"], block.constants["task_id"]
    (1, ['org.apache.hadoop.mapreduce.FileSystemCounter'], 't')
    """
    groups: list[str] = []
    names: list[str] = []
    values: list[int] = []
    for group, name, value in counters:
        groups.append(counter_group(group))
        names.append(name)
        values.append(value)
    if not names:
        return None
    return counters_block(job_id, scope, groups, names, values, task_id=task_id, attempt_id=attempt_id)
