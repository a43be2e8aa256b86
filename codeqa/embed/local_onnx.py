"""Embed stage, ONNX Runtime path (opt-in): the default model run by ONNX Runtime.

    CODEQA_EMBEDDINGS=local-onnx        the same model (adapter merged) exported to ONNX, fp32
    CODEQA_EMBEDDINGS=local-onnx-int8   that export with int8 weights: faster, other vectors

The export is made once from the loaded sentence-transformers model (so a LoRA adapter merged at
load is in it) and cached under CODEQA_ONNX_CACHE (Settings.onnx_cache, default ~/.cache/codeqa/onnx), keyed by the
model id; the int8 model is quantised from it once and kept beside it. Afterwards only
`onnxruntime` and `tokenizers` are needed. Tokenisation, mean pooling and L2 normalisation are
those of the sentence-transformers pipeline (max 256 word pieces), texts batched longest first in
word pieces as local.py does.

fp32 gives the torch vectors to ~1e-6, so it keeps the torch model id and reads the same indexes.
What it buys: the model loads in ~0.3 s instead of ~6.5 s (no torch import) and a query encodes in
about half the time; batch throughput is about torch's (bench/embed_speed.py on SQLAlchemy: 87 vs
92 ms of CPU a chunk).

int8 (INT8_RECIPES["int8"]: dynamic quantisation of the MatMuls, a scale per weight column) takes
59 ms of CPU a chunk, 1.5x faster than torch, but its vectors are not the same (cosine to fp32 0.993
on average) and retrieval loses a little: MRR@10 -0.018 marshmallow, -0.011 attrs questions, -0.004
click and requests, +0.002 pluggy. Over the 0.005 issue 22 allows for a default, so it is an option,
under its own model id (an index built with it is searched with it). docs/benchmarks.md has the
figures and the recipes tried.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import EmbeddingError
from .adapter import resolve_adapter
from .local import DIMENSION, load_sentence_transformer, local_model_id
from .tokenizer import model_tokenizer

INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def onnx_cache_dir() -> Path:
    """Where the export is kept when no cache_dir is given (CODEQA_ONNX_CACHE reaches it as Settings.onnx_cache)."""
    return Path.home() / ".cache" / "codeqa" / "onnx"


class OnnxEmbedder:
    """Embedder protocol over an ONNX export of the bundled model (local.py), adapter merged."""

    dimension = DIMENSION
    pads_batches = True  # a batch costs its texts padded to the longest one's word pieces (codeqa.indexing.plan reads it)

    def __init__(self, adapter: str = "default", cache_dir: Path | None = None, precision: str = "fp32",
                 threads: int = 0):
        if precision != "fp32" and precision not in INT8_RECIPES:
            raise ValueError(f"precision {precision!r}: fp32 or one of {sorted(INT8_RECIPES)}")
        self._adapter_path = resolve_adapter(adapter)
        self.precision = precision
        self.threads = threads  # ONNX Runtime's intra-op threads; 0: its default (one a core)
        self._fp32_id = local_model_id(self._adapter_path)
        # quantised weights give other vectors: an index records them under another id
        self.model_id = self._fp32_id if precision == "fp32" else f"{self._fp32_id}+onnx-{precision}"
        self._cache_dir = Path(cache_dir) if cache_dir else onnx_cache_dir()
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._session is not None

    @property
    def model_path(self) -> Path:
        key = hashlib.sha256(self._fp32_id.encode()).hexdigest()[:16]
        return self._cache_dir / key / ("model.onnx" if self.precision == "fp32" else f"model-{self.precision}.onnx")

    def load(self) -> None:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    import tokenizers  # noqa: F401  (tokenizer.model_tokenizer reads the model's tokenizer with it)
                except ImportError as exc:
                    raise EmbeddingError(f"CODEQA_EMBEDDINGS=local-onnx needs onnxruntime ({exc}); run `pip install onnxruntime onnx`.") from exc
                path = self.model_path
                if not path.is_file():
                    fp32 = path.with_name("model.onnx")
                    if not fp32.is_file():
                        self._export(fp32)
                    if path != fp32:
                        quantize_int8(fp32, path, self.precision)
                options = ort.SessionOptions()
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                # spinning worker threads wait on each other when other processes share the cores
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.intra_op_num_threads = self.threads
                self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                self._tokenizer = model_tokenizer()  # truncates as the model does; each batch is padded below

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        # batches of texts of one length in word pieces, so little of each batch is padding (tokenizer.longest_first)
        pieces = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(texts)), key=lambda i: -len(pieces[i]))
        rows = []
        for start in range(0, len(texts), batch_size):
            batch = [pieces[i] for i in order[start:start + batch_size]]
            ids = np.zeros((len(batch), max(len(p) for p in batch)), dtype=np.int64)  # 0 is [PAD]
            mask = np.zeros_like(ids)
            for row, p in enumerate(batch):
                ids[row, :len(p)] = p
                mask[row, :len(p)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feeds)[0]
            summed = (hidden * mask[:, :, None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            rows.append(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12))
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        vectors[order] = np.concatenate(rows)
        return vectors

    def _export(self, path: Path) -> None:
        """Export the (adapter-merged) transformer to ONNX (written to a temporary name, then renamed).
        The sentence-transformers model is loaded for the export only and dropped after it."""
        import torch

        path.parent.mkdir(parents=True, exist_ok=True)
        model = load_sentence_transformer(self._adapter_path)
        bert = model[0].auto_model.eval()

        class _LastHiddenState(torch.nn.Module):  # keyword arguments, one tensor out: a plain graph
            def __init__(self):
                super().__init__()
                self.bert = bert

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                                 token_type_ids=token_type_ids).last_hidden_state

        dummy = model.tokenize(["an example sentence to trace the graph"])
        inputs = tuple(dummy[name] for name in INPUT_NAMES)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        axes = {name: {0: "batch", 1: "tokens"} for name in INPUT_NAMES}
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer warnings: the library never prints
            torch.onnx.export(_LastHiddenState().eval(), inputs, str(tmp), input_names=list(INPUT_NAMES),
                              output_names=["last_hidden_state"],
                              dynamic_axes={**axes, "last_hidden_state": {0: "batch", 1: "tokens"}},
                              opset_version=17, dynamo=False)
        tmp.replace(path)


# int8 dynamic quantisation of the fp32 export (onnxruntime.quantization.quantize_dynamic): weights int8
# ahead of time, each activation scaled on the fly. A recipe's name is part of the model id: a changed
# recipe takes a new name. Measured by bench/embed_speed.py and bench/retrieval.py (docs/benchmarks.md).
INT8_RECIPES: dict[str, dict] = {
    # CODEQA_EMBEDDINGS=local-onnx-int8: the MatMuls, one scale per output column of a weight. 59 ms of
    # CPU a chunk (fp32 87); cosine to fp32 0.993 mean, 0.986 min; MRR@10 -0.018 to +0.002 over 5 sets
    "int8": {"op_types_to_quantize": ["MatMul"], "per_channel": True},
    # tried: quantize_dynamic's defaults (MatMul and the embedding tables, one scale a tensor; what was
    # tried before issue 22): 65 ms, cosine 0.940 mean; MRR@10 -0.027 to +0.017
    "int8-per-tensor": {},
    # tried: as "int8", each layer's second feed-forward MatMul left in fp32 (see quantize_int8): 75 ms,
    # cosine 0.997 mean, yet MRR@10 -0.053 on the requests questions (two of 20 fall from first place)
    "int8-keep-ffn-output": {"op_types_to_quantize": ["MatMul"], "per_channel": True, "keep_ffn_output": True},
}


def quantize_int8(source: Path, target: Path, precision: str) -> None:
    """Write `target`, the int8 model of INT8_RECIPES[precision] made from the fp32 export `source`
    (a temporary name, then renamed). keep_ffn_output leaves each layer's second feed-forward MatMul
    in fp32: its input (after GELU) has a few very large values, and one int8 scale for the whole
    tensor loses the rest (vectors' cosine to fp32 0.94 with it quantised per tensor, 0.996 without)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    recipe = dict(INT8_RECIPES[precision])
    exclude: list[str] = []
    if recipe.pop("keep_ffn_output", False):
        graph = onnx.load(str(source), load_external_data=False).graph
        exclude = [n.name for n in graph.node if n.op_type == "MatMul" and n.name.endswith("/output/dense/MatMul")
                   and "/attention/" not in n.name]
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    # onnxruntime.quantization logs through the root logger, which configures logging for the whole
    # process when it has no handler yet: for the call it has one that drops everything
    root, quiet = logging.getLogger(), logging.NullHandler()
    root.addHandler(quiet)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8, nodes_to_exclude=exclude, **recipe)
    finally:
        root.removeHandler(quiet)
    tmp.replace(target)


__all__ = ["INT8_RECIPES", "OnnxEmbedder", "onnx_cache_dir", "quantize_int8"]
