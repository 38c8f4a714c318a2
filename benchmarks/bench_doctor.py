"""The doctor's loop, closed on the local engine: misconfigured jobs, their findings, the recommended
settings run for real, and the saving measured against the saving predicted.

For each case: run the misconfigured job ``repeats`` times on LocalJobRunner (``run_engine``), ingest
the runs (beside the bundled sample traces, whose microbenchmark runs and these fit the platform
model, ``fit --skip-unfittable``), diagnose the first run (``phaseline doctor``), take the best
recommendation for the case's heuristic (``--recommend``, Herodotou's what-if), run the job again
``repeats`` times with the recommended settings as ``-D`` options, and compare the measured
completion times (first task start to last task finish, what the model predicts; the best of the
runs, the one least disturbed by other work on a shared machine) with the predicted saving.  The
issue asks the measured saving to be at least 80 % of the predicted one.

    python benchmarks/bench_doctor.py [--out DIR] [--repeats N]   # writes benchmarks/DOCTOR.md and doctor.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ingest.pipeline import ingest_paths  # noqa: E402
from phaseline.store import Store  # noqa: E402
from platform_model.engine.job import BENCH_APP, EngineJob  # noqa: E402
from platform_model.engine.runner import run_engine  # noqa: E402
from platform_model.model import fit_platform  # noqa: E402
from platform_model.profile import profile_from_connection  # noqa: E402
from predict.core import Cluster  # noqa: E402
from predict.recommend import Recommendation, search_job  # noqa: E402
from profiles import queries  # noqa: E402
from profiles.doctor import DoctorConfig, Finding, Heuristic, Severity, diagnose  # noqa: E402

#: The saving measured must be at least this share of the saving predicted (issue 39).
MIN_REALIZED = 0.8
#: Where the model rejects a finding's own setting (it predicts no saving), the setting run for real must
#: save less than this share of the job's time: a saving the runs' own spread (13-38 % in DOCTOR.md) hides.
MAX_UNPAID_SHARE = 0.10


@dataclass(frozen=True, slots=True)
class Case:
    """One deliberately misconfigured job and the heuristic that must flag it."""

    name: str
    what: str
    job: EngineJob
    cluster: Cluster  # the engine's: one node, its map and reduce parallelism as slots
    heuristic: Heuristic
    #: thresholds the doctor is run with (a ``phaseline doctor --config`` file), beside the defaults
    config: str = ""
    #: why the case needs ``config``
    config_why: str = ""
    #: whether the finding's setting pays on this engine: where it does not, the search must pass it over,
    #: and the loop runs it anyway to measure that it does not (the model's "no" checked like its "yes")
    pays: bool = True


CASES = (
    Case(
        "small_sort_buffer",
        "io.sort.mb=1 and sort factor 2: each map spills ~24 times and merges them in ~22 extra passes",
        EngineJob(input_mb=32, selectivity=1.0, maps=2, reduces=1, io_sort_mb=1, sort_factor=2, warmup_mb=4),
        Cluster(1, 1, 1),
        Heuristic.MAP_SPILLS,
    ),
    Case(
        "many_small_maps",
        "512 maps of 32 kB (8 files of 2 MB cut by a 32 kB split size): each map's start, commit and fetch "
        "cost more than its work (an 8 MB sort buffer, ample for a split's output: with Hadoop's 100 MB, "
        "allocated by every map, a 1,024-map run took minutes)",
        EngineJob(input_mb=16, selectivity=1.0, maps=512, reduces=1, input_files=8, map_parallelism=2,
                  io_sort_mb=8, warmup_mb=4),
        Cluster(1, 2, 1),
        Heuristic.MAPPER_TIME,
    ),
    Case(
        "uncompressed_map_output",
        "64 MB of compressible map output (the records' filler and hex numbers) moved uncompressed through "
        "the spill, the fetch and the reduce's merge",
        EngineJob(input_mb=64, selectivity=1.0, maps=2, reduces=1, map_parallelism=2, warmup_mb=4),
        Cluster(1, 2, 1),
        Heuristic.MAP_OUTPUT_COMPRESSION,
        config="[map_output_compression]\noutput_gb = [0, 0, 0, 0]\n",
        config_why="the default caps the grade by the map output's size (Severe from 10 GB, for clusters); a "
                   "local run's output is MBs, so the loop grades by the share of task time moving it alone",
        pays=False,  # the engine's spills and fetches go through the page cache: a codec only adds its CPU
    ),
    Case(
        "one_reduce",
        "one reduce for the whole 128 MB shuffle on two reduce slots (half of them idle through the reduce "
        "stage; at 32 MB two reduces' stage measured 0.70-0.91 s against one's 0.80-0.96 s, no saving beyond "
        "the noise; at 128 MB 1.48-1.67 s against 2.62-2.80 s; at 256 MB whole runs of 6.96-8.77 s against "
        "6.86-7.28 s, none either)",
        EngineJob(input_mb=128, selectivity=1.0, maps=2, reduces=1, map_parallelism=2, reduce_parallelism=2,
                  warmup_mb=4),
        Cluster(1, 2, 2),
        Heuristic.REDUCE_SLOTS_IDLE,
    ),
)


@dataclass(frozen=True, slots=True)
class Outcome:
    case: str
    finding: Finding
    recommendation: Recommendation
    measured_before_s: tuple[float, ...]
    measured_after_s: tuple[float, ...]
    #: cores other processes kept busy through each run (:func:`_others_cores`; ``None`` off Linux)
    others_before: tuple[float | None, ...] = ()
    others_after: tuple[float | None, ...] = ()

    @property
    def measured_saving_s(self) -> float:
        """Best before - best after: the runs least disturbed by other processes (as ``timeit`` takes the minimum)."""
        return min(self.measured_before_s) - min(self.measured_after_s)

    @property
    def realized(self) -> float:
        """Measured saving / predicted saving."""
        return self.measured_saving_s / self.recommendation.saving_s

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "heuristic": str(self.finding.heuristic),
            "severity": self.finding.severity.label,
            "finding": self.finding.detail,
            "settings": self.recommendation.hadoop_settings,
            "predicted_before_s": self.recommendation.baseline_s,
            "predicted_after_s": self.recommendation.predicted_s,
            "predicted_saving_s": self.recommendation.saving_s,
            "measured_before_s": list(self.measured_before_s),
            "measured_after_s": list(self.measured_after_s),
            "measured_saving_s": self.measured_saving_s,
            "others_cores_before": list(self.others_before),
            "others_cores_after": list(self.others_after),
            "realized": self.realized,
            "model_notes": list(self.recommendation.notes),
        }


def _span_s(store: Store, job_id: str) -> float:
    summary = queries.require_job(store.connect(), job_id)
    return float(summary["last_finish_ms"] - summary["first_start_ms"]) / 1000


def _busy_s() -> float | None:
    """Seconds of CPU the whole machine has spent busy since boot (``/proc/stat``), ``None`` off Linux."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _others_cores(busy0: float | None, cpu0: float, start: float) -> float | None:
    """Cores other processes kept busy since ``busy0``/``cpu0``/``start``: the machine's busy time less the
    engine JVM's (a waited-for child's), over the wall time.  A run's time on a shared machine has their
    work in it: a second reduce slot gains nothing while another process holds the second core."""
    busy1 = _busy_s()
    if busy0 is None or busy1 is None:
        return None
    return max(0.0, (busy1 - busy0) - (_children_cpu_s() - cpu0)) / (time.monotonic() - start)


