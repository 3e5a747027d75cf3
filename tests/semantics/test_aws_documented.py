"""The ``aws`` semantics beyond the conformance cases (tests/conformance/aws/cases.json holds
every worked example of the AWS documentation, each with its URL): decision sequences through
:class:`~scalebridge.engine.Decider`, state, warm-up resolution, validation and response shape."""
import copy
import json

import pytest

from scalebridge import decide
from scalebridge.engine import Decider
from scalebridge.errors import RequestError
from scalebridge.protocol import Observations
from scalebridge.semantics.aws import forecast_at
from scalebridge.testing.requests import NOW

UG = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/"

STEP_OUT = {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60, "operator": "GreaterThanOrEqual",
            "threshold": 50, "adjustment_type": "PercentChangeInCapacity",
            "steps": [{"lower": 0, "upper": 10, "adjustment": 0}, {"lower": 10, "upper": 20, "adjustment": 10},
                      {"lower": 20, "upper": None, "adjustment": 30}]}
STEP_IN = {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60, "operator": "LessThanOrEqual",
           "threshold": 50, "adjustment_type": "PercentChangeInCapacity",
           "steps": [{"lower": -10, "upper": 0, "adjustment": 0}, {"lower": -20, "upper": -10, "adjustment": -10},
                     {"lower": None, "upper": -20, "adjustment": -30}]}
SIMPLE_OUT = {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60, "operator": "GreaterThan",
              "threshold": 70, "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}
TT_CPU = {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 50}}


def instances(n, *, age=3600.0, prefix="i", **kw):
    return [{"name": f"{prefix}-{i}", "phase": "Running", "ready": True, "start_time": NOW - age - 60,
             "ready_transition_time": NOW - age, **kw} for i in range(n)]


def request(current, cpu, *, rules=(), metrics=None, members=None, status=None, state=None, settings=None,
            now=NOW, **policy):
    """An aws request; ``cpu`` is one value (a steady series over the last 20 minutes) or a series."""
    series = cpu if isinstance(cpu, list) else [[now - 60 * j, cpu] for j in range(20, -1, -1)]
    pol = {"min_replicas": 1, "max_replicas": 100, "rules": list(rules), **policy}
    if metrics is not None:
        pol["metrics"] = metrics
    obs = {"status_replicas": current if status is None else status, "metrics": {"cpu": {"series": series}}}
    if members is not None:
        obs["members"] = members
    req = {"semantics": "aws", "now": now, "current_replicas": current, "policy": pol, "observations": obs}
    if state is not None:
        req["state"] = state
    if settings is not None:
        req["settings"] = settings
    return req


# ----------------------------------------------------------------------------- validation


def test_min_replicas_is_required(cli):
    """Protocol, defaults per semantics: ``min_replicas`` is required under aws (ASG MinSize)."""
    with pytest.raises(RequestError) as e:
        decide({"semantics": "aws", "now": NOW, "current_replicas": 2, "policy": {"max_replicas": 5}})
    assert e.value.path == "$.policy.min_replicas"
    proc = cli("decide", stdin=json.dumps({"semantics": "aws", "now": NOW, "current_replicas": 2,
                                               "policy": {"max_replicas": 5}}))
    assert proc.returncode == 2 and "$.policy.min_replicas" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_other_semantics_answer_when_aws_cannot_run_the_policy():
    from scalebridge.engine import decide_all
    out = decide_all({"now": NOW, "current_replicas": 2, "policy": {"max_replicas": 5}})
    aws = next(r for r in out if r["semantics"] == "aws")
    assert "$.policy.min_replicas" in aws["error"]


@pytest.mark.parametrize("rule,path", [
    ({**STEP_OUT, "adjustment_type": None}, "$.policy.rules[0].adjustment_type"),
    ({**SIMPLE_OUT, "action": {"direction": "Increase", "type": "ServiceAllowedNextValue"}},
     "$.policy.rules[0].action.type"),
])
def test_rules_aws_cannot_run_name_the_field(rule, path):
    rule = {k: v for k, v in rule.items() if v is not None}
    with pytest.raises(RequestError) as e:
        decide(request(3, 60, rules=[rule]))
    assert e.value.path == path


@pytest.mark.parametrize("key,value", [("aws.max_capacity", "55"), ("aws.max_capacity", -1),
                                       ("aws.alarm_states", ["ALARM"]), ("aws.alarm_states", {"rules[0]": "ON"}),
                                       ("aws.alarm_invoked", {"rules[0]": "yesterday"})])
