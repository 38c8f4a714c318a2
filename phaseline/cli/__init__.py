"""The ``phaseline`` command line: a thin layer over the library.

Each command group lives in its own module here; commands parse options, call
the library, and turn :class:`~phaseline.errors.PhaselineError` into clean
messages.  No logic lives in the CLI.

Command modules are imported when their command runs (:class:`LazyGroup`), so
``phaseline ingest`` does not pay for statsmodels, scipy or matplotlib, which
only the modelling and plotting commands need.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
from pathlib import Path
from typing import NamedTuple

import click

from phaseline import __version__


def arrow_pool() -> str:
    """Arrow's allocator for the command's process: jemalloc where this pyarrow build has it, else the
    system allocator (never pyarrow's default, mimalloc).

    Set, unless the user chose one, as ``ARROW_DEFAULT_MEMORY_POOL``, which Arrow reads when it first
    allocates (importing pyarrow does), so it is chosen before any command module is imported: from
    the build's own ``arrow/util/config.h`` (``ARROW_JEMALLOC``), found without importing pyarrow.
    Measured, ``phaseline ingest``'s peak RSS for a 500 MB ``.jhist`` against a 1 MB one: mimalloc
    keeps freed pages (170-176 against 112 MB, 1.54-1.57x, 2026-11-25); the system allocator did
    better (1.44-1.47x) until the Parquet row groups were written on a thread of their own, whose
    glibc arena keeps what it frees (164-173 against 101 MB, 1.63-1.72x, 2026-12-02); jemalloc
    145-149 against 104 MB (1.39-1.42x), at the same speed (three runs each, side by side, 2026-12-02).
    """
    spec = importlib.util.find_spec("pyarrow")
    folders = (spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        config = Path(folder) / "include" / "arrow" / "util" / "config.h"
        with contextlib.suppress(OSError):
            if "#define ARROW_JEMALLOC" in config.read_text(errors="replace"):
                return "jemalloc"
    return "system"


if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:  # (a user's choice stands, and spares the look-up)
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = arrow_pool()


class Entry(NamedTuple):
    """Where a command lives, and its one-line summary for ``phaseline --help``."""

    module: str
    attr: str
    summary: str


#: command name -> its entry, in the order ``--help`` lists them.  The summary is the listing's text,
#: so that ``phaseline --help`` imports no command module (and loads no statsmodels or matplotlib).
COMMANDS: dict[str, Entry] = {
    "analyze": Entry("phaseline.cli.analyze", "analyze",
                     "Ingest paths and explain every job they hold: where the time went, per phase."),
    "ingest": Entry("phaseline.cli.ingest_cmds", "ingest", "Ingest trace files, directories or globs into the store."),
    "query": Entry("phaseline.cli.ingest_cmds", "query", "Run DuckDB SQL over the store's tables (one view per table)."),
    "jobs": Entry("phaseline.cli.ingest_cmds", "jobs", "List the jobs in the store."),
    "tables": Entry("phaseline.cli.ingest_cmds", "tables", "List the store's tables with their row counts and columns."),
    "verify": Entry("phaseline.cli.store_cmds", "verify",
                    "Re-check the whole store: schemas, row counts against sources, reconciliation, orphans."),
    "compact": Entry("phaseline.cli.store_cmds", "compact",
                     "Merge the store's many small Parquet files into few large ones."),
    "phases": Entry("phaseline.cli.profiles", "phases", "One row per (attempt, phase): start, end, duration, data, source."),
    "timeline": Entry("phaseline.cli.profiles", "timeline",
                      "Draw a job's attempts by phase (PNG/SVG), or write a Chrome trace (.json)."),
    "critical-path": Entry("phaseline.cli.profiles", "critical_path_cmd",
                           "The chain of attempts and phases that set the job's finish time."),
    "profile": Entry("phaseline.cli.profiles", "profile",
                     "Extract the job profile of past runs (Zhang 2013, Herodotou 2011)."),
    "report": Entry("phaseline.cli.profiles", "report", "Write an offline HTML report of one job."),
    "dataflow": Entry("phaseline.cli.dataflow", "dataflow",
                      "Rebuild a job's vertex instances from its thread samples; busy vs idle per vertex."),
    "dataflow-chart": Entry("phaseline.cli.dataflow", "dataflow_chart", "Draw a job's dataflow execution chart (HiTune)."),
    "dataflow-gap": Entry("phaseline.cli.dataflow", "dataflow_gap",
                          "Per reduce: the gap between the last map's end and its shuffle's end."),
    "hotspots": Entry("phaseline.cli.dataflow", "hotspots",
                      "Method hotspots per vertex, or one vertex's busy/idle by host."),
    "engine": Entry("phaseline.cli.engine", "engine", "Run MapReduce jobs on the local Hadoop engine (JDK 17)."),
    "bench": Entry("phaseline.cli.platform", "bench",
                   "Plan, script and run the platform microbenchmarks (Zhang 2013, section 3)."),
    "fit": Entry("phaseline.cli.platform", "fit_cmd", "Fit the platform model: robust lines per generic phase."),
    "platform": Entry("phaseline.cli.platform", "platform", "Use a fitted platform model."),
    "predict": Entry("phaseline.cli.predict", "predict",
                     "Predict a profiled job's completion time with every model side by side."),
    "whatif": Entry("phaseline.cli.predict", "whatif_cmd", "Time and dataflow per configuration change."),
    "mva": Entry("phaseline.cli.mva", "mva", "The Vianna et al. queuing model from measured service demands."),
    "doctor": Entry("phaseline.cli.doctor", "doctor",
                    "Diagnose jobs: heuristics with severities, and settings that fix them (--recommend)."),
    "backtest": Entry("phaseline.cli.backtest", "backtest_cmd",
                      "Predict measured runs from the smallest run's profile; print the errors."),
}


class LazyGroup(click.Group):
    """A click group that imports a command's module only when the command is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        command = getattr(importlib.import_module(entry.module), entry.attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{entry.module}.{entry.attr} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from :data:`COMMANDS`' summaries, without importing a command."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name].summary) for name in self.list_commands(ctx)])


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="phaseline")
def main() -> None:
    """phaseline: Hadoop MapReduce traces -> phases, profiles, platform models, predictions."""
