"""Retrieve stage: route a question, gather evidence, pack it into labelled snippets.

Routes:
  usage         "how/where is X used", "who calls X", "what implements X": the definition plus every
                reference site from the graph (complete list, grouped by file)
  relationship  "connection between A and B": graph paths between the two symbols
  search        everything else: hybrid search (dense + BM25, RRF in Qdrant), boosted by symbols
                the question names, plus one reference hop from the top hits
Packing merges overlapping/adjacent spans of a file, keeps the enclosing class header, redacts
credentials and stops at the token budget.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

from .config import Settings
from .embed import Embedder, make_embedder, split_identifier
from .errors import IndexMissingError
from .index import check_compatible, open_store
from .parse import CLASS_LIKE
from .store import QdrantStore
from .types import Hit, Reference, Retrieval, Snippet, Symbol

SYMBOL_BOOST = 1.0  # times the code share of the query: above any cosine / RRF score for a bare identifier
HOP_BOOST = 0.02
HOP_SOURCES = 3
CHARS_PER_TOKEN = 3.5  # conservative for code; tiktoken's tables are not available offline
USAGE_PATTERN = re.compile(
    r"\b(how|where)\b.*\b(used|use|called|invoked|instantiated|referenced|imported|constructed|created)\b"
    r"|\bwho (calls|uses|imports)\b|\b(callers|usages?|uses|references?|call sites?) (of|to)\b"
    r"|\bwhat (implements|extends|subclasses|inherits|calls|uses)\b|\bwhich \w+ (call|use|implement)s?\b"
    r"|\b(implementations|subclasses) of\b", re.IGNORECASE)
RELATION_PATTERN = re.compile(r"\b(connection|relationship|relation|related|relate|interact|link|between)\b", re.IGNORECASE)
_IDENT = re.compile(r"`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*)")
_FILE_NAME = re.compile(r"[\w./-]+\.[A-Za-z]{1,5}\b")
STOP_NAMES = frozenset("""a an and are as at be by call called calls class code connection does do for from function
get how in is it main method of on or run set the this to use used uses what where which who why with work works
between relationship test tests file files return returns value values""".split())
SECRET_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL),
    re.compile(r"\b(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
               r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,})\b"),
    re.compile(r"(?i)\b([A-Za-z_]*(?:password|passwd|secret|api_?key|access_?key|auth_?token|private_?key|token)[A-Za-z_]*"
               r"\s*[:=]\s*)([\"'])([^\"'\s]{8,})\2"),
]


def redact(text: str) -> str:
    """Blank out obvious credentials before text leaves the machine."""
    text = SECRET_PATTERNS[0].sub("[REDACTED PRIVATE KEY]", text)
    text = SECRET_PATTERNS[1].sub("[REDACTED]", text)
    return SECRET_PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}[REDACTED]{m.group(2)}", text)


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def route_question(question: str, matched: Sequence[Symbol]) -> str:
    if len({s.name for s in matched}) >= 2 and RELATION_PATTERN.search(question):
        return "relationship"
    if matched and USAGE_PATTERN.search(question):
        return "usage"
    return "search"


class Retriever:
    """Reads one repository's index. Open with `Retriever.open(repo, settings)`; use as a context manager."""

    def __init__(self, repo: Path, settings: Settings, store: QdrantStore, embedder: Embedder):
        self.repo = Path(repo).resolve()
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self._symbols: list[Symbol] | None = None
        self._by_norm: dict[str, list[Symbol]] | None = None
        self._file_lines: dict[str, list[str]] = {}

    @classmethod
    def open(cls, repo: Path, settings: Settings, embedder: Embedder | None = None) -> "Retriever":
        repo = Path(repo).resolve()
        store = open_store(repo, settings)
        if not store.exists() or not store.read_meta():
            store.close()
            raise IndexMissingError(f"No codeqa index for {repo} yet; run `codeqa index {repo}` first.")
        embedder = embedder or make_embedder(settings.embeddings, settings.embedding_adapter, settings.openai_base_url, settings.openai_api_key)
        try:
            check_compatible(store.read_meta(), embedder, repo)
        except Exception:
            store.close()
            raise
        return cls(repo, settings, store, embedder)

    def __enter__(self) -> "Retriever":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    # ---- symbols ------------------------------------------------------------------------------
    @property
    def symbols(self) -> list[Symbol]:
        if self._symbols is None:
            self._symbols = self.store.all_symbols()
            self._by_norm = defaultdict(list)
            for s in self._symbols:
                self._by_norm[_norm(s.name)].append(s)
                if s.qualified_name != s.name:
                    self._by_norm[_norm(s.qualified_name)].append(s)
        return self._symbols

    def find_symbols(self, spec: str) -> list[Symbol]:
        """`Name`, `Class.method`, `path:Name` (path may be a suffix) -> matching symbols."""
        path_part, _, name_part = spec.rpartition(":") if ":" in spec and not spec.startswith("::") else ("", "", spec)
        name_part = name_part.replace("::", ".")
        _ = self.symbols
        found = [s for s in self._by_norm.get(_norm(name_part), ()) if s.name == name_part or s.qualified_name == name_part
                 or s.qualified_name.endswith("." + name_part)]
        if not found:
            found = list(self._by_norm.get(_norm(name_part), ()))
        if path_part:
            found = [s for s in found if s.path == path_part or s.path.endswith("/" + path_part) or s.path.endswith(path_part)]
        return sorted(dict.fromkeys(found), key=lambda s: (s.path, s.start_line))

    def symbols_in_question(self, question: str) -> list[Symbol]:
        """Symbols the question names: identifiers, `Class.method`, and spelled-out names ("encoder class")."""
        _ = self.symbols
        found: dict[str, Symbol] = {}
        candidates: list[str] = []
        for quoted, ident in _IDENT.findall(question):
            token = quoted or ident
            if quoted or _looks_like_identifier(token):
                candidates.append(token)
        words = re.findall(r"[A-Za-z0-9]+", question)
        for size in (4, 3, 2, 1):  # spelled-out names: "encoder class" -> EncoderClass / encoder_class
            for i in range(len(words) - size + 1):
                phrase = words[i:i + size]
                if size == 1 and (phrase[0].lower() in STOP_NAMES or len(phrase[0]) < 4):
                    continue
                candidates.append("".join(phrase))
        for token in candidates:
            for sym in self.find_symbols(token) if ("." in token or "::" in token) else self._by_norm.get(_norm(token), ()):
                found.setdefault(sym.id, sym)
        # a name matched inside a longer matched qualified name is not separate evidence
        return sorted(found.values(), key=lambda s: (s.kind not in CLASS_LIKE, s.path, s.start_line))

    # ---- search -------------------------------------------------------------------------------
    def search(self, query: str, top_k: int = 10) -> list[Hit]:
        """Best chunks for a query, best first.

        Natural-language queries rank by the dense vector alone; a query with code terms (identifiers,
        paths, quoted strings) fuses dense with BM25 over those terms (RRF inside Qdrant). Measured on
        the docstring benchmark (bench/retrieval.py, click): BM25 over the whole question in the fusion
        costs 0.04-0.10 recall@10 (prose words match everything), BM25 over the code terms alone costs
        nothing and is what finds an identifier or a message string. Then chunks defining a symbol the
        query names move up, and so do candidates one reference hop from the top hits.
        """
        vector = self.embedder.encode([query])[0]
        limit = max(top_k * 3, 30)
        terms = code_terms(query)
        hits = self.store.hybrid_search(vector, " ".join(terms), limit) if terms else self.store.dense_search(vector, limit)
        hits = self._boost_named_symbols(hits, terms, _code_share(query, terms))
        hits = self._boost_reference_hop(hits)
        merged = _merge_same_symbol(self._extend_to_definitions(hits))
        merged.sort(key=lambda h: -h.score)
        return merged[:top_k]

    def _boost_named_symbols(self, hits: list[Hit], names: Sequence[str], share: float) -> list[Hit]:
        """Chunks defining a symbol the query names move up (fetched if search missed them).

        The lift grows with the share of the query that is code: a bare `EncoderClass` puts its
        definition first; a sentence that mentions :class:`Command` in passing barely moves Command.
        """
        boost = SYMBOL_BOOST * max(share, 0.05)
        named = {s.id: s for name in names for s in self.find_symbols(name)} if names else {}
        if not named:
            return hits
        out = []
        for h in hits:
            if _defines_any(h, named.values(), set(named)):
                h = replace(h, score=h.score + boost, reasons=h.reasons + ("symbol",))
            out.append(h)
        present = {(h.path, h.start_line) for h in out}
        for h in self.store.chunks_for_symbols(list(named)[:20], limit=40):
            if (h.path, h.start_line) not in present and _defines_any(h, named.values(), set(named)):
                out.append(replace(h, score=boost, reasons=("symbol",)))
                present.add((h.path, h.start_line))
        return sorted(out, key=lambda h: -h.score)

    def _boost_reference_hop(self, hits: list[Hit]) -> list[Hit]:
        """Candidates that the top hits call, instantiate or inherit from gain HOP_BOOST."""
        source_ids = [sid for h in hits[:HOP_SOURCES] for sid in h.symbol_ids[:1]]
        if not source_ids:
            return hits
        targets = {t for r in self.store.references_from(source_ids)
                   if r.kind in ("call", "instantiation", "inheritance") and r.confidence in ("exact", "likely")
                   for t in r.target_ids}
        out = [replace(h, score=h.score + HOP_BOOST, reasons=h.reasons + ("ref-hop",))
               if i >= HOP_SOURCES and h.symbol_ids[:1] and h.symbol_ids[0] in targets else h
               for i, h in enumerate(hits)]
        return sorted(out, key=lambda h: -h.score)

    def _extend_to_definitions(self, hits: Iterable[Hit]) -> list[Hit]:
        """A piece cut from inside a long function starts at the function's first line, so the result shows the def."""
        out = []
        by_id = {s.id: s for s in self.symbols} if self._symbols is not None or True else {}
        for h in hits:
            starts = [by_id[i].start_line for i in h.symbol_ids if i in by_id and by_id[i].path == h.path
                      and by_id[i].kind in ("function", "method") and by_id[i].start_line < h.start_line <= by_id[i].end_line]
            if starts and h.start_line - max(starts) <= 400:
                start = max(starts)
                text = self.file_text(h.path, start, h.end_line)
                if text is not None:
                    h = replace(h, start_line=start, text=text)
            out.append(h)
        return out

    def file_lines(self, path: str) -> list[str] | None:
        if path not in self._file_lines:
            target = (self.repo / path).resolve()
            if self.repo not in target.parents:
                return None
            try:
                self._file_lines[path] = target.read_text(encoding="utf-8").splitlines(keepends=True)
            except (OSError, UnicodeDecodeError):
                return None
        return self._file_lines[path]

    def file_text(self, path: str, start: int, end: int) -> str | None:
        lines = self.file_lines(path)
        if lines is None or start < 1 or end > len(lines) or start > end:
            return None
        return "".join(lines[start - 1:end])

    # ---- routing + packing ----------------------------------------------------------------------
    def retrieve(self, question: str, top_k: int | None = None, search_query: str | None = None) -> Retrieval:
        """Evidence for a question. `search_query` (a history-aware rewrite) is used for search when given."""
        top_k = top_k or self.settings.top_k
        matched = self.symbols_in_question(question)
        route = route_question(question, matched)
        if route == "usage":
            targets = _primary(matched)
            references = self.store.references_to([s.id for s in targets])
            definitions = [self._definition_hit(s) for s in targets]
            sites = self._usage_sites(references)
            hits = [h for h in definitions if h] + sites
            snippets = self.pack(hits)
            return Retrieval(question, route, tuple(hits), tuple(snippets), tuple(targets), tuple(references))
        if route == "relationship":
            a_b = _primary(matched, limit=4)
            paths, refs = self._paths_between(a_b)
            ids = list(dict.fromkeys(i for p in paths for i in p)) or [s.id for s in a_b]
            by_id = {s.id: s for s in self.symbols}
            hits = [h for h in (self._definition_hit(by_id[i]) for i in ids if i in by_id) if h]
            hits += self._usage_sites(refs, limit=6)
            if not paths:
                hits += self.search(search_query or question, top_k=top_k)
            return Retrieval(question, route, tuple(hits), tuple(self.pack(hits)), tuple(a_b), tuple(refs), tuple(paths))
        hits = self.search(search_query or question, top_k=top_k)
        return Retrieval(question, "search", tuple(hits), tuple(self.pack(hits)), tuple(matched[:5]))

    def _definition_hit(self, sym: Symbol) -> Hit | None:
        end = sym.end_line if sym.end_line - sym.start_line <= 80 else sym.start_line + 40
        text = self.file_text(sym.path, sym.start_line, end)
        if text is None:
            return None
        return Hit(sym.path, sym.start_line, end, 1.0, sym.kind, sym.qualified_name, text, sym.language, (sym.id,), ("definition",))

    def _usage_sites(self, references: Sequence[Reference], limit: int = 8) -> list[Hit]:
        """The most informative call sites: calls/instantiations over imports, one per enclosing symbol, spread over files."""
        order = {"instantiation": 0, "call": 1, "inheritance": 2, "type": 3, "attribute": 4, "import": 5}
        seen_enclosing: set = set()
        picked: list[Reference] = []
        for r in sorted(references, key=lambda r: (order.get(r.kind, 9), r.confidence != "exact", r.path, r.line)):
            key = r.enclosing_symbol_id or (r.path, r.line)
            if key in seen_enclosing:
                continue
            seen_enclosing.add(key)
            picked.append(r)
            if len(picked) >= limit:
                break
        hits = []
        for r in picked:
            start, end = max(1, r.line - 3), r.line + 3
            lines = self.file_lines(r.path)
            if lines is None:
                continue
            end = min(end, len(lines))
            hits.append(Hit(r.path, start, end, 0.5, r.kind, r.name, "".join(lines[start - 1:end]), None, (), (f"{r.kind} site",)))
        return hits

    def _paths_between(self, symbols: Sequence[Symbol]) -> tuple[list[tuple[str, ...]], list[Reference]]:
        if len(symbols) < 2:
            return [], []
        refs = self.store.all_references()
        by_id = {s.id: s for s in self.symbols}
        graph: dict[str, set[str]] = defaultdict(set)
        edge_refs: dict[tuple[str, str], Reference] = {}

        def owner(symbol_id: str | None) -> str | None:  # methods count for their class too
            return symbol_id

        for r in refs:
            src = owner(r.enclosing_symbol_id)
            if src is None:
                continue
            for t in r.target_ids:
                for a in {src, by_id[src].parent_id if src in by_id else None} - {None}:
                    graph[a].add(t)
                    graph[t].add(a)
                    edge_refs.setdefault((a, t), r)
                    edge_refs.setdefault((t, a), r)
                parent = by_id[t].parent_id if t in by_id else None
                if parent:
                    graph[parent].add(t)
                    graph[t].add(parent)
        for s in self.symbols:  # a class and its members are connected
            if s.parent_id:
                graph[s.id].add(s.parent_id)
                graph[s.parent_id].add(s.id)
        a, b = symbols[0], next((s for s in symbols[1:] if s.name != symbols[0].name), symbols[1])
        paths = _bfs_paths(graph, a.id, b.id, max_depth=4)
        used = [edge_refs[(p[i], p[i + 1])] for p in paths for i in range(len(p) - 1) if (p[i], p[i + 1]) in edge_refs]
        return paths, list(dict.fromkeys(used))

    def pack(self, hits: Sequence[Hit], budget_tokens: int | None = None) -> list[Snippet]:
        """Merge overlapping/adjacent spans per file, add class headers, redact, cut at the budget."""
        budget = budget_tokens or self.settings.context_tokens
        by_id = {s.id: s for s in self.symbols}
        spans: list[list] = []  # [path, start, end, score, reason]
        for rank, h in enumerate(hits):
            spans.append([h.path, h.start_line, h.end_line, h.score, ",".join(h.reasons) or h.kind, rank])
            for sid in h.symbol_ids:  # keep the enclosing class header
                parent = by_id.get(by_id[sid].parent_id) if sid in by_id and by_id[sid].parent_id else None
                if parent and parent.path == h.path and parent.start_line < h.start_line:
                    spans.append([h.path, parent.start_line, parent.start_line, h.score, "class header", rank])
        merged: list[list] = []
        for span in sorted(spans, key=lambda s: (s[0], s[1], s[2])):
            last = merged[-1] if merged else None
            if last and last[0] == span[0] and span[1] <= last[2] + 1:
                last[2] = max(last[2], span[2])
                last[3] = max(last[3], span[3])
                last[5] = min(last[5], span[5])
                if span[4] not in last[4]:
                    last[4] += "," + span[4]
            else:
                merged.append(list(span))
        merged.sort(key=lambda s: s[5])
        snippets: list[Snippet] = []
        used = 0
        for path, start, end, score, reason, _ in merged:
            text = self.file_text(path, start, end)
            if text is None:
                continue
            cost = estimate_tokens(text) + 12
            if used + cost > budget:
                if snippets:
                    continue  # something smaller further down may still fit
                lines = text.splitlines(keepends=True)[: max(1, int(budget * CHARS_PER_TOKEN / 80))]
                text, end = "".join(lines), start + len(lines) - 1
                cost = estimate_tokens(text)
            snippets.append(Snippet(path, start, end, redact(text), reason, score))
            used += cost
        return snippets


