"""Every table of the store, declared once as a pyarrow schema.

Column names are SQL identifiers with units in them (``start_ms``,
``data_bytes``).  Every table carries ``source_sha256``: the content hash of
the file its rows came from, which is how the store replaces or removes one
file's rows atomically.

Stages add tables by adding a :class:`TableSpec` to :data:`TABLES`; nothing
else needs to change for the store to write, validate and expose them as
DuckDB views.

The package is split by concept (``enums``: the fixed sets of values; ``table_spec``: the
declaration and the catalogue; ``trace_tables`` and ``sample_tables``: the tables); every
name is imported from here, ``phaseline.schemas``.
"""

from __future__ import annotations

from phaseline.schemas.enums import (
    GENERIC_PHASES,
    CounterScope,
    Phase,
    SourceStatus,
    Status,
    TaskType,
    ThreadState,
    normalize_status,
)
from phaseline.schemas.table_spec import SCHEMA_VERSION, TABLES, TableSpec, register, table
from phaseline.schemas.trace_tables import (
    ATTEMPT_EVENTS,
    ATTEMPT_PHASES,
    ATTEMPTS,
    CONF,
    COUNTERS,
    DERIVED_FORMATS,
    EVENTS,
    HISTORY_FORMATS,
    JOBS,
    SOURCES,
    TASKS,
    TOPOLOGY,
)

from phaseline.schemas.sample_tables import (  # isort: skip  (after the trace tables: the catalogue's order)
    SAMPLES,
    STACKS,
    SYSTEM_SAMPLES,
    VERTEX_BREAKDOWN,
    VERTEX_INSTANCES,
)

__all__ = [
    "ATTEMPTS", "ATTEMPT_EVENTS", "ATTEMPT_PHASES", "CONF", "COUNTERS", "DERIVED_FORMATS", "EVENTS",
    "GENERIC_PHASES", "HISTORY_FORMATS", "JOBS", "SAMPLES", "SCHEMA_VERSION", "SOURCES", "STACKS", "SYSTEM_SAMPLES", "TABLES",
    "TASKS", "TOPOLOGY", "VERTEX_BREAKDOWN", "VERTEX_INSTANCES", "CounterScope", "Phase", "SourceStatus",
    "Status", "TableSpec", "TaskType", "ThreadState", "normalize_status", "register", "table",
]  # fmt: skip
