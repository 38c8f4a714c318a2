"""HiTune's processed CSV reports (Intel HiTune ``visual_report`` input files).

One real run ships in ``fixtures/intel-hitune/visual_report_example`` (``sorter``,
640 maps / 32 reduces on 8 hosts).  Each CSV has a header line; fields are
*unquoted* even when they contain quotes (``"main"``, `` cluster="chukwa"``) and
keep Hadoop 1.x history escapes (``\\.``, ``\\$``), so lines are split on commas
without CSV quoting and values are unescaped and stripped here.

What lands where:

* ``instruments_map.csv`` / ``instruments_red.csv``: HiTune's own dataflow
  breakdown, one row per (attempt, vertex, thread, breakdown item) with the
  vertex instance's ``phase_start``/``phase_end``/``phase_count`` and a
  ``breakdown_count`` by function (hotspot method) or by thread state.  Each row
  lands in ``vertex_breakdown`` (an exact duplicate row, which the files contain,
  in ``events`` as ``duplicate``); each (attempt, vertex, thread) also gives one
  ``vertex_instances`` row: samples = ``phase_count``, busy = its RUNNABLE
  count, idle = its BLOCKED + WAITING + TIME_WAITING counts.  HiTune's phase
  names become the vertex ids of ``specs/hadoop-2.spec`` (:data:`VERTEX_OF`).
* ``cpu.csv`` (``sar -u``) and the Hadoop metrics files (``jvmmetrics``,
  ``tasktrackermetric``, ``jobtrackermetric``, ``namenodemetric``): one
  ``system_samples`` row per numeric field.
* ``MapAttempt.csv`` / ``ReduceAttempt.csv``: ``attempts`` (a setup or cleanup attempt,
  which HiTune files with the maps, by its ``STATE_STRING``: these files lost 0.20's
  ``TASK_TYPE``) and their counter columns as attempt ``counters`` (HiTune keeps
  Hadoop 0.20's display names: :data:`ingest.hitune_history.COUNTERS` gives the store's names); ``job.csv``: ``jobs``
  and its byte counters (``HDFS_BYTES_READ``...) as ``job_total`` ``counters``.
* ``MapTask.csv`` / ``ReduceTask.csv``: ``events``, one per row, and from each row a
  ``tasks`` row (its ``TASK_TYPE``) and task ``counters``.
* Anything else with a HiTune/Chukwa header: ``events``, one per row.

A row with the wrong number of fields, a non-numeric count, a metric that is
no finite number (``nan``, ``inf``, ``1e999``: no measurement) or an attempt or
task id that names no job (every row of those tables belongs to one) is kept in
``events`` as ``malformed`` and named (file and line) in the ingest notes; the
rest of the file lands.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ingest.base import ReadContext, Row
from ingest.formats import Format
from ingest.hitune_fields import SOURCE, clean, data_rows, field_int, float_field, required_int
from ingest.hitune_history import history_rows
from ingest.mrcommon import INT64_MAX, int64
from ingest.opening import iter_lines
from ingest.samples_hitune import malformed_row, normalize_state
from phaseline.schemas import ThreadState

VERTEX_OF = {
    "Mapphase": "map",
    "SpillThread": "spill",
    "Copier": "copier",
    "MemMerge": "inmem_merge",
    "FSMerge": "ondisk_merge",
    "Shuffle": "shuffle",
    "Sort": "sort",
    "Reduce": "reduce",
}
INSTRUMENT_HEADER = "phase_end,host,phase_count,breakdown_count,phase_start,phase_name"
METRIC_CATEGORIES = {"cpu": "sar"}
_SAR_INTERVAL = re.compile(r"sar\s+-\w+\s+(\d{1,9})\b")
_IDLE_STATES = frozenset({ThreadState.BLOCKED, ThreadState.WAITING, ThreadState.TIMED_WAITING})
_SKIP_METRIC_FIELDS = frozenset({"Timestamp", "capp", "category", "csource", "ctags", "hostName", "processName"})


@dataclass(slots=True)
class _Instance:
    job_id: str
    attempt_id: str
    host: str
    thread_id: int
    thread_name: str
    vertex: str
    start_ms: int
    end_ms: int
    samples: int
    states: dict[str, int] = field(default_factory=dict)


def _instruments(path: Path, ctx: ReadContext, header: list[str]) -> Iterator[Row]:
    idx = {name: i for i, name in enumerate(header)}
    groups: dict[tuple[str, str, int], _Instance] = {}
    seen: set[tuple[str, ...]] = set()

    def breakdown(line_no: int, line: str, f: list[str]) -> Iterator[Row]:
        try:
            attempt = f[idx["attempt_id"]]
            phase = f[idx["phase_name"]]
            vertex = VERTEX_OF.get(phase, phase.lower())
            thread_id = required_int(f[idx["thread_id"]])
            count = required_int(f[idx["breakdown_count"]])
            inst = _Instance(
                f[idx["job_id"]], attempt, f[idx["host"]], thread_id, f[idx["thread_name"]], vertex,
                required_int(f[idx["phase_start"]]), required_int(f[idx["phase_end"]]),
                required_int(f[idx["phase_count"]]),
            )
            kind = f[idx["breakdown_type"]]
            name = f[idx["breakdown_name"]]
            if kind == "state":
                name = normalize_state(name)
        except (ValueError, KeyError) as exc:  # (KeyError: the header lacks the column)
            yield malformed_row(ctx, line_no, f"bad value: {exc}" if isinstance(exc, ValueError)
                                else f"no column {exc} in the header", line)  # fmt: skip
            return
        key = tuple(f)
        if key in seen:
            ctx.unknown["duplicate"] += 1
            payload = orjson.dumps({"line": line_no, "text": line}).decode()
            yield Row("events", {"job_id": inst.job_id, "seq": line_no, "event_type": "duplicate", "ts_ms": None, "payload_json": payload})
            return
        seen.add(key)
        group = groups.setdefault((attempt, vertex, thread_id), inst)
        if kind == "state":
            group.states[name] = group.states.get(name, 0) + count
        yield Row(
            "vertex_breakdown",
            {
                "job_id": inst.job_id, "attempt_id": attempt, "host": inst.host, "thread_id": thread_id,
                "vertex": vertex, "kind": kind, "name": name, "samples": count, "source": SOURCE,
            },
        )

    yield from data_rows(path, ctx, header, breakdown)
    for g in groups.values():
        busy = min(g.states.get(ThreadState.RUNNABLE.value, 0), INT64_MAX)  # (a sum of checked counts)
        idle = min(sum(n for s, n in g.states.items() if s in _IDLE_STATES), INT64_MAX)
        yield Row(
            "vertex_instances",
            {
                "job_id": g.job_id, "attempt_id": g.attempt_id, "host": g.host, "thread_id": g.thread_id,
                "thread_name": g.thread_name, "vertex": g.vertex, "start_ms": g.start_ms, "end_ms": g.end_ms,
                "samples": g.samples, "busy_samples": busy, "idle_samples": idle, "source": SOURCE,
            },
        )


def _metrics(path: Path, ctx: ReadContext, header: list[str]) -> Iterator[Row]:
    def samples(line_no: int, line: str, f: list[str]) -> Iterator[Row]:
        rec = dict(zip(header, f, strict=True))
        try:
            ts = field_int(rec["Timestamp"])
            if ts is not None:
                int64(ts * 1000)
        except ValueError:
            ts = None
        if ts is None:
            yield malformed_row(ctx, line_no, f"Timestamp {rec['Timestamp']!r} is not epoch seconds", line)
            return
        category = rec.get("category") or "cpu"
        m = _SAR_INTERVAL.search(rec.get("capp", ""))
        interval = int(m.group(1)) * 1000 if m else None  # (at most 9 digits: no 64-bit overflow)
        host = rec.get("hostName") or rec.get("csource") or None
        device = rec.get("processName") or "all"
        rows = []
        for name, value in rec.items():
            if name in _SKIP_METRIC_FIELDS:
                continue
            try:
                number = float_field(value)
            except ValueError as exc:
                yield malformed_row(ctx, line_no, f"metric {name!r}: {exc}", line)
                return
            if number is None:
                continue
            metric = f"cpu_{name.lstrip('%')}_pct" if category == "cpu" else f"{category}.{name}"
            rows.append(
                Row(
                    "system_samples",
                    {
                        "host": host, "ts_ms": ts * 1000, "interval_ms": interval, "metric": metric,
                        "device": device, "value": number, "source": METRIC_CATEGORIES.get(category, "hadoop_metrics"),
                    },
                )
            )
        if not rows:
            yield malformed_row(ctx, line_no, "no numeric metric in the row", line)
            return
        ctx.events_read += len(rows) - 1  # one row per metric: keep events_read = rows kept
        yield from rows

    yield from data_rows(path, ctx, header, samples)


def read_hitune_csv(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read one HiTune report CSV (see the module docstring for what lands where)."""
    first = next(iter_lines(path, ctx), (0, ""))[1]
    header = [clean(h) for h in first.split(",")]
    if first.startswith(INSTRUMENT_HEADER):
        yield from _instruments(path, ctx, header)
    elif header[0] == "Timestamp":
        yield from _metrics(path, ctx, header)
    else:
        yield from history_rows(path, ctx, header)


def _sniff(head: bytes, path: Path) -> bool:
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    if first.startswith(INSTRUMENT_HEADER.encode()):
        return True
    # Chukwa-demuxed records: every HiTune CSV carries the csource/capp/ctags columns
    cols = set(first.split(b","))
    return {b"csource", b"capp", b"ctags"} <= cols


FORMATS = (
    Format(
        "hitune-csv",
        _sniff,
        read_hitune_csv,
        "HiTune report CSVs: dataflow breakdowns by vertex, sar CPU, Hadoop metrics, attempts",
        record_tables=("vertex_breakdown", "system_samples", "attempts", "jobs", "events"),
    ),
)
