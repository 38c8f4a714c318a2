"""The runs a backtest compares: every successful job of the store with its input size and measured
span (``backtest_runs.sql``), and how runs of one job form cases (:func:`group_cases`)."""

from __future__ import annotations

import importlib.resources
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from phaseline.errors import DataQualityWarning
from phaseline.hadoop_names import local_runner_job
from profiles import queries
from profiles.merge_runs import SELECTIVITY_SPREAD, selectivity_spread

__all__ = [
    "SAME_SIZE_RTOL", "Run", "case_labels", "group_cases", "load_runs", "profiled_index", "warn_if_mixed",
]  # fmt: skip

#: Input sizes within this relative distance are the same case.
SAME_SIZE_RTOL = 0.02

@dataclass(frozen=True, slots=True)
class Run:
    """One measured run of a job (a row of ``backtest_runs.sql``)."""

    job_id: str
    name: str
    maps: int
    reduces: int
    input_bytes: float
    span_ms: float
    map_slots: int
    reduce_slots: int
    local: bool
    map_selectivity: float | None = None  # map output / input bytes (job totals)


def load_runs(con: duckdb.DuckDBPyConnection, *, skipped: list[str] | None = None) -> list[Run]:
    """Every successful job with an input size and a measured task span, from the store.

    The input size is the job's FileInputFormat ``BYTES_READ`` (Hadoop 2/3's
    ``FileInputFormatCounter``, 1.x's ``FileInputFormat$Counter``), else
    0.20's ``MAP_INPUT_BYTES``; but for a LocalJobRunner run, the sum of its
    maps' split lengths as ``data_skew.sql`` reads them (a map run beside
    another in the one JVM counts the other's reads too, since the counter is a
    delta of the JVM's file-system statistics: 77 MiB counted for a 64 MiB input
    on two slots), the same measure on one slot as on two.  A cluster's job whose FileInputFormat
    counts 0 bytes (several input formats through MultipleInputs: its splits are not FileSplits
    to the counting reader) is sized the same way, from its maps' inputs.
    Jobs without one (or with 0 bytes), and jobs
    without a positive task span, are left out; how many of each is appended
    to ``skipped``.
    """
    sql = importlib.resources.files("predict").joinpath("backtest_runs.sql").read_text("utf-8")
    queries.install(con, queries.Concept.JOB_SUMMARY)  # the span's one definition (backtest_runs.sql)
    out = []
    no_input: list[str] = []
    no_span: list[str] = []
    for job_id, name, maps, reduces, input_bytes, selectivity, span, _submit, m_slots, r_slots in con.execute(
        sql
    ).fetchall():
        local = local_runner_job(str(job_id))
        if local:  # (a job of several input formats, MultipleInputs, counts no BYTES_READ at all)
            counted = float(input_bytes) if input_bytes is not None and input_bytes > 0 else None
            input_bytes = _maps_input(con, str(job_id)) or counted
            if selectivity is not None and counted is not None and input_bytes:
                selectivity = float(selectivity) * counted / input_bytes
        elif input_bytes == 0:  # counted, as 0: MultipleInputs on a cluster; its maps' own inputs
            input_bytes = _maps_input(con, str(job_id))
        if input_bytes is None or input_bytes <= 0:
            no_input.append(str(job_id))
            continue
        if span is None or span <= 0:
            no_span.append(str(job_id))
            continue
        out.append(
            Run(
                job_id,
                name,
                int(maps or 0),
                int(reduces or 0),
                float(input_bytes),
                float(span),
                int(m_slots or 1),
                int(r_slots or 1),
                local,
                None if selectivity is None else float(selectivity),
            )
        )
    if skipped is not None and no_input:
        skipped.append(
            f"{len(no_input)} job(s) without an input size to scale by (no FileInputFormat BYTES_READ or "
            f"MAP_INPUT_BYTES job counter, or 0 bytes), e.g. {no_input[0]}: not backtested"
        )
    if skipped is not None and no_span:
        skipped.append(
            f"{len(no_span)} job(s) without a measured task span (no successful map or reduce attempt with "
            f"its start and finish), e.g. {no_span[0]}: not backtested"
        )
    return out


def _maps_input(con: duckdb.DuckDBPyConnection, job_id: str) -> float | None:
    """The job's maps' inputs summed as ``data_skew.sql`` reads each (split lengths where the counters cannot say)."""
    maps = queries.data_skew(con, job_id)
    sizes = maps.loc[maps["task_type"] == "MAP", "input_bytes"].dropna()
    total = float(sizes.sum())
    return total if total > 0 else None


def warn_if_mixed(name: str, runs: Sequence[Run]) -> None:
    """Warn when runs under one name differ in map selectivity as :func:`merge_profiles` warns for them."""
    spread = selectivity_spread([r.map_selectivity for r in runs])
    if spread is not None:
        low, high = spread
        warnings.warn(
            DataQualityWarning(
                f"runs named {name!r} differ in map selectivity ({low:.3g} to {high:.3g}, more than "
                f"x{SELECTIVITY_SPREAD:g}): other data or other code under one name, so their errors measure "
                "that, not the models"
            ),
            stacklevel=3,
        )


def group_cases(runs: Sequence[Run]) -> list[list[Run]]:
    """Runs grouped by (input size within SAME_SIZE_RTOL, maps, reduces, map slots), smallest input
    (then fewest slots) first.

    Runs of one input cut into other map counts (another split size) are other
    cases: their times differ by as much as other inputs' would; so are runs on
    other slots (LocalJobRunner's map parallelism).
    """
    groups: list[list[Run]] = []
    for run in sorted(runs, key=lambda r: (r.input_bytes, r.maps, r.reduces, r.map_slots, r.job_id)):
        for g in groups:
            ref = g[0]
            if (
                ref.reduces == run.reduces
                and ref.maps == run.maps
                and ref.map_slots == run.map_slots
                and abs(ref.input_bytes - run.input_bytes) <= SAME_SIZE_RTOL * ref.input_bytes
            ):
                g.append(run)
                break
        else:
            groups.append([run])
    return groups


def profiled_index(n_runs: int) -> int:
    """Which of the profiled case's runs, sorted by time, is profiled: the median, the lower of the
    two middle ones for an even count (what :func:`noise_floor` simulates)."""
    return (n_runs - 1) // 2


def _label(run: Run, digits: int | None = 1) -> str:
    """``input=8.1MiB maps=4 reduces=2``: the input in MiB to ``digits`` decimals, or in bytes (``None``),
    and `` slots=2`` where the run had more than one map slot."""
    size = f"{round(run.input_bytes)}B" if digits is None else f"{run.input_bytes / 2**20:.{digits}f}MiB"
    slots = f" slots={run.map_slots}" if run.map_slots > 1 else ""
    return f"input={size} maps={run.maps} reduces={run.reduces}{slots}"


def case_labels(cases: Sequence[Sequence[Run]]) -> list[str]:
    """One label per case (its first run's), unique: in MiB to one decimal, and where two cases'
    labels would be the same (cases 2 % apart at 1 MiB both round to ``1.0MiB``), those with more
    decimals until they differ (``0.96MiB``, ``1.04MiB``), else in bytes."""
    firsts = [case[0] for case in cases]
    labels = [_label(run) for run in firsts]
    for digits in (2, 3, 4, 5, 6, None):
        clash = {label for label in labels if labels.count(label) > 1}
        if not clash:
            break
        labels = [
            _label(run, digits) if label in clash else label for label, run in zip(labels, firsts, strict=True)
        ]
    return labels
