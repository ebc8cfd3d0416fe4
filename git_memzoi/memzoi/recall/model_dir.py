"""Local model directories of semantic recall: ``[semantic] model_dir`` and its pinned ``manifest.json`` (io).

The manifest follows vault-memory's local-model rules (seed 004, F09): ``schema_version`` 1, ``model``,
``revision``, ``dimensions``, ``pooling`` (``mean``), ``normalize`` (true), ``max_tokens``, ``license`` and
``files``, each file ``{"path": <a file name in the directory>, "sha256": <64 lowercase hex>}``. ``format``
says what the files are:

- ``static`` (the default): ``files`` names exactly ``weights`` (a safetensors file holding the vocabulary ×
  ``dimensions`` matrix ``tensor``, default ``embedding.weight``; a model2vec export has this shape) and
  ``tokenizer`` (a Hugging Face ``tokenizers`` JSON). Run by :class:`~git_memzoi.memzoi.recall.embedding.StaticEmbedder`;
- ``onnx``: ``files`` names exactly ``model`` (a self-contained float32 ONNX export whose output ``output`` is
  the hidden states, ``(1, tokens, dimensions)``), ``tokenizer`` and ``tokenizer_config``; the manifest also
  gives ``pad_token_id``, ``query_prefix`` and ``passage_prefix`` (e5's ``"query: "`` / ``"passage: "``, or
  ``""``) and ``output``. One text per run, inputs ``input_ids``, ``attention_mask`` and, when the graph takes
  it, ``token_type_ids``; truncated at ``max_tokens``; masked mean pooling, L2-normalised
  (:class:`~git_memzoi.memzoi.recall.transformer.TransformerEmbedder`).

Every file's hash is checked before it is opened; a mismatch is ``model_hash_mismatch``, a missing file
``model_file_missing``, any other broken rule (or a pinned file that cannot be loaded) ``invalid_model_manifest``:
exit 2, nothing embedded. The identity is the model, its revision and the manifest's SHA-256 (which pins the
files), so an edited manifest re-embeds.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall.embedding import EXTRA, RECIPE, Embedder, ModelRefused, StaticEmbedder, sha256_file

KEYS = ("schema_version", "model", "revision", "dimensions", "pooling", "normalize", "max_tokens", "files")
ONNX_KEYS = ("pad_token_id", "query_prefix", "passage_prefix", "output")
FILES = {"static": {"weights", "tokenizer"}, "onnx": {"model", "tokenizer", "tokenizer_config"}}
TENSOR = "embedding.weight"  # a static model's default matrix name


def read_manifest(folder: Path) -> tuple[dict[str, Any], bytes]:
    """The checked ``manifest.json`` of a model directory and its bytes (module rule).

    Raises:
        ModelRefused: no manifest (``model_file_missing``), or one breaking a rule (``invalid_model_manifest``).
    """
    where = folder / "manifest.json"
    try:
        raw = where.read_bytes()
        manifest = json.loads(raw)
    except FileNotFoundError:
        raise ModelRefused(f"{where}: no model manifest ([semantic] model_dir)", "model_file_missing") from None
    except (OSError, ValueError) as exc:
        raise ModelRefused(f"{where}: not a JSON model manifest ({type(exc).__name__})") from None
    if not isinstance(manifest, dict) or any(key not in manifest for key in KEYS):
        raise ModelRefused(f"{where}: a model manifest needs {', '.join(KEYS)}")
    if manifest["schema_version"] != 1 or manifest["pooling"] != "mean" or manifest["normalize"] is not True:
        raise ModelRefused(f"{where}: only schema_version 1, mean pooling and normalize true are supported")
    kind = manifest.get("format", "static")
    if kind not in FILES:
        raise ModelRefused(f"{where}: format must be one of {', '.join(FILES)}")
    if kind == "onnx":
        _check_onnx_keys(where, manifest)
    files = manifest["files"]
    if not isinstance(files, dict) or set(files) != FILES[kind]:
        raise ModelRefused(f"{where}: files must name exactly {' and '.join(sorted(FILES[kind]))}")
    for role, entry in files.items():
        name = entry.get("path") if isinstance(entry, dict) else None
        sha = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or os.sep in name or "/" in name or name in (".", ".."):
            raise ModelRefused(f"{where}: files.{role}.path must be a file name inside the model directory")
        if not isinstance(sha, str) or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise ModelRefused(f"{where}: files.{role}.sha256 must be 64 lowercase hex digits")
    for key in ("max_tokens", "dimensions"):
        if type(manifest[key]) is not int or manifest[key] < 1:
            raise ModelRefused(f"{where}: {key} must be a positive integer")
    return manifest, raw


def _check_onnx_keys(where: Path, manifest: dict[str, Any]) -> None:
    if any(key not in manifest for key in ONNX_KEYS):
        raise ModelRefused(f"{where}: an onnx model manifest also needs {', '.join(ONNX_KEYS)}")
    if type(manifest["pad_token_id"]) is not int or manifest["pad_token_id"] < 0:
        raise ModelRefused(f"{where}: pad_token_id must be a non-negative integer")
    if not all(isinstance(manifest[key], str) for key in ("query_prefix", "passage_prefix")):
        raise ModelRefused(f"{where}: query_prefix and passage_prefix must be strings")
    if not isinstance(manifest["output"], str) or not manifest["output"]:
        raise ModelRefused(f"{where}: output must name the graph's hidden-state output")


def missing_model(what: str) -> InputError:
    """The refusal of a model directory whose runtime is not installed (``semantic_model_missing``)."""
    return InputError(f"semantic recall needs {what}: pip install '{EXTRA}'", "semantic_model_missing")


def checked(folder: Path) -> tuple[dict[str, Any], bytes]:
    """:func:`read_manifest`, then every file there and of its pinned SHA-256: what :func:`load` checks before
    opening anything (``doctor`` checks it the same way, without loading the model).

    Raises:
        ModelRefused: as :func:`read_manifest`; a file missing (``model_file_missing``) or whose SHA-256 is not
            the manifest's (``model_hash_mismatch``).
    """
    manifest, raw = read_manifest(folder)
    for role, entry in manifest["files"].items():
        path = folder / entry["path"]
        if not path.is_file():
            raise ModelRefused(f"{path}: the manifest's {role} file is missing", "model_file_missing")
        if sha256_file(path) != entry["sha256"]:
            raise ModelRefused(
                f"{path}: SHA-256 does not match the manifest's files.{role}.sha256; refusing the model",
                "model_hash_mismatch",
            )
    return manifest, raw


def identity(manifest: dict[str, Any], raw: bytes) -> str:
    """The embedder identity of a checked manifest: model, revision and the manifest's SHA-256 (module rule)."""
    return f"{manifest['model']}@{manifest['revision']}#sha256:{hashlib.sha256(raw).hexdigest()[:32]}/{RECIPE}"


