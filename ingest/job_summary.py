"""Job summary lines (``jobId=job_...,submitTime=...,...``): one line per finished job, as a cluster
keeps them -> ``jobs`` rows and one ``events`` row each.

Hadoop 2/3's ApplicationMaster writes the line to ``<intermediate-done-dir>/<user>/<job>.summary``;
the JobHistoryServer logs it as it moves the job's files to the done directory (logger
``org.apache.hadoop.mapreduce.jobhistory.JobSummary``, by default to ``mapred-jobsummary.log``:
``26/11/29 19:03:36 INFO jobhistory.JobSummary: jobId=...``), one line per job for the cluster's
whole life.  Hadoop 0.20-1.x's JobTracker logs the same kind of line (``JobInProgress$JobSummary``,
with ``numSlotsPerMap`` and the cluster's slot capacity).  A line is ``key=value`` pairs joined by
commas, a value's ``,``, ``=`` and ``\\`` escaped with ``\\`` (``StringUtils.escapeString``).

Rows: a ``jobs`` row per line (``jobName``, ``user``, ``queue``, ``status``; ``submitTime``,
``launchTime``, ``finishTime``; ``numMaps``/``numReduces`` as the job's totals, and the finished,
failed and killed counts where the line has them), and an ``events`` row
(``event_type`` ``job_summary``, at the finish time) holding every pair as written, such as the
first map's and reduce's launch, the slot-seconds and the resources per task.  Where the same job
has its history too, the store's one account per job keeps the history (more rows about the job).

By default Hadoop's log4j.properties sends both loggers to the daemon's own log
(``hadoop-<user>-resourcemanager-<host>.log``, ``mapred-<user>-historyserver-<host>.log``): such a
log is read too, its summary lines among the rest (a log of either daemon without any is no trace).
The ResourceManager's application summary log (``rm-appsummary.log``, logger
``RMAppManager$ApplicationSummary``: ``appId=application_...,name=...,queue=...,submitTime=...``) is
read the same way: a MapReduce application's line gives its job's row (the job id is the
application's; ``finalStatus`` its status; ``submitTime`` and ``finishTime``; the AM container's
``launchTime`` and the resource-seconds in the event, ``application_summary``); another kind of
application's line (Spark, Tez) is counted in ``ctx.unknown``.

Bad input: a line of such a log that is no summary (another logger's line) is counted in
``ctx.unknown``; a summary line without a job id, or with a field that is no number where one is
due, is skipped and named (:func:`~ingest.base.skip_record`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ingest.base import NotATraceError, ReadContext, Row, skip_record
from ingest.formats import Format
from ingest.mrcommon import event_row, parse_int64
from ingest.opening import iter_lines
from phaseline.errors import TraceParseError
from phaseline.hadoop_names import job_id_of
from phaseline.schemas import normalize_status

FORMAT_NAME = "job_summary"
#: A summary line, after whatever prefix the logger wrote (time, level, logger name).
_SUMMARY = re.compile(r"(?:^|: )(?P<pairs>(?:jobId=job_\d+_\d+,submitTime|appId=application_\d+_\d+,name)=.*)$")
_PAIR = re.compile(r"(?P<key>(?:[^,=\\]|\\.)+)=(?P<value>(?:[^,\\]|\\.)*)(?:,|$)")
_UNESCAPE = re.compile(r"\\(.)")
#: A line of a ResourceManager's or JobHistoryServer's own log (log4j: a time, a level, the logger), where
#: Hadoop's default log4j.properties leaves the summary lines (yarn.server.resourcemanager.appsummary.logger
#: and hadoop.mapreduce.jobsummary.logger are the root logger).
_DAEMON_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ (?:org\.apache\.hadoop\.)?"
                          r"(?:yarn\.server\.resourcemanager|mapreduce\.v2\.hs)\.")  # fmt: skip
#: jobs column <- the ResourceManager's key (its launchTime is the ApplicationMaster's container's, not the
#: job's launch: kept in the event only)
_APP_TIMES = {"submit_ms": "submitTime", "finish_ms": "finishTime"}
#: jobs column <- the line's key, for the numbers it holds
_TIMES_AND_COUNTS = {
    "submit_ms": "submitTime",
    "launch_ms": "launchTime",
    "finish_ms": "finishTime",
    "total_maps": "numMaps",
    "total_reduces": "numReduces",
    "finished_maps": "succededMaps",  # (Hadoop's spelling)
    "finished_reduces": "succeededReduces",
    "failed_maps": "failedMaps",
    "failed_reduces": "failedReduces",
    "killed_maps": "killedMaps",
    "killed_reduces": "killedReduces",
}


def pairs_of(text: str) -> dict[str, str]:
    """The ``key=value`` pairs of a summary line, unescaped.

    >>> pairs_of(r"jobId=job_1_2,jobName=a\\, b\\=c,user=u")
    {'jobId': 'job_1_2', 'jobName': 'a, b=c', 'user': 'u'}
    """
    return {_UNESCAPE.sub(r"\1", m["key"]): _UNESCAPE.sub(r"\1", m["value"]) for m in _PAIR.finditer(text)}


def sniff_job_summary(head: bytes, path: Path) -> bool:
    """Text whose first line that is not blank is a summary line, or a ResourceManager's or
    JobHistoryServer's own log (its first line is one of theirs)."""
    for line in head.decode("utf-8", "replace").splitlines():
        if line.strip():
            return _SUMMARY.search(line.rstrip()) is not None or _DAEMON_LINE.match(line) is not None
    return False


