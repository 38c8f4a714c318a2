"""A reduce's input and its shuffle at a new size (Zhang et al. 2013, eq. 2), and the first
shuffle of the first reduce wave (ARIA's, Verma et al. 2011).

:func:`reduce_flow` gives the bytes and records one reduce takes in, fetches and writes;
:class:`ShufflePrice` prices the shuffle alone where the platform model's shuffle holds the
reduce-side sort too; :func:`first_shuffle` carries the profiled first shuffle over.
:func:`predict.tasks.estimate_tasks` puts them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phaseline.schemas import Phase
from predict.settings import JobSettings, compression
from profiles.profile import DurationStats, JobProfile, Stage

if TYPE_CHECKING:
    from predict.phase_times import PhaseTimes
    from predict.profiled import InputShape

__all__ = ["ReduceFlow", "ShufflePrice", "first_shuffle", "reduce_flow", "wire_ratio"]


def _skew(stats: DurationStats | None) -> float:
    return stats.max_ms / stats.avg_ms if stats is not None and stats.avg_ms > 0 else 1.0


@dataclass(frozen=True, slots=True)
class ReduceFlow:
    reduce_in: float  # uncompressed bytes into one reduce (eq. 2)
    shuffle_bytes: float  # bytes one reduce fetches
    records: float
    out_bytes: float


def reduce_flow(profile: JobProfile, shape: InputShape, settings: JobSettings, ratio: float) -> ReduceFlow:
    combine_size = profile.combine_size_sel if profile.combine_size_sel is not None else 1.0
    combine_recs = profile.combine_recs_sel if profile.combine_recs_sel is not None else 1.0
    reduces = max(1, settings.reduces)
    reduce_in = shape.avg_split_bytes * shape.splits * profile.map_size_sel * combine_size / reduces  # eq. 2
    records = shape.avg_split_records * shape.splits * profile.map_recs_sel * combine_recs / reduces
    out = reduce_in * (profile.reduce_size_sel if profile.reduce_size_sel is not None else 1.0)
    return ReduceFlow(reduce_in, reduce_in * ratio, records, out)


def wire_ratio(profile: JobProfile, settings: JobSettings, before: JobSettings) -> float:
    """Shuffled bytes per map-output byte: as measured (materialized / raw map output: IFile framing,
    and the codec where the run compressed) when compression is as profiled, else :func:`compression`'s."""
    measured = profile.dataflow.interm_compress_ratio
    if measured is not None and settings.compress_map_output == before.compress_map_output:
        return measured
    return compression(profile, settings).ratio


