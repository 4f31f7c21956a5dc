"""Sentence embeddings from a static model shipped in a wheel: the one module that imports
wordllama. They find a candidate's paraphrases among its neighbours (the dense half of
the neighbour index) and let the offline matcher explain one differing word away.

Weights cannot be downloaded at run time here (nor on many researchers' machines), so
the model must install with its weights inside the package. ``wordllama`` (MIT) does:
a 16 MB static model, loaded once per process (about 1 s), then about 0.05 ms per
sentence on two cores. Sentence transformers in ONNX (MiniLM) judge paraphrases better
but cost 12-23 ms per sentence here, more than the whole ``add_candidate`` budget. If
wordllama is not installed, the offline matcher is lexical only and the neighbour index
BM25 only.

**Stored vectors.** Each memory keeps its vector (``memories.match_vector``), computed
once when it is inserted, so opening a store never embeds it again: the first
``DIMENSIONS`` dimensions of the model's 256 (it is trained so that a prefix is an
embedding of its own), normalised, as little-endian float16: 128 bytes a memory. A
vector of another length (another model or size) is not used, and is embedded again.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DIMENSIONS", "available", "blob", "embed", "from_blobs", "similarities"]

#: The dimensions of a stored vector (a prefix of the model's 256).
DIMENSIONS = 64
_BLOB_BYTES = 2 * DIMENSIONS
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


def available() -> bool:
    """Whether an embedding is installed (loading it, about a second the first time)."""
    return _model() is not None


def similarities(candidate: str, others: list[str]) -> list[float] | None:
    """Cosine similarity (-1 to 1) of ``candidate`` with each text, on the model's full
    dimensions, or None if no embedding is installed."""
    model = _model()
    if model is None or not others:
        return None
    vectors = model.embed([candidate, *others], norm=True)
    return [float(vectors[0] @ vector) for vector in vectors[1:]]


def embed(texts: list[str]) -> np.ndarray | None:
    """The stored-size vectors of ``texts`` (rows of ``DIMENSIONS`` float32, unit length),
    or None if no embedding is installed."""
    model = _model()
    if model is None:
        return None
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    full = np.asarray(model.embed(texts, norm=False), dtype=np.float32)[:, :DIMENSIONS]
    norms = np.linalg.norm(full, axis=1, keepdims=True)
    return full / np.where(norms > 0, norms, 1.0)


def blob(text: str) -> bytes | None:
    """The vector of one text as a memory row stores it (None without an embedding)."""
    found = embed([text])
    return None if found is None else found[0].astype("<f2").tobytes()


def from_blobs(blobs: list[Any]) -> tuple[np.ndarray, list[int]]:
    """Stored vectors as float32 rows, and the positions of those missing or of another
    size (their rows are zero: embed them again)."""
    rows = np.zeros((len(blobs), DIMENSIONS), dtype=np.float32)
    good = [i for i, b in enumerate(blobs) if b is not None and len(b) == _BLOB_BYTES]
    if good:
        joined = b"".join(bytes(blobs[i]) for i in good)
        rows[good] = np.frombuffer(joined, dtype="<f2").reshape(len(good), DIMENSIONS)
    missing = sorted(set(range(len(blobs))) - set(good))
    return rows, missing
