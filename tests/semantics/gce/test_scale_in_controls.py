"""The gce semantics' scale-in controls: maxScaledInReplicas (fixed or percent) over
timeWindowSec, never limiting a scale-out, computed even while OFF — single
decisions and sequences chained through the protocol.

Sources: https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (scaleInControl);
Google Cloud blog, "Scale in at your own pace with Compute Engine autoscaler controls" (2020)."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.engine import Decider
from scalebridge.testing.requests import (
    average_value as group, GCE_NOW as NOW, gce_request as request, GceChain, queue, queue_observation as q,
    queue_observations as queue_obs)

DECIDE = "https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions"
REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"
# Google Cloud blog, "Scale in at your own pace with Compute Engine autoscaler controls" (2020), mirror:
BLOG = "https://globalcloudplatforms.com/2020/11/07/scale-in-at-your-own-pace-with-compute-engine-autoscaler-controls/"


def test_rest_percent_example_80_percent_of_150_is_120():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers scaleInControl.maxScaledInReplicas.calculated: "the calculated value
    of a 80% of a managed instance group with 150 instances would be
    (80/100 * 150) = 120 VM instances": the size may drop to 150 − 120 = 30."""
    pol = {"min_replicas": 1, "max_replicas": 200, "metrics": [queue(10)],
           "scale_in_control": {"max_scaled_in_replicas": {"percent": 80}, "time_window_seconds": 1200}}
    state = {"recommendations": [], "sizes": [{"time": NOW - 900, "replicas": 150}]}
    r = decide(request(150, pol["metrics"], {"metrics": {"queue": {"values": [10]}}}, policy=pol, state=state))
    assert r["metrics"][0]["replicas"] == 1
    assert r["desired_replicas"] == 30 and r["reason"] == "ScaleInControlled"


def test_blog_10_vms_in_20_minutes():
    """Google Cloud blog (2020), https://globalcloudplatforms.com/2020/11/07/scale-in-at-your-own-pace-with-compute-engine-autoscaler-controls/:
    "An autoscaler with scale-in controls limits how many VM instances
    can be removed in a given period of time (here 10 VMs in 20 minutes)" and
    "When load declines, the autoscaler maintains the size … required to serve
    the peak load observed in the last 10 minutes (the stabilization period).
    This works the same with and without scale-in controls."
    A group of 50 whose load drops to 20 VMs' worth: 10 minutes at 50
    (stabilization), then at most 10 below the peak of the last 20 minutes."""
    pol = {"min_replicas": 1, "max_replicas": 100, "metrics": [queue(10)],
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 10}, "time_window_seconds": 1200}}
    d = Decider(pol, "gce")
    t0 = NOW
    size = d.step(t0, 50, queue_obs(500)).desired
    assert size == 50
    seen = {}
    for k in range(1, 61):                     # one decision a minute for an hour
        dec = d.step(t0 + 60 * k, size, queue_obs(200))
        size = dec.desired
        seen[k] = size
    assert all(seen[k] == 50 for k in range(1, 10))          # stabilization period
    assert seen[10] == 40                                      # peak 50 (recommended) − 10
    # the last 50 (minute 9) holds the floor at 40 until it is 20 minutes old
    # (minute 29); then the last 40 (minute 28) holds 30 until minute 48
    assert all(seen[k] == 40 for k in range(10, 29)), seen
    assert all(seen[k] == 30 for k in range(29, 48)), seen
    assert all(seen[k] == 20 for k in range(48, 61)), seen


def test_scale_in_control_never_limits_scale_out():
    pol = {"min_replicas": 1, "max_replicas": 100, "metrics": [queue(10)],
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 1}, "time_window_seconds": 1200}}
    state = {"recommendations": [], "sizes": [{"time": NOW - 60, "replicas": 5}]}
    r = decide(request(5, pol["metrics"], {"metrics": {"queue": {"values": [300]}}}, policy=pol, state=state))
    assert r["desired_replicas"] == 30


def test_scale_in_control_floor_never_above_max():
    """A lowered maximum wins over an older, higher peak in ``state.sizes``."""
    pol = {"min_replicas": 1, "max_replicas": 8, "metrics": [queue(10)],
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 1}, "time_window_seconds": 1200}}
    state = {"recommendations": [], "sizes": [{"time": NOW - 60, "replicas": 50}]}
    r = decide(request(50, pol["metrics"], {"metrics": {"queue": {"values": [10]}}}, policy=pol, state=state))
    assert r["desired_replicas"] == 8


