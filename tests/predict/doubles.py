"""Shared test doubles and builders: a linear platform, a toy profile, simulated jobs, Vianna's tables, backtest rows."""

from __future__ import annotations

import csv
import dataclasses
import importlib
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from phaseline.errors import PlatformModelError
from platform_model.model import fit_platform
from platform_model.profile import profile_from_arrays
from predict.backtest import BacktestRow
from predict.core import Cluster
from predict.simulate import SimJob, StageDist
from predict.vianna.layout import TaskKind, Workload
from predict.vianna.model import Demands
from profiles.profile import JobProfile, ProfileSource
from profiles.profile_stats import DurationStats, InputStats

# ---------------------------------------------------------------- a linear platform model (Zhang et al. 2013,
# eq. 1: Dur = A + B * Data) and a toy job profile
MB = 2**20
GB = 2**30
#: Relative tolerance for comparing hand-worked figures with the code's floating point.
REL = 1e-9


@dataclass(frozen=True)
class LinearPlatform:
    """Test double of a platform model: phase -> (intercept ms, ms per byte)."""

    coef: Mapping[str, tuple[float, float]] = field(
        default_factory=lambda: {
            "read": (100.0, 1e-5),
            "collect": (10.0, 5e-6),
            "spill": (50.0, 1e-5),
            "merge": (20.0, 2e-5),
            "shuffle": (200.0, 3e-5),
            "write": (100.0, 2e-5),
        }
    )

    def duration_ms(self, phase: str, data_bytes: float) -> float:
        if phase not in self.coef:
            raise PlatformModelError(f"no submodel for phase {phase!r}")
        a, b = self.coef[phase]
        return a + b * data_bytes


#: The engine a platform measured on a mini YARN cluster of 2 NodeManagers x 2 containers records.
YARN_2X2 = {"name": "yarn", "nodes": 2, "containers_per_node": 2, "container_mb": 512}


class MeasuredPlatform(LinearPlatform):
    """The linear test platform, measured on ``engine`` (as ``PlatformModel.cluster`` records it)."""

    def __init__(self, engine: dict[str, Any]) -> None:
        super().__init__()
        object.__setattr__(self, "cluster", {"engine": engine})


def toy_profile(**changes: object) -> JobProfile:
    """A word-count-like profile: 20 splits of 64 MB, map output 1.6x, a combiner, 4 reduces."""
    profile = JobProfile(
        source=ProfileSource(job_ids=("job_1_0001",), job_name="wordcount", config={"io.sort.mb": "100"}),
        num_maps=20,
        num_reduces=4,
        input=InputStats(20, 64 * MB, 64 * MB, 640_000, 650_000),
        map_size_sel=1.6,
        map_recs_sel=10.0,
        reduce_size_sel=0.3,
        reduce_recs_sel=0.2,
        combine_size_sel=0.3,
        combine_recs_sel=0.1,
        map_ms_per_record=0.002,
        reduce_ms_per_record=0.001,
        map_task_overhead_ms=800.0,
        reduce_task_overhead_ms=900.0,
        stages={
            "map_task": DurationStats(10_000, 12_000, 20),
            "first_shuffle": DurationStats(3_000, 4_000, 2),
            "typical_shuffle": DurationStats(6_000, 7_000, 2),
            "reduce_phase": DurationStats(5_000, 6_000, 4),
        },
    )
    return replace(profile, **changes)  # type: ignore[arg-type]


CLUSTER = Cluster(nodes=4, map_slots_per_node=2, reduce_slots_per_node=2)


