"""The chat service: personas, conversations, and what ``%npc_status`` shows.

``Conversations.chat()`` is everything ``%%npc`` does, without Jupyter. It is given
what it needs when the facade builds it: the project's folder and name, the settings,
the project store, the memory core (for the memory block and what is still approved)
and the extraction queue. It keeps the per-session state of chat: personas defined in
Python, the current conversation per persona, and which ad-hoc personas were announced.
It also answers what the facade's persona filters and saved notebooks ask of the
conversations: whether a persona name is known (``check_npc``) and what the store holds
of a reply (``stored_reply``).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._foundations.arguments import unknown_choice
from .._foundations.ids import new_id
from .._foundations.markup import plain_text
from .._foundations.results import Reply
from .._foundations.settings import Settings
from .._foundations.tables import with_missing_as_na
from ..errors import ConfigError, NpcError
from ..memory.core import MemoryCore
from ..models import offline
from ..models.recording import Recorder
from ..store import Store
from ..store.conversations import chat_log
from ..store.runs import recordings
from .extraction import Extraction
from .personas import ADHOC_DIRECTIVE, Npc, closest_names, litellm_model, validate_name
from .team import Team, TeamContext
from .team_folder import TeamFolder
from .turn import ReplyStream, TurnContext, begin_turn

__all__ = ["Conversations", "Status"]


class Conversations:
    """Personas and conversations of one project."""

    def __init__(
        self,
        root: Path,
        project: str,
        settings: Settings,
        store: Store,
        memory: MemoryCore,
        extraction: Extraction,
        recorder: Recorder,
    ) -> None:
        self.root = root
        self.project = project
        self.settings = settings
        self._memory = memory
        self._stores = memory.stores
        self._store = store
        self._extraction = extraction
        self._turns = TurnContext(project, settings, store, memory, extraction, recorder)
        self.team_folder = TeamFolder(root, project)
        self._defined: dict[str, Npc] = {}
        self._conversations: dict[str, str] = {}
        self._announced: set[str] = set()

    def npc(
        self,
        name: str,
        *,
        directive: str,
        model: str | None = None,
        provider: str | None = None,
        team: str | None = None,
    ) -> Npc:
        """Define (or redefine) a persona for this session."""
        validate_name(name)
        if not isinstance(directive, str) or not directive.strip():
            raise ConfigError(f"Persona {name!r} needs a directive: what it is and how it helps.")
        persona = Npc(name, directive.strip(), model, provider, team or self.project)
        self._defined[name] = persona
        return persona

    def npcs(self) -> pd.DataFrame:
        """Every persona defined in Python or in ``npc_team/*.npc``; a team file that
        cannot be used is a row too, with its ``error``."""
        team = self._team()
        found = {**team.personas, **self._defined}
        columns = ["name", "model", "provider", "team", "source", "directive"]
        rows = [[getattr(p, c) for c in columns] + [None] for p in found.values()]
        rows += [
            [b.name, None, None, self.project, b.path, None, b.error]
            for b in team.broken
            if b.name is not None and b.name not in self._defined
        ]
        frame = pd.DataFrame(rows, columns=[*columns, "error"])
        return with_missing_as_na(frame, dict.fromkeys(frame.columns, "text"))

    def get_npc(self, name: str) -> Npc:
        """The persona called ``name``: Python definitions first, then team files, else ad
        hoc. A team file for ``name`` that cannot be used is a ``ConfigError``."""
        return self._resolve(name, self._team())

    def _team(self) -> Team:
        return self.team_folder.load()

    def check_npc(self, npc: str | None) -> None:
        """A persona filter must name a persona that is defined or in a store: a typo
        would otherwise read as "nothing there". The error lists the defined personas
        and those with memories, never one that was only talked to: a name mistyped in
        a cell is not offered back as a choice."""
        if npc is None:
            return
        listed, talked_to = set(self.npcs()["name"]), set()
        for store in self._stores.existing():
            remembered, only_talked_to = chat_log.persona_names(store)
            listed |= remembered
            talked_to |= only_talked_to
        if npc not in listed | talked_to:
            raise unknown_choice("persona", npc, sorted(listed))

    def stored_reply(
        self, message_id: str, user_message_id: str | None, recording_id: str | None
    ) -> dict[str, Any]:
        """What this store holds of a reply a saved notebook names (``npc_nb.provenance``):
        its text and its question (None when absent), the memories its prompt held, and
        the reply its recording kept (None when there is none)."""
        store = self._store
        reply = chat_log.message(store, message_id)
        question = chat_log.message(store, user_message_id) if user_message_id else None
        injected = chat_log.injected_versions(store, [message_id])[message_id]
        return {
            "text": reply["content"] if reply and reply["role"] == "assistant" else None,
            "question": question["content"] if question else None,
            "injected": [memory_id for memory_id, _ in injected],
            "recorded": recordings.recorded_reply(store, recording_id) if recording_id else None,
        }

    def _resolve(self, name: str, team: Team) -> Npc:
        validate_name(name)
        if name in self._defined:
            return self._defined[name]
        if name in team.personas:
            return team.personas[name]
        if broken := team.broken_persona(name):
            raise ConfigError(broken.error)
        return Npc(name, ADHOC_DIRECTIVE, team=self.project, source="ad-hoc")

    def model_for(self, persona: Npc, model: str | None = None) -> str:
        """Which model a turn uses: the argument, the persona's (its file's, else its team's
        ``.ctx``), the ``model`` setting, else the offline model."""
        return model or persona.model_name or self.settings.model or offline.MODEL

    def extraction_model_for(self, npc: str | None) -> str:
        """The model extraction of ``npc``'s exchanges uses when nothing else is named:
        the ``extraction_model`` setting, else the model its turns use (``model_for``)."""
        if self.settings.extraction_model:
            return self.settings.extraction_model
        return self.model_for(self.get_npc(npc)) if npc else self.settings.model or offline.MODEL

    def chat(
        self,
        npc: str,
        message: str,
        *,
        conversation: str | None = None,
        model: str | None = None,
        stream: bool = False,
        new: bool = False,
        where: dict[str, Any] | None = None,
        **options: Any,
    ) -> Reply | ReplyStream:
        """Send ``message`` to persona ``npc``; returns the reply (or a stream of it).

        The conversation continues this session's one with ``npc`` unless ``new=True`` or
        ``conversation=<id>`` is given. ``where`` records the notebook path and execution
        count of the cell the message came from. Extra keyword arguments go to the model call
        (``temperature=``, ``max_tokens=``, ...). With ``stream=True``, iterate the result
        for text chunks; its ``reply`` is set when the stream ends.
        """
        team = self._team()
        persona = self._resolve(npc, team)
        chosen = self.model_for(persona, model)
        conversation_id = self._conversation_for(npc, conversation, new)
        turn = begin_turn(
            self._turns,
            persona,
            message,
            conversation_id=conversation_id,
            model=chosen,
            options=options,
            notices=self._notices(persona, team),
            where=where or {},
        )
        return turn.stream() if stream else turn.complete()

    def _conversation_for(self, npc: str, conversation_id: str | None, new: bool) -> str:
        if conversation_id is not None:
            found = chat_log.conversation(self._turns.store, conversation_id)
            if found is None:
                raise NpcError(f"No conversation with id {conversation_id!r} in this project.")
            if found["npc"] != npc:
                raise NpcError(
                    f"Conversation {conversation_id!r} is with {found['npc']!r}, not {npc!r}."
                )
        elif new or npc not in self._conversations:
            conversation_id = new_id()
        else:
            conversation_id = self._conversations[npc]
        self._conversations[npc] = conversation_id
        return conversation_id

    def _notices(self, persona: Npc, team: Team) -> list[str]:
        """Said once per ad-hoc persona: it is not defined, and which name was likely
        meant (a defined persona, or one with memories)."""
        if not persona.adhoc or persona.name in self._announced:
            return []
        self._announced.add(persona.name)
        notice = (
            f"{persona.name} is not defined (no npc_team/{persona.name}.npc, no "
            f"nb.npc({persona.name!r}, ...)): using a generic research-assistant persona."
        )
        remembered, _ = chat_log.persona_names(self._turns.store)
        known = {*team.personas, *self._defined, *(b.name for b in team.broken if b.name)}
        known = (known | remembered) - {persona.name}
        if meant := closest_names(persona.name, known):
            notice += f" Did you mean {' or '.join(meant)}?"
        return [notice]

    def status(self) -> Status:
        """Personas, default model, the team's context file and broken team files,
        candidates waiting, extraction jobs, store path."""
        team = self._team()
        return Status(
            project=self.project,
            store=str(self._turns.store.path),
            model=self.settings.model or offline.MODEL,
            personas=list({**team.personas, **self._defined}),
            waiting=self._memory.pending_count(),
            jobs=str(self._extraction.status()),
            team_context=_describe(team.context) if team.context else None,
            broken=[b.error for b in team.broken],
            notes=list(team.notes),
            alerts=self._turns.store.alerts(),
            matching=self._memory.matching_status(),
            pinned=pinned.status_line() if (pinned := self._memory.pinned()) else None,
            model_replay=self._turns.recorder.mode,  # a re-run's forced mode shows
            recording=str(self._memory.identity()),
            store_setting=self.settings.store_origin(),
        )


def _describe(context: TeamContext) -> str:
    """One line about the team's ``.ctx`` file: what of it npc_nb uses."""
    model = litellm_model(context.model, context.provider)
    uses = [f"model {model}" if model else "no model"]
    if context.provider and not context.model:
        uses.append(f"provider {context.provider}")
    size = len(context.context or "")
    uses.append(f"context of {size} characters" if size else "no context")
    return f"{context.path} ({', '.join(uses)})"


@dataclass(frozen=True)
class Status:
    """What ``%npc_status`` shows. ``broken`` holds the error of each team file that
    cannot be used; ``team_context`` describes the team's ``.ctx`` file, if any;
    ``alerts`` what the store reports (decision notices it did not confirm); ``pinned``
    the status line of the snapshot the memory is pinned to, if any."""

    project: str
    store: str
    model: str
    personas: list[str]
    waiting: int
    jobs: str
    team_context: str | None = None
    broken: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)
    matching: str | None = None  # who judges re-proposals, and the model judge's work
    pinned: str | None = None  # "memory pinned to 'v1', 2026-12-04 10:31, 412 memories"
    model_replay: str = "off"
    recording: str = ""  # "recording as ada (the OS user)": who decisions are recorded for
    store_setting: str = ""  # where the store setting came from (and what was left out)

    @property
    def waiting_line(self) -> str:
        """The quiet line under a reply: "2 memory candidates waiting · %npc_review"."""
        plural = "" if self.waiting == 1 else "s"
        return f"{self.waiting} memory candidate{plural} waiting · %npc_review"

    def __str__(self) -> str:
        model = (
            f"{self.model} (offline demo model)" if offline.is_offline(self.model) else self.model
        )
        lines = [
            f"project:   {self.project} ({self.store})",
            f"store:     chosen by {self.store_setting}",
            f"reviewer:  {self.recording}",
            f"model:     {model}",
            f"personas:  {', '.join(self.personas) or 'none defined (ad hoc on first use)'}",
        ]
        if self.matching:
            lines.append(f"matching:  {self.matching}")
        if self.team_context:
            lines.append(f"team:      {self.team_context}")
        if self.pinned:
            lines.append(f"memory:    {self.pinned}")
        if self.model_replay != "off":
            verb = "recorded" if self.model_replay == "record" else "replayed from the store"
            lines.append(f"replies:   {verb} (model_replay={self.model_replay!r})")
        lines += _labelled("note:", self.notes)
        lines += _labelled("BROKEN:", self.broken)
        lines += _labelled("WARNING:", self.alerts)
        lines += [f"waiting:   {self.waiting} memory candidate(s) · %npc_review", f"{self.jobs}"]
        return "\n".join(lines)

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        text = plain_text(str(self))
        return {"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}


def _labelled(label: str, entries: list[str]) -> list[str]:
    """Each entry under ``label``, its own continuation lines indented to match."""
    return [f"{label:<10} " + entry.strip().replace("\n", "\n" + " " * 11) for entry in entries]
