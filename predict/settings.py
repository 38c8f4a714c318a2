"""Job settings the models read, and how Hadoop configuration keys map onto them.

Defaults are Hadoop's (Herodotou 2011, Table 5).  Both the 0.20 names
(``io.sort.mb``) and the 2.x+ names (``mapreduce.task.io.sort.mb``) are
understood, so a profile's recorded configuration and a user's ``--set``
edits land on the same fields.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from phaseline.errors import DataQualityWarning, PredictionError
from predict.units import SizeError, parse_size
from profiles.profile import JobProfile

__all__ = ["SETTING_KEYS", "Compression", "JobSettings", "compression", "setting_field"]

#: Map-output compression ratio assumed when the profile did not measure one (Snappy-like on text).
DEFAULT_INTERM_COMPRESS_RATIO = 0.5
#: ms per byte to compress / uncompress map output when unmeasured (Snappy-like: ~250 MB/s and ~500 MB/s).
DEFAULT_INTERM_COMPRESS_MS_PER_BYTE = 1 / 250e3
DEFAULT_INTERM_UNCOMPRESS_MS_PER_BYTE = 1 / 500e3


@dataclass(frozen=True, slots=True)
class JobSettings:
    """Job-level settings (Herodotou 2011, Table 5), with Hadoop's defaults.

    ``reduce_task_heap_mb`` is Herodotou's pTaskMem for reduce tasks: the
    memory the reduce's merge manager divides up, which is
    ``mapreduce.reduce.memory.totalbytes`` where set (LocalJobRunner and the
    local engine set it) and else the ``-Xmx`` of the reduce JVM, the
    precedence :func:`platform_model.segments.reduce_heap_bytes` gives the
    platform model's shuffle thresholds.  ``split_bytes`` is the split size
    (block size), ``None`` to derive it from the profile.

    ``sort_record_percent`` is Hadoop 0.20/1.x's ``io.sort.record.percent``
    (Herodotou's pSortRecPerc, eqs. 12-13: 0.05 there by default), set from a
    configuration that has the key.  ``None`` is Hadoop 2 and later, which
    dropped the key (MAPREDUCE-64): serialized records and their 16 accounting
    bytes share the one ``io.sort.mb`` buffer.

    The ``ubertask_*`` fields, the tasks' and the ApplicationMaster's memory and vcores are what
    Hadoop's uber decision reads (:func:`predict.uber.decide`; ``ubertask_max_bytes`` ``None``: the
    block size); ``-1`` MB is Hadoop's "not set" (the heap decides).
    """

    reduces: int
    io_sort_mb: float = 100.0
    sort_spill_percent: float = 0.8
    sort_record_percent: float | None = None
    sort_factor: int = 10
    min_spills_for_combine: int = 3
    compress_map_output: bool = False
    compress_output: bool = False
    slowstart: float = 0.05
    reduce_rampup_limit: float = 0.5
    shuffle_input_buffer_percent: float = 0.70
    shuffle_merge_percent: float = 0.66
    inmem_merge_threshold: int = 1000
    reduce_input_buffer_percent: float = 0.0
    reduce_task_heap_mb: float = 200.0
    split_bytes: float | None = None
    interm_compress_ratio: float | None = None
    ubertask_enable: bool = False
    ubertask_max_maps: int = 9
    ubertask_max_reduces: int = 1
    ubertask_max_bytes: float | None = None
    map_memory_mb: float = -1.0
    reduce_memory_mb: float = -1.0
    am_memory_mb: float = 1536.0
    map_vcores: int = 1
    reduce_vcores: int = 1
    am_vcores: int = 1

    def __post_init__(self) -> None:
        if self.reduces < 0:
            raise PredictionError(f"reduces must be >= 0, got {self.reduces}")
        if self.sort_factor < 2:
            raise PredictionError(f"sort factor must be >= 2, got {self.sort_factor}")
        if not (0 < self.io_sort_mb < math.inf and 0 < self.reduce_task_heap_mb < math.inf):  # (nan too)
            raise PredictionError(
                f"io.sort.mb and the reduce heap must be finite and > 0, got {self.io_sort_mb} and "
                f"{self.reduce_task_heap_mb} MB"
            )
        for name in (
            "sort_spill_percent",
            "slowstart",
            "reduce_rampup_limit",
            "shuffle_input_buffer_percent",
            "shuffle_merge_percent",
            "reduce_input_buffer_percent",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise PredictionError(f"{name} must be within [0, 1], got {value}")
        if self.sort_spill_percent == 0:
            raise PredictionError("io.sort.spill.percent must be > 0")
        if self.sort_record_percent is not None and not 0.0 < self.sort_record_percent < 1.0:
            raise PredictionError(f"io.sort.record.percent must be within (0, 1), got {self.sort_record_percent}")
        if self.inmem_merge_threshold < 1:
            raise PredictionError("the in-memory merge threshold must be >= 1")
        for name, what in (("split_bytes", "the split (block) size"), ("interm_compress_ratio", "the map output's "
                           "compression ratio"), ("ubertask_max_bytes", "the uber input limit")):  # fmt: skip
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise PredictionError(f"{what} ({name}) must be a finite number > 0, got {value}")

    @classmethod
    def from_config(cls, config: Mapping[str, str], **overrides: Any) -> JobSettings:
        """Settings from a Hadoop configuration (e.g. a profile's), then ``overrides`` by field name."""
        values: dict[str, Any] = {"reduces": 1}
        for key, raw in config.items():
            name = SETTING_KEYS.get(key)
            if name == "reduce_task_heap_mb" and (
                (key in _JVM_OPTS and _XMX.search(str(raw)) is None) or not str(raw).strip()
            ):
                continue  # JVM options without a heap size (or nothing at all) say nothing about it
            if name is not None:
                value = _parse_value(name, raw, key)
                if name == "split_bytes" and value <= 0:  # Hadoop itself would refuse it: no split size
                    warnings.warn(
                        DataQualityWarning(f"the configuration's {key} = {raw!r} is no split size; it is ignored"),
                        stacklevel=2,
                    )
                    continue
                values[name] = value
        if config.get(_TOTAL_BYTES, "").strip():  # what the merge manager uses wins over any -Xmx
            values["reduce_task_heap_mb"] = _parse_value("reduce_task_heap_mb", config[_TOTAL_BYTES], _TOTAL_BYTES)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_setting(self, key: str, raw: str) -> JobSettings:
        """A copy with one setting changed; ``key`` is a Hadoop key or a field name (``io.sort.mb``, ``reduces``)."""
        name = setting_field(key)
        if name is None:
            raise PredictionError(
                f"unknown setting {key!r}; known: {', '.join(sorted(k for k in SETTING_KEYS if '.' in k))}"
            )
        return dataclasses.replace(self, **{name: _parse_value(name, raw, key)})


_FIELD_TYPES = {f.name: f.type for f in dataclasses.fields(JobSettings)}

#: Hadoop key (0.20 and 2.x+ names) or field name -> :class:`JobSettings` field.
SETTING_KEYS: Mapping[str, str] = types.MappingProxyType(
    {
        **{name: name for name in _FIELD_TYPES},
        "mapred.reduce.tasks": "reduces",
        "mapreduce.job.reduces": "reduces",
        "io.sort.mb": "io_sort_mb",
        "mapreduce.task.io.sort.mb": "io_sort_mb",
        "io.sort.spill.percent": "sort_spill_percent",
        "mapreduce.map.sort.spill.percent": "sort_spill_percent",
        "io.sort.record.percent": "sort_record_percent",
        "io.sort.factor": "sort_factor",
        "mapreduce.task.io.sort.factor": "sort_factor",
        "min.num.spills.for.combine": "min_spills_for_combine",
        "mapreduce.map.combine.minspills": "min_spills_for_combine",
        "mapred.compress.map.output": "compress_map_output",
        "mapreduce.map.output.compress": "compress_map_output",
        "mapred.output.compress": "compress_output",
        "mapreduce.output.fileoutputformat.compress": "compress_output",
        "mapred.reduce.slowstart.completed.maps": "slowstart",
        "mapreduce.job.reduce.slowstart.completedmaps": "slowstart",
        "yarn.app.mapreduce.am.job.reduce.rampup.limit": "reduce_rampup_limit",
        "mapred.job.shuffle.input.buffer.percent": "shuffle_input_buffer_percent",
        "mapreduce.reduce.shuffle.input.buffer.percent": "shuffle_input_buffer_percent",
        "mapred.job.shuffle.merge.percent": "shuffle_merge_percent",
        "mapreduce.reduce.shuffle.merge.percent": "shuffle_merge_percent",
        "mapred.inmem.merge.threshold": "inmem_merge_threshold",
        "mapreduce.reduce.merge.inmem.threshold": "inmem_merge_threshold",
        "mapred.job.reduce.input.buffer.percent": "reduce_input_buffer_percent",
        "mapreduce.reduce.input.buffer.percent": "reduce_input_buffer_percent",
        "mapred.child.java.opts": "reduce_task_heap_mb",
        "mapred.reduce.child.java.opts": "reduce_task_heap_mb",
        "mapreduce.reduce.java.opts": "reduce_task_heap_mb",
        "mapreduce.reduce.memory.totalbytes": "reduce_task_heap_mb",
        "dfs.block.size": "split_bytes",
        "dfs.blocksize": "split_bytes",
        "mapred.max.split.size": "split_bytes",
        "mapreduce.input.fileinputformat.split.maxsize": "split_bytes",
        "interm_compress_ratio": "interm_compress_ratio",
        "mapreduce.job.ubertask.enable": "ubertask_enable",
        "mapreduce.job.ubertask.maxmaps": "ubertask_max_maps",
        "mapreduce.job.ubertask.maxreduces": "ubertask_max_reduces",
        "mapreduce.job.ubertask.maxbytes": "ubertask_max_bytes",
        "mapreduce.map.memory.mb": "map_memory_mb",
        "mapreduce.reduce.memory.mb": "reduce_memory_mb",
        "yarn.app.mapreduce.am.resource.mb": "am_memory_mb",
        "mapreduce.map.cpu.vcores": "map_vcores",
        "mapreduce.reduce.cpu.vcores": "reduce_vcores",
        "yarn.app.mapreduce.am.resource.cpu-vcores": "am_vcores",
    }
)


def setting_field(key: str) -> str | None:
    """The :class:`JobSettings` field a Hadoop key or field name sets (``-`` for ``_`` allowed), or ``None``.

    >>> setting_field("mapreduce.task.io.sort.mb"), setting_field("sort-spill-percent"), setting_field("x")
    ('io_sort_mb', 'sort_spill_percent', None)
    """
    return SETTING_KEYS.get(key) or SETTING_KEYS.get(key.replace("-", "_"))


_XMX = re.compile(r"-Xmx(\d+(?:\.\d+)?[kmgtKMGT]?)")
#: The reduce's memory in bytes as ``MergeManagerImpl`` reads it first (Runtime.maxMemory() otherwise).
_TOTAL_BYTES = "mapreduce.reduce.memory.totalbytes"
_JVM_OPTS = frozenset(("mapred.child.java.opts", "mapred.reduce.child.java.opts", "mapreduce.reduce.java.opts"))


def _parse_value(name: str, raw: object, key: str) -> Any:
    kind = str(_FIELD_TYPES[name])
    text = str(raw).strip()
    try:
        size: float | None = None  # the sizes: bytes, or MB of heap (inf MB had overflowed the shuffle)
        if key == _TOTAL_BYTES:
            size = float(parse_size(text)) / 2**20
        elif name in ("split_bytes", "ubertask_max_bytes"):
            size = float(parse_size(text))
        elif name == "reduce_task_heap_mb":
            match = _XMX.search(text)
            size = float(text) if match is None else parse_size(match[1]) / 2**20  # a plain number: MB
        if size is not None:
            if not math.isfinite(size):
                raise ValueError(text)
            return size
        if kind == "bool":
            if text.lower() in ("true", "1", "yes", "on"):
                return True
            if text.lower() in ("false", "0", "no", "off"):
                return False
            raise ValueError(text)
        number = float(text)
        if not math.isfinite(number) or (kind == "int" and not number.is_integer()):  # 1.5 reduces: no
            raise ValueError(text)
        return int(number) if kind == "int" else number
    except (ValueError, SizeError) as exc:
        raise PredictionError(f"setting {key!r}: cannot read value {text!r} as a finite {kind}") from exc


@dataclass(frozen=True, slots=True)
class Compression:
    """Map-output compression statistics (Herodotou's dsIntermCompressRatio, csIntermCom/UncomCPUCost)."""

    ratio: float
    compress_ms_per_byte: float
    uncompress_ms_per_byte: float
    notes: tuple[str, ...]


def compression(profile: JobProfile, settings: JobSettings) -> Compression:
    """Compression statistics for ``settings``: measured ones from the profile, else named defaults.

    The profile's ratio counts only if the profiled run compressed its map
    output.  With compression off, Herodotou 2011 (section 2) sets the ratio
    to 1 and both costs to 0.
    """
    if not settings.compress_map_output:
        return Compression(1.0, 0.0, 0.0, ())
    notes: list[str] = []
    profiled = JobSettings.from_config(profile.source.config, reduces=profile.num_reduces)
    measured = profile.dataflow.interm_compress_ratio if profiled.compress_map_output else None
    ratio = settings.interm_compress_ratio if settings.interm_compress_ratio is not None else measured
    if ratio is None:
        ratio = DEFAULT_INTERM_COMPRESS_RATIO
        notes.append(f"map-output compression ratio {ratio} assumed (not measured in the profile)")
    comp = profile.costs.interm_compr_cpu
    uncomp = profile.costs.interm_uncompr_cpu
    if comp is None or uncomp is None:
        notes.append("map-output (un)compression CPU costs assumed Snappy-like (250 / 500 MB/s)")
    return Compression(
        ratio,
        comp if comp is not None else DEFAULT_INTERM_COMPRESS_MS_PER_BYTE,
        uncomp if uncomp is not None else DEFAULT_INTERM_UNCOMPRESS_MS_PER_BYTE,
        tuple(notes),
    )
