"""The pytest plugin's fixtures work in a plugin author's own test suite."""
from __future__ import annotations

import textwrap

pytest_plugins = ["pytester"]


def test_the_fixtures_work_in_another_suite(pytester):
    pytester.makeconftest('pytest_plugins = ["scalebridge.testing.pytest_plugin"]\n')
    pytester.makepyfile(textwrap.dedent('''
        import yaml
        from scalebridge.testing import FakeProvider, check_provider

        def test_fake(fake_provider, make_fake_provider):
            assert isinstance(fake_provider, FakeProvider)
            other = make_fake_provider(settle_observes=2)
            assert other is not fake_provider and other.settle_observes == 2
            check_provider(other, {"name": "web", "size": 2})

        def test_clock(manual_clock):
            t = manual_clock.now()
            assert manual_clock.sleep(30) is True
            assert manual_clock.now() == t + 30
            manual_clock.advance(15)
            assert manual_clock.now() == t + 45

        def test_state_path(state_path, tmp_path):
            assert state_path.parent == tmp_path and not state_path.exists()

        def test_run_config(run_config):
            path = run_config([{"name": "web", "ref": {"name": "web", "size": 3}}], sync_period_seconds=15)
            config = yaml.safe_load(path.read_text())
            assert config["sync_period_seconds"] == 15
            assert config["providers"] == {"fake": {"type": "scalebridge.testing.fake:FakeProvider"}}
            assert config["targets"] == [{"provider": "fake", "policy": "default", "name": "web",
                                          "ref": {"name": "web", "size": 3}}]
            assert config["policies"]["default"]["metrics"][0]["name"] == "cpu"
    '''))
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_a_world_file_is_written_by_the_fixture_made_provider(pytester):
    pytester.makeconftest('pytest_plugins = ["scalebridge.testing.pytest_plugin"]\n')
    pytester.makepyfile(textwrap.dedent('''
        def test_world(make_fake_provider, tmp_path):
            p = make_fake_provider(world=str(tmp_path / "w.json"))
            p.target({"name": "web"}).set_size(4)
            assert (tmp_path / "w.json").exists()
    '''))
    pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
