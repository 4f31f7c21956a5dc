"""Sentence similarity for the offline matcher, from a static embedding shipped in a
wheel: the one module that imports wordllama.

Weights cannot be downloaded at run time here (nor on many researchers' machines), so
the model must install with its weights inside the package. ``wordllama`` (MIT) does:
a 16 MB static model, loaded once per process (about 0.8 s), then about 0.1 ms per
sentence on two cores. Sentence transformers in ONNX (MiniLM) judge paraphrases better
but cost 12-23 ms per sentence here, more than the whole ``add_candidate`` budget. If
wordllama is not installed, the offline matcher is lexical only.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

__all__ = ["similarities"]

_lock = threading.Lock()


@functools.cache
def _model() -> Any | None:
    with _lock:
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError:
            return None
        # Its wheel keeps the weights beside the code; never reach for the hub.
        return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


def similarities(candidate: str, others: list[str]) -> list[float] | None:
    """Cosine similarity (-1 to 1) of ``candidate`` with each text, or None if no
    embedding is installed."""
    model = _model()
    if model is None or not others:
        return None
    vectors = model.embed([candidate, *others], norm=True)
    return [float(vectors[0] @ vector) for vector in vectors[1:]]
