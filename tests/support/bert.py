"""A tiny BERT checkpoint the tests build (no download), and BERT's forward pass in plain numpy to check the
ONNX graph of ``git_memzoi.memzoi.recall.transformer`` against.

The reference follows Hugging Face ``BertModel`` step by step, unbatched (one text, no padding), with the
exact erf GELU; the real all-MiniLM-L6-v2 run through it gives 0.7553 for sentence-transformers' own example
pair ("A man is eating food." / "A man is eating a piece of bread."), the value its documentation prints.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

WORDS = ("javascript", "dependency", "installer", "use", "pnpm", "for", "js", "installs", "database", "migrations")
LAYERS, HEADS, HIDDEN, INTERMEDIATE, POSITIONS = 2, 2, 8, 16, 32


def write_checkpoint(folder: Path, seed: int = 7) -> dict[str, np.ndarray]:
    """A random two-layer BERT (``config.json``, ``model.safetensors``, ``tokenizer.json``) in ``folder``, and
    its tensors. Deterministic for one ``seed``."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {name: n for n, name in enumerate(("[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS))}
    rng = np.random.default_rng(seed)

    def random(*shape: int) -> np.ndarray:
        return rng.normal(0.0, 0.5, shape).astype(np.float32)

    tensors = {
        "embeddings.word_embeddings.weight": random(len(vocab), HIDDEN),
        "embeddings.position_embeddings.weight": random(POSITIONS, HIDDEN),
        "embeddings.token_type_embeddings.weight": random(2, HIDDEN),
        "embeddings.LayerNorm.weight": 1 + random(HIDDEN) / 5,
        "embeddings.LayerNorm.bias": random(HIDDEN) / 5,
    }
    shapes = {
        "attention.self.query": (HIDDEN, HIDDEN),
        "attention.self.key": (HIDDEN, HIDDEN),
        "attention.self.value": (HIDDEN, HIDDEN),
        "attention.output.dense": (HIDDEN, HIDDEN),
        "intermediate.dense": (INTERMEDIATE, HIDDEN),
        "output.dense": (HIDDEN, INTERMEDIATE),
    }
    for n in range(LAYERS):
        for name, (rows, cols) in shapes.items():
            tensors[f"encoder.layer.{n}.{name}.weight"] = random(rows, cols)
            tensors[f"encoder.layer.{n}.{name}.bias"] = random(rows) / 5
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[f"encoder.layer.{n}.{name}.weight"] = 1 + random(HIDDEN) / 5
            tensors[f"encoder.layer.{n}.{name}.bias"] = random(HIDDEN) / 5
    folder.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(folder / "model.safetensors"))
    config = {
        "model_type": "bert",
        "hidden_act": "gelu",
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "max_position_embeddings": POSITIONS,
        "layer_norm_eps": 1e-12,
        "vocab_size": len(vocab),
    }
    (folder / "config.json").write_text(json.dumps(config))
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    return tensors


def reference(tensors: dict[str, np.ndarray], ids: list[int], heads: int = HEADS) -> np.ndarray:
    """The normalised mean last-layer vector of one token sequence ``ids``, float64 (module rule)."""
    w = {name: value.astype(np.float64) for name, value in tensors.items()}
    n, hidden = len(ids), w["embeddings.word_embeddings.weight"].shape[1]
    size = hidden // heads
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
    x = _norm(x + w["embeddings.token_type_embeddings.weight"][0], w, "embeddings.LayerNorm")
    layer = 0
    while f"encoder.layer.{layer}.output.dense.weight" in w:
        p = f"encoder.layer.{layer}."
        q, k, v = (
            _dense(x, w, p + f"attention.self.{part}").reshape(n, heads, size) for part in ("query", "key", "value")
        )
        scores = np.einsum("ihd,jhd->hij", q, k) / math.sqrt(size)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        context = np.einsum("hij,jhd->ihd", scores / scores.sum(axis=-1, keepdims=True), v).reshape(n, hidden)
        x = _norm(_dense(context, w, p + "attention.output.dense") + x, w, p + "attention.output.LayerNorm")
        up = _dense(x, w, p + "intermediate.dense")
        up = 0.5 * up * (1 + np.vectorize(math.erf)(up / math.sqrt(2)))
        x = _norm(_dense(up, w, p + "output.dense") + x, w, p + "output.LayerNorm")
        layer += 1
    pooled = x.mean(axis=0)
    return pooled / np.linalg.norm(pooled)


def _dense(x: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    return x @ w[name + ".weight"].T + w[name + ".bias"]


def _norm(x: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    centred = x - x.mean(axis=-1, keepdims=True)
    return (
        centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-12) * w[name + ".weight"] + w[name + ".bias"]
    )
