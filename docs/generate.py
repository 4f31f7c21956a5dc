"""Write the generated reference pages from the code: ``python docs/generate.py``.

Four pages, each read from what the code declares, never from a list kept by hand:

- ``docs/reference.md``: the public Python API, from ``npc_nb.__all__`` (functions,
  constants, result classes, errors) and ``Project`` with every attribute group a
  ``Project`` property returns (``nb.metrics``, ...): signatures and each docstring's
  first paragraph;
- ``docs/cli.md``: every ``npc-nb`` subcommand and option, from the argparse parser;
- ``docs/magics.md``: every magic and option, from the magics' argument parsers;
- ``docs/settings.md``: every setting, from the ``Settings`` model.

Key design choice: the pages double as the API snapshot. The drift tests
(``tests/unit/test_generated_docs.py``) regenerate each page in memory and compare it
with the committed file, so a change to the public surface shows up as a diff of these
pages in review, and a page out of date fails with the command that rewrites it. Nothing
in ``npc_nb`` imports this script; it runs from the repository root.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

DOCS = Path(__file__).resolve().parent
COMMAND = "python docs/generate.py"
WIDTH = 88
VAR_ARGS = inspect.Parameter.VAR_POSITIONAL


def _header(title: str, source: str) -> list[str]:
    return [
        f"# {title}",
        "",
        f"Generated from {source} by `{COMMAND}`.",
        "Do not edit it by hand: a test fails when this page and the code disagree.",
        "",
    ]


def first_paragraph(obj: object) -> str:
    """The first paragraph of ``obj``'s own docstring, on one line ("" when it has none)."""
    doc = inspect.getdoc(obj) if obj.__doc__ is not None else None
    if not doc:
        return ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def _no_addresses(text: str) -> str:
    """Default values print as ``<object at 0x7f...>``: the address changes every run."""
    return re.sub(r" at 0x[0-9a-f]+", "", text)


def _param(param: inspect.Parameter) -> str:
    stars = {param.VAR_POSITIONAL: "*", param.VAR_KEYWORD: "**"}.get(param.kind, "")
    text = f"{stars}{param.name}"
    if param.annotation is not param.empty:
        text += f": {_hint(param.annotation)}"
    if param.default is not param.empty:
        equals = " = " if param.annotation is not param.empty else "="
        text += f"{equals}{_no_addresses(repr(param.default))}"
    return text


def _params(sig: inspect.Signature) -> list[str]:
    """Each parameter as written in a ``def``, with the bare ``*`` and ``/`` markers."""
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    out: list[str] = []
    for i, param in enumerate(params):
        before = params[i - 1].kind if i else None
        if param.kind is param.KEYWORD_ONLY and before not in (param.KEYWORD_ONLY, VAR_ARGS):
            out.append("*")
        out.append(_param(param))
        after = params[i + 1].kind if i + 1 < len(params) else None
        if param.kind is param.POSITIONAL_ONLY and after is not param.POSITIONAL_ONLY:
            out.append("/")
    return out


