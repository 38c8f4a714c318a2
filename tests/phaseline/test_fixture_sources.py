"""tests/data/fixtures/SOURCES.md: every real trace the tests carry, with its origin and licence.

The table is the fixtures' provenance: each file's repository, path there, commit and licence,
plus its size and sha256 prefix so that an edited or swapped file is caught here.
"""

from __future__ import annotations

import hashlib
import re

from tests.conftest import REPO

HERE = REPO / "tests" / "data" / "fixtures"
TABLE_ROW = re.compile(
    r"^\| `(?P<file>[^`]+)` \| (?P<bytes>\d+) \| (?P<sha>[0-9a-f]{16}) \| (?P<repo>[^|]+?) \| `(?P<path>[^`]+)` "
    r"\| (?P<commit>[0-9a-f]{12,40}) \| (?P<licence>[^|]+?) \|$"
)
LICENCES = {"Apache-2.0", "MIT"}


def table() -> dict[str, dict[str, str]]:
    rows = {}
    for line in (HERE / "SOURCES.md").read_text().splitlines():
        if m := TABLE_ROW.match(line):
            rows[m["file"]] = m.groupdict()
    return rows


def test_every_fixture_file_is_in_the_table_and_every_row_is_a_file() -> None:
    on_disk = {p.relative_to(HERE).as_posix() for p in HERE.rglob("*") if p.is_file() and p.name != "SOURCES.md"}
    listed = set(table())
    assert len(on_disk) >= 80
    assert on_disk - listed == set(), "fixture files without a row in SOURCES.md"
    assert listed - on_disk == set(), "rows in SOURCES.md without a file"


def test_each_file_matches_its_size_and_hash_and_names_a_licence() -> None:
    for name, row in table().items():
        data = (HERE / name).read_bytes()
        assert len(data) == int(row["bytes"]), name
        assert hashlib.sha256(data).hexdigest()[:16] == row["sha"], name
        assert row["licence"] in LICENCES, name
        assert "/" in row["repo"], name

