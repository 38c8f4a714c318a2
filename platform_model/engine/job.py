"""What an engine run runs (:class:`EngineJob`: phaseline's microbenchmark or a user's job) and the
Hadoop settings the engine derives from it (:func:`derived_settings`, :func:`effective`), the same
for LocalJobRunner (:mod:`platform_model.engine.runner`) and the mini YARN cluster
(:mod:`platform_model.engine.yarn`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from phaseline.errors import EngineError

BENCH_CLASS = "phaseline.engine.PhaselineBench"
BENCH_APP = "phaseline-bench"
RECORD_BYTES = 100
#: Map tasks (input files) of the warm-up job, and of the application's warm-up run.  Code that a
#: task runs once (setup, commit, counters) reaches the JIT's thresholds only after some tasks; the
#: JVM compiles in the task's thread (MEASURING_JVM_FLAGS), so with 4 the measured job's first maps
#: paid those compiles: sort at 16 MiB (8 maps), 3 runs each, 2026-11-27: maps 2-4 took 103-176 ms
#: against 71-89 ms (a 64 ms commit in map 4), job 1.29-1.38 s; with 16, 55-65 ms but for one
#: 141 ms map, job 0.92-1.04 s; with 32 about the same (0.85-1.04 s).  Each run takes ~1.5 s longer.
WARMUP_FILES = 16
#: The local file system's block size (Hadoop's ``fs.local.block.size`` default), which caps a split
#: (``FileInputFormat.computeSplitSize``: max(min size, min(max size, block size))).
LOCAL_BLOCK_BYTES = 32 * 1024 * 1024
#: ``FileInputFormat.SPLIT_SLOP``: a file's last split may be this many split sizes long.
SPLIT_SLOP = 1.1
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
        Number of map tasks N_map: the input is written as this many files, one split each
        (or, with ``input_files``, as that many files cut into ``maps`` splits in all).
    reduces
        Number of reduce tasks N_red (0: map-only job).
    map_parallelism, reduce_parallelism
        Tasks LocalJobRunner runs at once (``mapreduce.local.{map,reduce}.tasks.maximum``).
    io_sort_mb, sort_factor, reduce_memory_mb
        ``mapreduce.task.io.sort.mb``, ``mapreduce.task.io.sort.factor``, and the reduce
        side's memory (``mapreduce.reduce.memory.totalbytes``, which LocalJobRunner's
        MergeManagerImpl multiplies by ``mapreduce.reduce.shuffle.input.buffer.percent``).
        ``None`` keeps Hadoop's default.
    input_files
        Files the generated input is written as, when fewer than ``maps``: each is cut into
        about ``maps / input_files`` splits by the split size (``mapreduce.input.fileinputformat.split.maxsize``;
        the splits ``FileInputFormat`` cuts are the maps, :func:`split_count`),
        as ``FileInputFormat`` cuts a large file on a cluster, so that a ``-D`` of the split size
        changes the number of maps (:func:`effective`).  ``None``: one file per map, one split each.
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
        :data:`WARMUP_FILES` maps, the job's reduces up to two (its kind of map output: none, one partition or
        hashed partitions), the job's settings); 0: no warm-up.
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
    input_files: int | None = None
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
        if self.input_files is not None:
            if self.input_path is not None:
                raise EngineError("input_files is for generated input; input_path is a user's own")
            if not 1 <= self.input_files <= self.maps:
                raise EngineError(f"input_files must be 1 to maps (each file cut into one split or more), "
                                  f"got input_files={self.input_files} maps={self.maps}")  # fmt: skip
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
    def files(self) -> int:
        """Files the generated input is written as."""
        return self.maps if self.input_files is None else self.input_files

    @property
    def input_records(self) -> int:
        """Records generated: ``input_mb`` MiB of 100-byte records, at least one per map."""
        return max(self.maps, round(self.input_mb * 1024 * 1024 / RECORD_BYTES))


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
    if job.input_path is None and job.input_files is None:
        # One split per input file: the split size is at least the largest file.
        per_file = math.ceil(job.input_records / job.maps) * RECORD_BYTES
        settings["mapreduce.input.fileinputformat.split.minsize"] = str(per_file)
    elif job.input_path is None:
        # Each file cut into maps / input_files splits: the split size is the max size, in whole records
        # (FixedLengthInputFormat's reader starts a split at the next record boundary anyway), raised by
        # the min size too only where it is larger than a block (the split size is max(min, min(max, block))).
        per_file = math.ceil(job.input_records / job.files)
        per_split = math.ceil(per_file / math.ceil(job.maps / job.files)) * RECORD_BYTES
        settings["mapreduce.input.fileinputformat.split.maxsize"] = str(per_split)
        if per_split > LOCAL_BLOCK_BYTES:
            settings["mapreduce.input.fileinputformat.split.minsize"] = str(per_split)
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


def _setting(settings: Mapping[str, str], keys: tuple[str, ...], parse: Callable[[str], Any]) -> Any:
    """The value of the last of ``keys`` in ``settings`` (``None`` where none is set)."""
    given = [value for key, value in settings.items() if key in keys]
    if not given:
        return None
    try:
        return parse(given[-1].strip())
    except ValueError:
        raise EngineError(f"setting {keys[0]}={given[-1]!r} is not a number") from None


def effective(job: EngineJob, settings: Mapping[str, str]) -> EngineJob:
    """``job`` as the merged ``settings`` run it: a ``-D`` that shadows an option (under Hadoop's new
    or old key name; the later in ``mapred-site.xml`` wins, as Hadoop reads it) is the option's
    value.  The heap is sized and ``run.json`` records the parameters from it: a ``-D
    mapreduce.task.io.sort.mb=600`` had run out of a heap sized for the option's default, and
    ``-D mapred.reduce.tasks=3`` ran 3 reduces that ``run.json`` (and the store) called 1.  With
    ``input_files`` the number of maps is the splits the settings' split size cuts the files into."""
    changes: dict[str, Any] = {}
    for name, keys, parse in _SHADOWED:
        value = _setting(settings, keys, parse)
        if value is not None and value != getattr(job, name):
            changes[name] = value
    if job.input_files is not None and job.input_path is None:
        maps = split_count(job, settings)
        if maps != job.maps:
            changes["maps"] = maps  # the files stay as generated: the splits, and so the maps, change
    return dataclasses.replace(job, **changes) if changes else job


