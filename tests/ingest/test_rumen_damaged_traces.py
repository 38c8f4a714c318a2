"""Real Rumen traces damaged: malformed jobs, tasks and values skipped and named, cuts kept, mutations."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reader_checks import mutations, read_checked, table

from ingest.base import ReadContext, Row
from ingest.json_stream import iter_json_objects
from ingest.pipeline import ingest_paths
from ingest.rumen import read_rumen
from phaseline.errors import TraceTruncatedError
from phaseline.store import Store
from tests.ingest.rumen_helpers import MUMAK, read


def test_a_malformed_job_of_the_mumak_trace_is_skipped_and_the_rest_lands(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    # One job per line (19 jobs): a byte of job 5 made unreadable JSON leaves the other 18 jobs' rows exactly.
    src = fixtures_dir / MUMAK / "19-jobs.trace.json.gz"
    lines = gzip.decompress(src.read_bytes()).decode().splitlines(keepends=True)
    victim = json.loads(lines[4])["jobID"]
    lines[4] = lines[4].replace('"user":', '"user" ', 1)
    path = tmp_path / "bad.trace.json.gz"
    path.write_bytes(gzip.compress("".join(lines).encode()))
    ctx = ReadContext(path)
    rows = list(read_rumen(path, ctx))
    (error,) = ctx.skipped
    assert "malformed JSON" in error.message
    assert error.line == 5
    pristine = read(src)
    assert len(table(rows, "jobs")) == 18
    for name in ("tasks", "attempts", "counters", "conf"):
        assert table(rows, name) == [r for r in table(pristine, name) if r["job_id"] != victim], name

    def events(of: list[Row]) -> list[tuple[object, ...]]:  # seq counts the file's events: it shifts
        return [(e["job_id"], e["event_type"], e["ts_ms"], e["payload_json"]) for e in table(of, "events")]

    assert events(rows) == [e for e in events(pristine) if e[0] != victim]
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert "1 unreadable record skipped (line 5)" in (result.error or "")


@pytest.mark.parametrize("indent", [None, 2])
def test_a_malformed_pretty_printed_job_is_skipped_to_the_next(
    fixtures_dir: Path, tmp_path: Path, indent: int | None
) -> None:
    # Three copies of gridmix's real word count job, as Jackson wrote it (indent None: the file's own
    # text) or re-printed with nested objects starting their own lines; the middle one is broken.
    text = (fixtures_dir / "apache-hadoop/hadoop-gridmix/wordcount.json").read_text()
    if indent is not None:
        text = json.dumps(json.loads(text), indent=indent) + "\n"
    copies = [text.replace("job_201009241532_0001", f"job_201009241532_000{k}") for k in (1, 2, 3)]
    copies[1] = copies[1].replace('"SUCCESS"', "SUCCESS", 2)  # an attempt's result, unquoted
    path = tmp_path / "three.json"
    path.write_text("".join(copies))
    ctx = ReadContext(path)
    rows = list(read_rumen(path, ctx))
    (error,) = ctx.skipped
    assert "malformed JSON" in error.message
    assert error.line == copies[0].count("\n") + copies[1][: copies[1].index("SUCCESS")].count("\n") + 1
    assert [j["job_id"] for j in table(rows, "jobs")] == ["job_201009241532_0001", "job_201009241532_0003"]
    once = read(fixtures_dir / "apache-hadoop/hadoop-gridmix/wordcount.json")
    assert len(table(rows, "attempts")) == 2 * len(table(once, "attempts")) > 0


def test_an_unreadable_task_or_attempt_is_skipped_and_its_job_kept(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    src = fixtures_dir / MUMAK / "19-jobs.trace.json.gz"
    job = json.loads(gzip.decompress(src.read_bytes()).decode().splitlines()[0])
    tasks = job["mapTasks"]
    bad_task, bad_attempt = tasks[0]["taskID"], tasks[1]["attempts"][0]["attemptID"]
    tasks[0]["startTime"] = "noon"
    tasks[1]["attempts"][0]["hdfsBytesRead"] = [1]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(job))
    ctx = ReadContext(path)
    rows = list(read_rumen(path, ctx))
    assert [e.message for e in ctx.skipped] == [
        f"{bad_task}.startTime = 'noon' is not an integer",
        f"{bad_attempt}.hdfsBytesRead = '[1]' is not an integer",
    ]
    assert bad_task not in {t["task_id"] for t in table(rows, "tasks")}
    assert tasks[1]["taskID"] in {t["task_id"] for t in table(rows, "tasks")}
    assert bad_attempt not in {a["attempt_id"] for a in table(rows, "attempts")}
    assert bad_attempt not in {c["attempt_id"] for c in table(rows, "counters")}
    n_tasks = len(job["mapTasks"]) + len(job["reduceTasks"]) + len(job["otherTasks"])
    assert len(table(rows, "tasks")) == n_tasks - 1
    assert ctx.events_read == len(table(rows, "events")) == n_tasks  # the job and its readable tasks


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), gz=st.booleans())
def test_mutated_real_trace_raises_only_phaseline_errors(
    fuzz_dir: Path, fixtures_dir: Path, data: st.DataObject, gz: bool
) -> None:
    seed = (fixtures_dir / "apache-hadoop/hadoop-gridmix/wordcount.json").read_bytes()
    mutated = data.draw(mutations(seed))
    path = fuzz_dir / "mutated.json"
    path.write_bytes(gzip.compress(mutated) if gz else mutated)
    error = read_checked(read_rumen, path)
    assert error is None or str(path) in str(error)


def test_an_integer_past_64_bits_in_a_kept_field_is_kept_as_its_digits(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    # A flipped byte made a field phaseline only keeps (in the RumenJob event) a 70-bit integer; the
    # stdlib decoder reads it, orjson could not write it back: a TypeError, not a phaseline error
    obj = json.loads((fixtures_dir / "apache-hadoop/hadoop-gridmix/wordcount.json").read_text())
    obj["clusterMapMB"] = 2**70
    path = tmp_path / "big.json"
    path.write_text(json.dumps(obj))
    events = table(read(path), "events")
    job = next(e for e in events if e["event_type"] == "RumenJob")
    assert json.loads(job["payload_json"])["clusterMapMB"] == str(2**70)
    assert len(table(read(path), "jobs")) == 1


def test_a_malformed_value_is_told_without_reading_the_rest_of_the_stream(fixtures_dir: Path) -> None:
    # The mumak trace (11.5 M characters) with its first job broken: the skip and the next job come after
    # one read block, not after reading to the end (as before, to tell a bad value from a value cut by the buffer).
    text = gzip.decompress((fixtures_dir / MUMAK / "19-jobs.trace.json.gz").read_bytes()).decode()
    lines = text.splitlines(keepends=True)
    lines[0] = lines[0].replace('"user":', '"user" ', 1)
    read_chars = []

    class Counting(io.StringIO):
        def read(self, size: int | None = -1) -> str:
            got = super().read(size)
            read_chars.append(len(got))
            return got

    path = Path("mumak-broken.json")
    ctx = ReadContext(path)
    jobs = iter_json_objects(
        Counting("".join(lines)), path, ctx, lambda v: isinstance(v, dict) and "jobID" in v
    )
    line, job = next(jobs)
    assert (line, job["jobID"]) == (2, json.loads(lines[1])["jobID"])
    assert [e.line for e in ctx.skipped] == [1]
    assert sum(read_chars) <= 1 << 20 < len(text) // 10


@pytest.mark.parametrize("name", ["apache-hadoop/hadoop-sls/2jobs2min-rumen-jh.json",
                                  "apache-hadoop/hadoop-gridmix/wordcount.json"])  # fmt: skip
def test_a_job_cut_inside_its_task_lists_keeps_its_complete_tasks(fixtures_dir: Path, tmp_path: Path,
                                                                    name: str) -> None:  # fmt: skip
    src = fixtures_dir / name
    text = src.read_text()
    last = text.rfind('"jobID"')  # cut the last job halfway: inside its task lists
    path = tmp_path / "cut.json"
    path.write_text(text[: (last + len(text)) // 2])
    ctx = ReadContext(path)
    rows: list[Row] = []
    with pytest.raises(TraceTruncatedError) as info:
        rows.extend(read_rumen(path, ctx))
    assert "the complete parts of the one it cut" in (info.value.hint or "")
    pristine = read(src)
    cut_job = table(pristine, "jobs")[-1]["job_id"]
    assert any(f"{cut_job} was cut short inside its task lists" in n for n in ctx.notes)
    tasks = table(rows, "tasks")
    assert (
        0
        < sum(t["job_id"] == cut_job for t in tasks)
        < sum(t["job_id"] == cut_job for t in table(pristine, "tasks"))
    )
    for name_ in ("tasks", "attempts", "counters"):  # what landed is what the whole trace says of it
        got = table(rows, name_)
        assert got == [r for r in table(pristine, name_) if r in got], name_
    landed = {t["task_id"] for t in tasks}
    assert {a["task_id"] for a in table(rows, "attempts")} <= landed  # no attempt of a task cut away
