"""The ``azure`` semantics against Azure Monitor autoscale's documentation.

Each test cites the Learn page its numbers come from. The single-decision
examples are also conformance cases (tests/conformance/azure/cases.json);
here they run as sequences through :class:`scalebridge.engine.Decider`, so the
state carried from one decision to the next (cooldowns, scale events) is part
of what is checked. Choices where Azure is silent are marked ``A-GAP-n``
(docs/research/azure.md, docs/semantics/azure.md).
"""
from __future__ import annotations

import copy

import pytest

from scalebridge import decide
from scalebridge.engine import Decider
from scalebridge.protocol import Observations

SETTINGS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings"
BEST_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices"
FLAP_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-flapping"
MULTI_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-multiprofile"
PRED_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-predictive"
TS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-troubleshoot"

NOW = 1768384800.0   # Wednesday 2026-01-14 10:00 UTC (02:00 PST)
MIN = 60.0


def rule(metric: str, operator: str, threshold, direction: str, value=1, *, type: str = "ChangeCount",
         cooldown=300, window=300, aggregation="Average", statistic="Average", divide=False, **extra) -> dict:
    r = {"metric": metric, "statistic": statistic, "time_grain_seconds": 60, "time_window_seconds": window,
         "time_aggregation": aggregation, "operator": operator, "threshold": threshold,
         "divide_per_instance": divide,
         "action": {"direction": direction, "type": type, "value": value, "cooldown_seconds": cooldown}}
    r.update(extra)
    return r


def series(value, now: float = NOW, n: int = 5) -> dict:
    values = value if isinstance(value, list) else [value] * n
    k = len(values)
    return {"series": [[now - MIN * (k - 1 - i), v] for i, v in enumerate(values)]}


def request(current: int, rules: list, metrics: dict, *, now: float = NOW, state=None, settings=None,
            **policy) -> dict:
    pol = {"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": rules}
    pol.update(policy)
    req = {"semantics": "azure", "now": now, "current_replicas": current, "policy": pol,
           "observations": {"metrics": metrics}}
    if state is not None:
        req["state"] = state
    if settings is not None:
        req["settings"] = settings
    return req


class Run:
    """A Decider carrying state, fed one observation per call."""

    def __init__(self, policy: dict, current: int, settings=None):
        self.d = Decider(policy, "azure", settings)
        self.current = current

    def step(self, now: float, metrics: dict, carry_out: bool = True):
        dec = self.d.step(now, self.current, Observations.model_validate({"metrics": metrics}))
        if carry_out:
            self.current = dec.desired
        return dec


# ----------------------------------------------------------------------------- flapping


def test_best_practices_80_60_sequence():
    """BEST_URL (2022 version, MicrosoftDocs/azure-docs): ">= 80 → +1, <= 60 → −1 ... Assume there are 2
    instances ... CPU% goes to 80 ... adding a third instance ... CPU% falls to 60 ... 60 x 3 = 180 / 2 = 90.
    So autoscale does not scale-in ... CPU continues to fall to 50 ... 50 x 3 instance = 150 / 2 instances =
    75, which is below the scale-out threshold of 80, so it scales in successfully to 2 instances." """
    rules = [rule("cpu", "GreaterThanOrEqual", 80, "Increase", cooldown=60),
             rule("cpu", "LessThanOrEqual", 60, "Decrease", cooldown=60)]
    run = Run({"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": rules}, 2)
    t = NOW
    d = run.step(t, {"cpu": series(80, t)})
    assert (d.desired, d.reason) == (3, "DesiredWithinRange")
    t += 600
    d = run.step(t, {"cpu": series(60, t)})
    assert (d.desired, d.reason) == (3, "FlappingPrevented")
    t += 600
    d = run.step(t, {"cpu": series(50, t)})
    assert (d.desired, d.reason) == (2, "DesiredWithinRange")


