"""Mutation fuzzing over every real fixture: only phaseline's own errors, no hangs, no lost good files.

The default run does :data:`DEFAULT_CASES` cases; ``-m fuzz_full`` runs
:data:`FULL_CASES`.  A failing case prints its fixture and seed; replay it with
``tests.mutations.mutate(fixture_bytes, seed)``.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from ingest.base import ReadContext, Row, RowBlock, row_count
from ingest.formats import Reader, detect
from ingest.jhist import sniff_jhist
from ingest.jhist_merge import read_jhist_split
from ingest.jhist_split import line_cuts
from ingest.opening import read_head
from ingest.pipeline import ingest_paths
from phaseline.errors import PhaselineError
from phaseline.store import Store
from phaseline.verify import verify_store
from tests.conftest import FIXTURES
from tests.mutations import mutate

DEFAULT_CASES = int(os.environ.get("PHASELINE_FUZZ_CASES", "500"))
FULL_CASES = 10_000
CASE_TIME_LIMIT_S = 20  # CPU seconds per case (wall-clock limit for the batch test)
_SKIP = {"MANIFEST.tsv", "SOURCES.md"}
#: Ranges of a plain ``.jhist`` read in ranges: a few lines each, so every file is cut many times.
SPLIT_RANGE_BYTES = 3_000


#: YARN aggregated logs as the NodeManagers uploaded them (binary TFiles and indexed-format files, made by this
#: project's YARN engine).
UPLOADED = Path(__file__).parents[1] / "data" / "yarn" / "uploaded"
#: Hadoop 3's binary job history (``Avro-Binary``), made by the same engine.
BINARY_HISTORY = Path(__file__).parents[1] / "data" / "yarn" / "binary-history"
#: A JobHistoryServer's and a ResourceManager's summary logs, made by the same engine.
SUMMARIES = Path(__file__).parents[1] / "data" / "yarn" / "job-summary"


def fixture_files() -> list[Path]:
    made_here = [p for p in UPLOADED.rglob("localhost_*") if p.is_file()] + list(BINARY_HISTORY.glob("*.jhist"))
    made_here += list(SUMMARIES.rglob("*.log"))
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name not in _SKIP) + sorted(made_here)


class CaseTimeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise CaseTimeout


def _rows_and_error(read: Reader, path: Path) -> tuple[int, PhaselineError | None]:
    ctx = ReadContext(path=path, sha256="0" * 64)
    rows = 0
    try:
        for item in read(path, ctx):
            rows += row_count(item)
    except PhaselineError as exc:
        return rows, exc
    return rows, None


def _read_split(path: Path, ctx: ReadContext) -> Iterator[Row | RowBlock]:
    return read_jhist_split(path, ctx, line_cuts(path, SPLIT_RANGE_BYTES))


def read_all(path: Path) -> int:
    """Detect and read a file like the pipeline does; returns rows produced.

    A plain ``.jhist`` is also read in ranges (:mod:`ingest.jhist_split`, as workers read a large
    one): the same rows and the same error, or none.
    """
    head = read_head(path)
    fmt = detect(path, head)
    if fmt is None or not fmt.landed:
        return 0
    rows, error = _rows_and_error(fmt.read, path)
    if fmt.name == "jhist" and sniff_jhist(path.read_bytes()[:64], path):  # (plain JSON history: not binary)
        split_rows, split_error = _rows_and_error(_read_split, path)
        assert (split_rows, str(split_error)) == (rows, str(error)), "read in ranges, the file reads otherwise"
    if error is not None:
        raise error
    return rows


def run_cases(tmp_path: Path, n: int, offset: int) -> None:
    files = fixture_files()
    assert files, "no fixtures found"
    originals = {f: f.read_bytes() for f in files}
    # The limit is CPU time (ITIMER_PROF): a reader that spins is caught, a machine that
    # is merely busy with other work is not mistaken for a hang.
    previous = signal.signal(signal.SIGPROF, _alarm)
    try:
        for i in range(n):
            seed = offset + i
            src = files[seed % len(files)]
            data, op = mutate(originals[src], seed)
            case = tmp_path / f"case-{seed}-{src.name}"
            case.write_bytes(data)
            signal.setitimer(signal.ITIMER_PROF, CASE_TIME_LIMIT_S)
            try:
                read_all(case)
            except PhaselineError:
                pass
            except CaseTimeout:
                pytest.fail(f"hang: {src} seed={seed} mutation={op}")
            except Exception as exc:
                pytest.fail(f"{type(exc).__name__} escaped: {src} seed={seed} mutation={op}: {exc}")
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
                case.unlink()
    finally:
        signal.signal(signal.SIGPROF, previous)


def test_mutated_fixtures_raise_only_phaseline_errors(tmp_path: Path) -> None:
    run_cases(tmp_path, DEFAULT_CASES, offset=0)


@pytest.mark.fuzz_full
def test_mutated_fixtures_full_run(tmp_path: Path) -> None:
    run_cases(tmp_path, FULL_CASES, offset=1_000_000)


@pytest.mark.parametrize("batch", range(6))
def test_good_files_land_beside_mutated_ones(tmp_path: Path, batch: int) -> None:
    """A batch of mutated copies plus pristine fixtures: the pristine ones land exactly as alone."""
    files = [f for f in fixture_files() if f.stat().st_size < 400_000]
    pristine = files[batch::6][:3]
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for k, f in enumerate(files[batch::6][:8]):
        data, _ = mutate(f.read_bytes(), 7_000 + batch * 100 + k)
        (mixed / f"m{k}-{f.name}").write_bytes(data)
    alone = ingest_paths(pristine, Store(tmp_path / "alone"))
    together_store = Store(tmp_path / "together")
    together = ingest_paths([*pristine, mixed], together_store, file_timeout_s=CASE_TIME_LIMIT_S)
    assert verify_store(together_store).ok
    # the pipeline quarantines a file a reader's bug stops (the batch goes on): none may be here
    assert not [r.error for r in together.results if "internal error" in (r.error or "")]
    by_path = {r.path: r for r in together.results}
    for r in alone.results:
        assert by_path[r.path].status == r.status
        assert by_path[r.path].rows == r.rows
