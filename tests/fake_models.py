"""A scriptable model registered through litellm's real custom-provider hook.

Tests put raw outputs on ``SCRIPT``; each call of model ``scripted/any`` returns the next
one (or raises it, if it is an exception) and records the messages it received. A
``Gate`` on the script holds the call that takes it until the test opens the gate.

Calls of the same-fact judge (the model judge of ``matcher="auto"``/``"model"``, known
by its prompt's marker) are apart: they take ``JUDGE_SCRIPT`` (outputs, exceptions or
gates) and are recorded in ``JUDGED``; with nothing scripted they answer as the offline
demo model does (the offline matcher's verdicts), so a test about chat or extraction
keeps its script whatever the judge is asked.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm

from npc_nb.models import gateway, offline

SCRIPT: list[Any] = []
RECEIVED: list[list[dict]] = []
JUDGE_SCRIPT: list[Any] = []
JUDGED: list[dict] = []  # each judge call's payload: {"candidate": ..., "existing": [...]}


class Gate:
    """A scripted output the model call returns only once the test calls ``open()``: the
    thread making the call (the extraction worker) is held inside it until then."""

    def __init__(self, output: str) -> None:
        self.output = output
        self.entered = threading.Event()  # a model call is waiting at the gate
        self.finished = threading.Event()  # ... and has returned
        self._opened = threading.Event()
        self._test_thread = threading.get_ident()

    def open(self) -> None:
        self._opened.set()

    def __call__(self) -> str:
        self.entered.set()
        try:
            if threading.get_ident() == self._test_thread:  # waiting would never end
                raise RuntimeError("the gated model call ran in the test's own thread")
            if not self._opened.wait(timeout=300):
                raise TimeoutError("the test never opened the gate")
            return self.output
        finally:
            self.finished.set()


#: What the gated extractions of ``gated_two_memories`` find in "We decided to use
#: DuckDB. I prefer short answers."
TWO_MEMORIES = [
    {"statement": "We use DuckDB.", "category": "decision",
     "evidence_quote": "We decided to use DuckDB."},
    {"statement": "The user prefers short answers.", "category": "preference",
     "evidence_quote": "I prefer short answers."},
]  # fmt: skip


def gated_two_memories() -> Gate:
    """Script the next extraction to find ``TWO_MEMORIES``, held at a gate."""
    gate = Gate(json.dumps({"memories": TWO_MEMORIES}))
    SCRIPT.append(gate)
    return gate


def judge_answer(*verdicts: str) -> str:
    """A judge's JSON answer with these verdicts, in order."""
    return json.dumps({"verdicts": [{"verdict": v, "score": 90} for v in verdicts]})


class ScriptedModel(litellm.CustomLLM):
    def completion(self, *args: Any, **kwargs: Any) -> Any:
        messages = kwargs["messages"]
        response = kwargs["model_response"]
        if offline.JUDGE_MARKER in str(messages[0].get("content", "")):
            output = self._judge(messages)
            response.usage = litellm.Usage(
                prompt_tokens=100, completion_tokens=20, total_tokens=120
            )
        else:
            RECEIVED.append(messages)
            output = SCRIPT.pop(0) if SCRIPT else '{"memories": []}'
        if isinstance(output, Gate):
            output = output()
        if isinstance(output, Exception):
            raise output
        response.choices[0].message.content = output
        return response

    def _judge(self, messages: list[dict]) -> Any:
        JUDGED.append(json.loads(messages[-1]["content"]))
        return JUDGE_SCRIPT.pop(0) if JUDGE_SCRIPT else offline.judge(messages)

    def streaming(self, *args: Any, **kwargs: Any) -> Any:
        """The next scripted output in 3-character chunks (so tags get split)."""
        RECEIVED.append(kwargs["messages"])
        output = SCRIPT.pop(0) if SCRIPT else "ok"
        pieces = [output[i : i + 3] for i in range(0, len(output), 3)] or [""]
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            yield {
                "text": piece,
                "is_finished": last,
                "finish_reason": "stop" if last else "",
                "usage": None,
                "index": 0,
                "tool_use": None,
            }


def install() -> None:
    gateway._lib()  # registers the offline provider first
    litellm.custom_provider_map = [
        *[p for p in litellm.custom_provider_map if p["provider"] != "scripted"],
        {"provider": "scripted", "custom_handler": ScriptedModel()},
    ]
    SCRIPT.clear()
    RECEIVED.clear()
    JUDGE_SCRIPT.clear()
    JUDGED.clear()
