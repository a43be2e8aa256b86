"""What leads the evidence for "how does ... work?": the code that does the work, before what holds it or
hands it over.

Zoom (`zoom_hits`): a class-sized hit is preceded by the method in it nearest the question.

A chunk holds a small class whole (a retry strategy: `__init__` and `__call__`), and the dense model ranks
the class by its docstring; the answer then led with the class header while the work sat in `__call__`
further down. For the best ZOOM_HITS hits that are a class holding methods, the methods are embedded at
question time (the same header + code text the index embeds, `embed.text.embedding_text`) and the one
nearest the question is put just before its class, with the class's score. The class stays in the evidence:
the method is a span inside it, so the evidence an LLM reads does not change, only what an extractive
answer cites first.

No logic last (`logic_first`): among the first hits, one that does nothing (an exception class with a
docstring that names the topic, a constant, `retry_never = _retry_never()`) moves behind the first one
that does something.

Delegates (`follow_delegates`): a thin function among the first hits (a few lines: `get_url` joining what
`self.router.build(...)` returns, a `__call__` returning `super().__call__(...)`) is preceded by the definition it
calls that does something, so the answer leads with the work, not the entry point. And of two about as near the
question, the first hit and a function it calls, the callee leads (`callee_first`).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Collection

import numpy as np

from ..embed import Embedder
from ..embed.text import embedding_text
from ..roles import path_role
from ..store import GraphReader
from ..types import CLASS_LIKE, Hit, Symbol
from .lookup import GraphQueries
from .question import SECONDARY_WORDS
from .source import SourceFiles
from .words import acronyms, name_acronyms

ZOOM_HITS = 5  # the best hits looked into
MEMBER_LINES = 120  # of a method, the lines read ...
MEMBER_CHARS = 500  # ... and the characters of header and code embedded
ZOOM_MEMBERS = 6  # methods embedded a question, at most
MODULE_LINES = 3  # module-level code with fewer lines of logic does nothing worth leading with
DELEGATE_HITS = 3  # the best hits whose delegates are followed
CALLEE_HITS = 4  # the hits after the first that callee_first looks at ...
CALLEE_MARGIN = 0.03  # ... for one the first calls, scoring at most this much below it
THIN_LINES = 4  # a function with at most this many lines of logic hands its work over ...
WORK_LINES = 3  # ... to a callee with at least this many, and twice its own
WORK_HEAD = 8  # the first hits that work_first reorders
WORK_PRIOR = 0.05  # per log(1 + lines of logic), added to a hit's score there ...
WORK_CAP = 5  # ... up to this many: the prior tells code that does something from code that does little, not long from short
CLASS_BEHIND = 0.2  # taken there from a class (not module-level code): it holds the work; its methods do it
SECONDARY_BEHIND = 1.0  # taken there from a test, an example or a doc unless the question asks for one: behind the code
ACRONYM_PRIOR = 0.05  # added there to a hit whose name holds an acronym of the question's words (LRUCache: "least recently used")
# methods that set an object up or show it: they do not do the behaviour a "how" question asks about
SETUP_METHODS = frozenset(("__init__", "__new__", "__post_init__", "__repr__", "__str__", "__eq__", "__hash__", "__del__"))
_ASKS_SETUP = re.compile(r"\b(?:creat|construct|initiali[sz]|instantiat|set\s+up|repr|printed|compared|equal)", re.I)


def zoom_hits(hits: list[Hit], question: str, query_vector: np.ndarray, documents: Embedder, graph: GraphQueries,
              source: SourceFiles, count: int = ZOOM_HITS) -> list[Hit]:
    """`hits`, with the method nearest the question before each of the first `count` hits that is a class
    holding methods (reason "zoom", score: its own similarity to the question plus the class's `lift`). A method already among the
    hits is not added again, nor one of SETUP_METHODS unless the question asks about setting up or showing."""
    present = {(h.path, h.start_line) for h in hits}
    setup = _ASKS_SETUP.search(question) is not None
    # (logic lines, hit index, method, its text) of the methods not already among the hits
    found = [(logic, i, member, text) for i, h in enumerate(hits[:count])
             for member, text, logic in _members(h, graph, source) if (h.path, member.start_line) not in present
             and (setup or member.name not in SETUP_METHODS)]
    # the methods that do the most, at most ZOOM_MEMBERS: each costs ~0.1 s of CPU to embed here (NumPy encoder)
    found = sorted(found, key=lambda f: -f[0])[:ZOOM_MEMBERS]
    if not found:
        return hits
    texts = [embedding_text(hits[i].path, m.qualified_name, m.signature, m.docstring, text, max_chars=MEMBER_CHARS)
             for _, i, m, text in found]
    scores = documents.encode(texts) @ np.asarray(query_vector, dtype=np.float32)
    best: dict[int, tuple[float, Symbol, str]] = {}
    for (_, i, member, text), score in zip(found, scores):
        if i not in best or score > best[i][0]:
            best[i] = (float(score), member, text)
    # the method's own similarity, and what the question's words lifted its class by (Searcher._lift_by_words)
    picks = {i: replace(hits[i], start_line=m.start_line, end_line=m.end_line, symbol=m.qualified_name,
                        symbol_ids=(m.id,), text=text, reasons=hits[i].reasons + ("zoom",), kind="method",
                        score=score + hits[i].lift)
             for i, (score, m, text) in best.items()}
    out: list[Hit] = []
    for i, h in enumerate(hits):
        if i in picks:
            out.append(picks[i])
        out.append(h)
    return out


def work_first(hits: list[Hit], question: str = "", count: int = WORK_HEAD) -> list[Hit]:
    """`hits`, the first `count` ordered by score plus WORK_PRIOR per log(1 + lines of logic): of two hits about
    as near the question, the one that does more leads. A class stays behind the method zoomed out of it, and
    loses CLASS_BEHIND: its header and docstring name the topic, its methods do the work (bottle's `Router` led
    "How are URL rules ... turned into regular expressions?" before `Router.add`).

    A hit whose name holds an acronym of the question's words gains ACRONYM_PRIOR: the dense model does not know
    that LRUCache is the "least-recently-used cache" (cachetools' TLRUCache led that question) or TTLCache the
    "time-to-live" one."""
    head = hits[:count]
    short = acronyms(question)
    secondary = 0.0 if SECONDARY_WORDS.search(question) else SECONDARY_BEHIND
    key = [h.score + WORK_PRIOR * math.log1p(min(logic_lines(h.text), WORK_CAP))
           + (ACRONYM_PRIOR if h.symbol and name_acronyms(h.symbol) & short else 0.0)
           - (CLASS_BEHIND if h.kind in CLASS_LIKE and h.kind != "module" else 0.0)
           - (secondary if path_role(h.path) != "code" else 0.0) for h in head]
    for i, z in ((i, z) for i, z in enumerate(head) if "zoom" in z.reasons):  # its class follows a zoomed method
        for j, h in enumerate(head):
            if "zoom" not in h.reasons and h.path == z.path and h.start_line <= z.start_line <= h.end_line:
                key[j] = min(key[j], key[i] - 1e-9)
    order = sorted(range(len(head)), key=lambda i: -key[i])
    return [head[i] for i in order] + hits[count:]


def _members(hit: Hit, graph: GraphQueries, source: SourceFiles) -> list[tuple[Symbol, str, int]]:
    """The methods of the class a hit defines that the hit holds whole and that do something, each with its
    text and its logic_lines."""
    by_id = graph.symbols_by_id(hit.symbol_ids[:1])
    owner = by_id.get(hit.symbol_ids[0]) if hit.symbol_ids else None
    if owner is None or owner.kind not in CLASS_LIKE or owner.path != hit.path:
        return []
    prefix = owner.qualified_name + "."
    out = []
    for s in graph.symbols_in_file(hit.path):
        if s.kind in ("method", "function") and s.qualified_name.startswith(prefix) \
                and "." not in s.qualified_name[len(prefix):] \
                and hit.start_line <= s.start_line and s.end_line <= hit.end_line:
            text = source.text(hit.path, s.start_line, min(s.end_line, s.start_line + MEMBER_LINES - 1))
            if text is not None and (logic := logic_lines(text)) > 0:
                out.append((s, text, logic))
    return out


def logic_first(hits: list[Hit], count: int = ZOOM_HITS) -> list[Hit]:
    """`hits`, the ones among the first `count` that do nothing (_does_something) moved just behind the first
    that does (none moves when none of them does)."""
    head = hits[:count]
    doing = [h for h in head if _does_something(h)]
    if not doing or len(doing) == len(head):
        return hits
    first = head.index(doing[0])
    return [head[first], *head[:first], *head[first + 1:], *hits[count:]]


def _does_something(hit: Hit) -> bool:
    """A definition with logic, or module-level code with more than a line or two of it (not `never = _Never()`)."""
    logic = logic_lines(hit.text)
    return logic >= MODULE_LINES if hit.kind in ("module", "window") else logic > 0


def follow_delegates(hits: list[Hit], store: GraphReader, graph: GraphQueries, source: SourceFiles,
                     count: int = DELEGATE_HITS) -> list[Hit]:
    """`hits`, with the callee that does the work before each thin function among the first `count` (reason
    "delegate"): of the definitions it calls (resolved exactly or likely), the one with the most lines of logic,
    at least WORK_LINES. A callee already ahead of the thin function is not added; one further down moves up."""
    out = list(hits)
    at = 0
    while at < min(count, len(out)):
        h = out[at]
        callee = _delegate(h, store, graph, source)
        if callee is not None and not any((c.path, c.start_line) == (callee.path, callee.start_line) for c in out[:at]):
            out = [c for c in out if (c.path, c.start_line) != (callee.path, callee.start_line)]
            out.insert(at, callee)
            at += 1
        at += 1
    return out


def callee_first(hits: list[Hit], called: Collection[str], count: int = CALLEE_HITS) -> list[Hit]:
    """`hits`, with the first of the next `count` that the first hit calls (`called`: the symbol ids it calls or
    instantiates, Searcher._calls_from) moved before it, when both are functions or methods and the callee scores
    at most CALLEE_MARGIN below (reason "delegate"):
    of two about as near the question, the one handed the work does it (cachetools' `typedkey` calls `hashkey`,
    tinydb's `Table.insert` calls `_get_next_id`). Measured on bench/how.py's dev set (56 questions): lead
    0.482 -> 0.536; a margin of 0.05 also moved `RegexPattern.__init__` behind a callee, 0.1 moved six wrongly."""
    if not hits or hits[0].kind not in ("function", "method"):
        return hits
    top = hits[0]
    for j, h in enumerate(hits[1:count + 1], start=1):
        if h.kind in ("function", "method") and any(i in called for i in h.symbol_ids) \
                and h.score >= top.score - CALLEE_MARGIN:
            return [replace(h, reasons=h.reasons + ("delegate",)), *hits[:j], *hits[j + 1:]]
    return hits


def _delegate(hit: Hit, store: GraphReader, graph: GraphQueries, source: SourceFiles) -> Hit | None:
    """The hit made of the definition a thin function hit hands its work to, or None."""
    own = graph.symbols_by_id(hit.symbol_ids[:1]).get(hit.symbol_ids[0]) if hit.symbol_ids else None
    if own is None or own.kind not in ("function", "method") or own.path != hit.path \
            or (own_logic := logic_lines(hit.text)) > THIN_LINES or hit.end_line > own.end_line + 3:
        return None
    targets = [t for r in store.references_from([own.id]) if r.kind == "call" and r.confidence in ("exact", "likely")
               for t in r.target_ids if t != own.id]
    best: tuple[int, Symbol, str] | None = None
    for s in graph.symbols_by_id(targets).values():
        text = source.text(s.path, s.start_line, s.end_line) if s.kind in ("function", "method") else None
        logic = logic_lines(text) if text is not None else 0
        if logic >= max(WORK_LINES, 2 * own_logic) and (best is None or logic > best[0]):
            best = (logic, s, text)
    if best is None:
        return None
    _, s, text = best
    return replace(hit, path=s.path, start_line=s.start_line, end_line=s.end_line, symbol=s.qualified_name,
                   symbol_ids=(s.id,), text=text, kind=s.kind, reasons=hit.reasons + ("delegate",), stale=False)


_DOC_QUOTES = ('"""', "'''")
_HEADER = re.compile(r"(?:async\s+)?def\s|class\s")
_NOT_LOGIC = re.compile(r"^(?:#|//|/\*|\*|@|(?:async\s+)?def\s|class\s|(?:pass|\.\.\.|[)\]}]+:?|else:|try:|finally:)$"
                        r"|(?:self|this)\.\w+\s*(?::[^=]+)?=\s*[\w.]+;?$)")  # storing an argument is not logic


def _depth(line: str) -> int:
    """How many parentheses and square brackets a line opens and does not close (negative: closes more), roughly:
    strings aside, and not braces, which hold a whole body in the languages that have them."""
    code = line.split("#", 1)[0]
    return code.count("(") + code.count("[") - code.count(")") - code.count("]")


def logic_lines(text: str) -> int:
    """How many lines of a chunk do something: not blank, a comment, a docstring, a decorator, a def or class
    line (with the parameters of a signature written over several lines: a typed `@overload` stub does
    nothing), `pass`, a lone bracket, or a constructor storing an argument (`self.size = size`). The forms are
    Python's; in other languages a header line counts as one of logic, which still tells a class or a
    constant from a function that does something."""
    count, quote, header = 0, None, 0
    for raw in text.splitlines():
        line = raw.strip()
        if quote is not None:  # inside a docstring
            if quote in line:
                quote = None
            continue
        if header > 0:  # the parameters of a signature written over several lines
            header += _depth(line)
            continue
        if _HEADER.match(line):
            header = max(0, _depth(line))
        opener = next((q for q in _DOC_QUOTES if line.startswith(q) or line.startswith(("r" + q, "f" + q))), None)
        if opener is not None:
            quote = None if opener in line[line.index(opener) + 3:] else opener
            continue
        if line and not _NOT_LOGIC.match(line):
            count += 1
    return count