def test_settings_schema_example_two_instances_at_50_percent_flaps():
    """SETTINGS_URL schema example: min 1, max 4, default 1; "The scale-out rule is triggered when the
    virtual machine scale set's average percentage CPU metric is greater than 85% for the past 10 minutes.
    The scale-in rule is triggered when [it] is less than 60% over the past 10 minutes." 2 instances at
    50 %: the scale-in rule fires, but one instance would carry 50 × 2 / 1 = 100 % > 85 % → skipped;
    at 40 % on 4 instances the estimate on 3 is 53.3 % → scales in."""
    rules = [rule("cpu", "GreaterThan", 85, "Increase", window=600),
             rule("cpu", "LessThan", 60, "Decrease", window=600)]
    policy = {"profiles": [{"name": "Auto created default scale condition",
                            "capacity": {"minimum": 1, "maximum": 4, "default": 1}, "rules": rules}]}
    r = decide({"semantics": "azure", "now": NOW, "current_replicas": 2, "policy": policy,
                "observations": {"metrics": {"cpu": series(50, n=10)}}}, explain=True)
    assert (r["desired_replicas"], r["reason"]) == (2, "FlappingPrevented")
    assert [m["triggered"] for m in r["metrics"]] == [False, True]
    assert "= 100 would fire" in r["explain"][-1]["why"]
    r = decide({"semantics": "azure", "now": NOW, "current_replicas": 4, "policy": policy,
                "observations": {"metrics": {"cpu": series(40, n=10)}}})
    assert r["desired_replicas"] == 3


def test_best_practices_thread_count_600_600_never_scales_in():
    """BEST_URL: "Increase instances by 1 count when Thread Count >= 600 / Decrease ... <= 600 ... two instances
    ... grows to 625 ... adding a third instance ... falls to 575 ... 575 x 3 = 1,725 / 2 = 862.5 threads ...
    autoscale does not scale down at all." """
    rules = [rule("threads", "GreaterThanOrEqual", 600, "Increase", cooldown=60),
             rule("threads", "LessThanOrEqual", 600, "Decrease", cooldown=60)]
    run = Run({"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": rules}, 2)
    assert run.step(NOW, {"threads": series(625)}).desired == 3
    for k in range(1, 6):
        t = NOW + 600 * k
        d = run.step(t, {"threads": series(575, t)})
        assert (d.desired, d.reason) == (3, "FlappingPrevented")


def test_flapping_page_table():
    """FLAP_URL: scale out when CPU > 50 %, in when < 30 %; T0 one instance at 56 % → 2; T1 two instances at
    28 %: scaling in to 1 would put 56 % on it (> 50 %) → autoscale defers the scale-in."""
    rules = [rule("cpu", "GreaterThan", 50, "Increase", cooldown=60),
             rule("cpu", "LessThan", 30, "Decrease", cooldown=60)]
    run = Run({"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": rules}, 1)
    assert run.step(NOW, {"cpu": series(56)}).desired == 2
    d = run.step(NOW + 600, {"cpu": series(28, NOW + 600)})
    assert (d.desired, d.reason) == (2, "FlappingPrevented")
    # the estimate is recomputed every run: at 24 % the single instance would carry 48 %
    d = run.step(NOW + 1200, {"cpu": series(24, NOW + 1200)})
    assert (d.desired, d.reason) == (1, "DesiredWithinRange")


def test_flapping_page_thread_count_divided_per_instance():
    """FLAP_URL: thread count per instance (dividePerInstance), >= 600 out, < 600 in (no margin):
    "1250 / 2 = 625 ... 1250 / 3 = 417 ... In this example, 1250 / 2 = 625, that is, 625 threads per
    instance. Autoscale would have to immediately scale out again"; with a 400 scale-in threshold:
    1180 / 3 = 393 → scale in, 1180 / 2 = 590 < 600."""
    no_margin = [rule("threads", "GreaterThanOrEqual", 600, "Increase", divide=True, cooldown=60),
                 rule("threads", "LessThan", 600, "Decrease", divide=True, cooldown=60)]
    run = Run({"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": no_margin}, 2)
    assert run.step(NOW, {"threads": series(1250)}).desired == 3
    d = run.step(NOW + 600, {"threads": series(1250, NOW + 600)})
    assert (d.desired, d.reason) == (3, "FlappingPrevented")

    margin = [no_margin[0], rule("threads", "LessThan", 400, "Decrease", divide=True, cooldown=60)]
    run = Run({"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": margin}, 3)
    d = run.step(NOW, {"threads": series(1250)})
    assert (d.desired, d.reason) == (3, "DesiredWithinRange")   # 417 is not < 400
    d = run.step(NOW + 600, {"threads": series(1180, NOW + 600)})
    assert d.desired == 2                                       # 393 < 400; 590 < 600
    assert d.metrics[0]["value"] == pytest.approx(1180 / 3)


