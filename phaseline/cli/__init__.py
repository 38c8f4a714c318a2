"""The ``phaseline`` command line: a thin layer over the library.

Each command group lives in its own module here; commands parse options, call
the library, and turn :class:`~phaseline.errors.PhaselineError` into clean
messages.  No logic lives in the CLI.

Command modules are imported when their command runs (:class:`LazyGroup`), so
``phaseline ingest`` does not pay for statsmodels, scipy or matplotlib, which
only the modelling and plotting commands need.
"""

from __future__ import annotations

import importlib
import os
from typing import NamedTuple

import click

from phaseline import __version__

#: Arrow's allocator for the command's process, unless the user chose one
#: (``ARROW_DEFAULT_MEMORY_POOL``, read when Arrow first allocates, so set before
#: any command module is imported).  pyarrow's default, mimalloc, keeps freed
#: pages: ingesting a 500 MB ``.jhist`` peaked at 170-176 MB against 112 MB for
#: 1 MB (1.54-1.57x); with the system allocator 135-138 MB against 94 MB
#: (1.44-1.47x), at the same speed (three runs each, side by side, 2026-11-25).
ARROW_POOL = "system"
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", ARROW_POOL)


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