def test_malformed_aws_state_names_the_key(cli, key, value):
    req = request(3, 60, rules=[STEP_OUT], state={key: value})
    with pytest.raises(RequestError) as e:
        decide(req)
    assert key in e.value.path
    proc = cli("decide", stdin=json.dumps(req))
    assert proc.returncode == 2 and key in proc.stderr and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- warm-up


def _warming_group(**settings_or_policy):
    """10 instances in service for an hour and 1 for 200 s; metric 70 (the +30 % step)."""
    members = instances(10) + instances(1, age=200, prefix="new")
    return members


@pytest.mark.parametrize("settings,policy_warmup,desired", [
    ({}, None, 13),                                   # default cooldown 300 > 200: warming, 10 + 3
    ({"default_cooldown_seconds": 100}, None, 14),   # warm-up falls back to DefaultCooldown 100
    ({"default_instance_warmup_seconds": 120}, None, 14),
    ({"default_instance_warmup_seconds": 120, "default_cooldown_seconds": 600}, None, 14),
    ({"default_instance_warmup_seconds": 120}, 600, 13),   # EstimatedInstanceWarmup overrides
])
def test_initialization_period_defaults(settings, policy_warmup, desired):
    """UG consolidated-view-of-warm-up-and-cooldown-settings.html: "If not defined, the value of this
    parameter defaults to the value for the default instance warmup … If default instance warmup is
    null, then it falls back to the value of default cooldown." (300 s: UG Cooldown.html)."""
    extra = {} if policy_warmup is None else {"initialization_period_seconds": policy_warmup}
    r = decide(request(11, 70, rules=[STEP_OUT, STEP_IN], members=_warming_group(), settings=settings, **extra))
    assert r["desired_replicas"] == desired


def test_target_tracking_metric_warmup_overrides_the_policys():
    """A target-tracking policy's EstimatedInstanceWarmup (metrics[i].initialization_period_seconds)."""
    members = instances(4) + instances(1, age=200, prefix="new")
    short = {**TT_CPU, "initialization_period_seconds": 100}
    assert decide(request(5, 75, metrics=[TT_CPU], members=members))["desired_replicas"] == 6      # ceil(4 × 1.5)
    assert decide(request(5, 75, metrics=[short], members=members))["desired_replicas"] == 8       # ceil(5 × 1.5)


def test_member_series_leaves_warming_instances_out_of_the_metric():
    """UG as-scaling-target-tracking.html#as-target-tracking-scaling-warmup: "Until its specified
    warm-up time has expired, an instance is not counted toward the aggregated metrics"."""
    members = instances(4) + instances(1, age=60, prefix="new")
    series = {m["name"]: [[NOW - 60 * j, 75.0] for j in range(3)] for m in members[:4]}
    series["new-0"] = [[NOW - 60 * j, 0.0] for j in range(3)]     # idle while warming up
    req = request(5, 0, metrics=[TT_CPU], members=members)
    req["observations"]["metrics"]["cpu"] = {"member_series": series}
    r = decide(req)
    assert r["metrics"][0]["value"] == 75 and r["desired_replicas"] == 6


def test_external_average_value_reads_a_total():
    """An external metric's observation is a total (protocol: "values from outside; summed"); its
    per-instance value is total / in-service capacity, as AWS's backlog-per-instance recipe computes."""
    metric = {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 100}}
    req = request(4, 0, metrics=[metric])
    req["observations"]["metrics"]["queue"] = {"series": [[NOW - 60 * j, 1000] for j in range(3)]}
    r = decide(req)
    assert r["metrics"][0]["value"] == 250 and r["desired_replicas"] == 10   # ceil(4 × 250 / 100)


# ----------------------------------------------------------------------------- sequences


def test_simple_policy_waits_for_its_cooldown():
    """UG Cooldown.html: simple policies wait for the cooldown; "A scaling-specific cooldown period
    overrides the default cooldown period"."""
    rule = copy.deepcopy(SIMPLE_OUT)
    rule["action"]["cooldown_seconds"] = 180
    d = Decider({"min_replicas": 1, "max_replicas": 20, "rules": [rule]}, "aws")

    def obs(now, n):
        return Observations.model_validate({"status_replicas": n, "members": instances(n),
                                            "metrics": {"cpu": {"series": [[now - 60, 90], [now, 90]]}}})
    assert d.step(NOW, 4, obs(NOW, 4)).desired == 6
    assert d.state.last_scale["cooldown_seconds"] == 180
    r = d.step(NOW + 120, 6, obs(NOW + 120, 6))
    assert (r.desired, r.reason) == (6, "CooldownActive")
    assert d.step(NOW + 180, 6, obs(NOW + 180, 6)).desired == 8


