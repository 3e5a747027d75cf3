"""The pytest plugin's fixtures work in a plugin author's own test suite (the
``pytest11`` entry point loads the plugin into every pytest run)."""
from __future__ import annotations

import textwrap

pytest_plugins = ["pytester"]

SUITE = textwrap.dedent('''
    import yaml
    from scalebridge.testing import FakeProvider, check_provider

    def test_fake(fake_provider, make_fake_provider):
        assert isinstance(fake_provider, FakeProvider)
        other = make_fake_provider(settle_observes=2)
        assert other is not fake_provider and other.settle_observes == 2
        check_provider(other, {"name": "web", "size": 2})

    def test_world(make_fake_provider, tmp_path):
        p = make_fake_provider(world=str(tmp_path / "w.json"))
        p.target({"name": "web"}).set_size(4)
        assert (tmp_path / "w.json").exists()

    def test_clock(manual_clock):
        t = manual_clock.now()
        assert manual_clock.sleep(30) is True
        assert manual_clock.now() == t + 30
        manual_clock.advance(15)
        assert manual_clock.now() == t + 45

    def test_state_path(state_path, tmp_path):
        assert state_path.parent == tmp_path and not state_path.exists()

    def test_state_store(state_store):
        assert state_store.load_all() == {}

    def test_run_config(run_config):
        path = run_config([{"name": "web", "ref": {"name": "web", "size": 3}}], sync_period_seconds=15)
        config = yaml.safe_load(path.read_text())
        assert config["sync_period_seconds"] == 15
        assert config["providers"] == {"fake": {"type": "scalebridge.testing.fake:FakeProvider"}}
        assert config["targets"] == [{"provider": "fake", "policy": "default", "name": "web",
                                      "ref": {"name": "web", "size": 3}}]
        assert config["policies"]["default"]["metrics"][0]["name"] == "cpu"

    def test_controller(controller_factory, run_config, manual_clock, state_path):
        config = run_config([{"name": "web", "ref": {"name": "web", "size": 2, "load": 3.0}}])
        c = controller_factory(config, clock=manual_clock)
        (rec,) = c.sync().records
        # 3 requests' worth of demand on 2 members is 150%; at a 60% target: ceil(2 * 150 / 60) = 5
        assert (rec["action"], rec["current_replicas"], rec["desired_replicas"]) == ("applied", 2, 5)
        assert c.runtime.providers["fake"].size("web") == 5
        assert state_path.exists()
''')


def test_the_fixtures_work_in_another_suite(pytester):
    # in a process of its own, as a plugin author's suite runs: an in-process run would
    # drop, on return, the modules it imported (the providers' plugins the registry holds)
    pytester.makepyfile(SUITE)
    pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider").assert_outcomes(passed=7)
