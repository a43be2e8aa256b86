"""Retrieve stage: route a question, gather evidence, pack it into labelled snippets.

    question --question.py--> intent + the symbol it is about
      usage         "how/where is X used", "who calls X", "what implements X": the definition plus every
                    reference site from the graph, grouped by file (listed up to a cap: lookup.list_sites)
      relationship  "connection between A and B": graph paths between the two symbols (lookup.py)
      search        everything else: hybrid search (searcher.py), boosted by the symbols the question names
    --> pack.py: labelled, redacted snippets within the token budget

`Retriever` wires the parts for one index: `SourceFiles` (source.py) reads files, `GraphQueries`
(lookup.py) answers symbol and reference lookups, `Searcher` (searcher.py) ranks chunks. Settings that
vary per user (top-k, the token budget) are arguments of each call; `settings` is only the default.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Sequence

from ..config import Settings
from ..embed import Embedder, embedder_from_settings, query_embedder
from ..embed.question_map import load_question_map
from ..errors import IndexMissingError
from ..roles import ROLE_ORDER, path_role, top_folder
from .lookup import USE_ORDER, GraphQueries, group_references, list_sites
from .pack import pack_hits
from .rerank import reranker_from_settings
from .question import (FILE_NAME, Mention, ParsedQuestion, check_question_length, choose_symbols, parse_question,
                       select_mentions)
from .searcher import Searcher
from .words import code_terms
from .source import SourceFiles
from ..fingerprint import check_compatible
from ..store import StoreReader, open_store, semantic_coverage, semantic_search_at
from ..types import Hit, Reference, Retrieval, Snippet, Symbol, name_key

USAGE_SITES_SHOWN = 8  # reference sites shown with context; the others are listed one line each


@dataclass(frozen=True)
class NameMatch:
    """A name found in a question and the symbols it is taken to mean.

    strength: 4 backticked or qualified (`EncoderClass.encode`), 3 identifier-shaped (CamelCase,
    snake_case) or in a subject slot ("the echo function"), 2 spelled out over several words
    ("encoder class"), 1 one plain word. start/end: where the name is in the question.
    others: definitions that matched as well as `symbols` (the name stayed ambiguous).
    passed_over: same-named definitions the question's words and the ranking set aside (Choice.passed_over).
    """

    text: str
    strength: int
    start: int
    end: int
    symbols: tuple[Symbol, ...]
    others: tuple[Symbol, ...] = ()
    subject: bool = False  # it stands where a usage question puts its subject ("how is X used")
    passed_over: tuple[Symbol, ...] = ()


class Retriever:
    """Reads one repository's index. Open with `Retriever.open(repo, settings)`; use as a context manager.
    One retriever may serve several users at once: nothing a call passes is kept on it."""

    def __init__(self, repo: Path, settings: Settings, store: StoreReader, embedder: Embedder | None):
        self.repo = Path(repo).resolve()
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self._manifest: dict[str, str] | None = None
        self.source = SourceFiles(self.repo, self._indexed_hashes)
        self.graph = GraphQueries(store)
        # the index meta is read only when a map file is: no map is set by default, and none ships
        questions = (load_question_map(settings.question_map, lambda: store.read_meta().get("model_id"))
                     if embedder else None)
        self.searcher = (Searcher(store, query_embedder(embedder), self.graph, self.source, documents=embedder,
                                  question_map=questions) if embedder is not None else None)
        self.reranker = reranker_from_settings(settings) if embedder is not None else None  # CODEQA_RERANK
        if self.reranker is not None and self.reranker.where == "pool":  # it reorders the searcher's candidates
            self.searcher.reranker, self.reranker = self.reranker, None
        elif self.reranker is not None and self.reranker.where == "lead":  # it picks what leads "how" evidence
            self.searcher.lead_reranker, self.reranker = self.reranker, None
        self._generation = store.generation()

    @classmethod
    def open(cls, repo: Path, settings: Settings, embedder: Embedder | None = None, *, need_model: bool = True) -> "Retriever":
        """Open the index of `repo`. `need_model=False` opens it for graph lookups only (no embedding model)."""
        repo = Path(repo).resolve()
        store, embedder = open_index(repo, settings, embedder, need_model=need_model)
        return cls(repo, settings, store, embedder)

    def __enter__(self) -> "Retriever":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    def refresh(self) -> None:
        """Forget what was looked up when another process has committed an index run since (the UI
        keeps one retriever open while `codeqa index` runs elsewhere)."""
        generation = self.store.generation()
        if generation != self._generation:
            self._generation = generation
            self.graph.clear()
            self.source.clear()
            self._manifest = None

    def semantic_coverage(self) -> float:
        """The share of chunks with a dense vector: below 1 while `codeqa index` is still embedding (phase 2),
        when search finds the other chunks by their keywords and the graph."""
        return semantic_coverage(self.store.read_meta())

    def loading_note(self, question: str) -> str | None:
        """What a shell can show while `question`'s evidence is gathered, when a model loads for it first (the
        likelihood lead's, CODEQA_RERANK=likelihood:<file>, at a process's first question about behaviour), or None.
        A question past CODEQA_MAX_QUESTION_CHARS is refused here already: the page asks this before it takes its turn."""
        check_question_length(question, self.settings.max_question_chars)
        lead = self.searcher.lead_reranker if self.searcher is not None else None
        note = lead.loading_note(question) if hasattr(lead, "loading_note") else None
        if note is None:
            return None
        # the lead is picked only on the search route, and only among hits found by the dense vector: a usage
        # question, a relationship the graph answers, or phase 1 of an index run (no vectors yet) loads nothing
        parsed = parse_question(question)
        if self._route(parsed, self.match_question(question, parsed)) != "search" or self.semantic_coverage() <= 0:
            return None
        return note

    # ---- files ----------------------------------------------------------------------------------
    def _indexed_hashes(self) -> dict[str, str]:
        if self._manifest is None:
            self._manifest = {p: e.sha256 for p, e in self.store.manifest().items() if e.status != "pending"}
        return self._manifest

    @property
    def indexed_paths(self) -> frozenset[str]:
        """Every file the index holds (from the manifest), relative posix paths."""
        return frozenset(self._indexed_hashes())

    # ---- the question's names ------------------------------------------------------------------
    def files_in_question(self, question: str) -> list[tuple[str, int, int]]:
        """Indexed files the question names (`cli.py`, `app/cli.py`): (path, start, end of the mention)."""
        found = []
        paths = self.indexed_paths
        for m in FILE_NAME.finditer(question):
            token = m.group(1).removeprefix("./")
            found.extend((p, m.start(1), m.end(1)) for p in sorted(p for p in paths if p == token or p.endswith("/" + token)))
        return found

    def match_question(self, question: str, parsed: ParsedQuestion | None = None) -> list[NameMatch]:
        """The names of a question (question.py) matched to the symbols they mean, strongest first.

        A file the question names narrows a name defined in several files to that file; among the rest,
        `choose_symbols` picks one qualified name and keeps the equally good others as `others`.
        """
        check_question_length(question, self.settings.max_question_chars)
        parsed = parsed or parse_question(question)
        files = self.files_in_question(question)
        keys = [name_key(m.text) for m in parsed.mentions if "." not in m.text and ":" not in m.text]
        by_key = self.graph.symbols_by_key(keys)
        named_files = {p for p, _, _ in files}
        chosen: dict[tuple[int, int], NameMatch] = {}
        for m in parsed.mentions:
            symbols = (self.graph.find_symbols(m.text) if ("." in m.text or ":" in m.text)
                       else by_key.get(name_key(m.text), []))
            in_files = [s for s in symbols if s.path in named_files]
            choice = choose_symbols(m, in_files or symbols)
            if choice.symbols:
                chosen[(m.start, m.end)] = NameMatch(m.text, m.strength, m.start, m.end, choice.symbols, choice.others,
                                                   passed_over=choice.passed_over)
        kept = select_mentions(parsed, lambda m: (m.start, m.end) in chosen, files)
        out: dict[tuple[str, ...], NameMatch] = {}
        for m in kept:
            # "encoder class" in "how is the encoder class used" holds the subject slot's word
            subject = m.subject or any(o.subject and m.start <= o.start and o.end <= m.end for o in parsed.mentions)
            match = replace(chosen[(m.start, m.end)], subject=subject)
            key = tuple(s.id for s in match.symbols)
            if key not in out or out[key].strength < match.strength:
                out[key] = match
        return list(out.values())

    # ---- search -------------------------------------------------------------------------------
    def search(self, query: str, top_k: int = 10, spread: bool = False) -> list[Hit]:
        """Best chunks for a query, best first; `spread` adds evidence from more files after them (searcher.py)."""
        if self.searcher is None:
            raise IndexMissingError("This index was opened for graph lookups only; open it with the embedding model to search.")
        check_question_length(query, self.settings.max_question_chars)
        self.refresh()
        if self.reranker is None:
            return self.searcher.search(query, top_k, spread=spread)
        # the reranker sees up to its candidates (more than top k: a reranked hit can enter the top k);
        # with `spread` only the top k reorder, and the evidence from other files stays after them
        if spread:
            hits = self.searcher.search(query, top_k, spread=True)
            return self.reranker.rerank(query, hits[:top_k], self.graph) + hits[top_k:]
        return self.reranker.rerank(query, self.searcher.search(query, max(top_k, self.reranker.candidates)), self.graph)[:top_k]

    # ---- routing + packing ----------------------------------------------------------------------
    def retrieve(self, question: str, top_k: int | None = None, search_query: str | None = None,
                 budget_tokens: int | None = None, sites_listed: int | None = None) -> Retrieval:
        """Evidence for a question, routed (see the module docstring) and packed into snippets.

        `question` decides the route and the symbols; `search_query` (a history-aware rewrite) is
        what the search route embeds when given. `top_k`, `budget_tokens` and `sites_listed` (the
        reference sites a usage answer lists, `Retrieval.listed`) default to the settings.
        """
        check_question_length(question, self.settings.max_question_chars)
        self.refresh()
        top_k = top_k or self.settings.top_k
        sites_listed = self.settings.usage_sites_listed if sites_listed is None else sites_listed
        parsed = parse_question(question)
        matches = self.match_question(question, parsed)
        route = self._route(parsed, matches)
        if route == "usage":
            first = matches[0]
            # an ambiguous name: every equally good reading, said so in the answer (Retrieval.ambiguous)
            targets = list(first.symbols[:10]) + list(first.others[:10])
            references = self.graph.references_of(targets)
            prefer = ("inheritance",) if parsed.inheritance else ()
            home = top_folder(targets[0].path) if targets else None
            listed = list_sites(references, sites_listed, home)
            hits = [h for h in map(self._definition_hit, targets) if h]
            hits += self._usage_sites(references, prefer=prefer, home=home)
            hits += self._reference_lines(listed.references)  # only the listed sites: their files are read
            return Retrieval(question, route, tuple(hits), tuple(self.pack(hits, budget_tokens)), tuple(targets),
                             tuple(references), ambiguous=tuple(first.others), listed=listed,
                             passed_over=first.passed_over)
        if route == "relationship":
            first = matches[0]
            second = _second_name(matches)  # never None here: _route took the question to search otherwise
            paths, refs, edges = self.graph.paths_between(first.symbols, second.symbols)
            ends = [*first.symbols[:3], *second.symbols[:3]]
            ids = list(dict.fromkeys([*(i for p in paths for i in p), *(s.id for s in ends)]))
            by_id = self.graph.symbols_by_id(ids)
            hits = [h for h in (self._definition_hit(by_id[i]) for i in ids if i in by_id) if h]
            hits += self._usage_sites(refs, limit=6)
            if not paths:
                hits += self.search(search_query or question, top_k=top_k)
            return Retrieval(question, route, tuple(hits), tuple(self.pack(hits, budget_tokens)), tuple(ends),
                             tuple(refs), tuple(paths), tuple(edges))
        matched = [s for m in matches for s in m.symbols]
        hits = self._file_hits(question) + self.search(search_query or question, top_k=top_k, spread=True)
        return Retrieval(question, "search", tuple(hits), tuple(self.pack(hits, budget_tokens)), tuple(matched[:5]))

    @staticmethod
    def _route(parsed: ParsedQuestion, matches: Sequence[NameMatch]) -> str:
        """"usage", "relationship" or "search": the question's intent, when the names it was matched to carry it."""
        route = parsed.intent if matches else "search"
        if route == "usage" and matches[0].strength < 3 and not matches[0].subject:
            route = "search"  # "how are strings escaped when a value is created": no symbol is the subject
        if route == "relationship" and _second_name(matches) is None:
            route = "search"  # one name, or several meaning the same symbols: no second end to find paths to
        return route

    def _file_hits(self, question: str, per_file: int = 4) -> list[Hit]:
        """The first chunks of every file the question names, so "what does cli.py do" sees cli.py."""
        hits = []
        for path in dict.fromkeys(p for p, _, _ in self.files_in_question(question)):
            chunks = sorted(self.store.chunks_in_file(path), key=lambda h: h.start_line)[:per_file]
            hits.extend(replace(h, score=1.0, reasons=("file named",)) for h in chunks)
        return hits

    def _definition_hit(self, sym: Symbol) -> Hit | None:
        end = sym.end_line if sym.end_line - sym.start_line <= 80 else sym.start_line + 40
        text = self.source.text(sym.path, sym.start_line, end)
        if text is None:
            return None
        return Hit(sym.path, sym.start_line, end, 1.0, sym.kind, sym.qualified_name, text, sym.language, (sym.id,), ("definition",))

    def _usage_sites(self, references: Sequence[Reference], limit: int | None = None,
                     prefer: Sequence[str] = (), home: str | None = None) -> list[Hit]:
        """The most informative reference sites, shown with context.

        Package code before tests, docs and examples, and the definition's own top folder (`home`: the
        package) before scripts beside it; calls and instantiations before type uses and
        imports (`prefer`red kinds first); at most one per enclosing function, first one per file so the
        sites spread over files. A site inside a
        short function shows the whole function; otherwise three lines either side.
        """
        limit = USAGE_SITES_SHOWN if limit is None else limit
        # a file's place once per file, not per site (path_role runs regexes; a common name has 56k sites)
        place = {p: (ROLE_ORDER.get(path_role(p), 0), home is not None and top_folder(p) != home)
                 for p in {r.path for r in references}}

        def rank(r: Reference) -> tuple:
            return (*place[r.path], r.kind not in prefer, USE_ORDER.get(r.kind, 9), r.confidence != "exact", r.path, r.line)

        ranked = sorted(references, key=rank)
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
        by_id = self.graph.symbols_by_id(r.enclosing_symbol_id for r in picked if r.enclosing_symbol_id)
        hits = []
        for rank, r in enumerate(picked):
            lines = self.source.lines(r.path)
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
        """Each of `references` (the listed sites, in listing order) as a one-line hit, after the sites
        shown in full."""
        hits = []
        for r in references:
            text = self.source.text(r.path, r.line, r.line)
            if text is not None:
                hits.append(Hit(r.path, r.line, r.line, 0.1, r.kind, r.name, text, None, (), ("reference",)))
        return hits

    def _header_spans(self, path: str, line: int) -> list[tuple[int, int]]:
        """Signature lines of every symbol that encloses `line` but starts above it (class header, def line)."""
        spans = []
        for s in self.graph.symbols_in_file(path):
            if s.start_line < line <= s.end_line:
                size = min(max(1, s.signature.count("\n") + 1), 4)
                spans.append((s.start_line, min(s.start_line + size - 1, line - 1)))
        return spans

    def pack(self, hits: Sequence[Hit], budget_tokens: int | None = None) -> list[Snippet]:
        """Hits -> labelled, redacted snippets within `budget_tokens` (default settings.context_tokens); see pack.py."""
        return pack_hits(hits, budget_tokens or self.settings.context_tokens, self._header_spans, self.source.redacted_lines)



