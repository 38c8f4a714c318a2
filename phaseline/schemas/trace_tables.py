"""The tables of trace records: sources, jobs, tasks, attempts, counters, conf, events, the task logs'
attempt events and phases, and Rumen's topology."""

from __future__ import annotations

import pyarrow as pa

from phaseline.schemas.table_spec import I64, STR, TableSpec, _s, register

#: Formats whose rows restate another trace (a Rumen trace is a parse of job history
#: logs): where a first-hand trace describes the same unit (``TableSpec.unit``), the
#: store's views keep the first-hand rows.
DERIVED_FORMATS = frozenset({"rumen"})
#: Formats that are a job's own history: the ApplicationMaster's (on Hadoop 1, the JobTracker's)
#: record of when each attempt was launched and when it ended, and of the job's counters.  A task
#: log sees its attempt from inside the task's JVM: its first line comes after the JVM has started
#: (4-5 s after the container's launch on a loaded mini YARN cluster), so where a history and a
#: job's task logs describe the same unit (an attempt's start and end, a task, the counters) the
#: store's views keep the history's rows; the logs' own units (phases, attempt events) stay.
HISTORY_FORMATS = frozenset({"jhist", "history_v1", "rest_json"})

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
