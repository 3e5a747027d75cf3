"""A standby that becomes the leader continues the previous leader's state from the
shared store — its cooldowns, rate periods and windows — instead of its own decisions,
which it never carried out (kube-controller-manager's leader election hands the HPA
controller to a new process that reads the HPA status the old one wrote; here the
state store plays that part).

Two controllers share one state file and one fake world on disk; an elector the test
flips stands for the Lease. The second runs with ``--leader-elect``: the state file is
claimed by the first, so it stands by until the first is gone.
"""
from __future__ import annotations

import yaml

from scalebridge.controller.loop import build_controller
from scalebridge.testing.fake import DEFAULT_START
from scalebridge.testing.pytest_plugin import FAKE_TYPE

PERIOD = 15.0
# an Azure-style rule with a 10-minute cooldown: scale out by 1 while cpu is above 70 %
POLICY = {"semantics": "azure", "profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 20,
                                                                             "default": 2},
                                              "rules": [{"metric": "cpu", "statistic": "Average",
                                                         "time_grain_seconds": 60, "time_window_seconds": 300,
                                                         "time_aggregation": "Average", "operator": "GreaterThan",
                                                         "threshold": 70,
                                                         "action": {"direction": "Increase", "type": "ChangeCount",
                                                                    "value": 1, "cooldown_seconds": 600}}]}]}


class Flag:
    def __init__(self, leader: bool):
        self.leader = leader

    def start(self):
        pass

    def stop(self):
        pass

    def is_leader(self) -> bool:
        return self.leader


def test_a_new_leader_keeps_the_old_leaders_cooldown(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "sync_period_seconds": PERIOD,
        "providers": {"fake": {"type": FAKE_TYPE, "world": str(tmp_path / "world.json")}},
        "policies": {"p": POLICY},
        # the load keeps 2 members far above 70 %: the rule fires on every sync
        "targets": [{"name": "web", "provider": "fake", "policy": "p", "ref": {"name": "web", "size": 2, "load": 8}}]}))
    state = str(tmp_path / "state.db")
    a_flag, b_flag = Flag(True), Flag(False)
    a = build_controller(str(config), clock="real", state=state, elector=a_flag)
    b = build_controller(str(config), clock="real", state=state, elector=b_flag, leader_elect=True)
    try:
        t = DEFAULT_START
        first = a.sync(t).records[0]
        assert first["action"] == "applied" and first["desired_replicas"] == 3
        standby = b.sync(t + PERIOD).records[0]
        assert standby["action"] == "standby"
        held = a.sync(t + 2 * PERIOD).records[0]
        assert held["reason"] == "CooldownActive"
        # the leader dies (its claim of the state file goes with it); the standby takes the
        # Lease 5 minutes into the 10-minute cooldown
        a_flag.leader, b_flag.leader = False, True
        a.close()
        took_over = b.sync(t + 300).records[0]
        assert took_over["reason"] == "CooldownActive" and took_over["action"] == "unchanged", took_over
        after = b.sync(t + 600).records[0]             # the cooldown has run: the rule acts again
        assert after["action"] == "applied"
    finally:
        a.close()
        b.close()


def test_a_failing_state_store_stops_the_write_not_the_controller(tmp_path):
    """No write is made without its intent persisted; the controller keeps running and
    saves the targets' state with the next sync that can."""
    from scalebridge.controller.clock import VirtualClock
    from scalebridge.controller.loop import BACKOFF_CAP_PERIODS
    from scalebridge.controller.store import StoreError

    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "sync_period_seconds": PERIOD, "providers": {"fake": {"type": FAKE_TYPE}}, "policies": {"p": POLICY},
        "targets": [{"name": "web", "provider": "fake", "policy": "p", "ref": {"name": "web", "size": 2, "load": 8}}]}))
    c = build_controller(str(config), clock=VirtualClock(DEFAULT_START), state=str(tmp_path / "s.db"),
                         until=4 * PERIOD)
    real = c.store
    broken = [True]

    class Flaky:
        def __getattr__(self, name):
            return getattr(real, name)

        def save(self, rows, meta=None):
            if broken[0]:
                raise StoreError("disk I/O error")
            return real.save(rows, meta)

    c.store = c.ctx.store = Flaky()
    fake = c.runtime.providers["fake"]
    try:
        assert c.run(once=True) == 1
        assert fake.writes("web") == 0                  # the intent could not be persisted: no write
        assert c.run() == 0                             # the loop survives a failing store
        broken[0] = False
        c.clock.advance(BACKOFF_CAP_PERIODS * PERIOD)   # past the target's backoff from the store's failures
        assert c.run(once=True) == 0
        assert fake.writes("web") == 1
        assert real.load_all()["web"].state             # and the state reached the store
    finally:
        c.close()