def test_completed_at_is_filled_when_an_activity_is_seen_finishing():
    """UG Cooldown.html: "the cooldown period … takes effect starting when the last instance
    finishes launching or terminating". When the caller does not fill ``last_scale.completed_at``,
    the first decision that sees the activity finished after seeing it in progress does."""
    d = Decider({"min_replicas": 1, "max_replicas": 20, "rules": [SIMPLE_OUT]}, "aws")
    hot = {"cpu": {"series": [[NOW, 90]]}}
    d.step(NOW, 4, Observations.model_validate({"status_replicas": 4, "members": instances(4), "metrics": hot}))
    assert d.state.last_scale["time"] == NOW and "completed_at" not in d.state.last_scale
    launching = instances(4) + [{"name": f"p-{i}", "phase": "Pending", "ready": False} for i in range(2)]
    r = d.step(NOW + 60, 6, Observations.model_validate(
        {"status_replicas": 6, "members": launching, "metrics": {"cpu": {"series": [[NOW + 60, 90]]}}}))
    assert r.reason == "ActivityInProgress"
    r = d.step(NOW + 240, 6, Observations.model_validate(
        {"status_replicas": 6, "members": instances(6), "metrics": {"cpu": {"series": [[NOW + 240, 90]]}}}))
    assert d.state.last_scale.get("completed_at") == NOW + 240 and r.reason == "CooldownActive"
    r = d.step(NOW + 540, 6, Observations.model_validate(
        {"status_replicas": 6, "members": instances(6), "metrics": {"cpu": {"series": [[NOW + 540, 90]]}}}))
    assert r.desired == 8


def test_an_alarm_invokes_its_policy_once_per_period():
    """CW AlarmThatSendsEmail.html: "the alarm continues to invoke the action for every period that
    the alarm remains in the new state" — once per period, not on every decision of the period."""
    rule = {**STEP_IN, "steps": [{"lower": None, "upper": 0, "adjustment": -1}], "adjustment_type": "ChangeInCapacity"}
    d = Decider({"min_replicas": 1, "max_replicas": 20, "rules": [rule]}, "aws")
    series = {"series": [[NOW, 10.0]]}

    def step(t, n):
        return d.step(t, n, Observations.model_validate(
            {"status_replicas": n, "members": instances(n), "metrics": {"cpu": series}}))
    assert step(NOW, 8).desired == 7
    assert step(NOW + 15, 7).desired == 7           # same period: held
    assert step(NOW + 45, 7).desired == 7
    assert step(NOW + 60, 7).desired == 6           # the next period
    assert d.state.extra["aws.alarm_invoked"] == {"rules[0]": NOW + 60}


def test_alarm_states_are_kept_for_ignore():
    """treat_missing_data ``ignore``: "The current alarm state is maintained" (CW #alarms-and-missing-data)."""
    rule = {**SIMPLE_OUT, "treat_missing_data": "ignore", "time_window_seconds": 180}
    d = Decider({"min_replicas": 1, "max_replicas": 20, "rules": [rule]}, "aws")
    d.step(NOW, 4, Observations.model_validate({"status_replicas": 4, "metrics": {"cpu": {"series": [
        [NOW - 120, 90], [NOW - 60, 90], [NOW, 90]]}}}))
    assert d.state.extra["aws.alarm_states"] == {"rules[0]": "ALARM"}
    r = d.step(NOW + 900, 6, Observations.model_validate({"status_replicas": 6, "metrics": {"cpu": {"series": []}}}))
    assert d.state.extra["aws.alarm_states"] == {"rules[0]": "ALARM"} and r.metrics[0]["triggered"]


# ----------------------------------------------------------------------------- combining and bounds


def test_scale_out_wins_over_scale_in():
    """UG as-scale-based-on-demand.html#multiple-scaling-policy-resolution: the largest capacity wins."""
    low = {**STEP_IN, "metric": "queue", "steps": [{"lower": None, "upper": 0, "adjustment": -50}]}
    req = request(10, 70, rules=[STEP_OUT, low])
    req["observations"]["metrics"]["queue"] = {"series": [[NOW, 0]]}
    assert decide(req)["desired_replicas"] == 13


def test_scale_in_waits_while_a_scale_out_is_in_progress_but_scale_out_does_not():
    members = instances(10) + [{"name": "p", "phase": "Pending", "ready": False}]
    r = decide(request(11, 30, rules=[STEP_OUT, STEP_IN], members=members))
    assert (r["desired_replicas"], r["reason"]) == (11, "ActivityInProgress")
    assert decide(request(11, 70, rules=[STEP_OUT, STEP_IN], members=members))["desired_replicas"] == 13


