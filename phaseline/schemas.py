"""Every table of the store, declared once as a pyarrow schema.

Column names are SQL identifiers with units in them (``start_ms``,
``data_bytes``).  Every table carries ``source_sha256``: the content hash of
the file its rows came from, which is how the store replaces or removes one
file's rows atomically.

Stages add tables by adding a :class:`TableSpec` to :data:`TABLES`; nothing
else needs to change for the store to write, validate and expose them as
DuckDB views.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from phaseline.errors import SchemaError

SCHEMA_VERSION = 1


class TaskType(enum.StrEnum):
    """Task types, normalized across Hadoop versions (0.20's ``MAP`` and 2.x's ``MAP``...)."""

    MAP = "MAP"
    REDUCE = "REDUCE"
    SETUP = "SETUP"
    CLEANUP = "CLEANUP"
    TASK_CLEANUP = "TASK_CLEANUP"


class Status(enum.StrEnum):
    """Normalized task/attempt/job statuses; raw values stay in ``events``."""

    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    KILLED = "KILLED"
    RUNNING = "RUNNING"
    ERROR = "ERROR"


class SourceStatus(enum.StrEnum):
    """What became of one ingested file."""

    LANDED = "landed"  # every record landed
    PARTIAL = "partial"  # a truncated file (what came before the cut landed) or one with unreadable records skipped (the rest landed); error says where
    QUARANTINED = "quarantined"  # nothing landed; error says file, place and problem
    SKIPPED = "skipped"  # recognised as not a trace phaseline reads (e.g. a Spark event log)


class Phase(enum.StrEnum):
    """Phase names used everywhere (``attempt_phases.phase``, profiles, models).

    The six generic phases of Zhang et al. 2013 are READ, COLLECT, SPILL, MERGE
    (map side) and SHUFFLE, WRITE (reduce side); MAP and REDUCE are the custom
    (user function) phases; SORT is the reduce-side merge/sort.  A source that
    cannot split a span names the combined phase, e.g. ``"reduce+write"``.
    """

    READ = "read"
    MAP = "map"
    COLLECT = "collect"
    SPILL = "spill"
    MERGE = "merge"
    SHUFFLE = "shuffle"
    SORT = "sort"
    REDUCE = "reduce"
    WRITE = "write"


GENERIC_PHASES: tuple[Phase, ...] = (
    Phase.READ,
    Phase.COLLECT,
    Phase.SPILL,
    Phase.MERGE,
    Phase.SHUFFLE,
    Phase.WRITE,
)


class CounterScope(enum.StrEnum):
    JOB_TOTAL = "job_total"
    JOB_MAP = "job_map"
    JOB_REDUCE = "job_reduce"
    TASK = "task"
    ATTEMPT = "attempt"


_STATUS_ALIASES = {
    "SUCCESS": Status.SUCCEEDED,
    "SUCCEEDED": Status.SUCCEEDED,
    "FAILED": Status.FAILED,
    "FAILURE": Status.FAILED,
    "KILLED": Status.KILLED,
    "RUNNING": Status.RUNNING,
    "ERROR": Status.ERROR,
}


def normalize_status(raw: str | None) -> str | None:
    """Map a raw Hadoop status (``SUCCESS``, ``SUCCEEDED``, ``FAILED``...) to :class:`Status`.

    >>> normalize_status("SUCCESS")
    'SUCCEEDED'
    >>> normalize_status(None) is None
    True
    """
    if raw is None or raw == "":
        return None
    status = _STATUS_ALIASES.get(raw.strip().upper())
    return status.value if status is not None else raw.strip().upper()


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A table's name, schema, and the columns every row must have.

    ``flush_rows`` caps the rows the store buffers for the table before it writes
    them as one Parquet row group: tables whose rows carry whole trace records
    set it lower, so the buffer stays a few MB however large the file.
    ``plain`` names columns of long, all-distinct values (whole trace records):
    they are written without a Parquet dictionary, which would be built for
    every row group and then dropped (half the write time of ``events``).
    ``unit`` names the columns (``job_id`` first) that say what a row is an
    account of: one job, task, attempt, counter set or conf key.  Two sources
    may describe the same unit (a 0.20 history log and Rumen's parse of it; a
    truncated and a complete copy of one ``.jhist``): the views then keep one source's
    rows per unit (:meth:`phaseline.store.Store.connect`).  Tables without a
    unit (``events``, samples) keep every row of every source.
    """

    name: str
    schema: pa.Schema
    required: tuple[str, ...]
    doc: str
    flush_rows: int = 32_768
    plain: tuple[str, ...] = ()
    unit: tuple[str, ...] = ()

    def parquet_options(self) -> dict[str, Any]:
        """Keyword arguments for ``pq.write_table`` / ``pq.ParquetWriter`` of this table's files.

        >>> table("events").parquet_options()["use_dictionary"]
        ['job_id', 'seq', 'event_type', 'ts_ms', 'source_sha256']
        """
        # page CRCs: `phaseline verify` decodes every page and so finds a byte damaged since
        options: dict[str, Any] = {"compression": "zstd", "write_page_checksum": True}
        if self.plain:
            options["use_dictionary"] = [n for n in self.schema.names if n not in self.plain]
        return options

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.schema.names)

    @property
    def row_columns(self) -> tuple[str, ...]:
        """The columns a reader fills, in order (all but ``source_sha256``, which the store adds).

        A reader may give a row as a tuple in this order instead of a dict (the
        fast path for tables with millions of rows, such as ``counters``).
        """
        return tuple(n for n in self.schema.names if n != "source_sha256")


