"""The plugin manager: entry points, registration, errors."""
import types
from pathlib import Path

import pytest

from scalebridge import plugins
from scalebridge.engine import Decider, decide, parse_request
from scalebridge.errors import ScalebridgeError
from scalebridge.hookspecs import hookimpl

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin"


def test_kubernetes_is_registered_through_its_entry_point():
    reg = plugins.build()
    assert "kubernetes" in reg.semantics
    assert reg.semantics["kubernetes"].plugin == "kubernetes"       # the entry point's name
    assert any(name == "kubernetes" and "scalebridge.semantics.kubernetes" in where for name, where in reg.plugins)


@pytest.fixture
def example_plugin(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    import scalebridge_proportional
    reg = plugins.reset([scalebridge_proportional])
    yield reg
    plugins.reset()


def test_third_party_semantics_decides(example_plugin):
    assert example_plugin.semantics["proportional"].plugin == "scalebridge_proportional"
    req = {"semantics": "proportional", "now": 0, "current_replicas": 2,
           "policy": {"min_replicas": 1, "max_replicas": 10,
                      "metrics": [{"type": "external", "name": "q", "target": {"type": "AverageValue", "average_value": 30}}]},
           "observations": {"metrics": {"q": {"values": [30, 70]}}}}
    r = decide(req)
    assert r["semantics"] == "proportional" and r["desired_replicas"] == 4   # ceil(100 / 30)
    observations = parse_request(req)[0].observations
    assert Decider(req["policy"], "proportional").step(0, 2, observations).desired == 4


def test_example_plugin_declares_the_entry_point():
    text = (EXAMPLE / "pyproject.toml").read_text()
    assert '[project.entry-points.scalebridge]' in text and 'proportional = "scalebridge_proportional"' in text


def test_a_duplicate_name_fails_that_plugin_and_keeps_the_built_in():
    mod = types.ModuleType("dup_plugin")

    @hookimpl
    def scalebridge_register_semantics(register):
        from scalebridge.semantics.kubernetes import KubernetesSemantics
        register(KubernetesSemantics())

    mod.scalebridge_register_semantics = scalebridge_register_semantics
    reg = plugins.build([mod])
    assert reg.semantics["kubernetes"].plugin == "kubernetes"
    assert "'kubernetes' is already registered by 'kubernetes'" in reg.failures["dup_plugin"]


def test_unknown_semantics_lists_what_is_available():
    with pytest.raises(ScalebridgeError, match="available are .*kubernetes"):
        plugins.semantics("nope")


def test_plugins_command(cli):
    proc = cli("plugins")
    assert proc.returncode == 0
    assert "kubernetes" in proc.stdout and "scalebridge.semantics.kubernetes" in proc.stdout