def test_flapping_page_scale_by_more_than_one_reduced_to_28():
    """FLAP_URL: 30 instances, requests per instance >= 200 or CPU > 70 % scale out by 20, requests per
    instance <= 50 scale in by 10. At 1500 requests (50 per instance) and CPU 65 %, scaling in to 20 would
    estimate 65 × 30 / 20 = 97.5 % CPU. "the autoscale engine estimates the CPU usage for instance counts
    above 20 until it finds an instance count where all metrics are with in the defined thresholds".
    The page says 27, but 65 × 30 / 27 = 72.2 % > 70 % still fires the CPU rule; the first count that
    does not is 28 (69.6 %) — A-GAP-4 follows the arithmetic."""
    rules = [rule("requests", "GreaterThanOrEqual", 200, "Increase", 20, divide=True),
             rule("cpu", "GreaterThan", 70, "Increase", 20),
             rule("requests", "LessThanOrEqual", 50, "Decrease", 10, divide=True)]
    r = decide(request(30, rules, {"requests": series(1500), "cpu": series(65)}, max_replicas=60))
    assert (r["desired_replicas"], r["reason"]) == (28, "FlappingReduced")
    assert (r["metrics"][2]["triggered"], r["metrics"][2]["replicas"]) == (True, 20)
    assert 65 * 30 / 27 > 70 >= 65 * 30 / 28


def test_flapping_log_record_6_intended_1_actual_4():
    """BEST_URL (autoscale log example): "Current instance count: '6', Intended new instance count: '1'.
    Actual new instance count: '4'" — a FlappingOccurred record. The log's rules (requests per instance
    >= 3 → +10, < 3 → −5); a total of 10 requests reproduces it: 10/6 < 3; 10/1, 10/2, 10/3 >= 3 flap;
    10/4 = 2.5 does not."""
    rules = [rule("requests", "GreaterThanOrEqual", 3, "Increase", 10, divide=True, window=60,
                  aggregation="Maximum"),
             rule("requests", "LessThan", 3, "Decrease", 5, divide=True, window=60, aggregation="Maximum")]
    r = decide(request(6, rules, {"requests": series(10, n=1)}, max_replicas=30))
    assert (r["desired_replicas"], r["reason"]) == (4, "FlappingReduced")
    assert r["metrics"][1]["replicas"] == 1


def test_troubleshoot_observed_metric_value_divided_per_instance():
    """TS_URL: "The Observed Metric Value metric in the middle is 3 because there are 2 active instances,
    and 6 divided by 2 is 3." (threshold 10: no scale-out)."""
    rules = [rule("flows", "GreaterThan", 10, "Increase", divide=True)]
    r = decide(request(2, rules, {"flows": series(6)}))
    assert r["metrics"][0]["value"] == 3
    assert r["metrics"][0]["triggered"] is False
    assert r["desired_replicas"] == 2


def test_queue_example_sequence():
    """BEST_URL (queue): scale out at >= 50 messages per instance, in at <= 10 (dividePerInstance):
    "50/2 = 25 messages per instance. So, scale-out doesn't occur. For the first scale-out action to
    happen, the total message count in the queue should be 100" ... "The next scale-out action won't
    happen until the total message count in the queue reaches 150 because 150/3 = 50" ... "the first
    scale-in action happens when the total messages add up to 30 because 30/3 = 10"."""
    rules = [rule("queue", "GreaterThanOrEqual", 50, "Increase", divide=True, cooldown=60),
             rule("queue", "LessThanOrEqual", 10, "Decrease", divide=True, cooldown=60)]
    run = Run({"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": rules}, 2)
    steps = [(50, 2), (100, 3), (140, 3), (150, 4)]
    for k, (total, want) in enumerate(steps):
        t = NOW + 600 * k
        assert run.step(t, {"queue": series(total, t)}).desired == want, total
    run.current = 3
    t = NOW + 600 * len(steps)
    assert run.step(t, {"queue": series(30, t)}).desired == 2


# ----------------------------------------------------------------------------- combining rules


FOUR_RULES = [rule("cpu", "GreaterThan", 75, "Increase"), rule("memory", "GreaterThan", 75, "Increase"),
              rule("cpu", "LessThan", 30, "Decrease"), rule("memory", "LessThan", 50, "Decrease")]


@pytest.mark.parametrize(("cpu", "memory", "want"), [(76, 50, 5), (50, 76, 5), (25, 51, 4), (29, 49, 3)])
def test_best_practices_cpu_and_memory(cpu, memory, want):
    """BEST_URL: "If CPU is 76% and Memory is 50%, autoscale scales out. If CPU is 50% and Memory is 76%,
    autoscale scales out. On the other hand, if CPU is 25% and Memory is 51%, autoscale doesn't scale in.
    To scale in, CPU must be 29% and Memory 49%." """
    r = decide(request(4, FOUR_RULES, {"cpu": series(cpu), "memory": series(memory)}))
    assert r["desired_replicas"] == want


