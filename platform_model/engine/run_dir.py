"""An engine run's directory: ``run.json`` (written by :func:`run_document`, read back by
:func:`load_run` as an :class:`EngineRun`), its logs, and the scratch data removed after the run.
The layout is in :mod:`platform_model.engine.runner`'s docstring.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phaseline.errors import EngineError
from platform_model.engine.job import BENCH_APP, MEASURING_JVM_FLAGS, EngineJob

RUN_FORMAT = "phaseline-engine-run"
RUN_VERSION = 1
_LOG_TAIL_LINES = 40


@dataclass(frozen=True, slots=True)
class EngineRun:
    """A finished engine run, as recorded in its run directory."""

    run_dir: Path
    job_id: str
    job_name: str
    status: str
    wall_ms: int
    submit_ms: int
    finish_ms: int | None
    log_path: Path
    conf_path: Path
    jfr_path: Path | None
    counters: Mapping[str, Mapping[str, int]]
    params: Mapping[str, Any]

    def counter(self, group: str, name: str) -> int:
        """A job counter, e.g. ``counter("org.apache.hadoop.mapreduce.TaskCounter", "MAP_OUTPUT_RECORDS")``."""
        try:
            return self.counters[group][name]
        except KeyError:
            raise EngineError(f"{self.run_dir}/run.json has no counter {group}/{name}") from None

    @property
    def job_ms(self) -> int | None:
        """Submission to completion of the job, ms."""
        return None if self.finish_ms is None else self.finish_ms - self.submit_ms


def load_run(run_dir: Path) -> EngineRun:
    """Read a run directory written by :func:`run_engine`."""
    path = Path(run_dir) / "run.json"
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise EngineError(f"{path}: not a readable engine run ({exc})") from exc
    if doc.get("format") != RUN_FORMAT or doc.get("version") != RUN_VERSION:
        raise EngineError(f"{path}: not a {RUN_FORMAT} v{RUN_VERSION} file")
    root = path.parent
    return EngineRun(
        run_dir=root,
        job_id=doc["job_id"],
        job_name=doc["job_name"],
        status=doc["status"],
        wall_ms=doc["wall_end_ms"] - doc["wall_start_ms"],
        submit_ms=doc["submit_ms"],
        finish_ms=doc["finish_ms"],
        log_path=root / doc["log"],
        conf_path=root / doc["conf"],
        jfr_path=root / doc["jfr"] if doc["jfr"] else None,
        counters=doc["counters"],
        params=doc["params"],
    )


def hadoop_scratch(run_dir: Path) -> Path:
    """Where the run's Hadoop local directories go: ``run_dir/tmp``, unless its path needs URI escaping.

    Hadoop's local job runner turns its local directories into URIs and back without
    unescaping (a space becomes ``%20``, and the map output it then looks for does not
    exist): such a run keeps them in a fresh temporary directory instead.
    """
    tmp = run_dir / "tmp"
    if urllib.parse.quote(str(tmp), safe="/:") == str(tmp):
        return tmp
    return Path(tempfile.mkdtemp(prefix="phaseline-engine-"))


def log_tail(run_dir: Path) -> str:
    parts = []
    for name in ("logs/job.log", "logs/jvm.out"):
        path = run_dir / name
        if path.exists():
            lines = path.read_text(errors="replace").splitlines()[-_LOG_TAIL_LINES:]
            if lines:
                parts.append(f"--- {path} (last {len(lines)} lines) ---\n" + "\n".join(lines))
    return "\n".join(parts) if parts else "(no log written)"


def prepare_run_dir(out: Path) -> Path:
    """The run's directory, new or empty, with its ``logs``; an :class:`EngineError` if it cannot be
    (a file in its place had escaped as NotADirectoryError and stopped a whole plan)."""
    run_dir = Path(out).resolve()
    try:
        if run_dir.exists() and (not run_dir.is_dir() or any(run_dir.iterdir())):
            what = "is not a directory" if not run_dir.is_dir() else "exists and is not empty"
            raise EngineError(f"{run_dir} {what}; give --out a new directory")
        (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EngineError(f"cannot make the run directory {run_dir}: {exc}") from None
    return run_dir


def remove_data(run_dir: Path, *, generated_input: bool) -> None:
    """Delete the run's bulk data: output, staging, temp dirs, and generated input."""
    doomed = [run_dir / "output", run_dir / "staging", run_dir / "tmp"]
    if generated_input:
        doomed.append(run_dir / "input")
    for path in doomed:
        shutil.rmtree(path, ignore_errors=True)


