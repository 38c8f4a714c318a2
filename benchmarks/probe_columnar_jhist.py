"""How fast could a columnar ``.jhist`` reader be?  A probe for issue 10's bare-decode target (prints figures).

Not a test, and not phaseline's reader.  ``python benchmarks/probe_columnar_jhist.py [--size-mb 50]``.

Issue 10 asks the reader for >= 50 % of a bare line-by-line ``orjson.loads``
of the same bytes.  ``read_jhist`` (CPython, one object per event and counter)
is near the floor such a reader has (RESULTS.md: 0.83x of "decode + one Row per
event and counter").  The probe measures the other design: no Python object
per event.  It decodes the generated file (``jhist_inputs``) with pyarrow's
native JSON reader, on every core, into Arrow columns (an explicit schema of
the fields the tables need).  It finds the line numbers and each event's text
with numpy.  It builds ``events``, ``tasks``, ``attempts`` and the counters
with DuckDB and pyarrow compute.  None of Hadoop's rules for which event's
value wins is applied, there is no check, no fallback and no store write: what
it prints is a lower bound for such a reader's time.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
from ingest_children import measure as measured_in_process
from jhist_inputs import Seed, write_big_jhist

JH = "org.apache.hadoop.mapreduce.jobhistory."
S, INT, B = pa.string(), pa.int64(), pa.bool_()
COUNTERS = pa.struct(
    [
        (
            "groups",
            pa.list_(
                pa.struct([("name", S), ("counts", pa.list_(pa.struct([("name", S), ("value", INT)])))])
            ),
        )
    ]
)
#: The fields of the seed's records that phaseline's tables take (Hadoop 2.7; ``locality`` is an Avro union).
RECORDS: dict[str, list[tuple[str, pa.DataType]]] = {
    "TaskStarted": [("taskid", S), ("taskType", S), ("startTime", INT), ("splitLocations", S)],
    "TaskFinished": [("taskid", S), ("taskType", S), ("finishTime", INT), ("status", S), ("counters", COUNTERS)],
    "TaskAttemptStarted": [("taskid", S), ("taskType", S), ("attemptId", S), ("startTime", INT), ("trackerName", S),
                           ("httpPort", INT), ("containerId", S), ("locality", pa.struct([("string", S)]))],
    "MapAttemptFinished": [("taskid", S), ("attemptId", S), ("taskType", S), ("taskStatus", S), ("mapFinishTime", INT),
                           ("finishTime", INT), ("hostname", S), ("rackname", S), ("counters", COUNTERS)],
    "ReduceAttemptFinished": [("taskid", S), ("attemptId", S), ("taskType", S), ("taskStatus", S),
                              ("shuffleFinishTime", INT), ("sortFinishTime", INT), ("finishTime", INT), ("hostname", S),
                              ("rackname", S), ("counters", COUNTERS)],
    "JobSubmitted": [("jobid", S), ("jobName", S), ("userName", S), ("submitTime", INT), ("jobQueueName", S)],
    "JobInited": [("jobid", S), ("launchTime", INT), ("totalMaps", INT), ("totalReduces", INT), ("uberized", B)],
    "JobInfoChange": [("jobid", S), ("submitTime", INT), ("launchTime", INT)],
    "JobFinished": [("jobid", S), ("finishTime", INT), ("finishedMaps", INT), ("finishedReduces", INT), ("failedMaps", INT),
                    ("failedReduces", INT), ("totalCounters", COUNTERS), ("mapCounters", COUNTERS),
                    ("reduceCounters", COUNTERS)],
    "AMStarted": [("startTime", INT)],
}  # fmt: skip
SCHEMA = pa.schema([("type", S), ("event", pa.struct([(JH + k, pa.struct(v)) for k, v in RECORDS.items()]))])
TS_FIELDS = ("TaskStarted.startTime", "TaskFinished.finishTime", "TaskAttemptStarted.startTime",
             "MapAttemptFinished.finishTime", "ReduceAttemptFinished.finishTime", "JobSubmitted.submitTime",
             "JobInited.launchTime", "JobInfoChange.launchTime", "JobFinished.finishTime", "AMStarted.startTime")  # fmt: skip
COUNTER_OWNERS = (
    ("MapAttemptFinished", "attemptId"),
    ("ReduceAttemptFinished", "attemptId"),
    ("TaskFinished", "taskid"),
)


def read_columnar(path: Path, steps: dict[str, float]) -> dict[str, int]:
    """The tables' columns from ``path``; the seconds of each step go into ``steps``."""

    def step(name: str, t: float) -> float:
        now = time.perf_counter()
        steps[name] = now - t
        return now

    t = time.perf_counter()
    data = path.read_bytes()
    t = step("read the bytes", t)
    buf = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], ends[:-1] + 1))
    full = ends > starts  # the generated file's blank lines are empty
    line_no, first, last = (np.flatnonzero(full) + 1)[2:], starts[full][2:], ends[full][2:]
    body = buf[first[0] :]
    text = body[body != 10]  # event lines back to back: the events' payload_json
    offsets = np.zeros(len(first) + 1, np.int32)
    np.cumsum(last - first, out=offsets[1:])
    payload = pa.StringArray.from_buffers(len(first), pa.py_buffer(offsets), pa.py_buffer(text))
    t = step("line numbers and event texts (numpy)", t)
    table = pj.read_json(
        pa.BufferReader(data[int(first[0]) :]),
        read_options=pj.ReadOptions(block_size=8 << 20),
        parse_options=pj.ParseOptions(explicit_schema=SCHEMA, unexpected_field_behavior="ignore"),
    )
    t = step("decode to Arrow (pyarrow.json, all cores)", t)
    flat = table.flatten().flatten()  # event.<record>.<field>
    cols = {name.removeprefix("event." + JH): flat.column(name) for name in flat.column_names}
    scalars = pa.table({"seq": line_no, "etype": cols["type"],
                        **{k: v for k, v in cols.items() if "." in k and not k.endswith("ounters")}})  # fmt: skip
    t = step("columns", t)
    con = duckdb.connect()
    con.register("ev", scalars)
    times = ", ".join(f'"{c}"' for c in TS_FIELDS)
    events = con.sql(f"SELECT seq, etype, coalesce({times}) AS ts_ms FROM ev").to_arrow_table()
    events = events.append_column("payload_json", payload)
    attempts = con.sql("""
        SELECT * FROM (SELECT "TaskAttemptStarted.attemptId" AS attempt_id, "TaskAttemptStarted.taskid" AS task_id,
                              "TaskAttemptStarted.startTime" AS start_ms, "TaskAttemptStarted.containerId" AS container,
                              "TaskAttemptStarted.locality".string AS locality
                       FROM ev WHERE "TaskAttemptStarted.attemptId" IS NOT NULL)
        FULL JOIN (SELECT coalesce("MapAttemptFinished.attemptId", "ReduceAttemptFinished.attemptId") AS attempt_id,
                          coalesce("MapAttemptFinished.finishTime", "ReduceAttemptFinished.finishTime") AS finish_ms,
                          coalesce("MapAttemptFinished.taskStatus", "ReduceAttemptFinished.taskStatus") AS status,
                          coalesce("MapAttemptFinished.hostname", "ReduceAttemptFinished.hostname") AS host,
                          "MapAttemptFinished.mapFinishTime" AS map_finish_ms,
                          "ReduceAttemptFinished.shuffleFinishTime" AS shuffle_finish_ms
                   FROM ev WHERE coalesce("MapAttemptFinished.attemptId", "ReduceAttemptFinished.attemptId") IS NOT NULL)
        USING (attempt_id)""").to_arrow_table()
    tasks = con.sql("""
        SELECT * FROM (SELECT "TaskStarted.taskid" AS task_id, "TaskStarted.startTime" AS start_ms
                       FROM ev WHERE "TaskStarted.taskid" IS NOT NULL)
        FULL JOIN (SELECT "TaskFinished.taskid" AS task_id, "TaskFinished.finishTime" AS finish_ms,
                          "TaskFinished.status" AS status FROM ev WHERE "TaskFinished.taskid" IS NOT NULL)
        USING (task_id)""").to_arrow_table()
    t = step("events, tasks, attempts (DuckDB)", t)
    counters = 0
    for record, id_field in COUNTER_OWNERS:
        for records, ids in zip(
            cols[f"{record}.counters"].chunks, cols[f"{record}.{id_field}"].chunks, strict=True
        ):
            groups = records.field("groups")
            one_group = pc.list_flatten(groups)
            counts = one_group.field("counts")
            one_each = pc.list_flatten(counts)
            group_of = pc.list_parent_indices(counts)
            pa.table({"owner": pc.take(ids, pc.take(pc.list_parent_indices(groups), group_of)),
                      "group_name": pc.take(one_group.field("name"), group_of),
                      "counter_name": one_each.field("name"), "value": one_each.field("value")})  # fmt: skip
            counters += len(one_each)
    step("counters (pyarrow compute)", t)
    return {
        "events": events.num_rows,
        "tasks": tasks.num_rows,
        "attempts": attempts.num_rows,
        "counters": counters,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    args = ap.parse_args()
    path = write_big_jhist(
        Seed.load(), args.workdir / f"big-{args.size_mb}mb.jhist", args.size_mb * 1_000_000
    )
    # bench_ingest_scale.py's peer itself: the file read line by line, each line decoded with orjson
    bare = min(measured_in_process("orjson", path, None, 1, 0)["seconds"] for _ in range(args.repeat))
    runs = []
    for _ in range(args.repeat):
        steps: dict[str, float] = {}
        counts = read_columnar(path, steps)
        runs.append(steps)
    best = min(runs, key=lambda s: sum(s.values()))
    mb = path.stat().st_size / 1e6
    print(f"{path.name}: {mb:.1f} MB; {counts}; best of {args.repeat}")
    for name, seconds in best.items():
        print(f"  {name:44s} {seconds:7.3f} s")
    total = sum(best.values())
    print(f"  {'columnar probe, total':44s} {total:7.3f} s  ({mb / total:.0f} MB/s)")
    print(f"  {'orjson.loads per line, nothing else':44s} {bare:7.3f} s  ({mb / bare:.0f} MB/s)")
    print(f"  probe / bare decode: {bare / total:.2f}x (issue 10's target for the reader: >= 0.5x)")


if __name__ == "__main__":
    main()
