"""Retrieve stage: route a question, gather evidence, pack it into labelled snippets.

Routes:
  usage         "how/where is X used", "who calls X", "what implements X": the definition plus every
                reference site from the graph (complete list, grouped by file)
  relationship  "connection between A and B": graph paths between the two symbols
  search        everything else: dense search (fused with BM25 over the code terms when the question
                has any), boosted by symbols the question names and by one reference hop
The evidence is then packed into labelled, redacted snippets within the token budget (pack.py).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict, deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

from .config import Settings
from .embed import Embedder, make_embedder
from .errors import IndexMissingError
from .files import path_role, read_source_text, redact_source
from .index import check_compatible
from .pack import pack_hits
from .parse import CLASS_LIKE
from .store import Store, open_store, query_sparse_vector
from .types import Hit, Reference, Retrieval, Snippet, Symbol, name_key, split_symbol_id

SYMBOL_BOOST = 1.0  # times the code share of the query: above any cosine / RRF score for a bare identifier
HOP_BOOST = 0.02
HOP_SOURCES = 3
MEMBER_BOOST = 0.02  # methods of a class among the top hits: "how does the Path type check ..." -> Path.convert
# Measured on the docstring benchmark over 7 projects (bench/retrieval.py): 0.05 everywhere gave mean
# R@10 0.837 / MRR 0.577, these 0.855 / 0.590. A question that names tests, examples or docs lifts them.
ROLE_PENALTY = {"test": 0.15, "example": 0.1, "docs": 0.15, "stub": 0.2}
SECONDARY_WORDS = re.compile(r"\b(tests?|tested|testing|examples?|samples?|demos?|docs?|documentation|readme|guide|tutorial)\b",
                             re.IGNORECASE)
USAGE_SITES_SHOWN = 8  # reference sites shown with context; the others are listed one line each
# the named symbol is the object ("how is X used", "who calls X"), not the subject ("how does X use Y")
_PARTICIPLE = r"(used|called|invoked|instantiated|referenced|imported|constructed|created|implemented|subclassed|extended|overridden)"
USAGE_PATTERN = re.compile(
    r"\b(how|where)\s+(is|are|was|were)\b.*\b" + _PARTICIPLE + r"\b"
    r"|\bwhere\b.*\b" + _PARTICIPLE + r"\b|\bwhere\s+(do|does|did|can)\s+(i|we|you|they|people)\s+(use|call)\b"
    r"|\bhow\s+(do|can|should|would|to)\s+(i|we|you|one)?\s*(use|call)\b|\bhow to (use|call)\b"
    r"|\bwho\s+(calls|uses|imports|instantiates|creates)\b|\b(callers|usages?|uses|references?|call sites?|instances) (of|to)\b"
    r"|\bwhat\s+(implements|extends|subclasses|inherits|calls|uses|imports|instantiates)\b"
    r"|\bwhich\s+\w+\s+(call|use|implement|import|extend|inherit)s?\b|\b(implementations|subclasses) of\b", re.IGNORECASE)
RELATION_PATTERN = re.compile(r"\b(connection|relationship|relation|related|relate|interact|link|between)\b", re.IGNORECASE)
_IDENT = re.compile(r"`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*)")
_FILE_NAME = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,8})(?![\w/])")
_WORD = re.compile(r"[A-Za-z0-9]+")
# names around "between A and B" / "A relates to B" are names even when they are plain words (`run`)
_RELATION_NAMES = re.compile(r"\bbetween\s+(?:the\s+)?`?([A-Za-z_][\w.:]*)`?.*?\band\s+(?:the\s+)?`?([A-Za-z_][\w.:]*)`?"
                             r"|`?([A-Za-z_][\w.:]*)`?\s+(?:relates?|interacts?|connects?|is (?:related|connected))\s+(?:to|with)\s+"
                             r"(?:the\s+)?`?([A-Za-z_][\w.:]*)`?", re.IGNORECASE)
INHERITANCE_QUESTION = re.compile(r"\b(implement\w*|extend\w*|subclass\w*|inherit\w*|derive\w*)\b", re.IGNORECASE)
STOP_NAMES = frozenset("""a an and are as at be by call called calls class code connection does do for from function
get how in is it main method of on or run set the this to use used uses what where which who why with work works
between relationship test tests file files return returns value values""".split())
@dataclass(frozen=True)
class NameMatch:
    """A name found in a question and the symbols it matched.

    strength: 4 backticked or qualified (`EncoderClass.encode`), 3 identifier-shaped (CamelCase,
    snake_case), 2 spelled out over several words ("encoder class"), 1 one plain word.
    start/end: where the name is in the question.
    """

    text: str
    strength: int
    start: int
    end: int
    symbols: tuple[Symbol, ...]


def route_question(question: str, matched: Sequence[Symbol]) -> str:
    """usage | relationship | search; `matched` are the symbols the question names."""
    if len({s.name for s in matched}) >= 2 and RELATION_PATTERN.search(question):
        return "relationship"
    if matched and USAGE_PATTERN.search(question):
        return "usage"
    return "search"


class Retriever:
    """Reads one repository's index. Open with `Retriever.open(repo, settings)`; use as a context manager."""

    def __init__(self, repo: Path, settings: Settings, store: Store, embedder: Embedder):
        self.repo = Path(repo).resolve()
        self.settings = settings
        self.store = store
        self.embedder = embedder
        # lookups answered by the store, kept until another index run is committed (see refresh)
        self._by_key: dict[str, list[Symbol]] = {}
        self._by_id: dict[str, Symbol | None] = {}
        self._by_path: dict[str, list[Symbol]] = {}
        self._file_lines: dict[str, list[str]] = {}
        self._redacted_lines: dict[str, list[str]] = {}
        self._indexed_paths: frozenset[str] | None = None
        self._indexed_hashes: dict[str, str] | None = None
        self._file_hashes: dict[str, tuple[int, int, str]] = {}  # path -> (mtime_ns, size, sha256)
        self._generation = store.generation()

    def refresh(self) -> None:
        """Forget what was looked up when another process has committed an index run since (the UI
        keeps one retriever open while `codeqa index` runs elsewhere)."""
        generation = self.store.generation()
        if generation != self._generation:
            self._generation = generation
            self._by_key.clear()
            self._by_id.clear()
            self._by_path.clear()
            self._file_lines.clear()
            self._redacted_lines.clear()
            self._indexed_paths = None
            self._indexed_hashes = None

    @classmethod
    def open(cls, repo: Path, settings: Settings, embedder: Embedder | None = None) -> "Retriever":
        repo = Path(repo).resolve()
        store = open_store(repo, settings)
        try:
            meta = store.read_meta()
            if not store.exists() or not meta:
                raise IndexMissingError(f"No codeqa index for {repo} yet; run `codeqa index {repo}` first.")
            embedder = embedder or make_embedder(settings.embeddings, settings.embedding_adapter, settings.openai_base_url,
                                                 settings.openai_api_key)
            check_compatible(meta, embedder, repo, settings)
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
    def symbols_by_key(self, keys: Iterable[str]) -> dict[str, list[Symbol]]:
        """Symbols whose name or qualified name has each lookup key (`name_key`), one store query for
        the keys not looked up before."""
        keys = list(dict.fromkeys(keys))
        missing = [k for k in keys if k not in self._by_key]
        if missing:
            found: dict[str, list[Symbol]] = {k: [] for k in missing}
            for s in self.store.symbols_by_key(missing):
                for k in dict.fromkeys((name_key(s.name), name_key(s.qualified_name))):
                    if k in found:
                        found[k].append(s)
            for k, symbols in found.items():
                self._by_key[k] = sorted(symbols, key=lambda s: (s.path, s.start_line, s.id))
                self._by_id.update((s.id, s) for s in symbols)
        return {k: self._by_key[k] for k in keys}

    def symbols_by_id(self, ids: Iterable[str]) -> dict[str, Symbol]:
        ids = [i for i in dict.fromkeys(ids) if i]
        missing = [i for i in ids if i not in self._by_id]
        if missing:
            found = {s.id: s for s in self.store.symbols_by_ids(missing)}
            self._by_id.update((i, found.get(i)) for i in missing)
        return {i: s for i in ids if (s := self._by_id.get(i)) is not None}

    def find_symbols(self, spec: str) -> list[Symbol]:
        """`Name`, `Class.method`, `path:Name` (path may be a suffix, at a folder boundary) -> matching symbols."""
        path_part, _, name_part = spec.rpartition(":") if ":" in spec and not spec.startswith("::") else ("", "", spec)
        name_part = name_part.replace("::", ".")
        candidates = self.symbols_by_key([name_key(name_part)])[name_key(name_part)]
        found = [s for s in candidates if s.name == name_part or s.qualified_name == name_part
                 or s.qualified_name.endswith("." + name_part)]
        if not found:
            found = list(candidates)
        if path_part:
            found = [s for s in found if s.path == path_part or s.path.endswith("/" + path_part)]
        return sorted(dict.fromkeys(found), key=lambda s: (s.path, s.start_line))

    @property
    def indexed_paths(self) -> frozenset[str]:
        """Every file the index holds (from the manifest), relative posix paths."""
        if self._indexed_paths is None:
            manifest = self.store.manifest()
            self._indexed_hashes = {p: e.sha256 for p, e in manifest.items() if e.status != "pending"}
            self._indexed_paths = frozenset(self._indexed_hashes)
        return self._indexed_paths

    def is_stale(self, path: str) -> bool:
        """Whether `path` changed (or went away) since it was indexed: its content hash differs from the
        manifest's. Hashed again only when the file's mtime or size moved."""
        _ = self.indexed_paths
        indexed = (self._indexed_hashes or {}).get(path)
        if indexed is None:
            return False
        target = self.repo / path
        try:
            info = target.stat()
        except OSError:
            return True
        known = self._file_hashes.get(path)
        if known is None or known[:2] != (info.st_mtime_ns, info.st_size):
            try:
                digest = hashlib.sha256(target.read_bytes()).hexdigest()
            except OSError:
                return True
            known = self._file_hashes[path] = (info.st_mtime_ns, info.st_size, digest)
            self._file_lines.pop(path, None)  # the lines read before are not the file's any more
            self._redacted_lines.pop(path, None)
        return known[2] != indexed

    def mark_stale(self, hits: Iterable[Hit]) -> list[Hit]:
        return [replace(h, stale=True) if self.is_stale(h.path) else h for h in hits]

    def symbols_in_file(self, path: str) -> list[Symbol]:
        if path not in self._by_path:
            self._by_path[path] = self.store.symbols_in_files([path])
            self._by_id.update((s.id, s) for s in self._by_path[path])
        return self._by_path[path]

    def files_in_question(self, question: str) -> list[tuple[str, int, int]]:
        """Indexed files the question names (`cli.py`, `app/cli.py`): (path, start, end of the mention)."""
        found = []
        for m in _FILE_NAME.finditer(question):
            token = m.group(1).removeprefix("./")
            paths = sorted(p for p in self.indexed_paths if p == token or p.endswith("/" + token))
            found.extend((p, m.start(1), m.end(1)) for p in paths)
        return found

    def match_question(self, question: str) -> list[NameMatch]:
        """Names in the question matched to symbols, strongest first.

        Candidates: backticked text and identifier-shaped tokens (`EncoderClass`, `format_name`,
        `EncoderClass.encode`, `path:Name`), runs of 1-4 words spelled out ("encoder class" ->
        EncoderClass / encoder_class). A match inside a longer match (or inside a file name the
        question mentions) is dropped: `EncoderClass.encode` does not also mean every `encode`.
        A file the question names narrows a name defined in several files to that file.
        """
        files = self.files_in_question(question)
        candidates: list[tuple[str, int, int, int]] = []  # (token, strength, start, end)
        for m in _IDENT.finditer(question):
            if m.group(1) is not None:
                token = m.group(1).strip().removesuffix("()")
                candidates.append((token, 4, m.start(), m.end()))
            elif _looks_like_identifier(m.group(2)):
                token = m.group(2)
                candidates.append((token, 4 if ("." in token or "::" in token) else 3, m.start(), m.end()))
        for m in _RELATION_NAMES.finditer(question):
            for group in range(1, 5):
                if m.group(group) and m.group(group).lower() not in ("the", "a", "an"):
                    candidates.append((m.group(group), 3, m.start(group), m.end(group)))
        words = list(_WORD.finditer(question))
        for size in (4, 3, 2, 1):  # spelled-out names: "encoder class" -> EncoderClass / encoder_class
            for i in range(len(words) - size + 1):
                phrase = [w.group() for w in words[i:i + size]]
                if size == 1 and (phrase[0].lower() in STOP_NAMES or len(phrase[0]) < 4):
                    continue
                if size > 1 and all(w.lower() in STOP_NAMES for w in phrase):
                    continue
                candidates.append(("".join(phrase), 2 if size > 1 else 1, words[i].start(), words[i + size - 1].end()))
        matches: list[NameMatch] = []
        by_key = self.symbols_by_key(name_key(t) for t, _, _, _ in candidates if "." not in t and ":" not in t)
        for token, strength, start, end in candidates:
            if "." in token or ":" in token:
                symbols = self.find_symbols(token)
            else:
                symbols = list(dict.fromkeys(by_key[name_key(token)]))
            if strength >= 3:  # written as an identifier: its exact spelling wins over case-insensitive matches
                exact = [s for s in symbols if token in (s.name, s.qualified_name) or s.qualified_name.endswith("." + token)]
                symbols = exact or symbols
            if symbols:
                matches.append(NameMatch(token, strength, start, end, tuple(symbols)))
        spans = [(m.start, m.end, m.strength) for m in matches] + [(s, e, 5) for _, s, e in files]
        kept: dict[tuple[str, ...], NameMatch] = {}
        for m in matches:
            if any(s <= m.start and m.end <= e and (e - s > m.end - m.start or strength > m.strength)
                   for s, e, strength in spans):
                continue
            symbols = m.symbols
            in_files = [s for s in symbols if any(s.path == path for path, _, _ in files)]
            if in_files:
                symbols = tuple(in_files)
            # implementations before type stubs (.pyi, .d.ts): the graph's references point at both
            symbols = tuple(sorted(symbols, key=lambda s: (s.kind not in CLASS_LIKE, s.path.endswith((".pyi", ".d.ts")),
                                                           s.path, s.start_line)))
            key = tuple(s.id for s in symbols)
            if key not in kept or kept[key].strength < m.strength:
                kept[key] = replace(m, symbols=symbols)
        return sorted(kept.values(), key=lambda m: (-m.strength, -(m.end - m.start), m.start))

    def symbols_in_question(self, question: str) -> list[Symbol]:
        """Symbols the question names (see `match_question`), strongest match first."""
        return list({s.id: s for m in self.match_question(question) for s in m.symbols}.values())

    # ---- search -------------------------------------------------------------------------------
    def search(self, query: str, top_k: int = 10) -> list[Hit]:
        """Best chunks for a query, best first.

        The dense vector ranks the candidates. BM25 over the query's code terms (identifiers, paths,
        quoted strings) is fused in (RRF inside Qdrant) only when the query is mostly code or quotes a
        phrase (`parse_args`, "No such option"): that is what finds a literal message or an identifier
        the model has no sense of. A sentence that mentions a name in passing ("Create a
        :class:`RequestContext` for ...") ranks by the dense vector alone; its named symbols move up by
        the symbol boost instead. Measured on the docstring benchmark (bench/retrieval.py, 7 projects,
        adapter): fusing BM25 over the code terms of every query that has any gave mean R@10 0.853 /
        MRR 0.588, this 0.872 / 0.617; BM25 over the whole question costs more (prose words match
        everything). Then chunks defining a symbol the query names move up, and so do candidates one
        reference hop from the top hits and the methods of a class among them (MEMBER_BOOST: click's
        natural-language set MRR@10 0.501 -> 0.527, docstring benchmark unchanged to +0.009 recall@5);
        tests, examples, docs and type stubs move down unless the query asks for them (ROLE_PENALTY).
        """
        self.refresh()
        vector = self.embedder.encode([query])[0]
        limit = max(top_k * 3, 30)
        terms = code_terms(query)
        share = _code_share(query, terms)
        keywords = query_sparse_vector(" ".join(terms)) if wants_keywords(query, terms, share) else None
        hits = self.store.search(vector, keywords, limit)
        hits = self._boost_named_symbols(hits, terms, share)
        hits = self._boost_reference_hop(hits)
        hits = _demote_secondary_files(hits, query)
        merged = _merge_same_symbol(self._extend_to_definitions(self.mark_stale(hits)))
        merged.sort(key=lambda h: -h.score)
        # the index holds redacted text; a result shows the file's own lines (the user's machine, not a prompt)
        return [replace(h, text=text) if (text := self.file_text(h.path, h.start_line, h.end_line)) is not None else h
                for h in merged[:top_k]]

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
        sources = {split_symbol_id(sid) for sid in source_ids}
        out = []
        for i, h in enumerate(hits):
            sid = h.symbol_ids[0] if h.symbol_ids else None
            if i >= HOP_SOURCES and sid is not None:
                if sid in targets:
                    h = replace(h, score=h.score + HOP_BOOST, reasons=h.reasons + ("ref-hop",))
                elif _parent_of(sid) in sources:
                    h = replace(h, score=h.score + MEMBER_BOOST, reasons=h.reasons + ("member",))
            out.append(h)
        return sorted(out, key=lambda h: -h.score)

    def _extend_to_definitions(self, hits: Sequence[Hit]) -> list[Hit]:
        """A piece cut from inside a long function starts at the function's first line, so the result shows the def."""
        out = []
        by_id = self.symbols_by_id(i for h in hits for i in h.symbol_ids)
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
                self._file_lines[path] = read_source_text(target).splitlines(keepends=True)
            except (OSError, UnicodeDecodeError):
                return None
        return self._file_lines[path]

    def file_text(self, path: str, start: int, end: int) -> str | None:
        lines = self.file_lines(path)
        if lines is None or start < 1 or end > len(lines) or start > end:
            return None
        return "".join(lines[start - 1:end])

    def redacted_lines(self, path: str) -> list[str] | None:
        """The file's lines with credentials blanked (whole-file, so a key split over snippets is still caught)."""
        if path not in self._redacted_lines:
            lines = self.file_lines(path)
            if lines is None:
                return None
            self._redacted_lines[path] = redact_source("".join(lines)).splitlines(keepends=True)
        return self._redacted_lines[path]

    # ---- routing + packing ----------------------------------------------------------------------
    def retrieve(self, question: str, top_k: int | None = None, search_query: str | None = None) -> Retrieval:
        """Evidence for a question, routed (see the module docstring) and packed into snippets.

        `question` decides the route and the symbols; `search_query` (a history-aware rewrite) is
        what the search route embeds when given.
        """
        self.refresh()
        top_k = top_k or self.settings.top_k
        matches = self.match_question(question)
        matched = list({s.id: s for m in matches for s in m.symbols}.values())
        route = route_question(question, matched)
        if route == "usage":
            targets = list(matches[0].symbols[:10])
            references = self.store.references_to([s.id for s in targets])
            prefer = ("inheritance",) if INHERITANCE_QUESTION.search(question) else ()
            hits = [h for h in map(self._definition_hit, targets) if h]
            hits += self._usage_sites(references, prefer=prefer)
            hits += self._reference_lines(references)
            return Retrieval(question, route, tuple(hits), tuple(self.pack(hits)), tuple(targets), tuple(references))
        if route == "relationship":
            first = matches[0]
            second = next((m for m in matches[1:] if {s.name for s in m.symbols} != {s.name for s in first.symbols}), None)
            if second is not None:
                paths, refs, edges = self._paths_between(first.symbols, second.symbols)
                ends = [*first.symbols[:3], *second.symbols[:3]]
                ids = list(dict.fromkeys([*(i for p in paths for i in p), *(s.id for s in ends)]))
                by_id = self.symbols_by_id(ids)
                hits = [h for h in (self._definition_hit(by_id[i]) for i in ids if i in by_id) if h]
                hits += self._usage_sites(refs, limit=6)
                if not paths:
                    hits += self.search(search_query or question, top_k=top_k)
                return Retrieval(question, route, tuple(hits), tuple(self.pack(hits)), tuple(ends), tuple(refs), tuple(paths),
                                 tuple(edges))
            route = "search"
        hits = self._file_hits(question) + self.search(search_query or question, top_k=top_k)
        return Retrieval(question, "search", tuple(hits), tuple(self.pack(hits)), tuple(matched[:5]))

    def _file_hits(self, question: str, per_file: int = 4) -> list[Hit]:
        """The first chunks of every file the question names, so "what does cli.py do" sees cli.py."""
        hits = []
        for path in dict.fromkeys(p for p, _, _ in self.files_in_question(question)):
            chunks = sorted(self.store.chunks_in_file(path), key=lambda h: h.start_line)[:per_file]
            hits.extend(replace(h, score=1.0, reasons=("file named",)) for h in chunks)
        return hits

    def _definition_hit(self, sym: Symbol) -> Hit | None:
        end = sym.end_line if sym.end_line - sym.start_line <= 80 else sym.start_line + 40
        text = self.file_text(sym.path, sym.start_line, end)
        if text is None:
            return None
        return Hit(sym.path, sym.start_line, end, 1.0, sym.kind, sym.qualified_name, text, sym.language, (sym.id,), ("definition",))

    def _usage_sites(self, references: Sequence[Reference], limit: int | None = None,
                     prefer: Sequence[str] = ()) -> list[Hit]:
        """The most informative reference sites, shown with context.

        Calls and instantiations before type uses and imports (`prefer`red kinds first), at most one
        per enclosing function, first one per file so the sites spread over files. A site inside a
        short function shows the whole function; otherwise three lines either side.
        """
        limit = USAGE_SITES_SHOWN if limit is None else limit
        order = {"instantiation": 0, "call": 1, "inheritance": 2, "type": 3, "attribute": 4, "import": 5}
        ranked = sorted(references, key=lambda r: (r.kind not in prefer, order.get(r.kind, 9), r.confidence != "exact",
                                                   r.path, r.line))
        picked: list[Reference] = []
        seen_enclosing: set = set()
        seen_files: set[str] = set()
        for one_per_file, imports in ((True, False), (False, False), (False, True)):
            for r in ranked:
                key = r.enclosing_symbol_id or (r.path, r.line)
                if len(picked) >= limit or key in seen_enclosing or (r.kind == "import") != imports:
                    continue
                if one_per_file and r.path in seen_files:
                    continue
                seen_enclosing.add(key)
                seen_files.add(r.path)
                picked.append(r)
        by_id = self.symbols_by_id(r.enclosing_symbol_id for r in picked if r.enclosing_symbol_id)
        hits = []
        for rank, r in enumerate(picked):
            lines = self.file_lines(r.path)
            if lines is None:
                continue
            enclosing = by_id.get(r.enclosing_symbol_id) if r.enclosing_symbol_id else None
            if enclosing and enclosing.path == r.path and enclosing.end_line - enclosing.start_line <= 20:
                start, end = enclosing.start_line, enclosing.end_line
            else:
                start, end = max(1, r.line - 3), r.line + 3
            end = min(end, len(lines))
            hits.append(Hit(r.path, start, end, 0.5 - rank * 0.01, r.kind, r.name, "".join(lines[start - 1:end]), None,
                            (), (f"{r.kind} site",)))
        return hits

    def _reference_lines(self, references: Sequence[Reference]) -> list[Hit]:
        """Every reference site as a one-line hit (after the sites shown in full): the complete list."""
        hits = []
        for r in sorted(references, key=lambda r: (r.path, r.line)):
            text = self.file_text(r.path, r.line, r.line)
            if text is not None:
                hits.append(Hit(r.path, r.line, r.line, 0.1, r.kind, r.name, text, None, (), ("reference",)))
        return hits

    def _paths_between(self, sources: Sequence[Symbol], goals: Sequence[Symbol]
                       ) -> tuple[list[tuple[str, ...]], list[Reference], list[tuple[str, str, Reference | None]]]:
        """Up to three shortest paths (at most 4 hops) in the reference graph from any source to any goal.

        Edges: a reference from its enclosing symbol (and that symbol's class) to its targets, and a
        class to each of its members; followed in both directions. Returns the paths as symbol-id
        tuples, the references that make their edges, and every step as (from, to, reference or None
        for a class-member link).
        """
        if not sources or not goals:
            return [], [], []
        graph = _GraphWalk(self)
        paths = _bfs_paths(graph, [s.id for s in sources], {s.id for s in goals}, max_depth=4)
        steps = list(dict.fromkeys((p[i], p[i + 1]) for p in paths for i in range(len(p) - 1)))
        edges = [(a, b, graph.edge_refs.get((a, b))) for a, b in steps]
        return paths, list(dict.fromkeys(r for _, _, r in edges if r is not None)), edges

    def _header_spans(self, path: str, line: int) -> list[tuple[int, int]]:
        """Signature lines of every symbol that encloses `line` but starts above it (class header, def line)."""
        spans = []
        for s in self.symbols_in_file(path):
            if s.start_line < line <= s.end_line:
                size = min(max(1, s.signature.count("\n") + 1), 4)
                spans.append((s.start_line, min(s.start_line + size - 1, line - 1)))
        return spans

    def pack(self, hits: Sequence[Hit], budget_tokens: int | None = None) -> list[Snippet]:
        """Hits -> labelled, redacted snippets within `budget_tokens` (default settings.context_tokens); see pack.py."""
        return pack_hits(hits, budget_tokens or self.settings.context_tokens, self._header_spans, self.redacted_lines)


