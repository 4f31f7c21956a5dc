"""IPython front end: ``%load_ext npc_nb``, then ``%%npc``, ``%npc_status``, ``%npc_config``,
``%npc_pin``, ``%npc_diff``.

Each magic parses its arguments, calls one Project method and displays the result.
Domain errors become ``UsageError`` (IPython shows them without a traceback). The reply
streams into one display, updated at most every 50 ms; the finished reply is the cell's
result, so it is kept as ``Out[n]``. While the model client is still loading (the load
``%load_ext`` starts in the background), that display first says so, at once. A replayed
reply (``model_replay``) needs no model client and is whole at once: it shows neither
line nor live display, only the result, so a replayed notebook's saved outputs are
exactly what it shows again (strict ``pytest --nbval``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import (
    Magics,
    cell_magic,
    line_cell_magic,
    line_magic,
    magics_class,
    no_var_expand,
)
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.utils.process import arg_split

from .._foundations.results import Reply, reply_html, reply_plain, shown_hash
from .._foundations.settings import session
from .._foundations.suggestions import did_you_mean
from .._foundations.text import clean_text
from ..errors import ModelCallError, NpcError
from ..experiments.blind import check_experiment_review
from .interpolation import interpolate

if TYPE_CHECKING:
    from .._project import Project

__all__ = ["NpcMagics", "reply_with_provenance"]

_UPDATE_EVERY = 0.05
#: Shown in a ``%%npc`` cell while the model client is still loading (first turn only).
LOADING_LINE = "loading the model client (first call only)..."


@contextmanager
def _as_usage_errors(model_option: str | None = None) -> Iterator[None]:
    """Domain errors as UsageError; ``model_option`` ("--model") names the option that
    chooses the model where the user is, in the way round a failed model call."""
    import duckdb  # loaded already whenever a store is open

    try:
        yield
    except ModelCallError as exc:
        if model_option is None:
            raise UsageError(str(exc)) from exc
        from ..models.offline import MODEL  # loaded already by the failed call

        instead = f"use {model_option} {MODEL} to try things offline"
        raise UsageError(str(exc.instead(instead))) from exc
    except (NpcError, duckdb.Error) as exc:
        raise UsageError(str(exc)) from exc


def parse_options(magic: Any, line: str) -> Any:
    """``parse_argstring``, except that an option the magic does not know is a
    UsageError naming the closest one it does (``--modle``: did you mean ``--model``?)."""
    try:
        return parse_argstring(magic, line)
    except UsageError:
        unknown, known = _unknown_option(magic.parser, line)
        if unknown is None:
            raise
        raise UsageError(
            f"Unknown option {unknown}.{did_you_mean(unknown, known, show=str)} "
            f"Options: {', '.join(known)}."
        ) from None


def _unknown_option(parser: Any, line: str) -> tuple[str | None, list[str]]:
    """The first option-like word of ``line`` that is none of the parser's options (nor,
    as argparse allows, an abbreviation of a long one), and the long options."""
    options = list(parser._option_string_actions)
    known = sorted(o for o in options if o.startswith("--"))
    for word in arg_split(line, strict=False):
        name = word.split("=", 1)[0]
        if not name.startswith("-") or name == "-" or re.fullmatch(r"-[\d.]+", name):
            continue
        if name.startswith("--"):
            if not any(option.startswith(name) for option in known):
                return name, known
        elif name[:2] not in options:
            return name, known
    return None, known


_LITERALS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)


def bind_names(sql: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """The notebook variables a query names as ``$name``: bound, never pasted into SQL.

    A ``$word`` inside a string literal, a quoted name or a comment is text, not a
    parameter.
    """
    code = _LITERALS.sub(" ", sql)
    names = dict.fromkeys(re.findall(r"\$([A-Za-z_]\w*)", code))
    missing = [name for name in names if name not in namespace]
    if missing:
        raise UsageError(f"${missing[0]}: no variable {missing[0]!r} in the notebook.")
    values = {name: namespace[name] for name in names}
    for name, value in values.items():
        if isinstance(value, str) and clean_text(value) != value:
            raise UsageError(f"${name} holds text that is not valid Unicode; clean it first.")
    return values


def _live_bundle(shown: str, notices: list[str]) -> dict[str, str]:
    """The reply so far, rendered like the finished one (its notices above it): partial
    Markdown stays inert."""
    return {
        "text/plain": reply_plain(shown, notices=notices),
        "text/html": reply_html(shown, notices=notices),
    }


def reply_with_provenance(reply: Reply) -> tuple[dict[str, str], dict[str, Any]]:
    """A reply as a cell shows it, with what it was built on in the output's metadata
    (``{"npc_nb": Reply.provenance()}``, with the hash of the output as shown), so a
    saved notebook says what each cell saw, and an edit of the saved reply shows."""
    bundle = reply._repr_mimebundle_()
    return bundle, {"npc_nb": reply.provenance() | {"output_hash": shown_hash(bundle)}}


_LIST_HELP = "the queue as a table (text first; every column: nb.review_queue()), no panel"
_AUTO_HELP = (
    "list what was merged, suppressed or reinforced without asking since the last review; "
    "a number key puts one back in the queue as its own card"
)
_AUDIT_HELP = (
    "the blind review of this audit's sampled cards (nb.audit): its progress is shown, "
    "never a tally or its errors"
)
_ADJUDICATE_HELP = (
    "independent review: the cards whose votes disagree, votes side by side; a number key "
    "decides as that vote says"
)


def _open_review(project: Any, args: Any) -> Any:
    """What ``%npc_review`` shows for its options: an audit's or an experiment's blind
    panel, the queue as a table (``--list``), or the review panel."""
    filters = dict(npc=args.npc, category=args.category, conversation=args.conversation)
    if args.audit is not None:
        from ..review import check_audit_review  # the project is open: loaded by now

        others = {f"--{name}": value for name, value in filters.items()}
        others |= {"--list": args.list, "--auto": args.auto, "--experiment": args.experiment}
        check_audit_review(args.audit, **others, **{"--adjudicate": args.adjudicate})
        return project.review(audit=args.audit, by=args.by)
    if args.experiment is not None:
        check_experiment_review(args.experiment, *filters.values())
        return project.experiment(args.experiment).review(by=args.by, adjudicate=args.adjudicate)
    if args.list:
        if args.auto:
            return project.automatic_outcomes(unlisted_only=True, npc=args.npc)
        from ..review.queue_table import QueueTable  # pandas: not at %load_ext

        queue = project.review_queue(**filters, by=args.by, adjudicate=args.adjudicate)
        return QueueTable(queue, filters)
    return project.review(**filters, by=args.by, auto=args.auto, adjudicate=args.adjudicate)


@magics_class
class NpcMagics(Magics):
    """The npc_nb magics; one Project per kernel, opened from the working directory."""

    def __init__(self, shell: Any, project: Project | None = None) -> None:
        super().__init__(shell)
        self._project = project

    @property
    def _shell(self) -> Any:
        """The shell the magics are registered with (always set once they are)."""
        if self.shell is None:
            raise UsageError("The npc_nb magics are not registered with a shell.")
        return self.shell

    @property
    def project(self) -> Project:
        """The Project opened last in this kernel, else the one at the working directory."""
        from .._project import latest_project, open_project  # pandas, DuckDB: on first use

        latest = latest_project()
        if latest is not None and latest is not self._project:
            self._project = latest
        if self._project is None:
            with _as_usage_errors():
                self._project = open_project()
        return self._project

    @magic_arguments()
    @argument("name", help="the persona (defined in Python, in npc_team/, or ad hoc)")
    @argument("--model", "-m", help="litellm model for this turn, e.g. openai/gpt-4o-mini")
    @argument("--new", action="store_true", help="start a new conversation with the persona")
    @argument("--no-stream", action="store_true", help="show the reply only when complete")
    @argument("--vars", action="store_true", help="replace {name} by notebook variables")
    @no_var_expand
    @cell_magic
    def npc(self, line: str, cell: str) -> Reply:
        """Talk to a persona: the cell is the message; the reply streams in below."""
        args = parse_options(self.npc, line)
        with _as_usage_errors(model_option="--model"), self._loading_line() as live:
            message = interpolate(cell, self._shell.user_ns) if args.vars else cell
            result = self.project.chat(
                args.name,
                message.strip(),
                model=args.model,
                new=args.new,
                stream=not args.no_stream,
                where=self._where(),
            )
            reply = result if isinstance(result, Reply) else self._show_stream(result, live)
            if reply.snapshot is None:  # a pinned reply shows what it stood on, nothing live
                reply.footnotes.append(self.project.status().waiting_line)
            reply.retry_hint = "%npc_retry"
        return reply

    def _where(self) -> dict[str, Any]:
        namespace = self._shell.user_ns
        return {
            "execution_count": self._shell.displayhook.prompt_count,
            # The notebook's path, where the front end says (JupyterLab, VS Code).
            "notebook_path": namespace.get("__session__") or namespace.get("__vsc_ipynb_file__"),
        }

    @contextmanager
    def _loading_line(self) -> Iterator[Any]:
        """While the model client is still loading (the first turn after ``%load_ext``),
        a line in the cell says so at once; the live reply takes its place, as does the
        result or the error. Yields that display's handle, or None (no line shown)."""
        from ..models import gateway  # imported already by the load %load_ext started
        from ..models.recording import effective_mode

        replaying = effective_mode(self.project.settings) == "replay"
        if not getattr(self.shell, "kernel", None) or replaying or gateway.client_loaded():
            yield None
            return
        from IPython.display import clear_output, display

        handle = display({"text/plain": LOADING_LINE}, raw=True, display_id=True)
        try:
            yield handle
        finally:
            clear_output(wait=True)  # whatever comes next replaces it

    def _show_stream(self, stream: Any, live: Any = None) -> Reply:
        if not getattr(self.shell, "kernel", None) or stream.replayed:  # nothing to watch
            for _ in stream:
                pass
            return stream.reply
        from IPython.display import clear_output, display

        bundle = _live_bundle("…", stream.notices)
        if live is None:
            handle = display(bundle, raw=True, display_id=True)
        else:  # the loading line's display: the reply takes its place
            handle = live
            handle.update(bundle, raw=True)
        shown, last = "", 0.0
        for chunk in stream:
            shown += chunk
            if time.monotonic() - last >= _UPDATE_EVERY:
                handle.update(_live_bundle(shown, stream.notices), raw=True)
                last = time.monotonic()
        clear_output(wait=True)  # the finished reply replaces the live one as Out[n]
        return stream.reply

    @magic_arguments()
    @argument("-o", "--output", help="also assign the DataFrame to this notebook variable")
    @argument("--write", action="store_true", help="allow statements that change the store")
    @no_var_expand
    @line_cell_magic
    def npc_sql(self, line: str, cell: str | None = None) -> Any:
        """SQL on the project store, as a DataFrame; $name binds a notebook variable.

        %npc_sql SELECT * FROM v_memories WHERE npc = $who
        %%npc_sql -o frame      (then the query in the cell; --write to allow changes)
        """
        if cell is None and re.match(r"\s*(-o\b|--output\b|--write\b)", line):
            raise UsageError("Options go on a cell: %%npc_sql -o NAME --write, then the SQL.")
        args = parse_options(self.npc_sql, line) if cell is not None else None
        sql = cell if cell is not None else line
        with _as_usage_errors():
            frame = self.project.sql(
                sql, bind_names(sql, self._shell.user_ns), allow_write=bool(args and args.write)
            )
        if args and args.output:
            self._shell.user_ns[args.output] = frame
        return frame

    @magic_arguments()
    @argument("--npc", help="only this persona's memories")
    @argument("--category", help="only this category")
    @argument("--focus", help="a concept: draw only its neighbourhood")
    @argument("--depth", type=int, default=2, help="steps around --focus (default 2)")
    @argument("--max-nodes", type=int, default=250, help="draw at most this many nodes")
    @argument(
        "--as-of",
        dest="as_of",
        help="draw it as it stood then: a snapshot's label or id, or an ISO 8601 time",
    )
    @argument(
        "--pyvis",
        action="store_true",
        help="draw it with pyvis: nb.graph.pyvis(...), to change and show again; each "
        "such output carries vis-network (~0.7 MB) in the saved notebook",
    )
    @line_magic
    def npc_graph(self, line: str) -> Any:
        """Draw the knowledge graph of approved memories inline (offline): by default the
        light renderer (the graph as data, ~20-60 KB a drawing); with --pyvis the same
        drawing as a pyvis network (a whole offline page, ~0.7 MB a drawing)."""
        args = parse_options(self.npc_graph, line)
        draw = self.project.graph.pyvis if args.pyvis else self.project.graph.show
        with _as_usage_errors():
            return draw(
                npc=args.npc,
                category=args.category,
                focus=args.focus,
                depth=args.depth,
                as_of=args.as_of,
                max_nodes=args.max_nodes,
            )

    @magic_arguments()
    @argument("--npc", help="only this persona's candidates")
    @argument("--category", help="only this category")
    @argument("--conversation", help="only candidates from this conversation id")
    @argument("--list", action="store_true", help=_LIST_HELP)
    @argument("--by", help="reviewer name recorded on decisions (default: the configured one)")
    @argument("--auto", action="store_true", help=_AUTO_HELP)
    @argument("--adjudicate", action="store_true", help=_ADJUDICATE_HELP)
    @argument("--experiment", help="the blind review of this extraction experiment's cards")
    @argument("--audit", metavar="NAME", help=_AUDIT_HELP)
    @line_magic
    def npc_review(self, line: str) -> Any:
        """Open the review panel: one candidate at a time, single keys a r e s d u ?"""
        args = parse_options(self.npc_review, line)
        with _as_usage_errors():
            return _open_review(self.project, args)

    @line_magic
    def npc_status(self, line: str) -> Any:
        """Personas, model, candidates waiting for review, extraction jobs, store path."""
        with _as_usage_errors():
            return self.project.status()

    @magic_arguments()
    @argument("job", nargs="?", help="one job id (default: every failed job)")
    @line_magic
    def npc_retry(self, line: str) -> Any:
        """Queue failed extraction jobs again with the current settings (after fixing
        what made them fail, e.g. %npc_config extraction_model=...)."""
        args = parse_options(self.npc_retry, line)
        with _as_usage_errors():
            self.project.extraction.retry(args.job)
            return self.project.extraction.status()

    @magic_arguments()
    @argument(
        "snapshot",
        nargs="?",
        help="a snapshot's label or id; now: take a snapshot and pin to it; off: unpin",
    )
    @line_magic
    def npc_pin(self, line: str) -> None:
        """Pin this kernel's memory to a snapshot: every %%npc turn (and nb.chat) injects
        the memory as it stood then. %npc_pin LABEL|ID|now|off; alone, shows the pin."""
        args = parse_argstring(self.npc_pin, line)
        with _as_usage_errors():
            if args.snapshot is not None:
                self.project.configure(pin=args.snapshot)
                session.remember(str(self.project.store_path), {"pin": self.project.settings.pin})
            pinned = self.project.status().pinned
        print(pinned or "memory not pinned: every turn reads the memory as it is")

    @magic_arguments()
    @argument("a", help="the earlier state: a snapshot's label or id, or an ISO 8601 time")
    @argument("b", nargs="?", help="the later state (default: now)")
    @line_magic
    def npc_diff(self, line: str) -> Any:
        """What changed in the approved memory between two states: %npc_diff a [b]"""
        args = parse_argstring(self.npc_diff, line)
        with _as_usage_errors():
            return self.project.diff(args.a, args.b)

    @no_var_expand
    @line_magic
    def npc_config(self, line: str) -> Any:
        """Show settings, or set some for this session: %npc_config model=openai/gpt-4o-mini

        Every setting applies at once to the running session (lock timeouts included);
        all of a line's assignments are checked before any is applied.
        """
        if not line.strip():
            return self.project.settings
        changes = {}
        for assignment in line.split():
            key, sep, value = assignment.partition("=")
            if not sep or not key:
                raise UsageError(f"Use key=value with a known setting; got {assignment!r}.")
            changes[key] = None if value in ("", "None") else value
        with _as_usage_errors():
            settings = self.project.configure(**changes)
        kept = {key: getattr(settings, key) for key in changes}
        session.remember(str(self.project.store_path), kept)  # kept across npc_nb.open()
        return settings
