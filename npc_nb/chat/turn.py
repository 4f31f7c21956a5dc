"""One chat turn: record the user's message, build the prompt, call the model, record.

The user's message is stored before the model is called, so a failed call (missing key,
rate limit, ...) loses nothing. The reply is scrubbed of memory tags before it is shown
or stored (chunk by chunk when streamed), its prompt's memories are recorded in
``context_injections``, and an extraction job is queued; the caller never waits for it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._foundations.ids import new_id
from .._foundations.results import Reply
from .._foundations.settings import Settings
from .._foundations.text import clean_text
from .._foundations.utc import utc_now
from ..errors import CandidateError, NpcError
from ..memory.block import MemoryBlock, StreamScrubber, scrub_memory_tags
from ..memory.core import MemoryCore
from ..models import gateway
from ..models.recording import Completion, Recorder, Recording, ReplayedStream
from ..store import Store
from ..store.conversations import chat_log
from . import prompts
from .extraction import Extraction, failure_notice
from .personas import Npc

__all__ = ["ReplyStream", "Turn", "TurnContext", "begin_turn"]


@dataclass
class TurnContext:
    """What every turn of one project needs, handed over by the chat service."""

    project: str  # the project's name
    settings: Settings
    store: Store  # the project store: conversations, messages, injections, jobs
    memory: MemoryCore  # the memory block, and what is still approved
    extraction: Extraction
    recorder: Recorder  # model_replay: the turn's call recorded or replayed
    known_conversations: set[str] = field(default_factory=set)


@dataclass
class Turn:
    """A chat turn between recording the user's message and recording the reply."""

    context: TurnContext
    persona: Npc
    model: str
    conversation_id: str
    user_message_id: str
    user_text: str
    block: MemoryBlock
    messages: list[dict]
    options: dict[str, Any] = field(repr=False)  # may hold api_key, api_base's password
    notices: list[str]
    started: float
    caller: str = ""  # who makes the model call, as a recording names it

    def complete(self) -> Reply:
        recording = self._recording()
        result = gateway.complete(self.model, self.messages, recording=recording, **self.options)
        return self.finish(scrub_memory_tags(result.text), result)

    def stream(self) -> ReplyStream:
        recording = self._recording()
        source = gateway.stream(self.model, self.messages, recording=recording, **self.options)
        return ReplyStream(self, source)

    def _recording(self) -> Recording | None:
        return self.context.recorder.recording(self.caller, block_hash=self.block.hash)

    def finish(self, text: str, result: Completion | None) -> Reply:
        """Store the reply and what its prompt carried; queue extraction."""
        context, now = self.context, utc_now()
        message_id = new_id()
        latency = (time.perf_counter() - self.started) * 1000
        # Earlier exchanges' failures, read before this one's job exists to fail.
        failed = failure_notice(context.extraction.unreported_failures())
        with context.store.write() as con:
            chat_log.insert_row(
                con,
                "messages",
                {
                    "id": message_id,
                    "conversation_id": self.conversation_id,
                    "role": "assistant",
                    "content": text,
                    "npc": self.persona.name,
                    "model": self.model,
                    "provider": gateway.provider_of(self.model),
                    "prompt_tokens": result.prompt_tokens if result else None,
                    "completion_tokens": result.completion_tokens if result else None,
                    "latency_ms": latency,
                    "created_at": now,
                },
            )
            chat_log.insert_injections(
                con, message_id, self.block.memory_ids, self.block.memory_hashes, now
            )
            context.extraction.enqueue(
                con,
                conversation_id=self.conversation_id,
                user_message_id=self.user_message_id,
                message_id=message_id,
                npc=self.persona.name,
                team=self.persona.team,
                **self._extraction_target(),
            )
        context.extraction.kick()
        return Reply(
            text,
            self.persona.name,
            self.conversation_id,
            self.user_message_id,
            message_id,
            self.model,
            gateway.provider_of(self.model),
            result.prompt_tokens if result else None,
            result.completion_tokens if result else None,
            latency,
            list(self.block.memory_ids),
            self.messages,
            self.notices,
            adhoc=self.persona.adhoc,
            failed_extraction=failed,
            footnotes=self._pinned_line(),
            snapshot=self.block.snapshot,
            block_hash=self.block.hash,
            as_of=self.block.as_of,
            team=self.persona.team,
            max_chars=context.settings.context_max_chars,
            recording_id=result.recording_id if result else None,
        )

    def _pinned_line(self) -> list[str]:
        """The status line of a turn whose memory is pinned to a snapshot."""
        if self.block.snapshot is None:
            return []
        return [self.context.memory.snapshots.find(self.block.snapshot).status_line()]

    def _extraction_target(self) -> dict[str, Any]:
        """The configured extraction model at its default endpoint, else this turn's
        model where this turn called it (its endpoint, and its credentials in memory)."""
        configured = self.context.settings.extraction_model
        if configured:
            return {"model": configured}
        return {
            "model": self.model,
            "endpoint": gateway.endpoint_options(self.options),
            "secrets": gateway.secret_options(self.options),
        }


