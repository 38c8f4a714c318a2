"""phaseline.errors.recording_warnings: ours kept, every one; others shown as they come."""

from __future__ import annotations

import warnings

import pytest

from phaseline.errors import DataQualityWarning, ExtrapolationWarning, PhaselineWarning, recording_warnings


def _say(text: str, category: type[Warning] = DataQualityWarning) -> None:
    warnings.warn(text, category, stacklevel=2)


def test_our_warnings_are_kept_in_order_even_repeated() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing of ours may escape the block
        with recording_warnings() as said:
            for _ in range(2):
                _say("a")  # the same line twice: both kept (Python's default shows one)
            _say("b", ExtrapolationWarning)
    assert [type(w) for w in said] == [DataQualityWarning, DataQualityWarning, ExtrapolationWarning]
    assert said.texts == ("a", "b")
    assert all(isinstance(w, PhaselineWarning) for w in said)


def _record(*said: tuple[str, type[Warning]]) -> tuple[str, ...]:
    """Warn each of ``said`` inside :func:`recording_warnings`; the texts it kept."""
    with recording_warnings() as recorded:
        for text, category in said:
            _say(text, category)
    return recorded.texts


def test_other_warnings_show_as_they_come_and_ours_again_after() -> None:
    with pytest.warns(RuntimeWarning, match="numpy-ish"):
        kept = _record(("kept", DataQualityWarning), ("numpy-ish", RuntimeWarning))
    assert kept == ("kept",)
    with pytest.warns(DataQualityWarning, match="after"):
        _say("after")


def test_what_was_said_before_an_error_stays() -> None:
    said: tuple[str, ...] = ()
    try:
        with recording_warnings() as recorded:
            _say("before")
            raise ValueError("stop")
    except ValueError:
        said = recorded.texts
    assert said == ("before",)