def lookup_references(repo: Path, settings: Settings, spec: str) -> dict:
    """The `refs` command: definitions of a name and every reference site (no embedding model needed)."""
    store = open_store(Path(repo).resolve(), settings)
    try:
        if not store.exists():
            raise IndexMissingError(f"No codeqa index for {repo} yet; run `codeqa index {repo}` first.")
        retriever = Retriever(repo, settings, store, embedder=None)  # type: ignore[arg-type]
        definitions = retriever.find_symbols(spec)
        refs = store.references_to([s.id for s in definitions])
        by_id = {s.id: s for s in retriever.symbols}
        return {
            "symbol": spec,
            "definitions": [{"path": s.path, "start_line": s.start_line, "end_line": s.end_line, "kind": s.kind,
                             "qualified_name": s.qualified_name, "id": s.id} for s in definitions],
            "references": [{"path": r.path, "line": r.line, "column": r.column, "kind": r.kind, "confidence": r.confidence,
                            "text": r.line_text, "enclosing": by_id[r.enclosing_symbol_id].qualified_name
                            if r.enclosing_symbol_id in by_id else None, "target_ids": list(r.target_ids)} for r in refs],
        }
    finally:
        store.close()


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", name.lower())


def _norm_tokens(text: str) -> set[str]:
    return {_norm(t) for t in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)}


