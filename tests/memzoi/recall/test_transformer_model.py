"""The bundled transformer model of semantic recall (issue 18), on a tiny two-layer BERT the tests build: the ONNX
graph computes BERT's forward pass (checked against a numpy reference), batching and padding change no vector,
the int8 graph is built once into the repository's model cache and loaded from there, and a checkpoint whose
files are not the pinned ones is refused before anything is built."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="numpy comes with the test extra: pip install -e '.[test]'")
pytest.importorskip("onnxruntime", reason="onnxruntime comes with the test extra")
pytest.importorskip("onnx", reason="onnx comes with the test extra")

import numpy as np
import onnxruntime as ort

from git_memzoi.memzoi.recall import embedder, transformer
from tests.support import bert
from tests.support.repos import Repo, ok_json, run, write_record

TEXTS = ["javascript dependency installer", "use pnpm for js installs", "database migrations", "pnpm"]


@pytest.fixture
def checkpoint(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    folder = tmp_path / "site" / "checkpoint"
    return folder, bert.write_checkpoint(folder)


@pytest.fixture
def bundled(checkpoint: tuple[Path, dict[str, object]], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny checkpoint installed as the bundled model, its files pinned by their own hashes."""
    folder, _ = checkpoint
    pinned = {
        role: (name, hashlib.sha256((folder / name).read_bytes()).hexdigest())
        for role, name in (("weights", "model.safetensors"), ("config", "config.json"), ("tokenizer", "tokenizer.json"))
    }
    monkeypatch.setattr(embedder, "BUNDLED_FILES", pinned)
    monkeypatch.setattr(embedder, "bundled_dir", lambda: folder)
    monkeypatch.setattr(embedder, "_LOADED", {})
    return folder


def _session(tensors: dict[str, object]) -> object:
    model = transformer.graph(tensors, transformer.Config(bert.LAYERS, bert.HEADS, bert.HIDDEN), bert.POSITIONS)
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_the_graph_computes_berts_forward_pass(checkpoint: tuple[Path, dict[str, object]]) -> None:
    folder, tensors = checkpoint
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    session = _session(tensors)
    for text in TEXTS:
        ids = tokenizer.encode(text).ids
        assert ids[0] == 2 and ids[-1] == 3  # [CLS] … [SEP]
        feed = {"input_ids": np.array([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), np.int64)}
        got = session.run(["vector"], feed)[0][0]
        assert np.abs(got - bert.reference(tensors, ids)).max() < 1e-5
        assert abs(float(np.linalg.norm(got)) - 1.0) < 1e-5


def test_padding_a_text_in_a_batch_changes_no_vector(checkpoint: tuple[Path, dict[str, object]]) -> None:
    _, tensors = checkpoint
    session = _session(tensors)
    short, long = [2, 4, 3], [2, 4, 5, 6, 7, 3]
    alone = session.run(["vector"], {"input_ids": np.array([short]), "attention_mask": np.ones((1, 3), np.int64)})[0]
    ids = np.array([[*short, 0, 0, 0], long], dtype=np.int64)
    mask = np.array([[1, 1, 1, 0, 0, 0], [1] * 6], dtype=np.int64)
    batched = session.run(["vector"], {"input_ids": ids, "attention_mask": mask})[0]
    assert np.abs(batched[0] - alone[0]).max() < 1e-5
    assert np.abs(batched[1] - bert.reference(tensors, long)).max() < 1e-5


def test_the_int8_model_is_built_once_into_the_repository_cache(bundled: Path, repo: Repo) -> None:
    write_record(repo, "use-pnpm", "Use pnpm for JS installs", "The web app installs with pnpm.")
    out = ok_json(repo, "search", "javascript installer", "--mode", "semantic")
    assert [r["record"]["id"] for r in out["results"]][:1] == ["use-pnpm"]
    models = repo.root / ".git" / "memzoi" / "cache" / "models"
    built = sorted(p.name for p in models.iterdir())
    assert len(built) == 1 and built[0].startswith("minilm-") and built[0].endswith(".onnx")
    stamp = (models / built[0]).stat().st_mtime_ns
    embedder._LOADED.clear()
    model = embedder.load(embedder_layout(repo), None)
    assert isinstance(model, transformer.TransformerEmbedder)
    assert (
        model.identity.startswith(f"{embedder.BUNDLED_NAME}#sha256:")
        and f"/{transformer.RECIPE}/ort-" in model.identity
    )
    assert (models / built[0]).stat().st_mtime_ns == stamp  # loaded, not built again
    vectors = model.embed(TEXTS)
    assert vectors.shape == (4, bert.HIDDEN) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.abs(model.embed(TEXTS[1:2])[0] - vectors[1]).max() < 1e-5  # alone or batched: one vector


