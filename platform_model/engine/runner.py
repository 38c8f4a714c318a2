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

    RUN_DIR/run.json              summary: ids, status, times, params, settings, job counters; for a
                                  user's driver, the map and reduce tasks its conf says it ran ("maps",
                                  "reduces")
    RUN_DIR/<job_id>_conf.xml     the submitted job configuration (with mapreduce.job.id)
    RUN_DIR/logs/job.log          log4j2 output of the JVM, UTC millisecond timestamps
    RUN_DIR/recording.jfr         JDK Flight Recorder recording (with ``jfr=True``)
    RUN_DIR/jit.jfr               the JIT's compiles (every run without ``jfr``: :data:`JIT_RECORDING`)

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

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from phaseline.errors import EngineError
from phaseline.java import compile_java, java_command
from platform_model.engine import jvmconf
from platform_model.engine.job import (
    BENCH_CLASS,
    MEASURING_JVM_FLAGS,
    RECORD_BYTES,
    WARMUP_FILES,
    EngineJob,
    derived_settings,
    driver_args,
    effective,
)
from platform_model.engine.run_dir import (
    EngineRun,
    hadoop_scratch,
    load_run,
    log_tail,
    prepare_run_dir,
    record_submitted_tasks,
    remove_data,
    run_document,
)

_LAUNCHER = "phaseline.engine.EngineLauncher"
_JAVA_DIR = Path(__file__).resolve().parent / "java"
#: Frames JFR keeps per sampled stack (its default, 64, cuts a spill's sort recursion short).
JFR_STACK_DEPTH = 256
#: Hidden (never ingested) directory of the warm-up job's data and log, under ``RUN_DIR/tmp``.
WARMUP_DIR = ".warmup"
#: Hadoop's default ``mapreduce.task.io.sort.mb``; used to size the JVM heap.
_DEFAULT_SORT_MB = 100


def _heap_mb(job: EngineJob) -> int:
    if job.heap_mb is not None:
        return job.heap_mb
    sort_mb = job.io_sort_mb or _DEFAULT_SORT_MB
    reduce_mb = job.reduce_memory_mb or 128
    return max(512, 256 + sort_mb * job.map_parallelism + reduce_mb * job.reduce_parallelism)


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


#: The run's JIT compiles, every one (JFR's ``jdk.Compilation``, from the JVM's start): the engine
#: compiles in the thread that needs the code (:data:`MEASURING_JVM_FLAGS`), so each compile is time a
#: task stood still, which the profile reads apart (:mod:`profiles.jit_clock`).
JIT_RECORDING = "jit.jfr"
#: Set to ``0``, runs record no compiles: JFR starts in about 4 s of the JVM's time where compiles block
#: (the test suite's engine runs, which check other things, save that; a user's runs keep the default).
JIT_RECORDING_ENV = "PHASELINE_JIT_RECORDING"


def jit_recording_flags(path: Path) -> tuple[str, str]:
    """The JVM options that record every JIT compile into ``path`` (JDK 17's event options: that one
    event alone, no threshold), written when the JVM exits; JFR's start-up notice kept off stdout."""
    return (
        "-Xlog:jfr+startup=error",
        f"-XX:StartFlightRecording:filename={path},dumponexit=true,settings=none,"
        "+jdk.Compilation#enabled=true,+jdk.Compilation#threshold=0ms",
    )


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
    # (--jfr's recording holds the compiles: two recordings would share their events)
    if not job.jfr and os.environ.get(JIT_RECORDING_ENV) != "0":
        jvm_args.extend(jit_recording_flags(run_dir / JIT_RECORDING))
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
            for arg in driver_args(job, warmup / "data" / "input", warmup / "data" / "app-output"):
                cmd += ["--warmup-arg", arg]
    if job.jfr:
        # Started by the launcher (after any warm-up), dumped when the JVM exits.
        cmd += ["--jfr", str(run_dir / "recording.jfr"), "--jfr-settings", str(etc / "phaseline.jfc")]
    if job.input_path is None:
        cmd += ["--generate", str(input_dir), "--records", str(job.input_records)]
        cmd += ["--files", str(job.files), "--seed", str(job.seed)]
    return [*cmd, "--", *driver_args(job, input_dir, run_dir / "output")]


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
    run_dir = prepare_run_dir(out)
    input_dir = Path(job.input_path).resolve() if job.input_path is not None else run_dir / "input"
    scratch = hadoop_scratch(run_dir)
    settings = derived_settings(job, run_dir, scratch)
    settings.update(job.hadoop_conf)
    job = effective(job, settings)
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
                raise EngineError(f"engine run timed out after {timeout_s} s\n{log_tail(run_dir)}") from exc
        wall_end_ms = time.time_ns() // 1_000_000
        if jvm_out.stat().st_size == 0:
            jvm_out.unlink()
        result_path = run_dir / "tmp" / "engine-result.json"
        try:
            report = json.loads(result_path.read_text())
        except (OSError, ValueError) as exc:
            raise EngineError(
                f"the engine JVM exited with code {proc.returncode} without a report\n{log_tail(run_dir)}"
            ) from exc
        main_class = job.main_class or BENCH_CLASS
        if not report["jobs"]:
            detail = report.get("error") or "the driver submitted no MapReduce job"
            raise EngineError(f"{main_class}: {detail}\n{log_tail(run_dir)}")
        doc = run_document(job, report, settings, main_class, wall_start_ms, wall_end_ms)
        # the driver's own splits and reduces (a cluster's history has them too)
        record_submitted_tasks(doc, run_dir, job)
        (run_dir / "run.json").write_text(json.dumps(doc, indent=1) + "\n")
    finally:
        if not job.keep_data:
            remove_data(run_dir, generated_input=job.input_path is None)
            if scratch != run_dir / "tmp":
                shutil.rmtree(scratch, ignore_errors=True)
    if doc["status"] != "SUCCEEDED" or report.get("error"):
        why = report.get("error") or report["jobs"][-1].get("failure_info") or "job failed"
        raise EngineError(f"job {doc['job_id']} {doc['status']}: {why.strip()}\n{log_tail(run_dir)}")
    return load_run(run_dir)


__all__ = ["EngineError", "EngineJob", "EngineRun", "derived_settings", "engine_jar", "load_run", "run_engine"]
