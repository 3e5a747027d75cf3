"""docs/plugins.md against the plugin contract: the hooks it lists and check_semantics."""

from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]


def read(name: str) -> str:
    return (ROOT / name).read_text()


def test_plugins_md_contract():
    import scalebridge.hookspecs as h
    from scalebridge.forecasting import Forecaster  # noqa: F401
    from scalebridge.semantics import Context, Decision, Semantics  # noqa: F401
    from scalebridge.state import TimeLog
    for hook in ("scalebridge_register_semantics", "scalebridge_register_providers",
                 "scalebridge_register_metric_sources", "scalebridge_register_forecasters"):
        assert hasattr(h, hook)
    assert all(hasattr(TimeLog, m) for m in ("window_max", "window_min", "window_sum"))
    assert hasattr(Semantics, "retention") and hasattr(Semantics, "check") and hasattr(Context, "note")
    assert "[project.entry-points.scalebridge]\nproportional = \"scalebridge_proportional\"" in \
        read("examples/plugin/pyproject.toml")


def test_plugins_md_check_semantics_size():
    from scalebridge.testing import contract_requests
    assert 150 <= len(list(contract_requests())) <= 170      # "about 160 generic requests"
