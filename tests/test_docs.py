"""The docs are held to the code: generated where they can be, run where they show code.

Fenced blocks in docs/*.md and README.md follow one convention:

- ```python             runs. The blocks of one page run in order, in one namespace, in
                        a fresh folder (the working directory, with ``NPC_NB_HOME``
                        inside it), so ``npc_nb.open()`` creates a fresh project, like a
                        reader running the page top to bottom in one notebook.
- ```text right after a ```python block (only blank lines or a line ``Output:`` between)
                        is what that block prints; it is compared exactly (trailing
                        spaces aside). Put prose between them to show other text.
- ```python signature   ``nb.name(...)`` lines, compared with the ``Project`` methods'
                        real signatures (parameter names, kinds and literal defaults).
- ```python no-run      shown, not run: needs a real model key or the network, or is an
                        API sketch that is not valid Python. Use it sparingly.
- anything else (```text elsewhere, ```ipython, ```sql, ```yaml, ```bash) is shown only.

The other tests: docs/schema.md is regenerated from the declaration and compared, and
docs/store.md explains every table and column (the generated reference pages, which list
every public name, magic, ``npc-nb`` option and setting, are compared with the code in
tests/unit/test_generated_docs.py); links (and
their #anchors) and backticked repository paths (``tests/x.py::test_y``) point to what
exists, nothing names a file outside the repository, module paths are today's (not the
aliases of earlier releases), and docs/architecture.md draws the package as it is: every
module in its folder.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import io
import itertools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest

import npc_nb
from npc_nb.store.schema import doc as schema_doc

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
DOC_PAGES = sorted(DOCS.glob("*.md"))


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _text(pages: list[Path]) -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


# -- fenced blocks ---------------------------------------------------------------------

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>```+)(?P<info>.*)$")


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    end: int  # of the closing fence, 1-based
    info: str
    code: str
    output: str | None = None  # the ```text block that shows what it prints

    @property
    def kind(self) -> str:
        return self.info.split()[0] if self.info.split() else ""

    @property
    def where(self) -> str:
        return f"{_page_id(self.page)}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, each python block paired with the output shown."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, ticks = opening["indent"], opening["ticks"]
        j = i + 1
        while j < len(lines) and lines[j].strip() != ticks:
            j += 1
        body = [
            line[len(indent) :] if line.startswith(indent) else line for line in lines[i + 1 : j]
        ]
        blocks.append(Block(page, i + 1, j + 1, opening["info"].strip(), "\n".join(body) + "\n"))
        i = j + 1
    for block, following in itertools.pairwise(blocks):
        between = lines[block.end : following.line - 1]
        if (
            block.info == "python"
            and following.info == "text"
            and all(not line.strip() or line.strip() == "Output:" for line in between)
        ):
            block.output = following.code
    return blocks


def _python_blocks(page: Path) -> list[Block]:
    return [block for block in fenced_blocks(page) if block.info == "python"]


def test_every_python_block_follows_the_fence_convention() -> None:
    allowed = {"python", "python no-run", "python signature"}
    odd = [
        f"{block.where}: ```{block.info}"
        for page in PAGES
        for block in fenced_blocks(page)
        if block.kind == "python" and block.info not in allowed
    ]
    assert not odd, f"Use ```python, ```python no-run or ```python signature: {odd}"


# -- 1. the schema page ----------------------------------------------------------------


def test_the_schema_page_is_generated_from_the_declaration() -> None:
    page = DOCS / "schema.md"
    expected = schema_doc.render_schema()
    assert page.is_file(), f"docs/schema.md is missing; run: {schema_doc.COMMAND}"
    assert page.read_text(encoding="utf-8") == expected, (
        f"docs/schema.md is out of date with the schema; regenerate it (never edit it "
        f"by hand) with: {schema_doc.COMMAND}"
    )


def test_the_schema_page_is_linked_from_the_store_page_and_the_index() -> None:
    for page in ("store.md", "index.md"):
        assert "(schema.md)" in (DOCS / page).read_text(encoding="utf-8"), page


def test_every_step_of_the_ladder_and_every_table_says_what_it_is() -> None:
    from npc_nb.store.schema.dialect import TABLES
    from npc_nb.store.schema.migrations import MIGRATIONS

    silent = [step.name for step in MIGRATIONS if not step.doc.strip()]
    silent += [table.name for table in TABLES if not table.doc.strip()]
    assert silent == [], silent


def test_the_store_page_explains_every_table_and_column() -> None:
    """docs/schema.md lists the schema; docs/store.md must say what each part means."""
    from npc_nb.store.schema.dialect import TABLES as tables

    store_page = (DOCS / "store.md").read_text(encoding="utf-8")
    missing = [
        f"{table.name}.{column.name}" if column else table.name
        for table in tables
        for column in [None, *table.columns]
        if f"`{column.name if column else table.name}`" not in store_page
    ]
    assert not missing, f"docs/store.md does not explain: {missing}"


# -- signatures ------------------------------------------------------------------------


def _signature_chunks(code: str) -> Iterator[tuple[str, str]]:
    """(method name, ``def`` source) for every ``nb.name(...)`` of a signature block."""
    for start in re.finditer(r"^nb\.(\w+)\(", code, flags=re.MULTILINE):
        depth, i = 0, start.end() - 1
        while True:
            char = code[i]
            if char == "#":
                i = code.index("\n", i)
                continue
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                break
            i += 1
        rest = code[i + 1 :].split("\n", 1)[0]
        returns = re.match(r"\s*->\s*([^#]+)", rest)
        annotation = f" -> {returns[1].strip()}" if returns else ""
        params = code[start.end() : i]
        yield start[1], f"def {start[1]}(self, {params}){annotation}: ..."


def _literal(node: ast.expr | None) -> object:
    try:
        return ast.literal_eval(node) if node is not None else inspect.Parameter.empty
    except ValueError:
        return None  # not a literal: not compared


def _documented_parameters(source: str) -> list[tuple[str, str, object]]:
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    found = [
        (a.arg, "POSITIONAL_OR_KEYWORD", _literal(d) if d is not None else inspect.Parameter.empty)
        for a, d in zip(positional, defaults, strict=True)
    ]
    if args.vararg:
        found.append((args.vararg.arg, "VAR_POSITIONAL", inspect.Parameter.empty))
    found += [
        (a.arg, "KEYWORD_ONLY", _literal(d) if d is not None else inspect.Parameter.empty)
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        found.append((args.kwarg.arg, "VAR_KEYWORD", inspect.Parameter.empty))
    return found[1:]  # self


def _real_parameters(name: str) -> list[tuple[str, str, object]]:
    signature = inspect.signature(getattr(npc_nb.Project, name))
    return [(p.name, p.kind.name, p.default) for p in list(signature.parameters.values())[1:]]


def _signature_blocks() -> list[Block]:
    return [b for page in PAGES for b in fenced_blocks(page) if b.info == "python signature"]


def test_signature_blocks_match_the_code() -> None:
    checked, wrong = 0, []
    for block in _signature_blocks():
        for name, source in _signature_chunks(block.code):
            checked += 1
            documented, real = _documented_parameters(source), _real_parameters(name)
            names_match = [p[:2] for p in documented] == [p[:2] for p in real]
            defaults_match = all(
                d[2] is None or d[2] == r[2] for d, r in zip(documented, real, strict=False)
            )
            if not (names_match and defaults_match):
                wrong.append(f"{block.where} nb.{name}: documented {documented}, real {real}")
    assert checked >= 10, "no signature blocks found"
    assert not wrong, "\n".join(wrong)


# -- 3. the code examples run ----------------------------------------------------------


def _pages_with_examples() -> list[Path]:
    return [page for page in PAGES if _python_blocks(page)]


@pytest.fixture
def fresh_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A new working directory with its own user store, and no NPC_NB_* leaking in."""
    folder = tmp_path / "reader"
    folder.mkdir()
    with mock.patch.dict(os.environ):  # an example may set variables: all are restored
        for key in [k for k in os.environ if k.startswith("NPC_NB_")]:
            del os.environ[key]
        os.environ["NPC_NB_HOME"] = str(tmp_path / "reader" / "home")
        monkeypatch.chdir(folder)
        yield folder


