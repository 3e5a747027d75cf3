"""A planner forecast never causes a scale-in by itself, under every semantics, and
``ForecastOnly`` never changes a decision: as every cloud's predictive scaling (AWS:
"predictive scaling ... only scales out"; Compute Engine: the forecast is one more
signal and the autoscaler takes the highest; Azure: predictive autoscale only adds
instances ahead of the forecast) — docs/predictive.md, issue #30."""

import copy

import pytest

from scalebridge import decide
from scalebridge.testing.requests import cpu_request

SEMANTICS = ("scalebridge", "kubernetes", "gce", "aws", "azure")


def _pair(semantics, usage, mode, forecast):
    base = cpu_request(8, usage, semantics=semantics, policy={"predictive": {"mode": mode}},
                       state={"recommendations": []})
    with_forecast = copy.deepcopy(base)
    with_forecast["observations"]["forecast"] = {"replicas": forecast, "source": "planner"}
    return decide(base), decide(with_forecast)


@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize("usage", ["200m", "500m", "900m"])          # scale in, hold, scale out
@pytest.mark.parametrize("forecast", [0, 1, 3])
def test_a_forecast_below_the_reactive_decision_never_lowers_it(semantics, usage, forecast):
    without, with_forecast = _pair(semantics, usage, "ForecastAndScale", forecast)
    assert with_forecast["desired_replicas"] == without["desired_replicas"]
    assert with_forecast["forecast"]["applied"] is False


@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize("usage", ["200m", "500m", "900m"])
@pytest.mark.parametrize("forecast", [0, 30])
def test_forecast_only_never_changes_the_decision(semantics, usage, forecast):
    without, with_forecast = _pair(semantics, usage, "ForecastOnly", forecast)
    assert with_forecast["desired_replicas"] == without["desired_replicas"]
    assert with_forecast["forecast"]["mode"] == "ForecastOnly" and with_forecast["forecast"]["applied"] is False


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_a_forecast_above_raises_under_forecast_and_scale(semantics):
    without, with_forecast = _pair(semantics, "500m", "ForecastAndScale", 30)
    assert with_forecast["desired_replicas"] > without["desired_replicas"]
    assert with_forecast["forecast"]["applied"] is True
