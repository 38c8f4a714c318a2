"""``--partition KEY=VALUE`` on the commands that read a store, and ``compact`` on a partitioned root.

A root made by ``phaseline ingest --partition-by day,cluster`` (through the CLI, a commit per
file so that each partition has small files to compact) is read through the CLI with
``--partition``: only the chosen partitions' rows, the others' files never opened (damaged
here, the filtered read still works), clear errors for a key or value the root lacks and for
a store of its own.  The traces: ``tests/partitioned_traces.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ingest.pipeline import ingest_paths
from phaseline.cli import main as cli
from phaseline.errors import StoreError
from phaseline.store import Store, describe_filter, partition_filter, select_partitions
from tests.partitioned_traces import CLUSTERS, CUT_JOB, DAYS, job_ids, write_traces


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _json(*args: str) -> Any:
    out = _run(*args, "--format", "json")
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def traces(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_traces(fixtures_dir, tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="module")
def root(traces: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The traces ingested by ``phaseline ingest --partition-by day,cluster``, a commit per file."""
    where = tmp_path_factory.mktemp("stores") / "warehouse"
    out = _run("ingest", "--partition-by", "day,cluster", "--commit-every", "1", "-q", "--store", str(where), str(traces))
    assert out.exit_code == 3, out.output  # the bad file is quarantined (in day=unknown)
    return where


@pytest.fixture
def copy(root: Path, tmp_path: Path) -> Path:
    """A copy of the root this test may damage or compact."""
    return Path(shutil.copytree(root, tmp_path / "warehouse"))


def _jobs_of(day: str | None = None, cluster: str | None = None) -> set[str]:
    return {j for j, (d, c) in job_ids().items() if day in (None, d) and cluster in (None, c)}


# -- reading some partitions --------------------------------------------------------------------


def test_partition_by_then_partition_round_trip(root: Path) -> None:
    """What ``ingest --partition-by`` wrote, ``--partition`` reads back a day at a time."""
    for day in DAYS:
        got = _json("jobs", "--store", str(root), "--partition", f"day={day}")
        assert {r["job_id"] for r in got} == _jobs_of(day)
        rows = _json("query", "--store", str(root), "--partition", f"day={day}", "SELECT DISTINCT day FROM attempts")
        assert rows == [{"day": day}]
    both = _json("jobs", "--store", str(root), "--partition", f"day={DAYS[0]}", "--partition", f"day={DAYS[1]}")
    assert {r["job_id"] for r in both} == _jobs_of()


def test_keys_anded_a_keys_values_ored(root: Path) -> None:
    one = _json("jobs", "--store", str(root), "--partition", f"day={DAYS[1]}", "--partition", f"cluster={CLUSTERS[0]}")
    assert {r["job_id"] for r in one} == _jobs_of(DAYS[1], CLUSTERS[0])
    args = ["--partition", f"cluster={CLUSTERS[1]}", "--partition", f"day={DAYS[0]}", "--partition", f"cluster={CLUSTERS[0]}"]
    assert {r["job_id"] for r in _json("jobs", "--store", str(root), *args)} == _jobs_of(DAYS[0])
    tables = {r["table"]: r["rows"] for r in _json("tables", "--store", str(root), *args)}
    assert tables["jobs"] == len(_jobs_of(DAYS[0]))


def test_job_commands_take_partition(root: Path, tmp_path: Path) -> None:
    """A job's commands read the partition named; in another the job is not there."""
    job = sorted(_jobs_of(DAYS[1], CLUSTERS[1]) - {CUT_JOB})[0]
    mine = ["--store", str(root), "--partition", f"day={DAYS[1]}"]
    phases = _json("phases", job, *mine)
    assert phases
    assert {r["attempt_id"].split("_")[2] for r in phases} == {job.split("_")[2]}
    assert {r["job_id"] for r in _json("doctor", job, *mine)} == {job}
    out = _run("profile", job, "--out", str(tmp_path / "p.json"), *mine)
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "p.json").read_text())["source"]["job_ids"] == [job]
    other = _run("phases", job, "--store", str(root), "--partition", f"day={DAYS[0]}")
    assert other.exit_code == 1
    assert job in other.output


def test_other_partitions_files_are_never_opened(copy: Path) -> None:
    """One day's data files damaged: a read of the other day works, with either command; a read of
    the whole root fails naming a damaged file, and so does verify."""
    damaged = sorted(str(p) for p in (copy / f"day={DAYS[0]}").rglob("data/**/*.parquet"))
    assert damaged
    for path in damaged:
        Path(path).write_bytes(b"not parquet at all")
    day = ["--store", str(copy), "--partition", f"day={DAYS[1]}"]
    count = _json("query", *day, "SELECT count(*) AS n FROM attempts")
    assert count == [{"n": len(_jobs_of(DAYS[1])) * 2}]  # the seed job has 2 attempts
    assert {r["job_id"] for r in _json("jobs", *day)} == _jobs_of(DAYS[1])
    assert _run("verify", *day).exit_code == 0
    whole = _run("query", "--store", str(copy), "SELECT count(*) AS n FROM attempts")
    assert whole.exit_code == 1
    assert any(path in whole.output for path in damaged), whole.output
    assert _run("verify", "--store", str(copy)).exit_code == 1


