"""Run one MapReduce job for real on Hadoop's LocalJobRunner and keep a run directory.

The job is either phaseline's microbenchmark (Zhang et al. 2013, section 3:
MB = (M_inp, M_sel, N_map, N_red), 100-byte TeraGen-like records, a map that
emits records at selectivity M_sel, an identity reduce) or a user's own driver
from a jar.  Hadoop's MapReduce code (MapTask's sort buffer and spills, the
map-side merge, the reduce-side fetch/merge, ReduceTask) runs unchanged inside one
JVM; only the scheduling is LocalJobRunner's:

* map tasks run first, at most ``map_parallelism`` at a time
  (``mapreduce.local.map.tasks.maximum``); reduces start only after every map has
  finished (there is no slow start), at most ``reduce_parallelism`` at a time;
* reduces "fetch" map outputs with ``LocalFetcher`` straight from local files, so
  the shuffle measures Hadoop's in-memory/on-disk merge policy but no network;
* file-system byte counters are shared by tasks running at the same time, so they
  are inflated when maps run in parallel (record counters are exact).

Run directory (read by the task-log ingest)::

    RUN_DIR/run.json              summary: ids, status, times, params, settings, job counters
    RUN_DIR/<job_id>_conf.xml     the submitted job configuration (with mapreduce.job.id)
    RUN_DIR/logs/job.log          log4j2 output of the JVM, UTC millisecond timestamps
    RUN_DIR/recording.jfr         JDK Flight Recorder recording (with ``jfr=True``)

With ``warmup_mb`` the JVM first runs a small throwaway benchmark job (its data and
log under the hidden ``RUN_DIR/tmp/.warmup``, removed with the temp dirs), so that
the measured job's first tasks do not pay for a cold JVM (class loading,
interpreted code before the JIT compiles MapTask's collect, sort and merge): in a
fresh LocalJobRunner JVM the first task of a job measures 2-5 times slower than the
later ones.  The warm-up job is not in ``logs/job.log``, ``run.json``, the
configuration copies or the JFR recording, which starts after it (a throwaway
recording with the same settings runs through the warm-up: starting one re-instruments
the JDK's file I/O classes, which made the first map's spill 4-10x slower).  With
``warmup_app`` a user's job (``jar``/``main_class``) also runs its own driver once on
the warm-up input, after the benchmark job: the application's map and reduce code is
then compiled too, not only Hadoop's (its driver must return, not ``System.exit``).

``run.json["tasks"]`` is always empty: LocalJobRunner's ``getTaskReports`` and
``getTaskCompletionEvents`` return nothing, so per-task times and counters come
from the log (``Final Counters for attempt_...``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from phaseline.errors import EngineError
from phaseline.java import compile_java, java_command
from platform_model.engine import jvmconf

RUN_FORMAT = "phaseline-engine-run"
RUN_VERSION = 1
BENCH_CLASS = "phaseline.engine.PhaselineBench"
BENCH_APP = "phaseline-bench"
RECORD_BYTES = 100
_LAUNCHER = "phaseline.engine.EngineLauncher"
_JAVA_DIR = Path(__file__).resolve().parent / "java"
_LOG_TAIL_LINES = 40
#: Map tasks (input files) of the warm-up job, and of the application's warm-up run.  Code that a
#: task runs once (setup, commit, counters) reaches the JIT's thresholds only after some tasks; the
#: JVM compiles in the task's thread (MEASURING_JVM_FLAGS), so with 4 the measured job's first maps
#: paid those compiles: sort at 16 MiB (8 maps), 3 runs each, 2026-11-27: maps 2-4 took 103-176 ms
#: against 71-89 ms (a 64 ms commit in map 4), job 1.29-1.38 s; with 16, 55-65 ms but for one
#: 141 ms map, job 0.92-1.04 s; with 32 about the same (0.85-1.04 s).  Each run takes ~1.5 s longer.
WARMUP_FILES = 16
#: Frames JFR keeps per sampled stack (its default, 64, cuts a spill's sort recursion short).
JFR_STACK_DEPTH = 256
#: Hidden (never ingested) directory of the warm-up job's data and log, under ``RUN_DIR/tmp``.
WARMUP_DIR = ".warmup"
#: Hadoop's default ``mapreduce.task.io.sort.mb``; used to size the JVM heap.
_DEFAULT_SORT_MB = 100
#: JVM flags every engine run gets, so that a run's time is the job's and not the machine's
#: mood: the serial collector (no concurrent GC threads competing with the tasks for a small
#: machine's cores) and JIT compilation in the thread that needs the code (not in background
#: compiler threads that finish at another moment every run).  Measured 2026-11-27 on this
#: 2-core machine, six runs each of two backtest applications (8 MiB, 4 maps, 2 reduces, after
#: the warm-up), interleaved: run-to-run log-sd 0.123 -> 0.059 (inverted index) and 0.159 ->
#: 0.072 (word count), the runs 4-18 % slower.  ``run.json`` records the JVM's ``-X`` flags as it took them
#: (``jvm_flags``).
MEASURING_JVM_FLAGS: tuple[str, ...] = ("-XX:+UseSerialGC", "-XX:-BackgroundCompilation")


@dataclass(frozen=True, slots=True)
class EngineJob:
    """One engine run: the microbenchmark's parameters, or a user's job.

    Parameters
    ----------
    input_mb
        Total input size M_inp x N_map in MiB (of 100-byte records).
    selectivity
        Map selectivity M_sel (output records per input record, >= 0).
    maps
        Number of map tasks N_map: the input is written as this many files, one split each.
    reduces
        Number of reduce tasks N_red (0: map-only job).
    map_parallelism, reduce_parallelism
        Tasks LocalJobRunner runs at once (``mapreduce.local.{map,reduce}.tasks.maximum``).
    io_sort_mb, sort_factor, reduce_memory_mb
        ``mapreduce.task.io.sort.mb``, ``mapreduce.task.io.sort.factor``, and the reduce
        side's memory (``mapreduce.reduce.memory.totalbytes``, which LocalJobRunner's
        MergeManagerImpl multiplies by ``mapreduce.reduce.shuffle.input.buffer.percent``).
        ``None`` keeps Hadoop's default.
    hadoop_conf
        Any further Hadoop settings (``-D key=value``); they override derived ones.
    jfr
        Record a JDK Flight Recorder recording of the whole JVM.
    seed
        Seed of the input generator and of the mapper's fractional selectivity.
    jar, main_class, args
        A user's job: its jar, its driver class and the driver's arguments.  The
        tokens ``{input}`` and ``{output}`` in ``args`` become the run's input and
        output directories; with no ``args`` the driver gets ``input output``.
    keep_data
        Keep the generated input, the job output and the staging/temp dirs.
    input_path
        Existing input for a user's job instead of generated records.
    heap_mb
        JVM heap; by default sized from the sort buffers and the reduce memory.
    warmup_mb
        Input of a throwaway warm-up job run first in the same JVM (MiB of records,
        :data:`WARMUP_FILES` maps, one reduce, the job's settings); 0: no warm-up.
    warmup_app
        A user's job only, with ``warmup_mb``: after the warm-up benchmark job, run the
        job's own driver (same ``args``) once on the warm-up input.
    """

    input_mb: float
    selectivity: float
    maps: int
    reduces: int
    map_parallelism: int = 1
    reduce_parallelism: int = 1
    io_sort_mb: int | None = None
    sort_factor: int | None = None
    reduce_memory_mb: int | None = None
    hadoop_conf: Mapping[str, str] = field(default_factory=dict)
    jfr: bool = False
    seed: int = 0
    jar: Path | None = None
    main_class: str | None = None
    args: tuple[str, ...] = ()
    keep_data: bool = False
    input_path: Path | None = None
    heap_mb: int | None = None
    warmup_mb: float = 0.0
    warmup_app: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "hadoop_conf", MappingProxyType({str(k): str(v) for k, v in self.hadoop_conf.items()})
        )
        object.__setattr__(self, "args", tuple(self.args))
        if not (math.isfinite(self.input_mb) and self.input_mb > 0):
            raise EngineError(f"input_mb must be a positive number, got {self.input_mb}")
        if not (math.isfinite(self.warmup_mb) and self.warmup_mb >= 0):
            raise EngineError(f"warmup_mb must be a number >= 0 (0: no warm-up), got {self.warmup_mb}")
        if not (math.isfinite(self.selectivity) and self.selectivity >= 0):
            raise EngineError(f"selectivity must be a number >= 0, got {self.selectivity}")
        if self.maps < 1 or self.reduces < 0:
            raise EngineError(f"need maps >= 1 and reduces >= 0, got maps={self.maps} reduces={self.reduces}")
        if self.map_parallelism < 1 or self.reduce_parallelism < 1:
            raise EngineError("map_parallelism and reduce_parallelism must be >= 1")
        for name in ("io_sort_mb", "sort_factor", "reduce_memory_mb", "heap_mb"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise EngineError(f"{name} must be >= 1, got {value}")
        if self.sort_factor is not None and self.sort_factor < 2:
            raise EngineError(f"sort_factor must be >= 2, got {self.sort_factor}")
        if (self.jar is None) != (self.main_class is None):
            raise EngineError("a user's job needs both jar and main_class (--jar JAR --class MAIN)")
        if self.warmup_app and (self.jar is None or self.warmup_mb <= 0):
            raise EngineError("warmup_app needs a user's job (jar, main_class) and warmup_mb > 0")
        if self.input_path is not None and self.jar is None:
            raise EngineError("input_path is for a user's job; the microbenchmark generates its input")

    @property
    def is_bench(self) -> bool:
        """True for phaseline's microbenchmark, False for a user's jar."""
        return self.jar is None

    @property
    def input_records(self) -> int:
        """Records generated: ``input_mb`` MiB of 100-byte records, at least one per map."""
        return max(self.maps, round(self.input_mb * 1024 * 1024 / RECORD_BYTES))


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


def derived_settings(job: EngineJob, run_dir: Path, scratch: Path | None = None) -> dict[str, str]:
    """Hadoop settings the engine derives from ``job`` (before ``job.hadoop_conf``); Hadoop's local
    directories under ``scratch`` (default ``run_dir/tmp``, see :func:`hadoop_scratch`)."""
    tmp = run_dir / "tmp" if scratch is None else scratch
    settings = {
        "fs.defaultFS": "file:///",
        "hadoop.tmp.dir": str(tmp / "hadoop"),
        "mapreduce.framework.name": "local",
        "mapreduce.cluster.local.dir": str(tmp / "local"),
        "mapreduce.jobtracker.staging.root.dir": str(run_dir / "staging"),
        "mapreduce.job.reduces": str(job.reduces),
        "mapreduce.local.map.tasks.maximum": str(job.map_parallelism),
        "mapreduce.local.reduce.tasks.maximum": str(job.reduce_parallelism),
        # The job client polls every second by default; poll faster so that
        # waitForCompletion returns soon after the job ends.
        "mapreduce.client.progressmonitor.pollinterval": "100",
        "mapreduce.client.completion.pollinterval": "100",
    }
    if job.input_path is None:
        # One split per input file: the split size is at least the largest file.
        per_file = math.ceil(job.input_records / job.maps) * RECORD_BYTES
        settings["mapreduce.input.fileinputformat.split.minsize"] = str(per_file)
    if job.io_sort_mb is not None:
        settings["mapreduce.task.io.sort.mb"] = str(job.io_sort_mb)
    if job.sort_factor is not None:
        settings["mapreduce.task.io.sort.factor"] = str(job.sort_factor)
    if job.reduce_memory_mb is not None:
        settings["mapreduce.reduce.memory.mb"] = str(job.reduce_memory_mb)
        settings["mapreduce.reduce.memory.totalbytes"] = str(job.reduce_memory_mb * 1024 * 1024)
    if job.is_bench:
        settings["phaseline.bench.selectivity"] = repr(float(job.selectivity))
        settings["phaseline.bench.seed"] = str(job.seed)
    return settings


#: The job's options that a Hadoop setting (new key name, then old) can shadow.
_SHADOWED: tuple[tuple[str, tuple[str, ...], Callable[[str], Any]], ...] = (
    ("reduces", ("mapreduce.job.reduces", "mapred.reduce.tasks"), int),
    ("io_sort_mb", ("mapreduce.task.io.sort.mb", "io.sort.mb"), int),
    ("sort_factor", ("mapreduce.task.io.sort.factor", "io.sort.factor"), int),
    ("selectivity", ("phaseline.bench.selectivity",), float),
)


def _effective(job: EngineJob, settings: Mapping[str, str]) -> EngineJob:
    """``job`` as the merged ``settings`` run it: a ``-D`` that shadows an option (under Hadoop's new
    or old key name; the later in ``mapred-site.xml`` wins, as Hadoop reads it) is the option's
    value.  The heap is sized and ``run.json`` records the parameters from it: a ``-D
    mapreduce.task.io.sort.mb=600`` had run out of a heap sized for the option's default, and
    ``-D mapred.reduce.tasks=3`` ran 3 reduces that ``run.json`` (and the store) called 1."""
    changes: dict[str, Any] = {}
    for name, keys, parse in _SHADOWED:
        given = [value for key, value in settings.items() if key in keys]
        if not given:
            continue
        try:
            value = parse(given[-1].strip())
        except ValueError:
            raise EngineError(f"setting {keys[0]}={given[-1]!r} is not a number") from None
        if value != getattr(job, name):
            changes[name] = value
    return dataclasses.replace(job, **changes) if changes else job


def _heap_mb(job: EngineJob) -> int:
    if job.heap_mb is not None:
        return job.heap_mb
    sort_mb = job.io_sort_mb or _DEFAULT_SORT_MB
    reduce_mb = job.reduce_memory_mb or 128
    return max(512, 256 + sort_mb * job.map_parallelism + reduce_mb * job.reduce_parallelism)


def _log_tail(run_dir: Path) -> str:
    parts = []
    for name in ("logs/job.log", "logs/jvm.out"):
        path = run_dir / name
        if path.exists():
            lines = path.read_text(errors="replace").splitlines()[-_LOG_TAIL_LINES:]
            if lines:
                parts.append(f"--- {path} (last {len(lines)} lines) ---\n" + "\n".join(lines))
    return "\n".join(parts) if parts else "(no log written)"


def _prepare_run_dir(out: Path) -> Path:
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


def _remove_data(run_dir: Path, *, generated_input: bool) -> None:
    """Delete the run's bulk data: output, staging, temp dirs, and generated input."""
    doomed = [run_dir / "output", run_dir / "staging", run_dir / "tmp"]
    if generated_input:
        doomed.append(run_dir / "input")
    for path in doomed:
        shutil.rmtree(path, ignore_errors=True)


def _driver_args(job: EngineJob, input_dir: Path, output_dir: Path) -> list[str]:
    if not job.args:
        return [str(input_dir), str(output_dir)]
    return [a.replace("{input}", str(input_dir)).replace("{output}", str(output_dir)) for a in job.args]


def engine_jar() -> Path:
    """The microbenchmark's jar (compiled on first use), also for ``hadoop jar`` on a cluster.

    On a real cluster::

        hadoop jar phaseline-engine.jar phaseline.engine.TeraRecordGen IN RECORDS FILES SEED
        hadoop jar phaseline-engine.jar phaseline.engine.PhaselineBench \\
            -D phaseline.bench.selectivity=1.4 -D mapreduce.job.reduces=5 \\
            -D mapreduce.input.fileinputformat.split.minsize=BYTES_PER_FILE IN OUT
    """
    classes = compile_java("phaseline-engine", sorted(_JAVA_DIR.glob("*.java")), make_jar=True)
    return classes.parent / "phaseline-engine.jar"


def _jvm_command(job: EngineJob, run_dir: Path, jar: Path, input_dir: Path) -> list[str]:
    """``java ... EngineLauncher ...`` for one run (configuration already in ``tmp/etc``)."""
    tmp = run_dir / "tmp"
    etc = tmp / "etc"
    job_log = run_dir / "logs" / "job.log"
    warmup = tmp / WARMUP_DIR
    jvm_args = [
        *MEASURING_JVM_FLAGS,
        f"-Xmx{_heap_mb(job)}m",
        f"-Xms{_heap_mb(job)}m",  # a heap that does not resize (GC pauses) while tasks are timed
        "-Duser.timezone=UTC",
        f"-Djava.io.tmpdir={tmp}",
        f"-Dlog4j2.configurationFile={etc / 'log4j2.properties'}",
        # With a warm-up the JVM logs there first, then switches to logs/job.log.
        f"-Dphaseline.log.file={warmup / 'job.log' if job.warmup_mb > 0 else job_log}",
    ]
    if job.jfr:
        # JFR keeps 64 frames of a stack by default: a sort's recursion inside a spill runs deeper,
        # and a stack cut before SpillThread.run maps to no vertex
        jvm_args.append(f"-XX:FlightRecorderOptions:stackdepth={JFR_STACK_DEPTH}")
    extra_cp = [etc, jar] + ([Path(job.jar).resolve()] if job.jar is not None else [])
    cmd = java_command(_LAUNCHER, extra_cp, jvm_args=jvm_args)
    cmd += ["--run-dir", str(run_dir), "--result", str(tmp / "engine-result.json")]
    cmd += ["--main", job.main_class or BENCH_CLASS]
    if job.warmup_mb > 0:
        records = max(WARMUP_FILES, round(job.warmup_mb * 1024 * 1024 / RECORD_BYTES))
        cmd += ["--warmup-dir", str(warmup / "data"), "--warmup-records", str(records)]
        cmd += ["--warmup-files", str(WARMUP_FILES), "--log-file", str(job_log)]
        if job.warmup_app:
            for arg in _driver_args(job, warmup / "data" / "input", warmup / "data" / "app-output"):
                cmd += ["--warmup-arg", arg]
    if job.jfr:
        # Started by the launcher (after any warm-up), dumped when the JVM exits.
        cmd += ["--jfr", str(run_dir / "recording.jfr"), "--jfr-settings", str(etc / "phaseline.jfc")]
    if job.input_path is None:
        cmd += ["--generate", str(input_dir), "--records", str(job.input_records)]
        cmd += ["--files", str(job.maps), "--seed", str(job.seed)]
    return [*cmd, "--", *_driver_args(job, input_dir, run_dir / "output")]


def run_engine(job: EngineJob, out: Path, *, timeout_s: float | None = 900.0) -> EngineRun:
    """Run ``job`` on LocalJobRunner; write and return the run directory ``out``.

    Parameters
    ----------
    job
        What to run.
    out
        The run directory; must not exist or be empty.
    timeout_s
        Kill the JVM after this long.

    Returns
    -------
    EngineRun
        The run, as read back from ``out/run.json``.

    Raises
    ------
    EngineError
        Java, javac or the Hadoop jars are missing; the driver failed, submitted no
        job, or the job did not succeed (``run.json`` is still written when the JVM
        reported a job, with ``status`` FAILED); the message ends with the log's tail.
    """
    jar = engine_jar()
    if job.jar is not None and not Path(job.jar).is_file():
        raise EngineError(f"job jar {job.jar} not found")
    run_dir = _prepare_run_dir(out)
    input_dir = Path(job.input_path).resolve() if job.input_path is not None else run_dir / "input"
    scratch = hadoop_scratch(run_dir)
    settings = derived_settings(job, run_dir, scratch)
    settings.update(job.hadoop_conf)
    job = _effective(job, settings)
    (run_dir / "tmp" / "etc").mkdir(parents=True)
    jvmconf.write_etc(run_dir / "tmp" / "etc", settings, jfr=job.jfr)
    cmd = _jvm_command(job, run_dir, jar, input_dir)
    try:
        wall_start_ms = time.time_ns() // 1_000_000
        jvm_out = run_dir / "logs" / "jvm.out"
        with open(jvm_out, "wb") as sink:
            try:
                proc = subprocess.run(
                    cmd, stdout=sink, stderr=subprocess.STDOUT, timeout=timeout_s, cwd=run_dir / "tmp"
                )
            except subprocess.TimeoutExpired as exc:
                raise EngineError(f"engine run timed out after {timeout_s} s\n{_log_tail(run_dir)}") from exc
        wall_end_ms = time.time_ns() // 1_000_000
        if jvm_out.stat().st_size == 0:
            jvm_out.unlink()
        result_path = run_dir / "tmp" / "engine-result.json"
        try:
            report = json.loads(result_path.read_text())
        except (OSError, ValueError) as exc:
            raise EngineError(
                f"the engine JVM exited with code {proc.returncode} without a report\n{_log_tail(run_dir)}"
            ) from exc
        main_class = job.main_class or BENCH_CLASS
        if not report["jobs"]:
            detail = report.get("error") or "the driver submitted no MapReduce job"
            raise EngineError(f"{main_class}: {detail}\n{_log_tail(run_dir)}")
        doc = _run_document(job, report, settings, main_class, wall_start_ms, wall_end_ms)
        (run_dir / "run.json").write_text(json.dumps(doc, indent=1) + "\n")
    finally:
        if not job.keep_data:
            _remove_data(run_dir, generated_input=job.input_path is None)
            if scratch != run_dir / "tmp":
                shutil.rmtree(scratch, ignore_errors=True)
    if doc["status"] != "SUCCEEDED" or report.get("error"):
        why = report.get("error") or report["jobs"][-1].get("failure_info") or "job failed"
        raise EngineError(f"job {doc['job_id']} {doc['status']}: {why.strip()}\n{_log_tail(run_dir)}")
    return load_run(run_dir)


def _run_document(
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


__all__ = ["EngineJob", "EngineRun", "derived_settings", "engine_jar", "load_run", "run_engine"]
