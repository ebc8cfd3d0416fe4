"""The sentence embedder of semantic recall: a static token-embedding model run on CPU with numpy (io).

Two sources, both offline (nothing is ever downloaded; no network call is made):

- the model bundled in the ``wordllama`` wheel (MIT; ``pip install 'git-memzoi[semantic]'``): its 32,000 × 256
  token-embedding matrix (``weights/l2_supercat_256.safetensors``, 16 MB) and tokenizer file. The files are read
  directly: ``wordllama`` itself is never imported (its package import pulls in ``requests`` and ``pydantic``,
  and its loader's fallback downloads), only its wheel's data and its runtime dependencies (numpy, safetensors,
  tokenizers);
- a local model directory named by ``[semantic] model_dir`` (relative to the repository root, or absolute),
  whose ``manifest.json`` pins every file by SHA-256, after vault-memory's local-ONNX manifest rules (seed 004,
  F09): ``schema_version`` 1, ``model``, ``revision``, ``dimensions``, ``pooling`` (``mean``), ``normalize``
  (true), ``max_tokens``, ``license``, ``tensor`` (the matrix's name) and ``files`` — ``weights`` (a
  safetensors file) and ``tokenizer`` (a ``tokenizers`` JSON), each ``{"path": <file name>, "sha256": <hex>}``.
  A hash that does not match, a file that is missing or a manifest that breaks a rule is refused (exit 2:
  ``model_hash_mismatch``, ``model_file_missing``, ``invalid_model_manifest``) before any vector is made.
  Only static (token-matrix) models are run; an ONNX graph would need a runtime this package does not ship.

A text's vector is the mean of its first ``max_tokens`` token vectors, L2-normalised (a text without a token:
the zero vector), so cosine similarity is a dot product. Each embedder has an :attr:`Embedder.identity`: its
name and the SHA-256 of its files (the bundled model) or of its manifest (a model directory, whose manifest
pins the files). The vector store keys every vector by it: another model re-embeds, never mixes
(:mod:`~git_memzoi.memzoi.recall.index.vectors`).

Tests (and only tests) install their own deterministic embedder with :func:`use`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

EXTRA = "git-memzoi[semantic]"
BUNDLED_NAME = "wordllama/l2_supercat_256"
BUNDLED_FILES = ("weights/l2_supercat_256.safetensors", "tokenizers/l2_supercat_tokenizer_config.json")
BUNDLED_TENSOR = "embedding.weight"
MAX_TOKENS = 256  # a long body's tail adds little to a mean of token vectors, and costs time
RECIPE = "memzoi-embed/v1"  # what text of a record is embedded (vectors.embedded_text): part of every identity
_MANIFEST_KEYS = ("schema_version", "model", "revision", "dimensions", "pooling", "normalize", "max_tokens", "files")


class Embedder(Protocol):
    """What semantic recall needs of a model: a stable ``identity`` (name and content hash), the vector
    ``dimensions``, and ``embed(texts)``: a float32 numpy array of shape ``(len(texts), dimensions)`` whose
    rows are L2-normalised (or zero)."""

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


_OVERRIDE: list[Embedder] = []
_LOADED: dict[tuple[str, ...], Embedder] = {}


@contextlib.contextmanager
def use(embedder: Embedder) -> Iterator[None]:
    """Inside the block every read uses ``embedder`` instead of an installed model (tests build a tiny one)."""
    _OVERRIDE.append(embedder)
    try:
        yield
    finally:
        _OVERRIDE.remove(embedder)


def bundled_dir() -> Path | None:
    """:func:`find_bundled`, asked once per process (a lookup walks ``sys.path``: 3 ms)."""
    return _find_bundled_once()


@functools.cache
def _find_bundled_once() -> Path | None:
    return find_bundled()


def find_bundled() -> Path | None:
    """The installed ``wordllama`` package's folder when it holds the bundled model's files, found without
    importing it (and so without its network-capable loader); ``None`` when it or numpy, safetensors or
    tokenizers is not installed."""
    try:
        spec = importlib.util.find_spec("wordllama")
        if spec is None or not spec.submodule_search_locations:
            return None
        if any(importlib.util.find_spec(name) is None for name in ("numpy", "safetensors", "tokenizers")):
            return None
    except (ImportError, ValueError):
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    return folder if all((folder / name).is_file() for name in BUNDLED_FILES) else None


def available(model_dir: str | None) -> bool:
    """Whether semantic recall can run here: a test embedder, a configured model directory ``model_dir``
    (whether it loads is :func:`load`'s to say), or the bundled model. Imports nothing heavy."""
    return bool(_OVERRIDE) or model_dir is not None or bundled_dir() is not None


def missing_model(mode: str) -> InputError:
    """The refusal of ``mode`` without a model (``semantic_model_missing``), naming the extra to install."""
    return InputError(
        f"--mode {mode} needs a semantic model: pip install '{EXTRA}' (or set [semantic] model_dir)",
        "semantic_model_missing",
    )


def load(layout: Layout, model_dir: str | None) -> Embedder:
    """The embedder of this repository (module rule; ``model_dir``: ``[semantic] model_dir``), loaded once per
    process and files.

    Raises:
        InputError: no model (``semantic_model_missing``); ModelRefused: a model directory breaking a
            manifest rule (``invalid_model_manifest``, ``model_file_missing``, ``model_hash_mismatch``).
    """
    if _OVERRIDE:
        return _OVERRIDE[-1]
    if model_dir is not None:
        folder = Path(model_dir).expanduser()
        where = layout.root / folder
        return _cached(("dir", str(where), str(where / "manifest.json")), lambda: _from_manifest(where))
    folder_or_none = bundled_dir()
    if folder_or_none is None:
        raise missing_model("semantic")
    folder = folder_or_none
    return _cached(("bundled", str(folder)), lambda: _bundled(folder))


def _cached(key: tuple[str, ...], make: Any) -> Embedder:
    paths = [Path(part) for part in key[1:]]
    stamp = tuple(str(p.stat().st_mtime_ns) if p.exists() else "-" for p in paths)
    full = (*key, *stamp)
    if full not in _LOADED:
        _LOADED.clear()  # one model per process
        _LOADED[full] = make()
    return _LOADED[full]


def _bundled(folder: Path) -> StaticEmbedder:
    import hashlib  # here, not at import: OpenSSL's start-up costs ~8 ms of every lexical search

    from safetensors import safe_open
    from tokenizers import Tokenizer

    weights, tokenizer = (folder / name for name in BUNDLED_FILES)
    digest = hashlib.sha256()
    for path in (weights, tokenizer):
        digest.update(_sha256(path).encode("ascii"))
    with safe_open(str(weights), framework="np") as handle:
        matrix = handle.get_tensor(BUNDLED_TENSOR)
    identity = f"{BUNDLED_NAME}#sha256:{digest.hexdigest()[:32]}/{RECIPE}"
    return StaticEmbedder(identity, matrix, Tokenizer.from_file(str(tokenizer)))


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(folder: Path) -> tuple[dict[str, Any], bytes]:
    """The checked ``manifest.json`` of a model directory and its bytes (module rule).

    Raises:
        ModelRefused: no manifest, or one breaking a rule (``invalid_model_manifest``).
    """
    where = folder / "manifest.json"
    try:
        raw = where.read_bytes()
        manifest = json.loads(raw)
    except FileNotFoundError:
        raise ModelRefused(f"{where}: no model manifest ([semantic] model_dir)", "model_file_missing") from None
    except (OSError, ValueError) as exc:
        raise ModelRefused(f"{where}: not a JSON model manifest ({type(exc).__name__})") from None
    if not isinstance(manifest, dict) or any(key not in manifest for key in _MANIFEST_KEYS):
        raise ModelRefused(f"{where}: a model manifest needs {', '.join(_MANIFEST_KEYS)}")
    if manifest["schema_version"] != 1 or manifest["pooling"] != "mean" or manifest["normalize"] is not True:
        raise ModelRefused(f"{where}: only schema_version 1, mean pooling and normalize true are supported")
    files = manifest["files"]
    if not isinstance(files, dict) or set(files) != {"weights", "tokenizer"}:
        raise ModelRefused(f"{where}: files must name exactly weights and tokenizer")
    for role, entry in files.items():
        name = entry.get("path") if isinstance(entry, dict) else None
        sha = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or os.sep in name or "/" in name or name in (".", ".."):
            raise ModelRefused(f"{where}: files.{role}.path must be a file name inside the model directory")
        if not isinstance(sha, str) or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise ModelRefused(f"{where}: files.{role}.sha256 must be 64 lowercase hex digits")
    if not isinstance(manifest["max_tokens"], int) or manifest["max_tokens"] < 1:
        raise ModelRefused(f"{where}: max_tokens must be a positive integer")
    return manifest, raw


def _from_manifest(folder: Path) -> StaticEmbedder:
    import hashlib

    manifest, raw = read_manifest(folder)
    for role, entry in manifest["files"].items():
        path = folder / entry["path"]
        if not path.is_file():
            raise ModelRefused(f"{path}: the manifest's {role} file is missing", "model_file_missing")
        if _sha256(path) != entry["sha256"]:
            raise ModelRefused(
                f"{path}: SHA-256 does not match the manifest's files.{role}.sha256; refusing the model",
                "model_hash_mismatch",
            )
    from safetensors import safe_open  # only a verified model is opened
    from tokenizers import Tokenizer

    tensor = manifest.get("tensor", BUNDLED_TENSOR)
    try:
        with safe_open(str(folder / manifest["files"]["weights"]["path"]), framework="np") as handle:
            matrix = handle.get_tensor(tensor)
        tokenizer = Tokenizer.from_file(str(folder / manifest["files"]["tokenizer"]["path"]))
    except Exception as exc:  # a pinned but unusable file: refused like a bad manifest, never a traceback
        raise ModelRefused(f"{folder}: the model files cannot be loaded ({type(exc).__name__})") from None
    if matrix.ndim != 2 or matrix.shape[1] != manifest["dimensions"]:
        raise ModelRefused(f"{folder}: the weights are not a vocabulary × {manifest['dimensions']} matrix")
    identity = f"{manifest['model']}@{manifest['revision']}#sha256:{hashlib.sha256(raw).hexdigest()[:32]}/{RECIPE}"
    return StaticEmbedder(identity, matrix, tokenizer, manifest["max_tokens"])
