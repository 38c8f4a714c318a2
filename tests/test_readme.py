"""The README's library example runs as written (from a directory holding sample_traces/)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO


def test_readme_library_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert len(blocks) == 1
    shutil.copytree(REPO / "sample_traces", tmp_path / "sample_traces")
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "README.md", "exec"), {})
    assert (tmp_path / "profile.json").stat().st_size > 0
    assert any(os.scandir(tmp_path / "phaseline-store" / "data"))
