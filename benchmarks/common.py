"""Shared pieces of the benchmarks: the figure record, machine and version capture, timing.

A benchmark produces :class:`Figure` records: one measured value, the figure
of the peer it is compared with (measured side by side in the same run, so the
ratio survives a noisy machine), and the target the figure must meet.
``benchmarks/run`` collects them, adds :func:`machine` and :func:`versions`,
and writes ``results.json`` and ``RESULTS.md`` (``results_files.py``).

Child processes are measured the way ``/usr/bin/time`` measures them
(:func:`run_measured`): wall time, user and system CPU of the process and all
its threads, and peak resident set size from ``wait4``'s ``rusage``, taken by
a small launcher process (:data:`_LAUNCHER`) that forks the command itself.
"""

from __future__ import annotations

import enum
import importlib.metadata
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[1]
#: The real traces, where the tests read them: ``tests/data/fixtures``, or ``$PHASELINE_SHARED/fixtures``.
FIXTURES = (
    Path(os.environ["PHASELINE_SHARED"]) / "fixtures"
    if os.environ.get("PHASELINE_SHARED")
    else REPO / "tests" / "data" / "fixtures"
)
RESULTS_VERSION = 1

T = TypeVar("T")


class Goal(enum.StrEnum):
    """How a figure is judged against its target."""

    RATIO_AT_LEAST = "ratio_at_least"  # value / peer_value >= threshold (both "higher is better")
    RATIO_AT_MOST = "ratio_at_most"  # value / peer_value <= threshold
    AT_MOST = "at_most"  # value <= threshold (e.g. seconds)
    AT_LEAST = "at_least"  # value >= threshold (e.g. rows/s)


@dataclass(frozen=True, slots=True)
class Target:
    """A figure's target: ``goal`` applied with ``threshold``."""

    goal: Goal
    threshold: float

    def describe(self, unit: str) -> str:
        """Human text, e.g. ``>= 2x peer`` or ``<= 1 s``."""
        match self.goal:
            case Goal.RATIO_AT_LEAST:
                return f">= {self.threshold:g}x peer"
            case Goal.RATIO_AT_MOST:
                return f"<= {self.threshold:g}x peer"
            case Goal.AT_MOST:
                return f"<= {self.threshold:g} {unit}"
            case Goal.AT_LEAST:
                return f">= {self.threshold:g} {unit}"
        raise AssertionError(self.goal)  # pragma: no cover

    def met(self, value: float, peer_value: float | None) -> bool | None:
        """Whether the target is met; ``None`` when a ratio target has no peer figure."""
        if self.goal in (Goal.AT_MOST, Goal.AT_LEAST):
            return value <= self.threshold if self.goal is Goal.AT_MOST else value >= self.threshold
        if not peer_value:
            return None
        ratio = value / peer_value
        return ratio >= self.threshold if self.goal is Goal.RATIO_AT_LEAST else ratio <= self.threshold


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure, its peer measured beside it, and its target.

    ``value`` and ``peer_value`` share ``unit``; ``ratio`` is ``value / peer_value``.
    ``details`` keeps the raw measurements (wall and CPU seconds, RSS, counts).
    """

    area: str
    name: str
    value: float
    unit: str
    peer: str | None = None
    peer_value: float | None = None
    target: Target | None = None
    note: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.peer_value is None or self.peer_value == 0:
            return None
        return self.value / self.peer_value

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.target.met(self.value, self.peer_value)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["details"] = dict(self.details)
        out["ratio"] = self.ratio
        out["target"] = (
            None
            if self.target is None
            else {
                "goal": self.target.goal.value,
                "threshold": self.target.threshold,
                "text": self.target.describe(self.unit),
            }
        )
        out["met"] = self.met
        return out


@dataclass(frozen=True, slots=True)
class BenchError:
    """A benchmark that could not produce its figures (recorded, not hidden)."""

    area: str
    command: str
    error: str


# ---------------------------------------------------------------------- machine and versions
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_total_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    """CPU model, logical cores, memory, OS, and the load average when called."""
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": _mem_total_gb(),
        "os": f"{platform.system()} {platform.release()}",
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _java_version() -> str | None:
    try:
        from phaseline.java import java_tool

        proc = subprocess.run([java_tool("java"), "-version"], capture_output=True, text=True, timeout=60)
    except Exception:  # no JDK: recorded as unknown
        return None
    first = (proc.stderr or proc.stdout).strip().splitlines()
    return first[0] if first else None


def _hadoop_version() -> str | None:
    try:
        from phaseline.java import hadoop_classpath

        jars = hadoop_classpath()
    except Exception:  # no Hadoop jars: recorded as unknown
        return None
    for jar in jars:
        m = re.match(r"hadoop-(?:client-api|mapreduce-client-core)-(\d[\w.\-]*)\.jar$", jar.name)
        if m:
            return f"{m.group(1)} ({jar.name})"
    return None


def versions() -> dict[str, str | None]:
    """Versions of everything the figures depend on."""
    return {
        "phaseline": _dist_version("phaseline"),
        "python": platform.python_version(),
        "duckdb": _dist_version("duckdb"),
        "pyarrow": _dist_version("pyarrow"),
        "numpy": _dist_version("numpy"),
        "orjson": _dist_version("orjson"),
        "java": _java_version(),
        "hadoop": _hadoop_version(),
    }


def now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# ---------------------------------------------------------------------- timing
@dataclass(frozen=True, slots=True)
class Timing:
    """Best wall and CPU seconds of ``runs`` calls, and the last call's result."""

    wall_s: float
    cpu_s: float
    runs: int
    result: Any


