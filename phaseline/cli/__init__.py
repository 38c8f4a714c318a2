"""The ``phaseline`` command line: a thin layer over the library.

Each command group lives in its own module here; commands parse options, call
the library, and turn :class:`~phaseline.errors.PhaselineError` into clean
messages.  No logic lives in the CLI.
"""

from __future__ import annotations

import click

from phaseline import __version__
from phaseline.cli.engine import engine
from phaseline.cli.ingest_cmds import ingest, jobs, query, tables


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="phaseline")
def main() -> None:
    """phaseline: Hadoop MapReduce traces -> phases, profiles, platform models, predictions."""


main.add_command(ingest)
main.add_command(query)
main.add_command(jobs)
main.add_command(tables)
main.add_command(engine)
