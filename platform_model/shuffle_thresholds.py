"""The shuffle break a Hadoop configuration implies (Zhang et al. 2013, section 2):
:func:`config_thresholds` from Hadoop 3's ``MergeManagerImpl`` rules (shuffle memory = reduce heap
x ``mapreduce.reduce.shuffle.input.buffer.percent``; an in-memory merge starts at
``mapreduce.reduce.shuffle.merge.percent`` of it and writes one on-disk file; a single map output
larger than ``mapreduce.reduce.shuffle.memory.limit.percent`` of it goes straight to disk; the final
merge makes one pass per ``mapreduce.task.io.sort.factor`` on-disk files).  The two-segment fit
that finds the break in measurements is :mod:`platform_model.segments`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ShuffleThresholds:
    """Reduce-side shuffle memory thresholds derived from a Hadoop configuration.

    Attributes
    ----------
    heap_bytes
        The reduce task's memory the shuffle takes its share of.
    shuffle_memory_bytes
        heap x ``shuffle.input.buffer.percent`` (``MergeManagerImpl.memoryLimit``).
    single_output_limit_bytes
        A single map output larger than this is shuffled straight to disk
        (``memory.limit.percent`` of the shuffle memory).
    merge_file_bytes
        An in-memory merge starts at ``merge.percent`` of the shuffle memory and
        writes one on-disk file of about this size (the paper's ~320 MB).
    sort_factor
        Files merged per pass (``io.sort.factor``).
    break_bytes
        Shuffle data per reduce task above which the final merge needs an extra
        pass: ``sort_factor x merge_file_bytes`` (the paper's 3.2 GB).
    """

    heap_bytes: float
    shuffle_memory_bytes: float
    single_output_limit_bytes: float
    merge_file_bytes: float
    sort_factor: int
    break_bytes: float

    def break_for_map_output(self, map_output_per_reduce_bytes: float) -> float:
        """The break when each map sends ``map_output_per_reduce_bytes`` to a reduce task.

        Map outputs above :attr:`single_output_limit_bytes` each land on disk as
        their own file, so the extra merge pass starts after ``sort_factor`` of them.
        """
        if map_output_per_reduce_bytes > self.single_output_limit_bytes:
            return self.sort_factor * map_output_per_reduce_bytes
        return self.break_bytes


_MEM_RE = re.compile(r"-Xmx(\d+)([kKmMgG]?)")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _first(conf: Mapping[str, str], *keys: str) -> str | None:
    for key in keys:
        value = conf.get(key)
        if value is not None and str(value).strip() != "":
            return str(value).strip()
    return None


def reduce_heap_bytes(conf: Mapping[str, str]) -> float | None:
    """The reduce task's memory as ``MergeManagerImpl`` sees it, or None if the conf does not say.

    ``mapreduce.reduce.memory.totalbytes`` (what the engine sets) wins; then the
    ``-Xmx`` of ``mapreduce.reduce.java.opts`` / ``mapred.reduce.child.java.opts``
    / ``mapred.child.java.opts`` (Hadoop 0.20, the paper's setting).
    """
    total = _first(conf, "mapreduce.reduce.memory.totalbytes")
    if total is not None:
        return float(total)
    opts = _first(conf, "mapreduce.reduce.java.opts", "mapred.reduce.child.java.opts", "mapred.child.java.opts")
    if opts is not None:
        found = _MEM_RE.findall(opts)
        if "," in opts and len({int(num) * _UNITS[unit.lower()] for num, unit in found}) > 1:
            return None  # runs that differed in it: their options comma separated (config_thresholds)
        if found:
            num, unit = found[-1]  # (one option string with several: the JVM takes the last)
            return float(int(num) * _UNITS[unit.lower()])
    return None


def config_thresholds(conf: Mapping[str, str], *, heap_bytes: float | None = None) -> ShuffleThresholds | None:
    """Shuffle thresholds from a job configuration (Zhang et al. 2013, section 2).

    Defaults are Hadoop's ``mapred-default.xml`` (0.70, 0.66, 0.25, 10); both the
    Hadoop 2+/3 key names and the 0.20 names are read.  Returns None when the
    reduce heap is unknown and not given, or when a setting is not one number
    (a platform profile's runs that differed in it hold its values comma
    separated: their break is not one size).

    >>> t = config_thresholds({"mapred.child.java.opts": "-Xmx700m"})
    >>> round(t.break_bytes / 2**30, 2)  # the paper's 3.2 GB
    3.16
    >>> config_thresholds({"mapred.child.java.opts": "-Xmx700m", "io.sort.factor": "10,2"}) is None
    True
    """
    try:
        heap = heap_bytes if heap_bytes is not None else reduce_heap_bytes(conf)
        if heap is None:
            return None
        inbuf = float(_first(conf, "mapreduce.reduce.shuffle.input.buffer.percent",
                             "mapred.job.shuffle.input.buffer.percent") or 0.70)
        merge = float(_first(conf, "mapreduce.reduce.shuffle.merge.percent",
                             "mapred.job.shuffle.merge.percent") or 0.66)
        single = float(_first(conf, "mapreduce.reduce.shuffle.memory.limit.percent") or 0.25)
        factor = int(_first(conf, "mapreduce.task.io.sort.factor", "io.sort.factor") or 10)
    except ValueError:
        return None
    memory = heap * inbuf
    merge_file = memory * merge
    return ShuffleThresholds(
        heap_bytes=heap,
        shuffle_memory_bytes=memory,
        single_output_limit_bytes=memory * single,
        merge_file_bytes=merge_file,
        sort_factor=factor,
        break_bytes=factor * merge_file,
    )
