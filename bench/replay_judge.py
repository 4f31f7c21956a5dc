"""A scripted model judge for the replay: it answers the package's judge prompt from the
workload's labels, through litellm's real custom-provider hook, with a chosen error rate.

The replay opens its project with ``matcher="model"`` and ``match_model=MODEL``: the
package builds its prompt, calls this "model" through its gateway and reads its JSON,
exactly as with a provider, so what is measured is the whole judge path (batching,
the verdict cache, the guards) with a judge whose quality is known. ``error`` is the
share of (candidate, memory) pairs it answers wrongly, chosen by a hash of the pair
(the same pair is always answered the same way): a wrong answer is "different" for a
same fact and "same" otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

MODEL = "benchjudge/labels"
_PROVIDER = "benchjudge"


class Calls:
    """What the scripted judge was asked: every (candidate, memories) of a call."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []
        self.tokens = 0


def install(truth: Callable[[str, str], str], error: float = 0.0) -> Calls:
    """Register the judge (``truth(candidate, memory)`` gives the right verdict)."""
    import litellm

    from npc_nb.models import gateway

    gateway._lib()  # registers the offline provider first
    calls = Calls()

    class LabelJudge(litellm.CustomLLM):  # type: ignore[misc]
        def completion(self, *args: Any, **kwargs: Any) -> Any:
            messages = kwargs["messages"]
            payload = json.loads(messages[-1]["content"])
            candidate, existing = payload["candidate"], list(payload["existing"])
            calls.asked.append((candidate, existing))
            verdicts = [_answer(truth(candidate, t), candidate, t, error) for t in existing]
            answer = json.dumps({"verdicts": [{"verdict": v, "score": 90} for v in verdicts]})
            prompt = sum(len(str(m.get("content", ""))) for m in messages) // 4
            response = kwargs["model_response"]
            response.choices[0].message.content = answer
            response.usage = litellm.Usage(
                prompt_tokens=prompt,
                completion_tokens=len(answer) // 4,
                total_tokens=prompt + len(answer) // 4,
            )
            calls.tokens += prompt + len(answer) // 4
            return response

    litellm.custom_provider_map = [
        *[p for p in litellm.custom_provider_map if p.get("provider") != _PROVIDER],
        {"provider": _PROVIDER, "custom_handler": LabelJudge()},
    ]
    return calls


def _answer(right: str, candidate: str, memory: str, error: float) -> str:
    if error <= 0:
        return right
    digest = hashlib.sha256(f"{candidate}\x00{memory}".encode()).digest()
    if int.from_bytes(digest[:4], "big") / 2**32 >= error:
        return right
    return "different" if right == "same" else "same"
