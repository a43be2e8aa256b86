"""IndexReport: what one index run did, for the shells to show (`codeqa index --json` is its to_dict).

The library never prints: a run returns this report, which lists every file skipped or parsed only in part
with its reason, the counts of each stage, their timings, and a line for each rebuild and why.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..types import SkippedFile


@dataclass
class IndexReport:
    repo: str
    index_dir: str
    files_total: int = 0
    files_by_language: dict[str, int] = field(default_factory=dict)  # as parsed (a .h may be Objective-C), else as walked
    files_changed: int = 0
    files_deleted: int = 0
    files_unchanged: int = 0
    symbols: int = 0
    references: int = 0
    references_by_confidence: dict[str, int] = field(default_factory=dict)
    chunks: int = 0
    chunks_embedded: int = 0  # chunks given their dense vector by this run (from the embedding cache or the model)
    chunks_embedded_phase2: int = 0  # of those, by phase 2 (the rest had their vector in the embedding cache in phase 1)
    chunks_encoded: int = 0  # of those, encoded by the model (chunks_per_second is their speed)
    chunks_deferred: int = 0  # chunks still without a dense vector when the run ended (found by keywords meanwhile)
    searchable_seconds: float = 0.0  # from the start of the run's writes until phase 1 was committed
    skipped: list[SkippedFile] = field(default_factory=list)
    pruned: list[SkippedFile] = field(default_factory=list)  # folders left out unread, once each (walk.WalkResult)
    gitignored_files: int = 0  # files a .gitignore matches
    partial: list[tuple[str, str]] = field(default_factory=list)  # (path, reason): parsed with errors / failed
    graph_seconds: float = 0.0
    graph_files_per_second: float = 0.0
    embedding_seconds: float = 0.0
    chunks_per_second: float = 0.0
    elapsed_seconds: float = 0.0
    index_bytes: int = 0
    model_loaded: bool = False
    model_id: str = ""
    nothing_to_do: bool = False
    notes: list[str] = field(default_factory=list)  # one line each: a rebuild and why

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(s.reason for s in self.skipped))

    def to_dict(self) -> dict:
        return {
            "repo": self.repo, "index_dir": self.index_dir, "files": self.files_total,
            "files_by_language": self.files_by_language, "files_changed": self.files_changed,
            "files_deleted": self.files_deleted, "files_unchanged": self.files_unchanged,
            "symbols": self.symbols, "references": self.references,
            "references_by_confidence": self.references_by_confidence, "chunks": self.chunks,
            "chunks_embedded": self.chunks_embedded, "chunks_embedded_phase2": self.chunks_embedded_phase2,
            "chunks_encoded": self.chunks_encoded, "chunks_deferred": self.chunks_deferred,
            "searchable_seconds": round(self.searchable_seconds, 3),
            "skipped": [{"path": s.path, "reason": s.reason, **({"detail": s.detail} if s.detail else {})} for s in self.skipped],
            "skipped_by_reason": self.skipped_by_reason,
            "pruned": [{"path": s.path, "reason": s.reason, **({"detail": s.detail} if s.detail else {})} for s in self.pruned],
            "gitignored_files": self.gitignored_files,
            "partial": [{"path": p, "reason": r} for p, r in self.partial],
            "graph_seconds": round(self.graph_seconds, 3), "graph_files_per_second": round(self.graph_files_per_second, 1),
            "embedding_seconds": round(self.embedding_seconds, 3), "chunks_per_second": round(self.chunks_per_second, 1),
            "elapsed_seconds": round(self.elapsed_seconds, 3), "index_bytes": self.index_bytes,
            "model_loaded": self.model_loaded, "model_id": self.model_id, "nothing_to_do": self.nothing_to_do,
            "notes": list(self.notes),
        }
