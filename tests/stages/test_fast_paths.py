"""The replay's fast paths give exactly what the general paths give.

Each shortcut taken on the per-decision path (benchmarks/simulate.py) is
checked here against the code it stands for, on varied inputs: missing data,
out-of-range and unsorted samples, shared and distinct (equal) objects,
fractions, exponents and non-finite numbers.
"""

from __future__ import annotations

import math
import random
from collections import deque
from fractions import Fraction

import pytest

from scalebridge.semantics.aws_policy import ceil_ratio, float_target
from scalebridge.stages.alarms import (ALARM, INSUFFICIENT_DATA, OK, _evaluate_alarm, all_breaching, breach_test,
                                      evaluate_alarm, series_datapoints)
from scalebridge.stages.proposals import _sums, average_proposal, invalid_usage, negative_usage
from scalebridge.state import TimeLog
from scalebridge.units import decimal_pair, exact, milli_value, none_negative



def _floats(rng: random.Random, n: int) -> list[float]:
    out = [0.0, -0.0, 1.0, -1.0, 0.1, 0.29, 1e-5, 1.5e16, 123456789.125, 2.0 ** -30, 1e300, -7.25e-12]
    for _ in range(n):
        kind = rng.random()
        if kind < 0.4:
            out.append(rng.uniform(0, 200))
        elif kind < 0.6:
            out.append(round(rng.uniform(-100, 100), rng.randrange(0, 6)))
        elif kind < 0.8:
            out.append(rng.uniform(-1, 1) * 10.0 ** rng.randrange(-20, 21))
        else:
            out.append(float(rng.randrange(-1000, 1000)))
    return out


# --- a float's exact value: the decimal its JSON text wrote ------------------------------------


def _bit_patterns(rng: random.Random, n: int) -> list[float]:
    """Doubles from random bit patterns: every exponent, subnormals, the extremes."""
    import struct
    out = [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e22, 1e23, 9007199254740993.0]
    while len(out) < n:
        x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if math.isfinite(x):
            out.append(x)
    return out


def _written(x: float) -> Fraction:
    """What a float stands for: its integer when integral, else the decimal it prints as."""
    return Fraction(int(x)) if x.is_integer() else Fraction(repr(x))


def test_decimal_pair_is_the_shortest_decimal_in_lowest_terms() -> None:
    rng = random.Random(1)
    for x in _floats(rng, 3000) + _bit_patterns(rng, 3000):
        want = _written(x)
        assert decimal_pair(x) == (want.numerator, want.denominator), x
        assert exact(x) == want, x
        assert milli_value(x) == math.ceil(want * 1000), x


@pytest.mark.parametrize("x", [math.inf, -math.inf, math.nan])
def test_decimal_pair_rejects_what_exact_rejects(x: float) -> None:
    with pytest.raises(ValueError) as fast:
        decimal_pair(x)
    with pytest.raises(ValueError) as general:
        exact(x)
    assert str(fast.value) == str(general.value)


def test_ceil_ratio_of_a_float_equals_the_exact_ratio() -> None:
    rng = random.Random(2)
    targets = [exact(t) for t in (60, 54, Fraction(27, 2), 0.5, 1, 95, 3.3)]
    for x in _floats(rng, 2000):
        for target in rng.sample(targets, 3):
            base = rng.randrange(0, 500)
            want = math.ceil(Fraction(base) * _written(x) / target)
            assert ceil_ratio(base, x, target) == want, (base, x, target)
            assert ceil_ratio(base, x, target, float_target(target)) == want, (base, x, target)
            assert ceil_ratio(base, exact(x), target) == want


