"""The README's library example runs as written (from a directory holding sample_traces/)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from phaseline.errors import DataQualityWarning
from tests.conftest import REPO


def test_readme_library_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert len(blocks) == 1
    shutil.copytree(REPO / "sample_traces", tmp_path / "sample_traces")
    monkeypatch.chdir(tmp_path)
    # the sample's first run (4 maps on one slot, its first map three times the others) says its profile
    # rests on that split, as `phaseline profile` says it to a user
    with pytest.warns(DataQualityWarning, match="profile a second input size"):
        exec(compile(blocks[0], "README.md", "exec"), {})
    assert (tmp_path / "profile.json").stat().st_size > 0
    assert any(os.scandir(tmp_path / "phaseline-store" / "data"))


def test_readme_opens_with_the_two_commands_and_ci_runs_the_second() -> None:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```\n(.*?)```", readme, flags=re.S)
    assert [b.strip() for b in blocks[:2]] == ["./dev sample", "./dev test"]
    assert "exec ./dev test" in (REPO / ".ci" / "run").read_text()


def test_dev_sample_runs_the_main_job_on_the_bundled_sample(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "PHASELINE_STORE": str(tmp_path / "store"), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run([str(REPO / "dev"), "sample", "--out", str(tmp_path / "report")], env=env,
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reports = list((tmp_path / "report").glob("*/report.html"))
    assert len(reports) == 3
    bad = subprocess.run([str(REPO / "dev")], capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2
    assert "usage: ./dev sample | ./dev test" in bad.stderr
