"""The CLI only parses options, calls the library and renders: no SQL in its modules.

A query in a command is a second definition of something a library function (and its
``.sql`` file's golden tests) should own, e.g. which jobs ``fit`` takes or a job's duration.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO

CLI = REPO / "phaseline" / "cli"
#: A SQL statement's keyword followed by a blank, as a query in a string literal starts or holds it.
SQL = re.compile(r"\b(SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE (?:OR REPLACE )?(?:TEMP )?(?:TABLE|VIEW)|WITH \w+ AS)\s")


def sql_literals(path: Path) -> list[str]:
    """``file:line: literal`` for each string literal (docstrings included) that holds SQL."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        f"{path.name}:{node.lineno}: {node.value[:60]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value)
    ]


def test_cli_modules_hold_no_sql() -> None:
    modules = sorted(CLI.glob("*.py"))
    assert len(modules) >= 10
    stray = [hit for path in modules for hit in sql_literals(path)]
    assert stray == [], "move the query to a .sql file behind a library function:\n" + "\n".join(stray)


def test_the_check_finds_a_query_in_a_string_and_an_f_string(tmp_path: Path) -> None:
    sample = tmp_path / "cmd.py"
    sample.write_text(
        'HELP = "Select the jobs to fit."\n'
        'Q = "SELECT name, count(*) FROM jobs GROUP BY name"\n'
        'def f(t):\n    return f"SELECT count(*) FROM {t}"\n'
    )
    assert [hit.split(":")[1] for hit in sql_literals(sample)] == ["2", "4"]
