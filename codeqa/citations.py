"""Citations: `path:Lstart-Lend` read out of an answer's text, and checked against the evidence.

A citation is `verified` only when its file is in the index, its lines exist, and they lie inside the
snippets the model was given. Code in the answer never yields citations (a quoted `host:3128` is not
one), and a file that is not in the index is reported, not dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from .languages import detect_language
from .types import Citation, Snippet

_CITATION = re.compile(
    r"(?<![\w/.@+-])(?P<path>(?:\.{1,2}/)?(?:[\w.@+-]+/)*[\w.@+-]*\w)"
    r"(?:[:#]|\s*[:#]\s+(?=L\d)|\s+(?=L\d))L?(?P<start>\d+)(?:\s*(?:-|–|—|\.\.|to)\s*L?(?P<end>\d+))?(?!\w|\.\w)")


@dataclass(frozen=True)
class CitedSpan:
    path: str
    start_line: int
    end_line: int
    text: str  # as written in the answer


def parse_citations(text: str, known_paths: Iterable[str] = ()) -> list[CitedSpan]:
    """Every `path:Lstart-Lend` in `text`, in order, duplicates removed.

    Accepted: `path:L3-L9`, `path:L3`, `path:3-9`, `path#L3-L9`, `path L3-L9`, with or without
    backticks around the whole citation. Nothing inside code counts: fenced blocks and inline code that
    is more than a citation (`proxies = {'http': 'foo.bar:3128'}`) are skipped. The path must be a file
    of the repository (`known_paths`, or a unique suffix of one: `encoder.py:L3`); a path with a folder
    and a file extension counts too, and so does a source or document file name (`utils.py`), so an
    invented file is reported as unverified rather than ignored. URLs and host:port never count (`http://foo.bar:3128`, `localhost:8080`), nor does code
    like `{self.precision: 1}` (a space after the colon needs the `L`). Without `known_paths` any
    file-like path (one with `/` or `.`) is accepted.
    """
    known = set(known_paths)
    names = {p.rsplit("/", 1)[-1] for p in known}
    visible = _hide_code(text)
    found: dict[tuple[str, int, int], CitedSpan] = {}
    for m in _CITATION.finditer(visible):
        path = m.group("path").removeprefix("./")
        if not _citable_path(path, known, names):
            continue
        start = int(m.group("start"))
        end = int(m.group("end")) if m.group("end") else start
        found.setdefault((path, start, end), CitedSpan(path, start, end, m.group(0)))
    return list(found.values())


_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_DOCUMENT_SUFFIXES = (".md", ".rst", ".txt", ".toml", ".json", ".yaml", ".yml", ".cfg", ".ini")
_FILE_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")


def _hide_code(text: str) -> str:
    """`text` with code blanked out (same length): fenced blocks, and inline code that is not exactly one citation."""
    text = _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)

    def inline(m: re.Match) -> str:
        inner = m.group(2).strip()
        whole = _CITATION.fullmatch(inner)
        return " " * len(m.group(1)) + m.group(2) + " " * len(m.group(1)) if whole else " " * len(m.group(0))

    return _INLINE_CODE.sub(inline, text)


def _citable_path(path: str, known: set[str], names: set[str]) -> bool:
    if not re.search(r"[A-Za-z]", path):
        return False
    if not known:
        return "/" in path or "." in path.strip(".")
    if path in known or path.rsplit("/", 1)[-1] in names and any(p.endswith("/" + path) for p in known):
        return True
    if "/" in path and _FILE_EXTENSION.search(path):
        return True
    # a file name alone counts when it is a source or document file (`utils.py`), never `foo.bar`
    return detect_language(path) is not None or path.lower().endswith(_DOCUMENT_SUFFIXES)


def verify_citations(cited: Iterable[CitedSpan], snippets: Sequence[Snippet], indexed_paths: Iterable[str],
                     line_count: Callable[[str], int | None]) -> list[Citation]:
    """`verified` only when the file is in the index, the lines exist in it, and every cited line lies
    inside the snippets given to the model. A path given as a unique suffix of a snippet's path
    (`encoder.py`) is completed. Unverified citations carry the reason."""
    indexed = set(indexed_paths)
    covered: dict[str, list[tuple[int, int]]] = {}
    for s in snippets:
        covered.setdefault(s.path, []).append((s.start_line, s.end_line))
    out = []
    for c in cited:
        path, note = c.path, ""
        if path not in indexed:
            completions = sorted({p for p in covered if p.endswith("/" + path)})
            if len(completions) == 1:
                path, note = completions[0], f" (path completed from {c.path})"
        reason = _check(path, c.start_line, c.end_line, indexed, covered, line_count)
        out.append(Citation(path, c.start_line, c.end_line, verified=not reason, reason=reason or note.strip(" ()")))
    return out


def _check(path: str, start: int, end: int, indexed: set[str], covered: dict[str, list[tuple[int, int]]],
           line_count: Callable[[str], int | None]) -> str:
    if path not in indexed:
        return "file not in the index"
    if start < 1 or end < start:
        return "not a valid line range"
    total = line_count(path)
    if total is None:
        return "file cannot be read"
    if end > total:
        return f"the file has only {total} lines"
    spans = sorted(covered.get(path, ()))
    line = start
    for s, e in spans:
        if s <= line <= e:
            line = e + 1
        if line > end:
            return ""
    return "lines outside the snippets given to the model"


__all__ = ["CitedSpan", "parse_citations", "verify_citations"]