def test_ceil_ratio_worked_out_in_floats_is_exact_next_to_an_integer() -> None:
    """The float path (``target_float``) answers only when no integer lies within its
    error of the float ratio: ratios that are integers as decimals but not as floats
    (0.29 × 100), a few ulps either side of an integer, and the whole range of
    magnitudes give the exact ceiling of the decimal's ratio."""
    rng = random.Random(3)
    targets = [exact(t) for t in (60, 54, Fraction(27, 2), 0.5, 1, 95, 3.3, 0.1, 1e-7, 123456789, "1e99",
                                  Fraction(1, 3), 2 ** 60)]
    cases = []
    for target in targets:
        for _ in range(300):
            base = rng.choice([1, 2, 3, 7, 10, 25, 100, 499, rng.randrange(0, 10 ** 6), 2 ** 52, 2 ** 53 + 1])
            k = rng.randrange(0, 10 ** rng.randrange(1, 8))
            near = float(Fraction(k) * target / base) if base else 0.0   # base × near / target ≈ k
            for x in (near, math.nextafter(near, math.inf), math.nextafter(near, -math.inf),
                      float(repr(round(near, rng.randrange(0, 17)))), -near, near * (1 + 2 ** -50)):
                cases.append((base, x, target))
    cases += [(100, 0.29, exact(1)), (3, 0.8, exact(0.8)), (10, 1.1, exact(1)), (7, 5e-324, exact(1)),
              (1, 1.7976931348623157e308, exact(1)), (2, 1e-250, exact("1e-99"))]
    cases += [(rng.randrange(0, 500), x, rng.choice(targets)) for x in _bit_patterns(rng, 3000)]
    for base, x, target in cases:
        want = math.ceil(Fraction(base) * _written(x) / target)
        assert ceil_ratio(base, x, target, float_target(target)) == want, (base, x, target)


def test_none_negative_says_yes_only_when_no_value_is_negative() -> None:
    """The impossible-observation scan's shortcut: True must mean that no value is below
    zero (a False sends the caller value by value, so it is always safe); every list of
    non-negative numbers, or of quantity strings written without a sign, is a yes."""
    rng = random.Random(11)
    # what a validated observation can hold: finite numbers, quantity strings, nulls
    pool = [0, 3, -2, 0.5, -0.0, -1e-9, 1e300, "500m", "1.5Gi", "-1", "0", " -2m", "1e-3", None]
    assert none_negative([]) and none_negative({}.values())
    for _ in range(5000):
        values = [rng.choice(pool) for _ in range(rng.randrange(0, 6))]
        shape = rng.choice([list, tuple, lambda vs: {f"m{i}": v for i, v in enumerate(vs)}.values()])
        got = none_negative(shape(values))
        if got:
            assert all(v is not None and exact(v) >= 0 for v in values), values
        numbers = all(type(v) in (int, float) for v in values)
        if (numbers and all(v >= 0 for v in values)) or \
                all(type(v) is str and "-" not in v for v in values):
            assert got, values


# --- CloudWatch alarms ------------------------------------------------------------------------

OPERATORS = ["GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual", "Equals", "NotEquals"]
"""Every operator breach_test takes: the four of a threshold alarm, and Azure's Equals and NotEquals."""


def test_alarm_fast_path_agrees_with_the_general_evaluation() -> None:
    rng = random.Random(4)
    seen = set()
    for _ in range(5000):
        n = rng.randrange(1, 16)
        m = rng.randrange(1, n + 1)
        size = rng.randrange(0, n + 4)
        missing = rng.choice([0.0, 0.0, 0.1, 0.5])
        points = [None if rng.random() < missing else
                  rng.choice([float(rng.randrange(40, 80)), rng.uniform(40, 80), rng.randrange(40, 80),
                              Fraction(rng.randrange(400, 800), rng.randrange(1, 13))])
                  for _ in range(size)]
        if rng.random() < 0.2:
            points = tuple(points)
        threshold = rng.choice([60, 60.5, "60", Fraction(121, 2)])
        test = breach_test(rng.choice(OPERATORS), threshold)
        treat = rng.choice(["missing", "breaching", "notBreaching", "ignore"])
        previous = rng.choice([None, OK, ALARM, INSUFFICIENT_DATA])
        fast = evaluate_alarm(points, test, n, m, treat, previous)
        general = _evaluate_alarm(points, test, n, m, treat, previous)
        assert fast == general, (points, n, m, treat, previous)
        assert type(fast.evaluated) is list
        seen.add(fast.state)
    assert seen == {OK, ALARM, INSUFFICIENT_DATA}


