"""Job summary lines (a JobHistoryServer's mapred-jobsummary.log, a job's .summary, Hadoop 1's
JobInProgress$JobSummary lines) -> jobs rows, and the history kept where a job has both."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ingest.base import ReadContext
from ingest.job_summary import pairs_of, read_job_summary, sniff_job_summary
from ingest.pipeline import ingest_paths
from phaseline.store import Store
from profiles import queries

DATA = Path(__file__).parents[1] / "data" / "yarn" / "job-summary"
LOG = DATA / "mapred-jobsummary.log"


def _rows(path: Path) -> tuple[list[dict[str, object]], list[dict[str, object]], ReadContext]:
    ctx = ReadContext(path)
    rows = list(read_job_summary(path, ctx))
    jobs = [r.as_dict() for r in rows if r.table == "jobs"]
    events = [r.as_dict() for r in rows if r.table == "events"]
    return jobs, events, ctx


def test_the_history_servers_summary_log_gives_a_job_row_per_line() -> None:
    assert sniff_job_summary(LOG.read_bytes(), LOG)
    jobs, events, ctx = _rows(LOG)
    assert ctx.events_read == 2
    first, second = jobs
    assert {k: first[k] for k in ("job_id", "name", "user", "queue", "status")} == {
        "job_id": "job_1795980962367_0001", "name": "phaseline-bench", "user": "root", "queue": "default",
        "status": "SUCCEEDED"}  # fmt: skip
    assert (first["submit_ms"], first["launch_ms"], first["finish_ms"]) == (1795980968515, 1795980980082, 1795980999173)
    assert (first["total_maps"], first["total_reduces"], first["finished_maps"], first["finished_reduces"]) == (2, 1, 2, 1)
    assert (second["total_maps"], second["total_reduces"], second["killed_maps"]) == (1, 0, 0)
    payload = json.loads(str(events[0]["payload_json"]))
    assert payload["firstMapTaskLaunchTime"] == "1795980982882"
    assert payload["mapSlotSeconds"] == "15"
    assert events[0]["ts_ms"] == 1795980999173


def test_a_summary_file_hadoop_1_lines_escapes_and_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "job_1_0001.summary"
    path.write_text(
        # the bare line, as the ApplicationMaster writes <job>.summary (a name with an escaped comma and '=';
        # a launch time of 0, never reached)
        "jobId=job_1_0001,submitTime=10,launchTime=0,finishTime=90,numMaps=3,numReduces=1,user=u,"
        "queue=q,status=FAILED,jobName=sort\\, then\\=merge\n"
        # Hadoop 1's JobTracker line (its fields as JobInProgress$JobSummary wrote them)
        "2012-08-03 13:55:45,224 INFO org.apache.hadoop.mapred.JobInProgress$JobSummary: jobId=job_2_0002,"
        "submitTime=1,launchTime=2,firstMapTaskLaunchTime=3,firstReduceTaskLaunchTime=4,finishTime=9,numMaps=16,"
        "numSlotsPerMap=1,numReduces=1,numSlotsPerReduce=1,user=x,queue=default,status=SUCCEEDED,mapSlotSeconds=76,"
        "reduceSlotsSeconds=53,clusterMapCapacity=2,clusterReduceCapacity=2,jobName=grep\n"
        "2012-08-03 13:55:46,000 INFO org.apache.hadoop.mapred.JobTracker: another logger's line\n"
        "jobId=job_3_0003,submitTime=soon,finishTime=9\n"
    )
    jobs, events, ctx = _rows(path)
    assert [j["job_id"] for j in jobs] == ["job_1_0001", "job_2_0002"]
    assert jobs[0]["name"] == "sort, then=merge"
    assert jobs[0]["status"] == "FAILED"
    assert (jobs[0]["submit_ms"], jobs[0]["launch_ms"]) == (10, None)  # a job that failed before it launched
    assert (jobs[1]["total_maps"], jobs[1]["finish_ms"]) == (16, 9)
    assert json.loads(str(events[1]["payload_json"]))["clusterMapCapacity"] == "2"
    assert ctx.unknown["log_line"] == 1
    assert [s.line for s in ctx.skipped] == [4]
    assert "submitTime='soon' is no number" in str(ctx.skipped[0])
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert result.format == "job_summary"


def test_where_a_job_has_its_history_too_the_history_is_its_account(tmp_path: Path) -> None:
    summary = ingest_paths([DATA], Store(tmp_path / "store"))
    assert sorted(r.format for r in summary.results if r.format) == ["jhist", *["job_summary"] * 4]  # (2 daemon logs)
    con = Store(tmp_path / "store").connect()
    kept = queries.job_summary(con, "job_1795980962367_0001")
    assert kept["queue"].tolist() == ["root.default"]  # the history's (the summary line says "default")
    only_summary = queries.job_summary(con, "job_1795980962367_0002")
    assert only_summary[["total_maps", "total_reduces", "status"]].values.tolist() == [[1, 0, "SUCCEEDED"]]


def test_pairs_are_read_as_hadoops_escapestring_wrote_them() -> None:
    assert pairs_of(r"jobId=job_1_2,jobName=a\,b\\c\=d,user=") == {"jobId": "job_1_2", "jobName": "a,b\\c=d", "user": ""}


def test_the_resource_managers_application_summary_log_gives_the_mapreduce_jobs(tmp_path: Path) -> None:
    path = tmp_path / "rm-appsummary.log"
    spark = ("2026-11-29 20:16:00,000 INFO resourcemanager.RMAppManager$ApplicationSummary: appId=application_"
             "1795983262391_0003,name=etl,user=root,queue=root.default,state=FINISHED,submitTime=5,finishTime=9,"
             "finalStatus=SUCCEEDED,applicationType=SPARK\n")  # fmt: skip
    path.write_text((DATA / "rm-appsummary.log").read_text() + spark)
    assert sniff_job_summary(path.read_bytes(), path)
    jobs, events, ctx = _rows(path)
    assert [j["job_id"] for j in jobs] == ["job_1795983262391_0001", "job_1795983262391_0002"]
    first = jobs[0]
    assert (first["name"], first["queue"], first["status"]) == ("phaseline-bench", "root.default", "SUCCEEDED")
    assert (first["submit_ms"], first.get("launch_ms"), first["finish_ms"]) == (1795983264411, None, 1795983280434)
    assert events[0]["event_type"] == "application_summary"
    payload = json.loads(str(events[0]["payload_json"]))
    assert payload["launchTime"] == "1795983264924"  # the ApplicationMaster's container, kept in the event
    assert payload["preemptedResources"] == "<memory:0, vCores:0>"  # an escaped comma
    assert payload["memorySeconds"] == "18552"
    assert ctx.unknown["not_a_mapreduce_application"] == 1


def _escaped(text: str) -> str:
    """Hadoop's ``StringUtils.escapeString`` with ``\\`` escaping ``,``, ``=`` and itself."""
    return "".join("\\" + c if c in ",=\\" else c for c in text)


