"""Which key a hosted model needs, known before litellm is imported or a socket opened.

A call to a hosted model without its key used to pay the whole litellm import (5–7 s)
before the provider said "Missing credentials". The gateway asks ``missing_keys`` first:
for the common providers this module knows the environment variables litellm reads, so a
call without any of them fails at once, naming the variable to set. It refuses only when
sure that litellm would find no key either, so it never refuses:

- a provider outside ``PROVIDERS`` (azure, bedrock, vertex_ai, ollama, the offline
  model, a custom provider): those authenticate other ways, or need no key, and
  litellm's own check (fast once it is loaded) still reports what is missing;
- a call that passes a credential (``api_key=``, ``extra_headers=``, ...), its own
  endpoint (``api_base=``, ``base_url=``: a local server or a proxy may need no key), or
  litellm's ``mock_response=`` (no provider is called);
- a provider whose endpoint is moved in the environment (``OPENAI_BASE_URL``, ...);
- a key litellm can still find: set on litellm itself (``litellm.api_key``,
  ``litellm.openai_key``, ...) once it is imported, or in the ``.env`` file that
  litellm loads into the environment when it is imported.

An empty or blank variable counts as unset, as it does for litellm. Nothing here imports
litellm (the gateway hands in the module once it is loaded): a model string's provider
is its prefix (``openai/gpt-4o-mini``) or the ``custom_llm_provider`` option; a bare name
(``gpt-4o``) is resolved by litellm only if it is loaded already, else not checked here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PROVIDERS", "ProviderKeys", "missing_keys"]


@dataclass(frozen=True)
class ProviderKeys:
    """The environment variables one provider's key is read from (any one will do; the
    first is the one to name), those that point it at another endpoint, and litellm's
    module attribute for its key."""

    keys: tuple[str, ...]
    endpoints: tuple[str, ...] = ()
    attribute: str | None = None


#: The variables litellm 1.110 reads for each provider (its ``get_secret`` calls).
PROVIDERS = {
    "openai": ProviderKeys(
        ("OPENAI_API_KEY",), ("OPENAI_BASE_URL", "OPENAI_API_BASE"), "openai_key"
    ),
    "anthropic": ProviderKeys(
        ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_FEDERATION_RULE_ID"),
        ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
        "anthropic_key",
    ),
    "gemini": ProviderKeys(
        ("GEMINI_API_KEY", "GOOGLE_API_KEY", "PALM_API_KEY"), ("GEMINI_API_BASE",)
    ),
    "mistral": ProviderKeys(("MISTRAL_API_KEY",), ("MISTRAL_API_BASE",)),
    "groq": ProviderKeys(("GROQ_API_KEY",), ("GROQ_API_BASE",), "groq_key"),
    "deepseek": ProviderKeys(("DEEPSEEK_API_KEY",), ("DEEPSEEK_API_BASE",)),
    "xai": ProviderKeys(("XAI_API_KEY",), ("XAI_API_BASE",), "xai_key"),
    "openrouter": ProviderKeys(
        ("OPENROUTER_API_KEY", "OR_API_KEY"), ("OPENROUTER_API_BASE",), "openrouter_key"
    ),
    "together_ai": ProviderKeys(
        ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_AI_TOKEN"),
        ("TOGETHER_AI_API_BASE",),
        "togetherai_api_key",
    ),
    "cohere": ProviderKeys(("COHERE_API_KEY", "CO_API_KEY"), ("COHERE_API_BASE",), "cohere_key"),
}
#: Call options that carry a credential, name an endpoint, or answer in place of the
#: provider (litellm's ``mock_response``): such a call needs no key from the environment.
_CALLER_SUPPLIED = (
    "api_key",
    "mock_response",
    "api_base",
    "base_url",
    "azure_ad_token",
    "client_secret",
    "extra_headers",
    "headers",
)


def missing_keys(
    model: str,
    options: Mapping[str, Any],
    litellm: Any = None,
    environ: Mapping[str, str] = os.environ,
) -> list[str]:
    """The variables to set (any one of them) before ``model`` can be called, or ``[]``
    when a key is there or this module cannot be sure that none is. ``litellm`` is the
    module once the gateway has loaded it, else None."""
    if any(options.get(name) is not None for name in _CALLER_SUPPLIED):
        return []
    wanted = PROVIDERS.get(_provider(model, options, litellm) or "")
    if wanted is None or any(_set(environ.get(name)) for name in wanted.endpoints):
        return []
    if any(_set(environ.get(name)) for name in wanted.keys):
        return []
    if _set_on_litellm(wanted, litellm) or _in_dotenv(wanted.keys, environ):
        return []
    return list(wanted.keys)


def _set(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _provider(model: str, options: Mapping[str, Any], litellm: Any) -> str | None:
    if isinstance(options.get("custom_llm_provider"), str):
        return str(options["custom_llm_provider"])
    if "/" in model:
        return model.split("/", 1)[0]
    if litellm is None:
        return None  # importing litellm to find out would cost what this check saves
    try:
        return str(litellm.get_llm_provider(model)[1])
    except Exception:  # an unknown name: the call reports it
        return None


def _set_on_litellm(wanted: ProviderKeys, litellm: Any) -> bool:
    """A key set on litellm itself, or a secret manager that may hold one (only once
    litellm is loaded: before that nobody can have set them)."""
    if litellm is None:
        return False
    names = ["api_key", *([wanted.attribute] if wanted.attribute else [])]
    if any(_set(getattr(litellm, name, None)) for name in names):
        return True
    return getattr(litellm, "secret_manager_client", None) is not None


def _in_dotenv(keys: tuple[str, ...], environ: Mapping[str, str]) -> bool:
    """Whether the ``.env`` file litellm loads on import (in a notebook the working
    directory's, or the nearest above it; none unless ``LITELLM_MODE`` is DEV, its
    default) sets one of ``keys``. Asked only when the environment has none of them."""
    if environ.get("LITELLM_MODE", "DEV") != "DEV":
        return False
    from dotenv import dotenv_values, find_dotenv

    try:
        path = find_dotenv(usecwd=True)
        values = dotenv_values(path) if path else {}
    except (OSError, UnicodeDecodeError):
        return True  # a file litellm may read and we cannot: not ours to refuse on
    return any(_set(values.get(name)) for name in keys)