#: The conf key JobSubmitter sets to the number of splits it made: the job's map tasks.
SUBMITTED_MAPS_KEY = "mapreduce.job.maps"
#: The conf key that holds the job's reduce tasks as its driver set them (``Job.setNumReduceTasks``).
SUBMITTED_REDUCES_KEY = "mapreduce.job.reduces"


def submitted_counts(conf: Path, *keys: str) -> tuple[int | None, ...]:
    """The task counts the job's submitted conf holds under ``keys`` (the conf read once); each ``None``
    where the conf cannot be read or does not say."""
    from ingest.conf_xml import parse_conf
    from phaseline.errors import PhaselineError

    try:
        props = parse_conf([conf.read_bytes()], conf)
    except (OSError, PhaselineError):
        return (None,) * len(keys)
    values: dict[str, str | None] = {}
    for prop in props:
        if prop.key in keys:
            values.setdefault(prop.key, prop.value)  # (a key set twice: its first value, as before)
    return tuple(int(v) if (v := values.get(k)) is not None and v.strip().isdigit() else None for k in keys)


def submitted_maps(conf: Path) -> int | None:
    """The map tasks a job ran, as its submitted conf says (:data:`SUBMITTED_MAPS_KEY`).  A user's driver
    makes its own splits (a combining input format packs several files into one), so the engine's count
    of input files is not its map count."""
    return submitted_counts(conf, SUBMITTED_MAPS_KEY)[0]


def record_submitted_tasks(doc: dict[str, Any], run_dir: Path, job: EngineJob) -> None:
    """Give a user's driver's ``run.json`` (``doc``) the map and reduce tasks its submitted conf says it
    ran (``"maps"``, ``"reduces"``), on either engine; the benchmark's are its parameters'.  The driver
    sets its own reduces (a map-only job sets 0), whatever the engine's ``--reduces`` was: taken from the
    option, a map-only job's run reads as one with a reduce that never ran, and cannot be profiled."""
    if not job.is_bench and doc.get("conf"):
        doc["maps"], doc["reduces"] = submitted_counts(run_dir / doc["conf"], SUBMITTED_MAPS_KEY, SUBMITTED_REDUCES_KEY)


def run_document(
    job: EngineJob,
    report: Mapping[str, Any],
    settings: Mapping[str, str],
    main_class: str,
    wall_start_ms: int,
    wall_end_ms: int,
) -> dict[str, Any]:
    """Compose ``run.json`` from the JVM's report and the job's parameters."""
    last = report["jobs"][-1]
    params = {
        "input_mb": float(job.input_mb) if job.input_path is None else None,
        "input_bytes": report.get("input_bytes"),
        "input_records": report.get("input_records"),
        "selectivity": job.selectivity if job.is_bench else None,
        "maps": job.maps if job.input_path is None else None,
        "reduces": job.reduces,
        "map_parallelism": job.map_parallelism,
        "reduce_parallelism": job.reduce_parallelism,
        "io_sort_mb": job.io_sort_mb,
        "sort_factor": job.sort_factor,
        "seed": job.seed,
        "warmup_mb": job.warmup_mb,
        "warmup_app": job.warmup_app,
        "app": BENCH_APP if job.is_bench else main_class,
    }
    if not job.is_bench:
        params["jar"] = str(job.jar)
        params["args"] = list(job.args)
    doc: dict[str, Any] = {
        "format": RUN_FORMAT,
        "version": RUN_VERSION,
        "job_id": last["job_id"],
        "job_name": last["job_name"],
        "user": last["user"] or report["user"],
        "status": "SUCCEEDED" if last["state"] == "SUCCEEDED" else "FAILED",
        "submit_ms": last["submit_ms"],
        "launch_ms": last["launch_ms"],
        "finish_ms": last["finish_ms"],
        "wall_start_ms": wall_start_ms,
        "wall_end_ms": wall_end_ms,
        "hadoop_version": report["hadoop_version"],
        "java_version": report["java_version"],
        "jvm_flags": report.get("jvm_flags", list(MEASURING_JVM_FLAGS)),
        "params": params,
        "settings": dict(settings),
        "counters": last["counters"],
        "tasks": [],
        "log": "logs/job.log",
        "conf": last["conf"],
        "jfr": "recording.jfr" if job.jfr else None,
    }
    if len(report["jobs"]) > 1:
        doc["all_job_ids"] = [j["job_id"] for j in report["jobs"]]
    return doc