@given(st.dictionaries(st.text(min_size=1).filter(lambda k: k.strip() == k), st.text(), max_size=6))
def test_pairs_round_trip_through_hadoops_escaping(pairs: dict[str, str]) -> None:
    line = ",".join(f"{_escaped(k)}={_escaped(v)}" for k, v in pairs.items())
    assert pairs_of(line) == pairs


DAEMONS = DATA / "daemon-logs"


def test_a_resource_managers_and_a_history_servers_own_logs_give_their_summary_lines() -> None:
    rm, jhs = DAEMONS / "hadoop-root-resourcemanager-localhost.log", DAEMONS / "mapred-root-historyserver-localhost.log"
    for path, event_type in ((rm, "application_summary"), (jhs, "job_summary")):
        assert sniff_job_summary(path.read_bytes()[:8192], path)
        jobs, events, ctx = _rows(path)
        assert [j["job_id"] for j in jobs] == ["job_1795983835194_0001"], path.name
        assert [e["event_type"] for e in events] == [event_type]
        assert ctx.unknown["log_line"] > 100  # the daemon's other lines, counted
    assert _rows(jhs)[0][0]["total_maps"] == 2


def test_a_daemons_log_without_summary_lines_is_no_trace(tmp_path: Path) -> None:
    path = tmp_path / "hadoop-root-resourcemanager-localhost.log"
    lines = (DAEMONS / path.name).read_text().splitlines(keepends=True)
    path.write_text("".join(ln for ln in lines if "ApplicationSummary" not in ln))
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "skipped"
    assert "no job or application summary line" in (result.error or "")