@pytest.mark.parametrize(("cores", "sessions"), [(2, 2), (8, 2), (1, 1)])
def test_several_texts_share_one_session_a_core_and_each_keeps_its_own_vector(
    bundled: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch, cores: int, sessions: int
) -> None:
    write_record(repo, "use-pnpm", "Use pnpm for JS installs", "The web app installs with pnpm.")
    ok_json(repo, "search", "pnpm", "--mode", "semantic")  # builds the model
    embedder._LOADED.clear()
    monkeypatch.setattr(transformer.os, "cpu_count", lambda: cores)
    model = embedder.load(embedder_layout(repo), None)
    assert isinstance(model, transformer.TransformerEmbedder)
    texts = [f"{text} {n}" for n, text in enumerate(TEXTS * 6)]
    alone = np.vstack([model.embed([text]) for text in texts])
    assert len(model.sessions) == 1  # one text at a time never makes a second session
    together = model.embed(texts)
    assert len(model.sessions) == sessions
    assert np.array_equal(together, alone)  # each row its own text's vector, bit for bit
    assert np.array_equal(model.embed_query(texts[:2]), alone[:2])  # no prefixes: queries as passages


def test_a_cache_left_short_is_built_again(bundled: Path, repo: Repo) -> None:
    write_record(repo, "use-pnpm", "Use pnpm for JS installs", "The web app installs with pnpm.")
    ok_json(repo, "search", "pnpm", "--mode", "semantic")
    (cache,) = (repo.root / ".git" / "memzoi" / "cache" / "models").iterdir()
    cache.write_bytes(cache.read_bytes()[:100])
    embedder._LOADED.clear()
    out = ok_json(repo, "search", "javascript installer", "--mode", "semantic")
    assert [r["record"]["id"] for r in out["results"]] == ["use-pnpm"]
    assert cache.stat().st_size > 100


