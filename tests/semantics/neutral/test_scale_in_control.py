"""The neutral ``scalebridge`` semantics' scale-in controls (GCE-style): the fixed and
percent floors, applied after stabilization and rate limits, and what the sizes record.

Sources: docs/semantics.md (the neutral pipeline and its defaults), docs/policy.md, and the
providers' pages each stage reproduces. GCE: https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (scaleInControl)."""

from scalebridge import decide
from scalebridge.testing.requests import neutral_request as neutral, NOW, pods


def test_scale_in_control_and_profiles():
    policy = {"scale_in_control": {"max_scaled_in_replicas": {"fixed": 2}, "time_window_seconds": 600},
              "behavior": {"scale_down": {"stabilization_window_seconds": 0}}}
    state = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", members=pods(10), policy=policy, state=state))
    assert r["desired_replicas"] == 8 and r["reason"] == "ScaleInControlled"
    profiles = [{"name": "night", "capacity": {"minimum": 6, "maximum": 12, "default": 6},
                 "recurrence": {"days": ["Thursday"], "hours": [0], "minutes": [0], "time_zone": "UTC"}},
                {"name": "day", "capacity": {"minimum": 1, "maximum": 10, "default": 2}}]
    r = decide(neutral(4, "500m", policy={"profiles": profiles}))   # NOW is Thursday 00:00 UTC
    assert r["profile"] == "night" and r["desired_replicas"] == 6 and r["reason"] == "TooFewReplicas"


NO_WINDOW = {"scale_down": {"stabilization_window_seconds": 0}}


def test_scale_in_control_percent_floor():
    # the protocol: "minus `floor(percent × peak / 100)`"
    pol = {"scale_in_control": {"max_scaled_in_replicas": {"percent": 25}, "time_window_seconds": 600},
           "behavior": NO_WINDOW}
    st = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", members=pods(10), policy=pol, state=st))
    assert r["desired_replicas"] == 8 and r["reason"] == "ScaleInControlled"    # 10 − floor(2.5)


def _control(down_pods, window=0, mode="ON"):
    return {"scale_in_control": {"max_scaled_in_replicas": {"fixed": 3}, "time_window_seconds": 600},
            "mode": mode,
            "behavior": {"scale_down": {"stabilization_window_seconds": window,
                                        "policies": [{"type": "Pods", "value": down_pods, "period_seconds": 60}]}}}


def test_scale_in_control_applies_after_rate_limits_and_sizes_record_the_result():
    # docs/semantics.md: "4. rate policies ..., then bounds; 5. scale-in controls (GCE)"; the protocol: "the size
    # never drops below the peak of `state.sizes` within `time_window_seconds` minus `fixed`"; "its
    # `recommended_replicas` to `sizes`"
    st = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", policy=_control(1), state=st))     # raw 2; rate 9 above the floor 7
    assert r["desired_replicas"] == 9 and r["reason"] == "ScaleDownLimit"
    assert r["state"]["sizes"][-1] == {"time": NOW, "replicas": 9}
    r = decide(neutral(10, "100m", policy=_control(5), state=st))     # rate 5 below the floor 7
    assert r["desired_replicas"] == 7 and r["reason"] == "ScaleInControlled"
    assert r["state"]["sizes"][-1] == {"time": NOW, "replicas": 7}
    assert r["state"]["recommendations"][-1] == {"time": NOW, "replicas": 2}


def test_scale_in_control_after_stabilization():
    st = {"recommendations": [{"time": NOW - 100, "replicas": 9}], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", policy=_control(5, window=600), state=st))
    assert r["desired_replicas"] == 9 and r["reason"] == "ScaleDownStabilized"


def test_only_scale_out_records_the_controlled_recommendation_in_sizes():
    # the protocol: "Under `OFF` and `ONLY_SCALE_OUT` the response still carries `recommended_replicas`";
    # "its `recommended_replicas` to `sizes`"
    st = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", policy=_control(5, mode="ONLY_SCALE_OUT"), state=st))
    assert (r["recommended_replicas"], r["desired_replicas"], r["reason"]) == (7, 10, "ScalingDisabled")
    assert r["state"]["sizes"][-1] == {"time": NOW, "replicas": 7} and r["state"].get("last_scale") is None