def test_or_out_one_scale_out_rule_of_two_fires():
    """Seed rule, SETTINGS_URL: "If more than one scale-out rule is triggered, autoscale scales to the
    highest specified capacity" — one firing is enough."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("queue", "GreaterThan", 100, "Increase")]
    r = decide(request(3, rules, {"cpu": series(90), "queue": series(5)}))
    assert r["desired_replicas"] == 4
    assert [m["triggered"] for m in r["metrics"]] == [True, False]


def test_and_in_one_scale_in_rule_of_two_fires():
    """Seed rule, SETTINGS_URL: "Autoscale only scales in if all the scale-in rules are triggered." """
    rules = [rule("cpu", "LessThan", 30, "Decrease"), rule("queue", "LessThan", 10, "Decrease")]
    r = decide(request(4, rules, {"cpu": series(10), "queue": series(50)}))
    assert r["desired_replicas"] == 4
    assert [m["triggered"] for m in r["metrics"]] == [True, False]
    r = decide(request(4, rules, {"cpu": series(10), "queue": series(5)}))
    assert r["desired_replicas"] == 3


def test_highest_scale_out_and_smallest_scale_in():
    """SETTINGS_URL: "Rule 1 specifies a scale-out by three instances, and rule 2 specifies a scale-out by
    five. If both rules are triggered, autoscale scales out by five instances." / "one that decreases
    capacity by 50% and one that decreases capacity by three instances. If the first rule results in five
    instances and the second rule results in seven, autoscale scales in to seven instances." """
    out = [rule("cpu", "GreaterThan", 80, "Increase", 3), rule("memory", "GreaterThan", 80, "Increase", 5)]
    r = decide(request(10, out, {"cpu": series(90), "memory": series(90)}, max_replicas=30))
    assert r["desired_replicas"] == 15
    inn = [rule("cpu", "GreaterThan", 80, "Increase"),
           rule("cpu", "LessThan", 30, "Decrease", 50, type="PercentChangeCount"),
           rule("memory", "LessThan", 30, "Decrease", 3)]
    r = decide(request(10, inn, {"cpu": series(20), "memory": series(20)}, max_replicas=30))
    assert [r["metrics"][1]["replicas"], r["metrics"][2]["replicas"], r["desired_replicas"]] == [5, 7, 7]


def test_scale_out_wins_over_scale_in():
    """SETTINGS_URL: "If no scale-out rules are triggered, autoscale evaluates the scale-in rules" — a
    firing scale-out rule means the scale-in rules are not acted on."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("queue", "LessThan", 10, "Decrease")]
    r = decide(request(4, rules, {"cpu": series(90), "queue": series(0)}))
    assert r["desired_replicas"] == 5


# ----------------------------------------------------------------------------- cooldown


def test_cooldown_worked_example_sequence():
    """SETTINGS_URL (2026): scale-out cooldown 60 min, scale-in 40 min. "A CPU spike triggers a scale-out
    action at 10:00 ... no further scale action occurs until 11:00." / "a scale-in action runs at 13:00.
    The 40-minute scale-in cooldown now applies, so no scale action occurs, in either direction, until
    13:40." / "CPU spikes again at 13:20 ... autoscale defers the scale-out." / "The scale-out action runs
    at 13:40". (A-GAP-6: the most recent action's cooldown governs, as the example shows.)"""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=3600),
             rule("cpu", "LessThan", 30, "Decrease", cooldown=2400)]
    run = Run({"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": rules}, 4)
    ten = NOW
    hour = 3600.0
    d = run.step(ten, {"cpu": series(90, ten)})
    assert (d.desired, d.cooldown_seconds) == (5, 3600)
    d = run.step(ten + 1800, {"cpu": series(90, ten + 1800)})
    assert (d.desired, d.reason) == (5, "CooldownActive")
    d = run.step(ten + hour - 60, {"cpu": series(90, ten + hour - 60)})
    assert d.reason == "CooldownActive"
    d = run.step(ten + hour, {"cpu": series(90, ten + hour)})     # 11:00: eligible again
    assert d.desired == 6
    d = run.step(ten + 3 * hour, {"cpu": series(10, ten + 3 * hour)})   # 13:00 scale-in
    assert (d.desired, d.cooldown_seconds) == (5, 2400)
    t = ten + 3 * hour + 1200                                     # 13:20 spike: deferred
    d = run.step(t, {"cpu": series(90, t)})
    assert (d.desired, d.reason) == (5, "CooldownActive")
    t = ten + 3 * hour + 2400                                     # 13:40: runs
    d = run.step(t, {"cpu": series(90, t)})
    assert d.desired == 6