def search(repo: Path | str, query: str, settings: Settings | None = None, top_k: int = 10,
           embedder: Embedder | None = None) -> list[Hit]:
    """The best chunks of an indexed repository for `query`, best first (what `codeqa search` prints)."""
    with Retriever.open(Path(repo), settings or Settings.load(), embedder=embedder) as retriever:
        return retriever.search(query, top_k=top_k)


def lookup_references(repo: Path, settings: Settings, spec: str) -> dict:
    """The `refs` command: definitions of a name and every reference site (no embedding model needed)."""
    store = open_store(Path(repo).resolve(), settings)
    try:
        if not store.exists():
            raise IndexMissingError(f"No codeqa index for {repo} yet; run `codeqa index {repo}` first.")
        check_compatible(store.read_meta(), None, Path(repo).resolve(), settings)
        retriever = Retriever(repo, settings, store, embedder=None)  # type: ignore[arg-type]
        definitions = retriever.find_symbols(spec)
        refs = store.references_to([s.id for s in definitions])
        by_id = retriever.symbols_by_id(r.enclosing_symbol_id for r in refs if r.enclosing_symbol_id)
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


def _parent_of(symbol_id: str) -> tuple[str, str]:
    """(path, qualified name of the enclosing symbol) for a Symbol.id; the name is empty at top level."""
    path, qualified = split_symbol_id(symbol_id)
    return path, qualified.rpartition(".")[0]


