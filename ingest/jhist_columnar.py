"""Large ``.jhist`` files decoded by DuckDB: :mod:`ingest.jhist`'s rows, without a Python step per event.

The event-by-event reader costs about 30 us of Python per event, five times
the JSON decode itself, so a 500 MB history took longer than Hadoop's own
parser.  For a plain (not gzipped) file of ``ingest.jhist.COLUMNAR_MIN_BYTES`` or more,
:func:`read_columnar` instead hands the lines to DuckDB, whose C++ JSON reader
decodes them, and derives every row in SQL by the rules
:mod:`ingest.jhist_state` documents.  It gives the same rows as the Python
reader, or declines the file (returns None) and the Python reader reads it.

How
---
The lines after the writer's schema are cut by numpy into Arrow string
arrays (``seq`` = the line number, blank lines counted, as the Python reader
numbers them), a block of about :data:`BLOCK_BYTES` at a time.

* Pass 1 decodes every line once (``json_transform`` into a struct of every
  field any event type has, each kept as its JSON text) and keeps one small
  typed row per event in a temporary table: ids, times, names, and how many
  counter rows each JhCounters record holds.  Every value is checked as the
  Python accessors (:mod:`ingest.jhist_schema`) check it; Avro union
  wrappers (``{"string": "x"}``) are unwrapped where the writer's schema
  declares the field a union.
* The checks then decide.  Anything the rules of :mod:`ingest.jhist_state`
  treat specially declines the whole file, before one row is yielded: a value
  of another type, an unknown or out-of-schema event type, a task or attempt
  that starts or ends twice, a successful attempt failed or killed later (a
  re-opened task), a job that never ended or ended twice, a cut or malformed
  line (DuckDB refuses it), invalid UTF-8, and the JSON orjson refuses but
  DuckDB accepts (``NaN``, ``Infinity``, trailing commas, lone surrogates,
  nesting past orjson's depth; a byte-level guard).  The Python reader then
  gives its own rows, notes or errors for the file.
* ``jobs``, ``tasks`` and ``attempts`` come from SQL over pass 1's table
  (the last event of a kind wins, as in :class:`~ingest.jhist_state.HistoryState`);
  statuses, hosts and task types are mapped by phaseline's own functions over
  their few distinct values.
* Pass 2 reads the lines again and streams ``events`` (the line's text,
  type and time) and ``counters`` (the JhCounters records unnested) as Arrow
  arrays: no Python object per row.

Known difference: a JSON object with a key given twice (which RFC 8259 leaves
undefined) keeps its first value here and its last in the Python reader.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ingest.base import ReadContext, Row, RowBlock
from ingest.counters_map import EVENT_SPECS, TASK_TYPES, EventKind, split_host
from ingest.jhist_schema import WriterSchema
from ingest.jhist_state import HistoryState
from phaseline.arrow import column
from phaseline.errors import TraceParseError
from phaseline.schemas import Status, normalize_status

if TYPE_CHECKING:
    import duckdb

#: Bytes of lines handed to DuckDB at a time (a block ends at a line end).
BLOCK_BYTES = 16 << 20
#: DuckDB's memory for one file (its temporary tables; it spills past this).
MEMORY_LIMIT = "256MB"
NAMESPACE = "org.apache.hadoop.mapreduce.jobhistory"
#: Lines looked at for the job id (a job's first event names it; later is left to the Python reader).
_LEARN_FROM = 256

_STR, _INT, _BOOL, _COUNTERS = "str", "int", "bool", "counters"
#: The Avro branch names a scalar of each kind may be wrapped in (``{"long": 3}``).
_WRAPPERS = {_STR: ("string",), _INT: ("long", "int"), _BOOL: ("boolean",)}
_JOB_COUNTS = {f: _INT for f in ("finishedMaps", "finishedReduces", "failedMaps", "failedReduces",
                                 "killedMaps", "killedReduces")}  # fmt: skip
_K = EventKind
#: The payload fields each kind of event is read for (ingest.jhist_state's handlers).
_KIND_FIELDS: Mapping[EventKind, Mapping[str, str]] = {
    _K.JOB_SUBMITTED: {"jobName": _STR, "userName": _STR, "submitTime": _INT, "jobQueueName": _STR},
    _K.JOB_INITED: {"launchTime": _INT, "totalMaps": _INT, "totalReduces": _INT, "uberized": _BOOL},
    _K.JOB_INFO_CHANGED: {"submitTime": _INT, "launchTime": _INT},
    _K.JOB_QUEUE_CHANGED: {"jobQueueName": _STR},
    _K.JOB_FINISHED: {"finishTime": _INT, **_JOB_COUNTS, "totalCounters": _COUNTERS,
                      "mapCounters": _COUNTERS, "reduceCounters": _COUNTERS},  # fmt: skip
    _K.JOB_UNSUCCESSFUL: {"finishTime": _INT, **_JOB_COUNTS, "jobStatus": _STR, "diagnostics": _STR},
    _K.TASK_STARTED: {"taskType": _STR, "startTime": _INT, "splitLocations": _STR},
    _K.TASK_FINISHED: {"taskType": _STR, "finishTime": _INT, "successfulAttemptId": _STR, "counters": _COUNTERS},
    _K.TASK_FAILED: {"taskType": _STR, "finishTime": _INT, "status": _STR, "error": _STR, "counters": _COUNTERS},
    _K.TASK_UPDATED: {"taskType": _STR, "finishTime": _INT},
    _K.ATTEMPT_STARTED: {"taskType": _STR, "startTime": _INT, "containerId": _STR, "locality": _STR,
                         "httpPort": _INT, "trackerName": _STR},  # fmt: skip
    _K.ATTEMPT_FINISHED: {"taskType": _STR, "finishTime": _INT, "taskStatus": _STR, "hostname": _STR,
                          "rackname": _STR, "mapFinishTime": _INT, "shuffleFinishTime": _INT,
                          "sortFinishTime": _INT, "counters": _COUNTERS},  # fmt: skip
    _K.ATTEMPT_UNSUCCESSFUL: {"taskType": _STR, "finishTime": _INT, "status": _STR, "hostname": _STR,
                              "rackname": _STR, "error": _STR, "counters": _COUNTERS},  # fmt: skip
    _K.EVENT_ONLY: {},
}
#: Counter rows' scope per JhCounters field.
_SCOPES = {"totalCounters": "job_total", "mapCounters": "job_map", "reduceCounters": "job_reduce",
           "counters": "task"}  # fmt: skip
_SQL_TYPES = {_STR: "VARCHAR", _INT: "BIGINT", _BOOL: "BOOLEAN"}


class Declined(Exception):
    """The file has something only the event-by-event reader handles; the reason says what."""


# ---------------------------------------------------------------------------------------------- lines
_LINES_SCHEMA = pa.schema([("seq", pa.int64()), ("line", pa.string())])


def _buffer_array(values: np.ndarray[Any, Any], typ: pa.DataType) -> pa.Array:
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(np.ascontiguousarray(values))])


def _block(body: bytes, line_no: int, max_line: int) -> tuple[pa.RecordBatch, int]:
    """The lines of ``body`` (whole lines) as ``(seq, line)``, blanks trimmed; the last line's number."""
    data = np.frombuffer(body, np.uint8)
    ends = np.flatnonzero(data == 10)
    n = len(ends) + (0 if body.endswith(b"\n") else 1)
    offsets = np.empty(n + 1, np.int32)
    offsets[0] = 0
    offsets[1 : len(ends) + 1] = ends + 1
    offsets[n] = len(body)
    lengths = np.diff(offsets)  # each line's bytes with its line end; the Python reader's without
    if n and int(lengths.max()) - (1 if body.endswith(b"\n") else 0) >= max_line:
        raise Declined(f"a line longer than {max_line >> 20} MiB near line {line_no + 1}")
    lines = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(body)])
    try:
        lines.validate(full=True)
    except pa.ArrowInvalid:
        raise Declined(f"invalid UTF-8 near line {line_no + 1}") from None
    seq = _buffer_array(np.arange(line_no + 1, line_no + 1 + n, dtype=np.int64), pa.int64())
    trimmed = pc.ascii_trim(lines, " \t\r\n\x00")
    return pa.RecordBatch.from_arrays([seq, trimmed], schema=_LINES_SCHEMA), line_no + n