def split_count(job: EngineJob, settings: Mapping[str, str]) -> int:
    """Splits ``FileInputFormat.getSplits`` cuts ``job``'s generated files into under ``settings``: the
    split size max(min size, min(max size, block size)); a file's splits while more than
    :data:`SPLIT_SLOP` split sizes remain, then one for the rest."""
    low = _setting(settings, _MIN_SPLIT_KEYS, int) or 1
    high = _setting(settings, _MAX_SPLIT_KEYS, int) or 2**63 - 1
    block = _setting(settings, ("fs.local.block.size",), int) or LOCAL_BLOCK_BYTES
    split = max(1, low, min(high, block))
    per_file, extra = divmod(job.input_records, job.files)
    count = 0
    for i in range(job.files):
        left = (per_file + (1 if i < extra else 0)) * RECORD_BYTES  # TeraRecordGen's spread of the records
        while left / split > SPLIT_SLOP:
            count += 1
            left -= split
        count += 1 if left > 0 else 0
    return count


_MIN_SPLIT_KEYS = ("mapreduce.input.fileinputformat.split.minsize", "mapred.min.split.size")
_MAX_SPLIT_KEYS = ("mapreduce.input.fileinputformat.split.maxsize", "mapred.max.split.size")


def driver_args(job: EngineJob, input_dir: Path, output_dir: Path) -> list[str]:
    if not job.args:
        return [str(input_dir), str(output_dir)]
    return [a.replace("{input}", str(input_dir)).replace("{output}", str(output_dir)) for a in job.args]
