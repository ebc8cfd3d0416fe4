"""What an embedding model is to semantic recall (issue 18): the :class:`Embedder` protocol, the refusal of an
unusable model, numpy loaded with one BLAS thread, and the static token-matrix model (io: it reads files).

A static model's text vector is the mean of its first ``max_tokens`` token vectors, L2-normalised (a text
without a token: the zero vector), so cosine similarity is a dot product. Which model a repository uses, and
where it comes from, is :mod:`~git_memzoi.memzoi.recall.embedder`'s to say.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from git_memzoi.errors import InputError

EXTRA = "git-memzoi[semantic]"  # what installs semantic recall
MAX_TOKENS = 256  # a long body's tail adds little to a mean of token vectors, and costs time
RECIPE = "memzoi-embed/v1"  # what text of a record is embedded (vectors.embedded_text): part of every identity


class Embedder(Protocol):
    """What semantic recall needs of a model: a stable ``identity`` (name and content hash), the vector
    ``dimensions``, and ``embed(texts)``: a float32 numpy array of shape ``(len(texts), dimensions)`` whose
    rows are L2-normalised (or zero). A model whose queries are worded apart from its passages (e5's
    ``query: `` prefix) also has ``embed_query(texts)``, used for the query; otherwise ``embed`` is."""

    identity: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> Any: ...


class ModelRefused(InputError):
    """A configured model directory that cannot be used: its manifest, a file, or a pinned hash (exit 2)."""

    default_code = "invalid_model_manifest"


def numpy() -> Any:
    """numpy, imported here first with one BLAS thread: a query's matrix-vector product is memory-bound, and
    on a busy 2-core machine OpenBLAS's threads made it 9 × slower (0.8 ms → 7.4 ms at 10,000 × 256)."""
    if "numpy" not in sys.modules:
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")
    import numpy as np

    return np


class StaticEmbedder:
    """Mean-pooled static token embeddings (module rule): ``matrix`` (vocabulary × dimensions) and a
    ``tokenizers.Tokenizer``; ``identity`` as :attr:`Embedder.identity`."""

    def __init__(self, identity: str, matrix: Any, tokenizer: Any, max_tokens: int = MAX_TOKENS) -> None:
        np = numpy()

        self.identity = identity
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self.dimensions = int(self.matrix.shape[1])
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        tokenizer.no_padding()
        tokenizer.no_truncation()

    def embed(self, texts: Sequence[str]) -> Any:
        """The normalised mean token vector of each text, ``(len(texts), dimensions)`` float32."""
        np = numpy()

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        vocabulary = self.matrix.shape[0]
        for start in range(0, len(texts), 256):
            encoded = self.tokenizer.encode_batch(list(texts[start : start + 256]), add_special_tokens=False)
            for offset, enc in enumerate(encoded):
                ids = [i for i in enc.ids[: self.max_tokens] if 0 <= i < vocabulary]
                if ids:
                    out[start + offset] = self.matrix[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def sha256_file(path: Path) -> str:
    """The SHA-256 of the file at ``path``, hex, read in 1 MiB blocks. Raises OSError."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
