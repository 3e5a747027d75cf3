"""Translation through pluggy (issue #26, items 7 and 6): ``render --to``, ``import --from``
and ``apply`` reach every format through the ``scalebridge_register_translators``
hook — the four built-in ones are this distribution's entry points like any plugin's —,
``Capability.TRANSLATE`` means a translator that can apply is registered for the
provider, docs/plugins.md's worked example runs as shown, and a translator's exception
is one line naming its plugin, exit 1, never blamed on the input."""
from __future__ import annotations

import importlib.metadata
import json
import re
import types
from pathlib import Path

import pytest
import yaml

from scalebridge import registry
from scalebridge.cli import main
from scalebridge.hookspecs import hookimpl
from scalebridge.providers import Capability
from scalebridge.translate import Losses, Translator

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "plugins.md").read_text(encoding="utf-8")
POLICY = """\
name: web
min_replicas: 2
max_replicas: 10
metrics:
  - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 60}}
rules:
  - {metric: cpu, operator: GreaterThan, threshold: 85, action: {direction: Increase, type: ChangeCount, value: 1}}
"""


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _plugin(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


@pytest.fixture
def with_plugins():
    """Registers the given plugin modules beside the installed ones, for one test."""
    def register(*modules):
        reg = registry.reset(list(modules))
        assert not reg.failures, reg.failures
        return reg
    yield register
    registry.reset()


def test_the_built_in_translators_are_registered_by_their_provider_plugins():
    """Each built-in cloud is one plugin, registered through pyproject.toml's
    [project.entry-points.scalebridge] as a third-party one is (cf. datasette's default_* plugins): its
    translator comes from the same package as its provider, nothing special-cased."""
    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="scalebridge")
           if ep.dist is not None and ep.dist.name == "scalebridge"}
    reg = registry.current()
    for name in ("kubernetes", "gce", "azure", "aws"):
        entry = reg.translators[name]
        assert eps[entry.plugin] == f"scalebridge_{name}" == reg.providers[name].plugin
        assert type(entry.obj).__module__ == f"scalebridge_{name}.translate"
        assert entry.obj.provider == name and type(entry.obj).can("import_all") and type(entry.obj).can("apply")
    assert reg.translators["keda"].plugin == "scalebridge_kubernetes"   # KEDA runs on that provider's clusters


def test_every_provider_declaring_translate_has_a_translator_that_applies():
    reg = registry.current()
    declaring = {n for n, r in reg.providers.items() if Capability.TRANSLATE in getattr(r.obj, "capabilities", ())}
    assert declaring >= {"kubernetes", "gce", "azure", "aws"} and "sim" not in declaring
    for name in declaring:
        entry = registry.translator_for_provider(name)
        assert entry is not None and type(entry.obj).can("apply"), name