def _line_blocks(path: Path, offset: int, line_no: int, max_line: int) -> Iterator[pa.RecordBatch]:
    """The file's lines from byte ``offset`` (after line ``line_no``) in blocks of whole lines."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        carry = b""
        while block := fh.read(BLOCK_BYTES):
            data = carry + block if carry else block
            cut = data.rfind(b"\n")
            if cut < 0:
                carry = data
                if len(carry) >= max_line:
                    raise Declined(f"a line longer than {max_line >> 20} MiB after line {line_no}")
                continue
            body, carry = data[: cut + 1], data[cut + 1 :]
            batch, line_no = _block(body, line_no, max_line)
            yield batch
        if carry:
            batch, line_no = _block(carry, line_no, max_line)
            yield batch


# ---------------------------------------------------------------------------------------------- SQL
def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _record_fields() -> dict[str, dict[str, str]]:
    """Full record name -> the fields read from it: its kind's fields, its ids, the event time."""
    records: dict[str, dict[str, str]] = {}
    for spec in EVENT_SPECS.values():
        if spec.record is None:
            continue
        fields = records.setdefault(f"{NAMESPACE}.{spec.record}", {})
        if spec.kind.value.startswith(("task", "attempt")):
            fields["taskid"] = _STR
        if spec.kind.value.startswith("attempt"):
            fields["attemptId"] = _STR
        fields.update(_KIND_FIELDS[spec.kind])
        if spec.time_field is not None:
            fields[spec.time_field] = _INT
    return records


_RECORDS = _record_fields()
#: Every field name and its kind (a name has one kind in every record).
_ALL_FIELDS: dict[str, str] = {f: k for fields in _RECORDS.values() for f, k in fields.items()}


