"""The package's imports point one way, and the facade is composed, not inherited.

Every import counts: module level, inside functions, and under ``TYPE_CHECKING``. The
layers, lowest first: foundations (errors, vocabulary, private helpers) <- store (the
only SQL) <- memory core <- models (the model gateway) <- chat, graph, analytics, review
(the review session and its panel) <- the ``Project`` facade <- front ends (notebook
magics, CLI, the package's public face). A module may import from lower layers and from its own
subpackage, never from a higher layer or a sibling of its own layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import npc_nb

PACKAGE = Path(npc_nb.__file__).resolve().parent
LAYERS = {
    "npc_nb.errors": 0,
    "npc_nb.vocabulary": 0,
    "npc_nb._foundations": 0,
    "npc_nb.store": 1,
    "npc_nb.memory": 2,
    "npc_nb.models": 3,
    "npc_nb.chat": 4,
    "npc_nb.graph": 4,
    "npc_nb.analytics": 4,
    "npc_nb._project": 5,
    "npc_nb.review": 4,  # the review session and its panel: a service with its own view
    "npc_nb.notebook": 6,
    "npc_nb.cli": 6,
    "npc_nb": 7,  # the public face re-exports everything, lazily
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                stem = ".".join([*base, *([node.module] if node.module else [])])
            else:
                stem = node.module or ""
            names = [stem, *(f"{stem}.{alias.name}" for alias in node.names)]
        for name in names:
            if name.startswith("npc_nb") and (target := _resolve(name)) not in (None, module):
                targets.add(target)
    return targets


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _layer(module: str) -> int:
    if module.rpartition(".")[2].startswith("_") and module.count(".") == 1:
        return LAYERS.get(module, 0)  # npc_nb._text, npc_nb._ids, ...: foundations
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return LAYERS[prefix]
    raise AssertionError(f"{module} belongs to no layer; add it to LAYERS")


def _subpackage(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_every_import_points_down_or_stays_in_its_subpackage() -> None:
    wrong = [
        f"{source} -> {target}"
        for source, targets in GRAPH.items()
        for target in targets
        if _layer(target) > _layer(source)
        or (
            _layer(target) == _layer(source)
            and _subpackage(target) != _subpackage(source)
            and _layer(source) != 0  # foundations may use each other (no loop, see below)
        )
    ]
    assert wrong == []


def test_no_modules_import_each_other_in_a_loop() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in GRAPH.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for module in GRAPH:
        if module not in index:
            visit(module)
    assert loops == []


def test_the_facade_has_no_base_classes_of_its_own() -> None:
    assert npc_nb.Project.__bases__ == (object,)
