"""`phaseline mva --demands`: the demand CSV as spreadsheets save it, and cells that are no decimal numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from phaseline.errors import PredictionError
from predict.vianna.model import read_demands

TABLE = "task,cpu,disk\nmap,5.0764,3.1844\nshuffle_sort,0.5217,0.4082\nmerge,37.4983,59.2157\n"


def test_a_byte_order_mark_is_no_part_of_the_header(tmp_path: Path) -> None:
    # Excel's "CSV UTF-8" starts with a BOM: the header had read '\ufefftask' and was refused
    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    plain.write_text(TABLE, encoding="utf-8")
    marked.write_text(TABLE, encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    assert read_demands(marked) == read_demands(plain)
    assert read_demands(marked).map == {"cpu": 5.0764, "disk": 3.1844}


@pytest.mark.parametrize(
    "cell",
    [
        "1_0",  # Python's float() reads 10
        "\uff11\uff10",  # full-width 10
        "\u0661\u0660",  # Arabic-Indic 10
        "nan",
        "inf",
        "-inf",
        "Infinity",
        "0x10",
        "1.2.3",
        "",  # an empty cell is 0 s: accepted (below)
    ],
)
def test_a_demand_is_an_ascii_decimal_number(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "d.csv"
    path.write_text(TABLE.replace("0.5217", cell), encoding="utf-8")
    if cell == "":
        assert read_demands(path).shuffle_sort["cpu"] == 0.0
        return
    with pytest.raises(PredictionError, match=rf"^{path}:3: (shuffle_sort )?demands must be") as caught:
        read_demands(path)
    assert "cpu" in str(caught.value)


@pytest.mark.parametrize(("cell", "value"), [("12", 12.0), ("+0.5", 0.5), (".25", 0.25), ("1e-3", 1e-3),
                                             ("2.5E+1", 25.0), ("3.", 3.0)])  # fmt: skip
def test_decimal_forms_a_spreadsheet_writes_are_read(tmp_path: Path, cell: str, value: float) -> None:
    path = tmp_path / "d.csv"
    path.write_text(TABLE.replace("0.5217", cell), encoding="utf-8")
    assert read_demands(path).shuffle_sort["cpu"] == value


def test_a_negative_demand_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(TABLE.replace("0.5217", "-0.5"), encoding="utf-8")
    with pytest.raises(PredictionError, match=r"shuffle_sort demands must be finite, >= 0"):
        read_demands(path)
