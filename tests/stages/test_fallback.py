"""The fallback stage: KEDA's failure count and fallback count (pkg/fallback/fallback.go,
https://keda.sh/docs/latest/reference/scaledobject-spec/#fallback)."""
import pytest

from scalebridge.errors import RequestError
from scalebridge.policy import Fallback
from scalebridge.stages.fallback import count_failures, failures_of, fallback_proposal, fallback_replicas


def test_a_failed_metric_counts_one_more_and_a_read_one_is_reset():
    # IncrementFailure / UpdateHealthStatus(NumberOfFailures: 0)
    assert count_failures({}, ["a", "b"], ["a"]) == {"a": 1}
    assert count_failures({"a": 3, "b": 2}, ["a", "b"], ["a"]) == {"a": 4}


def test_a_metric_not_read_keeps_its_count():
    assert count_failures({"other": 2}, ["a"], []) == {"other": 2}


# the scaledobject-spec's four examples, with "current replicas" the scale's spec.replicas
@pytest.mark.parametrize("behavior, replicas, current, expected", [
    ("static", 6, 3, 6),                       # "scale the deployment to 6 replicas when ... set to 6"
    ("current_replicas", None, 6, 6),          # "... to 6 replicas when the current replicas are 6"
    ("current_replicas_if_higher", 3, 6, 6),   # "set to 3, but the current replicas are 6"
    ("current_replicas_if_higher", 6, 3, 6),
    ("current_replicas_if_lower", 6, 3, 3),    # "set to 6, but the current replicas are 3"
    ("current_replicas_if_lower", 3, 6, 3),
])
def test_the_fallback_count_follows_its_behavior(behavior, replicas, current, expected):
    spec = Fallback(replicas=replicas, behavior=behavior)
    assert fallback_replicas(spec, current) == expected


def test_the_default_threshold_is_three_and_replicas_is_required_but_for_current_replicas():
    assert Fallback(replicas=2).failure_threshold == 3
    with pytest.raises(ValueError, match="needs `replicas`"):
        Fallback(behavior="static")
    Fallback(behavior="current_replicas")


def test_the_fallback_count_joins_the_read_proposals_by_max():
    assert fallback_proposal(6, [2, None, 9], current=4, still_failing=False) == 9
    assert fallback_proposal(6, [2], current=4, still_failing=False) == 6


def test_a_metric_failing_below_the_threshold_still_blocks_a_scale_in():
    assert fallback_proposal(2, [1], current=4, still_failing=True) == 4
    assert fallback_proposal(2, [1], current=4, still_failing=False) == 2


@pytest.mark.parametrize("bad", [[], {"a": -1}, {"a": "3"}, {"a": 1.5}])
def test_malformed_failure_counts_are_a_request_error(bad):
    with pytest.raises(RequestError, match=r"\$\.state\['fallback\.failures'\]"):
        failures_of({"fallback.failures": bad})
