"""Embed stage: the Embedder protocol and `make_embedder`, the one factory of its backends.

    local        local.py        the bundled all-MiniLM-L6-v2 (sentence-transformers, CPU) + our LoRA (adapter.py)
                 local_numpy.py  its forward pass in NumPy, for a query's few texts (no torch); tokenizer.py its word pieces
    local-onnx   local_onnx.py   the same model exported to ONNX Runtime (opt-in, faster load and queries)
    openai:<m>   openai_api.py   any OpenAI-compatible /embeddings endpoint (TEI, vLLM, Ollama): batches in parallel, retried
    text.py      what is embedded for a chunk, and the code-aware sparse (BM25) tokens
    cache.py     EmbeddingCache: vectors by (model id, text hash), so unchanged chunks are never re-embedded

Backends import nothing from this module (only their siblings and codeqa.errors), so the package has
no import cycle; importing it loads neither torch nor a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from ..config import Settings
from ..errors import UsageError
from .cache import EmbeddingCache
from .local import BASE_MODEL_ID, SentenceTransformerEmbedder
from .openai_api import OpenAIEmbedder
from .tokenizer import longest_first


class Embedder(Protocol):
    """Turns texts into unit-length vectors.

    Contract: `encode(texts)` returns one float32 row per text, in order, L2-normalised, all of
    length `dimension`; `model_id` names the model *and* any adapter, so an index can refuse
    vectors from another model. Loading is lazy: constructing an Embedder is free. An embedder that
    sends several batches at once says how many in an optional `concurrency` (the indexer then hands
    it enough texts per call to keep them all busy).
    """

    model_id: str
    dimension: int

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray: ...


def make_embedder(spec: str = "local", adapter: str = "default", base_url: str | None = None,
                  api_key: str | None = None, *, concurrency: int = 4, timeout: float = 60.0,
                  settings_named: tuple[str, str] = ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
                  onnx_cache: Path | None = None, prompts: tuple[str | None, str | None] = (None, None)) -> Embedder:
    """The embedder CODEQA_EMBEDDINGS names: "local", "local-onnx", "local-onnx-int8" or "openai:<model>".
    `concurrency` and `timeout` (CODEQA_EMBEDDING_CONCURRENCY, CODEQA_EMBEDDING_TIMEOUT) apply to an
    endpoint only, and `settings_named` are the settings its messages name for the URL and the key.
    `onnx_cache` (CODEQA_ONNX_CACHE) is where local-onnx keeps its export; None: ~/.cache/codeqa/onnx.
    `prompts` (CODEQA_EMBEDDING_QUERY_PROMPT, _DOCUMENT_PROMPT) go to an endpoint's asymmetric model."""
    if spec.startswith("openai:"):
        return OpenAIEmbedder(spec.split(":", 1)[1], base_url, api_key, concurrency=concurrency, timeout=timeout,
                              settings_named=settings_named, query_prompt=prompts[0], document_prompt=prompts[1])
    if spec in ("local-onnx", "local-onnx-int8"):
        from .local_onnx import OnnxEmbedder

        return OnnxEmbedder(adapter, cache_dir=onnx_cache, precision="int8" if spec.endswith("int8") else "fp32")
    if spec != "local":
        raise UsageError(f"CODEQA_EMBEDDINGS={spec!r} is not understood; use 'local', 'local-onnx', "
                         f"'local-onnx-int8' or 'openai:<model>'.")
    return SentenceTransformerEmbedder(adapter)


def embedder_from_settings(settings: Settings) -> Embedder:
    """The embedder `settings` configure (what index, plan, watch and search use when given none)."""
    end = settings.embeddings_endpoint
    return make_embedder(settings.embeddings, settings.embedding_adapter, end.base_url, end.api_key,
                         concurrency=settings.embedding_concurrency, timeout=settings.embedding_timeout,
                         settings_named=(end.url_setting, end.key_setting), onnx_cache=settings.onnx_cache,
                         prompts=(settings.embedding_query_prompt, settings.embedding_document_prompt))


def query_embedder(embedder: Embedder) -> Embedder:
    """What embeds a search query: an asymmetric model's query side (`for_queries()`), else `embedder` itself."""
    for_queries = getattr(embedder, "for_queries", None)
    return for_queries() if callable(for_queries) else embedder


__all__ = ["Embedder", "make_embedder", "embedder_from_settings", "query_embedder", "EmbeddingCache", "SentenceTransformerEmbedder",
           "OpenAIEmbedder", "BASE_MODEL_ID", "longest_first"]