def _s(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(n, t) for n, t in fields] + [pa.field("source_sha256", pa.string())])


I64 = pa.int64()
STR = pa.string()
F64 = pa.float64()

TABLES: dict[str, TableSpec] = {}


def register(spec: TableSpec) -> TableSpec:
    """Add a table to the store's catalogue (stages call this for their own tables)."""
    if spec.name in TABLES and TABLES[spec.name] != spec:
        raise SchemaError(f"table {spec.name!r} declared twice with different schemas")
    if "source_sha256" not in spec.schema.names:
        raise SchemaError(f"table {spec.name!r} lacks the source_sha256 column")
    TABLES[spec.name] = spec
    return spec


#: Formats whose rows restate another trace (a Rumen trace is a parse of job history
#: logs): where a first-hand trace describes the same unit (``TableSpec.unit``), the
#: store's views keep the first-hand rows.
DERIVED_FORMATS = frozenset({"rumen"})

SOURCES = register(
    TableSpec(
        "sources",
        pa.schema(
            [
                ("path", STR),
                ("sha256", STR),
                ("bytes", I64),
                ("format", STR),
                ("status", STR),
                ("error", STR),
                ("ingested_at", pa.timestamp("ms", tz="UTC")),
                ("events_read", I64),
                ("rows_written", I64),
                ("rows_quarantined", I64),
                ("record_tables", STR),
                ("source_sha256", STR),
                # the jobs its rows of tables with a unit describe (which jobs two sources share)
                ("job_ids", pa.list_(STR)),
            ]
        ),
        ("path", "sha256", "status"),
        "One row per file ingested: where it was, its hash, format, and what became of it.",
    )
)

JOBS = register(
    TableSpec(
        "jobs",
        _s(
            ("job_id", STR),
            ("name", STR),
            ("user", STR),
            ("queue", STR),
            ("status", STR),
            ("submit_ms", I64),
            ("launch_ms", I64),
            ("finish_ms", I64),
            ("total_maps", I64),
            ("total_reduces", I64),
            ("finished_maps", I64),
            ("finished_reduces", I64),
            ("failed_maps", I64),
            ("failed_reduces", I64),
            ("killed_maps", I64),
            ("killed_reduces", I64),
            ("uberized", pa.bool_()),
            ("diagnostics", STR),
            ("hadoop_version", STR),
            ("source_format", STR),
        ),
        ("job_id",),
        "One row per job run.  finished_/failed_/killed_ counts are the history's own: Hadoop 2/3 "
        "count tasks (NULL where its JOB_FAILED/KILLED record has none); Hadoop 0.20/1.x's "
        "FAILED_MAPS counts failed and killed map attempts; Rumen's are counted from its tasks. "
        "Count attempts in the attempts table to compare jobs across versions.",
        unit=("job_id",),
    )
)

