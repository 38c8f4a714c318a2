"""Run MapReduce jobs on a real YARN cluster on this machine (Hadoop's ``MiniMRYarnCluster``).

Unlike LocalJobRunner (:mod:`platform_model.engine.runner`), every task runs in its own
container JVM, an ApplicationMaster schedules waves on ``nodes x containers_per_node``
slots, reduces fetch map outputs over HTTP from the NodeManagers' ShuffleHandler, and the
JobHistoryServer writes the job's history.  :class:`YarnCluster` starts the cluster once
(``YarnLauncher.java``: ResourceManager, NodeManagers, JobHistoryServer, log aggregation,
all on loopback, on the local file system) and runs jobs on it one at a time.  Each run
directory holds what a user collects from a cluster, read by the ordinary ``phaseline
ingest``::

    RUN_DIR/run.json                           as the local engine writes it, plus "engine"
    RUN_DIR/<job_id>-...-SUCCEEDED-....jhist   from the history server's done directory
    RUN_DIR/<job_id>_conf.xml                  from the same directory
    RUN_DIR/logs/<application_id>.log          ``yarn logs -applicationId`` of the job

The cluster's JVM runs in the caller's process group; the NodeManagers start container
JVMs in sessions of their own, so a small reaper process (:mod:`platform_model.engine.reaper`)
outlives a killed caller and ends every process that names the cluster's work directory.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from phaseline.errors import EngineError
from phaseline.hadoop_names import LOCAL_ENGINE, YARN_ENGINE
from phaseline.java import compile_java, java_tool
from platform_model.engine import reaper
from platform_model.engine.job import BENCH_CLASS, EngineJob, derived_settings, driver_args, effective
from platform_model.engine.run_dir import (
    EngineRun,
    load_run,
    prepare_run_dir,
    record_submitted_tasks,
    remove_data,
    run_document,
)
from platform_model.engine.runner import engine_jar
from platform_model.engine.yarn_jars import yarn_classpath

ENGINE_NAME = YARN_ENGINE
_LAUNCHER = "phaseline.engine.YarnLauncher"
_JAVA_DIR = Path(__file__).resolve().parent / "java" / "yarn"
#: The smallest container a MapReduce task JVM (Hadoop's default 100 MiB sort buffer at 0.8 of
#: the container as heap) runs in.
MIN_CONTAINER_MB = 256
#: Containers a MapReduce job's ApplicationMaster (MRAppMaster) holds for the job's whole life:
#: one, of ``yarn.app.mapreduce.am.resource.mb`` (here a task container's size), so a job's maps
#: and reduces run in the cluster's other containers (at most ``slots - 1`` tasks at once).
AM_CONTAINERS = 1
#: Heap of the cluster's own JVM (ResourceManager, NodeManagers, JobHistoryServer, the client).
CLUSTER_HEAP_MB = 1024
START_TIMEOUT_S = 180.0
_STOP_TIMEOUT_S = 60.0
#: Settings of the local engine that a cluster sets itself (file system, framework, local and
#: staging dirs, LocalJobRunner's slots; a task's container size comes from the cluster shape).
_LOCAL_ONLY = (
    "fs.defaultFS",
    "hadoop.tmp.dir",
    "mapreduce.framework.name",
    "mapreduce.cluster.local.dir",
    "mapreduce.jobtracker.staging.root.dir",
    "mapreduce.local.map.tasks.maximum",
    "mapreduce.local.reduce.tasks.maximum",
    "mapreduce.reduce.memory.mb",
)


@dataclass(frozen=True, slots=True)
class ClusterShape:
    """A cluster's shape: NodeManagers, containers on each, and a container's memory (MiB)."""

    nodes: int = 2
    containers_per_node: int = 2
    container_mb: int = 512

    def __post_init__(self) -> None:
        if self.nodes < 1 or self.containers_per_node < 1:
            raise EngineError(f"a cluster needs >= 1 node and >= 1 container per node, got {self.nodes} x "
                              f"{self.containers_per_node}")  # fmt: skip
        if self.container_mb < MIN_CONTAINER_MB:
            raise EngineError(f"--container-mb {self.container_mb} is too little memory for a task JVM "
                              f"(at least {MIN_CONTAINER_MB} MiB)")  # fmt: skip

    @property
    def slots(self) -> int:
        return self.nodes * self.containers_per_node

    @property
    def task_containers(self) -> int:
        """The containers left to a job's tasks: every one but its ApplicationMaster's (:data:`AM_CONTAINERS`)."""
        return self.slots - AM_CONTAINERS

    def to_json(self) -> dict[str, int]:
        return {"nodes": self.nodes, "containers_per_node": self.containers_per_node,
                "container_mb": self.container_mb}  # fmt: skip


def engine_record(shape: ClusterShape | None) -> dict[str, Any]:
    """The ``engine`` entry of ``run.json`` and ``platform.json``: which engine, which cluster shape."""
    if shape is None:
        return {"name": LOCAL_ENGINE}
    return {"name": ENGINE_NAME, **shape.to_json()}


def measured_engine_record(
    framework: str | None, nodes: int | None, nm_memory_mb: int | None, container_mb: int | None
) -> dict[str, Any] | None:
    """The :func:`engine_record` of jobs as a store describes them (see ``platform_engine.sql``).

    ``framework`` is ``mapreduce.framework.name`` (``local``: LocalJobRunner); on YARN the shape
    comes from the NodeManagers that ran attempts, a NodeManager's memory and a task container's
    (``containers_per_node`` is the first over the second).  ``None`` where the store does not
    say which engine ran the jobs (a Hadoop 1.x history); a shape's unknown parts are ``None``.
    """
    if framework == "local":
        return engine_record(None)
    if framework != ENGINE_NAME:
        return None if framework is None else {"name": framework}
    per_node = nm_memory_mb // container_mb if nm_memory_mb and container_mb else None
    return {"name": ENGINE_NAME, "nodes": nodes, "containers_per_node": per_node, "container_mb": container_mb}


def _available_mb() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def launcher_classes() -> tuple[Path, list[Path]]:
    """The compiled launcher and the cluster's classpath (engine jar, cluster jars)."""
    jars = yarn_classpath()
    engine = engine_jar()
    classes = compile_java("phaseline-yarn", sorted(_JAVA_DIR.glob("*.java")), classpath=[engine, *jars])
    return classes, [engine, *jars]