KEYWORD_CODE_SHARE = 0.5
# "No such option" / 'cannot open file': quotes not inside a word (don't, the bar's writer) around 2+ words
_QUOTED_PHRASE = re.compile(r"(?<![\w`])([\"'])[^\"'`\n]*?\w\s+\w[^\"'`\n]*?\1(?![\w`])")
_CODE_TERM = re.compile(r"`[^`]+`|(?<!\w)\"[^\"]{3,}\"(?!\w)|(?<!\w)'[^']{3,}'(?!\w)|[\w./-]+\.[A-Za-z]{1,5}\b|[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+"
                        r"|\b[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*\b|\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b|\b\w+\(\)")


def code_terms(query: str) -> list[str]:
    """Tokens of a query that are code, not prose: `quoted`, "a string", snake_case, camelCase, a.b, f(), file.ext."""
    terms = [t.strip("`'\"()") for t in _CODE_TERM.findall(query)]
    return [t for t in terms if len(re.sub(r"\W", "", t)) >= 3]  # not "e.g." or "i.e."


def wants_keywords(query: str, terms: Sequence[str], share: float) -> bool:
    """Whether BM25 over the code terms joins the dense search: a query that is mostly code, or one that
    quotes a phrase of two or more words (an error message, a log line)."""
    return bool(terms) and (share >= KEYWORD_CODE_SHARE or _QUOTED_PHRASE.search(query) is not None)


