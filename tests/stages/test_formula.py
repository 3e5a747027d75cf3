"""Formula metrics: CEL over the policy's metrics (KEDA advanced.scalingModifiers) and the
value a metric stands for."""
import pytest

from scalebridge.cel import CelError, compile_formula
from scalebridge.policy import Metric
from scalebridge.protocol import Member, MetricObservation
from scalebridge.stages.formula import FormulaError, formula_observation, metric_value

# KEDA "Scaling Deployments", Scaling Modifiers, "Example: count function":
#   formula: "count([trig_one,trig_two,trig_three],{#>1}) > 1 ? 5 : 0"
#   "If at least 2 metrics ... have value of more than 1, then return 5, otherwise return 0"
# written in CEL
COUNT = "[trig_one, trig_two, trig_three].filter(x, x > 1.0).size() > 1 ? 5.0 : 0.0"
NAMES = ("trig_one", "trig_two", "trig_three")


def ext(name):
    return Metric(type="external", name=name, target={"type": "AverageValue", "average_value": 1})


@pytest.mark.parametrize("values, expected", [((2, 3, 0), 5.0), ((2, 0, 0), 0.0), ((0, 0, 0), 0.0), ((2, 2, 2), 5.0)])
def test_the_keda_count_example_computes_as_documented(values, expected):
    c = compile_formula(COUNT, NAMES)
    assert c.references == frozenset(NAMES)
    assert c.evaluate(dict(zip(NAMES, map(float, values)))) == expected


def test_the_average_example():
    # "Example: compose average value": (trig_one + trig_two)/2
    assert compile_formula("(trig_one + trig_two) / 2.0", NAMES).evaluate({"trig_one": 3.0, "trig_two": 6.0}) == 4.5


def test_the_ternary_example():
    # "trig_one > 2 ? trig_one + trig_two : 1"
    c = compile_formula("trig_one > 2.0 ? trig_one + trig_two : 1.0", NAMES)
    assert c.evaluate({"trig_one": 3.0, "trig_two": 4.0}) == 7.0
    assert c.evaluate({"trig_one": 1.0, "trig_two": 4.0}) == 1.0


def test_cel_numbers_are_typed_int_division_truncates():
    assert compile_formula("double(int(trig_one) / 2)", NAMES).evaluate({"trig_one": 7.0}) == 3.0
    assert compile_formula("double(-int(trig_one) / 2)", NAMES).evaluate({"trig_one": 7.0}) == -3.0
    with pytest.raises(CelError, match=r"no matching overload for '_\+_' applied to '\(double, int\)' \(at column 10 of the expression\)"):
        compile_formula("trig_one + 1", NAMES)


def test_an_unknown_name_is_refused_with_its_position_and_the_known_names():
    with pytest.raises(CelError, match=r"undeclared reference to 'trig_for' \(at column 12 of the expression\); "
                                       r"the metrics it can name: trig_one, trig_two, trig_three"):
        compile_formula("trig_one + trig_for", NAMES)


def test_a_syntax_error_has_its_position():
    with pytest.raises(CelError, match=r"Syntax error.*\(at column 11 of the expression\)"):
        compile_formula("trig_one +", NAMES)


def test_a_formula_computes_a_number():
    with pytest.raises(CelError, match="of type bool"):
        compile_formula("trig_one > 1.0", NAMES)


@pytest.mark.parametrize("expression", ["trig_one / trig_two", "double(int(trig_one) / int(trig_two))",
                                        "double(int(trig_one) % int(trig_two))"])
def test_a_division_by_zero_is_an_error_of_the_formula_not_of_the_process(expression):
    c = compile_formula(expression, NAMES)
    with pytest.raises(CelError):
        c.evaluate({"trig_one": 1.0, "trig_two": 0.0})


def test_integer_overflow_is_an_error():
    c = compile_formula("double(int(trig_one) * 9223372036854775807)", NAMES)
    with pytest.raises(CelError, match="overflow"):
        c.evaluate({"trig_one": 2.0})


def test_the_references_leave_out_comprehension_variables_and_unused_metrics():
    c = compile_formula("[trig_one].filter(trig_two, trig_two > 1.0).size() > 0 ? 1.0 : 0.0", NAMES)
    assert c.references == frozenset({"trig_one"})


def test_metric_value_sums_external_values_and_averages_per_member_samples():
    assert metric_value(ext("q"), MetricObservation(values=[3, 4.5]), None) == 7.5
    assert metric_value(ext("q"), MetricObservation(value="500m"), None) == 0.5
    pods = Metric(type="pods", name="conns", target={"type": "AverageValue", "average_value": 10})
    assert metric_value(pods, MetricObservation(members={"a": 10, "b": 20}), None) == 15
    assert metric_value(pods, MetricObservation(members={}), None) is None   # no member to sample


def test_metric_value_of_a_utilization_target_is_the_percent_of_the_requests():
    cpu = Metric(type="resource", name="cpu", target={"type": "Utilization", "average_utilization": 60})
    members = [Member(name="a", requests={"cpu": "500m"}), Member(name="b", requests={"cpu": "1"})]
    assert metric_value(cpu, MetricObservation(members={"a": "250m", "b": "250m"}), members) == 37.5


def test_a_metric_that_failed_to_be_read_has_no_value():
    with pytest.raises(FormulaError, match="could not be read: timeout"):
        metric_value(ext("q"), MetricObservation(error="timeout"), None)
    with pytest.raises(FormulaError, match="no data for metric q"):
        metric_value(ext("q"), None, None)


def test_a_formula_of_series_is_a_series_point_by_point():
    c = compile_formula("trig_one + trig_two", NAMES)
    metrics = [ext("trig_one"), ext("trig_two")]
    obs = {"trig_one": MetricObservation(series=[[60, 1.0], [120, 2.0]]),
           "trig_two": MetricObservation(series=[[60, 10.0], [120, 20.0], [180, 30.0]])}
    out = formula_observation(c, metrics, obs, None, 200.0)
    assert out["series"] == [(60, 11.0), (120, 22.0)]
    assert out["value"] == 22.0   # the latest point both series have
