"""Helpers shared by the .jhist reader's tests: a fixture by name, its events, rows to compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _fixture(jhists: list[Path], fragment: str) -> Path:
    (path,) = [p for p in jhists if fragment in str(p)]
    return path


def _raw_events(data: bytes) -> list[tuple[int, int, dict[str, Any]]]:
    """``(line_no, byte offset, event)`` for every event line, decoded with the standard library."""
    out, offset = [], 0
    for line_no, line in enumerate(data.splitlines(keepends=True), start=1):
        if line_no > 2 and line.strip():
            out.append((line_no, offset, json.loads(line)))
        offset += len(line)
    return out


def _comparable(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Rows minus what legitimately changes with the layout of the file (line numbers, raw text)."""
    return {
        table: sorted(
            (json.dumps({k: v for k, v in r.items() if k not in ("seq", "payload_json")}, sort_keys=True))
            for r in rows
        )
        for table, rows in tables.items()
    }
