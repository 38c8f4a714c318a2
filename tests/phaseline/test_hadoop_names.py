"""phaseline.hadoop_names is the one home of Hadoop's names: no module spells them again.

Docstrings and comments may quote a name (a format's example line); code may not: a
string literal holding a framework counter group, or a second ``split_host``, task-type
parser or event-kind enum, is a copy that can drift from the one every reader imports.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from phaseline import hadoop_names
from tests.conftest import REPO

HOME = REPO / "phaseline" / "hadoop_names.py"
CODE_DIRS = ("phaseline", "ingest", "profiles", "platform_model", "predict", "benchmarks")
GROUPS = (
    hadoop_names.TASK_COUNTER_GROUP,
    hadoop_names.FILE_SYSTEM_COUNTER_GROUP,
    hadoop_names.JOB_COUNTER_GROUP,
    hadoop_names.FILE_INPUT_FORMAT_COUNTER_GROUP,
    hadoop_names.FILE_OUTPUT_FORMAT_COUNTER_GROUP,
)


def _sources(suffix: str) -> list[Path]:
    return sorted(p for d in CODE_DIRS for p in (REPO / d).rglob(f"*{suffix}") if p != HOME)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (module, class, function)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _literals_naming(path: Path, names: tuple[str, ...]) -> list[str]:
    """``path:line: 'literal'`` for each string literal (not a docstring) that holds one of ``names``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _docstrings(tree)
    return [
        f"{path.name}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        and any(name in node.value for name in names)
    ]


def test_the_sources_are_found() -> None:
    assert len(_sources(".py")) > 100
    assert REPO / "ingest" / "tasklog_patterns.py" in _sources(".py")


def test_no_string_literal_outside_hadoop_names_spells_a_framework_counter_group() -> None:
    stray = [f"{path.parent.name}/{hit}" for path in _sources(".py") for hit in _literals_naming(path, GROUPS)]
    assert stray == [], "import the group from phaseline.hadoop_names:\n" + "\n".join(stray)


def test_no_sql_file_spells_a_framework_counter_group() -> None:
    stray = [str(p.relative_to(REPO)) for p in _sources(".sql") if any(g in p.read_text() for g in GROUPS)]
    assert stray == []


@pytest.mark.parametrize(
    "definition",
    [r"def split_host\b", r"def \w*task_type\w*\(", r"class \w*EventKind\b", r"def job_id_of\b", r"def task_id_of\b"],
)
def test_hadoop_name_helpers_are_defined_once(definition: str) -> None:
    pattern = re.compile(rf"^\s*{definition}", re.MULTILINE)
    elsewhere = [str(p.relative_to(REPO)) for p in _sources(".py") if pattern.search(p.read_text())]
    assert elsewhere == []
    assert pattern.search(HOME.read_text())


def test_the_check_sees_a_literal_and_an_f_string_but_not_a_docstring(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    group = hadoop_names.TASK_COUNTER_GROUP
    sample.write_text(
        f'"""Reads {group}={{A=1}} lines."""\n\n'
        f'GROUP = "{group}"  # {group}\n\n\n'
        f'def f(x):\n    """{group}"""\n    return f"{group}.{{x}}"\n'
    )
    assert _literals_naming(sample, GROUPS) == [f"sample.py:3: {group!r}", f"sample.py:8: {group + '.'!r}"]