def test_scale_in_controls_page_example_peak_70_allows_50():
    """DECIDE (Scale-in controls): "If, in the last 30 minutes, peak size was 70 VMs and the
    maximum allowed reduction is set to 20 VMs, the autoscaler can scale in to 50 VMs. If the
    current size is 65 VMs, the autoscaler can remove only 15 VMs." """
    state = {"recommendations": [],
             "sizes": [{"time": NOW - 1500, "replicas": 70}, {"time": NOW - 300, "replicas": 65}]}
    pol = {"max_replicas": 100,
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 20}, "time_window_seconds": 1800}}
    r = decide(request(65, [group()], {"metrics": {"queue": {"values": [300]}}}, policy=pol, state=state))
    assert r["recommended_replicas"] == 50 and r["reason"] == "ScaleInControlled"


def test_scale_in_controls_are_computed_while_off():
    """DECIDE (Change autoscaler mode): "When you turn autoscaler OFF, it still calculates the
    recommended instance group size based on load. Autoscaler calculations still consider
    scale-in controls. However, the autoscaler does not apply size calculations when autoscaler
    is OFF." """
    state = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 80}]}
    pol = {"mode": "OFF", "max_replicas": 100,
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 20}, "time_window_seconds": 1800}}
    r = decide(request(80, [group()], {"metrics": {"queue": {"values": [400]}}}, policy=pol, state=state))
    assert r["recommended_replicas"] == 60
    assert r["desired_replicas"] == 80
    assert r["state"]["sizes"][-1]["replicas"] == 60   # the background calculation is what later windows see


T0 = NOW


MIN = 60.0


def test_blog_scale_in_controls_through_the_protocol_at_several_times():
    """BLOG: "An autoscaler with scale-in controls limits how many VM instances can be
    removed in a given period of time (here 10 VMs in 20 minutes)"; "When load declines,
    the autoscaler maintains the size for the group at a level required to serve the peak
    load observed in the last 10 minutes (the stabilization period). This works the same
    with and without scale-in controls." REST maxScaledInReplicas: "Maximum allowed
    number (or %) of VMs that can be deducted from the peak recommendation during the
    window". 50 VMs, load falls to 20 VMs' worth at minute 1."""
    pol = {"max_replicas": 100,
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 10}, "time_window_seconds": 1200}}
    c = GceChain([queue(10)], policy=pol, current=50)
    c.step(T0, q(500))
    for k in range(1, 61):
        c.step(T0 + k * MIN, q(200))
    d = {k: c.log[k * MIN]["desired_replicas"] for k in range(61)}
    assert [d[k] for k in (0, 5, 9)] == [50, 50, 50]           # stabilization
    assert [d[k] for k in (10, 20, 28)] == [40, 40, 40]
    assert [d[k] for k in (29, 40, 47)] == [30, 30, 30]
    assert [d[k] for k in (48, 60)] == [20, 20]
    # never more than 10 removed within any 20-minute window
    for k in range(61):
        window = [d[j] for j in range(max(0, k - 19), k + 1)]
        assert max(window) - d[k] <= 10, (k, window)
    assert c.log[10 * MIN]["reason"] == "ScaleInControlled"


def test_rest_percent_scale_in_control_over_time():
    """REST calculated: "the calculated value of a 80% of a managed instance group with
    150 instances would be (80/100 * 150) = 120 VM instances". From a peak of 150, at
    most 120 may go within the window: 150 (stabilization) → 30; once the 150 has left
    the 20-minute window the next step is from the new peak 30 (80 % of 30 = 24 → 6)."""
    pol = {"max_replicas": 200,
           "scale_in_control": {"max_scaled_in_replicas": {"percent": 80}, "time_window_seconds": 1200}}
    c = GceChain([queue(10)], policy=pol, current=150)
    c.step(T0, q(1500))
    for k in range(1, 41):
        c.step(T0 + k * MIN, q(10))
    d = {k: c.log[k * MIN]["desired_replicas"] for k in range(41)}
    assert d[9] == 150 and d[10] == 30 and d[28] == 30
    assert d[29] == 6 and d[40] == 6
    assert all(c.log[k * MIN]["recommended_replicas"] >= 1 for k in range(41))