def best_of(fn: Callable[[], T], repeat: int = 3) -> Timing:
    """Call ``fn`` ``repeat`` times; keep the best wall time (and the best CPU time)."""
    wall, cpu = float("inf"), float("inf")
    out: Any = None
    for _ in range(max(1, repeat)):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return Timing(wall, cpu, max(1, repeat), out)


@dataclass(frozen=True, slots=True)
class ChildRun:
    """A finished child process measured like ``/usr/bin/time``."""

    argv: tuple[str, ...]
    returncode: int
    wall_s: float
    user_s: float
    sys_s: float
    peak_rss_mb: float
    stdout: str
    stderr: str

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s

    def last_json(self) -> dict[str, Any]:
        """The last stdout line that parses as a JSON object."""
        for line in reversed(self.stdout.strip().splitlines()):
            line = line.strip()
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(obj, dict):
                    return obj
        raise ValueError(f"no JSON object in the output of {' '.join(self.argv)}:\n{self.stdout[-2000:]}")


#: Forks the command and reports its ``wait4`` rusage as JSON to the file in argv[1].
#: Linux keeps a process's peak RSS across ``exec`` (``signal->maxrss`` takes the
#: old address space's high-water mark), and a child that Python spawns starts
#: from its parent's address space (``vfork``): measured directly, any child of a
#: 700 MB test or benchmark process reports at least 700 MB.  This launcher is a
#: fresh interpreter of ~10 MB, so the peak it reports is the command's own.
_LAUNCHER = r"""
import json, os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    json.dump({"user_s": usage.ru_utime, "sys_s": usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024}, fh)
code = os.waitstatus_to_exitcode(status)
if code < 0:
    os.kill(os.getpid(), -code)  # die of the same signal, as the shell would show it
os._exit(code if code >= 0 else 128 - code)
"""


def run_measured(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    timeout_s: float | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> ChildRun:
    """Run a command; wall time, CPU time of all its threads and peak RSS come from ``wait4``.

    Raises
    ------
    RuntimeError
        When ``check`` and the command exits non-zero (the message ends with its stderr).

    The command runs under :data:`_LAUNCHER` in a session of its own.  One
    running longer than ``timeout_s`` is killed (SIGKILL, with the launcher):
    its return code is then -9, its output is what it printed until then, and
    its CPU and peak RSS are unknown (0).
    """
    full_env = {**os.environ, **(env or {})}
    with (
        tempfile.TemporaryFile("w+") as out_fh,
        tempfile.TemporaryFile("w+") as err_fh,
        tempfile.TemporaryDirectory() as report_dir,
    ):
        report = Path(report_dir) / "rusage.json"
        launcher = [sys.executable, "-S", "-c", _LAUNCHER, str(report), *argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            launcher, cwd=cwd, env=full_env, stdout=out_fh, stderr=err_fh, text=True, start_new_session=True
        )
        try:
            returncode = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            returncode = proc.wait()
        wall = time.perf_counter() - t0
        usage = json.loads(report.read_text()) if report.exists() else {"user_s": 0.0, "sys_s": 0.0, "peak_rss_mb": 0.0}
        out_fh.seek(0)
        err_fh.seek(0)
        out, err = out_fh.read(), err_fh.read()
    run = ChildRun(tuple(argv), returncode, wall, usage["user_s"], usage["sys_s"], usage["peak_rss_mb"], out, err)
    if check and returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {returncode}:\n{err[-3000:]}")
    return run


def own_peak_rss_mb() -> float:
    """This process's peak RSS since its ``exec``: ``VmHWM``, where ``ru_maxrss`` may be its parent's (see :data:`_LAUNCHER`)."""
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def python_child(script: Path, *args: str) -> list[str]:
    """``python script args...`` with this interpreter."""
    return [sys.executable, str(script), *args]
