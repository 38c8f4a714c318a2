"""Simulated runs written as ``.jhist`` files, for the backtest tests that ingest them into a store."""

from __future__ import annotations

from pathlib import Path

from predict.jhist_writer import SimTrace, write_jhist
from predict.simulate import SimRun


def write_sim_run(
    run: SimRun,
    out: Path,
    *,
    seq: int,
    name: str,
    maps: int,
    reduces: int,
    map_bytes: float,
    map_records: int,
    reduce_records: int,
    counted: bool = True,
) -> Path:
    """Write ``run`` (``simulate_once(..., record=True)``) as job ``seq`` named ``name``, in the new
    directory ``out``; returns the ``.jhist`` written.

    Each map reads and writes ``map_bytes`` in ``map_records`` records (``counted=False``: it counts
    no input records, so the run cannot be profiled); each reduce gets ``reduce_records`` records and
    an even share of the maps' output bytes, and writes as many records as it got.
    """
    records = {"MAP_INPUT_RECORDS": map_records} if counted else {}
    trace = SimTrace(
        sequence=seq,
        job_name=name,
        submit_ms=1_700_000_000_000 + seq * 1_000_000,
        map_counters={**records, "MAP_OUTPUT_RECORDS": map_records, "MAP_OUTPUT_BYTES": int(map_bytes)},
        reduce_counters={
            "REDUCE_INPUT_RECORDS": reduce_records,
            "REDUCE_SHUFFLE_BYTES": int(maps * map_bytes // reduces),
            "REDUCE_OUTPUT_RECORDS": reduce_records,
        },
        map_input_bytes=int(map_bytes),
    )
    out.mkdir(parents=True)
    return write_jhist(run, out, n_maps=maps, n_reduces=reduces, trace=trace)
