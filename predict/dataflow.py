"""Herodotou's dataflow equations: bytes and records through every phase of a map and a reduce task.

Herodotou, "Hadoop Performance Models", Duke CS-2011-05: map side eqs. 2-3,
6-18 and 21-33 (spills, merge passes), shuffle eqs. 37-61 (the two cases on
either side of 25 % of the shuffle buffer), reduce-side merge eqs. 65-80
(three steps) and reduce input/output eqs. 83-87.  Costs are applied in
:mod:`predict.herodotou`; this module only counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from predict.merge import final_merge_files, interm_merge_reads, merge_passes
from predict.settings import JobSettings

__all__ = ["DataStats", "MapDataflow", "ReduceDataflow", "map_dataflow", "reduce_dataflow"]

MB = 2**20
#: Bytes of accounting metadata per record in the map-side sort buffer (Herodotou 2011, eq. 13).
ACCOUNTING_BYTES_PER_RECORD = 16
#: A map segment larger than this share of the shuffle buffer goes straight to disk (eq. 42ff).
SEGMENT_TO_DISK_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class DataStats:
    """Dataflow statistics (Herodotou 2011, Table 3) resolved for one prediction (1 where not used)."""

    map_size_sel: float
    map_recs_sel: float
    combine_size_sel: float
    combine_recs_sel: float
    use_combine: bool
    input_compress_ratio: float
    interm_compress_ratio: float
    reduce_size_sel: float
    reduce_recs_sel: float
    out_compress_ratio: float
    #: A shuffled segment's bytes per byte it takes in the reduce's memory (eq. 38's divisor): the
    #: codec's ratio.  interm_compress_ratio is materialized / raw map output, which holds IFile's
    #: framing too (about 2 %), and the framing stays in memory: without compression this is 1.
    segment_compress_ratio: float = 1.0


@dataclass(frozen=True, slots=True)
class MapDataflow:
    """One map task's dataflow (Herodotou 2011, sections 3-5)."""

    in_bytes: float
    in_recs: float
    out_bytes: float
    out_recs: float
    spill_buffer_recs: float
    spill_buffer_bytes: float
    spills: int
    spill_file_recs: float
    spill_file_bytes: float
    merge_passes: int
    interm_merge_spills: float
    final_merge_spills: int
    combine_in_merge: bool
    recs_spilled: float
    spilled_bytes: float  # all spill files together (the last spill holds only the rest)
    spilled_recs: float
    interm_bytes: float  # final map output size (tIntermDataSize, eq. 32)
    interm_recs: float


def map_dataflow(split_bytes: float, split_recs: float, ds: DataStats, s: JobSettings) -> MapDataflow:
    """Dataflow of a map task over one split (eqs. 2-3, 6-18, 21-33).

    Records per spill: eqs. 12-14 where ``io.sort.record.percent`` splits the
    buffer (Hadoop 0.20/1.x); in Hadoop 2+ a record takes its serialized width
    plus 16 accounting bytes of the one buffer, the rule :func:`predict.tasks.single_spill`
    also applies.
    """
    in_bytes = split_bytes / ds.input_compress_ratio  # eq. 2
    in_recs = split_recs  # eq. 3 with the split's own record count
    out_bytes = in_bytes * ds.map_size_sel  # eq. 9
    out_recs = in_recs * ds.map_recs_sel  # eq. 10
    width = out_bytes / out_recs if out_recs > 0 else 0.0  # eq. 11
    buffer = s.io_sort_mb * MB * s.sort_spill_percent
    if s.sort_record_percent is not None:  # Hadoop 0.20/1.x: two parts of the buffer
        max_ser = math.floor(buffer * (1 - s.sort_record_percent) / width) if width > 0 else math.inf  # eq. 12
        max_acc = math.floor(buffer * s.sort_record_percent / ACCOUNTING_BYTES_PER_RECORD)  # eq. 13
    else:  # Hadoop 2+: records and their accounting share the buffer (MAPREDUCE-64)
        max_ser = max_acc = math.floor(buffer / (width + ACCOUNTING_BYTES_PER_RECORD))
    buf_recs = max(1.0, min(max_ser, max_acc, out_recs)) if out_recs > 0 else 0.0  # eq. 14
    buf_bytes = buf_recs * width  # eq. 15
    spills = math.ceil(out_recs / buf_recs) if buf_recs > 0 else 0  # eq. 16
    file_recs = buf_recs * ds.combine_recs_sel  # eq. 17
    file_bytes = buf_bytes * ds.combine_size_sel * ds.interm_compress_ratio  # eq. 18
    f = s.sort_factor
    interm = interm_merge_reads(spills, f)  # eq. 25
    final = final_merge_files(spills, f)  # eq. 27
    comb_merge = spills > 1 and ds.use_combine and final >= s.min_spills_for_combine  # eq. 28
    size_sel = ds.combine_size_sel if comb_merge else 1.0  # eq. 29
    recs_sel = ds.combine_recs_sel if comb_merge else 1.0  # eq. 30
    # Eqs. 31-33 count every spill as full; the last one holds only the rest of the output.
    total_bytes = out_bytes * ds.combine_size_sel * ds.interm_compress_ratio
    total_recs = out_recs * ds.combine_recs_sel
    return MapDataflow(
        in_bytes=in_bytes,
        in_recs=in_recs,
        out_bytes=out_bytes,
        out_recs=out_recs,
        spill_buffer_recs=buf_recs,
        spill_buffer_bytes=buf_bytes,
        spills=spills,
        spill_file_recs=file_recs,
        spill_file_bytes=file_bytes,
        merge_passes=merge_passes(spills, f),  # eq. 26
        interm_merge_spills=interm,
        final_merge_spills=final,
        combine_in_merge=comb_merge,
        recs_spilled=file_recs * interm + total_recs + total_recs * recs_sel,  # eq. 31
        spilled_bytes=total_bytes,
        spilled_recs=total_recs,
        interm_bytes=total_bytes * size_sel,  # eq. 32
        interm_recs=total_recs * recs_sel,  # eq. 33
    )


