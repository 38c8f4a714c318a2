"""Traces of two days and two clusters for the partitioned store's tests, made from one real history.

The seed is a real ``.jhist`` and its ``_conf.xml`` (Dr. Elephant's history-done fixture);
each copy gets another job id (cluster part and sequence number, in the file name and in
every id inside) and every timestamp shifted so that the job was submitted at 10:00 UTC
on its day.  The first day's files sit in a history server's ``done/YYYY/MM/DD/<serial>/``
tree under done-file names; the second day's lie flat, named ``job_<id>.jhist``, so that
their day comes from the submit time inside.  Beside them: a file with no job (not a
trace), a ``.jhist`` whose header is unusable (quarantined), and a cut copy of one of the
second day's histories (lands partial; the views keep the whole copy's account of the job).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from ingest.history_dirs import done_name_times

SEED_JOB = "1526555215992_0001"
SEED_DIR = "linkedin-dr-elephant/history-done"
DAYS = ("2026-11-27", "2026-11-28")
CLUSTERS = ("1764000000001", "1764000000002")
JOBS_PER_PARTITION = 2
#: The quarantined file: its cluster is known from its name, its day from nothing.
BAD_NAME = f"job_{CLUSTERS[0]}_0009.jhist"
BAD_TEXT = 'Avro-Json\n{"type":"record","name":"Event","fields":[]}\n\n{"type":"JOB_SUBMITTED","event":{'
NOT_A_TRACE = "notes.txt"
#: The job two sources describe: its whole history and a copy cut at half its lines.
CUT_JOB = f"job_{CLUSTERS[1]}_0003"
CUT_NAME = f"{CUT_JOB}-cut.jhist"
#: A timestamp of the seed's run (2018-05-17), not the cluster part of an id (``_`` before it).
_SEED_TIME = re.compile(r"(?<![\d_])1526\d{9}(?![\d_])")


def _shift(text: str, by_ms: int) -> str:
    return _SEED_TIME.sub(lambda m: str(int(m.group(0)) + by_ms), text)


def job_ids() -> dict[str, tuple[str, str]]:
    """Every good job's id -> its (day, cluster)."""
    return {
        f"job_{cluster}_{1 + d * JOBS_PER_PARTITION + i:04d}": (day, cluster)
        for d, day in enumerate(DAYS)
        for cluster in CLUSTERS
        for i in range(JOBS_PER_PARTITION)
    }


def write_traces(fixtures_dir: Path, out: Path) -> Path:
    """The traces under ``out`` (returned): per day and cluster, two jobs' ``.jhist`` and conf."""
    seed = next((fixtures_dir / SEED_DIR).glob(f"job_{SEED_JOB}-*.jhist"))
    conf = seed.with_name(f"job_{SEED_JOB}_conf.xml")
    times = done_name_times(seed.name)
    assert times is not None
    submitted = times[1]
    for job, (day, _) in job_ids().items():
        run = job.removeprefix("job_")
        at = datetime.fromisoformat(f"{day}T10:00:00+00:00").astimezone(UTC)
        shift = int(at.timestamp() * 1000) - submitted
        if day == DAYS[0]:
            directory = out / "done" / day.replace("-", "/") / "000000"
            name = _shift(seed.name.replace(SEED_JOB, run), shift)
        else:
            directory = out / "flat"
            name = f"{job}.jhist"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(_shift(seed.read_text().replace(SEED_JOB, run), shift))
        (directory / f"{job}_conf.xml").write_text(_shift(conf.read_text().replace(SEED_JOB, run), shift))
    (out / "flat" / BAD_NAME).write_text(BAD_TEXT)
    lines = (out / "flat" / f"{CUT_JOB}.jhist").read_text().splitlines(keepends=True)
    (out / "flat" / CUT_NAME).write_text("".join(lines[: len(lines) // 2]))
    (out / "flat" / NOT_A_TRACE).write_text("a note beside the traces, naming no job\n")
    return out