class ReplyStream:
    """Scrubbed text chunks as the model sends them; ``reply`` once the stream ends."""

    def __init__(self, turn: Turn, source: gateway.ModelStream | ReplayedStream) -> None:
        self.turn = turn
        self._source = source
        self._started = False
        self.reply: Reply | None = None

    @property
    def notices(self) -> list[str]:
        """What the reader must see with this reply (known before the first chunk)."""
        return self.turn.notices

    @property
    def replayed(self) -> bool:
        """Whether the reply comes from a recording: whole at once, nothing to watch."""
        return isinstance(self._source, ReplayedStream)

    def __iter__(self) -> Iterator[str]:
        if self.reply is not None or self._started:
            raise NpcError("A reply stream can be read once; use its .reply afterwards.")
        self._started = True
        scrubber, shown = StreamScrubber(), []
        for chunk in self._source:
            if safe := scrubber.feed(chunk):
                shown.append(safe)
                yield safe
        if rest := scrubber.finish():
            shown.append(rest)
            yield rest
        # Scrub the whole once more before storing: stored replies become history.
        self.reply = self.turn.finish(scrub_memory_tags("".join(shown)), self._source.result)


def begin_turn(
    context: TurnContext,
    persona: Npc,
    message: str,
    *,
    conversation_id: str,
    model: str,
    options: dict[str, Any],
    notices: list[str],
    where: dict[str, Any],
) -> Turn:
    """Record the user's message and build the prompt for the model."""
    if not isinstance(message, str) or not message.strip():
        raise CandidateError("The message is empty; write something to send to the persona.")
    message = clean_text(message)
    started = time.perf_counter()
    store = context.store
    history = chat_log.history(store, conversation_id, context.settings.history_messages)
    block = context.memory.context_block(persona.name, team=persona.team, query=message)
    replies = [m["id"] for m in history if m["role"] == "assistant"]
    history = prompts.withhold_retracted(
        history,
        chat_log.injected_versions(store, replies),
        context.memory.approved_versions(persona.name, persona.team),
    )
    messages = prompts.chat_messages(
        persona,
        block.text,
        history,
        message,
        cache_breakpoint=gateway.supports_cache_breakpoint(model),
    )
    user_message_id = _store_user_message(
        context, persona, message, conversation_id=conversation_id, model=model, where=where
    )
    return Turn(
        context,
        persona,
        model,
        conversation_id,
        user_message_id,
        message,
        block,
        messages,
        options,
        notices,
        started,
        caller=_caller(persona, where),
    )


def _caller(persona: Npc, where: dict[str, Any]) -> str:
    """The turn as an error names it: the persona, and the cell it came from if known."""
    cell = where.get("execution_count")
    path = where.get("notebook_path")
    place = f"cell [{cell}]" if cell is not None else ""
    if path:
        place = f"{place} of {path}" if place else str(path)
    return f"%%npc {persona.name}" + (f", {place}" if place else "")


def _store_user_message(
    context: TurnContext,
    persona: Npc,
    message: str,
    *,
    conversation_id: str,
    model: str,
    where: dict[str, Any],
) -> str:
    """Store the user's message (and its conversation, if new) before the model call."""
    store, now = context.store, utc_now()
    user_message_id = new_id()
    with store.write() as con:
        if conversation_id not in context.known_conversations and (
            chat_log.conversation(store, conversation_id) is None
        ):
            chat_log.insert_row(
                con,
                "conversations",
                {
                    "id": conversation_id,
                    "npc": persona.name,
                    "team": persona.team,
                    "project": context.project,
                    "model": model,
                    "provider": gateway.provider_of(model),
                    "started_at": now,
                },
            )
        chat_log.insert_row(
            con,
            "messages",
            {
                "id": user_message_id,
                "conversation_id": conversation_id,
                "role": "user",
                "content": message,
                "npc": persona.name,
                "model": model,
                "created_at": now,
                "notebook_path": where.get("notebook_path"),
                "execution_count": where.get("execution_count"),
            },
        )
    context.known_conversations.add(conversation_id)  # only once it has committed
    return user_message_id
