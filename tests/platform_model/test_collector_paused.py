"""predict.gc_pause.collector_paused: the cyclic collector is off inside and back as it was after, errors or not."""

from __future__ import annotations

import gc

import pytest

from predict.gc_pause import collector_paused


def _fail_paused() -> None:
    with collector_paused():
        assert not gc.isenabled()
        raise ZeroDivisionError


def test_paused_inside_and_restored_after_an_error() -> None:
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError):
        _fail_paused()
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
