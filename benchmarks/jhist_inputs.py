"""Generated ``.jhist`` inputs for the ingest benchmarks, made from a real history file.

The seed is Dr. Elephant's QuasiMonteCarlo job (a real Hadoop 2.7 history in
``tests/data/fixtures``): :func:`write_big_jhist` copies its task and attempt
events with fresh task, attempt and container ids into one large job;
:func:`write_small_files` writes many copies of the whole job, each under its
own job id (in the file name and in every id inside).  Hadoop's
``JobHistoryParser`` reads both (the benchmark checks every file it parses).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from common import FIXTURES

SEED_GLOB = "job_1526555215992_0001-*.jhist"
SEED_JOB = b"1526555215992_0001"
_TASK_IDS = re.compile(
    rb"(task|attempt)_1526555215992_0001_([mr])_(\d{6})|container_1526555215992_0001_01_(\d{6})"
)


def seed_path() -> Path:
    """The seed history file."""
    return next(FIXTURES.rglob(SEED_GLOB))


@dataclass(frozen=True, slots=True)
class Seed:
    """The seed history split into the parts a generator replicates."""

    name: str
    header: tuple[bytes, ...]  # "Avro-Json" and the schema line
    job_start: tuple[bytes, ...]
    body: tuple[bytes, ...]  # task and attempt events (with their blank separator lines)
    job_end: tuple[bytes, ...]

    @classmethod
    def load(cls) -> Seed:
        path = seed_path()
        lines = path.read_bytes().splitlines(keepends=True)
        header, events = lines[:2], lines[2:]
        start_end = len(events)
        for i, ln in enumerate(events):
            if b'"type":"TASK_STARTED"' in ln:
                start_end = i
                break
        end_at = max(i for i, ln in enumerate(events) if b'"type":"JOB_FINISHED"' in ln)
        return cls(path.name, tuple(header), tuple(events[:start_end]), tuple(events[start_end:end_at]),
                   tuple(events[end_at:]))  # fmt: skip


def write_big_jhist(seed: Seed, target: Path, size_bytes: int) -> Path:
    """One job whose task/attempt events are copied with fresh ids until the file holds ``size_bytes``."""
    if target.exists() and abs(target.stat().st_size - size_bytes) < size_bytes * 0.1 + 100_000:
        return target
    body_bytes = sum(map(len, seed.body))
    fixed = sum(map(len, seed.header + seed.job_start + seed.job_end))
    copies = max(1, round((size_bytes - fixed) / body_bytes))
    tmp = target.with_suffix(".tmp")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as out:
        out.writelines(seed.header + seed.job_start)
        for k in range(copies):

            def fresh(m: re.Match[bytes], k: int = k) -> bytes:
                if m.group(4) is not None:
                    return b"container_1526555215992_0001_01_%06d" % (k * 10 + int(m.group(4)))
                return b"%s_1526555215992_0001_%s_%06d" % (m.group(1), m.group(2), k * 10 + int(m.group(3)))

            out.writelines(_TASK_IDS.sub(fresh, ln) for ln in seed.body)
        out.writelines(seed.job_end)
    tmp.replace(target)
    return target


def small_job_id(i: int) -> bytes:
    """The ``i``-th generated job id (cluster timestamp and sequence number), without ``job_``."""
    return b"%d_%04d" % (1_600_000_000_000 + i // 9_999, i % 9_999 + 1)


def write_small_files(seed: Seed, directory: Path, count: int) -> list[Path]:
    """``count`` copies of the seed job, each under its own job id (file name and every id inside)."""
    marker = directory / ".complete"
    if marker.exists() and marker.read_text() == str(count):
        return sorted(p for p in directory.iterdir() if p.suffix == ".jhist")
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    blob = b"".join(seed.header + seed.job_start + seed.body + seed.job_end)
    paths = []
    for i in range(count):
        jid = small_job_id(i)
        path = directory / seed.name.replace(SEED_JOB.decode(), jid.decode())
        path.write_bytes(blob.replace(SEED_JOB, jid))
        paths.append(path)
    marker.write_text(str(count))
    return sorted(paths)


def write_binary_history(json_history: Path, target: Path) -> Path | None:
    """``json_history`` written as Hadoop 3's binary flavour (``Avro-Binary``, its own schema line, then
    each event as an Avro binary datum, encoded by fastavro); ``None`` where fastavro cannot read the
    file's Avro-JSON (bare union values, as the 2.0-2.4 writers wrote them)."""
    import io

    import orjson
    from fastavro import json_reader, parse_schema, schemaless_writer

    lines = [ln for ln in json_history.read_bytes().splitlines() if ln.strip()]
    schema_line, events = lines[1], lines[2:]
    schema = parse_schema(orjson.loads(schema_line))
    try:
        records = list(json_reader(io.StringIO("\n".join(ln.decode() for ln in events)), schema))
    except Exception:  # (fastavro's errors on Avro-JSON it cannot take are of several kinds)
        return None
    data = io.BytesIO()
    data.write(b"Avro-Binary\n" + schema_line + b"\n")
    for raw, record in zip(events, records, strict=True):
        name = next(iter(orjson.loads(raw)["event"]))  # the event union's branch, written as (name, value)
        schemaless_writer(data, schema, {"type": record["type"], "event": (name, record["event"])})
    target.write_bytes(data.getvalue())
    return target