def _counters_type() -> str:
    """A JhCounters record, bare or wrapped in its Avro union, typed for pass 2."""
    groups = '[{"name":"VARCHAR","counts":[{"name":"VARCHAR","value":"BIGINT"}]}]'
    return f'{{"groups":{groups},"{NAMESPACE}.JhCounters":{{"groups":{groups}}}}}'


#: Pass 1 asks only whether a JhCounters field holds a record, bare or wrapped (its groups' names
#: are a cheap sign of the bare form); pass 2 reads and checks the rest.
_SHAPE = f'{{"groups":[{{"name":"VARCHAR"}}],"{NAMESPACE}.JhCounters":{{"name":"VARCHAR"}}}}'


def _line_type(counters_only: bool) -> str:
    """The struct each line is decoded into (pass 1: JSON leaves; pass 2: only the typed counters)."""
    records = []
    for record, fields in _RECORDS.items():
        parts = [
            f'"{name}":{_counters_type() if counters_only else _SHAPE}' if kind == _COUNTERS else f'"{name}":"JSON"'
            for name, kind in fields.items()
            if (kind == _COUNTERS) or not counters_only
        ]
        if not parts and not counters_only:
            parts = ['"-":"VARCHAR"']  # a record no field is read from: its presence is still checked
        if parts:
            records.append(f'"{record}":{{{",".join(parts)}}}')
    head = "" if counters_only else '"type":"JSON",'
    return f'{{{head}"event":{{{",".join(records)}}}}}'


def _union_branches(schema: WriterSchema, record: str, name: str) -> frozenset[str]:
    for field, branches in schema.unions.get(record, ()):
        if field == name:
            return branches
    return frozenset()


def _scalar_leaf(schema: WriterSchema, name: str, kind: str) -> str:
    """SQL for field ``name``'s JSON text, unwrapped where the event's record declares it a union.

    A wrapped value (``{"long": 3}``) is unwrapped when its branch is one of the field's
    union branches in the writer's schema; elsewhere it becomes ``'{}'``, which every type
    check refuses (the Python reader reads such a value otherwise or not at all).
    """
    leaves, arms = [], []
    for record, fields in _RECORDS.items():
        if name in fields:
            leaves.append(f"j.event.{_q(record)}.{_q(name)}")
    leaf = leaves[0] if len(leaves) == 1 else f"coalesce({', '.join(leaves)})"
    for wrapper in _WRAPPERS[kind]:
        types = [t for t, spec in EVENT_SPECS.items() if spec.record and name in _RECORDS[f"{NAMESPACE}.{spec.record}"]
                 and wrapper in _union_branches(schema, f"{NAMESPACE}.{spec.record}", name)]  # fmt: skip
        if types:
            arms.append(f"WHEN etype IN ({', '.join(map(_lit, types))}) AND json_keys({leaf}) = [{_lit(wrapper)}] "
                        f"THEN ({leaf} -> {_lit('$.' + wrapper)})::VARCHAR")  # fmt: skip
    unwrapped = f"CASE {' '.join(arms)} ELSE '{{}}' END" if arms else "'{}'"
    return f"CASE WHEN starts_with({leaf}, '{{') THEN {unwrapped} ELSE {leaf} END"


def _typed(kind: str, u: str) -> tuple[str, str]:
    """``(value, bad)`` SQL for a JSON text ``u`` (NULL: absent or null) of a scalar of ``kind``."""
    if kind == _STR:
        value = f"CASE WHEN starts_with({u}, '\"') THEN CASE WHEN contains({u}, '\\') THEN json_extract_string({u}, '$') ELSE {u}[2:-2] END END"
        bad = f"NOT starts_with({u}, '\"')"
    elif kind == _INT:
        value = f"TRY_CAST({u} AS BIGINT)"
        bad = f"coalesce(TRY_CAST({u} AS BIGINT)::VARCHAR <> {u}, true)"
    else:
        value = f"({u} = 'true')"
        bad = f"{u} NOT IN ('true', 'false')"
    return value, f"({u} IS NOT NULL AND {bad})"


def _counters_groups(schema: WriterSchema, record: str, name: str) -> str:
    """SQL: the groups of JhCounters field ``name`` of ``record``, bare or (where the schema says
    the field is a union) unwrapped: :meth:`WriterSchema.unwrap`'s reading of it."""
    c = f"j.event.{_q(record)}.{_q(name)}"
    wrapper = f"{NAMESPACE}.JhCounters"
    if wrapper in _union_branches(schema, record, name):
        return f"CASE WHEN {c}.groups IS NOT NULL THEN {c}.groups ELSE {c}.{_q(wrapper)}.groups END"
    return f"{c}.groups"


