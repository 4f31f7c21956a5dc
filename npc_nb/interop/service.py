"""Interop: the service the facade builds for memories in and out.

- ``export_bundle`` / ``import_bundle``: the lossless bundle (``bundle_file``, the
  store's ``bundle`` room): every table out, and into an empty project (or merged,
  never over the target's decisions), its approvals screened as candidates are
  (``bundle_gate``);
- ``import_npcpy``, ``import_mem0``, ``import_letta`` (``nb.imports.npcpy``, ``.mem0``,
  ``.letta``): another tool's file read as records (``npcpy_files``, ``mem0_files``,
  ``letta_files``) and passed through the gate (``gate``), the same trust gate extracted
  candidates pass;
- ``export_to`` (``nb.exports.to``): approved memories in another tool's import shape
  (``exports``).

Only a source that recorded a human decision (npcpy) keeps it, audited as imported;
mem0 and Letta arrive as pending candidates unless ``trust=True``, which approves
them under the importing person's name and warns (``TrustedImportWarning``).
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DecisionError, HistoryChangedError
from ..memory.core import MemoryCore
from ..store import Stores
from ..store.bundle.load import load_staged
from ..store.bundle.stage import stage_bundle, staged_disagreements
from ..store.memories.consistency import describe, disagreeing_memories
from .bundle_file import open_bundle, write_bundle
from .bundle_gate import SOURCE, screen_bundle
from .exports import export_approved
from .gate import Batch, Gate
from .letta_files import read_agent_file
from .mem0_files import read_mem0_dump, read_mem0_history
from .npcpy_files import read_knowledge_yaml, read_memory_lifecycle
from .records import ForeignRecord
from .source_file import SourceFile, open_source
from .summary import BundleImport, ImportSummary, Skipped

__all__ = ["Interop", "TrustedImportWarning"]

KNOWLEDGE_FILE = ".knowledge.yaml"


class TrustedImportWarning(UserWarning):
    """Memories were imported approved, without a review of each (``trust=True``)."""


class Interop:
    """Memories in and out of one project (see the module docstring)."""

    def __init__(
        self,
        core: MemoryCore,
        stores: Stores,
        project: str,
        version: str,
        audits: Callable[[], list[dict[str, Any]]] = list,
    ) -> None:
        self.core = core
        self.stores = stores
        self.project = project
        self.version = version
        self.audits = audits  # each audit as a bundle's manifest states it
        self.gate = Gate(core)

    # -- the bundle ------------------------------------------------------------------------

    def export_bundle(self, path: str | os.PathLike[str]) -> Path:
        """Write every table of the project's store into one bundle file (its manifest
        also states each audited batch: sample, errors, bound, status); refused while a
        memory's status or approved text disagrees with its audit events."""
        with self.stores.project.read() as con:
            refuse_disagreeing(disagreeing_memories(con), "exported")
        return write_bundle(
            self.stores.project, path, self.project, self.version, audits=self.audits()
        )

    def import_bundle(self, path: str | os.PathLike[str], *, into_nonempty: bool) -> BundleImport:
        """Load a bundle into this project: it must be empty, unless ``into_nonempty``
        (refused in independent review: the bundle's decisions would be final here
        without this project's votes)."""
        if into_nonempty and self.core.votes.independent:
            raise DecisionError(
                "A bundle merged into a project in independent review would bring its "
                "decisions in final, without the votes this project's review asks for. "
                "Nothing was imported. Import it into an empty project (a copy), or have "
                "the project's owner merge it in single review."
            )
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="npc_nb-import-") as folder:
            opened = open_bundle(path, Path(folder))
            staged = stage_bundle(Path(folder), opened.specs, opened.migrations)
            refuse_disagreeing(staged_disagreements(staged.path), "imported")
            screened = screen_bundle(self.core, staged.path, merge=into_nonempty)
            loaded = load_staged(
                self.stores.project,
                staged.path,
                merge=into_nonempty,
                project=self.project,
                kept=screened.kept,
                held=screened.reopen,
                actor=SOURCE,
            )
        return BundleImport(
            path=str(path),
            project=self.project,
            inserted=loaded.inserted,
            skipped=loaded.skipped,
            format_version=opened.format_version,
            upgraded=staged.upgraded,
            seconds=time.perf_counter() - start,
            held=screened.held,
        )

    # -- other tools ----------------------------------------------------------------------

    def import_npcpy(self, path: str | os.PathLike[str]) -> ImportSummary:
        """Import npcpy's memories: its ``.knowledge.yaml`` (or the folder holding it), or
        an older npcpy's SQLite file with its ``memory_lifecycle`` table. Its decisions
        are kept, audited as ``imported:npcpy``."""
        given = Path(path).expanduser()
        if given.is_dir():
            given = given / KNOWLEDGE_FILE
        source = open_source(given, "npcpy knowledge")
        reader = read_knowledge_yaml if source.text is not None else read_memory_lifecycle
        return self._through_gate("npcpy", source, reader(source), trust=False)

    def import_mem0(self, path: str | os.PathLike[str], *, trust: bool = False) -> ImportSummary:
        """Import a mem0 dump (the JSON ``Memory.get_all()`` returns, or mem0's SQLite
        history) as candidates for review; ``trust=True`` approves them (audited, with a
        warning)."""
        source = open_source(path, "mem0")
        reader = read_mem0_dump if source.text is not None else read_mem0_history
        return self._through_gate("mem0", source, reader(source), trust=trust)

    def import_letta(self, path: str | os.PathLike[str], *, trust: bool = False) -> ImportSummary:
        """Import a Letta agent file's (``.af``) memory blocks and archival passages as
        candidates for review; ``trust=True`` approves them (audited, with a warning)."""
        source = open_source(path, "Letta agent")
        if source.text is None:
            raise ConfigError(f"{source.path} is a SQLite file, not a Letta agent file (.af).")
        return self._through_gate("letta", source, read_agent_file(source), trust=trust)

    def _through_gate(
        self,
        name: str,
        source: SourceFile,
        records: list[ForeignRecord | Skipped],
        *,
        trust: bool,
    ) -> ImportSummary:
        _check_trust(trust)
        if trust and self.core.votes.independent:
            raise DecisionError(
                f"trust=True approves the {name} memories under one name, and in "
                "independent review every card needs its reviewers' votes. Nothing was "
                f"imported. Import without trust=True: the memories arrive as candidates "
                "for the reviewers to vote on."
            )
        start = time.perf_counter()
        summary = ImportSummary(name, str(source.path))
        if trust:
            warning = (
                f"trust=True: the {name} memories queued by this import were approved "
                "without a review of each; the audit log records it under your name."
            )
            summary.warnings.append(warning)
            warnings.warn(warning, TrustedImportWarning, stacklevel=5)  # the caller's line
        batch = Batch(name, source.path, records, source.modified, trust)
        self.gate.run(batch, summary)
        summary.seconds = time.perf_counter() - start
        return summary

    # -- out ------------------------------------------------------------------------------

    def export_to(self, kind: str, path: str | os.PathLike[str], *, as_of: object = None) -> Path:
        """Approved memories in ``kind``'s import shape (mem0, letta, npcpy), now or as
        they stood at ``as_of`` (a snapshot, its id or label, or a time)."""
        snapshots = self.core.snapshots
        state = snapshots.resolve(as_of)
        snapshots.check(state)
        return export_approved(snapshots.moments(state), self.project, kind, path)


def _check_trust(trust: object) -> None:
    if not isinstance(trust, bool):
        raise ConfigError(f"trust must be True or False, not {trust!r}.")


def refuse_disagreeing(found: list[dict], done: str) -> None:
    """A HistoryChangedError naming the memories whose rows disagree with their audit
    events, if any: a status no decision set must not travel as decided."""
    if not found:
        return
    named = " ".join(describe(row) for row in found[:5])
    more = f" ({len(found)} such memories at least)" if len(found) > 5 else ""
    raise HistoryChangedError(
        f"The bundle cannot be {done}: {named}{more} Nothing was {done}. Decide those "
        "memories again through npc_nb (nb.approve, nb.reject, ...) in the project they "
        "come from, or restore it from a copy you trust, then export again; "
        "nb.verify() lists every problem."
    )
