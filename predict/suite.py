"""The local backtest suite's definition: which applications it runs, at which sizes, how often, in
which order (running it is :mod:`predict.backtest_suite`'s).

Applications (``predict/apps/*.java``: each a subclass of ``App.java``, the one driver every
application shares), each a distinct shape (:attr:`App.shape`): word count with a combiner, sort,
grep, an inverted index, a map-only filter, a CPU-heavy map, a group-by that shuffles every record,
top N, a skewed key, a reduce-side join of two inputs, many small splits, a large fixed per-task
set-up, distinct, an expanding map (n-grams), a secondary sort, a reduce-heavy summary, reduce
waves, a compressed shuffle, in-mapper combining, co-occurrence stripes, a map-only job that writes
twice its input, a gzip-compressed final output, a CPU-heavy reduce, an expanding reduce and a
SequenceFile output.  The engine generates their input (TeraGen-like 100-byte text records, one
file = one split per ``MB_PER_MAP`` MiB).

**Tuning and held-out applications** (:data:`HELD_OUT`).  The split was committed before any model
was changed for the applications added with it (issue 37): models are tuned on the tuning set only,
and the held-out set is scored once per change, to report, never to choose a constant.  Its
applications are the skewed key, the reduce-side join, many small splits, the fixed per-task set-up
and distinct, and (:data:`FRESH_HELD_OUT`, added later and scored once) the n-grams, the secondary
sort, the percentiles, the reduce waves, the compressed shuffle, the in-mapper combining, the
stripes, the explode, the gzip output, the CPU-heavy reduce, the expanding reduce and the
SequenceFile output.

:data:`FULL` is the suite whose results ``benchmarks/BACKTEST.json`` keeps (run with ``--repeats 5``
there, each case the median of five runs); :data:`QUICK` (two applications, two sizes, one run each)
is what CI runs; :func:`local_suite` is either, with the command line's sizes and repeats.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from phaseline.errors import PhaselineError

__all__ = [
    "APPS", "FRESH_HELD_OUT", "FULL", "HELD_OUT", "MB_PER_MAP", "QUICK", "App", "Case", "Suite", "app_set", "app_shape", "cases",
    "local_suite", "run_order",
]  # fmt: skip

#: Input MiB per map task (one generated file, one split).
MB_PER_MAP = 2.0


@dataclass(frozen=True, slots=True)
class App:
    """One application: its short name, driver class, shape, and the reduce counts it runs with.

    ``reduces`` replaces the suite's reduce counts where given (a map-only job
    has 0; a skewed key needs two reduces to be skewed).
    """

    name: str
    main_class: str
    shape: str = ""
    reduces: tuple[int, ...] | None = None

    @property
    def job_name(self) -> str:
        """The job name its driver gives the job (``phaseline app <name>``)."""
        return f"phaseline app {self.name}"


APPS: tuple[App, ...] = (
    App("wordcount", "phaseline.apps.WordCount", "combiner-heavy aggregation"),
    App("sort", "phaseline.apps.Sort", "full-shuffle sort", reduces=(2,)),
    App("grep", "phaseline.apps.Grep", "low-selectivity scan"),
    App("invertedindex", "phaseline.apps.InvertedIndex", "text index, wide values"),
    App("maponly", "phaseline.apps.MapOnlyFilter", "map-only filter", reduces=(0,)),
    App("cpumap", "phaseline.apps.CpuHeavyMap", "CPU-heavy map", reduces=(1,)),
    App("groupby", "phaseline.apps.GroupBy", "CPU-heavy group-by, every record shuffled", reduces=(2,)),
    App("topn", "phaseline.apps.TopN", "top N, map output independent of input", reduces=(1,)),
    App("skewkey", "phaseline.apps.SkewedKey", "skewed key: one reduce gets most data", reduces=(2,)),
    App("join", "phaseline.apps.ReduceSideJoin", "reduce-side join of two inputs", reduces=(2,)),
    App("manysplits", "phaseline.apps.ManySmallSplits", "many small splits", reduces=(1,)),
    App("fixedsetup", "phaseline.apps.FixedSetup", "large fixed per-task set-up", reduces=(1,)),
    App("distinct", "phaseline.apps.Distinct", "distinct with a combiner", reduces=(1,)),
    # the fresh held-out applications (2026-11-30): committed before their first run
    App("ngrams", "phaseline.apps.NGrams", "expanding map: output about 3x its input", reduces=(2,)),
    App("secondarysort", "phaseline.apps.SecondarySort", "secondary sort: own partitioner, grouping", reduces=(2,)),
    App("percentiles", "phaseline.apps.Percentiles", "reduce-heavy: groups held, sorted", reduces=(1,)),
    App("reducewaves", "phaseline.apps.ReduceWaves", "reduce waves: sort's code, 4 reduces", reduces=(4,)),
    App("compressedshuffle", "phaseline.apps.CompressedShuffle", "map output zlib-compressed", reduces=(2,)),
    App("inmapper", "phaseline.apps.InMapperCombine", "in-mapper combining: counts held in the map", reduces=(1,)),
    # the third fresh batch (2026-11-30, session 41): committed before its first run
    App("stripes", "phaseline.apps.Stripes", "stripes: map-valued records merged by a combiner", reduces=(2,)),
    App("explode", "phaseline.apps.Explode", "map-only, output twice its input", reduces=(0,)),
    App("gzipoutput", "phaseline.apps.GzipOutput", "gzip-compressed final output, every record", reduces=(2,)),
    # the fourth fresh batch (2026-11-30, session 42): committed before its first run, no model changed
    App("reducecpu", "phaseline.apps.ReduceCpu", "CPU-heavy reduce, small output", reduces=(2,)),
    App("reduceexpand", "phaseline.apps.ReduceExpand", "expanding reduce: output 3x its input", reduces=(2,)),
    App("seqoutput", "phaseline.apps.SequenceOutput", "identity reduce, SequenceFile output", reduces=(2,)),
    # the fifth fresh batch (2026-11-30, session 43): committed before its first run; no model changed
    # since the fourth (the calibrated intervals now rank applications, 1bc31be)
    App("multiout", "phaseline.apps.MultiOutput", "many output files: 8 a reduce (MultipleOutputs)", reduces=(2,)),
    App("chain", "phaseline.apps.Chain", "chained mappers around the reduce (ChainMapper, ChainReducer)", reduces=(2,)),
    App("longkeys", "phaseline.apps.LongKeys", "small binary records, every record shuffled", reduces=(2,)),
    # the sixth fresh batch (2026-11-30, session 44): committed before its first suite run; no model changed
    # since the fourth (the suite also reports each application calibrated on all the others, 5547618)
    App("totalorder", "phaseline.apps.TotalOrder", "total-order sort: sampled key ranges (TotalOrderPartitioner)",
        reduces=(2,)),
    App("combinedsplits", "phaseline.apps.CombinedSplits", "small files combined: two files a split", reduces=(2,)),
    App("kmeans", "phaseline.apps.KMeans", "k-means iteration: float work, combiner to 32 keys", reduces=(2,)),
    # the seventh fresh batch (2026-11-30, session 45): committed before its first suite run; no model changed
    # since the fourth (a measured two-slot slowdown was tried on the tuning set alone and not adopted)
    App("nlines", "phaseline.apps.NLines", "splits by lines (NLineInputFormat): a full and a short map a file",
        reduces=(2,)),
    App("usercounters", "phaseline.apps.UserCounters", "validating filter with its own counters, half shuffled",
        reduces=(2,)),
    App("cachejoin", "phaseline.apps.CacheJoin", "map-side join: a side table from the distributed cache",
        reduces=(2,)),
    # the eighth fresh batch (2026-11-30, session 45): committed before its first suite run, after the
    # shared heap's garbage collection (ab59e88), the one model change since the fourth batch; the first
    # of them holds its whole split in memory, the shape that change is about
    App("groupinmap", "phaseline.apps.GroupInMap", "in-mapper grouping: the whole split held in memory",
        reduces=(2,)),
    App("dedupe", "phaseline.apps.Dedupe", "deduplication by a map-side seen-set of keys", reduces=(2,)),
    App("regexextract", "phaseline.apps.RegexExtract", "log parsing: regular-expression fields counted",
        reduces=(2,)),
    # the ninth fresh batch (2026-11-30, session 46): committed before its first suite run, after the first
    # shuffle's tail kept on the measured cluster (addb18d), the one model change since the eighth
    App("smallbuffer", "phaseline.apps.SmallBuffer", "a 1 MiB sort buffer: several spills and a merge a map",
        reduces=(2,)),
    App("latereduces", "phaseline.apps.LateReduces", "reduces held until every map ends (slow-start 1)",
        reduces=(2,)),
    App("nocombiner", "phaseline.apps.NoCombiner", "word count without a combiner: small records shuffled",
        reduces=(2,)),
    # the tenth fresh batch (2026-11-30, session 46): committed before its first run; no model changed
    App("sampler", "phaseline.apps.Sampler", "a 2 % sample by key hash, written in key order", reduces=(1,)),
    App("bigvalues", "phaseline.apps.BigValues", "wide values: map output 4x its input, a line a group out",
        reduces=(2,)),
    App("cpucombiner", "phaseline.apps.CpuCombiner", "CPU-heavy combiner: the spills carry its work", reduces=(2,)),
    # the eleventh fresh batch (2026-11-30, session 47): committed before its first run; no model changed
    App("slowcompare", "phaseline.apps.SlowCompare", "descending sort by a key with no raw comparator",
        reduces=(2,)),
    App("graphstep", "phaseline.apps.GraphStep", "a PageRank-like step: a node's rank shared among its links",
        reduces=(2,)),
    App("garbagemap", "phaseline.apps.GarbageMap", "allocation-heavy map: a map of boxed counts a record",
        reduces=(2,)),
    # the twelfth fresh batch (2026-12-01, session 48): committed before its first run; no model changed
    App("gzipinput", "phaseline.apps.GzipInput", "gzip-compressed input: a map a file, every byte inflated",
        reduces=(2,)),
    App("aggregation", "phaseline.apps.Aggregation", "SQL-like aggregation: key-value input, a double summed "
        "by group", reduces=(2,)),
    App("bzip2output", "phaseline.apps.Bzip2Output", "bzip2-compressed final output (a Java codec)",
        reduces=(2,)),
    # the thirteenth fresh batch (2026-12-01, session 49): committed before its first suite run; no model
    # changed since the ninth (Tripathi's leaves by their measured spread were tried on the tuning set alone
    # and not adopted)
    App("seqinput", "phaseline.apps.SequenceInput", "a pipeline's second job: block-compressed SequenceFile "
        "input, every record shuffled", reduces=(2,)),
    App("recordstruct", "phaseline.apps.RecordStruct", "structured values: a Writable of six fields a record, "
        "shuffled and summarized", reduces=(2,)),
    App("streampipe", "phaseline.apps.StreamPipe", "streaming: every line piped through an external process",
        reduces=(2,)),
    # the fourteenth fresh batch (2026-12-01, session 49): committed before its first suite run; no model
    # changed since the ninth (a first-wave excess off the typical map was tried on the tuning set alone
    # and not adopted)
    App("mixedmaps", "phaseline.apps.MixedMaps", "maps of two costs: every other file's records hashed",
        reduces=(2,)),
    App("waitmap", "phaseline.apps.WaitMap", "latency-bound map: a 1 ms wait every 25 records", reduces=(2,)),
    App("mapcompress", "phaseline.apps.MapCompress", "map-only, block-compressed SequenceFile output",
        reduces=(0,)),
    # the fifteenth fresh batch (2026-12-01, session 50): committed before its first run; no model changed
    App("multithreaded", "phaseline.apps.Multithreaded", "two threads a map task (MultithreadedMapper), "
        "CPU-heavy records", reduces=(2,)),
    App("fieldsort", "phaseline.apps.FieldSort", "sort by fields (KeyFieldBasedComparator, -k), every "
        "record shuffled", reduces=(2,)),
    App("fieldselect", "phaseline.apps.FieldSelect", "projection by the library's field selection (cut)",
        reduces=(2,)),
    # the sixteenth fresh batch (2026-12-02, session 51): committed before its first suite run; no model
    # changed since the ninth
    App("mapfileout", "phaseline.apps.MapFileOut", "sort into an indexed output (MapFileOutputFormat)",
        reduces=(2,)),
    App("bloomjoin", "phaseline.apps.BloomJoin", "semi-join by a Bloom filter each map builds (about half kept)",
        reduces=(2,)),
    App("deflaterecords", "phaseline.apps.DeflateRecords", "each record deflated in the map, inflated in the "
        "reduce (native zlib a record)", reduces=(2,)),
    # the seventeenth fresh batch (2026-12-02, session 57): committed before its first suite run, after
    # vianna_tripathi's two changes of 2026-12-02 (its tasks' measured spread, its maps on the containers
    # YARN's ApplicationMaster leaves them); no other model changed since the ninth
    App("randomshuffle", "phaseline.apps.RandomShuffle", "random permutation: lines under random binary keys, "
        "every record shuffled", reduces=(2,)),
    App("runningtotal", "phaseline.apps.RunningTotal", "running totals by group (a window function), a record "
        "out for each in", reduces=(2,)),
    App("base64values", "phaseline.apps.Base64Values", "base64-encoded values: 4/3 of the input shuffled, "
        "decoded in the reduce", reduces=(2,)),
    # the eighteenth fresh batch (2026-12-03, session 58): committed before its first suite run, on a new
    # machine; no model changed since the seventeenth
    App("keypairs", "phaseline.apps.KeyPairs", "co-occurring pairs of key characters: nine tiny records per "
        "record, summed by a combiner", reduces=(2,)),
    App("anagrams", "phaseline.apps.Anagrams", "anagram classes of the keys: a sort of ten characters per "
        "record, a fifth of the input shuffled, none combined", reduces=(2,)),
    App("countminsketch", "phaseline.apps.CountMinSketch", "a count-min sketch: a fixed 512 kB of map output "
        "per map, whatever its records, summed counter by counter", reduces=(2,)),
    # the nineteenth fresh batch (2026-12-03, session 59): committed before its first suite run; no model
    # changed since the eighteenth
    App("grouptopk", "phaseline.apps.GroupTopK", "the top three records of every group, kept in a bounded "
        "heap in the reduce: every record shuffled, three out a group", reduces=(2,)),
    App("groupconcat", "phaseline.apps.GroupConcat", "every group's records concatenated into one output "
        "value: all the input shuffled and written, one long record a group", reduces=(2,)),
    App("redactdigits", "phaseline.apps.RedactDigits", "map-only: every run of digits replaced by a regular "
        "expression, every record written", reduces=(0,)),
    # the twentieth fresh batch (2026-12-03, session 60): committed before its first suite run, with the
    # code the re-measured tuning set picked (benchmarks/BACKTEST.md)
    App("digestmap", "phaseline.apps.DigestMap", "map-only: every record's SHA-256 written in hex beside its "
        "key", reduces=(0,)),
    App("groupdistinct", "phaseline.apps.GroupDistinct", "distinct keys by group, counted in a hash set in "
        "the reduce: every record shuffled, a group's keys held", reduces=(2,)),
    App("crcxor", "phaseline.apps.CrcXor", "CRC-32 of every record folded by exclusive or by group, in a "
        "combiner and the reduce", reduces=(2,)),
    # the twenty-first fresh batch (2026-12-03): committed before its first run (benchmarks/BACKTEST.md)
    App("lengthhistogram", "phaseline.apps.LengthHistogram", "token lengths counted, combined", reduces=(1,)),
    App("hexkeys", "phaseline.apps.HexKeys", "map-only: every record's key in hexadecimal", reduces=(0,)),
    App("groupstats", "phaseline.apps.GroupStats", "min/max/count/sum by group, no combiner", reduces=(2,)),
    # the twenty-second fresh batch (2026-12-03, session 62): committed before its first run, no model changed
    App("reversefields", "phaseline.apps.ReverseFields", "map-only: fields in reverse order", reduces=(0,)),
    App("charclasses", "phaseline.apps.CharClasses", "bytes classed by group, combined", reduces=(2,)),
    App("maxline", "phaseline.apps.MaxLine", "each group's greatest line, combined", reduces=(2,)),
)

#: Held-out applications added on 2026-11-30 and after, while the first five were scored: written and
#: committed before their first run, in batches of three, and scored once with the models as they stood,
#: they measure what a new application meets (reported apart as well).  Each batch, when it was added and
#: what had changed before it: ``benchmarks/BACKTEST.md`` (twenty-two batches, the last on 2026-12-03).
FRESH_HELD_OUT: frozenset[str] = frozenset(
    {"ngrams", "secondarysort", "percentiles", "reducewaves", "compressedshuffle", "inmapper",
     "stripes", "explode", "gzipoutput", "reducecpu", "reduceexpand", "seqoutput", "multiout", "chain",
     "longkeys", "totalorder", "combinedsplits", "kmeans", "nlines", "usercounters", "cachejoin",
     "groupinmap", "dedupe", "regexextract", "smallbuffer", "latereduces", "nocombiner", "sampler",
     "bigvalues", "cpucombiner", "slowcompare", "graphstep", "garbagemap", "gzipinput", "aggregation",
     "bzip2output", "seqinput", "recordstruct", "streampipe", "mixedmaps", "waitmap", "mapcompress",
     "multithreaded", "fieldsort", "fieldselect", "mapfileout", "bloomjoin", "deflaterecords",
     "randomshuffle", "runningtotal", "base64values", "keypairs", "anagrams", "countminsketch",
     "grouptopk", "groupconcat", "redactdigits", "digestmap", "groupdistinct", "crcxor",
     "lengthhistogram", "hexkeys", "groupstats", "reversefields", "charclasses", "maxline"}
)  # fmt: skip
#: The held-out applications: committed before the models were changed for the applications
#: added with them; never scored to choose anything (see the module docstring).
HELD_OUT: frozenset[str] = frozenset(
    {"skewkey", "join", "manysplits", "fixedsetup", "distinct", *FRESH_HELD_OUT}
)


def app_set(job_name: str) -> str:
    """``"held-out"``, ``"tuning"`` or ``"other"`` (a job that is none of the suite's applications)."""
    for app in APPS:
        if app.job_name == job_name:
            return "held-out" if app.name in HELD_OUT else "tuning"
    return "other"


def app_shape(job_name: str) -> str | None:
    """The suite application's shape for a job name, ``None`` for other jobs."""
    return next((app.shape for app in APPS if app.job_name == job_name), None)


@dataclass(frozen=True, slots=True)
class Suite:
    """Which runs the suite makes, and the microbenchmark plan for the platform model."""

    apps: tuple[App, ...]
    sizes_mb: tuple[float, ...]
    reduces: tuple[int, ...]
    repeats: int
    plan_scale: float
    plan_inputs_mb: tuple[float, ...]
    plan_selectivities: tuple[float, ...]
    plan_grid_maps: int
    plan_grid_reduces: int
    plan_shuffle_maps: tuple[int, ...]
    #: LocalJobRunner's map slots (``mapreduce.local.map.tasks.maximum``): each case runs at each.
    map_parallelism: tuple[int, ...] = (1,)
    #: MiB of a throwaway warm-up job run first in each application run's JVM
    #: (:attr:`platform_model.engine.runner.EngineJob.warmup_mb`; 0: none), so that
    #: the measured job's first tasks do not pay for a cold JVM.  The plan's
    #: microbenchmarks use :func:`platform_model.bench.make_plan`'s own warm-up.
    warmup_mb: float = 8.0
    #: The warm-up also runs the application's own driver once on the warm-up input
    #: (:attr:`platform_model.engine.runner.EngineJob.warmup_app`): its map and
    #: reduce code is compiled before the measured run, as Hadoop's already is.
    warmup_app: bool = True
    #: Maps of every run whatever its size, so that the splits grow with the input (``phaseline engine
    #: run``'s default of 4 maps; benchmarks/BACKTEST.md, "Four maps whatever the input"); ``None``: one
    #: map per :data:`MB_PER_MAP`, so that the maps grow and the splits stay as profiled.
    maps: int | None = None

    def maps_of(self, size_mb: float) -> int:
        """The maps of a run of ``size_mb``."""
        return self.maps if self.maps is not None else max(1, math.ceil(size_mb / MB_PER_MAP))


#: The full suite: every application, profiled at its smallest size and predicted at 3x and 8x
#: (issue 37: "up to 8x extrapolation"), at one and two map slots, three runs a case.  Sizes of
#: 8-64 MiB: below 8 MiB (4 maps of 2 MiB) a two-slot run has a single wave, and the profile
#: cannot tell a first-wave cost from a per-task one.  A 2 MiB warm-up (8 MiB in earlier suites):
#: with 8 MiB, a run of the measured 3 s job took 27 s on this machine.  Earlier suites (four applications at 16,
#: 32 and 64 MiB, 1 and 2 reduces, five runs a case) are in benchmarks/BACKTEST.md.
FULL = Suite(
    apps=APPS,
    sizes_mb=(8.0, 24.0, 64.0),
    reduces=(1,),
    repeats=3,
    plan_scale=1 / 16,
    plan_inputs_mb=(4.0, 16.0, 64.0),
    plan_selectivities=(0.2, 1.0, 1.8),
    plan_grid_maps=4,
    plan_grid_reduces=2,
    plan_shuffle_maps=(2, 4, 8, 16),
    map_parallelism=(1, 2),
    warmup_mb=2.0,
)
QUICK = Suite(
    apps=(APPS[0], APPS[2]),
    sizes_mb=(2.0, 4.0),
    reduces=(1,),
    repeats=1,
    plan_scale=1 / 16,
    plan_inputs_mb=(8.0, 32.0),
    plan_selectivities=(1.0,),
    plan_grid_maps=2,
    plan_grid_reduces=1,
    plan_shuffle_maps=(2, 4),
)


def local_suite(
    *,
    quick: bool = False,
    sizes_mb: Sequence[float] | None = None,
    repeats: int | None = None,
    apps: Sequence[str] | None = None,
    maps: int | None = None,
) -> Suite:
    """:data:`QUICK` or :data:`FULL`, at ``sizes_mb``, ``repeats`` and a fixed number of ``maps`` where given, and of only the
    applications named in ``apps`` (:attr:`App.name`, from every application of the suite: a
    held-out set run on another engine, one shape again) where given.

    Raises
    ------
    PhaselineError
        ``apps`` names an application the suite does not have, or none.
    """
    suite = QUICK if quick else FULL
    if apps is not None:
        known = {app.name: app for app in APPS}
        unknown = [name for name in apps if name not in known]
        if unknown or not apps:
            raise PhaselineError(
                f"no suite application {', '.join(map(repr, unknown)) or 'named'}: "
                f"choose from {', '.join(sorted(known))}"
            )
        suite = dataclasses.replace(suite, apps=tuple(known[name] for name in dict.fromkeys(apps)))
    if sizes_mb is not None:
        suite = dataclasses.replace(suite, sizes_mb=tuple(sizes_mb))
    if repeats is not None:
        suite = dataclasses.replace(suite, repeats=repeats)
    if maps is not None:
        suite = dataclasses.replace(suite, maps=maps)
    return suite


Case = tuple[App, float, int, int]  # (application, size MiB, reduces, map slots)


def cases(suite: Suite) -> list[Case]:
    """Every case of the suite: each application at each size, reduce count and map parallelism."""
    return [
        (app, size, reduces, slots)
        for app in suite.apps
        for size in suite.sizes_mb
        for reduces in (app.reduces if app.reduces is not None else suite.reduces)
        for slots in suite.map_parallelism
    ]


def run_order(suite: Suite) -> list[tuple[App, float, int, int, int]]:
    """The suite's runs ``(app, size MiB, reduces, map slots, repeat)`` in the order they are made.

    Round by round: every case's first run (in a shuffled order), then every
    case's second run, and so on, never a case's repeats back to back.  The
    machine's speed drifts over minutes (other tenants, temperature); runs of
    one case made together share one moment's speed, so a slow moment biased a
    whole case, and the median of its repeats could not remove it.  Spread
    over the suite, each case's median sees the suite's average conditions,
    as the profile run and the platform model do (interleaved, randomised
    order: the usual cure for drift in benchmark design).  The shuffle is
    seeded by the round, so a resumed suite makes the same runs.
    """
    every = cases(suite)
    order: list[tuple[App, float, int, int, int]] = []
    for rep in range(suite.repeats):
        this_round = list(every)
        random.Random(rep).shuffle(this_round)
        if order and len(this_round) > 1 and this_round[0] == order[-1][:4]:
            this_round.append(this_round.pop(0))  # not the last round's case again
        order.extend((*case, rep) for case in this_round)
    return order
