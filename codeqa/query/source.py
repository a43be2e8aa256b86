"""Source reading for the query side: a repository's files as lines, with credentials blanked for prompts,
and whether a file changed since it was indexed.

Results show the file's own lines (the user's machine); prompts get redacted lines (whole-file
redaction, so a key split over two snippets is still caught). A file is read once and kept until it
changes on disk or the index moves on (`clear`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ..source_text import read_source_text
from ..store import ManifestEntry
from ..redact import redact_source
from ..types import Hit


class SourceFiles:
    """The files of one repository. `manifest` reads the index's manifest (the store's), once until `clear`."""

    def __init__(self, repo: Path, manifest: Callable[[], Mapping[str, ManifestEntry]]):
        self.repo = Path(repo).resolve()
        self._manifest = manifest
        self._indexed: dict[str, str] | None = None  # path -> sha256 of every file indexed in full
        self._lines: dict[str, list[str]] = {}
        self._redacted: dict[str, list[str]] = {}
        self._hashes: dict[str, tuple[int, int, str]] = {}  # path -> (mtime_ns, size, sha256)

    def indexed_hashes(self) -> dict[str, str]:
        """Every indexed file (relative posix path) and its content hash; a file still pending is not one."""
        if self._indexed is None:
            self._indexed = {p: e.sha256 for p, e in self._manifest().items() if e.status != "pending"}
        return self._indexed

    def paths(self) -> list[str]:
        """Every indexed file (relative posix paths)."""
        return list(self.indexed_hashes())

    def clear(self) -> None:
        """Forget what was read: the index moved on (Retriever.refresh)."""
        self._indexed = None
        self._lines.clear()
        self._redacted.clear()

    def lines(self, path: str) -> list[str] | None:
        """The file's lines (with their line ends), or None when it is outside the repository or unreadable."""
        if path not in self._lines:
            if inside_repository(self.repo, path) is None:
                return None
            target = (self.repo / path).resolve()
            try:
                self._lines[path] = read_source_text(target).splitlines(keepends=True)
            except (OSError, UnicodeDecodeError):
                return None
        return self._lines[path]

    def text(self, path: str, start: int, end: int) -> str | None:
        """Lines start..end (1-based, inclusive), or None when the file has no such lines."""
        lines = self.lines(path)
        if lines is None or start < 1 or end > len(lines) or start > end:
            return None
        return "".join(lines[start - 1:end])

    def redacted_lines(self, path: str) -> list[str] | None:
        """The file's lines with credentials blanked (whole-file, so a key split over snippets is still caught)."""
        if path not in self._redacted:
            lines = self.lines(path)
            if lines is None:
                return None
            self._redacted[path] = redact_source("".join(lines)).splitlines(keepends=True)
        return self._redacted[path]

    def is_stale(self, path: str) -> bool:
        """Whether `path` changed (or went away) since it was indexed: its content hash differs from the
        manifest's. Hashed again only when the file's mtime or size moved."""
        indexed = self.indexed_hashes().get(path)
        if indexed is None:
            return False
        target = self.repo / path
        try:
            info = target.stat()
        except OSError:
            return True
        known = self._hashes.get(path)
        if known is None or known[:2] != (info.st_mtime_ns, info.st_size):
            try:
                digest = hashlib.sha256(target.read_bytes()).hexdigest()
            except OSError:
                return True
            known = self._hashes[path] = (info.st_mtime_ns, info.st_size, digest)
            self._lines.pop(path, None)  # the lines read before are not the file's any more
            self._redacted.pop(path, None)
        return known[2] != indexed

    def mark_stale(self, hits: Iterable[Hit]) -> list[Hit]:
        return [replace(h, stale=True) if self.is_stale(h.path) else h for h in hits]


def inside_repository(repo: Path, path: str) -> str | None:
    """`path` (relative to `repo`, or absolute) as the index names a file: a relative posix path, or None
    when it lies outside the repository. Lexical first, so an indexed symlink keeps its own name; then
    resolved, so a symlink must not lead out of it. `repo` is resolved already."""
    joined = Path(os.path.normpath(repo / path))
    resolved = joined.resolve()
    if not (joined.is_relative_to(repo) and (resolved == repo or repo in resolved.parents)):
        return None
    return joined.relative_to(repo).as_posix()


__all__ = ["SourceFiles", "inside_repository"]
