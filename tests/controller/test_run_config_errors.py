"""A bad run configuration: one line per problem naming file:line:column and the
key, saying what would be valid; exit 2; never a traceback (run-config contract:
"Every error names the file, line and key, and says what would be valid")."""
from __future__ import annotations

import re

import pytest

from scalebridge import registry
from scalebridge.controller.configfile import ConfigError, load_config
from scalebridge.controller.build import build

from .conftest import CPU_POLICY, FAKE


def _only_lines(err: str, path) -> list[str]:
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "no message"
    assert "Traceback" not in err
    for line in lines:
        assert re.match(rf"scalebridge (run|validate): {re.escape(str(path))}:\d+:\d+: ", line) or \
            line.startswith(str(path)), line
    return lines


def _line_of(path, needle: str) -> int:
    for no, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return no
    raise AssertionError(f"{needle!r} not in {path}")


def test_unknown_provider_lists_the_installed_ones(write_config, scalebridge):
    path = write_config([{"name": "web", "provider": "nimbus", "ref": {"name": "web"}}])
    code, _, err = scalebridge("run", path, "--once", "--state", path.with_suffix(".db"))
    assert code == 2
    [line] = _only_lines(err, path)
    assert f"{path}:{_line_of(path, 'provider: nimbus')}:" in line
    assert "targets[0].provider" in line and "'nimbus'" in line
    for name in registry.current().providers:
        assert name in line
    assert not path.with_suffix(".db").exists(), "a bad configuration creates no state file"


def test_a_provider_key_that_is_no_provider_name_needs_type(write_config, scalebridge):
    path = write_config([{"name": "web", "provider": "prod", "ref": {"name": "web"}}],
                        providers={"prod": {"region": "x"}})
    code, _, err = scalebridge("validate", path)
    assert code == 2
    [line] = _only_lines(err, path)
    assert "providers.prod" in line and "`type:`" in line


def test_a_provider_whose_sdk_is_missing_names_the_extra(write_config, scalebridge):
    path = write_config([{"name": "web", "provider": "x", "ref": {"name": "web"}}],
                        providers={"x": {"type": "tests.controller.stub_providers:needs_missing_sdk"}})
    code, _, err = scalebridge("run", path, "--once")
    assert code == 2
    [line] = _only_lines(err, path)
    assert "providers.x" in line
    assert "pip install 'scalebridge[nosuch]'" in line


def test_duplicate_target_names(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "a"}}, {"name": "web", "ref": {"name": "b"}}])
    code, _, err = scalebridge("run", path, "--once")
    assert code == 2
    [line] = _only_lines(err, path)
    assert "targets[1].name" in line and "duplicate target name 'web'" in line
    # the second occurrence's line, not the first's
    second = [no for no, l in enumerate(path.read_text().splitlines(), 1) if "name: web" in l][1]
    assert f"{path}:{second}:" in line


def test_a_policy_path_that_does_not_exist(write_config, scalebridge, tmp_path):
    path = write_config([{"name": "web", "policy": "policies/missing.yaml", "ref": {"name": "web"}}])
    code, _, err = scalebridge("run", path, "--once")
    assert code == 2
    [line] = _only_lines(err, path)
    assert "targets[0].policy" in line and "does not exist" in line
    assert str(tmp_path / "policies" / "missing.yaml") in line, "relative to the configuration file"


def test_a_named_policy_path_is_relative_to_the_configuration(write_config, scalebridge, tmp_path):
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "web.yaml").write_text("min_replicas: 1\nmax_replicas: 5\n")
    path = write_config([{"name": "web", "ref": {"name": "web"}}], policies={"web": "policies/web.yaml"})
    code, out, err = scalebridge("validate", path)
    assert (code, err) == (0, "")
    assert "ok" in out


def test_a_ref_missing_a_key_the_provider_needs(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"size": 3}}])
    code, _, err = scalebridge("run", path, "--once")
    assert code == 2
    [line] = _only_lines(err, path)
    assert "targets[0].ref.name" in line and "required" in line


def test_virtual_clock_on_a_provider_without_it_names_the_capability(write_config, scalebridge):
    """A plugin author read "needs the sim provider" where what is needed is a capability their
    own provider can declare: the line names Capability.VIRTUAL_CLOCK."""
    path = write_config([{"name": "web", "ref": {"name": "web"}}],
                        providers={"fake": {"type": FAKE, "capabilities": ["metrics"]}})
    code, _, err = scalebridge("run", path, "--clock", "virtual", "--until", "1h")
    assert code == 2
    [line] = _only_lines(err, path)
    assert "targets[0].provider" in line and "needs a provider that declares Capability.VIRTUAL_CLOCK" in line
    assert "'fake'" in line