def _log4j_properties(log_file: Path) -> str:
    return "\n".join([
        "log4j.rootLogger=WARN,F",
        "log4j.appender.F=org.apache.log4j.FileAppender",
        f"log4j.appender.F.File={log_file}",
        "log4j.appender.F.layout=org.apache.log4j.PatternLayout",
        "log4j.appender.F.layout.ConversionPattern=%d{ISO8601} %p [%t] %c: %m%n",
        "log4j.logger.org.apache.hadoop.mapreduce.v2=INFO",
    ]) + "\n"  # fmt: skip


class YarnCluster:
    """A mini YARN cluster of ``shape``, started on enter (or :meth:`start`), stopped on exit.

    Raises :class:`EngineError` with one line naming the cause when it cannot start (no jars,
    too little memory, a port in use, ...), having ended every process it started.  Every port
    is a free one the services pick, unless ``rm_port`` pins the ResourceManager's client port
    (``yarn.resourcemanager.address``), as a cluster that clients reach at a known address does.
    """

    def __init__(self, shape: ClusterShape, *, hadoop_conf: Mapping[str, str] | None = None,
                 start_timeout_s: float = START_TIMEOUT_S, rm_port: int | None = None) -> None:  # fmt: skip
        if rm_port is not None and not 0 < rm_port < 65536:
            raise EngineError(f"the ResourceManager's port must be 1-65535, got {rm_port}")
        self.shape = shape
        self.rm_port = rm_port
        self.hadoop_conf = dict(hadoop_conf or {})
        self.start_timeout_s = start_timeout_s
        self.work: Path | None = None
        self.info: dict[str, Any] = {}
        self.start_s: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reaper: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> YarnCluster:
        self.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        classes, cp = launcher_classes()
        need = self.shape.slots * self.shape.container_mb + CLUSTER_HEAP_MB
        free = _available_mb()
        if free is not None and need > free:
            raise EngineError(f"too little memory for a {self.shape.nodes}x{self.shape.containers_per_node} "
                              f"cluster of {self.shape.container_mb} MiB containers: it needs {need} MiB, "
                              f"{free} MiB are available")  # fmt: skip
        self.work = Path(tempfile.mkdtemp(prefix="phaseline-yarn-"))
        etc = self.work / "etc"
        etc.mkdir()
        (etc / "log4j.properties").write_text(_log4j_properties(self.work / "cluster.log"))
        conf_file = self.work / "cluster.properties"
        conf_file.write_text("".join(f"{_escape(k)}={_escape(v)}\n" for k, v in self.hadoop_conf.items()))
        cmd = [
            java_tool("java"), f"-Xmx{CLUSTER_HEAP_MB}m", "-Duser.timezone=UTC", "-Djava.net.preferIPv4Stack=true",
            f"-Djava.io.tmpdir={self.work / 'tmp'}", f"-Dtest.build.data={self.work / 'data'}",
            f"-Dhadoop.log.dir={self.work / 'log'}", f"-Dlog4j.configuration=file:{etc / 'log4j.properties'}",
            "-cp", os.pathsep.join(str(p) for p in [etc, classes, *cp]), _LAUNCHER,
            "--work", str(self.work), "--etc", str(etc), "--conf", str(conf_file),
            "--nodes", str(self.shape.nodes), "--containers", str(self.shape.containers_per_node),
            "--container-mb", str(self.shape.container_mb),
            *(["--rm-port", str(self.rm_port)] if self.rm_port is not None else []),
        ]  # fmt: skip
        (self.work / "tmp").mkdir()
        self.start_s = time.monotonic()
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=self.work)
        self._reaper = reaper.spawn(self._proc.pid, self.work)
        threading.Thread(target=self._read, args=(self._proc.stdout,), daemon=True).start()
        try:
            line = self._next_line(self.start_timeout_s, "start")
            if line.startswith("FAILED "):
                raise EngineError(f"the YARN cluster did not start: {line[7:]}")
            if not line.startswith("READY "):
                raise EngineError(f"the YARN cluster did not start: unexpected {line[:200]!r}")
            self.info = json.loads(line[6:])
            self.info["start_s"] = round(time.monotonic() - self.start_s, 3)
        except BaseException:
            self.stop()
            raise

    def _read(self, stream: IO[bytes]) -> None:
        for raw in stream:
            self._lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
        self._lines.put(None)

    def _next_line(self, timeout_s: float | None, what: str) -> str:
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            raise EngineError(f"the YARN cluster did not {what} in {timeout_s:.0f} s{self._tail()}") from None
        if line is None:
            code = self._proc.wait() if self._proc is not None else None
            raise EngineError(f"the YARN cluster's JVM exited (code {code}) during {what}{self._tail()}")
        return line

    def _tail(self) -> str:
        if self.work is None:
            return ""
        out = self.work / "cluster.out"
        lines = out.read_text(errors="replace").splitlines()[-5:] if out.exists() else []
        causes = [line for line in lines if "Exception" in line or "Error" in line]
        return f": {causes[-1].strip()}" if causes else ""

    def run(self, job: EngineJob, out: Path, *, timeout_s: float | None = 900.0) -> EngineRun:
        """Run ``job`` on the cluster; write and return the run directory ``out`` (as :func:`run_engine`)."""
        if self._proc is None or self._proc.poll() is not None or self.work is None:
            raise EngineError("the YARN cluster is not running")
        if job.jfr or job.warmup_mb > 0:
            raise EngineError("--jfr and --warmup-mb are for the local engine's one JVM; on YARN each task "
                              "runs in a fresh container JVM")  # fmt: skip
        if job.jar is not None and not Path(job.jar).is_file():
            raise EngineError(f"job jar {job.jar} not found")
        run_dir = prepare_run_dir(out)
        input_dir = Path(job.input_path).resolve() if job.input_path is not None else run_dir / "input"
        settings = {k: v for k, v in derived_settings(job, run_dir).items() if k not in _LOCAL_ONLY}
        settings.update(job.hadoop_conf)
        job = effective(job, settings)
        main_class = job.main_class or BENCH_CLASS
        spec: dict[str, str] = {"run.dir": str(run_dir), "result": str(self.work / "result.json"), "main": main_class}
        if job.jar is not None:
            settings.setdefault("mapreduce.job.jar", str(Path(job.jar).resolve()))
        if job.input_path is None:
            spec.update({"generate": str(input_dir), "records": str(job.input_records), "files": str(job.files),
                         "seed": str(job.seed)})  # fmt: skip
        for i, arg in enumerate(driver_args(job, input_dir, run_dir / "output")):
            spec[f"arg.{i}"] = arg
        spec.update({f"conf.{k}": v for k, v in settings.items()})
        spec_file = self.work / "run.properties"
        spec_file.write_text("".join(f"{_escape(k)}={_escape(v)}\n" for k, v in spec.items()))
        result = self.work / "result.json"
        result.unlink(missing_ok=True)
        assert self._proc.stdin is not None
        try:
            wall_start_ms = time.time_ns() // 1_000_000
            self._proc.stdin.write(f"RUN {spec_file}\n".encode())
            self._proc.stdin.flush()
            line = self._next_line(timeout_s, f"finish the run in {run_dir}")
            wall_end_ms = time.time_ns() // 1_000_000
            if not line.startswith("DONE "):
                raise EngineError(f"the YARN cluster answered {line[:200]!r}")
            report = json.loads(result.read_text())
            if not report["jobs"]:
                detail = report.get("error") or "the driver submitted no MapReduce job"
                raise EngineError(f"{main_class}: {detail}")
            report.setdefault("jvm_flags", [])
            doc = run_document(dataclasses.replace(job, map_parallelism=1, reduce_parallelism=1), report,
                                settings, main_class, wall_start_ms, wall_end_ms)  # fmt: skip
            last = report["jobs"][-1]
            doc.update({"log": last["log"], "jhist": last["jhist"], "application_id": last["application_id"],
                        "engine": {**engine_record(self.shape), "cluster": self.info}})  # fmt: skip
            doc["params"].pop("map_parallelism", None)
            doc["params"].pop("reduce_parallelism", None)
            record_submitted_tasks(doc, run_dir, job)  # as the history says, for a run dir ingested without it
            (run_dir / "run.json").write_text(json.dumps(doc, indent=1) + "\n")
        except (EngineError, OSError, ValueError, KeyError) as exc:
            if isinstance(exc, EngineError) and "did not finish" in str(exc):
                self.stop()  # a run that overran leaves the cluster in no known state
            if isinstance(exc, EngineError):
                raise
            raise EngineError(f"the YARN run in {run_dir} left no readable report: {exc}") from exc
        finally:
            if not job.keep_data:
                remove_data(run_dir, generated_input=job.input_path is None)
        if doc["status"] != "SUCCEEDED" or report.get("error"):
            why = report.get("error") or last.get("failure_info") or "job failed"
            raise EngineError(f"job {doc['job_id']} {doc['status']}: {why.strip()}")
        return load_run(run_dir)

    def stop(self) -> None:
        """Stop the cluster (QUIT, then the process group's JVM killed), end its containers, remove its files."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(b"QUIT\n")
                proc.stdin.close()
                proc.wait(timeout=_STOP_TIMEOUT_S)
            except (OSError, subprocess.TimeoutExpired):
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self.work is not None:
            reaper.kill_marked(str(self.work))
        if self._reaper is not None:
            try:
                self._reaper.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._reaper.kill()
            self._reaper = None
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
            self.work = None


def _escape(text: str) -> str:
    """A key or value in Java's ``.properties`` syntax."""
    out = []
    for ch in text:
        if ch in "\\=:#! ":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def run_on_yarn(job: EngineJob, out: Path, shape: ClusterShape, *, timeout_s: float | None = 900.0) -> EngineRun:
    """Start a cluster of ``shape``, run ``job`` on it, stop it (one run; see :class:`YarnCluster` for many)."""
    with YarnCluster(shape) as cluster:
        return cluster.run(job, out, timeout_s=timeout_s)


__all__ = ["ENGINE_NAME", "ClusterShape", "YarnCluster", "engine_record", "measured_engine_record", "run_on_yarn"]
