"""Hybrid search: the dense vector ranks, BM25 over a query's code terms joins when the query is code,
fused inside the engine (weighted RRF); then graph and file evidence re-rank.

    query --embed--> dense vector (+ sparse vector of the code terms) --Store.search--> candidates
      --> + symbols the query names (SYMBOL_BOOST), + one reference hop from the top hits (HOP_BOOST),
          + methods of a class among them (MEMBER_BOOST), - tests/examples/docs/stubs (ROLE_PENALTY)
      --> pieces extended to their function's first line, merged per definition --> top k
      --> a question in words: the first 5 as ranked, the rest from package files not yet shown
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Mapping, Sequence

from .embed import Embedder
from .files import path_role
from .lookup import GraphQueries
from .question import SECONDARY_WORDS, is_question, question_deed
from .source import SourceFiles
from .store import Store, query_sparse_vector, semantic_coverage
from .types import Hit, Symbol, split_symbol_id

SYMBOL_BOOST = 1.0  # times the code share of the query: above any cosine / RRF score for a bare identifier
HOP_BOOST = 0.02
HOP_SOURCES = 3
MEMBER_BOOST = 0.02  # methods of a class among the top hits: "how does the Path type check ..." -> Path.convert
# Measured on the docstring benchmark over 7 projects (bench/retrieval.py): 0.05 everywhere gave mean
# R@10 0.837 / MRR 0.577, these 0.855 / 0.590. A question that names tests, examples or docs lifts them.
ROLE_PENALTY = {"test": 0.15, "example": 0.1, "docs": 0.15, "stub": 0.2}
KEYWORD_CODE_SHARE = 0.5
CALLEE_CANDIDATES = 2  # evidence for an answer: definitions the top hits call, from files not among them
SPREAD_FILES = 4  # evidence for an answer: the best hit of this many more files
CANDIDATES_PER_RESULT = 5  # candidates fetched per result asked for (the spread over files needs a few more)
# A question's top k (Searcher._spread_question): the first QUESTION_HEAD results as ranked, then up to
# QUESTION_NEW_FILES results from package files not yet shown. Measured on bench/multifile.py (rich, tomlkit):
# file recall@10 0.602 -> 0.855, with the natural-language sets (requests, attrs) unchanged; see docs/benchmarks.md.
QUESTION_HEAD = 5
QUESTION_NEW_FILES = 5
QUESTION_CALLEES = 2
DEED_BOOST = 0.04  # a question's deed in a candidate's name: "How are options parsed ...?" -> OptionParser.parse_args
QUESTION_OTHER_FLOOR = 0.5  # a further file's best candidate needs half the best score: tiny repos have irrelevant files
PATH_WORD_MAX_FILES = 3  # a word in more file names than this ("toml" in tomlkit) names no file in particular
_SUFFIXES = ("ings", "ing", "ers", "er", "ed", "es", "s")
# "No such option" / 'cannot open file': quotes not inside a word (don't, the bar's writer) around 2+ words
_QUOTED_PHRASE = re.compile(r"(?<![\w`])([\"'])[^\"'`\n]*?\w\s+\w[^\"'`\n]*?\1(?![\w`])")
_CODE_TERM = re.compile(r"`[^`]+`|(?<!\w)\"[^\"]{3,}\"(?!\w)|(?<!\w)'[^']{3,}'(?!\w)|[\w./-]+\.[A-Za-z]{1,5}\b|[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+"
                        r"|\b[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*\b|\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b|\b\w+\(\)")


# Words of a question that say nothing of the code it asks about (BM25 over a whole question, phase 1)
STOP_WORDS = frozenset("""a an and are as at be been being but by can could did do does doing done for from get gets
had has have how i if in into is it its me my of on or our should so than that the their them then there these they
this those to was we were what when where which while who whom why will with would you your code function functions
method methods class classes file files implemented implement work works happen happens used use uses""".split())


class Searcher:
    """Ranks chunks of one index for a query (see the module docstring)."""

    def __init__(self, store: Store, embedder: Embedder, graph: GraphQueries, source: SourceFiles):
        self.store = store
        self.embedder = embedder
        self.graph = graph
        self.source = source
        # the indexed paths and file_name_stems of them: stemming every file name took 450 ms a question
        # on site-packages (36k files)
        self._name_stems: tuple[list[str], dict[str, list[str]]] | None = None

    def search(self, query: str, top_k: int = 10, spread: bool = False) -> list[Hit]:
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
        question_deed) lifts the candidates whose name carries it by DEED_BOOST (_lift_deed): the dense
        model ranks by topic words and put Command.format_options before the parser (requests'
        natural-language set MRR@10 0.787 -> 0.838, the other sets unchanged).
        A question asked in words ("How does Live redraw in place?") gets a top k spread over files
        (`_spread_question`): its first QUESTION_HEAD results as ranked, then package files not yet
        shown. Identifiers and descriptions keep the ranking: capping every query at 2 results a file
        cost the docstring benchmark 0.06 recall@10 (bench/retrieval.py, pluggy + marshmallow).

        `spread` (the evidence of an answer): after the top k come the definitions the top hits call in
        other files (CALLEE_CANDIDATES) and the best hits of files not yet present (SPREAD_FILES), since
        an answer often spans files.
        """
        limit = max(top_k * (CANDIDATES_PER_RESULT if spread else 3), 30)
        terms = code_terms(query)
        share = _code_share(query, terms)
        keywords = query_sparse_vector(" ".join(terms)) if wants_keywords(query, terms, share) else None
        coverage = semantic_coverage(self.store.read_meta())
        if coverage <= 0:  # phase 1 of an index run: keywords and the graph only, and no model to load
            hits = self.store.search(None, keywords or query_sparse_vector(prose_keywords(query)), limit)
        elif coverage < 1 and keywords is None:  # chunks without a dense vector yet are found by their words
            hits = self.store.search(self.embedder.encode([query])[0], query_sparse_vector(prose_keywords(query)),
                                     limit, weights=(1.0, 1.0 - coverage))
        else:
            hits = self.store.search(self.embedder.encode([query])[0], keywords, limit)
        hits = self._boost_named_symbols(hits, terms, share)
        hits = self._boost_reference_hop(hits)
        hits = _demote_secondary_files(hits, query)
        asked = is_question(query) and share < KEYWORD_CODE_SHARE
        if asked:
            hits = _lift_deed(hits, question_deed(query))
        merged = _merge_same_symbol(self._extend_to_definitions(self.source.mark_stale(hits)))
        merged.sort(key=lambda h: -h.score)
        if spread:
            chosen = merged[:top_k]
            chosen += self._callees(chosen) + _other_files(merged[top_k:], chosen, SPREAD_FILES)
        elif asked:
            chosen = self._spread_question(query, merged, top_k)
        else:
            chosen = merged[:top_k]
        # the index holds redacted text; a result shows the file's own lines (the user's machine, not a prompt)
        return [replace(h, text=text) if (text := self.source.text(h.path, h.start_line, h.end_line)) is not None else h
                for h in chosen]

    def _boost_named_symbols(self, hits: list[Hit], names: Sequence[str], share: float) -> list[Hit]:
        """Chunks defining a symbol the query names move up (fetched if search missed them).

        The lift grows with the share of the query that is code: a bare `EncoderClass` puts its
        definition first; a sentence that mentions :class:`Command` in passing barely moves Command.
        """
        boost = SYMBOL_BOOST * max(share, 0.05)
        named = {s.id: s for name in names for s in self.graph.find_symbols(name)} if names else {}
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
        floor = ranked[0].score * QUESTION_OTHER_FLOOR
        code = [h for h in ranked[QUESTION_HEAD:] if path_role(h.path) == "code" and h.score >= floor]
        fresh += _other_files(code, head + fresh, slots - len(fresh))
        taken = {(h.path, h.start_line) for h in fresh}
        rest = [h for h in ranked[QUESTION_HEAD:] if (h.path, h.start_line) not in taken]
        return head + sorted(fresh + rest[:top_k - QUESTION_HEAD - len(fresh)], key=lambda h: -h.score)

    def _named_file_hits(self, query: str, ranked: list[Hit], shown: list[Hit], count: int) -> list[Hit]:
        """Up to `count` hits, one from each package file whose name holds a word of the question and that
        `shown` lacks: the file's best candidate, else its chunk that shares the most words with the question."""
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
                chunks = self.store.chunks_in_file(path)
                if not chunks:
                    continue
                hit = max(chunks, key=lambda h: len(words & set(_stems(h.text))))
            out.append(replace(hit, score=min(hit.score, floor) - 1e-6 * (len(out) + 1), reasons=hit.reasons + ("file name",)))
        return out

    def _callees(self, ranked: list[Hit], count: int = CALLEE_CANDIDATES) -> list[Hit]:
        """Up to `count` definitions, each from a file not among `ranked`, that the top
        HOP_SOURCES hits call or instantiate (most called first): the code the best hit hands over to."""
        if count <= 0 or not ranked:
            return []
        sources = [sid for h in ranked[:HOP_SOURCES] for sid in h.symbol_ids[:1]]
        present = {h.path for h in ranked}
        counts: dict[str, int] = {}
        for r in self.store.references_from(sources):
            if r.kind in ("call", "instantiation") and r.confidence in ("exact", "likely"):
                for t in r.target_ids:
                    if t.partition("#")[0] not in present:
                        counts[t] = counts.get(t, 0) + 1
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