@dataclass(frozen=True, slots=True)
class ShufflePrice:
    """The shuffle alone, priced by the platform model's shuffle + sort less the profiled sort's share.

    Zhang et al.'s shuffle submodel prices shuffle and sort together (section 2); the
    reduce phase (ARIA's stage) already holds the profiled sort: take it out once, as its
    share of the platform's shuffle + sort in the profiled run.  Subtracting the sort scaled
    through 0 from the platform's affine line made the shuffle grow as each reduce's data
    shrank (4.4 -> 1.1 MB per reduce: 18 -> 23 ms), wherever the sort's slope passed the line's.

    A sort at least as long as the platform's shuffle + sort (small records, costly keys: the
    benchmark's 100-byte records sort faster) leaves no share for the shuffle, which the
    platform then cannot tell from the sort: the profiled shuffle is kept (``kept_ms``: ARIA's
    typical shuffle where later reduce waves ran, since a first-wave reduce launched under the
    maps waits for them within its shuffle), and scaled as the platform's shuffle + sort scales.
    Priced at 0 instead, word count and the inverted index of the backtest suite had shuffled as
    long at 64 MiB as at 16.
    """

    times: PhaseTimes
    sort_then_ms: float  # the profiled run's reduce-side sort, as priced
    both_then_ms: float  # the platform's shuffle + sort at the profiled bytes per reduce (0: none)
    sort_share: float
    kept_ms: float

    @classmethod
    def of(cls, profile: JobProfile, times: PhaseTimes, then: ReduceFlow, then_phases: Mapping[str, float]) -> ShufflePrice:
        platform_shuffle = times.has(Phase.SHUFFLE.value)
        sort_then = then_phases.get(Phase.SORT.value, 0.0)
        both_then = times.ms(Phase.SHUFFLE, then.shuffle_bytes) if platform_shuffle and sort_then > 0 else 0.0
        sort_share = min(1.0, sort_then / both_then) if both_then > 0 else 0.0
        # a later wave's shuffle is the shuffle alone; a first wave's may hold a wait for the maps
        measured = profile.stage(Stage.TYPICAL_SHUFFLE) or profile.phases.get(Phase.SHUFFLE.value)
        kept_ms = measured.avg_ms if sort_share == 1.0 and measured is not None else 0.0
        return cls(times, sort_then, both_then, sort_share, kept_ms)

    def ms(self, shuffle_bytes: float) -> float:
        """One reduce's shuffle of ``shuffle_bytes``."""
        if self.kept_ms > 0:
            return self.kept_ms * self.times.ms(Phase.SHUFFLE, shuffle_bytes) / self.both_then_ms
        return self.times.ms(Phase.SHUFFLE, shuffle_bytes) * (1.0 - self.sort_share)

    def note(self, then_shuffle_bytes: float) -> str | None:
        """How the shuffle was priced, when not by the platform's shuffle alone."""
        if self.sort_share == 1.0:
            what = (f"the profiled shuffle ({self.kept_ms:.0f} ms per reduce) scaled as the platform model's shuffle + "
                    "sort scales" if self.kept_ms > 0 else "priced at 0 (none profiled)")
            return (
                f"shuffle: the profiled reduce-side sort ({self.sort_then_ms:.0f} ms) is longer than the platform "
                f"model's shuffle + sort ({self.both_then_ms:.0f} ms) at the profiled {then_shuffle_bytes:.3g} B per "
                f"reduce, which leaves the platform no share for the shuffle: {what}"
            )
        if self.sort_share > 0:
            return (
                f"shuffle: the platform model's shuffle + sort less the reduce-side sort, which the reduce "
                f"phase holds (Zhang et al. 2013, section 2 measure the two together): {self.sort_share:.0%} of it, "
                "the profiled sort's share"
            )
        return None