def _docs_example() -> str:
    section = PAGE.split("## A translator", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_docs_translator_renders_imports_and_applies(with_plugins, tmp_path, capsys):
    """docs/plugins.md, "A translator", registered through a pluggy plugin: `render --to pool`,
    `import --from pool` and its apply, as the page says."""
    with_plugins(_plugin("scalebridge_pool", _docs_example()))
    code, out, _ = _run(capsys, "plugins")
    assert re.search(r"^translators:$(\n  .*)*\n  pool +in-process +scalebridge_pool", out, re.M)   # registered in-process
    f = tmp_path / "web.yaml"
    f.write_text(POLICY)
    code, out, err = _run(capsys, "render", str(f), "--to", "pool", "--target", "{pool: web}")
    assert code == 0 and json.loads(out) == {"pool": "web", "min": 2, "max": 10, "target_cpu": 60}
    assert err == "scalebridge render: lost: rules[0]: a pool has no threshold rules; dropped\n"
    code, _, err = _run(capsys, "render", str(f), "--to", "pool", "--strict")
    assert code == 1 and "scalebridge render: note: pool: placeholder 'PLACEHOLDER-set-with-target': pass --target " \
                          "pool" in err
    code, _, err = _run(capsys, "render", str(f), "--to", "pool", "--target", "{pol: web}")
    assert (code, err) == (2, "scalebridge render: --target.pol: unknown key; did you mean 'pool'? valid keys for "
                              "--to pool: pool\n")
    native = tmp_path / "pool.json"
    native.write_text(json.dumps({"pool": "web", "min": 2, "max": 10, "target_cpu": 60}))
    code, out, _ = _run(capsys, "import", str(native), "--from", "pool")
    assert code == 0
    assert yaml.safe_load(out) == {"semantics": "scalebridge", "name": "web", "min_replicas": 2, "max_replicas": 10,
                                   "metrics": [{"type": "resource", "name": "cpu",
                                                "target": {"type": "Utilization", "average_utilization": 60}}]}

    class Client:
        def __init__(self):
            self.settings = {}

        def autoscaler(self, pool):
            return self.settings.get(pool)

        def set_autoscaler(self, pool, native):
            self.settings[pool] = native

    from scalebridge.engine import load_policy
    target = types.SimpleNamespace(pool="web", client=Client())
    said = []
    translator = registry.translator("pool").obj
    assert translator.apply("web", target, load_policy(yaml.safe_load(POLICY)), False, said.append, {}) is True
    assert translator.apply("web", target, load_policy(yaml.safe_load(POLICY)), False, said.append, {}) is False
    assert said[-1] == "web: unchanged" and target.client.settings["web"]["max"] == 10


def test_an_unknown_format_lists_the_registered_ones(tmp_path, capsys):
    f = tmp_path / "web.yaml"
    f.write_text(POLICY)
    with pytest.raises(SystemExit) as e:     # argparse's refusal of a flag value, as for every command
        main(["render", str(f), "--to", "kubernets"])
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == ""
    registered = sorted(registry.current().translators)     # the built-ins, and any installed plugin's
    assert {"aws", "azure", "gce", "keda", "kubernetes"} <= set(registered)
    assert err == ("scalebridge render: --to: invalid choice: 'kubernets' (did you mean 'kubernetes'? registered "
                   f"translators: {', '.join(registered)})\n")


BROKEN = '''
from scalebridge.hookspecs import hookimpl
from scalebridge.translate import Translator

class Broken(Translator):
    name = "broken"
    provider = "fake"

    def render(self, policy, target):
        return {"per_replica": policy.max_replicas / 0}, None

    def import_all(self, text):
        return [({}, None)][1]

    def apply(self, name, target, policy, dry_run, say, metrics):
        raise ZeroDivisionError("division by zero")

@hookimpl
def scalebridge_register_translators(register):
    register(Broken())
'''


def test_a_translators_exception_names_its_plugin_exit_1(with_plugins, tmp_path, capsys, run_config):
    """The newcomer's report: a plugin's ZeroDivisionError was blamed on the request ("a number in the
    request is out of range", exit 2). A translator's, in render, import or apply, names the plugin, the
    hook and the method."""
    with_plugins(_plugin("scalebridge_broken", BROKEN))
    f = tmp_path / "web.yaml"
    f.write_text(POLICY)
    code, out, err = _run(capsys, "render", str(f), "--to", "broken")
    assert (code, out) == (1, "")
    assert err == ("scalebridge render: plugin 'scalebridge_broken' (scalebridge_register_translators, translator "
                   "'broken') raised ZeroDivisionError in render: division by zero\n")
    code, out, err = _run(capsys, "import", str(f), "--from", "broken")
    assert (code, out) == (1, "")
    assert err == ("scalebridge import: plugin 'scalebridge_broken' (scalebridge_register_translators, translator "
                   "'broken') raised IndexError in import_all: list index out of range\n")
    config = run_config([{"name": "web", "provider": "fake", "ref": {"name": "web"}, "policy": "web"}],
                        providers={"fake": {"type": "scalebridge.testing.fake:FakeProvider",
                                            "capabilities": ["metrics", "translate"]}},
                        policies={"web": yaml.safe_load(POLICY)})
    code, out, err = _run(capsys, "apply", str(config), "--state", str(tmp_path / "none.db"))
    assert (code, out) == (1, "")
    assert err == ("scalebridge apply: web: plugin 'scalebridge_broken' (scalebridge_register_translators, "
                   "translator 'broken') raised ZeroDivisionError in apply: division by zero\n")


def test_apply_native_reads_capability_translate(tmp_path, capsys, run_config):
    """A provider that does not declare Capability.TRANSLATE has no native autoscaler to apply; one that
    declares it without a translator registered for it is a plugin's mistake, said as such."""
    config = run_config([{"name": "web", "provider": "fake", "ref": {"name": "web"}, "policy": "web"}],
                        providers={"fake": {"type": "scalebridge.testing.fake:FakeProvider",
                                            "capabilities": ["metrics"]}},
                        policies={"web": yaml.safe_load(POLICY)})
    code, _, err = _run(capsys, "apply", str(config), "--state", str(tmp_path / "none.db"))
    assert code == 1
    translating = sorted(n for n, r in registry.current().providers.items()     # the built-ins, and any plugin's
                         if Capability.TRANSLATE in getattr(r.obj, "capabilities", ()))
    assert {"aws", "azure", "gce", "kubernetes"} <= set(translating)
    assert err == ("scalebridge apply: web: apply is not available for fake targets: the fake provider does not "
                   f"declare Capability.TRANSLATE (providers that do: {', '.join(translating)})\n")
    config = run_config([{"name": "web", "provider": "fake", "ref": {"name": "web"}, "policy": "web"}],
                        providers={"fake": {"type": "scalebridge.testing.fake:FakeProvider",
                                            "capabilities": ["translate"]}},
                        policies={"web": yaml.safe_load(POLICY)})
    code, _, err = _run(capsys, "apply", str(config), "--state", str(tmp_path / "none.db"))
    assert code == 1 and err.startswith("scalebridge apply: web: the fake provider declares Capability.TRANSLATE, "
                                        "but no translator registered for it can apply")


def test_the_conformance_suite_checks_capability_translate():
    from scalebridge.testing import check_provider
    from scalebridge.testing.fake import FakeProvider
    provider = FakeProvider(capabilities=["metrics", "translate"])
    with pytest.raises(AssertionError, match=r"capabilities: TRANSLATE: the provider declares Capability.TRANSLATE "
                                             r"but no translator registered with provider = 'fake'"):
        check_provider(provider, {"name": "web"})


def test_a_registered_object_that_is_no_translator_fails_its_plugin():
    module = types.ModuleType("scalebridge_notatranslator")

    @hookimpl
    def scalebridge_register_translators(register):
        register(types.SimpleNamespace(name="toy"))   # a name, no render

    module.scalebridge_register_translators = scalebridge_register_translators
    try:
        reg = registry.reset([module])
        assert reg.failures["scalebridge_notatranslator"].startswith(
            "scalebridge_register_translators raised ScalebridgeError: plugin 'scalebridge_notatranslator' "
            "registered 'toy' as namespace(name='toy'), not a translator")
        assert "toy" not in reg.translators     # none of the broken plugin's, every other plugin's
        assert set(reg.translators) == set(registry.build().translators) >= {"kubernetes", "gce", "azure", "aws", "keda"}
    finally:
        registry.reset()


def test_a_translator_may_render_only(with_plugins, tmp_path, capsys):
    class RenderOnly(Translator):
        name = "renderonly"

        def render(self, policy, target):
            return {"max": policy.max_replicas}, Losses()

    module = types.ModuleType("scalebridge_renderonly")
    module.scalebridge_register_translators = hookimpl(lambda register: register(RenderOnly()))
    with_plugins(module)
    f = tmp_path / "x.json"
    f.write_text("{}")
    code, _, err = _run(capsys, "import", str(f), "--from", "renderonly")
    assert (code, err) == (2, "scalebridge import: --from: the renderonly translator renders only; it does not "
                              "import\n")
