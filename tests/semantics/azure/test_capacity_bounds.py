"""The azure semantics' instance limits: a count outside [minimum, maximum] is brought
back on the next run; minimum equal to maximum means no scale action.

Source: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices ("Ensure the maximum and minimum values are different")."""
from __future__ import annotations

import pytest

from scalebridge import decide
from scalebridge.testing.requests import azure_request as request, azure_rule as rule, azure_series as series

BEST_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices"


def test_bounds_reset_on_next_run():
    """BEST_URL: "you set the range between 3 and 6. If you have one running instance, the autoscale engine
    scales to three instances on its next run. Likewise, if you manually set the scale to eight instances,
    the autoscale engine scales it back to six instances on its next run." """
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    lo = decide(request(1, rules, {"cpu": series(50)}, min_replicas=3, max_replicas=6, default_replicas=3))
    hi = decide(request(8, rules, {"cpu": series(50)}, min_replicas=3, max_replicas=6, default_replicas=3))
    assert (lo["desired_replicas"], lo["reason"]) == (3, "TooFewReplicas")
    assert (hi["desired_replicas"], hi["reason"]) == (6, "TooManyReplicas")
    assert lo["state"]["scale_up_events"][-1]["cause"] == "boundary"


@pytest.mark.parametrize("cpu", [95, 5])
def test_minimum_equal_to_maximum_no_scale_action(cpu):
    """bp: "If you have a setting that has minimum=2, maximum=2, and the current instance
    count is 2, no scale action can occur." (BEST_URL)"""
    r = decide(request(2, [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 20, "Decrease")],
                       {"cpu": series(cpu)}, min_replicas=2, max_replicas=2, default_replicas=2))
    assert r["desired_replicas"] == 2
    assert r["state"].get("last_scale") is None
