"""Large real-world shape: the mumak trace and the 0.20 Yahoo logs land with exact reconciliation."""

from __future__ import annotations

from pathlib import Path

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from phaseline.verify import verify_store


def test_mumak_and_yahoo_logs_reconcile_exactly(fixtures_dir: Path, store_dir: Path) -> None:
    mumak = fixtures_dir / "apache-hadoop-mapreduce" / "mumak" / "19-jobs.trace.json.gz"
    yahoo = fixtures_dir / "apache-hadoop-mapreduce" / "rumen-small-trace-test" / "sample-job-tracker-logs.gz"
    store = Store(store_dir)
    summary = ingest_paths([mumak, yahoo], store)
    assert [r.status for r in summary.results] == ["landed", "landed"]
    for r in summary.results:
        assert r.events_read > 0
        assert not [n for n in r.notes if n.startswith("reconciliation")], r.notes
    report = verify_store(store)
    assert report.ok, report.findings
    con = store.connect()
    (failed, killed), = con.execute(
        "SELECT count(*) FILTER (status = 'FAILED'), count(*) FILTER (status = 'KILLED') FROM raw.attempts "
        "WHERE source_sha256 = (SELECT sha256 FROM sources WHERE path LIKE '%19-jobs.trace.json.gz')"
    ).fetchall()
    assert (failed, killed) == (3503, 1096)
    (maps, reduces, killed_yahoo), = con.execute(
        "SELECT count(DISTINCT task_id) FILTER (task_type = 'MAP'), count(DISTINCT task_id) FILTER (task_type = 'REDUCE'), "
        "count(*) FILTER (status = 'KILLED') FROM raw.attempts WHERE job_id = 'job_200904211745_0004' "
        # the mumak trace was made from the same Yahoo logs and holds this job too
        "AND source_sha256 = (SELECT sha256 FROM sources WHERE path LIKE '%sample-job-tracker-logs.gz')"
    ).fetchall()
    assert (maps, reduces, killed_yahoo) == (131, 47, 69)
    # The store's views hold one account of that job: the first-hand log's, not Rumen's too.
    (rows, sources), = con.execute(
        "SELECT count(*), count(DISTINCT source_sha256) FROM attempts WHERE job_id = 'job_200904211745_0004'"
    ).fetchall()
    assert (rows, sources) == (252, 1)