def semantic_note(coverage: float) -> str | None:
    """One line for users while phase 2 of an index run is not done (None once it is)."""
    if coverage >= 1:
        return None
    return (f"{semantic_search_at(coverage)}: `codeqa index` has not embedded every chunk yet (run it to "
            "finish); the rest are found by keywords and the graph.")


def search(repo: Path | str, query: str, settings: Settings | None = None, top_k: int = 10,
           embedder: Embedder | None = None) -> list[Hit]:
    """The best chunks of an indexed repository for `query`, best first (what `codeqa search` prints)."""
    with Retriever.open(Path(repo), settings or Settings.load(), embedder=embedder) as retriever:
        return retriever.search(query, top_k=top_k)


def open_index(repo: Path, settings: Settings, embedder: Embedder | None = None, *,
               need_model: bool = False) -> tuple[StoreReader, Embedder | None]:
    """The index of `repo` opened for reading, and the embedder it is read with: it must exist and have been
    made by this codeqa, query set and chunking (and, with an embedder, this model: check_compatible).
    `need_model` loads the configured model when no embedder is given, after the index is found. The
    store is closed again when a check fails; otherwise the caller closes it."""
    store = open_store(repo, settings)
    try:
        meta = store.read_meta()
        if not store.exists() or not meta:
            raise IndexMissingError.for_repo(repo)
        if need_model and embedder is None:
            embedder = embedder_from_settings(settings)
        check_compatible(meta, embedder, repo, settings)
    except Exception:
        store.close()
        raise
    return store, embedder


