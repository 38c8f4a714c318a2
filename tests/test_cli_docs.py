"""Every CLI command has help text and appears in the README's CLI reference."""

from __future__ import annotations

import click
from click.testing import CliRunner

from phaseline.cli import main
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
