"""Lower layers never import higher ones.

Every import statement of every module under ``core/scalebridge`` and
``plugins/`` (at module level, inside functions, under ``TYPE_CHECKING`` alike)
is read with :mod:`ast` and resolved to the module it names. A module may
import its own layer and the layers below it, never one above; the core never
imports a plugin package, and no plugin imports another. The layers are written
once, here (``LAYERS``); docs/architecture.md describes the same table.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
PLUGINS = ROOT / "plugins"

# bottom up: each entry names the top-level modules and packages of ``scalebridge``
# that form one layer (``__init__`` is the package itself, ``import scalebridge``)
LAYERS: list[tuple[str, frozenset[str]]] = [
    ("foundation", frozenset({"units", "errors", "constants", "cron", "timezones", "hookspecs", "cliargs",
                                         "secrets", "cel", "inputfile", "moved"})),
    ("model", frozenset({"policy", "policyfile", "protocol", "state", "compiled", "reads", "decision"})),
    ("stages", frozenset({"stages"})),
    ("semantics", frozenset({"semantics"})),
    ("engine", frozenset({"engine", "controls", "registry", "providers", "metric_sources", "__init__"})),
    ("forecasting", frozenset({"forecasting"})),
    ("simulator", frozenset({"simulator"})),
    ("controller", frozenset({"controller"})),
    ("backtest", frozenset({"backtest"})),
    ("translate", frozenset({"translate"})),
    ("testing", frozenset({"testing"})),
    ("cli", frozenset({"cli", "demo", "explain"})),
]
LEVEL = {part: i for i, (_, parts) in enumerate(LAYERS) for part in parts}
LAYER_NAME = {part: name for name, parts in LAYERS for part in parts}


def module_name(path: Path) -> str:
    """``core/scalebridge/stages/rules.py`` → ``scalebridge.stages.rules``."""
    base = CORE if CORE in path.parents else PLUGINS
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _exists(name: str) -> bool:
    """Whether ``name`` is a module or package of this repository."""
    for base in (CORE, PLUGINS):
        p = base.joinpath(*name.split("."))
        if p.with_suffix(".py").is_file() or (p / "__init__.py").is_file():
            return True
    return False


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, module)`` for each module an import in ``path`` loads; ``from X
    import y`` names ``X.y`` when that is a module, else ``X``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    me = module_name(path)
    package = me if is_package(path) else me.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                full = f"{origin}.{alias.name}"
                yield node.lineno, full if _exists(full) else origin


def core_part(module: str) -> Optional[str]:
    """The layer key of a ``scalebridge`` module (its first component below the
    package, ``__init__`` for the package itself), None for any other module."""
    if module == "scalebridge":
        return "__init__"
    if module.startswith("scalebridge."):
        return module.split(".")[1]
    return None


def plugin_package(module: str) -> Optional[str]:
    top = module.split(".")[0]
    return top if top.startswith("scalebridge_") and (PLUGINS / top).is_dir() else None


def sources() -> list[Path]:
    return sorted(p for base in (CORE / "scalebridge", PLUGINS) for p in base.rglob("*.py")
                  if "__pycache__" not in p.parts)


def violations(path: Path) -> list[str]:
    """Every import in ``path`` that runs against the layering, as ``file:line: why``."""
    me = module_name(path)
    rel = path.relative_to(ROOT)
    out = []
    mine_core = core_part(me)
    mine_plugin = plugin_package(me)
    for line, target in imported_modules(path):
        where = f"{rel}:{line}"
        theirs_plugin = plugin_package(target)
        if mine_core is not None:
            if theirs_plugin is not None:
                out.append(f"{where}: the core imports the plugin package {target}")
                continue
            theirs = core_part(target)
            if theirs is None or theirs == mine_core:
                continue
            if theirs not in LEVEL:
                out.append(f"{where}: {target} belongs to no layer (add it to LAYERS)")
            elif mine_core not in LEVEL:
                out.append(f"{where}: {me} belongs to no layer (add it to LAYERS)")
            elif LEVEL[theirs] > LEVEL[mine_core]:
                out.append(f"{where}: {me} ({LAYER_NAME[mine_core]}) imports {target} "
                           f"({LAYER_NAME[theirs]}), a higher layer")
        elif theirs_plugin is not None and theirs_plugin != mine_plugin:
            out.append(f"{where}: plugin {mine_plugin} imports another plugin, {target}")
    return out


def test_every_core_module_has_a_layer() -> None:
    unplaced = sorted({core_part(module_name(p)) for p in sources()
                       if core_part(module_name(p)) is not None} - set(LEVEL))
    assert unplaced == [], ("a module or package without a layer: give it a row of LAYERS here and of the "
                            "table in docs/architecture.md, \"The layers\"")


def test_every_layer_names_modules_that_exist() -> None:
    missing = sorted(part for part in LEVEL if part != "__init__" and not _exists(f"scalebridge.{part}"))
    assert missing == []


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_runs_up_the_layers(path: Path) -> None:
    assert violations(path) == []


def test_an_upward_import_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check itself: a stage importing a semantics is reported with its line."""
    fake_core = tmp_path / "core"
    stage = fake_core / "scalebridge" / "stages" / "bad.py"
    stage.parent.mkdir(parents=True)
    (fake_core / "scalebridge" / "semantics").mkdir()
    (fake_core / "scalebridge" / "semantics" / "base.py").write_text("")
    stage.write_text("import math\n\n\ndef f():\n    from ..semantics.base import Semantics\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "CORE", fake_core)
    assert violations(stage) == ["core/scalebridge/stages/bad.py:5: scalebridge.stages.bad (stages) imports "
                                 "scalebridge.semantics.base (semantics), a higher layer"]


def documented_layers() -> list[tuple[str, frozenset[str]]]:
    """The table of docs/architecture.md, "The layers": (layer, modules) per row,
    the modules read from the backticked names of its second column."""
    import re
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("layer", "---"):
            continue
        names = set()
        for name in re.findall(r"`([^`]+)`", cells[1]):
            name = name.rstrip("/")
            names.add("__init__" if name == "scalebridge/__init__.py" else name)
        rows.append((cells[0], frozenset(names)))
    return rows


def test_the_documented_layers_are_the_enforced_ones() -> None:
    assert documented_layers() == LAYERS


def test_every_file_and_package_the_architecture_names_exists() -> None:
    import re
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = []
    for name in sorted(set(re.findall(r"`([A-Za-z_][\w/.]*(?:\.py|/))`", text))):
        where = [ROOT / name, CORE / "scalebridge" / name, CORE / name, PLUGINS / name]
        if not any(p.exists() for p in where) and not any(PLUGINS.glob(f"*/{name}")):   # a plugin's layout
            missing.append(name)
    for name in sorted(set(re.findall(r"`(scalebridge_\w+)`", text))):
        if not name.startswith("scalebridge_register_") and not (PLUGINS / name).is_dir():   # hooks aside
            missing.append(name)
    assert missing == []
