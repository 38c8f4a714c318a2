"""The ``phaseline`` command line: a thin layer over the library.

Each command group lives in its own module here; commands parse options, call
the library, and turn :class:`~phaseline.errors.PhaselineError` into clean
messages.  No logic lives in the CLI.
"""

from __future__ import annotations

import click

from phaseline import __version__
from phaseline.cli.analyze import analyze
from phaseline.cli.backtest import backtest_cmd
from phaseline.cli.dataflow import dataflow, dataflow_chart, dataflow_gap, hotspots
from phaseline.cli.engine import engine
from phaseline.cli.ingest_cmds import compact, ingest, jobs, query, tables, verify
from phaseline.cli.mva import mva
from phaseline.cli.platform import bench, fit_cmd, platform
from phaseline.cli.predict import predict, whatif_cmd
from phaseline.cli.profiles import critical_path_cmd, phases, profile, report, timeline


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="phaseline")
def main() -> None:
    """phaseline: Hadoop MapReduce traces -> phases, profiles, platform models, predictions."""


main.add_command(analyze)
main.add_command(ingest)
main.add_command(query)
main.add_command(jobs)
main.add_command(tables)
main.add_command(verify)
main.add_command(compact)
main.add_command(engine)
main.add_command(predict)
main.add_command(whatif_cmd)
for _cmd in (profile, timeline, phases, report, critical_path_cmd):
    main.add_command(_cmd)
for _cmd in (bench, fit_cmd, platform):
    main.add_command(_cmd)
main.add_command(mva)
for _cmd in (dataflow, dataflow_chart, hotspots, dataflow_gap):
    main.add_command(_cmd)
main.add_command(backtest_cmd)