_CODE_TERM = re.compile(r"`[^`]+`|\"[^\"]{3,}\"|'[^']{3,}'|[\w./-]+\.[A-Za-z]{1,5}\b|[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+"
                        r"|\b[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*\b|\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b|\b\w+\(\)")


def code_terms(query: str) -> list[str]:
    """Tokens of a query that are code, not prose: `quoted`, "a string", snake_case, camelCase, a.b, f(), file.ext."""
    terms = [t.strip("`'\"()") for t in _CODE_TERM.findall(query)]
    return [t for t in terms if len(re.sub(r"\W", "", t)) >= 3]  # not "e.g." or "i.e."


def _code_share(query: str, terms: Sequence[str]) -> float:
    words = len(re.findall(r"\w+", query)) or 1
    return min(1.0, sum(len(re.findall(r"\w+", t)) for t in terms) / words)


def _looks_like_identifier(token: str) -> bool:
    if token.lower() in STOP_NAMES:
        return False
    return ("_" in token or "." in token or "::" in token or bool(re.search(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]", token))
            or (token[:1].isupper() and len(token) > 3 and not token.isupper()))


def _primary(matched: Sequence[Symbol], limit: int = 3) -> list[Symbol]:
    """The symbols a question is about: whole-name matches, classes/functions before members."""
    return list(matched[:limit])


def _defines_any(h: Hit, named: Sequence[Symbol], named_ids: set[str]) -> bool:
    return any(s.id in named_ids and s.path == h.path and h.start_line <= s.start_line <= h.end_line for s in named)


def _merge_same_symbol(hits: list[Hit]) -> list[Hit]:
    """Pieces extended to the same definition become one hit with the best score."""
    best: dict[tuple[str, int], Hit] = {}
    for h in hits:
        key = (h.path, h.start_line)
        if key not in best:
            best[key] = h
        elif h.score > best[key].score or h.end_line > best[key].end_line:
            keep = best[key]
            best[key] = replace(keep if keep.end_line >= h.end_line else h, score=max(keep.score, h.score),
                                reasons=tuple(dict.fromkeys(keep.reasons + h.reasons)))
    return list(best.values())


def _bfs_paths(graph: dict[str, set[str]], start: str, goal: str, max_depth: int) -> list[tuple[str, ...]]:
    queue = deque([(start,)])
    found: list[tuple[str, ...]] = []
    seen_depth: dict[str, int] = {start: 0}
    while queue and len(found) < 3:
        path = queue.popleft()
        if len(path) > max_depth + 1:
            break
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt == goal:
                found.append(path + (nxt,))
                continue
            if nxt not in path and seen_depth.get(nxt, 99) >= len(path):
                seen_depth[nxt] = len(path)
                queue.append(path + (nxt,))
    return found


__all__ = ["Retriever", "lookup_references", "redact", "route_question", "estimate_tokens", "split_identifier"]