TASKS = register(
    TableSpec(
        "tasks",
        _s(
            ("job_id", STR),
            ("task_id", STR),
            ("task_type", STR),
            ("status", STR),
            ("start_ms", I64),
            ("finish_ms", I64),
            ("successful_attempt_id", STR),
            ("splits", STR),
            ("error", STR),
        ),
        ("job_id", "task_id"),
        "One row per task; splits are the preferred input locations, comma separated.",
        flush_rows=8_192,  # a large job's rows come all at once at its file's end: bounded by this
        unit=("job_id", "task_id"),
    )
)

ATTEMPTS = register(
    TableSpec(
        "attempts",
        _s(
            ("job_id", STR),
            ("task_id", STR),
            ("attempt_id", STR),
            ("task_type", STR),
            ("status", STR),
            ("start_ms", I64),
            ("finish_ms", I64),
            ("map_finish_ms", I64),
            ("shuffle_finish_ms", I64),
            ("sort_finish_ms", I64),
            ("host", STR),
            ("rack", STR),
            ("container_id", STR),
            ("error", STR),
            ("locality", STR),
            ("http_port", I64),
        ),
        ("job_id", "attempt_id"),
        "One row per task attempt (successful, failed, killed, speculative).",
        flush_rows=8_192,
        unit=("job_id", "attempt_id"),
    )
)

COUNTERS = register(
    TableSpec(
        "counters",
        _s(
            ("job_id", STR),
            ("task_id", STR),
            ("attempt_id", STR),
            ("scope", STR),
            ("group_name", STR),
            ("counter_name", STR),
            ("value", I64),
        ),
        ("job_id", "scope", "group_name", "counter_name"),
        "Counters at job_total/job_map/job_reduce/task/attempt scope.",
        unit=("job_id", "scope", "task_id", "attempt_id"),
    )
)

CONF = register(
    TableSpec(
        "conf",
        _s(("job_id", STR), ("key", STR), ("value", STR), ("source", STR)),
        ("job_id", "key"),
        "Job configuration properties; source is where the property was set.",
        unit=("job_id", "key"),
    )
)

EVENTS = register(
    TableSpec(
        "events",
        _s(
            ("job_id", STR),
            ("seq", I64),
            ("event_type", STR),
            ("ts_ms", I64),
            ("payload_json", STR),
        ),
        ("seq", "event_type"),
        "Every raw event or record of every file, so nothing is dropped.",
        flush_rows=1_024,  # a .jhist event line is 0.3-2 kB: 0.3-2 MB of lines per row group
        plain=("payload_json",),
    )
)

ATTEMPT_EVENTS = register(
    TableSpec(
        "attempt_events",
        _s(
            ("job_id", STR),
            ("attempt_id", STR),
            ("thread_id", I64),
            ("thread_name", STR),
            ("ts_ms", I64),
            ("kind", STR),
            ("bytes", I64),
            ("records", I64),
            ("segments", I64),
            ("detail", STR),
            ("line_no", I64),
        ),
        ("attempt_id", "ts_ms", "kind"),
        "Phase-marking lines of MapTask/ReduceTask logs, one row per line.",
        unit=("job_id", "attempt_id"),
    )
)

ATTEMPT_PHASES = register(
    TableSpec(
        "attempt_phases",
        _s(
            ("job_id", STR),
            ("attempt_id", STR),
            ("task_type", STR),
            ("phase", STR),
            ("start_ms", I64),
            ("end_ms", I64),
            ("dur_ms", I64),
            ("data_bytes", I64),
            ("data_records", I64),
            # 'main': the task thread's consecutive phases (they cover the attempt's span);
            # 'background': helper-thread work concurrent with them (SpillThread spills,
            # reduce-side merges); see ingest/phases/.
            ("lane", STR),
            # dur_ms to the microsecond where the job's own timers measured the phase (the
            # microbenchmark job's read, collect and write, and the rest of their span), else NULL
            ("dur_us", I64),
        ),
        ("attempt_id", "phase"),
        "Generic and custom phases (Zhang et al. 2013) of each attempt, from its log.",
        unit=("job_id", "attempt_id"),
    )
)


TOPOLOGY = register(
    TableSpec(
        "topology",
        _s(("host", STR), ("rack", STR)),
        ("host",),
        "Cluster topology from Rumen topology files: one row per host with its rack path.",
    )
)


