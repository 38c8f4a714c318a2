"""Herodotou 2011's statistics for one prediction: the dataflow statistics (Table 3) and the cost
statistics (Table 4) that :mod:`predict.herodotou` prices the job's dataflow with.

Where the cost statistics come from
-----------------------------------
Herodotou measures them per job; phaseline takes what the *cluster* decides
from the platform model (Zhang et al. 2013, section 4) and what the *job*
decides from the profile:

* I/O and network per byte are secant slopes of the platform model at the
  data size the phase processes in this prediction (for the read, the bytes
  as stored: compressed when the input is, as eq. 4 prices them):
  csHdfsReadCost = read, csLocalIOWriteCost = spill, csLocalIOReadCost =
  merge - spill (a merge pass reads and writes every byte), csNetworkCost =
  shuffle, csHdfsWriteCost = write; csSerdeCPUCost = collect x record width.
  Zhang et al. measure shuffle and sort as one phase, so the shuffle slope
  already holds some of the reduce-side merging that eqs. 62-63 and 71-82
  price again; the per-task overhead calibrated on the profiled run takes the
  overlap out at the profiled size (a negative overhead is overlap, taken
  off as the same share of the phases at every size:
  :func:`predict.tasks.overlap_scaled`).  Taking it out of csNetworkCost instead
  (the platform's shuffle + sort less those terms at the profiled settings)
  was measured on 13 stored local backtests (2026-11-22): Herodotou's median
  error rose from 11.1 to 11.7 % and its worst from 40.5 to 41.6 % (means
  over the runs; 6 runs instead of 8 with a median <= 10 %), so the slope
  stays whole.
  Sort and merge CPU are inside the platform's spill and merge slopes, so
  csSortCPUCost and csMergeCPUCost are 0 unless the profile measured them.
  For the same reason the local I/O costs are taken per *raw* byte (the
  slopes divided by the map-output codec's ratio, 1 without compression):
  eqs. 20-88 price local I/O on the bytes as written, which a codec shrinks,
  but the work a spill or merge slope holds is mostly its records' sort and
  merge, which it does not.  Only the shuffle's transfer (csNetworkCost) and
  the codec's own CPU change with compression.  Measured on the local engine
  (64 MiB, 2 maps, 1 reduce, LZ4 at a ratio of 0.2, 2026-11-29): the shuffle
  fell from 81-86 to 34-46 ms, while each map's spill grew by 55-130 ms and
  the reduce-side merge by 100-150 ms (it writes its merged file through the
  codec); per written byte, the model had predicted a saving of 0.78 s (27 %)
  where the runs measured none (-0.05 s).
  The platform's intercepts (its cost at zero bytes) join the per-task
  overhead.
* Map, reduce and combine CPU per record and (un)compression per byte come
  from the profile; unmeasured ones are 0 (compression: named defaults),
  each noted in the prediction's assumptions.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from phaseline.errors import ExtrapolationWarning
from phaseline.schemas import Phase
from predict.core import JobSettings, PhaseDurationModel
from predict.dataflow import DataStats, MapDataflow, ReduceDataflow
from predict.settings import compression
from predict.tasks import PhaseTimes, profiled_settings, wire_ratio
from profiles.profile import JobProfile

__all__ = ["CostStats", "cost_stats", "data_stats"]


@dataclass(frozen=True, slots=True)
class CostStats:
    """Cost statistics (Herodotou 2011, Table 4) resolved for one prediction, in ms per byte / record."""

    hdfs_read: float
    hdfs_write: float
    local_read: float
    local_write: float
    network: float
    map_cpu: float
    reduce_cpu: float
    combine_cpu: float
    partition_cpu: float
    serde_cpu: float
    sort_cpu: float
    merge_cpu: float
    in_uncompr: float
    interm_uncompr: float
    interm_compr: float
    out_compr: float
    map_fixed_ms: float  # per map task: the platform's intercepts
    reduce_fixed_ms: float  # per reduce task


def _secant(times: PhaseTimes, phase: Phase, at: float) -> tuple[float, float]:
    """(intercept ms, slope ms/byte) of the phase's duration between 0 and ``at`` bytes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)  # probing at 0 bytes is ours, not the user's
        base = times.ms(phase, 0.0)
    if at <= 0:
        return base, 0.0
    return base, max(0.0, (times.ms(phase, at) - base) / at)