def test_the_newest_datapoints_of_a_series_are_what_the_whole_list_begins_with() -> None:
    """series_datapoints(first=k) skips, without working out their period, samples a
    whole period older than the k newest periods: its list is the whole list's first k
    entries for series in any order, with samples on and a hair either side of period
    boundaries, several in one period, missing values, and ends where rounding is
    coarse (past 2**40 periods it skips nothing early)."""
    rng = random.Random(12)
    statistics = ["Average", "Max", "Min", "Sum", "Count", "Percentile90"]
    for _ in range(6000):
        grain = rng.choice([60.0, 60.0, 10.0, 30.0, 120.0, 7.3, 0.1, 86400.0])
        end = rng.choice([897474585.0, 1767225600.0, 0.0, -62135596800.0, 253402300799.0, 1e15 + 0.5,
                          rng.uniform(-1e6, 1e6), 123.45, 2.0 ** 40 * grain, 2.0 ** 41 * grain])
        periods = rng.randrange(1, 20)
        points = []
        for _ in range(rng.randrange(0, 40)):
            k = rng.randrange(-3, periods + 4)
            t = end - k * grain
            t = rng.choice([t, t, math.nextafter(t, math.inf), math.nextafter(t, -math.inf),
                            t - grain * 1e-10, t + grain * 1e-10, t - rng.random() * grain])
            v = rng.choice([None, rng.uniform(0, 100), float(rng.randrange(0, 100)), rng.randrange(0, 100)])
            points.append((t, v))
            if rng.random() < 0.2:   # another sample in the same period
                points.append((t - rng.random() * grain / 2, rng.uniform(0, 100)))
        order = rng.random()
        if order < 0.6:
            points.sort(key=lambda p: p[0])
        elif order < 0.7:
            points.sort(key=lambda p: p[0], reverse=True)
        else:
            rng.shuffle(points)
        statistic = rng.choice(statistics)
        whole = series_datapoints(points, end, grain, periods, statistic)
        assert len(whole) == periods
        for first in range(0, periods + 2):
            got = series_datapoints(points, end, grain, periods, statistic, first)
            want = whole[:first]
            assert got == want and [type(v) for v in got] == [type(v) for v in want], \
                (points, end, grain, periods, statistic, first)


def test_an_n_of_n_alarm_decided_early_has_the_state_the_full_evaluation_gives() -> None:
    """all_breaching (target tracking's 3 of 3 and 15 of 15, decided from the newest
    datapoint on) says what evaluate_alarm says over the same evaluation range, for
    every treatment of missing data, or None only when fewer than N real datapoints,
    all breaching, leave the state to that treatment; a fraction repeated as one
    object (a snapshot) is compared as its copies are."""
    rng = random.Random(5)
    seen = set()
    for _ in range(20000):
        n = rng.randrange(1, 16)
        size = rng.randrange(0, n + 5)
        length = rng.randrange(1, size + 2)
        missing = rng.choice([0.0, 0.0, 0.1, 0.5, 0.9])
        shared = Fraction(rng.randrange(110, 130), 2)
        points = [None if rng.random() < missing else
                  rng.choice([float(rng.randrange(55, 66)), rng.uniform(55, 66), rng.randrange(55, 66), 60.5,
                              Fraction(rng.randrange(110, 130), 2), shared])
                  for _ in range(size)]
        if rng.random() < 0.2:
            points = tuple(points)
        test = breach_test(rng.choice(OPERATORS), rng.choice([60, 60.5, "60", Fraction(121, 2), 0.1]))
        got = all_breaching(points, test, n, length)
        real = [v for v in points[:length] if v is not None]
        for treat in ("missing", "breaching", "notBreaching", "ignore"):
            for previous in (None, OK, ALARM, INSUFFICIENT_DATA):
                want = evaluate_alarm(points[:length], test, n, n, treat, previous).state
                if got is None:
                    assert len(real) < n and all(test(v) for v in real), (points, n, length)
                else:
                    assert got == want, (points, n, length, treat, previous)
        seen.add(got)
    assert seen == {OK, ALARM, None}


