"""Helpers shared by the `yarn logs` tests: the three real jobs' files, read raw or as rows."""

from __future__ import annotations

import gzip
from pathlib import Path

from ingest.base import ReadContext, Row
from ingest.yarn_logs import read_yarn_logs

FOLDER = "splitlog-yarn-logs"
TERAGEN, TERASORT, TERAVALIDATE = (f"application_1756057717712_000{i}.yarn-logs.txt.gz" for i in (1, 2, 3))


def _raw(fixtures_dir: Path, name: str) -> str:
    with gzip.open(fixtures_dir / FOLDER / name, "rt", encoding="utf-8") as fh:
        return fh.read()


def _rows_and_ctx(path: Path) -> tuple[list[Row], ReadContext]:
    ctx = ReadContext(path)
    return list(read_yarn_logs(path, ctx)), ctx