def data_stats(profile: JobProfile, settings: JobSettings) -> tuple[DataStats, list[str]]:
    """Dataflow statistics (Table 3) from the profile, with section 2's defaults for unused features."""
    notes: list[str] = []
    comp = compression(profile, settings)
    notes.extend(comp.notes)
    out_ratio = 1.0
    if settings.compress_output:
        out_ratio = profile.dataflow.out_compress_ratio or 1.0
        if profile.dataflow.out_compress_ratio is None:
            notes.append("output compression ratio unknown: output assumed uncompressed in size")
    if profile.reduce_size_sel is None and settings.reduces > 0:
        notes.append("reduce selectivity unknown in the profile: output assumed as large as input")
    wire = wire_ratio(profile, settings, profiled_settings(profile))
    stats = DataStats(
        map_size_sel=profile.map_size_sel,
        map_recs_sel=profile.map_recs_sel,
        combine_size_sel=profile.combine_size_sel if profile.combine_size_sel is not None else 1.0,
        combine_recs_sel=profile.combine_recs_sel if profile.combine_recs_sel is not None else 1.0,
        use_combine=profile.has_combiner,
        input_compress_ratio=profile.dataflow.input_compress_ratio or 1.0,
        interm_compress_ratio=wire,
        reduce_size_sel=profile.reduce_size_sel if profile.reduce_size_sel is not None else 1.0,
        reduce_recs_sel=profile.reduce_recs_sel if profile.reduce_recs_sel is not None else 1.0,
        out_compress_ratio=out_ratio,
        segment_compress_ratio=wire if settings.compress_map_output else 1.0,
    )
    return stats, notes


def cost_stats(
    profile: JobProfile,
    platform: PhaseDurationModel,
    settings: JobSettings,
    m: MapDataflow,
    r: ReduceDataflow | None,
) -> tuple[CostStats, list[str]]:
    """Resolve Table 4's cost statistics for this prediction (see the module docstring)."""
    notes: list[str] = []
    pc = profile.costs
    times = PhaseTimes(profile, platform, notes)
    # eq. 4 prices the bytes read from HDFS (compressed when the input is): the secant is taken there
    read0, read = _secant(times, Phase.READ, m.in_bytes * (profile.dataflow.input_compress_ratio or 1.0))
    col0, collect = _secant(times, Phase.COLLECT, m.out_bytes)
    spill0, spill = _secant(times, Phase.SPILL, m.out_bytes)
    merge0, merge = _secant(times, Phase.MERGE, m.out_bytes)
    shuf0, network = _secant(times, Phase.SHUFFLE, r.shuffle_bytes if r else 0.0)
    write_at = r.out_bytes if r else m.out_bytes
    write0, write = _secant(times, Phase.WRITE, write_at)
    width = m.out_bytes / m.out_recs if m.out_recs > 0 else 0.0
    comp = compression(profile, settings)

    def job_cost_(value: float | None, what: str, phase: Phase | None = None) -> float:
        if value is None:
            if phase is None or not times.covers(phase):
                notes.append(f"{what} unknown in the profile: counted as 0")
            return 0.0
        return value

    map_cpu = job_cost_(
        profile.map_ms_per_record if profile.map_ms_per_record is not None else pc.map_cpu,
        "map CPU cost",
        Phase.MAP,
    )
    reduce_given = profile.reduce_ms_per_record if profile.reduce_ms_per_record is not None else pc.reduce_cpu
    reduce_cpu = (
        job_cost_(
            reduce_given if reduce_given is not None else times.lumped_reduce_cost(),
            "reduce CPU cost",
            Phase.REDUCE,
        )
        if settings.reduces > 0
        else 0.0
    )
    combine_cpu = job_cost_(pc.combine_cpu, "combiner CPU cost") if profile.has_combiner else 0.0
    if settings.reduces > 0:
        fixed_map = read0 + col0 + spill0 + (merge0 if m.spills > 1 else 0.0)
        fixed_reduce = shuf0 + write0
    else:
        fixed_map, fixed_reduce = read0 + write0, 0.0
    # Per raw byte: eqs. 20-82 price local I/O on the bytes as written, compressed where the codec
    # runs, while the platform's spill and merge slopes (measured uncompressed) hold every record's
    # sort and merge CPU, which the codec does not shrink (the module docstring)
    raw = 1.0 / comp.ratio
    stats = CostStats(
        hdfs_read=read,
        hdfs_write=write,
        local_read=max(0.0, merge - spill) * raw,
        local_write=spill * raw,
        network=network,
        map_cpu=map_cpu,
        reduce_cpu=reduce_cpu,
        combine_cpu=combine_cpu,
        partition_cpu=pc.partition_cpu or 0.0,
        serde_cpu=collect * width,
        sort_cpu=pc.sort_cpu or 0.0,
        merge_cpu=pc.merge_cpu or 0.0,
        in_uncompr=pc.in_uncompr_cpu or 0.0,
        interm_uncompr=comp.uncompress_ms_per_byte,
        interm_compr=comp.compress_ms_per_byte,
        out_compr=(pc.out_compr_cpu or 0.0) if settings.compress_output else 0.0,
        map_fixed_ms=fixed_map,
        reduce_fixed_ms=fixed_reduce,
    )
    if merge < spill:
        notes.append("platform merge slope below spill slope: local read cost taken as 0")
    return stats, notes
