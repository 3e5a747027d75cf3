"""KEDA's fallback through ``scalebridge run`` (https://keda.sh/docs/latest/reference/scaledobject-spec/#fallback):
when the metrics of a target whose policy has ``fallback`` cannot be read, the sync is
decided with them reported as failed (``observations.metrics.NAME.error``) instead of
failing; once they have failed more than ``failure_threshold`` syncs in a row the
fallback applies (reason ``Fallback``, ``scalebridge_fallback_active`` 1), and it ends
when they are read again. The count lives in the persisted state: a restart keeps it.
Without ``fallback`` a sync whose metrics cannot be read fails and the size is held."""
from __future__ import annotations

import pytest

from scalebridge.controller.loop import build_controller
from scalebridge.controller.metrics import Metrics, value
from scalebridge.testing.fake import DEFAULT_START

from .conftest import CPU_POLICY, FAKE

PERIOD = 15.0
SEMANTICS = ["kubernetes", "gce", "aws", "scalebridge"]   # azure: below, on its own rules


def _config(write_config, tmp_path, semantics, fallback, failing, policy=None, world=False):
    script = [{"target": "web", "call": "read_metrics", "nth": n, "kind": "5xx"} for n in failing]
    pol = {**(policy or CPU_POLICY), **({"fallback": fallback} if fallback else {})}
    return write_config([{"name": "web", "semantics": semantics,
                          "ref": {"name": "web", "size": 4, "load": 2.4}}],   # 4 at 60 %: held at 4
                        providers={"fake": {"type": FAKE, "script": script,
                                            **({"world": str(tmp_path / "world.json")} if world else {})}},
                        policies={"web": pol}, sync_period_seconds=PERIOD)


# KEDA's behaviors, fallback.replicas 6 and 2 against a target at 4
@pytest.mark.parametrize("behavior,replicas,expected", [
    ("static", 6, 6), ("current_replicas", None, 4),
    ("current_replicas_if_higher", 6, 6), ("current_replicas_if_higher", 2, 4),
    ("current_replicas_if_lower", 2, 2), ("current_replicas_if_lower", 6, 4)])
@pytest.mark.parametrize("semantics", SEMANTICS)
def test_fallback_after_exactly_failure_threshold_failed_syncs_and_recovery(write_config, tmp_path, semantics,
                                                                             behavior, replicas, expected):
    fb = {"failure_threshold": 3, "behavior": behavior, **({"replicas": replicas} if replicas is not None else {})}
    path = _config(write_config, tmp_path, semantics, fb, failing=range(1, 6))
    metrics = Metrics()
    c = build_controller(str(path), state=str(tmp_path / "s.db"), metrics=metrics)
    try:
        recs = [c.sync(DEFAULT_START + k * PERIOD).records[0] for k in range(7)]
    finally:
        c.close()
    for r in recs[:3]:   # three failed syncs: the size is held, the failures counted
        assert r["action"] != "failed" and r["reason"] != "Fallback" and r["fallback"] is False
        assert "metrics not read" in r["note"]
    for r in recs[3:5]:  # a fourth and fifth: past the threshold, the fallback applies
        assert r["reason"] == "Fallback" and r["fallback"] is True
    if expected >= 4:
        assert recs[3]["desired_replicas"] == expected
    else:   # a fallback below the current size is a scale-in: each semantics' own damping applies to it,
        # as the HPA's downscale stabilization applies to the metric KEDA's fallback feeds it
        # (5 minutes for kubernetes, GCE's and the neutral 10; an AWS target tracking policy has none)
        assert recs[3]["desired_replicas"] == (expected if semantics == "aws" else 4)
    assert recs[5]["reason"] != "Fallback" and recs[5]["fallback"] is False, "metrics read again: it ends"
    assert value(metrics, "scalebridge_fallback_active", {"target": "web"}) == 0


def test_the_fallback_count_survives_a_restart(write_config, tmp_path):
    fb = {"failure_threshold": 3, "behavior": "static", "replicas": 7}
    path = _config(write_config, tmp_path, "kubernetes", fb, failing=range(1, 10), world=True)
    state = str(tmp_path / "s.db")
    metrics = Metrics()
    c = build_controller(str(path), state=state)
    try:
        for k in range(2):
            c.sync(DEFAULT_START + k * PERIOD)
    finally:
        c.close()
    # a new controller (the fake's script counts calls in its world file: the failures go on)
    c = build_controller(str(path), state=state, metrics=metrics)
    try:
        third = c.sync(DEFAULT_START + 2 * PERIOD).records[0]
        fourth = c.sync(DEFAULT_START + 3 * PERIOD).records[0]
    finally:
        c.close()
    assert third["reason"] != "Fallback"
    assert fourth["reason"] == "Fallback" and fourth["desired_replicas"] == 7
    assert value(metrics, "scalebridge_fallback_active", {"target": "web"}) == 1


def test_without_fallback_a_failed_read_fails_the_sync_and_holds_the_size(write_config, tmp_path):
    path = _config(write_config, tmp_path, "kubernetes", None, failing=range(1, 10))
    c = build_controller(str(path), state=str(tmp_path / "s.db"))
    try:
        rec = c.sync(DEFAULT_START).records[0]
    finally:
        c.close()
    assert rec["action"] == "failed" and rec["error_kind"] == "transient" and rec["desired_replicas"] is None


def test_fallback_under_azure_rules(write_config, tmp_path):
    azure = {"semantics": "azure", "profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 10,
                                                                                "default": 2},
                                                 "rules": [{"metric": "cpu", "statistic": "Average",
                                                            "time_grain_seconds": 60, "time_window_seconds": 300,
                                                            "time_aggregation": "Average",
                                                            "operator": "GreaterThan", "threshold": 70,
                                                            "action": {"direction": "Increase", "type": "ChangeCount",
                                                                       "value": 1, "cooldown_seconds": 300}}]}]}
    path = _config(write_config, tmp_path, "azure", {"failure_threshold": 2, "replicas": 5}, failing=range(1, 6),
                   policy=azure)
    c = build_controller(str(path), state=str(tmp_path / "s.db"))
    try:
        recs = [c.sync(DEFAULT_START + k * PERIOD).records[0] for k in range(4)]
    finally:
        c.close()
    assert [r["reason"] == "Fallback" for r in recs] == [False, False, True, True]
    assert recs[2]["desired_replicas"] == 5