def signature(name: str, obj: Callable[..., Any]) -> str:
    """``name(params) -> return``, one parameter a line when it does not fit ``WIDTH``."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return f"{name}(...)"
    params = _params(sig)
    ret = sig.return_annotation
    ret_text = "" if ret is sig.empty or name.startswith("class ") else f" -> {_hint(ret)}"
    one_line = f"{name}({', '.join(params)}){ret_text}"
    if len(one_line) <= WIDTH:
        return one_line
    return f"{name}(\n" + "".join(f"    {p},\n" for p in params) + f"){ret_text}"


def _hint(hint: object) -> str:
    """A type hint as written in the source (hints are strings under PEP 563)."""
    return hint if isinstance(hint, str) else inspect.formatannotation(hint)


def _code(text: str) -> list[str]:
    return ["```python no-run", text, "```", ""]  # a listing: test_docs runs bare ```python


def _entry(heading: str, code: str, obj: object) -> list[str]:
    doc = first_paragraph(obj)
    return [f"### `{heading}`", "", *_code(code), *([doc, ""] if doc else [])]


# -- the Python API ---------------------------------------------------------------------


def _kind(value: object) -> str:
    if isinstance(value, type) and issubclass(value, BaseException):
        return "errors"
    if isinstance(value, type):
        return "classes"
    if callable(value):
        return "functions"
    return "constants"


def public_names() -> dict[str, list[str]]:
    """``npc_nb.__all__`` by kind: functions, classes, errors, constants (sorted)."""
    import npc_nb

    kinds: dict[str, list[str]] = {"functions": [], "constants": [], "classes": [], "errors": []}
    for name in sorted(npc_nb.__all__):
        kinds[_kind(getattr(npc_nb, name))].append(name)
    return kinds


def _members(cls: type) -> Iterator[tuple[str, object]]:
    """Public members ``cls`` defines or inherits from npc_nb (not from object, pandas...)."""
    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner is None or not owner.__module__.startswith("npc_nb"):
            continue
        yield name, inspect.getattr_static(cls, name)


def _property_type(member: object) -> str:
    getter = member.fget if isinstance(member, property) else getattr(member, "func", None)
    if getter is None:
        return ""
    ret = inspect.signature(getter).return_annotation
    return "" if ret is inspect.Signature.empty else f": {_hint(ret)}"


def _member_lines(owner: str, cls: type) -> list[str]:
    lines: list[str] = []
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    pydantic = hasattr(cls, "model_fields")  # its fields: docs/settings.md; model_*: pydantic's
    for name, member in _members(cls):
        if name in fields or (pydantic and name.startswith("model_")):
            continue
        qualified = f"{owner}.{name}"
        if isinstance(member, property | functools.cached_property):
            target = member.fget if isinstance(member, property) else member.func
            lines += _entry(qualified, f"{qualified}{_property_type(member)}", target)
        elif isinstance(member, staticmethod | classmethod):
            function = member.__func__
            lines += _entry(qualified, signature(qualified, function), function)
        elif callable(member):
            lines += _entry(qualified, signature(qualified, member), member)
        else:
            lines += _entry(qualified, f"{qualified} = {_no_addresses(repr(member))}", None)
    return lines


def attribute_groups() -> dict[str, type]:
    """``Project`` properties whose value is an npc_nb class: ``nb.metrics`` -> Metrics."""
    import npc_nb

    groups: dict[str, type] = {}
    for name, member in _members(npc_nb.Project):
        if not isinstance(member, property | functools.cached_property):
            continue
        getter = member.fget if isinstance(member, property) else member.func
        module = sys.modules[getter.__module__]
        found = getattr(module, str(inspect.signature(getter).return_annotation), None)
        if isinstance(found, type) and found.__module__.startswith("npc_nb"):
            groups[name] = found
    return groups


def _class_lines(name: str, cls: type) -> list[str]:
    bases = ", ".join(b.__name__ for b in cls.__bases__ if b is not object)
    head = f"class {name}({bases})" if bases else f"class {name}"
    if dataclasses.is_dataclass(cls):  # its fields are its constructor's parameters
        head = "@dataclass\n" + signature(f"class {name}", cls)
    lines = [f"### `{name}`", "", *_code(head)]
    doc = first_paragraph(cls)
    lines += [doc, ""] if doc else []
    return lines


def reference_page() -> str:
    import npc_nb

    kinds = public_names()
    lines = _header("Python API reference", "`npc_nb.__all__` and the docstrings")
    lines += [
        "Words first: the [glossary](glossary.md) says what each name means. Topic pages",
        "explain; this page lists. Each entry is the signature and the first paragraph of",
        "its docstring.",
        "",
        "## Functions",
        "",
    ]
    for name in kinds["functions"]:
        obj = getattr(npc_nb, name)
        lines += _entry(f"npc_nb.{name}", signature(f"npc_nb.{name}", obj), obj)
    lines += ["## Constants", ""]
    for name in kinds["constants"]:
        lines += _entry(f"npc_nb.{name}", f"npc_nb.{name} = {getattr(npc_nb, name)!r}", None)
    lines += _project_lines()
    lines += ["## Classes", ""]
    for name in kinds["classes"]:
        if name != "Project":
            cls = getattr(npc_nb, name)
            lines += _class_lines(name, cls) + _member_lines(name, cls)
    lines += ["## Errors", ""]
    for name in kinds["errors"]:
        lines += _class_lines(name, getattr(npc_nb, name))
    return "\n".join(lines).rstrip() + "\n"


def _project_lines() -> list[str]:
    import npc_nb

    lines = ["## `Project`", "", "`nb = npc_nb.open()`. " + first_paragraph(npc_nb.Project), ""]
    lines += _member_lines("nb", npc_nb.Project)
    for attribute, cls in attribute_groups().items():
        lines += [f"## `nb.{attribute}` ({cls.__name__})", "", first_paragraph(cls), ""]
        lines += _member_lines(f"nb.{attribute}", cls)
    return lines


# -- argument parsers (the CLI and the magics) --------------------------------------------


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if action.option_strings:
            names = ", ".join(f"`{o}`" for o in action.option_strings)
            takes = "" if action.nargs == 0 else f" `{action.metavar or action.dest.upper()}`"
            default = "" if action.default in (None, False) else f"`{action.default!r}`"
        else:
            names, takes = f"`{action.metavar or action.dest}`", ""
            default = "" if action.default in (None, False) else f"`{action.default!r}`"
        rows.append(f"| {names}{takes} | {default} | {_cell(action.help or '')} |")
    return rows


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = _option_rows(parser)
    if not rows:
        return ["No options.", ""]
    return ["| Argument | Default | Meaning |", "|---|---|---|", *rows, ""]


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str, Any]]:
    """(name, help, subparser) of every subcommand, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def _command_lines(prog: str, parser: argparse.ArgumentParser) -> list[str]:
    lines: list[str] = []
    for name, help_text, sub in _subcommands(parser):
        lines += [f"## `{prog} {name}`", "", *([_cell(help_text), ""] if help_text else [])]
        lines += _options_table(sub) + _command_lines(f"{prog} {name}", sub)
    return lines