def test_get_started_cooldown_holds_both_directions():
    """https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started (2024): "if the
    cooldown is set to 10 minutes and Autoscale has just scaled-in, Autoscale won't attempt to scale again
    for another 10 minutes in either direction." """
    rules = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=600),
             rule("cpu", "LessThan", 30, "Decrease", cooldown=600)]
    state = {"last_scale": {"time": NOW - 300, "direction": "Decrease", "cause": "rule", "cooldown_seconds": 600}}
    for cpu in (90, 10):
        r = decide(request(4, rules, {"cpu": series(cpu)}, state=state))
        assert (r["desired_replicas"], r["reason"]) == (4, "CooldownActive")


def test_rule_cooldown_survives_a_boundary_move():
    """Protocol: "Azure cooldowns count only cause: rule events"; a move into a new profile's range
    (cause boundary) neither starts nor ends a rule's cooldown (A-GAP-7). The boundary move overwrites
    ``last_scale``; the rule action is kept as ``azure.last_rule_scale``."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=3600)]
    policy = {"profiles": [
        {"name": "night", "capacity": {"minimum": 1, "maximum": 10, "default": 1},
         "recurrence": {"days": ["Wednesday"], "hours": [0]}, "rules": rules},
        {"name": "day", "capacity": {"minimum": 6, "maximum": 10, "default": 6},
         "recurrence": {"days": ["Wednesday"], "hours": [10], "minutes": [5]}, "rules": rules}]}
    run = Run(policy, 3)
    d = run.step(NOW, {"cpu": series(90)})
    assert (d.desired, d.profile, d.cause) == (4, "night", "rule")
    t = NOW + 600                                          # 10:10, the day profile: minimum 6
    d = run.step(t, {"cpu": series(90, t)})
    assert (d.desired, d.reason, d.cause, d.profile) == (6, "TooFewReplicas", "boundary", "day")
    out = run.d.state.to_protocol()
    assert out["last_scale"]["cause"] == "boundary"
    assert out["azure.last_rule_scale"]["cooldown_seconds"] == 3600
    t = NOW + 1200
    d = run.step(t, {"cpu": series(90, t)})
    assert (d.desired, d.reason) == (6, "CooldownActive")
    t = NOW + 3600
    d = run.step(t, {"cpu": series(90, t)})
    assert d.desired == 7
    assert "azure.last_rule_scale" not in run.d.state.to_protocol()


def test_rule_event_without_known_cooldown_uses_the_default():
    """A hand-written state whose rule event has no recorded cooldown holds for the default five
    minutes (https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started: "The
    default cool-down period is five minutes")."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase")]
    state = {"scale_up_events": [{"time": NOW - 200, "change": 1, "cause": "rule"},
                                 {"time": NOW - 100, "change": 2, "cause": "boundary"}],
             "last_scale": {"time": NOW - 100, "direction": "Increase", "cause": "boundary"}}
    r = decide(request(4, rules, {"cpu": series(90)}, state=state))
    assert r["reason"] == "CooldownActive"
    state["scale_up_events"][0]["time"] = NOW - 300
    assert decide(request(4, rules, {"cpu": series(90)}, state=state))["desired_replicas"] == 5


# ----------------------------------------------------------------------------- capacity and profiles


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


BUSINESS_HOURS = {
    "profiles": [
        {"name": "default", "capacity": {"minimum": 1, "maximum": 5, "default": 2},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]},
        {"name": "business hours", "capacity": {"minimum": 4, "maximum": 20, "default": 6},
         "recurrence": {"time_zone": "Pacific Standard Time",
                        "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                        "hours": [8], "minutes": [0]},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase", 2), rule("cpu", "LessThan", 30, "Decrease")]},
        {"name": "evening", "capacity": {"minimum": 1, "maximum": 5, "default": 2},
         "recurrence": {"time_zone": "Pacific Standard Time",
                        "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                        "hours": [18], "minutes": [0]},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]},
    ]}
TUESDAY_10_PST = 1768327200.0   # 2026-01-13 10:00 PST = 18:00 UTC


def _at(now: float, current: int, cpu) -> dict:
    req = {"semantics": "azure", "now": now, "current_replicas": current, "policy": copy.deepcopy(BUSINESS_HOURS),
           "observations": {"metrics": {} if cpu is None else {"cpu": series(cpu, now)}}}
    return decide(req)


def test_profile_minimum_maximum_default_by_time_of_day():
    """MULTI_URL: "Autoscale transitions between profiles based on their start times. The end time for a
    given profile is determined by the start time of the following profile." A business-hours profile
    (Mon–Fri 08:00 Pacific, 4..20, default 6) and an evening copy (18:00, 1..5, default 2)."""
    t = TUESDAY_10_PST
    assert _at(t, 2, 50)["profile"] == "business hours"
    assert _at(t, 2, 50)["desired_replicas"] == 4                  # its minimum takes effect
    assert _at(t, 8, 90)["desired_replicas"] == 10                 # its rule: +2
    evening = t + 9 * 3600                                         # 19:00 PST
    r = _at(evening, 8, 50)
    assert (r["profile"], r["desired_replicas"], r["reason"]) == ("evening", 5, "TooManyReplicas")
    # default capacity when metrics cannot be read: max(current, default) within the profile's range
    assert _at(t, 2, None)["desired_replicas"] == 6
    assert _at(t, 2, None)["reason"] == "ProfileDefault"
    assert _at(evening, 1, None)["desired_replicas"] == 2
    assert _at(evening, 4, None)["desired_replicas"] == 4
    # Saturday: the latest start is Friday 18:00 — the evening profile, not the default
    saturday = t + 4 * 86400
    assert _at(saturday, 3, 50)["profile"] == "evening"


def test_weekend_profile_multiprofile_arm_template():
    """MULTI_URL ARM template: Weekday profile Monday 04:00, Weekend profile Saturday 00:01, E. Europe
    Standard Time: "the weekend profile starts on Saturday morning at one minute passed midnight and end
    on Monday morning at 04:00"."""
    policy = {"profiles": [
        {"name": "Weekday profile", "capacity": {"minimum": 3, "maximum": 20, "default": 3},
         "recurrence": {"time_zone": "E. Europe Standard Time", "days": ["Monday"], "hours": [4], "minutes": [0]},
         "rules": []},
        {"name": "Weekend profile", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
         "recurrence": {"time_zone": "E. Europe Standard Time", "days": ["Saturday"], "hours": [0], "minutes": [1]},
         "rules": []}]}
    saturday_0001 = 1768600860.0          # 2026-01-17 00:01 UTC+2
    for now, want in [(saturday_0001 - 1, "Weekday profile"), (saturday_0001, "Weekend profile"),
                      (saturday_0001 + 2 * 86400 + 4 * 3600 - 61, "Weekend profile"),
                      (saturday_0001 + 2 * 86400 + 4 * 3600 - 60, "Weekday profile")]:
        r = decide({"semantics": "azure", "now": now, "current_replicas": 3, "policy": policy})
        assert r["profile"] == want, now


def test_default_capacity_is_not_applied_on_profile_activation():
    """A-GAP-14: the REST reference's "The default is only used if the current instance count is lower than
    the default" when metrics are unavailable — a profile becoming active does not jump to its default."""
    r = _at(TUESDAY_10_PST, 5, 50)
    assert (r["profile"], r["desired_replicas"]) == ("business hours", 5)


def test_default_capacity_fallback_reports_error_and_starts_no_cooldown():
    """SETTINGS_URL: "If there's a problem reading the resource metric, and the current capacity is below
    the default, autoscale scales out to the default." (A6; cause ``default``, no cooldown: A-GAP-7.)"""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    r = decide(request(1, rules, {}, default_replicas=3))
    assert (r["desired_replicas"], r["reason"]) == (3, "ProfileDefault")
    assert "cannot be read" in r["error"] and "default capacity 3" in r["error"]
    assert r["metrics"][0]["error"] == "metric 'cpu' cannot be read: no observation"
    assert r["state"]["last_scale"]["cause"] == "default"
    assert "cooldown_seconds" not in r["state"]["last_scale"]


def test_unreadable_metric_does_not_stop_a_readable_scale_out():
    """A-GAP-8: one rule's metric cannot be read, another scale-out rule fires → scale out; below the
    default the default capacity still applies (SETTINGS_URL: "If there's a problem reading the resource
    metric, and the current capacity is below the default, autoscale scales out to the default"), so more
    load never gives fewer instances than the fallback (tests/semantics/test_azure_audit.py)."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("queue", "GreaterThan", 100, "Increase"),
             rule("cpu", "LessThan", 30, "Decrease")]
    r = decide(request(5, rules, {"cpu": series(90)}, default_replicas=5))
    assert (r["desired_replicas"], r["reason"]) == (6, "DesiredWithinRange")
    r = decide(request(2, rules, {"cpu": series(90)}, default_replicas=5))
    assert (r["desired_replicas"], r["reason"]) == (5, "ProfileDefault")
    r = decide(request(2, rules, {"cpu": series(50)}, default_replicas=5))
    assert (r["desired_replicas"], r["reason"]) == (5, "ProfileDefault")


def test_no_rules_no_scaling_and_no_fallback():
    """Protocol defaults: azure with no rules does not scale, and has no metric to fail to read."""
    r = decide(request(4, [], {}, default_replicas=6))
    assert (r["desired_replicas"], r["reason"], r["error"]) == (4, "DesiredWithinRange", None)


# ----------------------------------------------------------------------------- predictive


def test_predictive_enabled_fires_scale_out_within_look_ahead():
    """PRED_URL: "If you want your Virtual Machine Scale Set to scale out when the CPU usage exceeds 70% and
    actual or predicted data shows that CPU usage is or will be over 70%, then a scale out will occur." and
    "Forecast only allows you to view your predicted CPU forecast without triggering the scaling action"."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    metrics = {"cpu": {**series(50), "forecast": [[NOW + 900, 85]]}}
    on = decide(request(4, rules, metrics, predictive={"mode": "Enabled", "look_ahead_seconds": 1800}))
    assert on["desired_replicas"] == 5 and on["metrics"][0]["forecast_triggered"] is True
    only = decide(request(4, rules, metrics, predictive={"mode": "ForecastOnly", "look_ahead_seconds": 1800}))
    assert only["desired_replicas"] == 4
    assert only["metrics"][0]["triggered"] is False and only["metrics"][0]["forecast_triggered"] is True
    # A-GAP-13: without look_ahead_seconds, one time grain ahead
    near = {"cpu": {**series(50), "forecast": [[NOW + 60, 85], [NOW + 120, 99]]}}
    assert decide(request(4, rules, near, predictive={"mode": "Enabled"}))["desired_replicas"] == 5
    far = {"cpu": {**series(50), "forecast": [[NOW + 120, 99]]}}
    assert decide(request(4, rules, far, predictive={"mode": "Enabled"}))["desired_replicas"] == 4


def test_predictive_never_scales_in():
    """PRED_URL: "Predictive autoscale supports scale-out only." """
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    metrics = {"cpu": {**series(50), "forecast": [[NOW + 300, 5]]}}
    r = decide(request(4, rules, metrics, predictive={"mode": "Enabled", "look_ahead_seconds": 1800}))
    assert r["desired_replicas"] == 4


# ----------------------------------------------------------------------------- actions, aggregation, arithmetic


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


def test_statistic_then_time_aggregation():
    """BEST_URL (2026): "with a 1-minute timeGrain, statistic set to Average, and timeAggregation set to
    Maximum, autoscale first averages the metric across instances for each minute. It then compares the
    highest 1-minute average in the time window with the rule threshold." """
    members = {"vm-0": [[NOW - 120, 50], [NOW - 60, 90], [NOW, 60]],
               "vm-1": [[NOW - 120, 70], [NOW - 60, 70], [NOW, 60]]}
    # per-minute averages 60, 80, 60 → Maximum 80 > 75; Average of all samples (66.7) would not fire
    rules = [rule("cpu", "GreaterThan", 75, "Increase", aggregation="Maximum")]
    r = decide(request(2, rules, {"cpu": {"member_series": members}}))
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (80, 3)
    # per-minute Max across instances 70, 90, 60 → Average 73.3
    rules = [rule("cpu", "GreaterThan", 73, "Increase", statistic="Max")]
    r = decide(request(2, rules, {"cpu": {"member_series": members}}))
    assert r["metrics"][0]["value"] == pytest.approx(220 / 3) and r["desired_replicas"] == 3
    # A-GAP-12: statistic Count = instances reporting in each grain
    rules = [rule("cpu", "GreaterThanOrEqual", 2, "Increase", statistic="Count", aggregation="Minimum")]
    assert decide(request(2, rules, {"cpu": {"member_series": members}}))["desired_replicas"] == 3


def test_time_aggregation_count_and_last():
    """A-GAP-12: ``Count`` is the number of points in the window; ``Last`` the latest one."""
    rules = [rule("cpu", "LessThan", 5, "Decrease", aggregation="Count")]
    r = decide(request(3, rules, {"cpu": series([1, 1, 1, 1])}))
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (4, 2)
    rules = [rule("cpu", "GreaterThan", 70, "Increase", aggregation="Last")]
    shuffled = {"series": [[NOW, 90], [NOW - 120, 10], [NOW - 60, 10]]}
    assert decide(request(3, rules, {"cpu": shuffled}))["desired_replicas"] == 4


def test_metric_delay_shifts_the_window():
    """Protocol: windows end ``settings.metric_delay_seconds`` before now."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", window=120)]
    metrics = {"cpu": {"series": [[NOW - 240, 90], [NOW - 180, 90], [NOW - 60, 10], [NOW, 10]]}}
    assert decide(request(3, rules, metrics))["desired_replicas"] == 3
    assert decide(request(3, rules, metrics, settings={"metric_delay_seconds": 180}))["desired_replicas"] == 4


def test_thresholds_compare_exactly():
    """Protocol: exact arithmetic. (0.1 + 0.2 + 0.3) / 3 is 0.2 (float: 0.19999999999999998)."""
    rules = [rule("load", "LessThan", 0.2, "Decrease")]
    r = decide(request(3, rules, {"load": series([0.1, 0.2, 0.3])}))
    assert r["metrics"][0]["triggered"] is False
    rules = [rule("load", "LessThanOrEqual", 0.2, "Decrease")]
    assert decide(request(3, rules, {"load": series([0.1, 0.2, 0.3])}))["metrics"][0]["triggered"] is True


def test_flapping_estimate_is_exact():
    """The flapping estimate 0.06 × 10 / 3 is 0.2 exactly (float: 0.19999999999999998): a
    GreaterThanOrEqual 0.2 scale-out rule fires on it, so the scale-in to 3 would flap; at 4 the
    estimate is 0.15 → reduced to 4."""
    rules = [rule("load", "GreaterThanOrEqual", 0.2, "Increase"),
             rule("load", "LessThan", 0.1, "Decrease", 3, type="ExactCount")]
    assert 0.06 * 10 / 3 < 0.2       # what float arithmetic would conclude
    r = decide(request(10, rules, {"load": series(0.06)}, max_replicas=20))
    assert (r["desired_replicas"], r["reason"]) == (4, "FlappingReduced")


# ----------------------------------------------------------------------------- protocol details


def test_state_and_response_shape():
    rules = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=600, name="cpu-high")]
    r = decide(request(3, rules, {"cpu": series(90)}))
    assert r["metrics"] == [{"name": "cpu-high", "replicas": 4, "utilization": None, "value": 90,
                             "error": None, "triggered": True}]
    assert r["state"]["last_scale"] == {"time": NOW, "direction": "Increase", "cause": "rule",
                                        "cooldown_seconds": 600}
    assert r["state"]["scale_up_events"] == [{"time": NOW, "change": 1, "cause": "rule"}]
    assert r["recommended_replicas"] == r["desired_replicas"] == 4


def test_mode_off_reports_the_recommendation():
    """Protocol: the setting disabled (A17, mode OFF) → no change, recommendation still reported."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase")]
    r = decide(request(3, rules, {"cpu": series(90)}, mode="OFF"))
    assert (r["recommended_replicas"], r["desired_replicas"], r["reason"]) == (4, 3, "ScalingDisabled")