def test_a_checkpoint_that_is_not_the_pinned_one_is_refused_and_nothing_is_built(bundled: Path, repo: Repo) -> None:
    write_record(repo, "use-pnpm", "Use pnpm for JS installs", "The web app installs with pnpm.")
    (bundled / "config.json").write_text(json.dumps({**json.loads((bundled / "config.json").read_text()), "x": 1}))
    result = run(repo, "search", "pnpm", "--mode", "semantic", "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "model_hash_mismatch" and "config.json" in error["message"]
    assert not (repo.root / ".git" / "memzoi" / "cache" / "models").exists()


def test_a_process_with_a_built_model_imports_no_onnx(bundled: Path, repo: Repo) -> None:
    """A graph in the cache is loaded by ONNX Runtime alone: ``onnx`` (0.3–0.9 s to import) only builds one."""
    write_record(repo, "use-pnpm", "Use pnpm for JS installs", "The web app installs with pnpm.")
    ok_json(repo, "search", "pnpm", "--mode", "semantic")
    probe = (
        "import json, sys\n"
        "from git_memzoi.memzoi.recall import embedder\n"
        "from git_memzoi.memzoi.layout import Layout\n"
        f"embedder.BUNDLED_FILES = {embedder.BUNDLED_FILES!r}\n"
        f"embedder.bundled_dir = lambda: __import__('pathlib').Path({str(bundled)!r})\n"
        f"model = embedder.load(Layout(__import__('pathlib').Path({str(repo.root)!r})), None)\n"
        "print(json.dumps([model.embed(['pnpm']).shape[1], 'onnx' in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], cwd=repo.root, capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout) == [bert.HIDDEN, False]


def embedder_layout(repo: Repo) -> object:
    from git_memzoi.memzoi.layout import Layout

    return Layout(repo.root)


# ------------------------------------------------------------------------------------------------ an ONNX model directory


def _onnx_model_dir(folder: Path, words: dict[str, list[float]], **manifest: object) -> None:
    """A model directory (seed 004, F09) holding an ONNX hidden-state graph: token vectors looked up, untouched."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocab = {"[UNK]": 0, **{word: n for n, word in enumerate(words, 1)}}
    matrix = np.array([[0.0] * 3, *words.values()], dtype=np.float32)
    nodes = [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"])]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, [1, "t"]) for n in ("input_ids", "attention_mask")]
    output = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [1, "t", 3])]
    graph = helper.make_graph(nodes, "lookup", inputs, output, [numpy_helper.from_array(matrix, "table")])
    folder.mkdir(exist_ok=True)
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), folder / "model.onnx"
    )
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text("{}")
    files = {"model": "model.onnx", "tokenizer": "tokenizer.json", "tokenizer_config": "tokenizer_config.json"}
    document = {
        "schema_version": 1,
        "model": "tiny-onnx",
        "revision": "1",
        "format": "onnx",
        "dimensions": 3,
        "pooling": "mean",
        "normalize": True,
        "max_tokens": 16,
        "pad_token_id": 0,
        "query_prefix": "query: ",
        "passage_prefix": "",
        "output": "last_hidden_state",
        "license": "MIT",
        "files": {
            role: {"path": name, "sha256": hashlib.sha256((folder / name).read_bytes()).hexdigest()}
            for role, name in files.items()
        },
        **manifest,
    }
    (folder / "manifest.json").write_text(json.dumps(document))


WORDS = {
    "javascript": [1.0, 0.0, 0.0],
    "js": [1.0, 0.0, 0.0],
    "pnpm": [1.0, 0.0, 0.0],
    "installs": [1.0, 0.0, 0.0],
    "database": [0.0, 1.0, 0.0],
    "alembic": [0.0, 1.0, 0.0],
    "query": [0.0, 0.0, 1.0],
}


def _pnpm_notes(repo: Repo) -> None:
    write_record(repo, "use-pnpm", "Use pnpm for JS installs", "The web app installs with pnpm.")
    write_record(repo, "alembic", "Run database migrations with alembic", "Schema changes go through alembic.")


def test_an_onnx_model_directory_embeds_passages_and_prefixed_queries(repo: Repo) -> None:
    _pnpm_notes(repo)
    _onnx_model_dir(repo.root / "model", WORDS)
    (repo.root / ".memzoi" / "config.toml").write_text('[semantic]\nmodel_dir = "model"\n')
    out = ok_json(repo, "search", "javascript", "--mode", "semantic")
    assert [r["record"]["id"] for r in out["results"]] == ["use-pnpm"]
    from git_memzoi.memzoi.layout import Layout

    model = embedder.load(Layout(repo.root), "model")
    assert model.identity.startswith("tiny-onnx@1#sha256:")
    assert np.allclose(model.embed(["js"])[0], [1.0, 0.0, 0.0])
    assert np.allclose(model.embed_query(["js"])[0], np.array([1.0, 0.0, 1.0]) / np.sqrt(2))  # "query: js"


def test_semantic_recall_writes_nothing_under_home(repo: Repo, tmp_path: Path) -> None:
    """ONNX Runtime's telemetry (a device id and an event queue in ~/.cache/Microsoft/DeveloperTools/) stays off,
    in a process whose environment does not say so."""
    _pnpm_notes(repo)
    _onnx_model_dir(repo.root / "model", WORDS)
    (repo.root / ".memzoi" / "config.toml").write_text('[semantic]\nmodel_dir = "model"\n')
    home = tmp_path / "fresh-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    command = [sys.executable, "-m", "git_memzoi", "-C", str(repo.root), "search", "javascript", "--mode", "semantic"]
    proc = subprocess.run([*command, "--json"], env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert [r["record"]["id"] for r in json.loads(proc.stdout)["results"]] == ["use-pnpm"]
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == []


@pytest.mark.parametrize(
    ("manifest", "code", "words"),
    [
        ({"output": "pooled"}, "invalid_model_manifest", "no output 'pooled' (its outputs: last_hidden_state)"),
        ({"query_prefix": None}, "invalid_model_manifest", "query_prefix and passage_prefix must be strings"),
        ({"format": "gguf"}, "invalid_model_manifest", "format must be one of static, onnx"),
        ({"dimensions": 4}, "invalid_model_manifest", "has shape (1, 1, 3); expected (1, tokens, 4) hidden states"),
    ],
)
def test_an_onnx_model_directory_breaking_a_rule_is_refused(repo: Repo, manifest: dict, code: str, words: str) -> None:
    _pnpm_notes(repo)
    _onnx_model_dir(repo.root / "model", WORDS, **manifest)
    (repo.root / ".memzoi" / "config.toml").write_text('[semantic]\nmodel_dir = "model"\n')
    result = run(repo, "search", "javascript", "--mode", "semantic", "--json")
    assert result.exit_code == 2, result.stdout
    error = json.loads(result.stdout)["error"]
    assert error["code"] == code and words in error["message"], error


def test_an_onnx_model_whose_graph_changed_is_refused_before_it_runs(repo: Repo) -> None:
    _pnpm_notes(repo)
    _onnx_model_dir(repo.root / "model", WORDS)
    (repo.root / "model" / "model.onnx").write_bytes((repo.root / "model" / "model.onnx").read_bytes() + b"\0")
    (repo.root / ".memzoi" / "config.toml").write_text('[semantic]\nmodel_dir = "model"\n')
    result = run(repo, "search", "javascript", "--mode", "semantic", "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "model_hash_mismatch"
