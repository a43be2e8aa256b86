"""The re-ranking steps of a search, each a small named ranker; searcher.py applies them in this order.

    candidates --NamedSymbols--> chunks defining a symbol the query names move up (SYMBOL_BOOST)
               --ReferenceHop--> what the top hits call, and the methods of a class among them (HOP_BOOST, MEMBER_BOOST)
               --SecondaryFiles--> tests, examples, docs and stubs move down unless asked for (ROLE_PENALTY)
               --QuestionDeed--> a question's deed in a candidate's name ("parsed" -> parse_args; DEED_BOOST)

Each ranker takes the hits best first and returns them re-scored, best first. The order is part of the
contract: a boost that follows a sort sees the ranking the earlier steps made (bench/retrieval.py
measures the whole chain).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol, Sequence

from ..roles import path_role
from ..store import ChunkReader, GraphReader
from ..types import Hit, Symbol, split_symbol_id
from .lookup import GraphQueries
from .question import RankQuery
from .words import name_stems, stem

SYMBOL_BOOST = 1.0  # times the code share of the query: above any cosine / RRF score for a bare identifier
HOP_BOOST = 0.02
HOP_SOURCES = 3
MEMBER_BOOST = 0.02  # methods of a class among the top hits: "how does the Path type check ..." -> Path.convert
# Measured on the docstring benchmark over 7 projects (bench/retrieval.py): 0.05 everywhere gave mean
# R@10 0.837 / MRR 0.577, these 0.855 / 0.590. A question that names tests, examples or docs lifts them.
ROLE_PENALTY = {"test": 0.15, "example": 0.1, "docs": 0.15, "stub": 0.2}
DEED_BOOST = 0.04  # a question's deed in a candidate's name: "How are options parsed ...?" -> OptionParser.parse_args


class Ranker(Protocol):
    """One re-ranking step: hits best first in, re-scored hits best first out."""

    def rank(self, hits: list[Hit], query: RankQuery) -> list[Hit]: ...


class NamedSymbols:
    """Chunks defining a symbol the query names move up (fetched if search missed them).

    The lift grows with the share of the query that is code: a bare `EncoderClass` puts its
    definition first; a sentence that mentions :class:`Command` in passing barely moves Command.
    """

    def __init__(self, store: ChunkReader, graph: GraphQueries):
        self.store = store
        self.graph = graph

    def rank(self, hits: list[Hit], query: RankQuery) -> list[Hit]:
        names, share = list(query.terms), query.share
        boost = SYMBOL_BOOST * max(share, 0.05)
        named = {s.id: s for name in names for s in self.graph.find_symbols(name)} if names else {}
        if not named:
            return hits
        out = []
        for h in hits:
            if _defines_any(h, named.values(), set(named)):
                h = boosted(h, boost, "symbol")
            out.append(h)
        present = {(h.path, h.start_line) for h in out}
        for h in self.store.chunks_for_symbols(list(named)[:20], limit=40):
            if (h.path, h.start_line) not in present and _defines_any(h, named.values(), set(named)):
                out.append(replace(h, score=boost, boost=boost, reasons=("symbol",)))
                present.add((h.path, h.start_line))
        return sorted(out, key=lambda h: -h.score)


class ReferenceHop:
    """Candidates that the top HOP_SOURCES hits call, instantiate or inherit from gain HOP_BOOST; the
    methods of a class among them gain MEMBER_BOOST."""

    def __init__(self, store: GraphReader):
        self.store = store

    def rank(self, hits: list[Hit], query: RankQuery | None = None) -> list[Hit]:
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
                    h = boosted(h, HOP_BOOST, "ref-hop")
                elif _parent_of(sid) in sources:
                    h = boosted(h, MEMBER_BOOST, "member")
            out.append(h)
        return sorted(out, key=lambda h: -h.score)


class SecondaryFiles:
    """At equal similarity the implementation beats its tests, examples, docs and type stubs, unless asked for."""

    def rank(self, hits: list[Hit], query: RankQuery) -> list[Hit]:
        asked = query.secondary
        out = [boosted(h, -ROLE_PENALTY[role]) if (role := path_role(h.path)) != "code" and not (asked and role != "stub")
               else h for h in hits]
        return sorted(out, key=lambda h: -h.score)


class QuestionDeed:
    """A question asked in words whose deed is a participle lifts the candidates named for it (lift_deed)."""

    def rank(self, hits: list[Hit], query: RankQuery) -> list[Hit]:
        return lift_deed(hits, query.deed) if query.asked else hits


def lift_deed(hits: list[Hit], deed: str | None) -> list[Hit]:
    """Candidates whose symbol name carries the question's deed (question_deed: "parsed") gain DEED_BOOST.

    The dense model ranks a prose question by its topic words, so "How are options parsed from the
    command line?" put Command.format_options (options, command) before the parser; the deed names
    the code that does it (OptionParser.parse_args, Command.make_parser)."""
    if deed is None:
        return hits
    deed_stem = stem(deed)
    out = [boosted(h, DEED_BOOST, "deed") if h.symbol and deed_stem in name_stems(h.symbol) else h for h in hits]
    return sorted(out, key=lambda h: -h.score)


def boosted(h: Hit, amount: float, reason: str | None = None) -> Hit:
    """`h` with `amount` added to its score and recorded in its `boost` (what the embedding reranker keeps on top of
    its own cosine, query/rerank.py), and `reason` added to its reasons when given."""
    return replace(h, score=h.score + amount, boost=h.boost + amount, reasons=h.reasons + ((reason,) if reason else ()))


def _defines_any(h: Hit, named: Sequence[Symbol], named_ids: set[str]) -> bool:
    return any(s.id in named_ids and s.path == h.path and h.start_line <= s.start_line <= h.end_line for s in named)


def _parent_of(symbol_id: str) -> tuple[str, str]:
    """(path, qualified name of the enclosing symbol) for a Symbol.id; the name is empty at top level."""
    path, qualified = split_symbol_id(symbol_id)
    return path, qualified.rpartition(".")[0]