def cli_page() -> str:
    from npc_nb.cli.command import build_parser

    lines = _header("`npc-nb` command reference", "the command's argparse parser")
    lines += ["`npc-nb --help` and `npc-nb COMMAND --help` print the same in a terminal.", ""]
    return "\n".join(lines + _command_lines("npc-nb", build_parser())).rstrip() + "\n"


def magics() -> dict[str, tuple[str, Any]]:
    """Magic as written (``%%npc``, ``%npc_sql``) -> (its description, its parser)."""
    from npc_nb.notebook.magics import NpcMagics

    found: dict[str, tuple[str, Any]] = {}
    for kind, prefix in (("cell", "%%"), ("line", "%")):
        for name, method in sorted(NpcMagics.magics[kind].items()):
            function = getattr(NpcMagics, method)
            parser = getattr(function, "parser", None)
            about = parser.description if parser is not None else first_paragraph(function)
            found[f"{prefix}{name}"] = (_cell(about or ""), parser)
    return found


def magics_page() -> str:
    lines = _header("Magics reference", "the magics' argument parsers")
    lines += ["`%load_ext npc_nb` registers them; `%name?` prints the same help.", ""]
    lines += ["| Magic | Does |", "|---|---|"]
    for magic, (about, _) in magics().items():
        lines.append(f"| `{magic}` | {about} |")
    lines.append("")
    for magic, (about, parser) in magics().items():
        lines += [f"## `{magic}`", "", about, ""]
        lines += _options_table(parser) if parser is not None else ["No options.", ""]
    return "\n".join(lines).rstrip() + "\n"


# -- settings -------------------------------------------------------------------------------


def _allowed(field: Any) -> str:
    """Bounds (``ge``/``le``) or the closed set of a ``Literal``; "" when any value goes."""
    ge = next((m.ge for m in field.metadata if hasattr(m, "ge")), None)
    le = next((m.le for m in field.metadata if hasattr(m, "le")), None)
    if ge is not None:
        return f"{ge} to {le}" if le is not None else f"≥ {ge}"
    literals = [field.annotation, *get_args(field.annotation)]
    values = [
        value
        for hint in literals
        if get_origin(hint) is Literal
        for value in get_args(hint)
        if isinstance(value, str)
    ]
    return ", ".join(f"`{value!r}`" for value in values)


def settings_page() -> str:
    from npc_nb import Settings

    lines = _header("Settings reference", "the `Settings` model")
    lines += [
        "Set one as `npc_nb.open(name=value)`, for a session with `nb.configure(name=value)`",
        "or `%npc_config name=value`, in the environment (the variable below), in `.env`, or",
        "in the TOML config file; [store](store.md#configuration) explains the order.",
        "",
        "| Setting | Environment variable | Default | Allowed | Meaning |",
        "|---|---|---|---|---|",
    ]
    for name, field in Settings.model_fields.items():
        env = f"NPC_NB_{name.upper()}"
        lines.append(
            f"| `{name}` | `{env}` | `{field.default!r}` | {_allowed(field)} "
            f"| {_cell(field.description or '')} |"
        )
    return "\n".join(lines) + "\n"


#: Every generated page and what writes it.
PAGES: dict[str, Callable[[], str]] = {
    "reference.md": reference_page,
    "cli.md": cli_page,
    "magics.md": magics_page,
    "settings.md": settings_page,
}


def main() -> None:
    for page, render in PAGES.items():
        (DOCS / page).write_text(render(), encoding="utf-8")
        print(f"wrote docs/{page}")


if __name__ == "__main__":
    main()
