"""The prediction core's contract (predict.core): every model's Prediction, the registry, intervals."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pytest

from phaseline.errors import NotFoundError, PredictionError
from predict import core
from predict.core import Dataset, JobSettings, Prediction
from tests.predict.doubles import CLUSTER, GB, LinearPlatform, toy_profile


def test_every_registered_model_honours_the_contract() -> None:
    names = core.models()
    assert {"bounds", "herodotou"} <= set(names)
    for settings in (JobSettings(reduces=8), JobSettings(reduces=0)):
        for name in names:
            predictor = core.get(name)
            assert isinstance(predictor, core.Predictor)
            p = predictor.predict(toy_profile(), LinearPlatform(), CLUSTER, Dataset(5 * GB), settings)
            assert isinstance(p, Prediction)
            assert p.model == name
            assert math.isfinite(p.seconds)
            assert p.seconds > 0
            assert (p.low_s is None) == (p.high_s is None)
            if p.low_s is not None and p.high_s is not None:
                assert p.low_s <= p.seconds <= p.high_s
            assert all(math.isfinite(v) for v in p.phases.values())
            # a calibrated overhead may be negative (overlapping phases); phases themselves are not
            assert all(v >= 0 for k, v in p.phases.items() if not k.endswith("overhead"))
            blob = json.loads(json.dumps(p.to_dict()))
            assert {"model", "seconds", "low_s", "high_s", "assumptions"} <= set(blob)


def test_registry_lookups_and_conflicts() -> None:
    with pytest.raises(NotFoundError, match=r"known: .*bounds"):
        core.get("no-such-model")

    @dataclass(frozen=True)
    class Impostor:
        name: str = "bounds"

        def predict(self, *args: object) -> Prediction:
            return Prediction("bounds", 0.0)

    with pytest.raises(PredictionError, match="two models"):
        core.register(Impostor())


def test_prediction_rejects_inconsistent_intervals() -> None:
    with pytest.raises(PredictionError, match="lower bound"):
        Prediction("x", 10.0, low_s=11.0, high_s=12.0)
    with pytest.raises(PredictionError, match="not a finite"):
        Prediction("x", math.nan)


def test_a_vanishing_map_output_segment_prices_without_overflow() -> None:
    # 1e-300 bytes of input: each map's segment for a reduce is ~0 bytes, so the in-memory merge's
    # segments per file (buffer / segment) came out infinite and math.ceil raised.
    for model in ("herodotou", "bounds"):
        p = core.get(model).predict(
            toy_profile(), LinearPlatform(), CLUSTER, Dataset(1e-300), JobSettings(reduces=4)
        )
        assert math.isfinite(p.seconds)
        assert p.seconds > 0