@dataclass(frozen=True, slots=True)
class ReduceDataflow:
    """One reduce task's dataflow (Herodotou 2011, sections 6-8)."""

    segment_bytes: float  # compressed map segment (eq. 37)
    segment_uncompr_bytes: float  # eq. 38
    segment_recs: float  # eq. 39
    shuffle_bytes: float  # eq. 40
    shuffle_recs: float  # eq. 41
    shuffle_buffer_bytes: float  # eq. 42
    in_memory: bool  # case 1 (segments into the shuffle buffer) vs case 2 (straight to disk)
    segs_per_shuffle_file: int  # eqs. 44-45 / 50
    shuffle_files: int  # eqs. 48 / 53
    shuffle_file_bytes: float
    shuffle_file_recs: float
    segs_in_mem: int  # eqs. 49 / 54
    disk_merges: int  # eq. 55
    unmerged_files: int  # eq. 59
    evicted_segs: int  # eq. 68
    segs_remain_mem: int  # eq. 69
    files_from_mem: int  # eq. 70
    files_from_mem_bytes: float
    files_from_mem_recs: float
    step1_bytes: float  # eq. 70
    step1_recs: float
    step2_files: int  # eq. 72
    step2_bytes: float  # eq. 74
    step2_recs: float  # eq. 75
    step3_files: int  # eq. 77
    step3_bytes: float  # eq. 79
    step3_recs: float  # eq. 80
    in_bytes: float  # reduce input, eq. 83
    in_recs: float  # eq. 84
    out_bytes: float  # eq. 85
    out_recs: float  # eq. 86
    from_disk_bytes: float  # eq. 87


class _ShuffleFiles(NamedTuple):
    """How a reduce's shuffled segments land: in a shuffle buffer of ``buffer`` bytes (eq. 42),
    ``in_memory`` and merged into files of ``per_file`` segments (case 1, eqs. 43-48; ``in_mem``
    left in memory, eq. 49), or each a file on disk (case 2, eqs. 50-54)."""

    buffer: float
    in_memory: bool
    per_file: int
    file_bytes: float
    file_recs: float
    files: int
    in_mem: int


def _shuffle_files(
    n_maps: int, seg_bytes: float, seg_uncompr: float, seg_recs: float, ds: DataStats, s: JobSettings
) -> _ShuffleFiles:
    """Where the shuffled segments go (eqs. 42-54)."""
    buffer = s.shuffle_input_buffer_percent * s.reduce_task_heap_mb * MB  # eq. 42
    if not seg_uncompr < SEGMENT_TO_DISK_SHARE * buffer:  # case 2, eqs. 50-54
        return _ShuffleFiles(buffer, False, 1, seg_bytes, seg_recs, n_maps, 0)
    threshold = s.shuffle_merge_percent * buffer  # eq. 43
    raw = threshold / seg_uncompr if seg_uncompr > 0 else math.inf  # eq. 44
    if raw >= s.inmem_merge_threshold:  # the cap below binds (a segment of ~0 bytes: raw is inf)
        per_file = s.inmem_merge_threshold
    else:
        per_file = math.ceil(raw) if math.ceil(raw) * seg_uncompr <= buffer else math.floor(raw)  # eq. 45
    per_file = max(1, min(per_file, s.inmem_merge_threshold))
    return _ShuffleFiles(
        buffer,
        True,
        per_file,
        per_file * seg_bytes * ds.combine_size_sel,  # eq. 46
        per_file * seg_recs * ds.combine_recs_sel,  # eq. 47
        n_maps // per_file,  # eq. 48
        n_maps % per_file,  # eq. 49
    )


