"""Pause and resume without touching the configuration (KEDA's pause,
https://keda.sh/docs/latest/concepts/scaling-deployments/#pause-autoscaling):
``scalebridge pause CONFIG TARGET… [--replicas N]`` and ``scalebridge resume``,
recorded in the state store and honoured by a running controller at its next sync —
no decision and no write while paused (audit action ``paused``), with ``--replicas``
that size set once and held; ``paused: true`` in the configuration the same, under
every built-in semantics."""
from __future__ import annotations

import json

import pytest

from scalebridge.controller.loop import build_controller
from scalebridge.controller.metrics import Metrics, value
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE

PERIOD = 15.0
SEMANTICS = ["kubernetes", "gce", "azure", "aws", "scalebridge"]
# a policy every semantics reads: a cpu target (HPA, GCE, AWS target tracking, neutral) and
# an Azure profile with a rule on cpu
POLICY = {"min_replicas": 1, "max_replicas": 20,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization",
                                                                      "average_utilization": 60}}],
          "profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 20, "default": 2},
                        "rules": [{"metric": "cpu", "statistic": "Average", "time_grain_seconds": 60,
                                   "time_window_seconds": 300, "time_aggregation": "Average",
                                   "operator": "GreaterThan", "threshold": 70,
                                   "action": {"direction": "Increase", "type": "ChangeCount", "value": 2,
                                              "cooldown_seconds": 60}}]}]}


def _config(write_config, semantics, **target):
    return write_config([{"name": "web", "semantics": semantics,
                          "ref": {"name": "web", "size": 2, "load": 6.0}, **target}],
                        providers={"fake": {"type": FAKE}}, policies={"web": POLICY}, sync_period_seconds=PERIOD)


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_a_running_controller_honours_pause_and_resume(write_config, tmp_path, scalebridge, semantics):
    path = _config(write_config, semantics)
    state = tmp_path / "s.db"
    metrics = Metrics()
    c = build_controller(str(path), state=str(state), metrics=metrics)
    fake = c.runtime.providers["fake"]
    try:
        t = DEFAULT_START
        code, out, err = scalebridge("pause", path, "web", "--state", state)
        assert code == 0 and "paused" in out, err
        for k in range(20):   # 5 minutes far above every target: no decision, no write
            rec = c.sync(t + k * PERIOD).records[0]
            assert rec["action"] == "paused" and "scalebridge pause" in rec["note"]
            assert rec["recommended_replicas"] is None
        assert fake.writes("web") == 0
        assert value(metrics, "scalebridge_paused", {"target": "web"}) == 1
        code, out, _ = scalebridge("state", "show", "web", "--state", state)
        assert code == 0 and json.loads(out)["paused"]["replicas"] is None
        # paused at 5 replicas: set once, then held
        assert scalebridge("pause", path, "web", "--replicas", "5", "--state", state)[0] == 0
        records = [c.sync(t + (20 + k) * PERIOD).records[0] for k in range(6)]
        assert [r["action"] for r in records] == ["applied"] + ["paused"] * 5
        assert records[0]["desired_replicas"] == 5 and records[0]["reason"] == "Paused"
        assert fake.writes("web") == 1 and fake.size("web") == 5
        code, out, _ = scalebridge("resume", path, "web", "--state", state)
        assert code == 0 and "resumed" in out
        rec = c.sync(t + 26 * PERIOD).records[0]
        assert rec["action"] in ("applied", "unchanged") and rec["recommended_replicas"] is not None
        assert value(metrics, "scalebridge_paused", {"target": "web"}) == 0
    finally:
        c.close()


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_paused_true_in_the_configuration(write_config, tmp_path, scalebridge, semantics):
    path = _config(write_config, semantics, paused=True)
    code, out, err = scalebridge("run", path, "--once", "--state", tmp_path / "s.db", "--audit", "-")
    assert code == 0, err
    rec = json.loads(out.splitlines()[0])
    assert rec["action"] == "paused" and "configuration" in rec["note"]
    code, out, _ = scalebridge("observe", path)
    assert "PAUSED by paused: true in the configuration" in out
    code, _, err = scalebridge("resume", path, "web", "--state", tmp_path / "s.db")
    assert "paused: true" in err


def test_a_pause_survives_a_restart_and_observe_shows_it(write_config, tmp_path, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 2, "load": 6.0}}],
                        providers={"fake": {"type": FAKE, "world": str(tmp_path / "world.json")}},
                        policies={"web": POLICY}, state=str(tmp_path / "s.db"))
    assert scalebridge("pause", path, "web", "--replicas", "3")[0] == 0
    actions = []
    for _ in range(3):   # controllers one after the other: the first sets 3, the others hold it
        code, out, _ = scalebridge("run", path, "--once", "--audit", "-")
        assert code == 0
        actions.append(json.loads(out.splitlines()[0])["action"])
    assert actions == ["applied", "paused", "paused"]
    code, out, _ = scalebridge("observe", path, "--output", "json")
    assert json.loads(out)[0]["paused"] == {"by": "scalebridge pause", "since": pytest.approx(json.loads(out)[0]
                                                                                             ["paused"]["since"]),
                                            "replicas": 3}


def test_pause_names_an_unknown_target(write_config, tmp_path, scalebridge):
    path = _config(write_config, "kubernetes")
    code, _, err = scalebridge("pause", path, "wbe", "--state", tmp_path / "s.db")
    assert code == 2 and "did you mean 'web'" in err
