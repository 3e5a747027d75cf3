"""Every built-in semantics, and the example third-party plugin, keeps the contract
(scalebridge.testing.check_semantics: what plugin authors test theirs with)."""
from pathlib import Path

import pytest

from scalebridge import registry
from scalebridge.testing import check_semantics

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin"


@pytest.mark.parametrize("name", ["kubernetes", "gce", "azure", "aws", "scalebridge"])
def test_builtin_semantics_keep_the_contract(name):
    assert check_semantics(name) > 100


def test_the_example_plugin_keeps_the_contract(monkeypatch):
    if "proportional" not in registry.reset().semantics:   # not installed (`make test` installs it): from source
        monkeypatch.syspath_prepend(str(EXAMPLE))
        import scalebridge_droplets
        registry.reset([scalebridge_droplets])
    try:
        check_semantics("proportional")
    finally:
        registry.reset()


def test_the_contract_catches_a_semantics_that_breaks_it():
    import types

    from scalebridge.hookspecs import hookimpl
    from scalebridge.semantics import Decision, Semantics

    class OutOfBounds(Semantics):
        name = "out-of-bounds"

        def decide(self, ctx):
            n = (ctx.policy.max_replicas or 1) + 5
            return Decision(n, n, "DesiredWithinRange")

    mod = types.ModuleType("broken_plugin")

    @hookimpl
    def scalebridge_register_semantics(register):
        register(OutOfBounds())

    mod.scalebridge_register_semantics = scalebridge_register_semantics
    registry.reset([mod])
    try:
        with pytest.raises(AssertionError, match="outside"):
            check_semantics("out-of-bounds")
    finally:
        registry.reset()
