"""Retrieve: a question through the query stages, in order, into evidence packed for an answer.

    question --route (parse once: question.py; its names and files in the index: names.py)--> RoutedQuestion
      --evidence: usage         the definition and every reference site from the graph (evidence.py)
                  relationship  graph paths between two symbols (evidence.py; no path: search as well)
                  search        the files the question names (evidence.py) + hybrid search (searcher.py)
      --pack (pack.py)--> Retrieval: labelled, redacted snippets within the token budget

`Retriever.retrieve` runs those stages top to bottom; each takes the value the one before made and none
calls back here. `Retriever.route` is the first one alone, for a caller that reads the question's names
before it retrieves (the answerer rewrites a follow-up with them): `retrieve` takes its RoutedQuestion.

`Retriever` wires the parts for one index: `SourceFiles` (source.py) reads files, `GraphQueries`
(lookup.py) answers symbol and reference lookups, `Searcher` (searcher.py) ranks chunks. Settings that
vary per user (top-k, the token budget) are arguments of each call; `settings` is only the default.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Sequence

from ..config import Settings
from ..embed import Embedder, embedder_from_settings, query_embedder
from ..embed.question_map import load_question_map
from ..errors import IndexMissingError
from .evidence import named_files_evidence, relationship_evidence, usage_evidence
from .lookup import GraphQueries, group_references
from .names import NameMatch, RoutedQuestion, route_question
from .pack import pack_hits
from .rerank import reranker_from_settings
from .question import Mention, check_question_length, parse_question
from .searcher import Searcher
from .words import code_terms
from .source import SourceFiles
from ..fingerprint import check_compatible
from ..store import StoreReader, open_store, semantic_coverage, semantic_search_at
from ..types import Hit, Retrieval, Snippet

GRAPH_ONLY = "This index was opened for graph lookups only; open it with the embedding model to search."


class Retriever:
    """Reads one repository's index. Open with `Retriever.open(repo, settings)`; use as a context manager.
    One retriever may serve several users at once: nothing a call passes is kept on it."""

    def __init__(self, repo: Path, settings: Settings, store: StoreReader, embedder: Embedder | None):
        self.repo = Path(repo).resolve()
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.source = SourceFiles(self.repo, store.manifest)
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

    def semantic_coverage(self) -> float:
        """The share of chunks with a dense vector: below 1 while `codeqa index` is still embedding (phase 2),
        when search finds the other chunks by their keywords and the graph."""
        return semantic_coverage(self.store.read_meta())

    def loading_note(self, question: str | RoutedQuestion) -> str | None:
        """What a shell can show while `question`'s evidence is gathered, when a model loads for it first (the
        likelihood lead's, CODEQA_RERANK=likelihood:<file>, at a process's first question about behaviour), or None.
        A question past CODEQA_MAX_QUESTION_CHARS is refused here already: the page asks this before it takes its turn."""
        text = question.parsed.text if isinstance(question, RoutedQuestion) else question
        check_question_length(text, self.settings.max_question_chars)
        lead = self.searcher.lead_reranker if self.searcher is not None else None
        note = lead.loading_note(text) if hasattr(lead, "loading_note") else None
        if note is None:
            return None
        # the lead is picked only on the search route, and only among hits found by the dense vector: a usage
        # question, a relationship the graph answers, or phase 1 of an index run (no vectors yet) loads nothing
        asked = question if isinstance(question, RoutedQuestion) else self.route(question)
        if asked.route != "search" or self.semantic_coverage() <= 0:
            return None
        return note

    @property
    def indexed_paths(self) -> frozenset[str]:
        """Every file the index holds (from the manifest), relative posix paths."""
        return frozenset(self.source.indexed_hashes())

    # ---- the stages -----------------------------------------------------------------------------
    def route(self, question: str) -> RoutedQuestion:
        """The first stage: `question` parsed once (refused past CODEQA_MAX_QUESTION_CHARS first), its names and
        the files it names found in this index, and the route they allow (names.py)."""
        self.refresh()
        paths = self.indexed_paths
        return route_question(parse_question(question, self.settings.max_question_chars), self.graph, paths)

    def retrieve(self, question: str | RoutedQuestion, top_k: int | None = None, search_query: str | None = None,
                 budget_tokens: int | None = None, sites_listed: int | None = None) -> Retrieval:
        """Evidence for a question, routed (see the module docstring) and packed into snippets.

        `question` (its text, or what `route` made of it) decides the route and the symbols; `search_query` (a
        history-aware rewrite) is what the search embeds when given. `top_k`, `budget_tokens` and `sites_listed`
        (the reference sites a usage answer lists, `Retrieval.listed`) default to the settings.
        """
        if search_query is not None:
            check_question_length(search_query, self.settings.max_question_chars)
        asked = question if isinstance(question, RoutedQuestion) else self.route(question)
        if asked.route == "usage":
            listed = self.settings.usage_sites_listed if sites_listed is None else sites_listed
            found = usage_evidence(asked, self.graph, self.source, listed)
        elif asked.route == "relationship":
            found = relationship_evidence(asked, self.graph, self.source)
        else:
            found = named_files_evidence(asked, self.store)
        if found.route == "search" or (found.route == "relationship" and not found.paths):
            if self.searcher is None:
                raise IndexMissingError(GRAPH_ONLY)
            # a question's evidence spreads over more files (Searcher.search); a relationship's only fills a gap
            hits = self.searcher.search_reranked(search_query or asked.parsed.rank_query, top_k or self.settings.top_k,
                                                 found.route == "search", self.reranker)
            found = replace(found, hits=found.hits + tuple(hits))
        snippets = pack_hits(found.hits, budget_tokens or self.settings.context_tokens, self.graph.symbols_in_file,
                             self.source.redacted_lines)
        return replace(found, snippets=tuple(snippets))

    # ---- one stage alone --------------------------------------------------------------------------
    def match_question(self, question: str) -> list[NameMatch]:
        """The names of a question matched to the symbols they mean, strongest first (names.match_names): what
        `route(question).names` holds, for a caller that needs no more."""
        return list(self.route(question).names)

    def search(self, query: str, top_k: int = 10, spread: bool = False) -> list[Hit]:
        """Best chunks for a query, best first; `spread` adds evidence from more files after them (searcher.py)."""
        if self.searcher is None:
            raise IndexMissingError(GRAPH_ONLY)
        check_question_length(query, self.settings.max_question_chars)
        self.refresh()
        return self.searcher.search_reranked(query, top_k, spread, self.reranker)

    def pack(self, hits: Sequence[Hit], budget_tokens: int | None = None) -> list[Snippet]:
        """Hits -> labelled, redacted snippets within `budget_tokens` (default settings.context_tokens); see pack.py."""
        return pack_hits(hits, budget_tokens or self.settings.context_tokens, self.graph.symbols_in_file,
                         self.source.redacted_lines)


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


__all__ = ["Retriever", "NameMatch", "RoutedQuestion", "search", "lookup_references", "group_references", "code_terms", "Mention"]
