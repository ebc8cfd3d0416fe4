"""A tiny deterministic embedder for tests (no model, no download): hashed bag of words over a few synonyms.

Each word is mapped to a *concept* (its entry in ``SYNONYMS``, else itself), and the concept's BLAKE2 hash
picks one of ``dimensions`` axes; the vector is the normalised count. So "javascript dependency installer" and
"Use pnpm for JS installs" share the axes of ``js`` and ``install``, while plain FTS5 finds no common word.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

SYNONYMS = {
    "javascript": "js",
    "node": "js",
    "installer": "install",
    "installs": "install",
    "installing": "install",
    "dependency": "package",
    "dependencies": "package",
    "packages": "package",
    "pnpm": "package",
    "npm": "package",
    "database": "db",
    "postgres": "db",
    "schema": "db",
    "change": "migration",
    "migrations": "migration",
}


class HashedEmbedder:
    """The test embedder (the :class:`git_memzoi.memzoi.recall.embedding.Embedder` protocol)."""

    def __init__(self, dimensions: int = 64, identity: str = "tests/hashed-bow@1") -> None:
        self.dimensions = dimensions
        self.identity = identity
        self.calls: list[int] = []  # how many texts each embed() call got

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for n, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                concept = SYNONYMS.get(word, word)
                axis = int.from_bytes(hashlib.blake2b(concept.encode(), digest_size=4).digest(), "big")
                out[n, axis % self.dimensions] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