def _demote_secondary_files(hits: list[Hit], query: str) -> list[Hit]:
    """At equal similarity the implementation beats its tests, examples, docs and type stubs, unless asked for."""
    asked = SECONDARY_WORDS.search(query)
    out = [replace(h, score=h.score - ROLE_PENALTY[role]) if (role := path_role(h.path)) != "code"
           and not (asked and role != "stub") else h for h in hits]
    return sorted(out, key=lambda h: -h.score)


def _code_share(query: str, terms: Sequence[str]) -> float:
    words = len(re.findall(r"\w+", query)) or 1
    return min(1.0, sum(len(re.findall(r"\w+", t)) for t in terms) / words)


def _looks_like_identifier(token: str) -> bool:
    if token.lower() in STOP_NAMES:
        return False
    return ("_" in token or "." in token or "::" in token or bool(re.search(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]", token))
            or (token[:1].isupper() and len(token) > 3 and not token.isupper()))


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


class _GraphWalk:
    """The reference graph around some symbols, read from the store as a walk reaches them.

    Edges: a reference from its enclosing symbol (and that symbol's class) to its targets, and a
    class to each of its members; followed in both directions. `edge_refs` keeps the reference
    behind each edge met so far.
    """

    def __init__(self, retriever: "Retriever"):
        self.retriever = retriever
        self.store = retriever.store
        self.edge_refs: dict[tuple[str, str], Reference] = {}
        self._neighbours: dict[str, set[str]] = {}

    def get(self, node: str, default=()) -> set[str]:
        if node not in self._neighbours:
            self.expand([node])
        return self._neighbours.get(node, set(default))

    def expand(self, nodes: Sequence[str]) -> None:
        nodes = [n for n in dict.fromkeys(nodes) if n not in self._neighbours]
        if not nodes:
            return
        out: dict[str, set[str]] = {n: set() for n in nodes}
        wanted = set(nodes)
        children = self.store.children_of(nodes)
        for child in children:  # a class and its members are connected, and a member's references are the class's too
            out[child.parent_id].add(child.id)  # type: ignore[index]
        me = self.retriever.symbols_by_id(nodes)
        for n, s in me.items():
            if s.parent_id:
                out[n].add(s.parent_id)
        sources = {c.id: c.parent_id for c in children}
        sources.update((n, None) for n in nodes)
        for r in self.store.references_from(list(sources)):
            for t in r.target_ids:
                for a in {r.enclosing_symbol_id, sources.get(r.enclosing_symbol_id)} & wanted:
                    out[a].add(t)
                    self.edge_refs.setdefault((a, t), r)
                    self.edge_refs.setdefault((t, a), r)
        incoming = self.store.references_to(nodes)
        parents = self.retriever.symbols_by_id(r.enclosing_symbol_id for r in incoming if r.enclosing_symbol_id)
        for r in incoming:
            src = r.enclosing_symbol_id
            if src is None:
                continue
            parent = parents[src].parent_id if src in parents else None
            for t in set(r.target_ids) & wanted:
                for a in {src, parent} - {None}:
                    out[t].add(a)
                    self.edge_refs.setdefault((a, t), r)
                    self.edge_refs.setdefault((t, a), r)
        self._neighbours.update(out)


def _bfs_paths(graph: _GraphWalk, starts: Sequence[str], goals: set[str], max_depth: int) -> list[tuple[str, ...]]:
    queue = deque((s,) for s in dict.fromkeys(starts) if s not in goals)
    found: list[tuple[str, ...]] = []
    seen_depth: dict[str, int] = {s: 0 for s in starts}
    while queue and len(found) < 3:
        path = queue.popleft()
        if len(path) > max_depth:
            break
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt in goals:
                found.append(path + (nxt,))
                continue
            if nxt not in path and seen_depth.get(nxt, 99) >= len(path):
                seen_depth[nxt] = len(path)
                queue.append(path + (nxt,))
    return found


def group_references(references: Iterable[Reference]) -> list[tuple[str, list[Reference]]]:
    """References grouped by file (files in path order, lines in order)."""
    groups: dict[str, list[Reference]] = defaultdict(list)
    for r in sorted(references, key=lambda r: (r.path, r.line, r.column)):
        groups[r.path].append(r)
    return list(groups.items())


__all__ = ["Retriever", "NameMatch", "search", "lookup_references", "route_question", "group_references", "code_terms"]
