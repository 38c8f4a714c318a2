"""The local Hadoop engine: phaseline's microbenchmark job (Zhang et al. 2013,
section 3) and users' own jobs, run for real on Hadoop's LocalJobRunner.

See :mod:`platform_model.engine.runner` for the run directory it writes.
"""

from platform_model.engine.job import EngineJob
from platform_model.engine.run_dir import EngineRun, load_run
from platform_model.engine.runner import run_engine

__all__ = ["EngineJob", "EngineRun", "load_run", "run_engine"]
