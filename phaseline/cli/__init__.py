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

import click

from phaseline import __version__

#: command name -> (module, attribute), in the order ``--help`` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "analyze": ("phaseline.cli.analyze", "analyze"),
    "ingest": ("phaseline.cli.ingest_cmds", "ingest"),
    "query": ("phaseline.cli.ingest_cmds", "query"),
    "jobs": ("phaseline.cli.ingest_cmds", "jobs"),
    "tables": ("phaseline.cli.ingest_cmds", "tables"),
    "verify": ("phaseline.cli.ingest_cmds", "verify"),
    "compact": ("phaseline.cli.ingest_cmds", "compact"),
    "phases": ("phaseline.cli.profiles", "phases"),
    "timeline": ("phaseline.cli.profiles", "timeline"),
    "critical-path": ("phaseline.cli.profiles", "critical_path_cmd"),
    "profile": ("phaseline.cli.profiles", "profile"),
    "report": ("phaseline.cli.profiles", "report"),
    "dataflow": ("phaseline.cli.dataflow", "dataflow"),
    "dataflow-chart": ("phaseline.cli.dataflow", "dataflow_chart"),
    "dataflow-gap": ("phaseline.cli.dataflow", "dataflow_gap"),
    "hotspots": ("phaseline.cli.dataflow", "hotspots"),
    "engine": ("phaseline.cli.engine", "engine"),
    "bench": ("phaseline.cli.platform", "bench"),
    "fit": ("phaseline.cli.platform", "fit_cmd"),
    "platform": ("phaseline.cli.platform", "platform"),
    "predict": ("phaseline.cli.predict", "predict"),
    "whatif": ("phaseline.cli.predict", "whatif_cmd"),
    "mva": ("phaseline.cli.mva", "mva"),
    "backtest": ("phaseline.cli.backtest", "backtest_cmd"),
}


class LazyGroup(click.Group):
    """A click group that imports a command's module only when the command is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target
        command = getattr(importlib.import_module(module), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module}.{attr} is not a click command")
        return command


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="phaseline")
def main() -> None:
    """phaseline: Hadoop MapReduce traces -> phases, profiles, platform models, predictions."""
