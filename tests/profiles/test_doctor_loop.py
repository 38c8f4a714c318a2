"""The doctor's loop on the local engine (slow): misconfigured jobs are flagged Severe or Critical, and
the recommended settings, run for real, save at least 80 % of the time the model predicted.

The loop itself is ``benchmarks/bench_doctor.py`` (which also writes ``benchmarks/DOCTOR.md``); each
case runs its job twice before and twice after (about a minute and a half per case on two idle cores;
the 512 short maps of many_small_maps about two and a half).  The four cases are issue 39's: a sort
buffer so small each map spills many times, splits so small that hundreds of short maps run, map
output uncompressed where compressing it pays, one reduce for the shuffle.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_doctor  # noqa: E402 - benchmarks/ is a script directory, not a package

from profiles.doctor import Severity  # noqa: E402

#: Where other processes kept more than this many cores busy through a run (measured around each engine
#: run: the machine's busy time less the run's own, ``bench_doctor._others_cores``), the runs' times measure
#: their work too: the saving is then not asserted (the findings and the recommendation still are).  Half a
#: core of the two is a quarter of the machine.
MAX_OTHERS_CORES = 0.5
#: Off Linux (no /proc/stat) the load average stands in: above this per core, others run beside the jobs.
MAX_LOAD_PER_CORE = 1.0
#: Issue 39's loop is not closed for these cases (benchmarks/DOCTOR.md); not strict: a run that realizes
#: the saving passes.  one_reduce: the saving is the second reduce slot's, and it needs the machine's
#: second core.  uncompressed_map_output: the what-if halves the reduce phase with its assumed 0.5
#: compression ratio, where the reduce's time is not its bytes (Herodotou's reduce phase of the profiled run
#: is 10.2 s against 1.5-1.8 s measured, offset by a calibrated -11 s overhead that the edit rescales with it).
MISSES = {
    "one_reduce": "two reduces on two slots, 128 MB: predicted 1.14 s saving, measured 0.32 s (best of 3) while "
                  "another process held one of the two cores; 0.96 s (84 %) on an idle machine",
    "uncompressed_map_output": "LZ4 map output: predicted 1.10 s saving, measured 0.16 s (best of 3) and 0.37-0.57 "
                               "s in 3 interleaved pairs: the model over-prices the reduce's bytes",
}

@pytest.mark.slow
@pytest.mark.alone  # the saving is measured in seconds: ./dev test runs it after the tests it runs two at a time
# a small job's profile says its split of one-time from per-task cost rests on few maps (shown, not raised:
# the loop is what this test checks)
@pytest.mark.filterwarnings("default::phaseline.errors.DataQualityWarning")
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c.name, marks=pytest.mark.xfail(strict=False, reason=MISSES[c.name]))
        if c.name in MISSES else pytest.param(c, id=c.name)
        for c in bench_doctor.CASES
    ],
)  # fmt: skip
def test_the_loop_closes(case: bench_doctor.Case, tmp_path: Path) -> None:
    outcome = bench_doctor.run_case(case, tmp_path, repeats=2)
    assert outcome.finding.severity >= Severity.SEVERE
    assert outcome.recommendation.saving_s > 0
    assert case.heuristic in outcome.recommendation.heuristics
    others = [c for c in (*outcome.others_before, *outcome.others_after) if c is not None]
    if others:  # measured around the runs themselves (the load average lags: it still shows earlier tests)
        busy, limit, what = max(others), MAX_OTHERS_CORES, "core(s) busy with other processes through a run"
    else:
        busy, limit, what = os.getloadavg()[0] / (os.cpu_count() or 1), MAX_LOAD_PER_CORE, "load average per core"
    if busy > limit:
        pytest.skip(f"{busy:.1f} {what}: the measured saving "
                    f"({outcome.measured_saving_s:.2f} s of {outcome.recommendation.saving_s:.2f} s predicted) "
                    "measures the other processes too")  # fmt: skip
    assert outcome.realized >= bench_doctor.MIN_REALIZED, outcome.to_dict()