def _counters_shape(schema: WriterSchema, name: str) -> tuple[str, str]:
    """``(present, bad)`` SQL for JhCounters field ``name`` in pass 1: whether it holds a record, and
    whether that record is neither bare nor wrapped as the schema allows (the Python reader refuses it)."""
    present, bad = [], []
    wrapper = f"{NAMESPACE}.JhCounters"
    for record, fields in _RECORDS.items():
        if name not in fields:
            continue
        c = f"j.event.{_q(record)}.{_q(name)}"
        union = wrapper in _union_branches(schema, record, name)
        present.append(f"{c} IS NOT NULL")
        ok = f"{c}.groups IS NOT NULL" + (f" OR {c}.{_q(wrapper)} IS NOT NULL" if union else "")
        bad.append(f"({c} IS NOT NULL AND NOT ({ok}))")
    return " OR ".join(present), " OR ".join(bad)


#: JSON that DuckDB reads but orjson (and so the Python reader) refuses or reads otherwise, and the
#: counter values and names the Python reader converts (``"5"``, ``5.0``) or refuses (``5.5``, ``true``):
#: NaN and Infinity, trailing commas, ``\u`` escapes (one could spell a key), spaces around a key's
#: colon, a counter value that is not a plain integer, a counter name that is not a string.
_GUARD = r'NaN|Infinity|,\s*[\]}]|\\u|"\s+:|":\s|"value":([^-0-9]|-?[0-9]+[^0-9,}])|"name":[^"]'


def _pass1_sql(schema: WriterSchema) -> str:
    """The INSERT of one block's events into ``ev`` (pass 1), for this writer's schema."""
    kinds = " ".join(f"WHEN {_lit(t)} THEN {_lit(s.kind.value)}" for t, s in EVENT_SPECS.items() if s.record)
    present = " ".join(f"WHEN {_lit(t)} THEN j.event.{_q(NAMESPACE + '.' + s.record)} IS NOT NULL"
                       for t, s in EVENT_SPECS.items() if s.record)  # fmt: skip
    times = " ".join(f"WHEN {_lit(t)} THEN {_q(s.time_field)}" for t, s in EVENT_SPECS.items()
                     if s.record and s.time_field)  # fmt: skip
    symbols = ", ".join(map(_lit, sorted(schema.symbols))) or "NULL"
    leaves, values, checks = [], [], []
    for name, kind in _ALL_FIELDS.items():
        if kind == _COUNTERS:
            has, misshapen = _counters_shape(schema, name)
            leaves.append(f"({has}) AS {_q('has_' + name)}")
            leaves.append(f"({misshapen}) AS {_q('bad_' + name)}")
            values.append(_q("has_" + name))
            checks.append(f"WHEN {_q('bad_' + name)} THEN {_lit(name + ' is not a JhCounters record')}")
            continue
        leaves.append(f"{_scalar_leaf(schema, name, kind)} AS {_q('u_' + name)}")
        value, bad = _typed(kind, _q("u_" + name))
        values.append(f"{value} AS {_q(name)}")
        checks.append(f"WHEN {bad} THEN {_lit(name + ' is not ' + ('a number' if kind == _INT else 'a ' + _SQL_TYPES[kind].lower()))}")
    return f"""
INSERT INTO ev
SELECT seq, etype, kind, CASE etype {times} END AS ts, * EXCLUDE (seq, etype, kind, bad, type_ok, keys, line), bad
FROM (
  SELECT seq, etype, CASE etype {kinds} END AS kind, type_ok, keys, line, {", ".join(values)},
    CASE WHEN NOT type_ok THEN 'a JSON value that is not a history event'
         WHEN CASE etype {kinds} END IS NULL THEN 'event type ' || etype || ' is not read here'
         WHEN etype NOT IN ({symbols}) THEN 'event type ' || etype || ' is not in the file''s own schema'
         WHEN NOT coalesce(keys, false) THEN etype || ': `event` is not one record of its type'
         WHEN regexp_matches(line, {_lit(_GUARD)}) THEN 'JSON the Python reader refuses or reads otherwise'
         {" ".join(checks)}
    END AS bad
  FROM (
    SELECT seq, line, coalesce(starts_with(j.type, '"'), false) AS type_ok,
      CASE WHEN starts_with(j.type, '"') THEN json_extract_string(j.type, '$') END AS etype,
      json_type(line, '$.event.*') = ['OBJECT'] AND coalesce(CASE etype {present} END, false) AS keys,
      {", ".join(leaves)}
    FROM (SELECT seq, line, json_transform(line, {_lit(_line_type(False))}) AS j FROM blk WHERE line <> '')
  )
)"""


def _ev_columns() -> str:
    cols = ["seq BIGINT", "etype VARCHAR", "kind VARCHAR", "ts BIGINT"]
    for name, kind in _ALL_FIELDS.items():
        cols.append(f"{_q('has_' + name)} BOOLEAN" if kind == _COUNTERS else f"{_q(name)} {_SQL_TYPES[kind]}")
    return ", ".join([*cols, "bad VARCHAR"])