def test_disabled_rule_is_reported_and_ignored():
    rules = [rule("cpu", "GreaterThan", 70, "Increase", enabled=False), rule("cpu", "LessThan", 30, "Decrease")]
    r = decide(request(3, rules, {"cpu": series(90)}))
    assert r["desired_replicas"] == 3 and r["metrics"][0]["triggered"] is False
    r = decide(request(3, rules, {}))   # a disabled rule's metric is not read: only the enabled one fails
    assert r["reason"] == "ProfileDefault" and "1 of 1 rules" in r["error"]


def test_explain_names_each_stage():
    rules = [rule("cpu", "GreaterThan", 50, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    r = decide(request(2, rules, {"cpu": series(28)}), explain=True)
    stages = [e["stage"] for e in r["explain"]]
    assert stages == ["rules", "flapping"]
    assert "56" in r["explain"][1]["why"]


def test_capacity_forecast_is_a_floor_and_proposal_replaces_rules():
    """Protocol (observations.forecast): a capacity forecast joins by max and never scales in by itself;
    it is ignored under ForecastOnly. ``observations.proposal`` replaces the rules; bounds still apply."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    req = request(4, rules, {"cpu": series(50)}, predictive={"mode": "ForecastAndScale"})
    req["observations"]["forecast"] = {"replicas": 7}
    r = decide(req)
    assert (r["desired_replicas"], r["reason"]) == (7, "ForecastFloor")
    assert r["state"]["scale_up_events"][-1]["cause"] == "forecast"
    req["observations"]["forecast"] = {"replicas": 2}
    assert decide(req)["desired_replicas"] == 4
    req["policy"]["predictive"] = {"mode": "ForecastOnly"}
    req["observations"]["forecast"] = {"replicas": 7}
    assert decide(req)["desired_replicas"] == 4
    req = request(4, rules, {"cpu": series(50)})
    req["observations"]["proposal"] = 30
    r = decide(req)
    assert (r["desired_replicas"], r["reason"]) == (10, "TooManyReplicas")