def first_shuffle(
    profile: JobProfile, settings: JobSettings, before: JobSettings, price: ShufflePrice, shuffle_ms: float,
    then: ReduceFlow, notes: list[str], *, on_measured_cluster: bool = False,
) -> tuple[float, float, float]:
    """The first wave's shuffle (average, maximum) and the typical shuffle's max/avg ratio.

    The first shuffle (ARIA) is the profiled one in its profiled proportion to the typical
    shuffle as priced here, or, with no typical shuffle profiled, the profiled one scaled like
    the shuffle, or, unprofiled, the whole shuffle (no overlap).

    Reduces launched under the maps (slow-start below 1) with no later wave: their first shuffle
    is the tail past the map stage, which ARIA takes as profiled (Verma et al. 2011, section 3:
    ``Sh1``, the non-overlapping part).  It is a cluster's latency more than data: the reduce's
    polls for map completions, the last wave's fetch, and a reduce that got no container until
    the maps ended starting its JVM (1.4-3.3 s on the mini YARN cluster, against a priced
    shuffle of 0.1 s, at 8, 24 and 64 MiB alike).  So on the cluster the platform model was
    measured on (``on_measured_cluster``: :func:`predict.measured_on.measured_on`) it is kept
    as profiled; elsewhere, a tail from another cluster, it is no longer than a whole shuffle
    as priced here.  Decided on the YARN backtest's tuning applications alone (2026-11-30, 16
    cases, median / worst): bounds 7.2 / 21.6 -> 6.5 / 18.1 %, critical path 7.2 / 25.4 -> 5.3 /
    19.7 %, simulation 6.1 / 24.2 -> 5.5 / 18.5 %; the other models do not read it.
    """
    first, typical = profile.stage(Stage.FIRST_SHUFFLE), profile.stage(Stage.TYPICAL_SHUFFLE)
    shuffle_skew = _skew(typical or first)
    # the LocalJobRunner and an uberized run have no slow start (reduces run after the maps), whatever the config says
    profiled_slowstart = 1.0 if profile.source.one_jvm else before.slowstart
    # profiled reduces launched under the maps, none in a later wave: the first shuffle is the tail past the maps
    tail_only = typical is None and profiled_slowstart < 1.0
    if first is not None and typical is not None and typical.avg_ms > 0 and profile.num_reduces > 0:
        # Both profiled: the first shuffle keeps its profiled proportion to the typical one, which
        # the platform prices.  Scaled apart (the first by the platform's ratio, the typical priced
        # outright), a profile from another cluster put a long first shuffle beside a short typical
        # one, so that more reduce slots -- more reduces in the first wave -- made the job slower.
        scale = shuffle_ms / typical.avg_ms
        first_avg, first_max = first.avg_ms * scale, first.max_ms * scale
        notes.append(
            f"first shuffle: the profiled one ({first.avg_ms:.0f} ms) in its profiled proportion to the "
            f"typical shuffle ({typical.avg_ms:.0f} ms), x{scale:.3g}"
        )
    elif first is not None and profile.num_reduces > 0 and tail_only and on_measured_cluster:
        # the tail past the map stage, on the cluster that measured it (see the docstring)
        first_avg, first_max = first.avg_ms, first.max_ms
        notes.append(
            f"first shuffle: the profiled tail past the map stage ({first.avg_ms:.0f} ms), kept as measured "
            "on the cluster the platform model was measured on (ARIA's Sh1)"
        )
    elif first is not None and profile.num_reduces > 0:
        then_ms = price.ms(then.shuffle_bytes)
        scale = shuffle_ms / then_ms if then_ms > 0 else 1.0
        first_avg, first_max = first.avg_ms * scale, first.max_ms * scale
        notes.append(
            f"first shuffle: the profiled one ({first.avg_ms:.0f} ms) scaled by {scale:.3g} like the shuffle"
        )
        if tail_only and first_avg > shuffle_ms:
            # Profiled reduces that overlapped the maps: the first shuffle is the part of a shuffle
            # past the map stage, no longer than a whole one as priced here.  A 160 s tail from a
            # 2010 cluster beside this machine's 0.2 s shuffle made more reduce slots -- more reduces
            # in the first wave -- slower (job_201002080801_50510: 188.7 s on 1 node, 209.7 s on 4).
            first_avg, first_max = shuffle_ms, shuffle_ms * shuffle_skew
            notes.append(
                "first shuffle: the profiled tail is longer than a whole shuffle as priced here; taken as the whole"
            )
    else:
        first_avg, first_max = shuffle_ms, shuffle_ms * shuffle_skew
        notes.append("first shuffle assumed not to overlap the map stage (none profiled)")
    if first is not None and settings.slowstart >= 1.0 > profiled_slowstart and first_avg < shuffle_ms:
        # Reduces now start only once every map is done: nothing of the shuffle overlaps the maps
        # any more, so the first wave shuffles whole (the slowstart setting had changed nothing).
        first_avg, first_max = shuffle_ms, max(first_max, shuffle_ms * shuffle_skew)
        notes.append(
            f"slowstart {settings.slowstart:g} (profiled {profiled_slowstart:g}): reduces start after the maps, "
            "so the first wave's shuffle overlaps nothing and takes the whole shuffle"
        )
    return first_avg, first_max, shuffle_skew
