"""The plugin manager, as a plugin author meets it (docs/plugins.md, hookspecs.py): entry
points, registration, third-party semantics and forecasters in ``decide``, ``simulate`` and
``scalebridge plugins``, check_semantics, and failures isolated — a plugin that fails to
import, raises in a hook, collides with a name or misspells a hook is listed and does not
take the others down.

Plugins are built in-process (modules handed to ``registry.build`` or faked entry points),
so nothing here needs a pip install."""
from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
import types
from pathlib import Path

import pytest

from scalebridge import cli, registry
from scalebridge.engine import BUILTIN_SEMANTICS, decide, decide_all, Decider, parse_request
from scalebridge.errors import ScalebridgeError
from scalebridge.hookspecs import hookimpl, PROJECT
from scalebridge.semantics import Context, Decision, MetricResult, Semantics
from scalebridge.state import TimeLog
from scalebridge.testing import check_semantics


NOW = 1767225600.0


def _request(current: int = 4, state: dict | None = None) -> dict:
    members = [{"name": f"m-{i}", "phase": "Running", "ready": True, "start_time": NOW - 7200,
                "ready_transition_time": NOW - 7100, "requests": {"cpu": 1}} for i in range(current)]
    req = {"now": NOW, "current_replicas": current,
           "policy": {"min_replicas": 1, "max_replicas": 10,
                      "metrics": [{"type": "resource", "name": "cpu",
                                   "target": {"type": "Utilization", "average_utilization": 60}}]},
           "observations": {"members": members,
                            "metrics": {"cpu": {"members": {m["name"]: 0.5 for m in members}}}}}
    if state is not None:
        req["state"] = state
    return req