def test_clamp_without_any_policy_is_a_boundary_event():
    """UG asg-capacity-limits.html: "All requests to change the Auto Scaling group's desired
    capacity … must fall within these limits"; W2: no policies, no scaling."""
    r = decide(request(12, 50, max_replicas=10))
    assert (r["desired_replicas"], r["reason"]) == (10, "TooManyReplicas")
    assert r["state"]["last_scale"]["cause"] == "boundary"
    r = decide(request(5, 50, max_replicas=10))
    assert (r["desired_replicas"], r["reason"], r["metrics"]) == (5, "DesiredWithinRange", [])


def test_weighted_capacity_units():
    """UG as-scaling-simple-step.html#as-scaling-adjustment: "When instance weighting is used …
    The value is in capacity units" — bases are Σ weight."""
    members = instances(3, weight=4)
    rule = {**STEP_OUT, "adjustment_type": "ChangeInCapacity", "steps": [{"lower": 0, "upper": None, "adjustment": 2}]}
    assert decide(request(12, 60, rules=[rule], members=members))["desired_replicas"] == 14


def test_only_scale_out_mode_reports_the_scale_in():
    r = decide(request(14, 40, rules=[STEP_OUT, STEP_IN], mode="ONLY_SCALE_OUT"))
    assert (r["recommended_replicas"], r["desired_replicas"], r["reason"]) == (13, 14, "ScalingDisabled")


# ----------------------------------------------------------------------------- predictive


def test_scheduling_buffer_selects_the_hour_that_launches_now():
    """API_PredictiveScalingConfiguration SchedulingBufferTime: "the forecast says to add capacity at
    10:00 AM, and you choose to pre-launch instances by 5 minutes. In that case, the instances will be
    launched at 9:55 AM" — for an hourly ``[[hour, replicas], …]`` forecast series."""
    ten = NOW + 36000
    series = [(ten - 3600, 4), (ten, 9), (ten + 3600, 6)]
    assert forecast_at(series, ten - 301, 300) == 4
    assert forecast_at(series, ten - 300, 300) == 9      # 9:55: the 10:00 capacity
    assert forecast_at(series, ten + 3000, 300) == 9
    assert forecast_at(series, ten + 3300, 300) == 9      # a lower hour is not advanced (test_aws_audit)
    assert forecast_at(series, ten + 3600, 300) == 6
    assert forecast_at(series, ten - 7200, 300, default=3) == 3


def test_a_forecast_series_applies_the_scheduling_buffer_in_decide():
    """G13: when ``observations.forecast`` carries an hourly ``series`` (a protocol extension the
    request model must accept first), ``decide`` picks the hour whose launch time has come."""
    from types import SimpleNamespace
    ten = NOW + 600
    forecast = SimpleNamespace(replicas=4, source="test", reason=None, series=[(NOW - 3000, 4), (ten, 9)])
    obs = Observations.model_construct(status_replicas=4, members=None, metrics={}, forecast=forecast, proposal=None)
    policy = {"min_replicas": 1, "max_replicas": 20, "predictive": {"mode": "ForecastAndScale",
                                                                  "scheduling_buffer_seconds": 300}}
    assert Decider(policy, "aws").step(ten - 301, 4, obs).desired == 4
    assert Decider(policy, "aws").step(ten - 300, 4, obs).desired == 9


def test_increase_max_capacity_without_a_buffer_is_the_forecast():
    """MaxCapacityBuffer "Required if … IncreaseMaxCapacity"; scalebridge reads an absent one as 0:
    "equal but not exceed predicted capacity"."""
    req = request(30, 50, max_replicas=40, predictive={"mode": "ForecastAndScale",
                                                       "max_capacity_breach_behavior": "IncreaseMaxCapacity"})
    req["observations"]["forecast"] = {"replicas": 50}
    r = decide(req)
    assert r["desired_replicas"] == 50 and r["state"]["aws.max_capacity"] == 50
    assert r["state"]["last_scale"]["cause"] == "forecast" and r["forecast"]["applied"]


def test_forecast_limits_a_scale_in_but_never_causes_one():
    """UG ec2-auto-scaling-predictive-scaling.html: desired = the maximum of the policies; "If actual
    capacity is greater than the predicted capacity, Amazon EC2 Auto Scaling doesn't scale in"."""
    req = request(14, 30, rules=[STEP_OUT, STEP_IN], predictive={"mode": "ForecastAndScale"})
    req["observations"]["forecast"] = {"replicas": 12}
    r = decide(req)
    assert (r["desired_replicas"], r["reason"]) == (12, "ForecastFloor")   # the rule alone: 14 − 4 = 10


