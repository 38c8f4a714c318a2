"""A sort run of one reduce slot whose first reduce is slow, profiled: shared by the first-reduce and JIT tests."""

from __future__ import annotations

from pathlib import Path

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from predict.jhist_writer import SimTrace, write_jhist
from predict.simulate import Attempt, SimRun
from profiles.extract import extract_profile
from profiles.profile import JobProfile

SPLIT = 2**20
RECORDS = 10_000
#: The reduces' (shuffle, reduce phase) in ms, one after the other on one reduce slot.
REDUCES = [(40.0, 320.0), (12.0, 170.0)]


def local_sort_profile(tmp_path: Path, tracker: str | None = "local42") -> JobProfile:
    """A sort's profile from a written .jhist: four maps alike, then :data:`REDUCES` one after the other on one
    slot (a local job id, or a cluster's where ``tracker`` is None)."""
    attempts, t = [], 0.0
    for i in range(4):  # one map slot: each map after the other, all alike
        attempts.append(Attempt("MAP", i, 0, 0, t, t + 50.0, True))
        t += 50.0
    for i, (shuffle, phase) in enumerate(REDUCES):  # one reduce slot
        attempts.append(Attempt("REDUCE", i, 0, 0, t, t + shuffle + phase, True, shuffle_end_ms=t + shuffle))
        t += shuffle + phase
    run = SimRun(makespan_ms=t, events=12, attempts=tuple(attempts))
    per_reduce = {"REDUCE_INPUT_RECORDS": 2 * RECORDS, "REDUCE_OUTPUT_RECORDS": 2 * RECORDS,
                  "REDUCE_SHUFFLE_BYTES": 2 * SPLIT}  # fmt: skip
    trace = SimTrace(sequence=1, job_name="sort", tracker=tracker,
                     map_counters={"MAP_INPUT_RECORDS": RECORDS, "MAP_OUTPUT_RECORDS": RECORDS,
                                   "MAP_OUTPUT_BYTES": SPLIT},
                     reduce_counters=per_reduce, map_input_bytes=SPLIT, map_output_file_bytes=SPLIT)  # fmt: skip
    path = write_jhist(run, tmp_path, n_maps=4, n_reduces=len(REDUCES), trace=trace)
    store = Store(tmp_path / "store")
    ingest_paths([path], store)
    return extract_profile(store.connect(), trace.job_id)  # maps all alike: nothing to warn of
