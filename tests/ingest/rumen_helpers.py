"""Helpers shared by the Rumen tests: the Mumak trace and the reader's rows."""

from __future__ import annotations

from pathlib import Path

from reader_checks import rows_of

from ingest.base import Row
from ingest.rumen import read_rumen

MUMAK = "apache-hadoop-mapreduce/mumak"


def read(path: Path) -> list[Row]:
    return rows_of(read_rumen, path)