def toy_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A toy profile file, and a platform file the CLI loads as :class:`LinearPlatform`."""
    cli_predict = importlib.import_module("phaseline.cli.predict")
    monkeypatch.setattr(cli_predict, "_load_platform", lambda path: LinearPlatform())
    profile = tmp_path / "profile.json"
    toy_profile().save(profile)
    platform = tmp_path / "platform.json"
    platform.write_text("{}")
    return profile, platform


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    from phaseline.cli import main

    profile, platform = toy_files(tmp_path, monkeypatch)
    result = CliRunner().invoke(main, [*args, "--profile", str(profile), "--platform", str(platform)])
    assert result.exit_code == 0, result.output
    return result.output


# ---------------------------------------------------------------- simulated jobs
def _job(**changes: object) -> SimJob:
    job = SimJob(
        map_means_ms=(3000.0,) * 24,
        map_cv=0.3,
        n_reduces=6,
        first_shuffle=StageDist(500.0, 0.2),
        shuffle=StageDist(2000.0, 0.2),
        reduce=StageDist(1500.0, 0.3),
        nodes=2,
        map_slots_per_node=2,
        reduce_slots_per_node=2,
    )
    return dataclasses.replace(job, **changes)  # type: ignore[arg-type]


def _center_cv(row: Mapping[str, float]) -> float:
    """cv of a task whose residence at each center is exponential with mean its demand there (the paper's simulator)."""
    demands = [float(v) for v in row.values() if v > 0]
    return math.sqrt(sum(v * v for v in demands)) / sum(demands)


def fig7a_slot_job(demands: Demands, task_response_s: Mapping[str, float], maps: int) -> SimJob:
    """Vianna et al. Fig. 7a (n = 4, r = 4, pm = pr = ps = 1) as a slot job whose tasks take the aMVA's
    per-kind response times, each as variable as a task exponential at every center."""
    r = task_response_s
    ss = r[TaskKind.SHUFFLE_SORT] * 1000
    return SimJob(
        map_means_ms=(r[TaskKind.MAP] * 1000,) * maps,
        map_cv=_center_cv(demands.map),
        n_reduces=4,
        first_shuffle=StageDist(ss, _center_cv(demands.shuffle_sort)),  # the last map's shuffle-sort
        shuffle=StageDist(
            maps * ss, _center_cv(demands.shuffle_sort) / math.sqrt(maps)
        ),  # m in series (ps = 1)
        reduce=StageDist(r[TaskKind.MERGE] * 1000, _center_cv(demands.merge)),
        nodes=4,
        map_slots_per_node=1,
        reduce_slots_per_node=1,
        slowstart=0.0,
    )


# ---------------------------------------------------------------- Vianna et al. 2013's Tables 2, 3 and 4
# (how ps = 5 reads Table 2: the docstring of tests/predict/test_vianna_paper.py)
DATA = Path(__file__).parents[1] / "data"


def table2(pm: int, ps: int) -> Demands:
    """Table 2's demands for (pm, ps); ps = 5 reads the ps = 4 rows (see the module docstring)."""
    row_ps = 4 if ps == 5 else ps
    rows: dict[str, dict[str, float]] = {}
    with (DATA / "vianna_table2.csv").open() as fh:
        for rec in csv.DictReader(fh):
            if int(rec["pm"]) == pm and int(rec["ps"]) == row_ps:
                rows[rec["task"]] = {dev: float(rec[dev]) for dev in ("cpu", "fiber", "disk", "network")}
    return Demands(rows["map"], rows["shuffle_sort"], rows["merge"])


def real_setup(pm: int, ps: int) -> Workload:
    """Table 3, real setup: n = 3, c = 4, d = 1, m = 150, r = 3, pr = 1."""
    return Workload(nodes=3, cpus=4, disks=1, maps=150, reduces=3, pm=pm, pr=1, ps=ps)


#: Table 4, "Fork-join-based model" and "Tripathi-based model" columns, seconds, by (pm, ps).
TABLE4_FORKJOIN = {(1, 1): 732.56, (1, 5): 659.13, (4, 1): 365.51, (4, 5): 356.20}
TABLE4_TRIPATHI = {(1, 1): 798.56, (1, 5): 701.75, (4, 1): 620.01, (4, 5): 597.81}


# ---------------------------------------------------------------- backtest rows and a platform file
#: The JSON fields `phaseline backtest --format json` promises (issue 9).
CONTRACT = {"job", "case", "model", "predicted_s", "measured_s", "error"}


def _noisy_row(case: str, runs: tuple[float, ...], profile: tuple[float, ...], job: str = "j") -> BacktestRow:
    return BacktestRow(job, case, "m", 1.0, statistics.median(runs), 0.0, None, None, len(runs), "p",
                       measured_runs_s=runs, profile_runs_s=profile)  # fmt: skip


def _row(case: str, runs: tuple[float, ...], profile: tuple[float, ...], **kw: Any) -> BacktestRow:
    return BacktestRow("j", case, "m", 1.0, statistics.median(runs), 0.0, None, None, len(runs), "p",
                       measured_runs_s=runs, profile_runs_s=profile, **kw)  # fmt: skip


def _platform_file(tmp_path: Path) -> Path:
    x = np.array([1, 2, 4, 8, 16, 64, 256, 1024, 4096] * 6, dtype=float) * MB
    phases = np.repeat(["read", "collect", "spill", "merge", "shuffle", "write"], 9)
    return fit_platform(profile_from_arrays(phases, x, 50 + x / 2e5), split=False).save(
        tmp_path / "platform.json"
    )