def table(name: str) -> TableSpec:
    """The spec of a table, or a :class:`SchemaError` naming the known ones."""
    try:
        return TABLES[name]
    except KeyError:
        raise SchemaError(f"unknown table {name!r}; known: {', '.join(sorted(TABLES))}") from None


# --- Thread samples and the HiTune dataflow (issue 4; Dai et al. 2011) -------------------------


class ThreadState(enum.StrEnum):
    """Java thread states of a sample (``Thread.State``), plus UNKNOWN; RUNNABLE is busy."""

    NEW = "NEW"
    RUNNABLE = "RUNNABLE"
    BLOCKED = "BLOCKED"
    WAITING = "WAITING"
    TIMED_WAITING = "TIMED_WAITING"
    TERMINATED = "TERMINATED"
    UNKNOWN = "UNKNOWN"


SAMPLES = register(
    TableSpec(
        "samples",
        _s(
            ("job_id", STR),
            ("attempt_id", STR),  # from the sample's target, or NULL (joined via attempt_events)
            ("host", STR),
            ("thread_id", I64),  # Java thread id (= log4j %tid)
            ("thread_name", STR),
            ("ts_ms", I64),
            ("sample_type", STR),  # execution, native, park, monitor_wait, monitor_enter, io, jstack...
            ("state", STR),  # ThreadState
            ("stack_id", I64),  # -> stacks.stack_id; NULL when the record had no stack
            ("duration_ms", F64),  # 0 for point samples; how long a wait/io event lasted
            ("source", STR),  # the sampler: hitune, jfr, jstack
        ),
        ("ts_ms", "sample_type", "source"),
        "Thread samples (HiTune's task execution sampling records, section 3 / Figure 6).",
    )
)

STACKS = register(
    TableSpec(
        "stacks",
        _s(
            ("stack_id", I64),  # 64-bit hash of the frames: equal stacks get equal ids everywhere
            ("frames", pa.list_(STR)),  # method-level frames, top (innermost) first
            ("top_frame", STR),
            ("depth", I64),
        ),
        ("stack_id", "frames"),
        "Distinct stack traces, each stored once per source file (samples refer to them).",
    )
)

SYSTEM_SAMPLES = register(
    TableSpec(
        "system_samples",
        _s(
            ("host", STR),
            ("ts_ms", I64),
            ("interval_ms", I64),  # the period the value averages over, when known
            ("metric", STR),  # cpu_user_pct, cpu_system_pct, cpu_iowait_pct, cpu_idle_pct, jvm_cpu_user...
            ("device", STR),  # cpu id, disk, interface, process; 'all' for the whole host
            ("value", F64),
            ("source", STR),  # sar, jfr, hadoop_metrics
        ),
        ("ts_ms", "metric", "value"),
        "System sampler records (sysstat/sar CPU, disk, network; JFR CPU load; Hadoop metrics).",
    )
)

VERTEX_INSTANCES = register(
    TableSpec(
        "vertex_instances",
        _s(
            ("job_id", STR),
            ("attempt_id", STR),
            ("host", STR),
            ("thread_id", I64),
            ("thread_name", STR),
            ("vertex", STR),
            ("start_ms", I64),
            ("end_ms", I64),
            ("samples", I64),
            ("busy_samples", I64),  # RUNNABLE samples
            ("idle_samples", I64),  # waiting/blocked samples (waits in sample periods)
            ("source", STR),  # reconstruct (from samples + a spec) or hitune_csv
        ),
        ("attempt_id", "vertex", "start_ms", "end_ms"),
        "Instances of dataflow vertices (HiTune section 5.3): one per attempt, thread and vertex.",
    )
)

VERTEX_BREAKDOWN = register(
    TableSpec(
        "vertex_breakdown",
        _s(
            ("job_id", STR),
            ("attempt_id", STR),
            ("host", STR),
            ("thread_id", I64),
            ("vertex", STR),
            ("kind", STR),  # 'function' (hotspot method), 'state' (thread state) or 'thread' (a thread of a thread-group instance)
            ("name", STR),
            ("samples", I64),
            ("source", STR),
        ),
        ("attempt_id", "vertex", "kind", "name"),
        "Per vertex instance sample counts by method or thread state (HiTune's breakdown reports).",
    )
)
