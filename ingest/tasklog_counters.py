"""The counters of a task log's ``Final Counters`` block: their printed names (as
``Counters.toString()`` prints them) -> Hadoop's internal group and counter names (:func:`counter_name`)."""

from __future__ import annotations

import re

from phaseline.hadoop_names import (
    FILE_INPUT_FORMAT_COUNTER_GROUP,
    FILE_OUTPUT_FORMAT_COUNTER_GROUP,
    FILE_SYSTEM_COUNTER_GROUP,
    JOB_COUNTER_GROUP,
    TASK_COUNTER_GROUP,
)

# Counter display names (as ``Counters.toString()`` prints them) -> internal names.
COUNTER_GROUPS: dict[str, str] = {
    "File System Counters": FILE_SYSTEM_COUNTER_GROUP,
    "Map-Reduce Framework": TASK_COUNTER_GROUP,
    "File Input Format Counters": FILE_INPUT_FORMAT_COUNTER_GROUP,
    "File Output Format Counters": FILE_OUTPUT_FORMAT_COUNTER_GROUP,
    "Job Counters": JOB_COUNTER_GROUP,
    "Shuffle Errors": "Shuffle Errors",
}

_TASK_COUNTERS = {
    "Map input records": "MAP_INPUT_RECORDS",
    "Map output records": "MAP_OUTPUT_RECORDS",
    "Map skipped records": "MAP_SKIPPED_RECORDS",
    "Map output bytes": "MAP_OUTPUT_BYTES",
    "Map output materialized bytes": "MAP_OUTPUT_MATERIALIZED_BYTES",
    "Input split bytes": "SPLIT_RAW_BYTES",
    "Combine input records": "COMBINE_INPUT_RECORDS",
    "Combine output records": "COMBINE_OUTPUT_RECORDS",
    "Reduce input groups": "REDUCE_INPUT_GROUPS",
    "Reduce shuffle bytes": "REDUCE_SHUFFLE_BYTES",
    "Reduce input records": "REDUCE_INPUT_RECORDS",
    "Reduce output records": "REDUCE_OUTPUT_RECORDS",
    "Reduce skipped groups": "REDUCE_SKIPPED_GROUPS",
    "Reduce skipped records": "REDUCE_SKIPPED_RECORDS",
    "Spilled Records": "SPILLED_RECORDS",
    "Shuffled Maps": "SHUFFLED_MAPS",
    "Failed Shuffles": "FAILED_SHUFFLE",
    "Merged Map outputs": "MERGED_MAP_OUTPUTS",
    "GC time elapsed (ms)": "GC_TIME_MILLIS",
    "CPU time spent (ms)": "CPU_MILLISECONDS",
    "Physical memory (bytes) snapshot": "PHYSICAL_MEMORY_BYTES",
    "Virtual memory (bytes) snapshot": "VIRTUAL_MEMORY_BYTES",
    "Total committed heap usage (bytes)": "COMMITTED_HEAP_BYTES",
    "Peak Map Physical memory (bytes)": "MAP_PHYSICAL_MEMORY_BYTES_MAX",
    "Peak Map Virtual memory (bytes)": "MAP_VIRTUAL_MEMORY_BYTES_MAX",
    "Peak Reduce Physical memory (bytes)": "REDUCE_PHYSICAL_MEMORY_BYTES_MAX",
    "Peak Reduce Virtual memory (bytes)": "REDUCE_VIRTUAL_MEMORY_BYTES_MAX",
}

_FS_OPS = {
    "Number of bytes read": "BYTES_READ",
    "Number of bytes written": "BYTES_WRITTEN",
    "Number of read operations": "READ_OPS",
    "Number of large read operations": "LARGE_READ_OPS",
    "Number of write operations": "WRITE_OPS",
    "Number of bytes read erasure-coded": "BYTES_READ_EC",
}

COUNTER_NAMES: dict[str, dict[str, str]] = {
    TASK_COUNTER_GROUP: _TASK_COUNTERS,
    FILE_INPUT_FORMAT_COUNTER_GROUP: {"Bytes Read": "BYTES_READ"},
    FILE_OUTPUT_FORMAT_COUNTER_GROUP: {"Bytes Written": "BYTES_WRITTEN"},
}

_FS_LINE = re.compile(r"^(?P<scheme>[A-Za-z0-9]+): (?P<op>.+)$")


def counter_name(group: str, display: str) -> tuple[str, str]:
    """Internal ``(group, counter)`` names for a counter printed as ``display`` in group ``group``.

    Unknown groups and counters (user counters) keep their printed names,
    stripped of the trailing blanks Hadoop prints after some of them.

    >>> counter_name("File System Counters", "HDFS: Number of bytes read")
    ('org.apache.hadoop.mapreduce.FileSystemCounter', 'HDFS_BYTES_READ')
    >>> counter_name("Map-Reduce Framework", "Shuffled Maps ")
    ('org.apache.hadoop.mapreduce.TaskCounter', 'SHUFFLED_MAPS')
    """
    group_key = group.strip()
    name = display.strip()
    internal_group = COUNTER_GROUPS.get(group_key, group_key)
    if internal_group == FILE_SYSTEM_COUNTER_GROUP:
        fs = _FS_LINE.match(name)
        if fs is not None and fs["op"] in _FS_OPS:
            return internal_group, f"{fs['scheme'].upper()}_{_FS_OPS[fs['op']]}"
        return internal_group, name
    return internal_group, COUNTER_NAMES.get(internal_group, {}).get(name, name)
