"""A microbenchmark plan: its benchmarks MB_i = (M_inp, M_sel, N_map, N_red) and the Hadoop settings
they run with (:class:`BenchPlan`), checked wherever one is made, and its JSON (``save``, ``load``).
:func:`platform_model.bench.make_plan` builds the paper's (Zhang et al. 2013, section 3).
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from phaseline.errors import PlatformModelError
from platform_model.shuffle_thresholds import ShuffleThresholds, config_thresholds

PLAN_FORMAT = "phaseline-bench-plan"
PLAN_VERSION = 1
#: What a benchmark may ask for: M_inp in (0, MAX_INPUT_MB], M_sel in [0, MAX_SELECTIVITY],
#: N_map and N_red in [1, MAX_TASKS] (checked wherever one is made).
MAX_INPUT_MB = 1e9
MAX_SELECTIVITY = 1e3
MAX_TASKS = 10_000_000
_MIB = 1 << 20



class BenchKind(enum.StrEnum):
    """Which part of the paper's benchmark set a benchmark belongs to."""

    GRID = "grid"
    SHUFFLE = "shuffle"


_BENCH_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}")


class PlanValueError(PlatformModelError):
    """A plan's size, count or scale out of its bounds: from `bench plan`'s options, a usage error."""


@dataclass(frozen=True, slots=True)
class Benchmark:
    """One microbenchmark MB_i = (M_inp, M_sel, N_map, N_red) (Zhang et al. 2013, section 3)."""

    name: str
    kind: BenchKind
    input_mb_per_map: float
    selectivity: float
    maps: int
    reduces: int
    seed: int

    def __post_init__(self) -> None:
        # the one check of a benchmark's sizes, however it is made (make_plan, a loaded plan); first,
        # since make_plan names a benchmark by its sizes ('grid-inp2mb-sel1e+09')
        if not (0 < self.input_mb_per_map <= MAX_INPUT_MB and 0 <= self.selectivity <= MAX_SELECTIVITY
                and 1 <= self.maps <= MAX_TASKS and 1 <= self.reduces <= MAX_TASKS):  # also NaN  # fmt: skip
            raise PlanValueError(
                f"benchmark {self.name}: M_inp {self.input_mb_per_map:g} MB per map, M_sel {self.selectivity:g}, "
                f"N_map {self.maps}, N_red {self.reduces}: need 0 < M_inp <= {MAX_INPUT_MB:,.0f} MB, "
                f"0 <= M_sel <= {MAX_SELECTIVITY:,.0f}, 1 <= N_map, N_red <= {MAX_TASKS:,}"
            )
        # a name is a directory of its own (bench run's runs/<name>, bench script's $HDFS_ROOT/<name>,
        # which the script deletes): one plain path component, never '..' or a hidden name
        if not isinstance(self.name, str) or _BENCH_NAME.fullmatch(self.name) is None:
            raise PlatformModelError(
                f"benchmark name {self.name!r}: use letters, digits, '.', '_' and '-', not starting with '.' "
                "(it names the benchmark's directory)"
            )

    @property
    def total_input_mb(self) -> float:
        """M_inp x N_map."""
        return self.input_mb_per_map * self.maps

    @property
    def shuffle_bytes_per_reduce(self) -> float:
        """Intermediate data per reduce task, eq. 2: M_inp x M_sel x N_map / N_red."""
        if self.reduces == 0:
            return 0.0
        return self.input_mb_per_map * _MIB * self.selectivity * self.maps / self.reduces


def check_scales(scale: float, task_scale: float | None, warmup_mb: float) -> None:
    """The plan's scale factors and warm-up, checked once for make_plan and for a loaded plan."""
    if not (math.isfinite(scale) and scale > 0):
        raise PlanValueError(f"scale must be a positive number, got {scale}")
    if task_scale is not None and not (math.isfinite(task_scale) and 0 < task_scale <= 1):
        raise PlanValueError(f"task_scale must be in (0, 1], got {task_scale}")
    if not (math.isfinite(warmup_mb) and warmup_mb >= 0):
        raise PlanValueError(f"warmup_mb must be >= 0, got {warmup_mb}")