# -- refusals -------------------------------------------------------------------------------------


def test_unknown_key_or_value_lists_the_roots(root: Path) -> None:
    out = _run("jobs", "--store", str(root), "--partition", "hour=10")
    assert out.exit_code == 1
    assert str(root) in out.output
    assert "no key 'hour'; their keys are day, cluster" in out.output
    out = _run("jobs", "--store", str(root), "--partition", "day=2026-12-01")
    assert out.exit_code == 1
    assert f"its values of day are {DAYS[0]}, {DAYS[1]}, unknown" in out.output
    out = _run("jobs", "--store", str(root), "--partition", "day=unknown", "--partition", f"cluster={CLUSTERS[1]}")
    assert out.exit_code == 1
    assert f"no partition has day=unknown, and cluster={CLUSTERS[1]}" in out.output
    assert f"day={DAYS[0]}/cluster={CLUSTERS[0]}" in out.output  # the partitions it has
    out = _run("jobs", "--store", str(root), "--partition", "day")
    assert out.exit_code == 2
    assert "KEY=VALUE" in out.output


def test_partition_on_a_store_of_its_own_names_it(traces: Path, tmp_path: Path) -> None:
    plain = Store(tmp_path / "plain")
    ingest_paths([next((traces / "done").rglob("*.jhist"))], plain)
    for command in (["jobs"], ["query", "SELECT 1"], ["verify"], ["compact"]):
        out = _run(*command, "--store", str(plain.root), "--partition", f"day={DAYS[0]}")
        assert out.exit_code == 1, (command, out.output)
        assert f"{plain.root} is a store, not a partitioned one" in out.output
    with pytest.raises(StoreError, match="not a partitioned one"):
        Store(plain.root, where={"day": DAYS[0]}).connect()
    assert _run("jobs", "--store", str(plain.root)).exit_code == 0


def test_filters_parsed_and_described() -> None:
    where = partition_filter([("day", DAYS[0]), ("cluster", CLUSTERS[0]), ("day", DAYS[1]), ("day", DAYS[0])])
    assert where == {"day": DAYS, "cluster": (CLUSTERS[0],)}
    assert describe_filter(where) == f"day={DAYS[0]} or day={DAYS[1]}, and cluster={CLUSTERS[0]}"


def test_select_partitions_opens_no_manifest(copy: Path) -> None:
    """Choosing partitions reads directory names only: another day's manifest, unreadable, is not read."""
    (copy / f"day={DAYS[0]}" / f"cluster={CLUSTERS[0]}" / "MANIFEST.json").write_text("{not json")
    chosen = select_partitions(copy, {"day": (DAYS[1],)})
    assert [dict(spec)["day"] for spec, _ in chosen] == [DAYS[1]] * len(CLUSTERS)
    assert {r["day"] for r in _json("query", "--store", str(copy), "--partition", f"day={DAYS[1]}",
                                    "SELECT DISTINCT day FROM jobs")} == {DAYS[1]}  # fmt: skip


# -- compact ----------------------------------------------------------------------------------------


def _files(root: Path) -> dict[str, int]:
    return {one.root.relative_to(root).as_posix(): len(one.manifest().files) for _, one in Store(root).partitions()}


def test_compact_a_root_compacts_every_partition(copy: Path) -> None:
    sql = "SELECT day, cluster, count(*) AS n FROM counters GROUP BY ALL ORDER BY ALL"
    before, rows = _files(copy), _json("query", "--store", str(copy), sql)
    out = _run("compact", "--store", str(copy), "--min-files", "2")
    assert out.exit_code == 0, out.output
    after = _files(copy)
    for name in before:
        assert f"{name}: " in out.output
    fed = [name for name in before if name.startswith(tuple(f"day={d}" for d in DAYS))]
    assert fed
    assert all(after[name] < before[name] for name in fed), (before, after)
    assert _json("query", "--store", str(copy), sql) == rows
    assert _run("verify", "--store", str(copy)).exit_code == 0


def test_compact_one_partition(copy: Path) -> None:
    before = _files(copy)
    out = _run("compact", "--store", str(copy), "--min-files", "2", "--partition", f"day={DAYS[1]}")
    assert out.exit_code == 0, out.output
    after = _files(copy)
    for name, n in before.items():
        assert (after[name] < n) if name.startswith(f"day={DAYS[1]}/") else (after[name] == n), (name, before, after)


def test_a_partitioned_root_is_never_written_as_one_store(copy: Path, traces: Path) -> None:
    """A write into the root itself is refused before anything lands: a manifest there would make
    the root one store and hide its partitions."""
    before = _json("query", "--store", str(copy), "select count(*) as n from attempts")
    with pytest.raises(StoreError, match="read, not written"):
        Store(copy).begin()
    assert not (copy / "MANIFEST.json").exists()
    assert _json("query", "--store", str(copy), "select count(*) as n from attempts") == before
