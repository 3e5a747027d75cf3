"""``scalebridge state show|reset`` and ``scalebridge observe`` (never writes)."""
from __future__ import annotations

import json

from scalebridge.testing.fake import FakeProvider

from .conftest import FAKE


def test_state_show_and_reset(write_config, scalebridge, tmp_path):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 4.2}},
                         {"name": "api", "ref": {"name": "api", "load": 0.6}}])
    db = tmp_path / "s.db"
    assert scalebridge("run", path, "--once", "--state", db)[0] == 0
    code, out, err = scalebridge("state", "show", "--state", db)
    assert code == 0, err
    shown = json.loads(out)
    assert set(shown) == {"web", "api"}
    assert shown["web"]["state"]["scale_up_events"][0]["change"] == 4
    assert shown["web"]["pending_write"] is None
    code, out, _ = scalebridge("state", "show", "web", "--state", db)
    assert json.loads(out)["state"] == shown["web"]["state"]
    code, out, err = scalebridge("state", "reset", "web", "--state", db)
    assert code == 0 and "web" in out
    assert set(json.loads(scalebridge("state", "show", "--state", db)[1])) == {"api"}
    code, _, err = scalebridge("state", "reset", "web", "--state", db)
    assert code == 2 and "no state for target 'web'" in err and "api" in err


def test_state_show_of_a_missing_file_creates_nothing(scalebridge, tmp_path):
    db = tmp_path / "nothing.db"
    code, _, err = scalebridge("state", "show", "--state", db)
    assert code == 2 and "no such state file" in err
    assert not db.exists()


def test_observe_prints_what_the_provider_saw_and_never_writes(write_config, scalebridge, tmp_path):
    world = tmp_path / "world.json"
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 4.2}},
                         {"name": "api", "ref": {"name": "api", "size": 2, "load": 0.6}}],
                        providers={"fake": {"type": FAKE, "world": str(world)}})
    code, out, err = scalebridge("observe", path, "web", "--output", "json")
    assert code == 0, err
    [seen] = json.loads(out)
    assert (seen["target"], seen["current_replicas"], len(seen["members"])) == ("web", 3, 3)
    # each ready member uses load / ready x request = 1.4 CPU
    samples = seen["metrics"]["cpu"]["members"]
    assert set(samples) == {"web-0", "web-1", "web-2"}
    assert all(abs(float(v) - 1.4) < 1e-9 for v in samples.values())
    code, out, _ = scalebridge("observe", path)
    assert code == 0 and "web" in out and "api" in out
    assert FakeProvider(world=str(world)).writes() == 0
    code, _, err = scalebridge("observe", path, "nope")
    assert code == 2 and "no target 'nope'" in err


def test_observe_exits_1_when_a_target_is_refused(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web", "managed_by": "HorizontalPodAutoscaler web"}}])
    code, out, _ = scalebridge("observe", path)
    assert code == 1 and "HorizontalPodAutoscaler web" in out


def test_state_show_and_reset_read_the_configurations_state(write_config, scalebridge, tmp_path, monkeypatch):
    """A newcomer's `state show` ignored the configuration's `state:`: with --config it reads the
    file `state:` names, relative to the configuration's directory, not scalebridge-state.db in
    the working directory."""
    (tmp_path / "conf").mkdir()
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 4.2}}], state="conf/web.db")
    assert scalebridge("run", path, "--once")[0] == 0
    assert (tmp_path / "conf" / "web.db").is_file()
    monkeypatch.chdir(tmp_path / "conf")                # elsewhere: only --config can find it
    code, out, err = scalebridge("state", "show", "--config", path)
    assert code == 0, err
    assert set(json.loads(out)) == {"web"}
    assert not (tmp_path / "conf" / "scalebridge-state.db").exists()
    code, out, err = scalebridge("state", "reset", "web", "--config", path)
    assert code == 0, err
    assert json.loads(scalebridge("state", "show", "--config", path)[1]) == {}