def _pass2_sql(schema: WriterSchema) -> str:
    """One block's counter rows: (scope, task_id, attempt_id, group_name, counter_name, value, bad).

    ``bad`` is the line number of a JhCounters record that is not one (groups or counts that are not
    lists, a group or counter without its name or value: a missing list is unnested as ``[NULL]``
    so that it shows): the Python reader refuses the file there, so the file is quarantined.
    """
    arms = []
    for record, fields in _RECORDS.items():
        for name, kind in fields.items():
            if kind == _COUNTERS:
                c = f"j.event.{_q(record)}.{_q(name)}"
                arms.append(f"SELECT seq, {_lit(name)} AS field, {_counters_groups(schema, record, name)} AS groups "
                            f"FROM src WHERE {c} IS NOT NULL")  # fmt: skip
    return f"""
WITH src AS (
  SELECT b.seq, json_transform(b.line, {_lit(_line_type(True))}) AS j
  FROM blk b SEMI JOIN (SELECT seq FROM ev_counted WHERE seq BETWEEN $lo AND $hi) c ON b.seq = c.seq
), recs AS ({" UNION ALL ".join(arms)}
), grp AS (SELECT seq, field, unnest(coalesce(groups, [NULL])) AS g FROM recs
), cnt AS (SELECT seq, field, g.name AS group_name,
                  unnest(CASE WHEN g.name IS NULL THEN [NULL] ELSE coalesce(g.counts, [NULL]) END) AS c FROM grp)
SELECT CASE WHEN e.kind LIKE 'attempt%' THEN 'attempt' ELSE s.scope END AS scope,
       CASE WHEN e.kind LIKE 'attempt%' THEN a.task_id WHEN e.kind LIKE 'task%' THEN e.taskid END AS task_id,
       CASE WHEN e.kind LIKE 'attempt%' THEN e.attemptId END AS attempt_id,
       cnt.group_name, cnt.c.name AS counter_name, cnt.c.value AS value,
       CASE WHEN cnt.c.name IS NULL OR cnt.c.value IS NULL THEN seq END AS bad
FROM cnt
JOIN (SELECT seq, kind, taskid, attemptId FROM ev_counted WHERE seq BETWEEN $lo AND $hi) e USING (seq)
JOIN (VALUES {", ".join(f"({_lit(f)}, {_lit(s)})" for f, s in _SCOPES.items())}) s(field, scope) USING (field)
LEFT JOIN att a ON a.attempt_id = e.attemptId"""


# Derived state: one row per job, task and attempt (ingest.jhist_state's rules for a plain file).
_STATE_SQL = """
CREATE TEMP TABLE att_ev AS
SELECT seq, kind, attemptId AS attempt_id, coalesce(nullif(taskid, ''),
       'task_' || substr(regexp_extract(attemptId, '^(.*)_', 1), 9)) AS task_id, taskType
FROM ev WHERE kind LIKE 'attempt%';
CREATE TEMP TABLE att AS
SELECT attempt_id, arg_min_null(task_id, seq) AS task_id, arg_min_null(taskType, seq) AS first_type,
       min(seq) AS first_seq
FROM att_ev GROUP BY attempt_id;
CREATE TEMP TABLE task_ev AS
SELECT seq, kind, taskid AS task_id, taskType FROM ev WHERE kind LIKE 'task%'
UNION ALL SELECT first_seq, 'attempt', task_id, first_type FROM att;
"""

#: What declines a file once pass 1 has read it: each query gives the reason, or no row.
_CHECKS = (
    "SELECT 'a task or attempt event without its id' FROM ev "
    "WHERE (kind LIKE 'task%' AND coalesce(taskid, '') = '') "
    "OR (kind LIKE 'attempt%' AND coalesce(attemptId, '') = '') "
    "OR (kind LIKE 'attempt%' AND coalesce(taskid, '') = '' AND NOT starts_with(attemptId, 'attempt_')) LIMIT 1",
    "SELECT 'the job ended ' || count(*) || ' times' FROM ev "
    "WHERE kind IN ('job_finished', 'job_unsuccessful') HAVING count(*) <> 1",
    "SELECT 'task ' || taskid || ' started twice' FROM ev WHERE kind = 'task_started' "
    "GROUP BY taskid HAVING count(*) > 1 LIMIT 1",
    "SELECT 'task ' || taskid || ' ended twice' FROM ev WHERE kind IN ('task_finished', 'task_failed') "
    "GROUP BY taskid HAVING count(*) > 1 LIMIT 1",
    "SELECT 'attempt ' || attemptId || ' started twice' FROM ev WHERE kind = 'attempt_started' "
    "GROUP BY attemptId HAVING count(*) > 1 LIMIT 1",
    "SELECT 'attempt ' || attemptId || ' ended twice' FROM ev "
    "WHERE kind IN ('attempt_finished', 'attempt_unsuccessful') GROUP BY attemptId HAVING count(*) > 1 LIMIT 1",
    "SELECT 'attempt ' || u.attemptId || ' failed or was killed after its task succeeded with it' "
    "FROM ev u JOIN ev f ON f.kind = 'task_finished' AND f.successfulAttemptId = u.attemptId "
    "WHERE u.kind = 'attempt_unsuccessful' LIMIT 1",
)

