"""docs/plugins.md against the plugin contract: the hooks it lists and check_semantics."""

import re
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
    assert "[project.entry-points.scalebridge]\ndroplets = \"scalebridge_droplets\"" in \
        read("examples/plugin/pyproject.toml")


def test_plugins_md_check_semantics_size():
    from scalebridge.testing import contract_requests
    assert 210 <= len(list(contract_requests())) <= 230      # "about 220 generic requests"


def _table_rows(text: str, heading: str) -> dict[str, str]:
    """The rows of the table below ``heading`` (a bold paragraph start): first cell -> the row."""
    block = text.split(heading, 1)[1].split("\n\n", 2)[1]
    rows = {}
    for line in block.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1].strip()
            for name in re.findall(r"`([A-Za-z_]+)", first):
                rows[name] = line
    return rows


def test_plugins_md_documents_every_member_of_provider_and_target():
    """A plugin author found path_options, ref_path_keys, check_metric_source, close() and
    Capability.VIRTUAL_CLOCK only by reading providers.py: every public member of Provider and
    Target, and every Capability, has its row in docs/plugins.md saying what it is and what
    reads it."""
    from scalebridge.providers import Capability, Provider, Target
    text = read("docs/plugins.md")
    for cls, heading in ((Provider, "**`Provider`**"), (Target, "**`Target`**"), (Capability, "**`Capability`**")):
        rows = _table_rows(text, heading)
        members = [c.name for c in Capability] if cls is Capability else \
            [n for n in vars(cls) if not n.startswith("_")]
        missing = [m for m in members if m not in rows]
        assert not missing, f"docs/plugins.md has no row for {cls.__name__}.{missing}"
        for m in members:
            assert len([c for c in rows[m].split("|") if c.strip()]) == 3, rows[m]     # what, and who reads it
    assert "**`members[].count`**" in text
    assert "FailNext" in text


def test_plugins_md_fail_next_example_runs(tmp_path):
    """The page's FailNext example, on the file provider of the test that runs it in full."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "file_provider", ROOT / "tests/testing/test_fault_injection_without_a_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = read("docs/plugins.md")
    code = re.search(r"```python\n(import errno\nfrom scalebridge.providers import ErrorKind\n.*?)```", text,
                     re.S).group(1)
    namespace = {"FileProvider": lambda path: module.FileProvider(path)}
    exec(compile(code, "docs/plugins.md", "exec"), namespace)
    namespace["test_file_provider_keeps_the_contract"](tmp_path)


def test_run_md_lists_every_ref_key_of_the_fake_provider():
    """The fake provider's ref keys were only in a docstring: docs/run.md has a row for each,
    and an option row naming its options."""
    from scalebridge.testing import fake
    text = read("docs/run.md")
    table = text.split("The fake provider's `ref` keys", 1)[1].split("\n\n", 2)[1]
    rows = {name for line in table.splitlines()[2:] if line.startswith("| `")
            for name in re.findall(r"`(\w+)`", line.split("|")[1])}
    assert rows == set(fake._REF_KEYS), sorted(set(fake._REF_KEYS) ^ rows)
    options = next(line for line in text.splitlines() if line.startswith("| `type: scalebridge.testing.fake:"))
    assert all(f"`{o}`" in options and o in fake._OPTION_KEYS for o in ("settle_observes", "faults", "world"))