def load(folder: Path) -> Embedder:
    """The embedder of the model directory ``folder`` (module rule).

    Raises:
        ModelRefused: as :func:`checked`; pinned files that cannot be used (``invalid_model_manifest``).
        InputError: a runtime the model needs is not installed (``semantic_model_missing``).
    """
    manifest, raw = checked(folder)
    name = identity(manifest, raw)
    files = {role: folder / entry["path"] for role, entry in manifest["files"].items()}
    try:  # only verified files are opened
        if manifest.get("format", "static") == "onnx":
            return _onnx(name, manifest, files)
        return _static(name, manifest, files)
    except ModelRefused:
        raise
    except ImportError as exc:  # a runtime of the [semantic] extra is missing (ONNX Runtime for an onnx model)
        raise missing_model(f"{exc.name or 'a runtime'} for the model in {folder}") from None
    except Exception as exc:  # a pinned but unusable file: refused like a bad manifest, never a traceback
        raise ModelRefused(f"{folder}: the model files cannot be loaded ({type(exc).__name__})") from None


def _static(identity: str, manifest: dict[str, Any], files: dict[str, Path]) -> Embedder:
    from safetensors import safe_open
    from tokenizers import Tokenizer

    with safe_open(str(files["weights"]), framework="np") as handle:
        matrix = handle.get_tensor(manifest.get("tensor", TENSOR))
    tokenizer = Tokenizer.from_file(str(files["tokenizer"]))
    if matrix.ndim != 2 or matrix.shape[1] != manifest["dimensions"]:
        raise ModelRefused(f"{files['weights']}: the weights are not a vocabulary × {manifest['dimensions']} matrix")
    return StaticEmbedder(identity, matrix, tokenizer, manifest["max_tokens"])


def _onnx(identity: str, manifest: dict[str, Any], files: dict[str, Path]) -> Embedder:
    from tokenizers import Tokenizer

    from git_memzoi.memzoi.recall.transformer import TransformerEmbedder

    model = TransformerEmbedder(
        identity,
        files["model"],
        Tokenizer.from_file(str(files["tokenizer"])),
        manifest["dimensions"],
        manifest["max_tokens"],
        output=manifest["output"],
        pooled=False,
        query_prefix=manifest["query_prefix"],
        passage_prefix=manifest["passage_prefix"],
    )
    model.embed(["probe"])  # an output of another shape is refused now (ModelRefused), not at the first search
    return model
