"""The platform profile: one row per (generic phase, task attempt) with data and duration.

Zhang, Cherkasova and Loo (ICPE'13), section 3 and Figure 2: running the
microbenchmarks gives, for every map and reduce task, the duration of each
generic phase and the amount of data it processed, ``(Dur_i, Data_i)`` for
``i`` in read, collect, spill, merge (map) and shuffle, write (reduce).  Those
rows are the training set of the platform model.

Two sources:

* :func:`profile_from_store`: the store's ``attempt_phases`` (phases cut from
  task logs), ``attempts``, ``counters``, ``conf`` and ``jobs`` tables, through
  the SQL in ``platform_model/sql/``.  Rows a run should have but lacks (no
  log line for a phase, a phase only inside a combined span such as
  ``read+map+collect``, no duration or no data size) are listed in
  :attr:`PlatformProfile.missing`, never silently dropped.
* :func:`profile_from_csv`: measurements made elsewhere, a CSV with columns
  ``phase,data_bytes,dur_ms`` (the paper's Figure 2) and optionally ``run_id``
  (which run a row came from, for cross-validation by run).
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pandas as pd

from phaseline.errors import QueryError, SchemaError, StoreError
from phaseline.hadoop_names import YARN_ENGINE
from phaseline.schemas import GENERIC_PHASES
from platform_model.task_cores import TASK_CORES, measured_task_cores
from profiles.queries import Concept, install

#: ``PlatformProfile.cluster`` key of the measured slot handover: task type -> {"ms", "handovers", "jobs"}.
SLOT_HANDOVER = "slot_handover"

#: The profile's columns.
COLUMNS = ("phase", "run_id", "attempt_id", "data_bytes", "dur_ms")
#: Columns a profile CSV must have (a contract: scripts write these).
CSV_REQUIRED = ("phase", "data_bytes", "dur_ms")
GENERIC = tuple(p.value for p in GENERIC_PHASES)

#: Configuration keys the platform model records (they shape the generic phases).
SETTINGS_KEYS = (
    "mapreduce.task.io.sort.mb",
    "mapreduce.task.io.sort.factor",
    "mapreduce.map.sort.spill.percent",
    "mapreduce.reduce.memory.totalbytes",
    "mapreduce.reduce.memory.mb",
    "mapreduce.reduce.java.opts",
    "mapreduce.map.java.opts",
    "mapreduce.reduce.shuffle.input.buffer.percent",
    "mapreduce.reduce.shuffle.merge.percent",
    "mapreduce.reduce.shuffle.memory.limit.percent",
    "mapreduce.reduce.input.buffer.percent",
    "mapreduce.reduce.shuffle.parallelcopies",
    "mapreduce.map.output.compress",
    "mapreduce.map.output.compress.codec",
    "mapreduce.framework.name",
    "mapreduce.local.map.tasks.maximum",
    "mapreduce.local.reduce.tasks.maximum",
    "dfs.blocksize",
    "dfs.replication",
    "io.file.buffer.size",
    "io.sort.mb",
    "io.sort.factor",
    "mapred.child.java.opts",
    "mapred.job.shuffle.input.buffer.percent",
    "mapred.job.shuffle.merge.percent",
)


@dataclass(frozen=True, slots=True)
class MissingData:
    """A phase a run should have measured but did not, and why."""

    run_id: str
    attempt_id: str
    phase: str
    reason: str


@dataclass(frozen=True, slots=True, eq=False)
class PlatformProfile:
    """The training set of the platform model.

    Attributes
    ----------
    frame
        One row per (phase, attempt): :data:`COLUMNS`.  ``run_id`` is the job
        (one benchmark run); ``data_bytes`` and ``dur_ms`` are float64.
    missing
        Expected rows that are not in ``frame``, with the reason.
    settings
        Hadoop configuration the profiled jobs ran with: key -> value (keys
        whose value differed between jobs hold the values comma separated).
    cluster
        What the source says about the cluster (hosts, Hadoop version, ...).
    source
        Where the profile came from (a store path or a CSV path).
    """

    frame: pd.DataFrame
    missing: tuple[MissingData, ...] = ()
    settings: Mapping[str, str] = field(default_factory=dict)
    cluster: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    _rows_of: Mapping[str, npt.NDArray[np.intp]] = field(default_factory=dict, init=False, repr=False)
    _columns: tuple[npt.NDArray[Any], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))
        object.__setattr__(self, "cluster", MappingProxyType(dict(self.cluster)))
        # Row positions of each phase, computed once (a profile is read phase by phase, often).
        phases = self.frame["phase"].to_numpy(dtype=object) if len(self.frame) else np.empty(0, dtype=object)
        object.__setattr__(self, "_rows_of", pd.Series(phases).groupby(phases).indices if phases.size else {})
        object.__setattr__(self, "_columns", (
            self.frame["data_bytes"].to_numpy(dtype=np.float64),
            self.frame["dur_ms"].to_numpy(dtype=np.float64),
            self.frame["run_id"].to_numpy(dtype=object),
        ))

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def phases(self) -> tuple[str, ...]:
        """Generic phases with at least one row, in the paper's order."""
        present = set(self.frame["phase"].unique())
        return tuple(p for p in GENERIC if p in present)

    def arrays(self, phase: str) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[Any]]:
        """``(data_bytes, dur_ms, run_id)`` of one phase's rows."""
        idx = self._rows_of.get(phase)
        if idx is None:
            return np.empty(0), np.empty(0), np.empty(0, dtype=object)
        data, dur, run = self._columns
        return data[idx], dur[idx], run[idx]

    def missing_summary(self) -> dict[str, Counter[str]]:
        """phase -> reason -> count of :attr:`missing`."""
        out: dict[str, Counter[str]] = {}
        for m in self.missing:
            out.setdefault(m.phase, Counter())[m.reason] += 1
        return out

    def runs_missing(self, phase: str) -> tuple[str, ...]:
        """Runs with at least one attempt lacking ``phase``'s data."""
        return tuple(sorted({m.run_id for m in self.missing if m.phase == phase}))

    def subset(self, mask: npt.NDArray[np.bool_]) -> PlatformProfile:
        """The profile restricted to the rows where ``mask`` is true."""
        return PlatformProfile(self.frame[mask].reset_index(drop=True), self.missing, self.settings,
                               self.cluster, self.source)


