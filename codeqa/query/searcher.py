"""Hybrid search: the dense vector ranks, BM25 over a query's code terms joins when the query is code,
fused inside the engine (weighted RRF); then graph and file evidence re-rank (rankers.py, in order).

    query --embed--> dense vector (+ sparse vector of the code terms) --Store.search--> candidates
      --> rankers: NamedSymbols, ReferenceHop (+ members), SecondaryFiles, QuestionDeed
      --> pieces extended to their function's first line, merged per definition --> top k
      --> a question in words: the first 5 as ranked, the rest from package files not yet shown
      --> an answer's evidence (spread): + what the top hits hand the work to, + more files
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Mapping, Sequence

from ..embed import Embedder
from ..embed.question_map import QuestionMap
from ..roles import path_role
from ..store import StoreReader, query_sparse_vector, semantic_coverage
from ..types import Hit
from .lead import callee_first, follow_delegates, logic_first, work_first, zoom_hits
from .lookup import GraphQueries
from .rerank import Reranker
from .question import KEYWORD_CODE_SHARE, RankQuery
from .rankers import HOP_SOURCES, NamedSymbols, QuestionDeed, Ranker, ReferenceHop, SecondaryFiles
from .source import SourceFiles
from .words import inflections, name_stems, prose_keywords, question_stems, stems

CALLEE_CANDIDATES = 2  # evidence for an answer: definitions the top hits call, from files not among them
WORK_CANDIDATES = 5  # evidence for an answer: what the top hits call that shares words with the question (_work)
WORK_SOURCES = 5
WORK_LOOKUPS = 20  # the most called of the top hits' callees that are read and weighed
SPREAD_FILES = 4  # evidence for an answer: the best hit of this many more files
CANDIDATES_PER_RESULT = 5  # candidates fetched per result asked for (the spread over files needs a few more)
# A question's top k (Searcher._spread_question): the first QUESTION_HEAD results as ranked, then up to
# QUESTION_NEW_FILES results from package files not yet shown. Measured on bench/multifile.py (rich, tomlkit):
# file recall@10 0.602 -> 0.855, with the natural-language sets (requests, attrs) unchanged; see docs/benchmarks.md.
QUESTION_HEAD = 5
QUESTION_NEW_FILES = 5
QUESTION_CALLEES = 2
QUESTION_OTHER_FLOOR = 0.5  # a further file's best candidate needs half the best score: tiny repos have irrelevant files
# SWE-QA-Bench dev (conan, streamlink, reflex; bench/swe_qa.py), search: file recall@10 / span hit@10
# taking a missed file on its name alone: 0.566 / 0.706; 2 shared words: 0.582 / 0.714; 3: 0.605 / 0.738
NAMED_FILE_SHARED_WORDS = 3
# A question about behaviour (RankQuery.behaviour): BM25 over its prose words lifts the code definitions it ranks
# (Searcher._lift_by_words). Chosen on bench/how.py's dev set (tenacity, cachetools, bottle), confirmed on its
# test set and on SWE-QA-Bench's (docs/benchmarks.md): how search hit@10 dev 0.667 -> 0.917, test 0.781 -> 0.812.
WORDS_POOL = 100  # dense candidates the lift can reach (in a first form, at lift 0.25: 60 gave dev search hit 0.833, 150 as 100)
WORDS_RANKS = 30  # the first this many code definitions by BM25 are lifted ... (there, 15 or 50: 0.875)
WORDS_LIFT = 0.15  # ... the first by this much, less down the ranks (0.25: dev lead 0.500, attrs citation precision -0.018)
# ... and each word's plain forms (words.inflections: "matches" -> match) join the BM25 query at this weight, the
# word as written at 1. Dev, before -> after (docs/benchmarks.md, stop 55): how lead 0.536 -> 0.571, search hit@10
# 0.804 -> 0.821; SWE-QA dev search span hit 0.746 -> 0.762, MRR 0.515 -> 0.529. A first form at 1.0: the same
# lead, how cited 0.839 -> 0.821; at 0.75 lead 0.554, cited 0.821. 0 leaves the forms out.
WORDS_FORM_WEIGHT = 0.5
# Any other question asked in words ("What is the role of ...", "Why does ...") is lifted the same way, by at most
# this much. SWE-QA dev (stop 56), 0 -> 0.075, search file recall / span hit / MRR: 0.602 / 0.762 / 0.529 -> 0.617 /
# 0.778 / 0.548, evidence 0.657 / 0.794 / 0.512 -> 0.676 / 0.810 / 0.527; 0.05: search span hit 0.754; 0.1: 0.622 /
# 0.770 / 0.551 and attrs' natural-language R@1 0.60 -> 0.56; the larger pool alone (a lift of ~0): 0.610 / 0.762
# / 0.529; at 0.15 0.623 / 0.762 / 0.540 (in stop 48, with the steps of then, 0.15 cost dev span hit 0.738 -> 0.698).
WORDS_ASKED_LIFT = 0.075
PATH_WORD_MAX_FILES = 3  # a word in more file names than this ("toml" in tomlkit) names no file in particular
# "No such option" / 'cannot open file': quotes not inside a word (don't, the bar's writer) around 2+ words
_QUOTED_PHRASE = re.compile(r"(?<![\w`])([\"'])[^\"'`\n]*?\w\s+\w[^\"'`\n]*?\1(?![\w`])")


class Searcher:
    """Ranks chunks of one index for a query (see the module docstring)."""

    def __init__(self, store: StoreReader, embedder: Embedder, graph: GraphQueries, source: SourceFiles,
                 documents: Embedder | None = None, question_map: QuestionMap | None = None):
        self.store = store
        self.embedder = embedder  # embeds queries (an asymmetric model's query side)
        self.question_map = question_map  # moves the vector of a question about behaviour (embed/question_map.py)
        self.documents = documents or embedder  # embeds code at question time (lead.zoom_hits)
        self.graph = graph
        self.source = source
        # the indexed paths and file_name_stems of them: stemming every file name took 450 ms a question
        # on site-packages (36k files)
        self._name_stems: tuple[list[str], dict[str, list[str]]] | None = None
        # the re-ranking steps, in the order they apply (rankers.py)
        self.rankers: tuple[Ranker, ...] = (NamedSymbols(store, graph), ReferenceHop(store), SecondaryFiles(), QuestionDeed())
        # a second embedding model that reorders a question's candidates before they are spread over files
        # (query/rerank.py, CODEQA_RERANK=openai:<model>; set by the Retriever)
        self.reranker: Reranker | None = None
        # picks what leads the evidence of a question about behaviour, after lead.py's steps
        # (query/rerank.py, CODEQA_RERANK=likelihood:<file.gguf>; set by the Retriever)
        self.lead_reranker: Reranker | None = None

    def search(self, query: str | RankQuery, top_k: int = 10, spread: bool = False) -> list[Hit]:
        """Best chunks for a query, best first; with `spread`, evidence from more files follows them.

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

        A question asked in words whose deed is a participle ("How are options parsed ...?",
        question_deed) lifts the candidates whose name carries it by DEED_BOOST (rankers.QuestionDeed): the dense
        model ranks by topic words and put Command.format_options before the parser (requests'
        natural-language set MRR@10 0.787 -> 0.838, the other sets unchanged).
        A question asked in words lifts the code definitions BM25 finds by its prose words (`_lift_by_words`):
        by up to WORDS_LIFT when it asks about behaviour, by up to WORDS_ASKED_LIFT otherwise.
        A question asked in words ("How does Live redraw in place?") gets a top k spread over files
        (`_spread_question`): its first QUESTION_HEAD results as ranked, then package files not yet
        shown. Identifiers and descriptions keep the ranking: capping every query at 2 results a file
        cost the docstring benchmark 0.06 recall@10 (bench/retrieval.py, pluggy + marshmallow).

        `spread` (the evidence of an answer): after the top k come what the top hits call that shares
        words with the question (`_work`), the definitions the top hits call in other files
        (CALLEE_CANDIDATES) and the best hits of files not yet present (SPREAD_FILES), since an answer
        often spans files.

        A query read already (a RankQuery: a routed question's, question.parse_question) is not read again.
        """
        ranked = query if isinstance(query, RankQuery) else RankQuery.of(query)
        text = ranked.text
        coverage = semantic_coverage(self.store.read_meta())
        # None while phase 1 of an index run has embedded nothing: keywords and the graph only, no model loads
        vector = self.embedder.encode([text])[0] if coverage > 0 else None
        if vector is not None and ranked.behaviour and self.question_map is not None:
            vector = self.question_map.apply(vector)
        hits = self._candidates(ranked, max(top_k * (CANDIDATES_PER_RESULT if spread else 3), 30), vector, coverage)
        for ranker in self.rankers:
            hits = ranker.rank(hits, ranked)
        merged = _merge_same_symbol(self._extend_to_definitions(self.source.mark_stale(hits)))
        merged.sort(key=lambda h: -h.score)
        if self.reranker is not None:  # it leaves an identifier or a code fragment alone (its contract)
            merged = self.reranker.rerank(text, merged, self.graph)
        if spread:
            chosen = merged[:top_k]
            chosen += self._work(chosen, text)
            if ranked.behaviour and vector is not None:
                chosen = zoom_hits(chosen, text, vector, self.documents, self.graph, self.source)
                chosen = follow_delegates(logic_first(work_first(chosen, text)), self.store, self.graph, self.source)
                chosen = callee_first(chosen, self._calls_from(chosen[:1]))
                if self.lead_reranker is not None:
                    chosen = self.lead_reranker.rerank(text, chosen, self.graph)
            chosen += self._callees(chosen) + _other_files(merged[top_k:], chosen, SPREAD_FILES)
        elif ranked.asked:
            chosen = self._spread_question(text, merged, top_k)
        else:
            chosen = merged[:top_k]
        # the index holds redacted text; a result shows the file's own lines (the user's machine, not a prompt)
        return [replace(h, text=own) if (own := self.source.text(h.path, h.start_line, h.end_line)) is not None else h
                for h in chosen]

    def search_reranked(self, query: str | RankQuery, top_k: int, spread: bool, reranker: Reranker | None) -> list[Hit]:
        """search(), its results then reordered by `reranker` (CODEQA_RERANK's "results" reranker, when set): it
        sees up to its candidates, more than top k, so that a reranked hit can enter the top k; with `spread`
        only the top k reorder, and the evidence from other files stays after them."""
        if reranker is None:
            return self.search(query, top_k, spread=spread)
        text = query.text if isinstance(query, RankQuery) else query
        if spread:
            hits = self.search(query, top_k, spread=True)
            return reranker.rerank(text, hits[:top_k], self.graph) + hits[top_k:]
        return reranker.rerank(text, self.search(query, max(top_k, reranker.candidates)), self.graph)[:top_k]

    def _candidates(self, query: RankQuery, limit: int, vector: Sequence[float] | None, coverage: float) -> list[Hit]:
        """The engine's best `limit` chunks: dense (`vector`), with BM25 over the code terms fused in when the
        query wants keywords; while phase 2 of an index run is not done (`coverage`, the share of chunks
        embedded, below 1), the words find what has no vector yet."""
        terms, text = list(query.terms), query.text
        keywords = query_sparse_vector(" ".join(terms)) if wants_keywords(text, terms, query.share) else None
        if vector is None:  # phase 1 of an index run: keywords and the graph only
            return self.store.search(None, keywords or query_sparse_vector(prose_keywords(text)), limit)
        if coverage < 1 and keywords is None:  # chunks without a dense vector yet are found by their words
            return self.store.search(vector, query_sparse_vector(prose_keywords(text)), limit,
                                     weights=(1.0, 1.0 - coverage))
        if keywords is None and query.asked:
            # the whole pool goes on: cut to `limit`, the lifted definitions of one file crowded out the other files
            # an answer spans (bench/multifile.py, search, every file found: 0.657 -> 0.543)
            return self._lift_by_words(text, self.store.search(vector, None, max(limit, WORDS_POOL)),
                                       WORDS_LIFT if query.behaviour else WORDS_ASKED_LIFT)
        return self.store.search(vector, keywords, limit)

    def _lift_by_words(self, question: str, hits: list[Hit], most: float) -> list[Hit]:
        """`hits` (dense, best first), the code definitions among the first WORDS_RANKS by BM25 over the
        question's prose words lifted by up to `most` (reason "words", `Hit.lift`), best first again:
        WORDS_LIFT for a question about behaviour, WORDS_ASKED_LIFT for any other question in words.

        The dense model ranks a question about behaviour by its topic, so the definitions that talk about it
        (a docstring, a property named for it) come before the code that does it: for bottle's "How does the
        router find which route handles an incoming request's path and HTTP method?" `BaseRequest.route` was
        first and `Router.match` 15th. The words the question shares with the code's body (router, route,
        method, path) find it. Only definitions in code files are lifted: README sections and tests share
        the words best. Fused this way, not by RRF: the later steps (lead.py) compare cosine-like scores.
        Over every question asked in words, at WORDS_LIFT, SWE-QA-Bench dev's search span hit@10 fell 0.738 ->
        0.698, so the other questions get the smaller WORDS_ASKED_LIFT (their figures at that constant)."""
        words = [h for h in self.store.search(None, words_vector(question, WORDS_FORM_WEIGHT), WORDS_RANKS * 3)
                 if h.kind in ("method", "function", "class") and path_role(h.path) == "code"]
        ranks = {(h.path, h.start_line): r for r, h in enumerate(words[:WORDS_RANKS])}
        out = []
        for h in hits:
            rank = ranks.get((h.path, h.start_line))
            if rank is not None:
                lift = most * (1 - rank / WORDS_RANKS)
                h = replace(h, score=h.score + lift, lift=lift, reasons=h.reasons + ("words",))
            out.append(h)
        return sorted(out, key=lambda h: -h.score)

    def _spread_question(self, query: str, ranked: list[Hit], top_k: int) -> list[Hit]:
        """A question's top k, spread over files: the head as ranked, then package files not yet shown.

        A question about how something works often needs several files ("how does Live redraw in
        place" needs live.py, live_render.py and control.py), while the ranking alone fills the top k
        with pieces of the best file. So after the first QUESTION_HEAD results, up to QUESTION_NEW_FILES
        slots go to package files not yet shown, in this order: the definitions the head calls
        (QUESTION_CALLEES; control.py), files whose name is a word of the question ("spinner" ->
        _spinners.py), then the best candidate of each further package file that reaches
        QUESTION_OTHER_FLOOR of the best score (in a small repository the other files can be unrelated).
        Slots left take the next results by score. Tests, docs and examples get no slot of their own:
        giving them one cost the natural-language set of attrs 0.04 recall@10 (a gold second hit of
        _make.py pushed out).
        """
        head = ranked[:QUESTION_HEAD]
        if len(head) < QUESTION_HEAD or top_k <= QUESTION_HEAD:
            return ranked[:top_k]
        slots = min(QUESTION_NEW_FILES, top_k - QUESTION_HEAD)
        fresh = self._callees(head, min(QUESTION_CALLEES, slots))
        fresh += self._named_file_hits(query, ranked, head + fresh, slots - len(fresh))
        # the floor and the order of the further files go by the dense model's scores: the question's words
        # (_lift_by_words) lift the definitions of the file they name most, and those crowded the other files out
        floor = max(h.score - h.lift for h in head) * QUESTION_OTHER_FLOOR
        code = sorted((h for h in ranked[QUESTION_HEAD:] if path_role(h.path) == "code" and h.score - h.lift >= floor),
                      key=lambda h: h.lift - h.score)
        fresh += _other_files(code, head + fresh, slots - len(fresh))
        taken = {(h.path, h.start_line) for h in fresh}
        rest = [h for h in ranked[QUESTION_HEAD:] if (h.path, h.start_line) not in taken]
        return head + sorted(fresh + rest[:top_k - QUESTION_HEAD - len(fresh)], key=lambda h: -h.score)

    def _named_file_hits(self, query: str, ranked: list[Hit], shown: list[Hit], count: int) -> list[Hit]:
        """Up to `count` hits, one from each package file whose name holds a word of the question, that
        `shown` lacks: the file's best candidate, else (the search missed the file) its chunk that shares the
        most words with the question, when it shares NAMED_FILE_SHARED_WORDS or more.

        A file the search missed used to be taken on its name alone; on SWE-QA-Bench's development
        projects (bench/swe_qa.py) those were mostly a common word ("basic" -> new/basic.py, "server" ->
        conan_server.py), and asking for three shared words lifted search file recall@10 and span hit@10
        (figures in NAMED_FILE_SHARED_WORDS's comment)."""
        if count <= 0:
            return []
        present = {h.path for h in shown}
        paths = self.source.paths()
        if self._name_stems is None or self._name_stems[0] != paths:  # once per set of indexed files
            self._name_stems = (paths, file_name_stems(paths))
        files = [p for p in files_named_by_words(query, paths, self._name_stems[1]) if p not in present][:count]
        floor = shown[-1].score if shown else 0.0
        words = set(question_stems(query))
        out: list[Hit] = []
        for path in files:
            hit = next((h for h in ranked if h.path == path), None)
            if hit is None:
                shared, hit = max(((len(words & set(stems(h.text))), h) for h in self.store.chunks_in_file(path)),
                                  key=lambda f: f[0], default=(0, None))
                # a file the search missed needs more than its name: "basic" named new/basic.py for
                # "the Basic authentication credential processor"
                if hit is None or shared < NAMED_FILE_SHARED_WORDS:
                    continue
            out.append(replace(hit, score=min(hit.score, floor) - 1e-6 * (len(out) + 1), reasons=hit.reasons + ("file name",)))
        return out

    def _callees(self, ranked: list[Hit], count: int = CALLEE_CANDIDATES) -> list[Hit]:
        """Up to `count` definitions, each from a file not among `ranked`, that the top
        HOP_SOURCES hits call or instantiate (most called first): the code the best hit hands over to."""
        if count <= 0 or not ranked:
            return []
        present = {h.path for h in ranked}
        counts = {t: n for t, n in self._calls_from(ranked[:HOP_SOURCES]).items() if t.partition("#")[0] not in present}
        wanted = [t for t, _ in sorted(counts.items(), key=lambda kv: -kv[1])][:count * 2]
        if not wanted:
            return []
        floor = ranked[-1].score
        added: list[Hit] = []
        for h in self.store.chunks_for_symbols(wanted, limit=count * 4):
            if h.path in present or not (set(h.symbol_ids) & set(wanted)):
                continue
            present.add(h.path)
            added.append(replace(h, score=floor - 1e-6 * (len(added) + 1), reasons=("callee",)))
            if len(added) >= count:
                break
        return added

    def _work(self, ranked: list[Hit], query: str, count: int = WORK_CANDIDATES) -> list[Hit]:
        """Up to `count` definitions that the top WORK_SOURCES hits call or instantiate and that share words
        with the question, most shared first (a word of the name counts twice): the code the best hits hand
        the work to (the search finds the entry point of "how are routes matched"; the matching is in the
        `matches` method it calls). Any file, the hits' own included; definitions already shown are left out.

        On SWE-QA-Bench's development projects (bench/swe_qa.py; with the named-file rule) the share of the
        expert answers' named definitions in an answer's evidence went 0.402 -> 0.437 and its span hit
        0.738 -> 0.770 (the test split: docs/benchmarks.md)."""
        if count <= 0 or not ranked:
            return []
        calls = self._calls_from(ranked[:WORK_SOURCES])
        shown_ids = {i for h in ranked for i in h.symbol_ids}
        wanted = set(sorted((t for t in calls if t not in shown_ids), key=lambda t: -calls[t])[:WORK_LOOKUPS])
        if not wanted:
            return []
        words = set(question_stems(query))
        shown = {(h.path, h.start_line) for h in ranked}
        # (words shared with the question, a word of the name counting twice; the chunk)
        found = [(2 * len(words & name_stems(h.symbol or "")) + len(words & set(stems(h.text[:400]))), h)
                 for h in self.store.chunks_for_symbols(sorted(wanted), limit=WORK_LOOKUPS * 3)
                 if (h.path, h.start_line) not in shown and set(h.symbol_ids) & wanted]
        floor = ranked[-1].score
        out: list[Hit] = []
        for shared, h in sorted(found, key=lambda f: (-f[0], f[1].path, f[1].start_line)):
            if shared <= 0 or len(out) >= count:
                break
            if (h.path, h.start_line) not in shown:
                shown.add((h.path, h.start_line))
                out.append(replace(h, score=floor - 1e-6 * (len(out) + 1), reasons=("work",)))
        return out

    def _calls_from(self, hits: Sequence[Hit]) -> dict[str, int]:
        """How often the definitions of `hits` (each hit's first symbol) call or instantiate each symbol id,
        resolved exactly or likely; in the order the store gives the references."""
        sources = [sid for h in hits for sid in h.symbol_ids[:1]]
        counts: dict[str, int] = {}
        for r in self.store.references_from(sources) if sources else ():
            if r.kind in ("call", "instantiation") and r.confidence in ("exact", "likely"):
                for t in r.target_ids:
                    counts[t] = counts.get(t, 0) + 1
        return counts

    def _extend_to_definitions(self, hits: Sequence[Hit]) -> list[Hit]:
        """A piece cut from inside a long function starts at the function's first line, so the result shows the def."""
        out = []
        by_id = self.graph.symbols_by_id(i for h in hits for i in h.symbol_ids)
        for h in hits:
            starts = [by_id[i].start_line for i in h.symbol_ids if i in by_id and by_id[i].path == h.path
                      and by_id[i].kind in ("function", "method") and by_id[i].start_line < h.start_line <= by_id[i].end_line]
            if starts and h.start_line - max(starts) <= 400:
                start = max(starts)
                text = self.source.text(h.path, start, h.end_line)
                if text is not None:
                    h = replace(h, start_line=start, text=text)
            out.append(h)
        return out


def words_vector(question: str, form_weight: float) -> tuple[list[int], list[float]]:
    """The sparse query of Searcher._lift_by_words: a question's prose words at weight 1, and the plain forms
    of each (words.inflections) at `form_weight`, so that "matches" finds `match` while the word as written
    counts for more. A token both written and a form of another word keeps weight 1. A word goes lower-cased, so
    `PathSpec` is the token pathspec and not also path and spec: split, SWE-QA dev search file recall fell 0.602 ->
    0.594 and span hit 0.762 -> 0.754 (stop 55). A `form_weight` of 0 is the query before stop 55: the words as
    written, split."""
    if form_weight <= 0:
        return query_sparse_vector(prose_keywords(question))
    words = [w.lower() for w in prose_keywords(question).split()]
    written = query_sparse_vector(" ".join(words))[0]
    forms = query_sparse_vector(" ".join(f for w in words for f in inflections(w)[1:]))[0]
    weights = {**dict.fromkeys(forms, form_weight), **dict.fromkeys(written, 1.0)}
    ids = sorted(weights)
    return ids, [weights[i] for i in ids]


def wants_keywords(query: str, terms: Sequence[str], share: float) -> bool:
    """Whether BM25 over the code terms joins the dense search: a query that is mostly code, or one that
    quotes a phrase of two or more words (an error message, a log line)."""
    return bool(terms) and (share >= KEYWORD_CODE_SHARE or _QUOTED_PHRASE.search(query) is not None)


def file_name_stems(paths: Sequence[str]) -> dict[str, list[str]]:
    """Stem of a word in a package file's name -> those files (what files_named_by_words looks up)."""
    by_word: dict[str, list[str]] = {}
    for path in paths:
        if path_role(path) != "code":
            continue
        name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        for stem in set(stems(name.replace("_", " "))):
            by_word.setdefault(stem, []).append(path)
    return by_word


def files_named_by_words(query: str, paths: Sequence[str], by_word: Mapping[str, list[str]] | None = None) -> list[str]:
    """Package files whose file name holds a question word (by stem), most words first; a word in more
    than PATH_WORD_MAX_FILES file names counts for none. `by_word`: file_name_stems(paths), when made already."""
    by_word = file_name_stems(paths) if by_word is None else by_word
    counts: dict[str, int] = {}
    for stem in question_stems(query):
        files = by_word.get(stem, [])
        if len(files) <= PATH_WORD_MAX_FILES:
            for path in files:
                counts[path] = counts.get(path, 0) + 1
    return sorted(counts, key=lambda p: -counts[p])


def _other_files(candidates: Sequence[Hit], chosen: Sequence[Hit], count: int) -> list[Hit]:
    """The best candidate of each file not among `chosen`, up to `count` files, best first."""
    present = {h.path for h in chosen}
    out: list[Hit] = []
    for h in candidates:
        if len(out) >= count:
            break
        if h.path not in present:
            present.add(h.path)
            out.append(h)
    return out


def _merge_same_symbol(hits: list[Hit]) -> list[Hit]:
    """Pieces extended to the same definition become one hit with the best score, and the `lift` and `boost`
    inside that score (Searcher._lift_by_words, the rankers), so that score - lift - boost stays the engine's."""
    best: dict[tuple[str, int], Hit] = {}
    for h in hits:
        key = (h.path, h.start_line)
        if key not in best:
            best[key] = h
        elif h.score > best[key].score or h.end_line > best[key].end_line:
            keep = best[key]
            top = keep if keep.score >= h.score else h
            best[key] = replace(keep if keep.end_line >= h.end_line else h, score=top.score, lift=top.lift,
                                boost=top.boost, reasons=tuple(dict.fromkeys(keep.reasons + h.reasons)))
    return list(best.values())


__all__ = ["Searcher", "wants_keywords", "files_named_by_words", "file_name_stems"]