def prose_keywords(query: str) -> str:
    """A question's words for BM25 when dense vectors are missing: the words that say what it is about."""
    return " ".join(w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query) if w.lower() not in STOP_WORDS)


def code_terms(query: str) -> list[str]:
    """Tokens of a query that are code, not prose: `quoted`, "a string", snake_case, camelCase, a.b, f(), file.ext."""
    terms = [t.strip("`'\"()") for t in _CODE_TERM.findall(query)]
    return [t for t in terms if len(re.sub(r"\W", "", t)) >= 3]  # not "e.g." or "i.e."


def wants_keywords(query: str, terms: Sequence[str], share: float) -> bool:
    """Whether BM25 over the code terms joins the dense search: a query that is mostly code, or one that
    quotes a phrase of two or more words (an error message, a log line)."""
    return bool(terms) and (share >= KEYWORD_CODE_SHARE or _QUOTED_PHRASE.search(query) is not None)


def _stem(word: str) -> str:
    """A crude stem, enough to match a file name to a question word: spinners/spinner, parsed/parser, styles/style."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[:-len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _stems(text: str) -> list[str]:
    return [_stem(w) for w in re.findall(r"[A-Za-z]{3,}", text)]


def question_stems(query: str) -> list[str]:
    """The stems of a question's content words, and of each two neighbours written together ("file size" -> filesize)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", query)]
    content = [w for w in words if len(w) >= 3 and w not in STOP_WORDS]
    pairs = [a + b for a, b in zip(words, words[1:]) if len(a) >= 3 and len(b) >= 3]
    return list(dict.fromkeys(_stem(w) for w in content + pairs))