def load_sql(name: str) -> str:
    """The text of ``platform_model/sql/<name>.sql``."""
    return resources.files("platform_model.sql").joinpath(f"{name}.sql").read_text(encoding="utf-8")


#: The reason of a phase row left inside a combined span of a run with a JFR recording: the task thread
#: had too few samples there for :func:`ingest.phases.splits.split_by_samples`.
UNSPLIT_WITH_JFR = (
    " (the run's JFR recording holds too few samples of the task thread there to split it, as in a short "
    "task; give each task more data: `phaseline bench plan --task-scale`)"
)


def _missing_reason(dur: Any, data: Any, combined: Any, recorded: bool = False) -> str:
    if isinstance(combined, str) and combined:
        return f"only inside the combined span {combined}" + (UNSPLIT_WITH_JFR if recorded else "")
    if pd.isna(dur):
        return "no duration (no phase row in the attempt's log)"
    if pd.isna(data):
        return "no data size (no byte count in the log or counters)"
    return "negative duration or data size"


def _jobs_with_jfr(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The jobs whose runs have JFR stack samples (none where the connection has no ``samples``)."""
    try:
        rows = con.execute("SELECT DISTINCT job_id FROM samples WHERE source = 'jfr' AND job_id IS NOT NULL").fetchall()
    except duckdb.CatalogException:
        return set()
    return {str(job_id) for (job_id,) in rows}


def profile_from_connection(
    con: duckdb.DuckDBPyConnection, *, source: str = "", job_name: str | None = None
) -> PlatformProfile:
    """The platform profile from a DuckDB connection with the store's views.

    Parameters
    ----------
    con
        A connection with the ``attempts``, ``attempt_phases``, ``counters``,
        ``conf`` and ``jobs`` views (:meth:`phaseline.store.Store.connect`).
    source
        Recorded as :attr:`PlatformProfile.source`.
    job_name
        Only the jobs of this name (e.g. the microbenchmark's, ``phaseline-bench``);
        None: every job with a successful attempt.
    """
    name = {"job_name": job_name}
    try:
        raw = con.execute(load_sql("platform_profile"), name).fetchdf()
        settings_rows = con.execute(
            load_sql("platform_settings"), {"keys": list(SETTINGS_KEYS), **name}
        ).fetchall()
        cluster_row = con.execute(load_sql("platform_cluster"), name).fetchdf()
        engine_rows = con.execute(load_sql("platform_engine"), name).fetchall()
        install(con, Concept.SLOT_HANDOVER)
        handover_rows = con.execute(load_sql("platform_handover"), name).fetchall()
    except duckdb.Error as exc:
        raise QueryError(f"platform profile query failed: {exc}") from exc
    dur = raw["dur_ms"]
    data = raw["data_bytes"]
    good = dur.notna() & data.notna() & (dur >= 0) & (data >= 0)
    bad = raw[~good]
    recorded = _jobs_with_jfr(con) if len(bad) else set()
    missing = tuple(
        MissingData(str(r.job_id), str(r.attempt_id), str(r.phase),
                    _missing_reason(r.dur_ms, r.data_bytes, r.combined_in, str(r.job_id) in recorded))
        for r in bad.itertuples(index=False)
    )
    ok = raw[good]
    frame = pd.DataFrame(
        {
            "phase": ok["phase"].astype(str).to_numpy(),
            "run_id": ok["job_id"].astype(str).to_numpy(),
            "attempt_id": ok["attempt_id"].astype(str).to_numpy(),
            "data_bytes": ok["data_bytes"].to_numpy(dtype=np.float64),
            "dur_ms": ok["dur_ms"].to_numpy(dtype=np.float64),
        }
    )
    values: dict[str, list[str]] = {}
    for key, value, _jobs in settings_rows:
        values.setdefault(str(key), []).append(str(value))
    settings = {k: ",".join(v) for k, v in values.items()}
    cluster: dict[str, Any] = {}
    if len(cluster_row):
        rec = cluster_row.iloc[0].to_dict()
        cluster = {str(k): (None if pd.isna(v) else (int(v) if isinstance(v, (int, np.integer, float)) else str(v)))
                   for k, v in rec.items()}
    engine = _measured_engine(engine_rows)
    if engine is not None:
        cluster["engine"] = engine
    if handover_rows:  # the cluster's scheduling, not a phase (predict/handover.py)
        cluster[SLOT_HANDOVER] = {str(t): {"ms": ms, "handovers": n, "jobs": j} for t, ms, n, j in handover_rows}
    if engine is not None and engine.get("name") == YARN_ENGINE:  # containers that share a node's cores
        cores = measured_task_cores(con, sorted(set(raw["job_id"].astype(str))))
        cluster.update({TASK_CORES: cores.to_json()} if cores is not None else {})
    return PlatformProfile(frame, missing, settings, cluster, source)


def _measured_engine(rows: Sequence[tuple[Any, ...]]) -> dict[str, Any] | None:
    """The engine and cluster shape the profiled jobs ran on (``platform_engine.sql``'s rows).

    One engine and shape: its record (:func:`~platform_model.engine.yarn.engine_record`);
    several: ``{"name": "mixed", "engines": [...]}`` (the most jobs first); none known: None.
    """
    from platform_model.engine.yarn import measured_engine_record

    records = []
    for framework, nodes, nm_memory_mb, map_memory_mb, _jobs in rows:
        record = measured_engine_record(framework, nodes, nm_memory_mb, map_memory_mb)
        if record is not None and record not in records:
            records.append(record)
    if not records:
        return None
    return records[0] if len(records) == 1 else {"name": "mixed", "engines": records}


def profile_from_store(
    store_path: str | Path, *, job_name: str | None = None, con: duckdb.DuckDBPyConnection | None = None
) -> PlatformProfile:
    """The platform profile of every successful attempt in a store, or of its jobs named ``job_name``
    (see :func:`profile_from_connection`); ``con``: a connection to that store already open."""
    from phaseline.store import Store

    store = Store(Path(store_path))
    if not store.exists():
        raise StoreError(
            f"no store at {store_path}; ingest traces first (phaseline ingest, or phaseline bench run --store DIR)"
        )
    source = f"store:{Path(store_path)}" + (f" jobs named {job_name}" if job_name is not None else "")
    return profile_from_connection(con or store.connect(), source=source, job_name=job_name)


def _bad_csv(path: Path, line: int, message: str) -> SchemaError:
    return SchemaError(f"{path}:{line}: {message} (expected columns {','.join(CSV_REQUIRED)}[,run_id])")


def profile_from_csv(path: str | Path) -> PlatformProfile:
    """A platform profile from a CSV ``phase,data_bytes,dur_ms[,run_id]`` (Zhang et al. 2013, Figure 2).

    ``phase`` is one of the six generic phases (any case); ``data_bytes`` and
    ``dur_ms`` are non-negative numbers.  Without ``run_id`` every row counts
    as its own run.

    Raises
    ------
    SchemaError
        A missing column, an unknown phase, or a value that is not a
        non-negative number; the message gives the file and line.
    """
    path = Path(path)
    lines: list[int] = []  # each data row's line in the file (blank lines skipped, quoted newlines kept)
    rows: list[list[str]] = []
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh, skipinitialspace=True)
            header = next(reader, None)
            for row in reader:
                if any(cell.strip() for cell in row):
                    rows.append(row)
                    lines.append(reader.line_num)
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise _bad_csv(path, 1, f"not a CSV of UTF-8 text ({exc})") from None
    except csv.Error as exc:  # a cell past the csv module's size limit
        raise _bad_csv(path, reader.line_num, f"not a well-formed CSV ({exc})") from None
    if header is None:
        raise _bad_csv(path, 1, "empty file")
    names = [h.strip().lower() for h in header]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise _bad_csv(path, 1, f"column(s) {', '.join(twice)} given twice")
    absent = [c for c in CSV_REQUIRED if c not in names]
    if absent:
        raise _bad_csv(path, 1, f"missing column(s) {', '.join(absent)}")
    for line, row in zip(lines, rows, strict=True):
        if len(row) != len(names):
            raise _bad_csv(path, line, f"{len(row)} cells where the header has {len(names)}")
    usecols = [c for c in (*CSV_REQUIRED, "run_id") if c in names]
    df = pd.DataFrame(rows, columns=names, dtype=str)[usecols] if rows else pd.DataFrame(columns=usecols, dtype=str)
    phase = df["phase"].str.strip().str.lower()
    unknown = ~phase.isin(GENERIC)
    if unknown.any():
        i = int(np.argmax(unknown.to_numpy()))
        raise _bad_csv(path, lines[i], f"unknown phase {df['phase'].iloc[i]!r}; use one of {', '.join(GENERIC)}")
    cols: dict[str, npt.NDArray[np.float64]] = {}
    for col in ("data_bytes", "dur_ms"):
        num = pd.to_numeric(df[col].str.strip(), errors="coerce").to_numpy(dtype=np.float64)
        wrong = ~np.isfinite(num) | (num < 0)
        if wrong.any():
            i = int(np.argmax(wrong))
            raise _bad_csv(path, lines[i], f"{col} {df[col].iloc[i]!r} is not a non-negative number")
        cols[col] = num
    row_ids = np.array([f"row{line}" for line in lines], dtype=object)
    run_id = df["run_id"].astype(str).to_numpy() if "run_id" in df else row_ids
    frame = pd.DataFrame(
        {
            "phase": phase.to_numpy(),
            "run_id": run_id,
            "attempt_id": row_ids,
            "data_bytes": cols["data_bytes"],
            "dur_ms": cols["dur_ms"],
        }
    )
    return PlatformProfile(frame, (), {}, {"source_format": "csv"}, f"csv:{path}")


def profile_from_arrays(
    phase: Sequence[str] | npt.NDArray[Any],
    data_bytes: npt.ArrayLike,
    dur_ms: npt.ArrayLike,
    run_id: Sequence[str] | npt.NDArray[Any] | None = None,
    *,
    source: str = "arrays",
) -> PlatformProfile:
    """A platform profile from columns already in memory (tests, benchmarks, other tools)."""
    ph = np.asarray(phase).astype(str)
    n = ph.size
    runs = np.asarray(run_id).astype(str) if run_id is not None else np.char.add("row", np.arange(n).astype(str))
    frame = pd.DataFrame(
        {
            "phase": ph,
            "run_id": runs,
            "attempt_id": np.char.add("row", np.arange(n).astype(str)),
            "data_bytes": np.asarray(data_bytes, dtype=np.float64),
            "dur_ms": np.asarray(dur_ms, dtype=np.float64),
        }
    )
    return PlatformProfile(frame, (), {}, {}, source)
