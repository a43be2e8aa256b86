"""The rows both engines write and read: ids, BM25 term weights, manifest entries, chunk and hit payloads.

A module of its own below the protocols (store/__init__.py) and the engines (edge.py, server.py), so that the
engines take these from here and the package can import the engine a setting names without a loop.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from ..embed.text import code_identifiers, code_tokens, identifier_tokens
from ..types import Chunk, Hit, Reference

BM25_K1 = 1.2
# The embedded index's on-disk format (graph.sqlite's user_version; the shard's settings go with it):
# an index in another format is refused by readers and rebuilt by `codeqa index` from its embedding cache.
INDEX_FORMAT = 5  # 4: symbol ids and paths interned in the graph, float16 dense vectors; 5: a file's dense vectors may come later
RRF_K = 2  # Qdrant's default rank constant: the fusion the search was tuned with


def _saturated(count: int) -> float:
    """BM25's term-frequency part: a term's weight in a chunk where it occurs `count` times."""
    return count * (BM25_K1 + 1) / (count + BM25_K1)


_TF_WEIGHT = [_saturated(c) for c in range(256)]  # sparse_vector's weights of the common counts, worked out once


def point_id(*parts: object) -> str:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return str(uuid.UUID(bytes=digest[:16]))


def token_id(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "little")


def sparse_vector(text: str, known: dict[str, tuple[int, ...]] | None = None) -> tuple[list[int], list[float]]:
    """BM25-style term weights (saturated tf); the engine's IDF modifier supplies the idf part.

    `known` remembers each identifier's token ids between calls: a project repeats its names, and
    splitting and hashing them again was most of an index run's time on a big project. The counting
    and weighing run in C (Counter over a list, map over the counts): a big project's phase 1 computes
    this for every chunk, in the process that stores them."""
    known = {} if known is None else known
    ids: list[int] = []
    for ident, n in Counter(code_identifiers(text)).items():
        found = known.get(ident)
        if found is None:
            found = tuple(token_id(t) for t in identifier_tokens(ident))
            if len(known) < 1_000_000:
                known[ident] = found
        ids.extend(found * n if n > 1 else found)
    if not ids:
        return [], []
    indices, counts = zip(*sorted(Counter(ids).items()))
    weigh = _TF_WEIGHT.__getitem__ if max(counts) < len(_TF_WEIGHT) else _saturated
    return list(indices), list(map(weigh, counts))


def query_sparse_vector(text: str) -> tuple[list[int], list[float]]:
    """A query's terms, each weighted 1 (BM25 scores a query term once)."""
    indices = sorted({token_id(t) for t in code_tokens(text)})
    return indices, [1.0] * len(indices)


@dataclass(frozen=True)
class ManifestEntry:
    path: str
    sha256: str
    language: str | None
    chunks: int
    symbols: int
    status: str = "ok"  # ok | partial (parse errors, too deep: see reason) | text (no grammar) | pending
    reason: str = ""  # why a file is partial, for the report of a later run
    embedded: bool = True  # every chunk of the file has its dense vector (False: keyword search finds it, meanwhile)

    @classmethod
    def pending(cls, path: str) -> "ManifestEntry":
        """A file about to be written or deleted: a hash no file has, so the next run re-does it."""
        return cls(path, "", None, 0, 0, "pending")


@dataclass(frozen=True)
class SearchFilter:
    """Narrows a search: only chunks of these files and/or languages (None: no condition)."""

    paths: tuple[str, ...] | None = None
    languages: tuple[str, ...] | None = None


def reference_key(r: Reference) -> int:
    """A stable signed 64-bit id of everything a stored reference holds (a changed reference is a new key)."""
    digest = hashlib.blake2b("\x1f".join(map(str, (r.path, r.line, r.column, r.name, r.kind, ",".join(r.target_ids),
                                                   r.confidence, r.enclosing_symbol_id, r.line_text, r.receiver,
                                                   r.module, r.alias, r.assigned))).encode("utf-8"),
                             digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def chunk_payload(chunk: Chunk, sequence: type = list) -> dict[str, Any]:
    """A chunk's point payload; its id lists as `sequence` (Qdrant Edge takes a tuple in ~60 % of a
    list's time: a payload with lists cost ~20 us more a point, ~10 s of site-packages' phase 1).
    `code_languages` is written only where there are some (document sections)."""
    payload = {"path": chunk.path, "start_line": chunk.start_line, "end_line": chunk.end_line, "language": chunk.language,
            "kind": chunk.kind, "symbol_ids": sequence(chunk.symbol_ids), "symbol_names": sequence(chunk.symbol_names),
            "text": chunk.text}
    if chunk.code_languages:
        payload["code_languages"] = sequence(chunk.code_languages)
    return payload


def chunk_from_payload(point_id: Any, payload: dict[str, Any]) -> Chunk:
    return Chunk(id=str(point_id), path=payload["path"], start_line=payload["start_line"], end_line=payload["end_line"],
                 language=payload.get("language"), kind=payload.get("kind", ""),
                 symbol_ids=tuple(payload.get("symbol_ids") or ()), text=payload.get("text", ""),
                 symbol_names=tuple(payload.get("symbol_names") or ()),
                 code_languages=tuple(payload.get("code_languages") or ()))


def hit_from_payload(payload: dict[str, Any], score: float, reasons: tuple[str, ...]) -> Hit:
    names = payload.get("symbol_names") or []
    return Hit(path=payload["path"], start_line=payload["start_line"], end_line=payload["end_line"], score=float(score),
               kind=payload.get("kind", ""), symbol=names[0] if names else None, text=payload.get("text", ""),
               language=payload.get("language"), symbol_ids=tuple(payload.get("symbol_ids") or ()), reasons=reasons,
               code_languages=tuple(payload.get("code_languages") or ()))


def best_first(hits: Iterable[Hit]) -> list[Hit]:
    """A search's hits, best score first and ties in (path, start_line) order: an engine gives tied points in the
    order its segments and threads happen to, which moved a result from one open of an index to the next (two
    fused hits at 0.5 on the fixture repo swapped places)."""
    return sorted(hits, key=lambda h: (-h.score, h.path, h.start_line))


def dense_row(record: Any) -> tuple[str, int, int, list[float]] | None:
    """(path, start_line, end_line, dense vector) of a scrolled point (either engine's record: `.payload` and a
    `.vector` dict by vector name), or None when it has no dense vector or no payload."""
    vector = record.vector.get("dense") if isinstance(record.vector, dict) else None
    payload = record.payload or {}
    if vector is None or not payload.get("path"):
        return None
    return payload["path"], payload["start_line"], payload["end_line"], list(vector)


def batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
