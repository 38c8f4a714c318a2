"""A shell script that runs a benchmark plan on a real cluster (Zhang et al. 2013, section 3).

:func:`write_script` turns a :class:`~platform_model.bench_plan.BenchPlan` into a bash
script of ``hadoop jar`` commands (and the build of the benchmark job's jar),
plus the commands that fetch back what ``phaseline ingest`` reads.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from phaseline.errors import PlatformModelError

if TYPE_CHECKING:
    from platform_model.bench_plan import BenchPlan

_MIB = 1 << 20
#: What --hdfs-root may be: it is written into the script unquoted (``${HDFS_ROOT:-...}``).
_SAFE_ROOT = re.compile(r"/[A-Za-z0-9._/-]*")


def engine_sources() -> list[Path]:
    """The Java sources of the benchmark job (the engine's)."""
    from platform_model.engine import runner

    return sorted((Path(runner.__file__).resolve().parent / "java").glob("*.java"))


def write_script(plan: BenchPlan, *, hdfs_root: str = "/tmp/phaseline-bench") -> str:
    """A bash script that builds the benchmark jar and runs the plan on a real cluster.

    The script embeds the job's Java sources, compiles them against
    ``hadoop classpath``, generates each benchmark's input in HDFS with
    ``TeraRecordGen``, runs it with ``hadoop jar``, and fetches back what
    ``phaseline ingest`` reads: the job history (``mapred job -history``, and
    the ``.jhist`` files of the history server's done directory) and the
    aggregated task logs (``yarn logs -applicationId``).  Each finished
    benchmark leaves a marker, so a re-run resumes.  ``hdfs_root`` must be a
    plain absolute path other than ``/`` (PlatformModelError otherwise).
    """
    from platform_model.engine.job import BENCH_CLASS

    if not _SAFE_ROOT.fullmatch(hdfs_root) or hdfs_root.strip("/") == "":
        raise PlatformModelError(
            f"--hdfs-root {hdfs_root!r}: give an absolute HDFS directory of letters, digits and ._-/ "
            "other than / (the script deletes each benchmark's directory under it)"
        )
    q = _shq
    settings = plan.settings()
    lines = [
        "#!/usr/bin/env bash",
        "# Microbenchmarks of Zhang, Cherkasova, Loo (ICPE 2013), section 3, written by `phaseline bench script`.",
        f"# {len(plan.benchmarks)} benchmarks; scale {plan.scale:g}; shuffle break from the config: "
        f"{plan.shuffle_break_bytes() / _MIB:.1f} MiB per reduce task.",
        "# Afterwards: phaseline ingest \"$OUT\" && phaseline fit --out platform.json --report",
        "set -euo pipefail",
        f"HDFS_ROOT=${{HDFS_ROOT:-{hdfs_root}}}",
        'OUT=${OUT:-phaseline-bench-out}',
        'BUILD="$OUT/build"',
        'mkdir -p "$BUILD/src" "$BUILD/classes" "$OUT/runs"',
        "",
        "# 1. The benchmark job's sources (phaseline/platform_model/engine/java), compiled on the cluster.",
    ]
    lines += _embedded_sources()
    lines += [
        'javac -nowarn --release 8 -cp "$(hadoop classpath)" -d "$BUILD/classes" "$BUILD"/src/*.java',
        'jar cf "$BUILD/phaseline-engine.jar" -C "$BUILD/classes" .',
        'JAR="$BUILD/phaseline-engine.jar"',
        "",
        "# 2. The benchmarks.",
        "DEFS=(" + " ".join(f"-D {q(f'{k}={v}')}" for k, v in sorted(settings.items())) + ")",
        "run_bench() {  # name records files seed selectivity reduces split_minsize",
        '  local name=$1 records=$2 files=$3 seed=$4 sel=$5 reds=$6 minsize=$7',
        '  if [[ -f "$OUT/runs/$name.done" ]]; then echo "skip $name (done)"; return; fi',
        '  hdfs dfs -rm -r -f -skipTrash "$HDFS_ROOT/$name" >/dev/null 2>&1 || true',
        '  hadoop jar "$JAR" phaseline.engine.TeraRecordGen "$HDFS_ROOT/$name/input" "$records" "$files" "$seed"',
        f'  hadoop jar "$JAR" {BENCH_CLASS} "${{DEFS[@]}}" \\',
        '    -D phaseline.bench.selectivity="$sel" -D phaseline.bench.seed="$seed" -D mapreduce.job.reduces="$reds" \\',
        '    -D mapreduce.input.fileinputformat.split.minsize="$minsize" \\',
        '    "$HDFS_ROOT/$name/input" "$HDFS_ROOT/$name/output" 2>&1 | tee "$OUT/runs/$name.client.log"',
        "  local job app",
        "  job=$(grep -o 'job_[0-9]*_[0-9]*' \"$OUT/runs/$name.client.log\" | head -n 1)",
        '  app=${job/job_/application_}',
        '  mapred job -history all "$job" > "$OUT/runs/$name.history.txt" || true',
        '  yarn logs -applicationId "$app" > "$OUT/runs/$name.yarn-logs.txt" || true',
        '  hdfs dfs -rm -r -f -skipTrash "$HDFS_ROOT/$name" >/dev/null 2>&1 || true',
        '  echo "$job" > "$OUT/runs/$name.done"',
        "}",
    ]
    from platform_model.engine.job import RECORD_BYTES

    for b in plan.benchmarks:
        records = max(b.maps, round(b.total_input_mb * _MIB / RECORD_BYTES))
        minsize = math.ceil(records / b.maps) * RECORD_BYTES
        lines.append(f"run_bench {q(b.name)} {records} {b.maps} {b.seed} {b.selectivity!r} {b.reduces} {minsize}")
    lines += [
        "",
        "# 3. Job history files of the history server's done directory (the .jhist and conf of every run).",
        'DONE=$(hdfs getconf -confKey mapreduce.jobhistory.done-dir 2>/dev/null || echo /tmp/hadoop-yarn/staging/history/done)',
        'mkdir -p "$OUT/history"',
        'hdfs dfs -get "$DONE" "$OUT/history/" || echo "could not fetch $DONE; copy the .jhist files by hand"',
        'echo "done: phaseline ingest $OUT"',
    ]
    return "\n".join(lines) + "\n"


def _embedded_sources() -> list[str]:
    """Script lines that write the benchmark job's Java sources (one here-document each)."""
    lines: list[str] = []
    for src in engine_sources():
        text = src.read_text(encoding="utf-8")
        marker = "PHASELINE_JAVA_EOF"
        if marker in text:  # pragma: no cover - a source would have to contain the marker
            raise PlatformModelError(f"{src} contains {marker}")
        lines += [f"cat > \"$BUILD/src/{src.name}\" <<'{marker}'", text.rstrip("\n"), marker]
    return lines


def _shq(text: str) -> str:
    """Quote for bash."""
    if text and all(c.isalnum() or c in "@%+=:,./-_" for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"
