"""The statistics a job profile is made of: each a frozen record that checks its own values.

Task durations (:class:`DurationStats`), the input as the maps saw it (:class:`InputStats`,
Zhang et al. 2013, section 5), the job's counters (:class:`Counters`, named after Hadoop's by
:data:`COUNTER_FIELDS`), and Herodotou 2011's dataflow and cost statistics (Tables 3 and 4:
:class:`DataflowStatistics`, :class:`CostStatistics`).  :class:`~profiles.profile.JobProfile`
holds them.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass

from phaseline.errors import ProfileError

__all__ = [
    "COUNTER_FIELDS",
    "CostStatistics",
    "Counters",
    "DataflowStatistics",
    "DurationStats",
    "InputStats",
    "check_non_negative",
    "fail",
]

#: Hadoop counter name -> :class:`Counters` field (Hadoop 0.20 and 2.x+ names are the same).
COUNTER_FIELDS: Mapping[str, str] = types.MappingProxyType(
    {
        "MAP_INPUT_RECORDS": "map_input_records",
        "MAP_OUTPUT_RECORDS": "map_output_records",
        "MAP_OUTPUT_BYTES": "map_output_bytes",
        "MAP_OUTPUT_MATERIALIZED_BYTES": "map_output_materialized_bytes",
        "COMBINE_INPUT_RECORDS": "combine_input_records",
        "COMBINE_OUTPUT_RECORDS": "combine_output_records",
        "SPILLED_RECORDS": "spilled_records",
        "REDUCE_INPUT_GROUPS": "reduce_input_groups",
        "REDUCE_INPUT_RECORDS": "reduce_input_records",
        "REDUCE_SHUFFLE_BYTES": "reduce_shuffle_bytes",
        "REDUCE_OUTPUT_RECORDS": "reduce_output_records",
        "BYTES_READ": "map_input_bytes",  # FileInputFormatCounter (else 0.20's MAP_INPUT_BYTES)
        "BYTES_WRITTEN": "reduce_output_bytes",  # FileOutputFormatCounter
        "HDFS_BYTES_READ": "hdfs_bytes_read",
        "HDFS_BYTES_WRITTEN": "hdfs_bytes_written",
        "FILE_BYTES_READ": "local_bytes_read",
        "FILE_BYTES_WRITTEN": "local_bytes_written",
    }
)



def fail(where: str, what: str) -> typing.NoReturn:
    """Raise the :class:`~phaseline.errors.ProfileError` naming the field ``where``."""
    raise ProfileError(f"{where}: {what}")


def check_non_negative(obj: object, *names: str) -> None:
    """Each named field of ``obj`` is ``None`` or a finite number >= 0."""
    for name in names:
        value = getattr(obj, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            fail(name, f"must be a finite number >= 0, got {value!r}")



@dataclass(frozen=True, slots=True)
class DurationStats:
    """Average and maximum duration of one phase or stage over ``count`` task attempts."""

    avg_ms: float
    max_ms: float
    count: int

    def __post_init__(self) -> None:
        check_non_negative(self, "avg_ms", "max_ms", "count")
        if self.max_ms < self.avg_ms * (1 - 1e-9):
            fail("max_ms", f"maximum {self.max_ms} is below the average {self.avg_ms}")

    @property
    def cv(self) -> float:
        """The durations' coefficient of variation as the average and maximum tell it: the maximum of
        ``count`` normal draws lies about ``sqrt(2 ln count)`` standard deviations above their mean
        (the extreme-value rate), so ``sd = (max - avg) / sqrt(2 ln count)``, over ``avg``; 0 where
        fewer than two attempts (or an average of 0) tell nothing of the spread.

        >>> round(DurationStats(avg_ms=100.0, max_ms=130.0, count=20).cv, 3)
        0.123
        >>> DurationStats(avg_ms=100.0, max_ms=100.0, count=1).cv
        0.0
        """
        if self.count < 2 or self.avg_ms <= 0:
            return 0.0
        return (self.max_ms - self.avg_ms) / math.sqrt(2 * math.log(self.count)) / self.avg_ms


@dataclass(frozen=True, slots=True)
class InputStats:
    """The input dataset as the map tasks saw it (Zhang et al. 2013, section 5)."""

    splits: int
    avg_split_bytes: float
    max_split_bytes: float
    avg_split_records: float
    max_split_records: float

    def __post_init__(self) -> None:
        if self.splits < 1:
            fail("splits", f"must be >= 1, got {self.splits}")
        check_non_negative(
            self, "avg_split_bytes", "max_split_bytes", "avg_split_records", "max_split_records"
        )
        if self.max_split_bytes < self.avg_split_bytes * (1 - 1e-9):
            fail("max_split_bytes", "is below avg_split_bytes")
        if self.max_split_records < self.avg_split_records * (1 - 1e-9):
            fail("max_split_records", "is below avg_split_records")

    @property
    def total_bytes(self) -> float:
        return self.splits * self.avg_split_bytes

    @property
    def total_records(self) -> float:
        return self.splits * self.avg_split_records

    @property
    def record_width_bytes(self) -> float | None:
        """Average input record width (Herodotou's dsInputPairWidth), if records were counted."""
        return self.avg_split_bytes / self.avg_split_records if self.avg_split_records > 0 else None


@dataclass(frozen=True, slots=True)
class Counters:
    """Job-total counters of the run(s), named after :data:`COUNTER_FIELDS`; ``None`` = not reported."""

    map_input_records: int | None = None
    map_input_bytes: int | None = None
    map_output_records: int | None = None
    map_output_bytes: int | None = None
    map_output_materialized_bytes: int | None = None
    combine_input_records: int | None = None
    combine_output_records: int | None = None
    spilled_records: int | None = None
    reduce_input_groups: int | None = None
    reduce_input_records: int | None = None
    reduce_shuffle_bytes: int | None = None
    reduce_output_records: int | None = None
    reduce_output_bytes: int | None = None
    hdfs_bytes_read: int | None = None
    hdfs_bytes_written: int | None = None
    local_bytes_read: int | None = None
    local_bytes_written: int | None = None

    def __post_init__(self) -> None:
        check_non_negative(self, *(f.name for f in dataclasses.fields(self)))


@dataclass(frozen=True, slots=True)
class DataflowStatistics:
    """Herodotou 2011, Table 3 (ds* fields); ``None`` where the run cannot tell."""

    input_pair_width: float | None = None
    recs_per_red_group: float | None = None
    map_size_sel: float | None = None
    map_recs_sel: float | None = None
    reduce_size_sel: float | None = None
    reduce_recs_sel: float | None = None
    combine_size_sel: float | None = None
    combine_recs_sel: float | None = None
    input_compress_ratio: float | None = None
    interm_compress_ratio: float | None = None
    out_compress_ratio: float | None = None
    startup_mem: float | None = None
    setup_mem: float | None = None
    cleanup_mem: float | None = None
    mem_per_map_rec: float | None = None
    mem_per_red_rec: float | None = None

    def __post_init__(self) -> None:
        check_non_negative(self, *(f.name for f in dataclasses.fields(self)))
        for name in ("input_compress_ratio", "interm_compress_ratio", "out_compress_ratio"):
            if getattr(self, name) == 0:
                fail(name, "must be > 0 (compressed bytes over raw bytes)")


@dataclass(frozen=True, slots=True)
class CostStatistics:
    """Herodotou 2011, Table 4 (cs* fields), in ms per byte or per record; ``None`` where unknown."""

    hdfs_read: float | None = None  # per byte
    hdfs_write: float | None = None  # per byte
    local_io_read: float | None = None  # per byte
    local_io_write: float | None = None  # per byte
    network: float | None = None  # per byte
    map_cpu: float | None = None  # per record
    reduce_cpu: float | None = None  # per record
    combine_cpu: float | None = None  # per record
    partition_cpu: float | None = None  # per record
    serde_cpu: float | None = None  # per record
    sort_cpu: float | None = None  # per record (times log2 of records per partition)
    merge_cpu: float | None = None  # per record
    in_uncompr_cpu: float | None = None  # per byte
    interm_uncompr_cpu: float | None = None  # per byte
    interm_compr_cpu: float | None = None  # per byte
    out_compr_cpu: float | None = None  # per byte
    setup_cpu: float | None = None  # per task
    cleanup_cpu: float | None = None  # per task

    def __post_init__(self) -> None:
        check_non_negative(self, *(f.name for f in dataclasses.fields(self)))
