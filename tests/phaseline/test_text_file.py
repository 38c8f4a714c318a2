"""read_text_file: a user's text file, its errors naming the file, line and byte of a bad byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from phaseline.errors import PredictionError, ProfileError
from phaseline.text_file import read_text_file


def test_the_text_is_read_and_a_byte_order_mark_dropped_only_where_asked(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"\xef\xbb\xbftask,cpu\nmap,1\n")
    assert read_text_file(path, "demand table", PredictionError, encoding="utf-8-sig") == "task,cpu\nmap,1\n"
    assert read_text_file(path, "demand table", PredictionError) == "\ufefftask,cpu\nmap,1\n"


def test_a_bad_byte_is_named_by_its_line_and_its_byte_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"\xef\xbb\xbftask,cpu\nmap,\xff\n")  # the byte order mark counts: 0xff is byte 16
    with pytest.raises(PredictionError, match=r"t\.csv:2: not a demand table \(not UTF-8 text at byte 16: "):
        read_text_file(path, "demand table", PredictionError, encoding="utf-8-sig")
    path.write_bytes(b"\xff")
    with pytest.raises(ProfileError, match=r"t\.csv:1: not a profile \(not UTF-8 text at byte 0: invalid start"):
        read_text_file(path, "profile", ProfileError)


def test_a_file_that_cannot_be_read_is_named_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"absent\.json: cannot read the profile \(No such file or directory\)"):
        read_text_file(tmp_path / "absent.json", "profile", ProfileError)
    with pytest.raises(ProfileError, match=r": cannot read the profile \(Is a directory\)"):
        read_text_file(tmp_path, "profile", ProfileError)