_JOB_SQL = """
SELECT
  arg_max_null(jobName, seq) FILTER (kind = 'job_submitted') AS name,
  arg_max_null(userName, seq) FILTER (kind = 'job_submitted') AS "user",
  arg_max_null(nullif(jobQueueName, ''), seq) FILTER (kind IN ('job_submitted', 'job_queue_changed')) AS queue,
  arg_max_null(CASE WHEN kind = 'job_finished' THEN 'SUCCEEDED' ELSE jobStatus END, seq)
      FILTER (kind IN ('job_finished', 'job_unsuccessful')) AS raw_status,
  arg_max_null(submitTime, seq) FILTER (kind IN ('job_submitted', 'job_info_changed')) AS submit_ms,
  arg_max_null(launchTime, seq) FILTER (kind IN ('job_inited', 'job_info_changed')) AS launch_ms,
  arg_max_null(finishTime, seq) FILTER (kind IN ('job_finished', 'job_unsuccessful')) AS finish_ms,
  arg_max_null(CASE WHEN totalMaps >= 0 THEN totalMaps END, seq) FILTER (kind = 'job_inited') AS total_maps,
  arg_max_null(CASE WHEN totalReduces >= 0 THEN totalReduces END, seq) FILTER (kind = 'job_inited') AS total_reduces,
  {counts},
  arg_max_null(uberized, seq) FILTER (kind = 'job_inited') AS uberized,
  arg_max_null(nullif(diagnostics, ''), seq) FILTER (kind = 'job_unsuccessful') AS diagnostics
FROM ev
"""

_TASKS_SQL = """
SELECT task_id,
  coalesce({tt_started}, {tt_first}) AS task_type,
  max(CASE kind WHEN 'task_finished' THEN 'SUCCEEDED' WHEN 'task_failed' THEN coalesce(status, '') END) AS raw_status,
  max(startTime) FILTER (kind = 'task_started') AS start_ms,
  arg_max_null(finishTime, seq) FILTER (kind IN ('task_finished', 'task_failed', 'task_updated')) AS finish_ms,
  max(successfulAttemptId) FILTER (kind = 'task_finished') AS successful_attempt_id,
  max(nullif(splitLocations, '')) FILTER (kind = 'task_started') AS splits,
  max(nullif(error, '')) FILTER (kind = 'task_failed') AS error
FROM (SELECT t.seq, t.kind, t.task_id, t.taskType, e.status, e.startTime, e.finishTime,
             e.successfulAttemptId, e.splitLocations, e.error
      FROM task_ev t LEFT JOIN ev e ON e.seq = t.seq AND t.kind <> 'attempt')
GROUP BY task_id ORDER BY min(seq)
"""

_ATTEMPTS_SQL = """
SELECT a.task_id, a.attempt_id, {tt_first} AS task_type,
  max(CASE e.kind WHEN 'attempt_finished' THEN e.taskStatus WHEN 'attempt_unsuccessful' THEN e.status END) AS raw_status,
  max(e.startTime) FILTER (e.kind = 'attempt_started') AS start_ms,
  max(e.finishTime) FILTER (e.kind IN ('attempt_finished', 'attempt_unsuccessful')) AS finish_ms,
  max(e.mapFinishTime) FILTER (e.kind = 'attempt_finished') AS map_finish_ms,
  max(e.shuffleFinishTime) FILTER (e.kind = 'attempt_finished') AS shuffle_finish_ms,
  max(e.sortFinishTime) FILTER (e.kind = 'attempt_finished') AS sort_finish_ms,
  max(e.hostname) FILTER (e.kind IN ('attempt_finished', 'attempt_unsuccessful')) AS raw_host,
  max(nullif(e.rackname, '')) FILTER (e.kind IN ('attempt_finished', 'attempt_unsuccessful')) AS rackname,
  max(e.trackerName) FILTER (e.kind = 'attempt_started') AS raw_tracker,
  max(nullif(e.containerId, '')) FILTER (e.kind = 'attempt_started') AS container_id,
  max(nullif(e.error, '')) FILTER (e.kind = 'attempt_unsuccessful') AS error,
  max(nullif(e.locality, '')) FILTER (e.kind = 'attempt_started') AS locality,
  max(e.httpPort) FILTER (e.kind = 'attempt_started') AS http_port
FROM att a JOIN ev e ON e.attemptId = a.attempt_id AND e.kind LIKE 'attempt%'
GROUP BY a.task_id, a.attempt_id, a.first_type, a.first_seq ORDER BY a.first_seq
"""


def _task_type_sql(column: str) -> str:
    """:func:`ingest.counters_map.task_type` in SQL (Hadoop's names mapped, '' NULL, others kept)."""
    arms = " ".join(f"WHEN {_lit(raw)} THEN {_lit(v)}" for raw, v in TASK_TYPES.items())
    return f"CASE {column} {arms} WHEN '' THEN NULL ELSE {column} END"


