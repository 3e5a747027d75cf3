"""The translator conformance suite (scalebridge.testing.check_translator): every built-in
translator run through it with the policies under examples/, and the suite catching a
translator that breaks the contract."""
from __future__ import annotations

import types
from pathlib import Path

import pytest
import yaml

from scalebridge import registry
from scalebridge.hookspecs import hookimpl
from scalebridge.testing import check_translator
from scalebridge.translate import Losses, NativeError, TargetKey, Translator
from scalebridge.translate.common import json_document

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example_policies() -> dict[str, dict]:
    """Every policy under examples/: the policy files, and each inline policy of a run
    configuration, by where it is."""
    found: dict[str, dict] = {}
    for f in sorted(EXAMPLES.rglob("*.yaml")):
        doc = yaml.safe_load(f.read_text())
        where = f.relative_to(EXAMPLES).as_posix()
        if isinstance(doc, dict) and "targets" in doc:
            found.update({f"{where}: policies.{k}": v for k, v in (doc.get("policies") or {}).items()
                          if isinstance(v, dict)})
        elif isinstance(doc, dict) and "max_replicas" in doc:
            found[where] = doc
    return found


@pytest.mark.parametrize("name", ["kubernetes", "gce", "azure", "aws", "keda"])
def test_the_built_in_translator_keeps_the_contract_on_the_example_policies(name):
    policies = example_policies()
    assert len(policies) >= 8, sorted(policies)
    report = check_translator(name, policies)
    assert any("decisions the same" in line for line in report.passed), report.skipped


POLICY = {"name": "web", "min_replicas": 2, "max_replicas": 10,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}]}


class _Toy(Translator):
    """A small, correct format: ``{"min", "max", "cpu"}``; the tests break it one way each."""

    name = "toy"
    summary = "a toy format"
    target_keys = {"group": TargetKey("the group", lambda v: None if isinstance(v, str) else "a string")}

    def render(self, policy, target):
        cpu = next(m.target.average_utilization for m in policy.metrics)
        return {"min": policy.min_replicas, "max": policy.max_replicas, "cpu": cpu}, Losses()

    def import_all(self, text):
        doc = json_document(text)   # a NativeError for what is not JSON, however deep
        if not isinstance(doc, dict) or not all(isinstance(doc.get(k), int) and not isinstance(doc.get(k), bool)
                                                for k in ("min", "max", "cpu")):
            raise NativeError("$", "expected {min, max, cpu} integers")
        return [({"semantics": "scalebridge", "min_replicas": doc["min"], "max_replicas": doc["max"],
                  "metrics": [{"type": "resource", "name": "cpu",
                               "target": {"type": "Utilization", "average_utilization": doc["cpu"]}}]}, Losses())]


@pytest.fixture
def toy():
    """Registers a translator class as ``toy`` for one test."""
    def register(cls):
        module = types.ModuleType("toy_plugin")

        @hookimpl
        def scalebridge_register_translators(register):
            register(cls())
        module.scalebridge_register_translators = scalebridge_register_translators
        reg = registry.reset([module])
        assert not reg.failures, reg.failures
    yield register
    registry.reset()


def test_a_translator_that_keeps_the_contract_passes(toy):
    toy(_Toy)
    report = check_translator("toy", [POLICY], target={"group": "web"})
    assert "policies[0] (web): 16 decisions the same under scalebridge" in report.passed


def test_an_import_that_crashes_on_bad_input_is_named(toy):
    class Crashing(_Toy):
        def import_all(self, text):
            import json
            doc = json.loads(text) if text.strip() else {}
            if isinstance(doc, dict) and doc.get("cpu") is None:
                raise NativeError("$.cpu", "required")
            return super().import_all(text)

    toy(Crashing)
    with pytest.raises(AssertionError) as e:
        check_translator("toy", [POLICY])
    assert "import of '{' raised JSONDecodeError" in str(e.value)


def test_a_round_trip_that_changes_the_policy_is_named_with_its_difference(toy):
    class Drifting(_Toy):
        def import_all(self, text):
            [(policy, losses)] = super().import_all(text)
            policy["metrics"][0]["target"]["average_utilization"] += 10    # 60 % read back as 70 %
            return [(policy, losses)]

    toy(Drifting)
    with pytest.raises(AssertionError) as e:
        check_translator("toy", {"web.yaml": POLICY})
    assert "web.yaml: render(import(render(policy))) == render(policy): the round trip changes the native " \
           "configuration: $.cpu: 60 -> 70" in str(e.value)


def test_a_render_that_loses_a_feature_without_saying_so_is_caught_by_its_decisions(toy):
    """A format with no maximum that renders one anyway (and so says nothing lost) imports a
    policy that decides otherwise."""
    class Unbounded(_Toy):
        def import_all(self, text):
            [(policy, losses)] = super().import_all(text)
            policy["max_replicas"] = 1000
            return [(policy, losses)]

    toy(Unbounded)
    with pytest.raises(AssertionError, match=r"the round trip decides as the policy: under scalebridge, .*: the "
                                             r"policy gives 10 \(TooManyReplicas\), its round trip"):
        check_translator("toy", [POLICY])


def test_a_target_check_that_accepts_anything_or_names_another_key_is_caught(toy):
    class Lenient(_Toy):
        target_keys = {"group": TargetKey("the group", lambda v: None)}

    toy(Lenient)
    with pytest.raises(AssertionError, match=r"--target\.group: a bad value: \{\"group\": \{\"no\": \"such value\"\}\} "
                                             "is accepted"):
        check_translator("toy", [POLICY])


def test_an_import_that_accepts_what_is_no_native_configuration_is_caught(toy):
    class Accepting(_Toy):
        def import_all(self, text):
            try:
                return super().import_all(text)
            except NativeError:
                return []

    toy(Accepting)
    with pytest.raises(AssertionError, match=r"import of 'null' returned \[\] \(it is no native configuration"):
        check_translator("toy", [POLICY])


def test_an_invalid_policy_is_the_callers_error_and_an_unknown_translator_is_named():
    with pytest.raises(ValueError, match=r"policies\[0\] \(web\) is not a valid policy"):
        check_translator("kubernetes", [{**POLICY, "min_replicas": 20}])
    with pytest.raises(AssertionError, match="no translator 'nope' to check"):
        check_translator("nope", [POLICY])
