"""The neutral ``scalebridge`` semantics' bounds and state: the minimum defaults to one and
the maximum is required, a proposal stays bounded, the first decision records the
current count, old state is dropped; ``decide --semantics all`` and ``explain``.

Sources: docs/semantics.md (the neutral pipeline and its defaults), docs/policy.md, and the
providers' pages each stage reproduces."""

import json

import pytest

from scalebridge import decide, RequestError
from scalebridge.testing.requests import neutral_request as neutral, NOW, pods


def test_semantics_all_and_explain(cli):
    req = json.dumps(neutral(4, "900m"))
    proc = cli("decide", "--semantics", "all", stdin=req)
    names = [json.loads(l)["semantics"] for l in proc.stdout.splitlines()]
    assert names == ["kubernetes", "gce", "azure", "aws", "scalebridge"]
    proc = cli("explain", "--semantics", "scalebridge", stdin=req)
    assert proc.returncode == 0
    for stage in ("signals", "stabilization", "rate limits and bounds"):
        assert stage in proc.stdout


NO_WINDOW = {"scale_down": {"stabilization_window_seconds": 0}}


def test_min_replicas_defaults_to_one_and_max_is_required():
    # docs/semantics.md: "min / max replicas | 1 / required"
    req = neutral(6, "10m", policy={"behavior": NO_WINDOW})
    del req["policy"]["min_replicas"]
    assert decide(req)["desired_replicas"] == 1
    del req["policy"]["max_replicas"]
    with pytest.raises(RequestError) as e:
        decide(req)
    assert "max_replicas" in str(e.value)


def test_first_sight_records_the_current_count():
    # docs/semantics.md: "first sight | the current count is a recommendation"; the protocol (state):
    # "An absent `recommendations` means the target was never seen"
    r = decide(neutral(6, "100m", members=pods(6), state={}))
    assert r["desired_replicas"] == 6 and r["reason"] == "ScaleDownStabilized"
    r = decide(neutral(6, "100m", members=pods(6), state={"recommendations": []}))
    assert r["desired_replicas"] == 2


def test_proposal_still_bounded():
    # the protocol: "When set, metric calculation is skipped; stabilization, rate limits, profiles and
    # bounds still apply."
    req = neutral(6, "100m", members=pods(6), policy={"max_replicas": 10})
    req["observations"]["proposal"] = 20
    r = decide(req)
    assert r["desired_replicas"] == 10 and r["reason"] == "TooManyReplicas"
    assert r["state"]["last_scale"]["cause"] == "boundary"
    req = neutral(6, "900m", members=pods(6), policy={"behavior": NO_WINDOW})
    req["observations"]["proposal"] = 2        # the metric would say 11: skipped
    assert decide(req)["desired_replicas"] == 2


def test_state_drops_entries_older_than_every_window():
    # the protocol: "Entries older than every window that needs them are dropped."
    st = {"recommendations": [{"time": NOW - 700, "replicas": 9}, {"time": NOW - 500, "replicas": 5}]}
    r = decide(neutral(4, "500m", state=st))
    assert [e["time"] for e in r["state"]["recommendations"]] == [NOW - 500, NOW]