def _run(job: EngineJob, run_dir: Path, store: Store, ids: list[str], others: list[float | None]) -> None:
    """Run ``job`` once into ``run_dir`` and the store; its job id and the cores others kept busy appended."""
    busy0, cpu0, start = _busy_s(), _children_cpu_s(), time.monotonic()
    run = run_engine(job, run_dir)
    others.append(_others_cores(busy0, cpu0, start))
    ingest_paths([run.run_dir], store)
    ids.append(run.job_id)


def run_case(case: Case, out: Path, repeats: int, sample: Path = REPO / "sample_traces") -> Outcome:
    """The loop for one case (engine runs under ``out``); raises AssertionError where doctor does not flag it."""
    store = Store(out / "store")
    ingest_paths([sample], store)
    before: list[str] = []
    others_before: list[float | None] = []
    _run(case.job, out / "before" / "run0", store, before, others_before)  # the run the doctor reads
    con = store.connect()
    config = None
    if case.config:
        (out / "doctor.toml").write_text(f"version = 1\n{case.config}", encoding="utf-8")
        config = DoctorConfig.load(out / "doctor.toml")  # as `phaseline doctor --config` reads it
    diagnosis = diagnose(con, before[0], config)
    finding = next((f for f in diagnosis.findings if f.heuristic == case.heuristic), None)
    if finding is None or finding.severity < Severity.SEVERE:
        raise AssertionError(f"{case.name}: doctor did not flag {case.heuristic} Severe or worse: {finding}")
    platform = fit_platform(profile_from_connection(con, source="doctor loop", job_name=BENCH_APP),
                            skip_unfittable=True)  # fmt: skip
    search = search_job(con, diagnosis, platform, case.cluster, min_severity=Severity.SEVERE)
    found = [r for r in search.found if case.heuristic in r.heuristics]
    if case.pays:
        if not found:
            raise AssertionError(f"{case.name}: no recommendation answers {case.heuristic}")
        best = found[0]
    else:
        if found:
            raise AssertionError(f"{case.name}: the model recommends what does not pay here: {found[0].summary}")
        if case.heuristic not in search.passed_over:
            raise AssertionError(f"{case.name}: the search priced no setting of {case.heuristic}")
        best = search.passed_over[case.heuristic]
    fixed = dataclasses.replace(case.job, hadoop_conf={**case.job.hadoop_conf, **best.hadoop_settings})
    # the other runs alternate, after then before, so that a drift of the machine falls on both alike
    after: list[str] = []
    others_after: list[float | None] = []
    for i in range(repeats):
        _run(fixed, out / "after" / f"run{i}", store, after, others_after)
        if i + 1 < repeats:
            _run(case.job, out / "before" / f"run{i + 1}", store, before, others_before)
    return Outcome(case.name, finding, best, tuple(_span_s(store, j) for j in before),
                   tuple(_span_s(store, j) for j in after), tuple(others_before), tuple(others_after))  # fmt: skip