def _whole(doc: Mapping[str, Any], key: str, default: int | None = None) -> int:
    """A plan's count or size: a whole number (2.7 maps had silently become 2)."""
    value = doc.get(key, default) if default is not None else doc[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise PlatformModelError(f"{key} must be a whole number, got {value!r}")
    return int(value)


@dataclass(frozen=True, slots=True)
class BenchPlan:
    """A set of microbenchmarks and the Hadoop settings they all run with.

    ``jfr`` and ``warmup_mb`` say how the local engine runs each benchmark
    (:class:`~platform_model.engine.job.EngineJob`): with a JFR recording, and
    after a throwaway warm-up job of that many MiB in the same JVM (0: none).
    ``task_scale`` records how :func:`make_plan` split ``scale`` (None: not split).
    """

    benchmarks: tuple[Benchmark, ...]
    scale: float
    io_sort_mb: int
    sort_factor: int
    reduce_memory_mb: int
    hadoop_conf: Mapping[str, str] = field(default_factory=dict)
    map_parallelism: int = 1
    reduce_parallelism: int = 1
    jfr: bool = False
    warmup_mb: float = 0.0
    task_scale: float | None = None
    version: int = PLAN_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "hadoop_conf", MappingProxyType(dict(self.hadoop_conf)))
        if not self.benchmarks:  # ('0/0 benchmarks finished; ingested into' a store it never made)
            raise PlatformModelError("the plan holds no benchmarks (write one with `phaseline bench plan`)")
        names = [b.name for b in self.benchmarks]
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise PlanValueError(f"benchmark names must be unique: {', '.join(twice)} given twice")
        check_scales(self.scale, self.task_scale, self.warmup_mb)
        for what, value, least in (
            ("io_sort_mb", self.io_sort_mb, 1), ("sort_factor", self.sort_factor, 2),
            ("reduce_memory_mb", self.reduce_memory_mb, 1), ("map_parallelism", self.map_parallelism, 1),
            ("reduce_parallelism", self.reduce_parallelism, 1),
        ):  # fmt: skip
            if value < least:
                raise PlanValueError(f"{what} must be at least {least}, got {value}")
        if config_thresholds(self.settings()) is None:
            raise PlatformModelError(
                "hadoop_conf: a shuffle setting (mapreduce.reduce.shuffle.*.percent, mapreduce.task.io.sort.factor, "
                f"the reduce memory) is not one number: {dict(self.hadoop_conf)}"
            )

    def settings(self) -> dict[str, str]:
        """The Hadoop configuration of every benchmark (what the model will hold for)."""
        return {
            "mapreduce.task.io.sort.mb": str(self.io_sort_mb),
            "mapreduce.task.io.sort.factor": str(self.sort_factor),
            "mapreduce.reduce.memory.totalbytes": str(self.reduce_memory_mb * _MIB),
            **dict(self.hadoop_conf),
        }

    def thresholds(self) -> ShuffleThresholds:
        """The shuffle thresholds the plan's configuration implies (section 2)."""
        t = config_thresholds(self.settings())
        if t is None:  # pragma: no cover - __post_init__ refuses such settings
            raise PlatformModelError("the plan's shuffle settings are not numbers")
        return t

    def shuffle_break_bytes(self) -> float:
        """The shuffle break the configuration implies for the shuffle range's map outputs.

        Map outputs past the single-shuffle limit each land on disk, so the
        break falls at ``sort_factor`` of them (:meth:`ShuffleThresholds.break_for_map_output`);
        a plan without a shuffle range gets the configuration's own break.
        """
        t = self.thresholds()
        shuffles = [b for b in self.benchmarks if b.kind is BenchKind.SHUFFLE]
        if not shuffles:
            return t.break_bytes
        b = shuffles[0]  # make_plan gives the range one M_inp, M_sel and N_red
        return t.break_for_map_output(b.input_mb_per_map * _MIB * b.selectivity / b.reduces)

    def shuffle_range_bytes(self) -> tuple[float, float]:
        """Smallest and largest intermediate data per reduce task of the shuffle range."""
        values = [b.shuffle_bytes_per_reduce for b in self.benchmarks if b.kind is BenchKind.SHUFFLE]
        return (min(values), max(values)) if values else (0.0, 0.0)

    def to_json(self) -> dict[str, Any]:
        """The plan as JSON (with the computed thresholds, for the reader)."""
        t = self.thresholds()
        lo, hi = self.shuffle_range_bytes()
        return {
            "format": PLAN_FORMAT,
            "version": self.version,
            "paper": "Zhang, Cherkasova, Loo (ICPE 2013), section 3",
            "scale": self.scale,
            "io_sort_mb": self.io_sort_mb,
            "sort_factor": self.sort_factor,
            "reduce_memory_mb": self.reduce_memory_mb,
            "map_parallelism": self.map_parallelism,
            "reduce_parallelism": self.reduce_parallelism,
            "jfr": self.jfr,
            "warmup_mb": self.warmup_mb,
            "task_scale": self.task_scale,
            "hadoop_conf": dict(self.hadoop_conf),
            "thresholds": asdict(t),
            "shuffle_range_bytes": [lo, hi],
            "benchmarks": [
                {
                    "name": b.name,
                    "kind": b.kind.value,
                    "input_mb_per_map": b.input_mb_per_map,
                    "selectivity": b.selectivity,
                    "maps": b.maps,
                    "reduces": b.reduces,
                    "seed": b.seed,
                    "shuffle_bytes_per_reduce": b.shuffle_bytes_per_reduce,
                }
                for b in self.benchmarks
            ],
        }

    def save(self, path: str | Path) -> Path:
        """Write the plan as JSON."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> BenchPlan:
        """Read and validate a plan written by :meth:`save`."""
        path = Path(path)
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise PlatformModelError(f"{path}: cannot read a benchmark plan: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("format") != PLAN_FORMAT:
            raise PlatformModelError(f"{path}: not a {PLAN_FORMAT} file (write one with `phaseline bench plan`)")
        if doc.get("version") != PLAN_VERSION:
            raise PlatformModelError(f"{path}: plan version {doc.get('version')!r} is not supported")
        try:
            conf = doc.get("hadoop_conf", {})
            if not isinstance(conf, dict):
                raise PlatformModelError(f"hadoop_conf must be an object of settings, got {conf!r}")
            benches = tuple(
                Benchmark(str(b["name"]), BenchKind(b["kind"]), float(b["input_mb_per_map"]),
                          float(b["selectivity"]), _whole(b, "maps"), _whole(b, "reduces"), _whole(b, "seed"))
                for b in doc["benchmarks"]
            )
            plan = cls(
                benchmarks=benches,
                scale=float(doc["scale"]),
                io_sort_mb=_whole(doc, "io_sort_mb"),
                sort_factor=_whole(doc, "sort_factor"),
                reduce_memory_mb=_whole(doc, "reduce_memory_mb"),
                hadoop_conf={str(k): str(v) for k, v in conf.items()},
                map_parallelism=_whole(doc, "map_parallelism", 1),
                reduce_parallelism=_whole(doc, "reduce_parallelism", 1),
                jfr=bool(doc.get("jfr", False)),
                warmup_mb=float(doc.get("warmup_mb", 0.0)),
                task_scale=None if doc.get("task_scale") is None else float(doc["task_scale"]),
            )
        except PlatformModelError as exc:
            raise PlatformModelError(f"{path}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise PlatformModelError(f"{path}: invalid benchmark plan: {exc!r}") from exc
        return plan