# ----------------------------------------------------------------------------- response


def test_response_metrics_follow_the_policy_and_read_as_written():
    rules = [STEP_OUT, {**STEP_IN, "enabled": False}]
    r = decide(request(10, 60, rules=rules, metrics=[TT_CPU, {**TT_CPU, "enabled": False}]))
    m = r["metrics"]
    assert [e["name"] for e in m] == ["cpu"] * 4
    assert m[0]["value"] == 60 and isinstance(m[0]["value"], int) and m[0]["utilization"] == 60
    assert m[0]["replicas"] == 12 and m[1]["error"] == "disabled"
    assert m[2]["triggered"] and m[2]["replicas"] == 11
    assert m[3] == {"name": "cpu", "replicas": None, "utilization": None, "value": None, "error": "disabled",
                    "triggered": False}
    assert r["desired_replicas"] == 12


def test_missing_observations_are_reported():
    r = decide(request(4, 60, rules=[{**STEP_OUT, "metric": "rps"}], metrics=[{**TT_CPU, "name": "mem"}]))
    assert r["metrics"][0]["error"].startswith("insufficient data")
    assert "no observations for metric 'rps'" in r["metrics"][1]["error"]
    # spec (Response, error): "set, with desired_replicas == current_replicas, when no
    # decision can be made (every metric failed …)" — AWS keeps the group as it is
    assert r["desired_replicas"] == 4 and r["reason"] == "InvalidMetrics"
    assert r["error"].startswith("every metric failed (2 of 2), first error is: insufficient data")


def test_a_metric_with_data_means_no_error_even_if_another_lacks_it():
    r = decide(request(4, 60, metrics=[TT_CPU, {**TT_CPU, "name": "mem"}]))
    assert r["metrics"][1]["error"].startswith("insufficient data")
    assert r["error"] is None and r["reason"] != "InvalidMetrics"


def test_a_proposal_replaces_the_policies_but_not_the_waits_and_bounds():
    """Protocol observations.proposal: "metric calculation is skipped; stabilization, rate limits,
    profiles and bounds still apply"."""
    req = request(10, 90, rules=[STEP_OUT], max_replicas=20)
    req["observations"]["proposal"] = 25
    r = decide(req)
    assert (r["desired_replicas"], r["reason"], r["metrics"]) == (20, "TooManyReplicas", [])
    req = request(11, 90, rules=[STEP_OUT], members=_warming_group())
    req["observations"]["proposal"] = 5
    assert decide(req)["reason"] == "ScaleDownStabilized"


def test_explain_names_each_stage():
    r = decide(request(11, 70, rules=[STEP_OUT, STEP_IN], members=_warming_group()), explain=True)
    stages = [e["stage"] for e in r["explain"]]
    assert "step rule" in stages and "alarm" in stages and "combine" in stages


def test_member_usage_against_requests_is_a_utilization_percent():
    """A Kubernetes-style snapshot (usage in cores against a 500m request) is read as
    CloudWatch reads CPUUtilization: 400m of 500m is 80%, against a 50% target
    ceil(3 × 80 / 50) = 5 — the same request every semantics can answer."""
    import json as _json
    from pathlib import Path as _Path
    req = _json.loads((_Path(__file__).resolve().parents[2] / "examples" / "requests" /
                       "resource-utilization.json").read_text())
    r = decide(req, "aws")
    assert r["metrics"][0]["value"] == 80 and r["desired_replicas"] == 5


def test_scheduling_buffer_through_decide_with_an_hourly_forecast():
    """ec2-auto-scaling-predictive-scaling.html: with the default 300 s SchedulingBufferTime, the
    capacity forecast for 10:00 is launched at 9:55 — an hourly forecast series (a protocol
    extension on observations.forecast) lets decide apply the buffer itself."""
    ten = NOW + 3600
    policy = {"min_replicas": 1, "max_replicas": 20, "predictive": {"mode": "ForecastAndScale"}}
    forecast = {"replicas": 4, "series": [[NOW, 4], [ten, 9]]}
    for t, expected in ((ten - 301, 4), (ten - 300, 9)):
        req = {"semantics": "aws", "now": t, "current_replicas": 4, "policy": policy,
               "observations": {"forecast": forecast}}
        assert decide(req)["desired_replicas"] == expected
