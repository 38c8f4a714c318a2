"""Helpers shared by the 0.20/1.x history tests: Rumen's test logs and the reader's rows."""

from __future__ import annotations

from pathlib import Path

from reader_checks import rows_of

from ingest.base import Row
from ingest.history_v1 import read_history_v1

RUMEN_TEST = "apache-hadoop-mapreduce/rumen-small-trace-test"


def read(path: Path) -> list[Row]:
    return rows_of(read_history_v1, path)