def _close_projects(namespace: dict[str, object]) -> None:
    for value in namespace.values():
        if isinstance(value, npc_nb.Project):
            value.close()


def _normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


@pytest.mark.parametrize("page", _pages_with_examples(), ids=_page_id)
def test_the_code_examples_run(page: Path, fresh_folder: Path) -> None:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    try:
        for block in _python_blocks(page):
            printed = io.StringIO()
            try:
                with contextlib.redirect_stdout(printed):
                    exec(compile(block.code, block.where, "exec"), namespace)
            except Exception as exc:
                raise AssertionError(
                    f"The example at {block.where} fails: {type(exc).__name__}: {exc}\n"
                    f"Printed before it failed:\n{printed.getvalue()}"
                ) from exc
            if block.output is not None:
                assert _normalised(printed.getvalue()) == _normalised(block.output), (
                    f"The example at {block.where} prints something else than the page "
                    f"shows below it."
                )
    finally:
        _close_projects(namespace)


def test_the_quickstart_shows_its_output() -> None:
    quickstart = _python_blocks(DOCS / "quickstart.md")[0]
    assert quickstart.output is not None and "<npc-memory>" in quickstart.output


# -- 4. links and paths ----------------------------------------------------------------

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
#: A relative path that climbs (``../x``), and a Markdown file named anywhere in a page.
_CLIMB = re.compile(r"(?:\.\./)+[\w.-]+")
_MD_NAME = re.compile(r"\b[\w-]+\.md\b")
#: Backticked paths under these folders must exist (with ``::test`` names, that test).
_REPO_FOLDERS = ("tests/", "bench/", "npc_nb/", "widgets/", "notebooks/", "docs/", ".ci/")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    in_fence, seen, anchors = False, {}, set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = re.match(r"#{1,6} (.+)", line)
        if heading and not in_fence:
            slug = _slug(heading[1])
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _link_problems(page: Path) -> list[str]:
    problems = []
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if ROOT not in resolved.parents and resolved != ROOT:
            problems.append(f"{target}: outside the repository")
        elif not resolved.exists():
            problems.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            problems.append(f"{target}: no heading #{anchor} in {resolved.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_links_point_to_files_in_the_repository(page: Path) -> None:
    problems = _link_problems(page)
    assert not problems, f"{_page_id(page)}: {problems}"


def _inside(path: Path) -> bool:
    """Whether ``path`` is a file or folder of this checkout."""
    resolved = path.resolve()
    return resolved.is_relative_to(ROOT) and resolved.exists()


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_no_doc_refers_outside_the_repository(page: Path) -> None:
    """No path climbs out of the checkout, and every Markdown file a page names is one
    of the project's own (a page must stand alone, without notes kept elsewhere)."""
    text = page.read_text(encoding="utf-8")
    climbing = [path for path in _CLIMB.findall(text) if not _inside(page.parent / path)]
    ours = {md.name for md in (*ROOT.glob("*.md"), *DOCS.glob("*.md"), *ROOT.glob("bench/*.md"))}
    unknown = sorted(set(_MD_NAME.findall(text)) - ours)
    assert not climbing and not unknown, (
        f"{_page_id(page)} refers to files outside the repository: {climbing + unknown}"
    )


def _missing_path(reference: str) -> str | None:
    path, _, test_name = reference.partition("::")
    if not (ROOT / path).exists():
        return f"{reference}: no such file"
    if test_name and not re.search(
        rf"^\s*def {re.escape(test_name)}\(", (ROOT / path).read_text(), re.M
    ):
        return f"{reference}: no test {test_name} in {path}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_file_paths_in_the_docs_exist(page: Path) -> None:
    """A backticked path into the repository (``tests/test_store.py``) names a real file."""
    references = re.findall(r"`([\w./-]+\.\w+(?:::\w+)?)`", page.read_text(encoding="utf-8"))
    problems = [
        problem
        for reference in references
        if reference.startswith(_REPO_FOLDERS)
        if (problem := _missing_path(reference))
    ]
    assert not problems, f"{_page_id(page)}: {problems}"


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                value = getattr(value, attribute)
        except AttributeError:
            return False
        return True
    return False


def test_module_paths_in_the_docs_are_todays() -> None:
    """``npc_nb.x.y`` in the docs imports."""
    text = _text(PAGES)
    dotted = sorted(set(re.findall(r"\bnpc_nb(?:\.[A-Za-z_]\w*)+", text)))
    assert "npc_nb.open" in dotted
    broken = [name for name in dotted if not _resolves(name)]
    assert not broken, f"Do not import: {broken}"


# -- 5. the architecture page ----------------------------------------------------------


def _tree_paths(tree: str) -> set[str]:
    """Every module and folder a tree drawing shows, as a path under ``npc_nb/`` (a
    folder ends in ``/``), worked out from each line's depth."""
    shown: set[str] = set()
    folders: list[str] = []
    for line in tree.splitlines():
        drawn = re.match(r"^((?:│   |    )*)[├└]── (\S+)", line)
        if not drawn:
            continue
        depth, name = len(drawn[1]) // 4, drawn[2]
        del folders[depth:]
        shown.add("".join(folders) + name)
        if name.endswith("/"):
            folders.append(name)
    return shown


def _package_paths() -> set[str]:
    """Every module and subpackage folder of the package, as a path under ``npc_nb/``."""
    package = ROOT / "npc_nb"
    modules = {path.relative_to(package).as_posix() for path in package.rglob("*.py")}
    folders = {
        path.parent.relative_to(package).as_posix() + "/"
        for path in package.rglob("__init__.py")
        if path.parent != package
    }
    return modules | folders


def test_the_architecture_page_is_linked() -> None:
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(architecture.md)" in (DOCS / "index.md").read_text(encoding="utf-8")


def test_the_architecture_tree_is_the_package() -> None:
    """The tree on docs/architecture.md shows every module in its folder, and nothing
    that is not there."""
    tree = next(b for b in fenced_blocks(DOCS / "architecture.md") if "npc_nb/" in b.code)
    shown, real = _tree_paths(tree.code), _package_paths()
    assert {"store/server/database.py", "store/embedded/", "cli/__main__.py"} <= shown
    assert sorted(real - shown) == [], "docs/architecture.md does not show these"
    assert sorted(shown - real) == [], "docs/architecture.md shows what is not there"