def file_name_stems(paths: Sequence[str]) -> dict[str, list[str]]:
    """Stem of a word in a package file's name -> those files (what files_named_by_words looks up)."""
    by_word: dict[str, list[str]] = {}
    for path in paths:
        if path_role(path) != "code":
            continue
        name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        for stem in set(_stems(name.replace("_", " "))):
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


def name_stems(name: str) -> set[str]:
    """Stems of the words of a symbol name, split at dots, underscores and case: OptionParser.parse_args ->
    {option, pars, arg}."""
    return {_stem(w) for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name) if len(w) >= 3}


def _lift_deed(hits: list[Hit], deed: str | None) -> list[Hit]:
    """Candidates whose symbol name carries the question's deed (question_deed: "parsed") gain DEED_BOOST.

    The dense model ranks a prose question by its topic words, so "How are options parsed from the
    command line?" put Command.format_options (options, command) before the parser; the deed names
    the code that does it (OptionParser.parse_args, Command.make_parser)."""
    if deed is None:
        return hits
    stem = _stem(deed)
    out = [replace(h, score=h.score + DEED_BOOST, reasons=h.reasons + ("deed",)) if h.symbol and stem in name_stems(h.symbol)
           else h for h in hits]
    return sorted(out, key=lambda h: -h.score)


def _demote_secondary_files(hits: list[Hit], query: str) -> list[Hit]:
    """At equal similarity the implementation beats its tests, examples, docs and type stubs, unless asked for."""
    asked = SECONDARY_WORDS.search(query)
    out = [replace(h, score=h.score - ROLE_PENALTY[role]) if (role := path_role(h.path)) != "code"
           and not (asked and role != "stub") else h for h in hits]
    return sorted(out, key=lambda h: -h.score)


def _code_share(query: str, terms: Sequence[str]) -> float:
    words = len(re.findall(r"\w+", query)) or 1
    return min(1.0, sum(len(re.findall(r"\w+", t)) for t in terms) / words)


def _defines_any(h: Hit, named: Sequence[Symbol], named_ids: set[str]) -> bool:
    return any(s.id in named_ids and s.path == h.path and h.start_line <= s.start_line <= h.end_line for s in named)


def _parent_of(symbol_id: str) -> tuple[str, str]:
    """(path, qualified name of the enclosing symbol) for a Symbol.id; the name is empty at top level."""
    path, qualified = split_symbol_id(symbol_id)
    return path, qualified.rpartition(".")[0]


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


__all__ = ["Searcher", "code_terms", "wants_keywords", "SYMBOL_BOOST", "HOP_BOOST", "MEMBER_BOOST", "ROLE_PENALTY"]
