"""The two optional provider hooks the controller uses: ``state: {provider: NAME,
…}`` asks that provider instance for its own state store, and ``--leader-elect``
asks the instance ``leader_election.provider`` names for an elector."""
from __future__ import annotations

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge.controller.store import SQLiteStore
from scalebridge.testing.fake import DEFAULT_START

STORING = "tests.controller.stub_providers:StoringFake"


def test_a_state_mapping_uses_the_providers_own_store(write_config, tmp_path):
    own = tmp_path / "own.db"
    path = write_config([{"name": "web", "provider": "store", "ref": {"name": "web", "size": 3, "load": 4.2}}],
                        providers={"store": {"type": STORING}}, state={"provider": "store", "path": str(own)})
    c = build_controller(str(path), clock=VirtualClock(DEFAULT_START))
    try:
        assert c.sync().records[0]["action"] == "applied"
    finally:
        c.close()
    assert SQLiteStore(own, readonly=True).load("web").state["scale_up_events"]


def test_a_bad_option_of_a_providers_store_names_its_line(write_config, scalebridge):
    path = write_config([{"name": "web", "provider": "store", "ref": {"name": "web"}}],
                        providers={"store": {"type": STORING}}, state={"provider": "store", "colour": "red"})
    code, _, err = scalebridge("run", path, "--once")
    assert code == 2
    assert f"{path}:" in err and "state.colour" in err and "Traceback" not in err


def test_a_state_mapping_must_name_a_provider_instance(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web"}}], state={"provider": "nowhere"})
    code, _, err = scalebridge("validate", path)
    assert code == 2 and "state.provider" in err


def test_leader_election_asks_the_named_provider(write_config, tmp_path):
    path = write_config([{"name": "web", "provider": "store", "ref": {"name": "web", "size": 3, "load": 4.2}}],
                        providers={"store": {"type": STORING}},
                        leader_election={"namespace": "ops", "name": "sb", "provider": "store", "identity": "me"})
    c = build_controller(str(path), clock=VirtualClock(DEFAULT_START), state=str(tmp_path / "s.db"),
                         leader_elect=True)
    try:
        assert c.runtime.providers["store"].elected == ("ops", "sb", "me")
        [rec] = c.sync().records
        assert rec["action"] == "standby" and c.runtime.providers["store"].writes() == 0
    finally:
        c.close()