# ---------------------------------------------------------------------------------------------- reading
def _map_strings(values: pa.Array, fn: Callable[[str], Any]) -> pa.Array:
    """``fn`` applied to each distinct non-NULL string of ``values`` (NULL stays NULL)."""
    encoded = pc.dictionary_encode(values)
    mapped = column([fn(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return mapped.take(encoded.indices)


def _host(raw: str) -> str | None:
    return split_host(raw)[0] if raw else None


def _rack(raw: str) -> str | None:
    return split_host(raw)[1] if raw else None


def _status_or_failed(raw: str) -> str | None:
    return normalize_status(raw) or Status.FAILED.value


class _Columnar:
    """One file read by DuckDB (:func:`read_columnar`)."""

    def __init__(self, path: Path, schema: WriterSchema, line_no: int, offset: int, max_line: int) -> None:
        import duckdb  # only for large files: a small ingest never loads it

        self.path, self.schema = path, schema
        self.start = (offset, line_no, max_line)
        self.con: duckdb.DuckDBPyConnection = duckdb.connect(config={"memory_limit": MEMORY_LIMIT})
        self.error = duckdb.Error
        # What DuckDB says of the data (malformed JSON, a failed cast); its parser, binder and
        # catalog errors are phaseline's own bugs and propagate.
        self.refusals = (duckdb.InvalidInputException, duckdb.ConversionException, duckdb.OutOfRangeException)
        self.job_id: str | None = None

    def _blocks(self) -> Iterator[pa.RecordBatch]:
        offset, line_no, max_line = self.start
        return _line_blocks(self.path, offset, line_no, max_line)

    def pass1(self) -> int:
        """Decode and check every event; the number of events.  Raises :class:`Declined`."""
        con = self.con
        con.execute(f"CREATE TEMP TABLE ev ({_ev_columns()})")
        insert = _pass1_sql(self.schema)
        for batch in self._blocks():
            con.register("blk", batch)
            try:
                con.execute(insert)
            except self.refusals as exc:
                raise Declined(f"DuckDB refused a line near line {batch.column(0)[0]}: {str(exc)[:200]}") from None
            finally:
                con.unregister("blk")
        for seq, bad in con.execute("SELECT seq, bad FROM ev WHERE bad IS NOT NULL ORDER BY seq LIMIT 1").fetchall():
            raise Declined(f"line {seq}: {bad}")
        con.execute(_STATE_SQL)
        for check in _CHECKS:
            for (found,) in con.execute(check).fetchall():
                raise Declined(found)
        self.job_id = self._learn_job_id()
        if self.job_id is None:
            raise Declined("no event names the job")
        con.execute("CREATE TEMP TABLE ev_counted AS SELECT * FROM ev WHERE "
                    + " OR ".join(_q("has_" + f) for f, k in _ALL_FIELDS.items() if k == _COUNTERS))  # fmt: skip
        ((n,),) = con.execute("SELECT count(*) FROM ev").fetchall()
        return int(n)

    def _learn_job_id(self) -> str | None:
        """The job id as :meth:`HistoryState.learn_job_id` learns it: from the first event that names it.

        The first events are decoded here by orjson, as the Python reader decodes them
        (pass 1 has checked that DuckDB reads every line alike).
        """
        offset, _, _ = self.start
        state = HistoryState([])
        with open(self.path, "rb") as fh:
            fh.seek(offset)
            for n, raw in enumerate(fh):
                if n >= _LEARN_FROM:
                    break
                text = raw.strip(b" \t\r\n\x00")
                if not text:
                    continue
                body = orjson.loads(text).get("event")
                ((record, payload),) = body.items()
                wrapped = self.schema.unions.get(record)
                if wrapped:
                    self.schema.unwrap(payload, wrapped)
                state.learn_job_id(payload)
                if state.job.job_id is not None:
                    return state.job.job_id
        return None

    def rows(self) -> Iterator[Row | RowBlock]:
        """Pass 2 (events and counters, streamed), then jobs, tasks and attempts.

        Pass 1 checked every value pass 2 converts, so DuckDB has nothing left to refuse;
        if it still does (a file changed in between, a bug), the file is quarantined.
        """
        try:
            yield from self._rows()
        except self.error as exc:
            raise TraceParseError(
                self.path, f"DuckDB failed on a file its first pass had accepted: {str(exc)[:300]}",
                hint="re-run the ingest; if it fails again, please report it",
            ) from None
        finally:
            self.con.close()

    def _rows(self) -> Iterator[Row | RowBlock]:
        con, job = self.con, {"job_id": self.job_id}
        counters_sql = _pass2_sql(self.schema)
        for batch in self._blocks():
            lo, hi = batch.column(0)[0].as_py(), batch.column(0)[-1].as_py()
            con.register("blk", batch)
            try:
                events = con.sql(
                    "SELECT b.seq, e.etype AS event_type, e.ts AS ts_ms, b.line AS payload_json "
                    "FROM blk b JOIN (SELECT seq, etype, ts FROM ev WHERE seq BETWEEN $lo AND $hi) e USING (seq) "
                    "ORDER BY seq", params={"lo": lo, "hi": hi}).to_arrow_table()  # fmt: skip
                counters = con.sql(counters_sql, params={"lo": lo, "hi": hi}).to_arrow_table()
                bad = counters.column("bad")
                if bad.null_count < counters.num_rows:
                    raise TraceParseError(
                        self.path, "counters are not a JhCounters record", line=pc.max(bad).as_py(),
                        hint="the file is corrupt in the middle; re-copy it from the history server's done dir",
                    )
                counters = counters.drop_columns(["bad"])
            finally:
                con.unregister("blk")
            for part in events.to_batches(max_chunksize=4096):
                yield RowBlock("events", part.num_rows, dict(zip(part.schema.names, part.columns, strict=True)), job)
            if counters.num_rows:
                yield RowBlock("counters", counters.num_rows,
                               dict(zip(counters.schema.names, counters.columns, strict=True)), job)  # fmt: skip
        yield self._job_row()
        yield from self._tasks()
        yield from self._attempts()

    def _job_row(self) -> Row:
        counts = ", ".join(
            f"arg_max_null(CASE WHEN {_q(f)} >= 0 THEN {_q(f)} END, seq) FILTER (kind IN ('job_finished', "
            f"'job_unsuccessful')) AS {re.sub(r'([A-Z])', lambda m: '_' + m.group(1).lower(), f)}"
            for f in _JOB_COUNTS
        )
        cursor = self.con.execute(_JOB_SQL.format(counts=counts))
        names = [d[0] for d in cursor.description]
        ((*row,),) = cursor.fetchall()
        values = dict(zip(names, row, strict=True))
        values["status"] = normalize_status(values.pop("raw_status"))
        return Row("jobs", {"job_id": self.job_id, **values, "source_format": "jhist"})

    def _tasks(self) -> Iterator[RowBlock]:
        sql = _TASKS_SQL.format(
            tt_started=f"max({_task_type_sql('taskType')}) FILTER (kind = 'task_started')",
            tt_first=f"arg_min_null({_task_type_sql('taskType')}, seq)",
        )
        table = self.con.sql(sql).to_arrow_table()
        status = _map_strings(table.column("raw_status").combine_chunks(), _status_or_failed)
        yield from _state_blocks("tasks", table.drop_columns(["raw_status"]).append_column("status", status),
                                 self.job_id)  # fmt: skip

    def _attempts(self) -> Iterator[RowBlock]:
        table = self.con.sql(_ATTEMPTS_SQL.format(tt_first=_task_type_sql("a.first_type"))).to_arrow_table()
        raw_host = table.column("raw_host").combine_chunks()
        tracker = _map_strings(table.column("raw_tracker").combine_chunks(), _host)
        host = pc.coalesce(_map_strings(raw_host, _host), tracker)
        rack = pc.coalesce(table.column("rackname").combine_chunks(), _map_strings(raw_host, _rack))
        status = _map_strings(table.column("raw_status").combine_chunks(), normalize_status)
        table = table.drop_columns(["raw_host", "raw_tracker", "rackname", "raw_status"])
        for name, column in (("host", host), ("rack", rack), ("status", status)):
            table = table.append_column(name, column)
        yield from _state_blocks("attempts", table, self.job_id)


def _state_blocks(name: str, table: pa.Table, job_id: str | None) -> Iterator[RowBlock]:
    for part in table.to_batches(max_chunksize=8192):
        yield RowBlock(name, part.num_rows, dict(zip(part.schema.names, part.columns, strict=True)),
                       {"job_id": job_id})  # fmt: skip


def read_columnar(
    path: Path, ctx: ReadContext, schema: WriterSchema, line_no: int, offset: int, max_line: int
) -> Iterator[Row | RowBlock] | None:
    """The rows of a ``.jhist`` file after its header, or None when the file is declined.

    Parameters
    ----------
    path
        A plain (not compressed) history file.
    ctx
        Its read context; ``events_read`` is set once the rows are given.
    schema
        The writer's schema (line 2).
    line_no, offset
        The line number and byte offset after the schema line.
    max_line
        Lines of this many bytes or more decline the file (the Python reader refuses them).

    Returns
    -------
    Iterator[Row | RowBlock] | None
        The same rows as :func:`ingest.jhist.read_jhist` (pass 1 has checked every
        line before this returns), or None: then ``ctx`` is untouched and the
        reason is in :data:`last_decline` (for tests and benchmarks).
    """
    global last_decline
    reader = _Columnar(path, schema, line_no, offset, max_line)
    try:
        events = reader.pass1()
    except Declined as exc:
        reader.con.close()
        last_decline = str(exc)
        return None
    last_decline = None

    def rows() -> Iterator[Row | RowBlock]:
        ctx.events_read += events
        yield from reader.rows()

    return rows()


#: Why the last file :func:`read_columnar` was given was declined (None: it was read).
last_decline: str | None = None