def lookup_references(repo: Path, settings: Settings, spec: str) -> dict:
    """The `refs` command: definitions of a name and every reference site (no embedding model needed)."""
    with Retriever.open(repo, settings, need_model=False) as retriever:
        definitions = retriever.graph.find_symbols(spec)
        if not definitions:
            return {"symbol": spec, "definitions": [], "references": [], "suggestions": _closest_names(retriever.store, spec)}
        records = retriever.graph.records(retriever.graph.references_of(definitions))
        return {
            "symbol": spec,
            "definitions": [{"path": s.path, "start_line": s.start_line, "end_line": s.end_line, "kind": s.kind,
                             "qualified_name": s.qualified_name, "id": s.id} for s in definitions],
            "references": [{**asdict(r), "target_ids": list(r.target_ids)} for r in records],
        }


def _closest_names(store: StoreReader, spec: str, count: int = 5) -> list[str]:
    """The index's symbol names closest to `spec`'s name (a miss only: it reads every name once)."""
    import difflib

    wanted = spec.rpartition(":")[2].replace("::", ".")
    names = {s.qualified_name if "." in wanted else s.name for s in store.all_symbols()}
    return difflib.get_close_matches(wanted, names, n=count, cutoff=0.6)


def _second_name(matches: Sequence[NameMatch]) -> NameMatch | None:
    """The first match after the first that names other symbols than it: the other end of a relationship."""
    first = {s.name for s in matches[0].symbols}
    return next((m for m in matches[1:] if {s.name for s in m.symbols} != first), None)


__all__ = ["Retriever", "NameMatch", "search", "lookup_references", "group_references", "code_terms", "Mention"]