def test_an_unknown_key_says_which_are_valid(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web"}, "polcy": "web"}])
    code, _, err = scalebridge("run", path, "--once")
    assert code == 2
    [line] = _only_lines(err, path)
    assert "targets[0].polcy" in line and "did you mean 'policy'" in line
    assert f"{path}:{_line_of(path, 'polcy')}:" in line


def test_an_inline_policy_error_names_its_line_in_the_configuration(write_config, scalebridge):
    bad = {**CPU_POLICY, "max_replicas": "many"}
    path = write_config([{"name": "web", "ref": {"name": "web"}}], policies={"web": bad})
    code, _, err = scalebridge("run", path, "--once")
    assert code == 2
    [line] = _only_lines(err, path)
    assert f"{path}:{_line_of(path, 'max_replicas: many')}:" in line
    assert "policies.web.max_replicas" in line


def test_every_problem_at_once(write_config):
    path = write_config([{"name": "a", "provider": "nimbus", "ref": {}}, {"name": "a", "ref": {"name": "x"}},
                         {"name": "b", "ref": {}}])
    with pytest.raises(ConfigError) as e:
        build(load_config(path))
    assert len(e.value.problems) == 3


def test_invalid_yaml_and_an_empty_file(write_config, scalebridge):
    path = write_config("targets: [\n")
    code, _, err = scalebridge("run", path, "--once")
    assert code == 2 and "invalid YAML" in err and "Traceback" not in err
    path = write_config("")
    code, _, err = scalebridge("run", path, "--once")
    assert code == 2 and "empty" in err


def test_until_needs_the_virtual_clock(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web"}}])
    code, _, err = scalebridge("run", path, "--until", "1h")
    assert code == 2 and "--until needs --clock virtual" in err


def test_validate_builds_without_calling_the_provider(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web"}}])
    code, out, err = scalebridge("validate", path)
    assert (code, err) == (0, "")
    assert "run configuration: 1 target" in out
    runtime = build(load_config(path))   # what validate builds
    fake = runtime.providers["fake"]
    assert [s.name for s in runtime.targets] == ["web"]
    assert fake.count() == 0


def test_schema_covers_the_run_configuration(scalebridge):
    import json
    code, out, _ = scalebridge("schema", "--run-config")
    assert code == 0
    schema = json.loads(out)
    assert {"sync_period_seconds", "state", "leader_election", "providers", "policies", "targets"} <= \
        set(schema["properties"])


def test_a_bad_metric_source_names_its_key(write_config, scalebridge):
    path = write_config([{"name": "web", "provider": "picky", "ref": {"name": "web"},
                          "metrics": {"cpu": {"source": {"metric_nmae": "CPU"}}}}],
                        providers={"picky": {"type": "tests.controller.stub_providers:PickyFake"}})
    code, _, err = scalebridge("validate", path)
    assert code == 2
    [line] = _only_lines(err, path)
    assert "targets[0].metrics.cpu.source.metric_nmae" in line
    assert f"{path}:{_line_of(path, 'metric_nmae')}:" in line


def test_a_source_for_a_metric_the_policy_does_not_read(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web"}, "metrics": {"queue": {"source": {"x": 1}}}}])
    code, _, err = scalebridge("validate", path)
    assert code == 2
    [line] = _only_lines(err, path)
    assert "targets[0].metrics.queue" in line and "its metrics are: cpu" in line


def test_a_providers_path_options_are_read_relative_to_the_configuration(tmp_path):
    """run-config: "Relative paths are relative to the configuration file" — a provider's
    file options too (Provider.path_options), so a config works from any directory."""
    from scalebridge.controller.configfile import load_config
    from scalebridge.controller.build import build
    from scalebridge_azure.fake_server import ArmServer
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    with ArmServer() as arm:
        (conf_dir / "ca.pem").write_text(open(arm.ca_file).read())
        (conf_dir / "run.yaml").write_text(
            "providers:\n  azure: {subscription_id: s, arm_endpoint: '%s', ca_bundle: ca.pem}\n"
            "policies: {p: {min_replicas: 1, max_replicas: 2}}\n"
            "targets:\n  - {name: t, provider: azure, policy: p, ref: {resource_group: g, scale_set: w}}\n" % arm.url)
        runtime = build(load_config(str(conf_dir / "run.yaml")))
        try:
            assert runtime.providers["azure"].session.ca_bundle == str(conf_dir / "ca.pem")
        finally:
            runtime.close()


RULES_POLICY = {**CPU_POLICY, "rules": [{"metric": "connections", "operator": "GreaterThan", "threshold": 100,
                                         "time_window_seconds": 300,
                                         "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]}


def test_a_metric_source_the_policy_never_reads_is_refused_naming_its_metrics(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web"}, "semantics": "kubernetes",
                          "metrics": {"conections": {"source": {"metric_name": "x"}}}}],
                        policies={"web": RULES_POLICY})
    code, _, err = scalebridge("validate", path)
    assert code == 2
    [line] = _only_lines(err, path)
    assert "metrics.conections" in line and "its metrics are: cpu, connections" in line


def test_a_source_for_a_rule_metric_is_accepted_under_a_semantics_without_rules(write_config, scalebridge):
    """One policy for every cloud: a Kubernetes target (the HPA reads no threshold
    rules) may still name the source of the policy's rule metric, which its Azure
    sibling reads."""
    path = write_config([{"name": "web", "ref": {"name": "web"}, "semantics": "kubernetes",
                          "metrics": {"connections": {"source": {"metric_name": "x"}}}}],
                        policies={"web": RULES_POLICY})
    code, out, err = scalebridge("validate", path)
    assert code == 0, err
