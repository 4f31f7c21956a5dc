"""The package's imports point one way, and the facade is composed, not inherited.

Every import counts: module level, inside functions, and under ``TYPE_CHECKING``. The
layers, lowest first: foundations (errors, vocabulary, ``_foundations/``) <- store (the
only SQL) <- memory core <- models (the model gateway) <- chat, graph, analytics, review
(the review session and its panel) <- the ``Project`` facade <- front ends (notebook
magics, CLI, the package's public face). A module may import from lower layers and from
its own subpackage, never from a higher layer or a sibling of its own layer.

Inside the store, rooms by concern: the two backends (``store.embedded``, the DuckDB
file; ``store.server``, PostgreSQL) never import each other, and nothing imports a
backend but the backend itself, ``store.stores`` (which chooses one), ``store.moving``
(a move reads and writes either) and the composition root. The schema and the table
rooms import no backend, and the schema nothing else of the store. Every folder is a
room, not a pile: at most fifteen modules, and an ``__init__`` that says what lives there.
"""

from __future__ import annotations

import ast
from pathlib import Path

import npc_nb

PACKAGE = Path(npc_nb.__file__).resolve().parent
LAYERS = {
    "npc_nb.errors": 0,
    "npc_nb.vocabulary": 0,
    "npc_nb.decisions": 0,  # decisions as values: what every layer that decides builds
    "npc_nb._foundations": 0,
    "npc_nb.store": 1,
    "npc_nb.memory": 2,
    "npc_nb.models": 3,
    "npc_nb.chat": 4,
    "npc_nb.graph": 4,
    "npc_nb.analytics": 4,
    "npc_nb.interop": 4,  # memories in and out: the bundle, other tools' files, through the gate
    "npc_nb.review": 4,  # the review session and its panel: a service with its own view
    "npc_nb.reruns": 4,  # a saved notebook re-run in a kernel, replay forced, and compared
    # extraction experiments: above the services they use (chat, review, analytics)
    "npc_nb.experiments": 5,
    "npc_nb._project": 6,
    "npc_nb._areas": 5,  # the facade's grouped areas (nb.imports, nb.exports), below it
    "npc_nb.audit": 5,  # nb.audit's desk and the Audit handle, over the audit service
    "npc_nb.notebook": 7,
    "npc_nb.cli": 7,
    "npc_nb": 8,  # the public face re-exports everything, lazily
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


def _named(module: str, path: Path) -> set[str]:
    """Every npc_nb name ``module`` imports, as written (made absolute)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    named: set[str] = set()
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
        named.update(name for name in names if name.startswith("npc_nb"))
    return named


def _imports(module: str, path: Path) -> set[str]:
    return {
        target for name in _named(module, path) if (target := _resolve(name)) not in (None, module)
    }


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


def test_the_facade_reaches_the_store_only_through_its_services() -> None:
    """The facade and its grouped areas import the store's seam (``Stores``, to build
    it, and the ``Store`` type) and no table room, query or backend: every read and
    write is a service's."""
    for facade in ("npc_nb._project", "npc_nb._areas"):
        into_store = sorted(t for t in GRAPH[facade] if _within(t, "npc_nb.store"))
        assert into_store == ["npc_nb.store"], facade


# -- the store's rooms -----------------------------------------------------------------

#: The store's two backends: one DuckDB file, and a project's schema on PostgreSQL.
BACKENDS = ("npc_nb.store.embedded", "npc_nb.store.server")
#: Who may import a backend it is not part of: the store's chooser, the move (it opens
#: either backend at either end), and the composition root.
BACKEND_IMPORTERS = ("npc_nb.store.stores", "npc_nb.store.moving", "npc_nb._project")
#: The rooms written once for both backends: the schema, the table families, analysis
#: and the bundle.
SHARED_ROOMS = (
    "npc_nb.store.schema",
    "npc_nb.store.memories",
    "npc_nb.store.conversations",
    "npc_nb.store.graph",
    "npc_nb.store.analysis",
    "npc_nb.store.runs",
    "npc_nb.store.experiments",
    "npc_nb.store.bundle",  # a bundle's tables in and out, either backend
)
#: A folder holding more modules than this is a pile: split it by concern.
MOST_MODULES_IN_A_FOLDER = 15


def _within(module: str, room: str) -> bool:
    return module == room or module.startswith(room + ".")


def _backend(module: str) -> str | None:
    return next((backend for backend in BACKENDS if _within(module, backend)), None)


def _imports_into(rooms: tuple[str, ...], *, sources: tuple[str, ...] = ("npc_nb",)) -> list[str]:
    """Every import from a module under ``sources`` into a module under ``rooms``."""
    return sorted(
        f"{source} -> {target}"
        for source, targets in GRAPH.items()
        if any(_within(source, s) for s in sources)
        for target in targets
        if any(_within(target, room) for room in rooms)
    )


def test_the_backends_never_import_each_other() -> None:
    embedded, server = BACKENDS
    wrong = _imports_into((server,), sources=(embedded,))
    wrong += _imports_into((embedded,), sources=(server,))
    assert wrong == []


def test_only_the_chooser_and_the_move_import_a_backend() -> None:
    wrong = [
        f"{source} -> {target}"
        for source, targets in GRAPH.items()
        for target in targets
        if _backend(target) is not None
        and _backend(source) != _backend(target)
        and not any(_within(source, importer) for importer in BACKEND_IMPORTERS)
    ]
    assert wrong == []


def test_the_schema_and_the_table_rooms_import_no_backend() -> None:
    assert _imports_into(BACKENDS, sources=SHARED_ROOMS) == []


def test_the_schema_imports_nothing_else_of_the_store() -> None:
    """A new table arrives in the schema first; the schema leans on no other room."""
    wrong = [
        line
        for line in _imports_into(("npc_nb.store",), sources=("npc_nb.store.schema",))
        if not _within(line.split(" -> ")[1], "npc_nb.store.schema")
    ]
    assert wrong == []


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    crowded = {
        folder.relative_to(PACKAGE.parent).as_posix(): count
        for folder in [PACKAGE, *(path.parent for path in PACKAGE.rglob("__init__.py"))]
        if (count := len(list(folder.glob("*.py")))) > MOST_MODULES_IN_A_FOLDER
    }
    assert crowded == {}, "split these folders by concern"


def test_every_subpackage_says_what_lives_there() -> None:
    silent = [
        init.relative_to(PACKAGE.parent).as_posix()
        for init in PACKAGE.rglob("__init__.py")
        if not (ast.get_docstring(ast.parse(init.read_text())) or "").strip()
    ]
    assert silent == []