def test_breach_count_takes_a_repeated_value_as_its_equal_copies() -> None:
    """A snapshot stands for every period as one object; the count compares it once
    and must count what comparing each period would."""
    rng = random.Random(7)
    for _ in range(2000):
        runs = []
        for _ in range(rng.randrange(1, 5)):
            v = rng.choice([Fraction(rng.randrange(110, 130), 2), float(rng.randrange(55, 65)),
                            rng.randrange(55, 65), 60.5])
            runs.append((v, rng.randrange(1, 6)))
        shared = [v for v, k in runs for _ in range(k)]
        copies = [Fraction(v.numerator, v.denominator) if type(v) is Fraction else _copy(v)
                  for v, k in runs for _ in range(k)]
        test = breach_test(rng.choice(OPERATORS), rng.choice([60, 60.5, Fraction(121, 2)]))
        want = sum(1 for v in copies if test(v))
        assert test.count(shared) == want == test.count(copies), (runs, test.op)


# --- per-member sums: shared sample and request objects ----------------------------------------


class _M:
    """A member as the stages read it."""

    def __init__(self, name: str, count: int, requests: dict):
        self.name, self.count, self.requests = name, count, requests
        self.ready_transition_time = self.start_time = None


def _copy(x):
    """An equal value that is a different object where Python allows (as separately
    parsed samples are; small ints and interned strings stay shared)."""
    if type(x) is float:
        return float(repr(x))
    if type(x) is str:
        return "".join(list(x))
    return x


@pytest.mark.parametrize("resource", [None, "cpu"])
def test_sums_take_shared_objects_as_their_equal_copies(resource) -> None:
    rng = random.Random(5)
    for _ in range(1500):
        shared_value = rng.choice([0.613, 1.0, 2, "250m", 0.1 + 0.2, Fraction(1, 3)])
        shared_req = rng.choice([1, 2, "500m", 0.5])
        members, samples, samples_copy, members_copy = [], {}, {}, []
        for i in range(rng.randrange(1, 12)):
            name = f"m{i}"
            req = shared_req if rng.random() < 0.8 else rng.choice([1, 2, "500m"])
            v = shared_value if rng.random() < 0.7 else rng.choice([None, 0.25, 3, "100m"])
            members.append(_M(name, rng.randrange(1, 5), {"cpu": req}))
            members_copy.append(_M(name, members[-1].count, {"cpu": _copy(req)}))
            samples[name] = v
            samples_copy[name] = _copy(v)
        skip = frozenset(rng.sample([m.name for m in members], rng.randrange(0, len(members) + 1)))
        for sk in (skip, ()):
            a, b = _sums(samples, members, resource, sk), _sums(samples_copy, members_copy, resource, sk)
            assert [getattr(a, k) for k in a.__slots__] == [getattr(b, k) for k in b.__slots__]
        try:
            pa = average_proposal(7, samples, 60, members=members, resource=resource, initializing=skip)
        except Exception as e:   # noqa: BLE001 — the copy must fail the same way
            with pytest.raises(type(e)) as again:
                average_proposal(7, samples_copy, 60, members=members_copy, resource=resource, initializing=skip)
            assert str(again.value) == str(e)
            continue
        pb = average_proposal(7, samples_copy, 60, members=members_copy, resource=resource, initializing=skip)
        assert pa == pb


def _invalid_usage_one_by_one(samples, series, members, resource):
    """invalid_usage as it read every member's request and every sample, one by one."""
    for m in members or ():
        r = None if m.requests is None else m.requests.get(resource)
        if r is not None and milli_value(r) <= 0:
            return f"request for {resource} on member {m.name} must be greater than 0"
    for name, v in (samples or {}).items():
        if v is not None and exact(v) < 0:
            return negative_usage(resource, name, v)
    for name, pts in (series or {}).items():
        for _, v in pts:
            if v is not None and v < 0:
                return negative_usage(resource, name, v)
    return None


