"""The index fingerprint: what made an index's symbols, references, chunks and vectors, and the check that
refuses to answer from an index another codeqa, query set, chunk size or model made.

Read by both sides: the indexer records it (index.py) and re-derives what is stale; the query side
(retrieve.py, `refs`) refuses a mismatch and says what to run.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from . import __version__
from .config import Settings
from .embed import Embedder
from .errors import IndexMismatchError
from .languages import queries_dir

# Bump when chunk boundaries or embedded text change (part of the fingerprint).
CHUNKER_VERSION = "3"  # 2: credentials redacted before chunking; 3: documents by heading section
# Bump when the same queries make other symbols or references (part of the fingerprint).
# 2: a module symbol per Python file (indexing/graph/modules.py); 3: per JavaScript and TypeScript file too
GRAPH_VERSION = "3"
VECTOR_META_KEYS = ("model_id",)  # index meta that, changed, makes every stored vector wrong
# The rest of the fingerprint: changed, every file's symbols, references and chunks are derived again
# (their vectors mostly come from the embedding cache).
FINGERPRINT_KEYS = ("codeqa_version", "queries_hash", "graph_version", "chunker_version", "chunk_max_chars",
                    "chunk_min_chars")

def queries_hash(query_dir: Path | None = None) -> str:
    """A hash of every tree-sitter query file (in `query_dir`, else the installed queries/): edited
    queries make other symbols and references."""
    digest = hashlib.sha256()
    root = queries_dir(query_dir)
    for path in sorted(root.rglob("*.scm")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def fingerprint(settings: Settings) -> dict:
    """FINGERPRINT_KEYS as this codeqa and these settings make them."""
    return {"codeqa_version": __version__, "queries_hash": queries_hash(settings.queries_dir),
            "graph_version": GRAPH_VERSION, "chunker_version": CHUNKER_VERSION, "chunk_max_chars": settings.chunk_max_chars,
            "chunk_min_chars": settings.chunk_min_chars}


def index_meta(embedder: Embedder, settings: Settings) -> dict:
    """The fingerprint an index records: what made its symbols, references, chunks and vectors."""
    return {"model_id": embedder.model_id, "vector_size": embedder.dimension, **fingerprint(settings)}


def stale_fingerprint(meta: dict, wanted: dict) -> list[str]:
    """The fingerprint keys whose recorded value differs from this codeqa's (empty: up to date)."""
    return [k for k in FINGERPRINT_KEYS if meta.get(k) != wanted[k]]


FINGERPRINT_WORDS = {"codeqa_version": "another codeqa version", "queries_hash": "other tree-sitter queries",
                      "graph_version": "an older symbol graph",
                      "chunker_version": "another chunker", "chunk_max_chars": "another CODEQA_CHUNK_MAX_CHARS",
                      "chunk_min_chars": "another CODEQA_CHUNK_MIN_CHARS"}


def check_compatible(meta: dict, embedder: Embedder | None, repo: Path, settings: Settings) -> None:
    """An index made by another model, codeqa, query set or chunk size would answer wrongly: refuse,
    and say what to run. (`embedder` None: a command that embeds nothing, like `refs`.)"""
    if embedder is not None and meta.get("model_id") and meta["model_id"] != embedder.model_id:
        raise IndexMismatchError(
            f"The index of {repo} was embedded with {meta['model_id']}, but the current setting is {embedder.model_id} "
            f"(CODEQA_EMBEDDINGS / CODEQA_EMBEDDING_ADAPTER); re-index with `codeqa index {repo}` or change the setting back.")
    stale = stale_fingerprint(meta, fingerprint(settings))
    if stale:
        raise IndexMismatchError(
            f"The index of {repo} was built with {', '.join(FINGERPRINT_WORDS[k] for k in stale)}; run "
            f"`codeqa index {repo}` to bring it up to date (vectors come from the embedding cache).")


__all__ = ["CHUNKER_VERSION", "GRAPH_VERSION", "VECTOR_META_KEYS", "FINGERPRINT_KEYS", "queries_hash", "fingerprint", "index_meta",
           "stale_fingerprint", "check_compatible"]
