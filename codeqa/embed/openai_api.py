"""Embeddings from any OpenAI-compatible /embeddings endpoint (`CODEQA_EMBEDDINGS=openai:<model>`)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import EmbeddingError


class OpenAIEmbedder:
    """Embedder protocol over an OpenAI-compatible /embeddings endpoint. `dimension` is known after the first encode."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, dimension: int | None = None):
        self.model = model
        self.model_id = f"openai:{model}"
        self._base_url, self._api_key = base_url, api_key
        self._client = None
        self.dimension = dimension or 0

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        from openai import OpenAI, OpenAIError

        if self._client is None:
            self._client = OpenAI(base_url=self._base_url, api_key=self._api_key or "none")
        rows: list[list[float]] = []
        try:
            for start in range(0, len(texts), batch_size):
                response = self._client.embeddings.create(model=self.model, input=list(texts[start:start + batch_size]))
                rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        except OpenAIError as exc:
            raise EmbeddingError(f"The embeddings endpoint {self._base_url or 'OpenAI'} failed: {exc}") from exc
        vectors = np.asarray(rows, dtype=np.float32)
        if len(vectors):
            self.dimension = vectors.shape[1]
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors


__all__ = ["OpenAIEmbedder"]