class HalfCpu(Semantics):
    """Half the current replicas, within bounds; records its recommendation."""
    name = "halfcpu"
    summary = "half the current replicas (a test plugin)"

    def decide(self, ctx: Context) -> Decision:
        p = ctx.policy
        lo = p.min_replicas if p.min_replicas is not None else 1
        hi = p.max_replicas if p.max_replicas is not None else max(lo, ctx.current)
        desired = min(max(ctx.current // 2, lo), hi)
        if ctx.state.recommendations is None:     # needed in practice; plugins.md does not say so
            ctx.state.recommendations = TimeLog()
        ctx.state.recommendations.append(ctx.now, desired)
        ctx.note("halfcpu", ctx.current, desired, "current // 2, bounded")
        return Decision(desired, desired, "DesiredWithinRange", [])


class AsDocumented(Semantics):
    """Records its recommendation exactly as plugins.md says history works."""
    name = "asdoc"

    def decide(self, ctx: Context) -> Decision:
        from scalebridge.state import TimeLog
        if ctx.state.recommendations is None:   # plugins.md: None is "never seen"
            ctx.state.recommendations = TimeLog()
        ctx.state.recommendations.append(ctx.now, ctx.current)
        return Decision(ctx.current, ctx.current, "DesiredWithinRange", [])


class Crashing(Semantics):
    """A semantics with a bug."""
    name = "crashing"

    def decide(self, ctx: Context) -> Decision:
        return None.append(ctx.now)   # AttributeError


def _module(name: str, **hooks) -> types.ModuleType:
    m = types.ModuleType(name)
    for hook, fn in hooks.items():
        fn.__name__ = hook
        setattr(m, hook, hookimpl(fn))
    return m


def _halfcpu_module() -> types.ModuleType:
    from scalebridge.forecasting import NaiveForecaster
    return _module("sbtest_halfcpu",
                   scalebridge_register_semantics=lambda register: register(HalfCpu()),
                   scalebridge_register_forecasters=lambda register: register(
                       "halfnaive", lambda **kw: NaiveForecaster(name="halfnaive", **kw)))


@pytest.fixture
def use_registry(monkeypatch):
    """Install a registry built with extra plugin modules as the process-wide one."""
    def install(*modules):
        reg = registry.build(list(modules))
        monkeypatch.setattr(registry, "_REGISTRY", reg)
        return reg
    return install


@pytest.fixture
def fake_entry_points(monkeypatch):
    """Add entry points of the ``scalebridge`` group pointing at in-memory modules
    (module None: an entry point whose import fails)."""
    real = importlib.metadata.entry_points

    def add(**points):
        eps = []
        for ep_name, module in points.items():
            modname = f"sbtest_ep_{ep_name}"
            if module is None:
                monkeypatch.setitem(sys.modules, modname, None)   # import raises ImportError
            else:
                monkeypatch.setitem(sys.modules, modname, module)
            eps.append(importlib.metadata.EntryPoint(ep_name, modname, PROJECT))

        def entry_points(**kw):
            found = list(real(**kw))
            return found + eps if kw.get("group") == PROJECT else found
        monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    return add


def _run_cli(capsys, *argv) -> tuple[int, str, str]:
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_third_party_semantics_and_forecaster_are_listed_by_scalebridge_plugins(use_registry, capsys):
    use_registry(_halfcpu_module())
    rc, out, _ = _run_cli(capsys, "plugins")
    assert rc == 0
    semantics = out.split("semantics:")[1]
    assert "halfcpu" in semantics and "sbtest_halfcpu" in semantics
    assert "forecasters:" in out and "halfnaive" in out.split("forecasters:")[1]
    for name in BUILTIN_SEMANTICS:
        assert name in semantics


def test_decide_with_a_third_party_semantics(use_registry, capsys, tmp_path):
    use_registry(_halfcpu_module())
    f = tmp_path / "req.json"
    f.write_text(json.dumps(_request(6)))
    rc, out, err = _run_cli(capsys, "decide", "--semantics", "halfcpu", str(f))
    assert rc == 0, err
    r = json.loads(out)
    assert r["semantics"] == "halfcpu" and r["desired_replicas"] == 3
    assert r["state"]["recommendations"] == [{"time": NOW, "replicas": 3}]


def test_check_semantics_passes_a_well_behaved_plugin(use_registry):
    use_registry(_halfcpu_module())
    assert check_semantics("halfcpu") > 100


def test_check_semantics_names_the_request_when_bounds_are_broken(use_registry):
    class Unbounded(Semantics):
        name = "unbounded"

        def decide(self, ctx):
            return Decision(ctx.current * 100, ctx.current * 100, "DesiredWithinRange", [])
    use_registry(_module("sbtest_unbounded", scalebridge_register_semantics=lambda register: register(Unbounded())))
    with pytest.raises(AssertionError, match=r"unbounded: current \d+, mode ON.*outside \[1, 12\]"):
        check_semantics("unbounded")


def test_decide_all_is_built_ins_only_but_simulate_all_includes_plugins(use_registry):
    """Documented for decide (docs/protocol.md: "one response per built-in
    semantics"), but ``all`` means something else to simulate/compare."""
    from scalebridge.simulator.cli import _semantics
    use_registry(_halfcpu_module())
    assert [r["semantics"] for r in decide_all(_request())] == list(BUILTIN_SEMANTICS)
    assert "halfcpu" in _semantics("all", True, None)


def test_a_plugin_that_fails_to_import_is_listed_and_does_not_take_the_others_down(fake_entry_points, capsys,
                                                                                      monkeypatch):
    fake_entry_points(brokenimport=None)
    reg = registry.build()
    assert "brokenimport" in reg.failures and "Error" in reg.failures["brokenimport"]
    assert set(BUILTIN_SEMANTICS) <= set(reg.semantics)
    monkeypatch.setattr(registry, "_REGISTRY", reg)
    rc, out, _ = _run_cli(capsys, "plugins")
    assert rc == 0 and "failed to load:" in out and "brokenimport" in out.split("failed to load:")[1]
    with pytest.raises(ScalebridgeError, match="brokenimport.*failed to load"):
        registry.semantics("brokenimport")


def test_a_name_collision_names_both_plugins():
    collide = _module("sbtest_collide",
                      scalebridge_register_semantics=lambda register: register(type(
                          "Gce", (HalfCpu,), {"name": "gce"})()))
    reg = registry.build([collide])
    assert reg.semantics["gce"].plugin == "scalebridge_semantics"    # the built-in keeps its name
    assert "'gce' is already registered by 'scalebridge_semantics'" in reg.failures["sbtest_collide"]


def _raising_hook(register):
    raise RuntimeError("boom")


def test_a_plugin_whose_hook_raises_is_listed_and_does_not_take_the_others_down(fake_entry_points):
    fake_entry_points(raiser=_module("sbtest_raiser", scalebridge_register_semantics=_raising_hook))
    reg = registry.build()
    assert set(BUILTIN_SEMANTICS) <= set(reg.semantics)
    assert "raiser" in reg.failures and "boom" in reg.failures["raiser"]


def test_a_plugin_colliding_with_a_built_in_does_not_take_the_built_ins_down(fake_entry_points):
    gce_impostor = type("Impostor", (HalfCpu,), {"name": "gce"})
    fake_entry_points(impostor=_module("sbtest_impostor",
                                       scalebridge_register_semantics=lambda register: register(gce_impostor())))
    reg = registry.build()
    assert set(BUILTIN_SEMANTICS) <= set(reg.semantics)
    assert reg.semantics["gce"].plugin == "scalebridge_semantics"
    assert "impostor" in reg.failures and "gce" in reg.failures["impostor"]


def test_a_plugin_with_a_bad_hook_signature_is_listed_as_failed(fake_entry_points):
    def scalebridge_register_semantics(reg):   # the hookspec's argument is `register`
        pass
    fake_entry_points(badsig=_module("sbtest_badsig", scalebridge_register_semantics=scalebridge_register_semantics))
    reg = registry.build()
    assert set(BUILTIN_SEMANTICS) <= set(reg.semantics)
    assert "badsig" in reg.failures


def test_a_misspelled_hook_is_reported():
    typo = _module("sbtest_typo", scalebridge_register_semantic=lambda register: register(HalfCpu()))
    try:
        reg = registry.build([typo], load_entry_points=False)
    except Exception as e:   # an error naming the plugin and the hook is fine too
        assert "sbtest_typo" in str(e) and "scalebridge_register_semantic" in str(e)
    else:
        assert "sbtest_typo" in reg.failures


def test_a_registered_forecaster_is_usable_by_name(use_registry):
    from scalebridge.forecasting import make_forecaster
    reg = use_registry(_halfcpu_module())
    assert "halfnaive" in reg.forecasters                      # listed by `scalebridge plugins` ...
    assert make_forecaster("halfnaive").name == "halfnaive"    # ... but unknown to the model lookup


def test_recording_a_recommendation_as_documented_works_without_state(use_registry):
    use_registry(_module("sbtest_asdoc", scalebridge_register_semantics=lambda register: register(AsDocumented())))
    assert decide(_request(4), "asdoc")["desired_replicas"] == 4


def test_a_crashing_plugin_semantics_is_named_in_the_cli_error(use_registry, capsys, tmp_path):
    use_registry(_module("sbtest_crash", scalebridge_register_semantics=lambda register: register(Crashing())))
    f = tmp_path / "req.json"
    f.write_text(json.dumps(_request(4)))
    rc, _, err = _run_cli(capsys, "decide", "-s", "crashing", str(f))
    assert rc == 1                                             # a bug, not bad input
    assert "'crashing'" in err and "sbtest_crash" in err and "AttributeError" in err
    assert "please report it" not in err and "Traceback" not in err


class Dividing(Semantics):
    """A semantics whose bug is arithmetic."""
    name = "dividing"

    def decide(self, ctx: Context) -> Decision:
        return Decision(ctx.current // 0, ctx.current, "DesiredWithinRange", [])


def test_a_plugins_zero_division_is_its_bug_not_the_requests(use_registry, capsys, tmp_path):
    """The issue: it printed `line 1: a number in the request is out of range (division by
    zero)`, exit 2, blaming the request and naming no plugin."""
    use_registry(_module("sbtest_dividing", scalebridge_register_semantics=lambda register: register(Dividing())))
    f = tmp_path / "req.json"
    f.write_text(json.dumps(_request(4)))
    rc, _, err = _run_cli(capsys, "decide", "-s", "dividing", str(f))
    assert rc == 1 and len(err.strip().splitlines()) == 1
    assert "'dividing'" in err and "sbtest_dividing" in err and "scalebridge_register_semantics" in err
    assert "ZeroDivisionError" in err and "out of range" not in err and "request" not in err.split("failed")[1]


def test_a_providers_bug_is_named_in_the_audit(write_config_text, tmp_path, capsys):
    """A provider raising something other than a ProviderError fails its target with a
    line naming the provider, its plugin and hook, and the exception."""
    from scalebridge.cli import main
    path = tmp_path / "run.yaml"
    path.write_text(write_config_text)
    rc = main(["run", str(path), "--once", "--state", str(tmp_path / "s.db"), "--audit", "-"])
    out, err = capsys.readouterr()
    rec = json.loads(out.splitlines()[0])
    assert rc == 1 and rec["action"] == "failed"
    assert "provider 'buggy'" in rec["error"] and "ZeroDivisionError" in rec["error"]
    assert "sbtest_buggy" in rec["error"] and "scalebridge_register_providers" in rec["error"]
    assert "cannot decide" not in rec["error"]


@pytest.fixture
def write_config_text(use_registry):
    from scalebridge.hookspecs import hookimpl as impl
    from scalebridge.testing.fake import FakeProvider

    class Buggy(FakeProvider):
        name = "buggy"

        def target(self, ref):
            t = super().target(ref)
            t.observe = lambda now: 1 // 0
            return t

    use_registry(_module("sbtest_buggy", scalebridge_register_providers=lambda register: register("buggy", Buggy)))
    return ("providers: {buggy: {}}\npolicies: {p: {min_replicas: 1, max_replicas: 3}}\n"
            "targets: [{name: web, provider: buggy, policy: p, ref: {name: web}}]\n")


def test_check_semantics_names_the_request_when_the_semantics_raises(use_registry):
    use_registry(_module("sbtest_crash", scalebridge_register_semantics=lambda register: register(Crashing())))
    with pytest.raises(AssertionError, match=r"crashing: current \d+"):
        check_semantics("crashing")


def test_registering_something_that_is_not_a_semantics_instance_is_refused_at_start_up():
    cls = _module("sbtest_cls", scalebridge_register_semantics=lambda register: register(HalfCpu))
    reg = registry.build([cls], load_entry_points=False)
    assert "not an instance of scalebridge.semantics.base.Semantics" in reg.failures["sbtest_cls"]
    assert "halfcpu" not in reg.semantics


def test_metric_results_in_a_decision_give_a_json_response(use_registry):
    class WithResults(HalfCpu):
        name = "withresults"

        def decide(self, ctx):
            d = super().decide(ctx)
            d.metrics = [MetricResult("cpu", d.desired)]
            return d
    use_registry(_module("sbtest_wr", scalebridge_register_semantics=lambda register: register(WithResults())))
    json.dumps(decide(_request(4), "withresults"))


def test_unknown_semantics_mentions_plugins_that_failed_to_load(fake_entry_points):
    fake_entry_points(myplugin=None)     # would have registered semantics "mysemantics"
    reg = registry.build()
    try:
        registry._REGISTRY, saved = reg, registry._REGISTRY
        with pytest.raises(ScalebridgeError, match="myplugin"):
            registry.semantics("mysemantics")
    finally:
        registry._REGISTRY = saved


def test_design_promises_for_provider_authors_exist():
    """docs/plugins.md: scalebridge.providers.Provider, and in scalebridge.testing a fake provider,
    a provider conformance suite and a pytest plugin (a pytest11 entry point)."""
    assert importlib.util.find_spec("scalebridge.providers") is not None
    import scalebridge.testing as testing
    assert {"check_semantics"} < set(dir(testing)) and any("provider" in n.lower() for n in dir(testing))
    assert any(ep.value.startswith("scalebridge") for ep in importlib.metadata.entry_points(group="pytest11"))


def test_request_is_not_modified_by_a_plugin_decision(use_registry):
    use_registry(_halfcpu_module())
    req = _request(8, state={"recommendations": [{"time": NOW - 60, "replicas": 8}]})
    before = copy.deepcopy(req)
    decide(req, "halfcpu")
    assert req == before


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin"


def test_the_built_in_semantics_are_registered_through_an_entry_point_in_their_order():
    """One plugin of this distribution registers the five, as a third-party plugin registers its
    own; the order it registers them in is ``--semantics all``'s."""
    reg = registry.build()
    assert reg.semantics["kubernetes"].plugin == "scalebridge_semantics"   # the entry point's name
    assert any(name == "scalebridge_semantics" and "scalebridge.semantics.builtin" in where
               for name, where in reg.plugins)
    assert reg.builtin_semantics == ("kubernetes", "gce", "azure", "aws", "scalebridge")


@pytest.fixture
def example_plugin(monkeypatch):
    """The registry with examples/plugin in it: through its entry point when it is installed
    (`make test` installs it), else registered in-process from its source."""
    reg = registry.reset()
    if "proportional" not in reg.semantics:
        monkeypatch.syspath_prepend(str(EXAMPLE))
        import scalebridge_droplets
        reg = registry.reset([scalebridge_droplets])
    yield reg
    registry.reset()


def test_third_party_semantics_decides(example_plugin):
    entry = example_plugin.semantics["proportional"]
    assert example_plugin.origins[entry.plugin][2] == "scalebridge_droplets"     # the module that registered it
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
    assert '[project.entry-points.scalebridge]' in text and 'droplets = "scalebridge_droplets"' in text


def test_a_duplicate_name_fails_that_plugin_and_keeps_the_built_in():
    mod = types.ModuleType("dup_plugin")

    @hookimpl
    def scalebridge_register_semantics(register):
        from scalebridge.semantics.kubernetes import KubernetesSemantics
        register(KubernetesSemantics())

    mod.scalebridge_register_semantics = scalebridge_register_semantics
    reg = registry.build([mod])
    assert reg.semantics["kubernetes"].plugin == "scalebridge_semantics"
    assert "'kubernetes' is already registered by 'scalebridge_semantics'" in reg.failures["dup_plugin"]


def test_unknown_semantics_lists_what_is_available():
    with pytest.raises(ScalebridgeError, match="available are .*kubernetes"):
        registry.semantics("nope")


def test_plugins_command(cli):
    proc = cli("plugins")
    assert proc.returncode == 0
    assert "kubernetes" in proc.stdout and "scalebridge.semantics.kubernetes" in proc.stdout


def test_plugins_names_the_distribution_and_aligns_its_columns_on_long_names(capsys):
    """A newcomer saw `from proportional` (the entry point's name) where docs/plugins.md said
    `from scalebridge_proportional` (the example's distribution then), and columns pushed out of line by names longer than 14
    characters: each entry names the distribution that installed it as its wheel spells it, then
    the module, every column aligned whatever the names' lengths."""
    assert registry.distribution_name("scalebridge-droplets") == "scalebridge_droplets"
    assert registry.distribution_name("Scalebridge.Very--Long_Name") == "scalebridge_very_long_name"
    rc, out, _ = _run_cli(capsys, "plugins")
    assert rc == 0
    sections = re.split(r"^(\w[\w ]*):$", out, flags=re.M)[1:]
    tables = dict(zip(sections[::2], sections[1::2]))
    assert {"plugins", "semantics", "providers", "translators"} <= set(tables)
    assert re.search(r"^  scalebridge_kubernetes +scalebridge_kubernetes +scalebridge \S+$", tables["plugins"], re.M)
    assert re.search(r"^  kubernetes +from scalebridge +scalebridge_kubernetes$", tables["providers"], re.M)
    assert re.search(r"^  kubernetes +from scalebridge +scalebridge\.semantics\.kubernetes +Kubernetes ",
                     tables["semantics"], re.M)
    for name, table in tables.items():
        rows = [line for line in table.splitlines() if line.strip()]
        # each column starts at the same offset on every row: the second, and the third where there is one
        for column in (1, 2):
            starts = {m[column].start() for line in rows
                      if len(m := list(re.finditer(r"(?<=  )\S+|^  \S+", line))) > column}
            assert len(starts) <= 1, (name, column, rows)
