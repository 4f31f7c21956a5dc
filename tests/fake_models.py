"""A scriptable model registered through litellm's real custom-provider hook.

Tests put raw outputs on ``SCRIPT``; each call of model ``scripted/any`` returns the next
one (or raises it, if it is an exception) and records the messages it received.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm

from npc_nb.models import gateway

SCRIPT: list[Any] = []
RECEIVED: list[list[dict]] = []


class ScriptedModel(litellm.CustomLLM):
    def completion(self, *args: Any, **kwargs: Any) -> Any:
        RECEIVED.append(kwargs["messages"])
        output = SCRIPT.pop(0) if SCRIPT else '{"memories": []}'
        if isinstance(output, Exception):
            raise output
        response = kwargs["model_response"]
        response.choices[0].message.content = output
        return response

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
