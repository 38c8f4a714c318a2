"""The YARN engine itself: cluster start-up, and a small job's overhead against LocalJobRunner.

Not a test.  Run ``python benchmarks/bench_engine.py`` (``--help`` for options;
``--json PATH`` writes the figures), or ``benchmarks/run --only engine``.

Issue 42's targets, on this 2-core machine: a mini YARN cluster starts in <= 30 s;
a 16 MiB, 8-map job runs in <= 60 s on it; a suite of many runs reuses one
cluster.  Measured in one run, side by side:

1. the job on LocalJobRunner (``run_engine``: one JVM, maps one at a time, its
   start-up included) -- the peer of every job figure;
2. a cluster of ``--nodes`` x ``--containers-per-node`` started (the ResourceManager,
   NodeManagers and JobHistoryServer up, every NodeManager registered);
3. the same job ``--runs`` times on that one cluster: the first on a fresh cluster,
   the later ones reusing it (a suite's case);
4. with ``--try KEY=VALUE``: the same job once more on that cluster with those job
   settings (container JVM flags, the ApplicationMaster's heartbeat, ...), against the
   best run with the engine's own.  Cluster-wide settings (a NodeManager's heartbeat)
   go with ``--conf`` and hold for every YARN run.

A job's time is the caller's wall time of ``run``: input generated, the job submitted
and finished, its ``.jhist``, ``_conf.xml`` and aggregated logs collected (what a suite
waits for).  Where the time goes on YARN comes from the runs' own records, ingested
into a scratch store: the job's history (submit, ApplicationMaster start, each
attempt's container launch and end, job finish) and the task logs (an attempt's
first phase line: on YARN its container's JVM is up and the task set up).  The load average is printed beside the figures: the
machine is shared.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Figure, Goal, Target  # benchmarks/ is a script directory, not a package

from platform_model.engine import EngineJob, run_engine
from platform_model.engine.yarn import ClusterShape, YarnCluster

AREA = "engine: a mini YARN cluster against LocalJobRunner (bench_engine.py)"
START_TARGET_S = 30.0
JOB_TARGET_S = 60.0


@dataclass(frozen=True, slots=True)
class Timeline:
    """Where one job's time went, ms, from its ingested history and task logs."""

    job_ms: int  # submit -> finish (the history's)
    to_am_ms: int | None  # submit -> the ApplicationMaster started
    am_to_first_task_ms: int | None  # AM started -> first attempt's container launched
    tasks_ms: int  # first attempt launched -> last attempt finished
    after_tasks_ms: int  # last attempt finished -> job finished
    map_attempt_ms: float  # mean successful map attempt, launch -> end
    reduce_attempt_ms: float | None
    setup_ms: float | None  # mean attempt launch -> its first phase line in the task log
    attempts: int  # successful
    other_attempts: int  # failed or killed (speculation)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def timeline(run_dir: Path, scratch: Path) -> Timeline:
    """Ingest ``run_dir`` into a scratch store and read the job's timeline from it."""
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    store = Store(scratch / f"store-{run_dir.name}")
    ingest_paths([run_dir], store)
    con = store.connect()
    row = con.execute("SELECT job_id, submit_ms, finish_ms FROM jobs").fetchall()
    if len(row) != 1:
        raise RuntimeError(f"{run_dir}: expected one job in the store, found {len(row)}")
    job_id, submit_ms, finish_ms = row[0]
    am = con.execute("SELECT min(ts_ms) FROM events WHERE job_id = ? AND event_type = 'AM_STARTED'",
                     [job_id]).fetchone()  # fmt: skip
    am_ms = am[0] if am else None
    att = con.execute(
        "SELECT task_type, start_ms, finish_ms FROM attempts WHERE job_id = ? AND status = 'SUCCEEDED'",
        [job_id],
    ).fetchall()
    others = con.execute("SELECT count(*) FROM attempts WHERE job_id = ? AND status <> 'SUCCEEDED'",
                         [job_id]).fetchone()  # fmt: skip
    first = min(a[1] for a in att)
    last = max(a[2] for a in att)
    maps = [a[2] - a[1] for a in att if a[0] == "MAP"]
    reds = [a[2] - a[1] for a in att if a[0] == "REDUCE"]
    # launch -> the task's first phase line in its log (on YARN: the container's JVM started, the
    # task set up; on LocalJobRunner: the task set up in the one running JVM)
    jvm = con.execute(
        "SELECT avg(e.first_ms - a.start_ms) FROM attempts a JOIN "
        "(SELECT attempt_id, min(ts_ms) AS first_ms FROM attempt_events WHERE job_id = ? GROUP BY 1) e "
        "USING (attempt_id) WHERE a.job_id = ? AND a.status = 'SUCCEEDED'",
        [job_id, job_id],
    ).fetchone()
    con.close()
    return Timeline(
        job_ms=finish_ms - submit_ms,
        to_am_ms=None if am_ms is None else am_ms - submit_ms,
        am_to_first_task_ms=None if am_ms is None else first - am_ms,
        tasks_ms=last - first,
        after_tasks_ms=finish_ms - last,
        map_attempt_ms=sum(maps) / len(maps),
        reduce_attempt_ms=sum(reds) / len(reds) if reds else None,
        setup_ms=None if jvm is None or jvm[0] is None else float(jvm[0]),
        attempts=len(att),
        other_attempts=others[0] if others else 0,
    )


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _parse_conf(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--conf wants KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Run everything into ``work`` (``local``, ``yarn0``..., ``yarn-tried``); the measured times, also
    written to ``work/measured.json`` (:func:`figures` reads them with the run directories)."""
    shape = ClusterShape(args.nodes, args.containers_per_node, args.container_mb)
    cluster_conf = _parse_conf(args.conf)
    tried = _parse_conf(args.try_conf)
    job = EngineJob(input_mb=args.input_mb, selectivity=1.0, maps=args.maps, reduces=args.reduces)
    what = f"{args.input_mb:g} MiB, {args.maps} maps, {args.reduces} reduce{'s' * (args.reduces != 1)}"
    loads = {"start": _load()}
    t0 = time.perf_counter()
    run_engine(job, work / "local")
    local_s = time.perf_counter() - t0
    loads["after_local"] = _load()
    print(f"LocalJobRunner, {what}: {local_s:.2f} s (load average {loads['after_local']})", flush=True)
    yarn_s: list[float] = []
    tried_s = None
    t0 = time.perf_counter()
    with YarnCluster(shape, hadoop_conf=cluster_conf) as cluster:
        start_s = time.perf_counter() - t0
        loads["after_start"] = _load()
        print(f"cluster start ({shape.nodes} x {shape.containers_per_node} x {shape.container_mb} MiB): "
              f"{start_s:.2f} s (load average {loads['after_start']})", flush=True)  # fmt: skip
        for i in range(args.runs):
            t1 = time.perf_counter()
            cluster.run(job, work / f"yarn{i}")
            yarn_s.append(time.perf_counter() - t1)
            print(f"YARN run {i + 1}, {what}: {yarn_s[-1]:.2f} s (load average {_load()})", flush=True)
        if tried:
            t1 = time.perf_counter()
            cluster.run(dataclasses.replace(job, hadoop_conf=tried), work / "yarn-tried")
            tried_s = time.perf_counter() - t1
            print(f"YARN run with {tried}: {tried_s:.2f} s (load average {_load()})", flush=True)
    loads["end"] = _load()
    measured = {"what": what, "shape": shape.to_json(), "cluster_conf": cluster_conf, "tried": tried,
                "local_s": local_s, "start_s": start_s, "yarn_s": yarn_s, "tried_s": tried_s, "loads": loads}  # fmt: skip
    (work / "measured.json").write_text(json.dumps(measured, indent=1) + "\n")
    return measured


def _tried_figures(
    what: str, tried: dict[str, Any], tried_s: float, yarn_s: list[float], lines: dict[str, Timeline]
) -> list[Figure]:
    """The figures of the run with the tried cluster settings, beside the best run with the engine's."""
    best = min(range(len(yarn_s)), key=yarn_s.__getitem__)
    t_tl, b_tl = lines["yarn-tried"], lines[f"yarn{best}"]
    kv = ", ".join(f"{k}={v}" for k, v in tried.items())
    figs = [
        Figure(
            AREA,
            f"{what} with {kv}",
            tried_s,
            "s",
            "the best run with the engine's settings, same cluster",
            yarn_s[best],
            Target(Goal.AT_MOST, JOB_TARGET_S),
        ),
        Figure(
            AREA,
            "with those settings: mean map attempt, container launch to end",
            t_tl.map_attempt_ms / 1000,
            "s",
            "with the engine's",
            b_tl.map_attempt_ms / 1000,
        ),
    ]
    if t_tl.setup_ms is not None and b_tl.setup_ms is not None:
        figs.append(
            Figure(
                AREA,
                "with those settings: attempt launched to its first phase line (mean)",
                t_tl.setup_ms / 1000,
                "s",
                "with the engine's",
                b_tl.setup_ms / 1000,
            )
        )
    if t_tl.am_to_first_task_ms is not None and b_tl.am_to_first_task_ms is not None:
        figs.append(Figure(AREA, "with those settings: ApplicationMaster started to first task container "
                           "launched", t_tl.am_to_first_task_ms / 1000, "s", "with the engine's",
                           b_tl.am_to_first_task_ms / 1000))  # fmt: skip
    return figs


def figures(measured: dict[str, Any], work: Path) -> list[Figure]:
    """The figures of :func:`measure`'s times and the run directories in ``work``."""
    shape = ClusterShape(**measured["shape"])
    what, cluster_conf, tried = measured["what"], measured["cluster_conf"], measured["tried"]
    local_s, start_s, yarn_s, tried_s = (measured[k] for k in ("local_s", "start_s", "yarn_s", "tried_s"))
    loads = measured["loads"]
    lines = {"local": timeline(work / "local", work)}
    lines.update({f"yarn{i}": timeline(work / f"yarn{i}", work) for i in range(len(yarn_s))})
    if tried:
        lines["yarn-tried"] = timeline(work / "yarn-tried", work)
    for name, tl in lines.items():
        print(f"  {name}: " + ", ".join(f"{k} {v:.0f}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in tl.as_dict().items()), flush=True)  # fmt: skip
    note = (f"load average (1 min, 2 cores, shared) {loads['start']} at the start, {loads['after_start']} after "
            f"the cluster started, {loads['end']} at the end")  # fmt: skip
    if measured.get("note"):
        note += f"; {measured['note']}"
    settings = ", ".join(f"{k}={v}" for k, v in cluster_conf.items()) or "the engine's defaults"
    local_tl, first_tl = lines["local"], lines["yarn0"]
    details = {"loads": loads, "cluster_conf": cluster_conf, "yarn_runs_s": yarn_s, "local_s": local_s,
               "timelines": {k: v.as_dict() for k, v in lines.items()}}  # fmt: skip
    figs = [
        Figure(AREA, f"cluster start, {shape.nodes} NodeManagers x {shape.containers_per_node} containers "
               f"of {shape.container_mb} MiB + history server", start_s, "s", target=Target(Goal.AT_MOST,
               START_TARGET_S), note=note, details=details),
        Figure(AREA, f"{what} on a fresh cluster (submit to history and logs collected)", yarn_s[0], "s",
               "the same job on LocalJobRunner (its JVM's start-up included)", local_s,
               Target(Goal.AT_MOST, JOB_TARGET_S), note=f"cluster settings: {settings}"),
    ]  # fmt: skip
    if len(yarn_s) > 1:
        later = min(yarn_s[1:])
        figs.append(Figure(AREA, f"{what}, best of runs 2-{len(yarn_s)} on the same cluster (a suite's case)",
                           later, "s", "the same job on LocalJobRunner", local_s,
                           Target(Goal.AT_MOST, JOB_TARGET_S)))  # fmt: skip
    figs += [
        Figure(AREA, "job submit to finish (history), fresh cluster", first_tl.job_ms / 1000, "s",
               "LocalJobRunner's", local_tl.job_ms / 1000),
        Figure(AREA, "mean map attempt, container launch to end", first_tl.map_attempt_ms / 1000, "s",
               "LocalJobRunner's map attempt", local_tl.map_attempt_ms / 1000),
    ]  # fmt: skip
    if tried:
        figs += _tried_figures(what, tried, tried_s, yarn_s, lines)
    if first_tl.to_am_ms is not None and first_tl.am_to_first_task_ms is not None:
        figs += [
            Figure(AREA, "submit to ApplicationMaster started", first_tl.to_am_ms / 1000, "s"),
            Figure(AREA, "ApplicationMaster started to first task container launched",
                   first_tl.am_to_first_task_ms / 1000, "s"),
            Figure(AREA, "last task finished to job finished", first_tl.after_tasks_ms / 1000, "s"),
        ]  # fmt: skip
    if first_tl.setup_ms is not None:
        # (LocalJobRunner's attempt starts at its first log line: no peer)
        figs.append(Figure(AREA, "attempt launched to its first phase line in the task log (mean): the "
                           "container's JVM start and task set-up", first_tl.setup_ms / 1000, "s"))  # fmt: skip
    return figs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input-mb", type=float, default=16.0)
    ap.add_argument("--maps", type=int, default=8)
    ap.add_argument("--reduces", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--containers-per-node", type=int, default=2)
    ap.add_argument("--container-mb", type=int, default=512)
    ap.add_argument("--runs", type=int, default=2, help="runs of the job on the one cluster (default 2)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a cluster setting to try (repeatable); the engine's own defaults otherwise")  # fmt: skip
    ap.add_argument("--try", dest="try_conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a job setting to try in one more run on the same cluster (repeatable)")  # fmt: skip
    ap.add_argument("--keep", type=Path, help="keep the run directories here (default: removed)")
    ap.add_argument("--json", type=Path, help="write the figures as JSON here")
    ap.add_argument("--figures-from", type=Path, metavar="DIR",
                    help="measure nothing: the figures of the runs kept in DIR (--keep) and its measured.json")  # fmt: skip
    args = ap.parse_args(argv)
    if args.figures_from is not None:
        work = args.figures_from
        figs = figures(json.loads((work / "measured.json").read_text()), work)
    else:
        work = Path(tempfile.mkdtemp(prefix="phaseline-bench-engine-")) if args.keep is None else args.keep
        work.mkdir(parents=True, exist_ok=True)
        try:
            figs = figures(measure(args, work), work)
        finally:
            if args.keep is None:
                shutil.rmtree(work, ignore_errors=True)
    for f in figs:
        peer = "" if f.ratio is None else f" | {f.peer}: {f.peer_value:.3g} ({f.ratio:.2f}x)"
        met = {True: " [met]", False: " [MISSED]", None: ""}[f.met]
        print(f"{f.name}: {f.value:.3g} {f.unit}{peer}{met}")
    if args.json:  # for benchmarks/run, which judges the targets from the figures
        args.json.write_text(json.dumps([f.as_dict() for f in figs], indent=1) + "\n")
        return 0
    return 0 if all(f.met is not False for f in figs) else 1


if __name__ == "__main__":
    sys.exit(main())