def test_invalid_usage_looks_at_an_equal_request_once_and_names_the_first_bad_one() -> None:
    """Members mostly carry equal requests (one object, or equal copies): a request
    equal to one already found above 0 is not looked at again, and the error still
    names the first member whose request is not above 0."""
    rng = random.Random(13)
    pool = [1, 2, 0, -1, "500m", "0", "0m", "1m", "0.0001", "-2", 0.5, 0.0, 1e-4, 1.0, "1", None]
    for _ in range(5000):
        members = []
        for k in range(rng.randrange(0, 8)):
            kind = rng.random()
            if kind < 0.15:
                requests = None
            elif kind < 0.25:
                requests = {"memory": rng.choice(pool)}
            else:
                requests = {"cpu": _copy(rng.choice(pool)), "memory": "1Gi"}
            members.append(_M(f"m{k}", 1, requests))
        samples = rng.choice([None, {}, {"m0": 0.5, "m1": "250m"}, {"m0": -0.5}, {"m1": None, "m2": "-1m"}])
        series = rng.choice([None, {}, {"m0": [(1.0, 0.5), (2.0, None)]}, {"m1": [(1.0, -0.25)]}])
        assert invalid_usage(samples, series, members, "cpu") == \
            _invalid_usage_one_by_one(samples, series, members, "cpu"), (members, samples, series)


def test_gce_vcpu_check_takes_a_shared_request_as_its_equal_copy() -> None:
    from scalebridge.policy import Metric
    from scalebridge.semantics.gce import _vcpu_samples
    from scalebridge.stages.proposals import Signal

    spec = Signal(Metric.model_validate({"type": "resource", "name": "cpu",
                                         "target": {"type": "Utilization", "average_utilization": 60}}), 60.0)

    class Obs:
        member_series = None

        def __init__(self, members):
            self.members = members

    class Ctx:
        def __init__(self, members, samples):
            self.obs = type("O", (), {"members": members, "metrics": {"cpu": Obs(samples)}})()

    rng = random.Random(6)
    for _ in range(500):
        shared = rng.choice([1, 2, "500m", 0.5, "1"])
        members, copies, samples = [], [], {}
        for i in range(rng.randrange(1, 8)):
            r = shared if rng.random() < 0.8 else rng.choice([1, "1000m", 2, 1.0])
            members.append(_M(f"m{i}", 1, {"cpu": r}))
            copies.append(_M(f"m{i}", 1, {"cpu": _copy(r)}))
            samples[f"m{i}"] = None if rng.random() < 0.2 else 0.5
        a = _vcpu_samples(Ctx(members, samples), spec)
        b = _vcpu_samples(Ctx(copies, samples), spec)
        assert (a is None) == (b is None)


# --- history windows: incremental views against a scan -----------------------------------------


def test_window_queries_match_a_scan_of_the_log() -> None:
    rng = random.Random(7)
    for _ in range(60):
        log = TimeLog()
        kept: deque = deque()
        windows = [rng.choice([15.0, 60.0, 300.0, 600.0]) for _ in range(3)]
        now = 1e9
        for _ in range(rng.randrange(20, 200)):
            now += rng.choice([0.0, 15.0, 15.0, 30.0, 7.5])
            value = rng.randrange(0, 50)
            log.append(now, value)
            kept.append((now, value))
            for w in windows:
                inside = [v for t, v in kept if now - w < t <= now]
                closed = [v for t, v in kept if now - w <= t <= now]
                assert log.window_max(now, w) == (max(inside) if inside else None)
                assert log.window_max(now, w, closed=True) == (max(closed) if closed else None)
                assert log.window_min(now, w) == (min(inside) if inside else None)
                assert log.window_sum(now, w) == sum(inside)
            if rng.random() < 0.3:
                cutoff = now - 700.0
                log.prune(cutoff)
                while kept and kept[0][0] < cutoff:
                    kept.popleft()
            assert list(log.entries) == [(t, v, None) for t, v in kept]