def reduce_dataflow(
    m: MapDataflow, n_maps: int, n_reduces: int, ds: DataStats, s: JobSettings
) -> ReduceDataflow:
    """Dataflow of a reduce task, assuming map output spread evenly over reduces (eqs. 37-87)."""
    f = s.sort_factor
    seg_bytes = m.interm_bytes / n_reduces  # eq. 37
    seg_uncompr = seg_bytes / ds.segment_compress_ratio  # eq. 38 (the codec only: framing stays in memory)
    seg_recs = m.interm_recs / n_reduces  # eq. 39
    shuffle_bytes = n_maps * seg_bytes  # eq. 40
    shuffle_recs = n_maps * seg_recs  # eq. 41
    sf = _shuffle_files(n_maps, seg_bytes, seg_uncompr, seg_recs, ds, s)  # eqs. 42-54
    buffer, in_memory, per_file, file_bytes, file_recs, files, in_mem = sf
    merges = 0 if files < 2 * f - 1 else (files - 2 * f + 1) // f + 1  # eq. 55
    unmerged = files - f * merges  # eq. 59
    on_disk = merges + unmerged  # eq. 65
    disk_bytes = merges * f * file_bytes + unmerged * file_bytes  # eqs. 57, 60
    disk_recs = merges * f * file_recs + unmerged * file_recs  # eqs. 58, 61
    # Step 1 (eqs. 66-71): evict segments beyond the reduce input buffer.
    max_seg_buffer = s.reduce_input_buffer_percent * s.reduce_task_heap_mb * MB  # eq. 66
    current = in_mem * seg_uncompr  # eq. 67
    evicted = math.ceil((current - max_seg_buffer) / seg_uncompr) if current > max_seg_buffer else 0  # eq. 68
    evicted = min(evicted, in_mem)
    remain = in_mem - evicted  # eq. 69
    if on_disk < f:  # eq. 70 (no file at all when nothing is evicted)
        from_mem = 1 if evicted > 0 else 0
        from_mem_bytes, from_mem_recs = evicted * seg_bytes, evicted * seg_recs
        step1_bytes, step1_recs = from_mem_bytes, from_mem_recs
    else:
        from_mem, from_mem_bytes, from_mem_recs = evicted, seg_bytes, seg_recs
        step1_bytes = step1_recs = 0.0
    from_mem_total_bytes = from_mem_bytes if on_disk < f else from_mem * from_mem_bytes
    from_mem_total_recs = from_mem_recs if on_disk < f else from_mem * from_mem_recs

    # Step 2 (eqs. 72-76): merge the files on disk in rounds, when any exist.
    files2 = on_disk + from_mem  # eq. 72
    share2 = interm_merge_reads(files2, f) / files2 if on_disk > 0 and files2 > 0 else 0.0  # eq. 73
    step2_bytes = share2 * (disk_bytes + from_mem_total_bytes)  # eq. 74
    step2_recs = share2 * (disk_recs + from_mem_total_recs)  # eq. 75
    # Step 3 (eqs. 77-81): everything on disk and in memory merges into the reduce input.
    files3 = remain + final_merge_files(files2, f)  # eq. 77
    share3 = interm_merge_reads(files3, f) / files3 if files3 > 0 else 0.0  # eq. 78
    in_bytes = (files * file_bytes + in_mem * seg_bytes) / ds.interm_compress_ratio  # eq. 83
    in_recs = files * file_recs + in_mem * seg_recs  # eq. 84
    return ReduceDataflow(
        segment_bytes=seg_bytes,
        segment_uncompr_bytes=seg_uncompr,
        segment_recs=seg_recs,
        shuffle_bytes=shuffle_bytes,
        shuffle_recs=shuffle_recs,
        shuffle_buffer_bytes=buffer,
        in_memory=in_memory,
        segs_per_shuffle_file=per_file,
        shuffle_files=files,
        shuffle_file_bytes=file_bytes,
        shuffle_file_recs=file_recs,
        segs_in_mem=in_mem,
        disk_merges=merges,
        unmerged_files=unmerged,
        evicted_segs=evicted,
        segs_remain_mem=remain,
        files_from_mem=from_mem,
        files_from_mem_bytes=from_mem_bytes,
        files_from_mem_recs=from_mem_recs,
        step1_bytes=step1_bytes,
        step1_recs=step1_recs,
        step2_files=files2,
        step2_bytes=step2_bytes,
        step2_recs=step2_recs,
        step3_files=files3,
        step3_bytes=share3 * shuffle_bytes,  # eq. 79
        step3_recs=share3 * shuffle_recs,  # eq. 80
        in_bytes=in_bytes,
        in_recs=in_recs,
        out_bytes=in_bytes * ds.reduce_size_sel,  # eq. 85
        out_recs=in_recs * ds.reduce_recs_sel,  # eq. 86
        from_disk_bytes=disk_bytes + from_mem_total_bytes,  # eq. 87
    )
