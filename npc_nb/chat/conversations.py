"""The chat service: personas, conversations, and what ``%npc_status`` shows.

``Conversations.chat()`` is everything ``%%npc`` does, without Jupyter. It is given
what it needs when the facade builds it: the project's folder and name, the settings,
the project store, the memory core (for the memory block and what is still approved)
and the extraction queue. It keeps the per-session state of chat: personas defined in
Python, the current conversation per persona, and which ad-hoc personas were announced.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .._ids import new_id
from .._results import Reply
from .._settings import Settings
from ..errors import ConfigError, NpcError
from ..memory.core import MemoryCore
from ..models import offline
from ..store import Store, chat_log
from .extraction import Extraction
from .personas import ADHOC_DIRECTIVE, Persona, load_team, validate_name
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
    ) -> None:
        self.root = root
        self.project = project
        self.settings = settings
        self._memory = memory
        self._extraction = extraction
        self._turns = TurnContext(project, settings, store, memory, extraction)
        self._defined: dict[str, Persona] = {}
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
    ) -> Persona:
        """Define (or redefine) a persona for this session."""
        validate_name(name)
        if not isinstance(directive, str) or not directive.strip():
            raise ConfigError(f"Persona {name!r} needs a directive: what it is and how it helps.")
        persona = Persona(name, directive.strip(), model, provider, team or self.project)
        self._defined[name] = persona
        return persona

    def personas(self) -> pd.DataFrame:
        """Every persona defined in Python or in ``npc_team/*.npc``."""
        found = {**load_team(self.root, self.project), **self._defined}
        columns = ["name", "model", "provider", "team", "source", "directive"]
        return pd.DataFrame(
            [[getattr(p, c) for c in columns] for p in found.values()], columns=columns
        )

    def persona(self, name: str) -> Persona:
        """The persona called ``name``: Python definitions first, then team files, else ad hoc."""
        validate_name(name)
        if name in self._defined:
            return self._defined[name]
        team = load_team(self.root, self.project)
        if name in team:
            return team[name]
        return Persona(name, ADHOC_DIRECTIVE, team=self.project, source="ad-hoc")

    def model_for(self, persona: Persona, model: str | None = None) -> str:
        """Which model a turn uses: the argument, the persona's, the setting, else offline."""
        return model or persona.model_name or self.settings.model or offline.MODEL

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
        persona = self.persona(npc)
        chosen = self.model_for(persona, model)
        conversation_id = self._conversation_for(npc, conversation, new)
        turn = begin_turn(
            self._turns,
            persona,
            message,
            conversation_id=conversation_id,
            model=chosen,
            options=options,
            notices=self._notices(persona),
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

    def _notices(self, persona: Persona) -> list[str]:
        if persona.adhoc and persona.name not in self._announced:
            self._announced.add(persona.name)
            return [
                f"{persona.name} is not defined (no npc_team/{persona.name}.npc, no "
                f"nb.npc({persona.name!r}, ...)): using a generic research-assistant persona"
            ]
        return []

    def status(self) -> Status:
        """Personas, default model, candidates waiting, extraction jobs, store path."""
        personas = self.personas()
        return Status(
            project=self.project,
            store=str(self._turns.store.path),
            model=self.settings.model or offline.MODEL,
            personas=list(personas["name"]),
            waiting=self._memory.pending_count(),
            jobs=str(self._extraction.status()),
        )


@dataclass(frozen=True)
class Status:
    """What ``%npc_status`` shows."""

    project: str
    store: str
    model: str
    personas: list[str]
    waiting: int
    jobs: str

    @property
    def waiting_line(self) -> str:
        """The quiet line under a reply: "2 memory candidates waiting · %npc_review"."""
        plural = "" if self.waiting == 1 else "s"
        return f"{self.waiting} memory candidate{plural} waiting · %npc_review"

    def __str__(self) -> str:
        model = (
            f"{self.model} (offline demo model)" if offline.is_offline(self.model) else self.model
        )
        return "\n".join(
            [
                f"project:   {self.project} ({self.store})",
                f"model:     {model}",
                f"personas:  {', '.join(self.personas) or 'none defined (ad hoc on first use)'}",
                f"waiting:   {self.waiting} memory candidate(s) · %npc_review",
                f"{self.jobs}",
            ]
        )

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<pre>{html.escape(str(self))}</pre>"}