def read_job_summary(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """A ``jobs`` and an ``events`` row per summary line of ``path``; a daemon's log with none is no trace."""
    summaries = 0
    for line_no, text in iter_lines(path, ctx):
        found = _SUMMARY.search(text.rstrip())
        if found is None:
            if text.strip():
                ctx.unknown["log_line"] += 1
            continue
        pairs = pairs_of(found["pairs"])
        application = "appId" in pairs  # the ResourceManager's line of an application, not the job's
        if application and pairs.get("applicationType", "MAPREDUCE").upper() != "MAPREDUCE":
            ctx.unknown["not_a_mapreduce_application"] += 1  # (a Spark or Tez application's line)
            continue
        given = pairs.get("appId" if application else "jobId", "")
        job_id = job_id_of(given)
        if job_id is None or given.split("_", 1)[1] != job_id.split("_", 1)[1]:
            skip_record(ctx, TraceParseError(path, f"a summary line whose id is {given!r}", line=line_no))
            continue
        keys = _APP_TIMES if application else _TIMES_AND_COUNTS
        numbers = {col: parse_int64(pairs[key]) for col, key in keys.items() if key in pairs}
        bad = [key for col, key in keys.items() if col in numbers and numbers[col] is None]
        if bad:
            skip_record(ctx, TraceParseError(path, f"{job_id}'s summary: {bad[0]}={pairs[bad[0]]!r} is no number",
                                             line=line_no))  # fmt: skip
            continue
        for col in ("submit_ms", "launch_ms", "finish_ms"):  # (0: a time the job never reached, as Hadoop writes it)
            if numbers.get(col) == 0:
                numbers[col] = None
        ctx.events_read += 1
        summaries += 1
        ctx.job_id_hint = ctx.job_id_hint or job_id
        yield Row("jobs", {
            "job_id": job_id, "name": pairs.get("name" if application else "jobName"), "user": pairs.get("user"),
            "queue": pairs.get("queue"), "status": normalize_status(pairs.get("finalStatus" if application else "status")),
            **numbers, "diagnostics": pairs.get("diagnostics") or None, "source_format": FORMAT_NAME,
        })  # fmt: skip
        yield event_row(job_id, line_no, "application_summary" if application else FORMAT_NAME,
                        numbers.get("finish_ms"), pairs)  # fmt: skip
    if not summaries and not ctx.skipped:
        raise NotATraceError(path, "a ResourceManager's or JobHistoryServer's log with no job or application "
                                   "summary line (its summary logger may write them to a file of their own)")  # fmt: skip


FORMATS: tuple[Format, ...] = (
    Format(FORMAT_NAME, sniff_job_summary, read_job_summary,
           "job summary lines (a job's <job>.summary, the JobHistoryServer's mapred-jobsummary.log, "
           "Hadoop 1's JobInProgress$JobSummary lines, the ResourceManager's rm-appsummary.log)",
           record_tables=("events",)),
)  # fmt: skip