def write_markdown(outcomes: list[Outcome], path: Path, repeats: int, load: tuple[float, float, float]) -> None:
    lines = [
        "# The doctor's loop on the local engine",
        "",
        "Misconfigured jobs run on LocalJobRunner, diagnosed by `phaseline doctor`, re-run with the best",
        "`--recommend` settings (Herodotou's what-if, platform model fitted from the bundled sample",
        f"traces and these runs) as `-D` options.  Times are the best of {repeats} runs each (the least disturbed by",
        "other work), first task start to last task finish; after the first run before (the one the doctor",
        "reads), the runs after and before alternate, so that a drift of the machine falls on both alike.",
        "`benchmarks/bench_doctor.py` regenerates this file; `tests/profiles/test_doctor_loop.py` (slow) runs the",
        f"same loop and asks the measured saving to be at least {MIN_REALIZED:.0%} of the predicted one.",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load average "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min) at the start.",
        "",
        "| case | finding | severity | settings | predicted before -> after (saving) | measured before -> after (saving) | realized |",
        "|---|---|---|---|---|---|---|",
    ]
    by_name = {c.name: c for c in CASES}
    for o in outcomes:
        r = o.recommendation
        before, after = min(o.measured_before_s), min(o.measured_after_s)
        realized = (f"{o.realized:.0%}" if by_name[o.case].pays else
                    f"not recommended; measured {o.measured_saving_s / before:.0%} of the job")  # fmt: skip
        lines.append(
            f"| {o.case} | {o.finding.heuristic}: {o.finding.detail} | {o.finding.severity.label} "
            f"| {', '.join(e.label for e in (*r.edits, *r.companions))} | {r.baseline_s:.2f} -> {r.predicted_s:.2f} s ({r.saving_s:.2f} s) "
            f"| {before:.2f} -> {after:.2f} s ({o.measured_saving_s:.2f} s) | {realized} |"
        )
    unpaid = [o.case for o in outcomes if not by_name[o.case].pays]
    if unpaid:
        lines += ["", f"{', '.join(unpaid)}: the finding's own setting is predicted slower, so `--recommend` passes it "
                  "over; the loop runs it anyway and asks its measured saving to stay under "
                  f"{MAX_UNPAID_SHARE:.0%} of the job's time (the model's \"no\", checked as its \"yes\" is)."]
    for o in outcomes:
        case = by_name[o.case]
        if case.config:
            lines += ["", f"{o.case}: doctor ran with `--config` thresholds `{case.config.strip()}`: {case.config_why}."]
    for o in outcomes:
        if o.recommendation.notes:
            lines += ["", f"{o.case}: the model warned of its prediction of the new settings:", ""]
            lines += [f"- {n}" for n in o.recommendation.notes]
    lines += ["", "The cases:", ""]
    lines += [f"- {o.case}: {by_name[o.case].what}" for o in outcomes]
    lines += ["", "Measured runs (s), their spread ((max - min) / median), and the saving the medians give:", ""]
    for o in outcomes:
        b, a = o.measured_before_s, o.measured_after_s
        spread = [(max(v) - min(v)) / statistics.median(v) for v in (b, a)]
        median_saving = statistics.median(b) - statistics.median(a)
        lines.append(f"- {o.case}: before {', '.join(f'{v:.2f}' for v in b)} ({spread[0]:.0%}); "
                     f"after {', '.join(f'{v:.2f}' for v in a)} ({spread[1]:.0%}); medians "
                     f"{statistics.median(b):.2f} -> {statistics.median(a):.2f} s ({median_saving:.2f} s, "
                     f"{median_saving / o.recommendation.saving_s:.0%} of the predicted saving)"
                     f"{_others_line(o)}")  # fmt: skip
    if load[0] > (os.cpu_count() or 1):
        lines += ["", f"The machine was loaded (load average {load[0]:.1f} on {os.cpu_count()} cores): other "
                  "processes' work is in these times, and a saving smaller than the runs' spread is not measured."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _others_line(o: Outcome) -> str:
    def cores(values: tuple[float | None, ...]) -> str:
        return ", ".join("?" if v is None else f"{v:.1f}" for v in values)

    if not any(v is not None for v in (*o.others_before, *o.others_after)):
        return ""
    return f"; other processes' busy cores through the runs: before {cores(o.others_before)}, after {cores(o.others_after)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/phaseline-doctor-loop"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--case", action="append", help="only these cases (by name)")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    outcomes = [run_case(c, args.out / c.name, args.repeats) for c in CASES if not args.case or c.name in args.case]
    write_markdown(outcomes, REPO / "benchmarks" / "DOCTOR.md", args.repeats, load)
    (REPO / "benchmarks" / "doctor.json").write_text(json.dumps([o.to_dict() for o in outcomes], indent=1) + "\n")
    for o in outcomes:
        print(f"{o.case}: predicted saving {o.recommendation.saving_s:.2f} s, measured {o.measured_saving_s:.2f} s "
              f"({o.realized:.0%})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
