"""Lower layers never import higher ones, and the core stays the core.

Every import statement of every module under ``core/scalebridge`` and
``plugins/`` (at module level, inside functions, under ``TYPE_CHECKING`` alike)
is read with :mod:`ast` and resolved to the module it names. A module may
import its own layer and the layers below it, never one above; the core never
imports a plugin package, and no plugin imports another; no two modules import
each other, however indirectly. The layers are written once, here (``LAYERS``);
docs/architecture.md describes the same table.

Beside the imports: no module outside ``semantics/`` compares a semantics' or a
provider's name to a literal (what differs between clouds is each one's to say, through
the contracts: ``Semantics.reads``, ``Semantics.ignores``, a provider's capabilities), and
nothing reads pydantic's private attributes or another type's ``__dict__`` (the core's
types are slotted dataclasses, read as attributes).
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


# ----------------------------------------------------------------------------- cycles


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of this repository it imports (any import statement)."""
    graph: dict[str, set[str]] = {}
    for path in sources():
        me = module_name(path)
        graph.setdefault(me, set())
        for _, target in imported_modules(path):
            if target != me and (target == "scalebridge" or _exists(target)):
                graph[me].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_no_import_cycle_in_core_or_plugins() -> None:
    assert cycles(import_graph()) == []


def test_a_cycle_is_caught() -> None:
    """The check itself: two modules importing each other through a third are one cycle."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_core_imports_no_plugin_package() -> None:
    bad = [f"{p.relative_to(ROOT)}:{line}: {target}" for p in sources() if core_part(module_name(p)) is not None
           for line, target in imported_modules(p) if plugin_package(target) is not None]
    assert bad == []


# ----------------------------------------------------------------------------- names and private reads

#: what the built-ins register: semantics, providers, translators, metric sources
NAMES = frozenset({"kubernetes", "gce", "azure", "aws", "scalebridge", "sim", "keda", "prometheus"})


def _literal_names(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_literal_names(e) for e in node.elts)) if node.elts else set()
    return set()


def name_comparisons(path: Path) -> list[str]:
    """Each comparison in ``path`` of something with a built-in's name written as a literal
    (``semantics == "aws"``, ``name in ("kubernetes", "gce")``), as ``file:line: name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            found = set().union(_literal_names(node.left), *(_literal_names(c) for c in node.comparators))
            for name in sorted(found):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name!r}")
    return out


def _outside_semantics() -> list[Path]:
    semantics = CORE / "scalebridge" / "semantics"
    return [p for p in sources() if semantics not in p.parents]


@pytest.mark.parametrize("path", _outside_semantics(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_outside_semantics_compares_a_semantics_or_provider_name_to_a_literal(path: Path) -> None:
    assert name_comparisons(path) == []


def test_a_name_comparison_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "core" / "scalebridge" / "controller" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f(s):\n    return s == 'aws' or s in ('gce', 'mine')\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert name_comparisons(bad) == ["core/scalebridge/controller/bad.py:2: 'aws'",
                                     "core/scalebridge/controller/bad.py:2: 'gce'"]


def private_reads(path: Path) -> list[str]:
    """Each read of pydantic's private attributes (``__pydantic_private__``), or of a
    ``__dict__`` other than the object's own (``self``/``cls``): ``file:line: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if node.attr == "__pydantic_private__" or (node.attr == "__dict__" and not own):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
    return out


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_read_of_pydantic_private_attributes_or_of_another_types_dict(path: Path) -> None:
    assert private_reads(path) == []


def test_a_private_read_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "core" / "scalebridge" / "stages" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f(m, p):\n    return m.__dict__['name'], p.__pydantic_private__, f.__dict__\n"
                   "class A:\n    def g(self):\n        return self.__dict__\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert sorted(private_reads(bad)) == ["core/scalebridge/stages/bad.py:2: .__dict__",
                                          "core/scalebridge/stages/bad.py:2: .__dict__",
                                          "core/scalebridge/stages/bad.py:2: .__pydantic_private__"]
