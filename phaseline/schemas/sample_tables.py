"""The tables of thread samples and the HiTune dataflow (issue 4; Dai et al. 2011): samples, stacks,
system samples, vertex instances and their breakdown."""

from __future__ import annotations

import pyarrow as pa

from phaseline.schemas.table_spec import F64, I64, STR, TableSpec, _s, register

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
