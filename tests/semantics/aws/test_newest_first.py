"""Target tracking reads its series newest first: the high alarm's five periods, and the
low alarm's seventeen only when those leave an alarm undecided
(``_Run.points`` with fewer periods than ``_Compiled.periods``). It must decide exactly
as reading all seventeen does — each alarm's state and the value shown as evaluate_alarm
gives them over all seventeen datapoints, the same response and state as when every
series is read whole — for series in any order, with gaps, several samples in a period,
values either side of both thresholds, zeros for ``ALBRequestCountPerTarget``, and a
rule reading the same datapoints."""
import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scalebridge.engine import Decider
from scalebridge.semantics.aws import AwsSemantics, _json
from scalebridge.stages.alarms import breach_test, evaluate_alarm, series_datapoints
from scalebridge.testing.requests import NOW

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TARGET = 60


@st.composite
def series(draw):
    """One-minute points below 90 % of the target (54), around it or above it, sometimes
    none in the newest minutes; oldest first, newest first or shuffled."""
    n = draw(st.integers(0, 24))
    level = draw(st.sampled_from([[40, 50, 53, 53.99], [53, 54, 55, 59, 60, 61, 80], [60.01, 61, 70, 80]]))
    value = st.one_of(st.sampled_from(level), st.floats(min(level), max(level), allow_nan=False))
    values = draw(st.lists(st.one_of(st.none(), value, value, value), min_size=n, max_size=n))
    gap = draw(st.sampled_from([0, 0, 0, 2, 4, 5, 6, 9]))   # minutes without a point, the newest ones
    offset = draw(st.sampled_from([0, 0, 15, 30, 59.5, 60]))
    points = [[NOW - offset - 60 * j, v] for j, v in enumerate(values) if j >= gap]
    for _ in range(draw(st.integers(0, 3))):   # another sample in some period
        points.append([NOW - offset - draw(st.floats(0, 24 * 60, allow_nan=False)), draw(value)])
    order = draw(st.sampled_from(["oldest first", "oldest first", "newest first", "shuffled"]))
    if order == "shuffled":
        draw(st.randoms(use_true_random=False)).shuffle(points)
    else:
        points.sort(key=lambda p: p[0], reverse=order == "newest first")
    return points


@st.composite
def steps(draw):
    name = draw(st.sampled_from(["cpu", "ALBRequestCountPerTarget"]))
    metrics = [{"type": "resource" if name == "cpu" else "pods", "name": name,
                "target": {"type": "Utilization", "average_utilization": TARGET} if name == "cpu" else
                {"type": "AverageValue", "average_value": TARGET},
                "disable_scale_in": draw(st.booleans())}]
    policy = {"name": "tt", "min_replicas": 0, "max_replicas": 100, "metrics": metrics}
    if draw(st.booleans()):   # a rule on the same one-minute averages: the datapoints are shared
        policy["rules"] = [{"metric": name, "operator": "GreaterThan", "threshold": 75, "time_grain_seconds": 60,
                            "time_window_seconds": draw(st.sampled_from([60, 300, 1200])),
                            "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]
    current = draw(st.integers(1, 30))
    sequence = []
    for k in range(draw(st.integers(1, 4))):
        sequence.append((NOW + 15 * k, {"status_replicas": current, "metrics": {name: {"series": draw(series())}}}))
    return policy, current, sequence


def _decisions(policy, current, sequence, whole_range):
    decider = Decider(copy.deepcopy(policy), "aws")
    if whole_range:   # every series as if another alarm read it too: all seventeen periods at once
        compiled = AwsSemantics()._compiled(decider.policy)
        compiled.shared = frozenset(compiled.periods)
    out = []
    for now, obs in sequence:
        d = decider.step(now, current, obs)
        out.append(d.to_response())
        current = d.desired
    return out


def _alarms_over_all_periods(policy, now, obs):
    """Each alarm's state and the value shown, from all seventeen datapoints."""
    name = policy["metrics"][0]["name"]
    pts = series_datapoints(obs["metrics"][name]["series"], now, 60, 17)
    if name == "ALBRequestCountPerTarget":
        pts = [0 if v is None else v for v in pts]
    high = evaluate_alarm(pts[:5], breach_test("GreaterThan", TARGET), 3, 3).state
    low = evaluate_alarm(pts, breach_test("LessThan", TARGET * 0.9), 15, 15).state
    value = next((v for v in pts if v is not None), None)
    return high, low, _json(value)


@SETTINGS
@given(steps())
def test_target_tracking_decides_from_the_newest_periods_as_from_all_of_them(case):
    policy, current, sequence = case
    responses = _decisions(policy, current, sequence, False)
    for (now, obs), r in zip(sequence, responses):
        states = r["state"]["aws.alarm_states"]
        assert (states["metrics[0].high"], states["metrics[0].low"], r["metrics"][0]["value"]) == \
            _alarms_over_all_periods(policy, now, obs)
    assert responses == _decisions(policy, current, sequence, True)
