"""Every CLI command has help text and appears in the README's CLI reference."""

from __future__ import annotations

import subprocess
import sys

import click
from click.testing import CliRunner

from phaseline.cli import COMMANDS, main
from tests.conftest import REPO


def all_commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None, name
        full = f"{prefix}{name}"
        out.append((full, cmd))
        if isinstance(cmd, click.Group):
            out.extend(all_commands(cmd, full + " "))
    return out


def test_every_command_has_help_and_is_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text()
    runner = CliRunner()
    commands = all_commands(main)
    assert len(commands) >= 5
    for name, cmd in commands:
        assert (cmd.help or "").strip(), f"`phaseline {name}` has no help text"
        result = runner.invoke(main, [*name.split(), "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert f"phaseline {name}" in readme, f"`phaseline {name}` is missing from the README"


def test_the_command_list_imports_no_command() -> None:
    # `phaseline --help` lists every command from COMMANDS' summaries: no command module (and none of
    # statsmodels, matplotlib or duckdb behind them) is imported, so the listing is quick.
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from phaseline.cli import main\n"
        "out = CliRunner().invoke(main, ['--help']).output\n"
        "print(out)\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith('phaseline.cli.') or m in "
        "('statsmodels', 'matplotlib', 'duckdb')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.rstrip().splitlines()[-1] == "LOADED []"
    listing = out.split("Commands:", 1)[1]
    for name in COMMANDS:
        assert f"\n  {name} " in listing, name
    # in the workflow's order, not alphabetical
    assert listing.index("  analyze ") < listing.index("  ingest ") < listing.index("  backtest ")
