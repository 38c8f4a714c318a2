"""One engine for a series of runs: LocalJobRunner, or one mini YARN cluster that serves them all."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from phaseline.hadoop_names import LOCAL_ENGINE, YARN_ENGINE
from platform_model.engine import runner
from platform_model.engine.job import EngineJob
from platform_model.engine.run_dir import EngineRun
from platform_model.engine.yarn import ClusterShape, YarnCluster

#: The engines `--engine` chooses from; the first is the default.
ENGINES = (LOCAL_ENGINE, YARN_ENGINE)


class RunFn(Protocol):
    def __call__(self, job: EngineJob, out: Path, *, timeout_s: float | None = ...) -> EngineRun: ...


@contextmanager
def engine_session(engine: str = ENGINES[0], shape: ClusterShape | None = None) -> Iterator[RunFn]:
    """Yield a function that runs a job on ``engine``; a YARN cluster of ``shape`` is started once, here.

    On YARN every task runs in a fresh container JVM: a job's ``warmup_mb``/``warmup_app`` (warming
    the local engine's one JVM) and ``jfr`` (recording it) are dropped.
    """
    if engine == LOCAL_ENGINE:
        yield runner.run_engine  # looked up now: a caller (a test) may have replaced it since this import
        return
    if engine != "yarn":
        raise ValueError(f"unknown engine {engine!r}; one of {', '.join(ENGINES)}")
    with YarnCluster(shape or ClusterShape()) as cluster:

        def run(job: EngineJob, out: Path, *, timeout_s: float | None = 900.0) -> EngineRun:
            job = dataclasses.replace(job, jfr=False, warmup_mb=0.0, warmup_app=False)
            return cluster.run(job, out, timeout_s=timeout_s)

        yield run


__all__ = ["ENGINES", "RunFn", "engine_session"]
