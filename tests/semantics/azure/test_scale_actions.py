"""The azure semantics' scale actions: ChangeCount, PercentChangeCount (rounding, minimum
magnitude), ExactCount never against its direction, the allowed next value of a
service, and the default value of one.

Sources: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings (scaleAction),
https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update (ScaleAction)."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import azure_request as request, azure_rule as rule, azure_series as series

REST_URL = "https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update"


def test_percent_change_rounding_choices():
    """A-GAP-1: PercentChangeCount rounds the change up by default (10 × 15 % = 1.5 → 2);
    ``settings.percent_rounding`` floor / nearest override."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", 15, type="PercentChangeCount")]
    got = {mode: decide(request(10, rules, {"cpu": series(90)}, max_replicas=30,
                                settings=None if mode is None else {"percent_rounding": mode}))["desired_replicas"]
           for mode in (None, "ceil", "floor", "nearest")}
    assert got == {None: 12, "ceil": 12, "floor": 11, "nearest": 12}
    # 29 % of 100 is 29 exactly, not 28.999…
    rules = [rule("cpu", "GreaterThan", 70, "Increase", 29, type="PercentChangeCount")]
    assert decide(request(100, rules, {"cpu": series(90)}, max_replicas=300,
                          settings={"percent_rounding": "floor"}))["desired_replicas"] == 129


def test_percent_change_min_adjustment_magnitude():
    rules = [rule("cpu", "GreaterThan", 70, "Increase", 10, type="PercentChangeCount", min_adjustment_magnitude=3)]
    assert decide(request(4, rules, {"cpu": series(90)}, max_replicas=30))["desired_replicas"] == 7


def test_exact_count_never_against_its_direction():
    """A-GAP-5: an Increase rule does not lower the count, a Decrease rule does not raise it."""
    up = [rule("cpu", "GreaterThan", 70, "Increase", 3, type="ExactCount")]
    assert decide(request(6, up, {"cpu": series(90)}))["desired_replicas"] == 6
    down = [rule("cpu", "LessThan", 30, "Decrease", 8, type="ExactCount")]
    assert decide(request(6, down, {"cpu": series(10)}))["desired_replicas"] == 6


def test_service_allowed_next_value_without_a_list_is_one_step():
    """A-GAP-2: ServiceAllowedNextValue without ``allowed_replicas`` moves one instance."""
    rules = [{**rule("cpu", "GreaterThan", 70, "Increase"),
              "action": {"direction": "Increase", "type": "ServiceAllowedNextValue"}}]
    assert decide(request(4, rules, {"cpu": series(90)}))["desired_replicas"] == 5
    at_top = request(16, rules, {"cpu": series(90)}, max_replicas=32, allowed_replicas=[1, 2, 4, 8, 16])
    assert decide(at_top)["desired_replicas"] == 16


def test_scale_action_value_defaults_to_one():
    """REST_URL, ScaleAction.value: "the number of instances that are involved in the scaling action. This
    value must be 1 or greater. The default value is 1." (not required). A ChangeCount action without
    `value` was rejected ("a ChangeCount action needs `value`"); policy.Rule._action now defaults it to 1."""
    r = rule("cpu", "GreaterThan", 70, "Increase")
    del r["action"]["value"]
    out = decide(request(2, [r], {"cpu": series(90)}))
    assert out["desired_replicas"] == 3
