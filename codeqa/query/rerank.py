"""Opt-in rerankers of a question asked in words: the configured chat model (CODEQA_RERANK=llm) reorders the
top results, a second, stronger embedding model (CODEQA_RERANK=openai:<model>) reorders the candidates, or a
chat model run in this process (CODEQA_RERANK=likelihood:<file.gguf>) picks what leads the evidence of a
question about behaviour.

The LLM reranker (`where = "results"`, applied to a search's final results):

    question + top N hits --one line each--> "1. path:L12 Name.method(sig) - doc"  --chat-->  "3 1 7"
      --> those candidates first, in the model's order; the rest keep theirs; scores keep their values

The prompt is listwise and tiny (one line a candidate, about 40 tokens), since a CPU model reads ~30-65
prompt tokens a second: 12 candidates cost the 0.5B model about ten seconds (docs/benchmarks.md). Where
the server takes a grammar (llama.cpp) the reply can only be candidate numbers; elsewhere it is parsed
strictly. A failed request, a timeout or a reply that is not a list of candidate numbers keeps the
search's order and says so in the hits' reasons: the reranker never fails a search.

The embedding reranker (`where = "pool"`, applied by the Searcher to its candidate pool, before the results
are spread over files): the bundled MiniLM finds the candidates, and a stronger model served at an
OpenAI-compatible /embeddings endpoint (EmbeddingGemma-300M: `scripts/local_llm.sh serve-embed
embeddinggemma`) scores each one, its path, name and first RERANK_TEXT_CHARS characters, by cosine to the
question, plus what the search's own rankers and the question's words had added to the candidate; the pool is
reordered by that score, and the spread over files then works on the new order. The
index stays the small model's (indexing with the larger one runs ten to twenty times slower on a CPU),
and the larger one reads only some 30 chunks a question, each once a process (`cache_size` vectors are
kept). A failed request keeps the pool's order and says so in the hits' reasons.

The likelihood reranker (`where = "lead"`, applied by the Searcher after lead.py's steps, to the evidence of a
question about behaviour): of the first LEAD_CANDIDATES functions and methods, the one the model finds the
question likeliest after (query/likelihood.py) moves to the first one's place when it beats it by more than
LEAD_MARGIN nats; the others keep their order. Measured with Qwen2.5-Coder-1.5B on bench/how.py
(docs/benchmarks.md, "Stop 58"): dev lead 0.571 -> 0.625, test 0.469 -> 0.594, ~8-11 s a question on two cores.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from ..config import Settings
from ..embed import Embedder, make_embedder, query_embedder
from ..errors import CodeQAError, UsageError
from ..llm import Generation, OpenAIChat
from ..types import Hit, Symbol, one_line
from .likelihood import Candidate, GGUFLikelihood, QuestionLikelihood, check_gguf
from .lookup import GraphQueries
from .question import RankQuery

RERANK_POOL = 40  # the embedding reranker's candidates: the whole pool a search ranks (30 for a question)
RERANK_TEXT_CHARS = 1200  # of a candidate, the characters (path, name, code) the embedding reranker reads
SIGNATURE_CHARS = 90  # one candidate stays on one line: a long signature says enough in its head
DOC_CHARS = 80
LEAD_CANDIDATES = 3  # the likelihood reranker's candidates: the evidence's first functions and methods ...
LEAD_MARGIN = 2.0  # ... and how many nats the likeliest must beat the first by (dev: 2 and 3 led the most)
SYSTEM = ("You rank search results from a code repository by how much they help answer a question. "
          "Reply only with the numbers of the helpful results, most relevant first, separated by spaces.")
_REPLY = re.compile(r"[\s,;\[\]#.0-9]*")  # what a reply may hold when no grammar held it to numbers


class Reranker(Protocol):
    """Reorders a search's final hits for a query.

    Contract: `rerank(query, hits, graph)` returns the same hits (same chunks, none added or dropped),
    best first, with scores still descending; it never raises for a model's failure, it keeps the
    order and adds a reason saying why. `candidates` is how many of the top hits it looks at; `where`
    is what it reorders: "results" (a search's final results, query/retrieve.py), "pool" (the
    candidates before they are spread over files, query/searcher.py) or "lead" (the evidence of a question about
    behaviour, after lead.py's steps, query/searcher.py)."""

    candidates: int
    where: str

    def rerank(self, query: str, hits: Sequence[Hit], graph: GraphQueries) -> list[Hit]: ...


class Completion(Protocol):
    """The one call of a chat model (llm.ChatModel.complete) the reranker makes."""

    def complete(self, messages: Sequence[dict], generation: Generation | None = None) -> str: ...


@dataclass
class LLMReranker:
    """Listwise reranking by a chat model: see the module docstring.

    `generation` is what a request may produce and how long it may wait (llm.Generation);
    the factory `reranker_from_settings` builds it with the grammar of `grammar_for(candidates)`."""

    chat: Completion
    generation: Generation | None = None
    candidates: int = 12
    where: str = "results"

    def rerank(self, query: str, hits: Sequence[Hit], graph: GraphQueries) -> list[Hit]:
        hits = list(hits)
        if len(hits) < 2 or not RankQuery.of(query).asked:
            return hits  # an identifier or a code fragment: the keyword and symbol boosts rank it better
        pool, rest = hits[:self.candidates], hits[self.candidates:]
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": rerank_prompt(query, pool, graph)}]
        try:
            order = parse_order(self.chat.complete(messages, self.generation), len(pool))
        except CodeQAError as exc:
            return _keep(pool, f"llm rerank failed, search order kept: {one_line(str(exc), 160)}") + rest
        if not order:
            return _keep(pool, "llm rerank kept the search order: its reply named no candidate") + rest
        return reorder(pool, order) + rest


@dataclass
class EmbeddingReranker:
    """Reorders a question's candidates by a second embedding model's cosine to the question (see the module
    docstring). `documents` embeds candidates, `queries` the question (an asymmetric model's query side).
    A candidate's score becomes that cosine plus what the search added to the first model's score: the question's
    words lift (Hit.lift) and the rankers' boosts (Hit.boost: a definition the question names, a hop from the top
    hits, a deed in its name, less the penalty of a test or a doc). Stop 50's form, the cosine alone, lost those, and
    on bench/how.py's questions about one function the search fell (hit@10 0.804 -> 0.661 on dev)."""

    documents: Embedder
    queries: Embedder
    candidates: int = RERANK_POOL
    where: str = "pool"
    cache_size: int = 4096
    _cache: dict = field(default_factory=dict, repr=False)
    # a Retriever serves several users at once (the page, MCP): their searches share the cache
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def rerank(self, query: str, hits: Sequence[Hit], graph: GraphQueries) -> list[Hit]:
        hits = list(hits)
        if len(hits) < 2 or not RankQuery.of(query).asked:
            return hits  # an identifier or a code fragment: the keyword and symbol boosts rank it better
        pool, rest = hits[:self.candidates], hits[self.candidates:]
        try:
            question = np.asarray(self.queries.encode([query])[0], dtype=np.float32)
            vectors = self._vectors([candidate_text(h) for h in pool])
        except CodeQAError as exc:
            return _keep(pool, f"embedding rerank failed, search order kept: {one_line(str(exc), 160)}") + rest
        scores = [float(cosine) + h.lift + h.boost for cosine, h in zip(vectors @ question, pool)]
        order = sorted(range(len(pool)), key=lambda i: -scores[i])
        return [replace(pool[i], score=scores[i], reasons=pool[i].reasons + (f"embedding rerank {i + 1}->{place}",))
                for place, i in enumerate(order, 1)] + rest

    def _vectors(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            found = {t: self._cache[t] for t in texts if t in self._cache}
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            found.update(zip(missing, (np.asarray(v, dtype=np.float32) for v in self.documents.encode(missing))))
            with self._lock:
                for text in missing:
                    if len(self._cache) >= self.cache_size:
                        self._cache.pop(next(iter(self._cache)))  # the oldest first
                    self._cache[text] = found[text]
        return np.stack([found[t] for t in texts])


@dataclass
class LikelihoodReranker:
    """Picks what leads the evidence of a question about behaviour by query likelihood: see the module docstring.
    Only the first `candidates` functions and methods are looked at; every other hit keeps its place, and the
    hits at the candidates' places keep those places' scores, so scores that descended still do."""

    model: QuestionLikelihood
    candidates: int = LEAD_CANDIDATES
    margin: float = LEAD_MARGIN
    where: str = "lead"

    def loading_note(self, query: str) -> str | None:
        """What a shell can say before the evidence of `query` is gathered: that the model loads first (the first
        question about behaviour a process asks; a model that says nothing of its load counts as loaded), or None."""
        if getattr(self.model, "loaded", True) or not RankQuery.of(query).behaviour:
            return None
        where = getattr(self.model, "path", None)
        return (f"CODEQA_RERANK=likelihood: loading {Path(where).name if where else 'the model'} to pick the "
                "answer's lead, once a process: about a minute and ~7 GB of memory for the 1.5B model on two CPU cores")

    def rerank(self, query: str, hits: Sequence[Hit], graph: GraphQueries) -> list[Hit]:
        hits = list(hits)
        if not RankQuery.of(query).asked:
            return hits  # an identifier or a code fragment: the keyword and symbol boosts rank it better
        at = [i for i, h in enumerate(hits) if h.kind in ("function", "method")][:self.candidates]
        if len(at) < 2:
            return hits
        try:
            scores = self.model.score(query, [Candidate(hits[i].path, hits[i].symbol or hits[i].kind, hits[i].text)
                                              for i in at])
        except CodeQAError as exc:
            why = f"likelihood rerank failed, search order kept: {one_line(str(exc), 160)}"
            return [replace(h, reasons=h.reasons + (why,)) if i in at else h for i, h in enumerate(hits)]
        best = max(range(len(at)), key=scores.__getitem__)
        if best == 0 or scores[best] - scores[0] <= self.margin:
            return hits
        order = [best, *(k for k in range(len(at)) if k != best)]  # the likeliest first, the others as they were
        out = list(hits)
        for new, old in enumerate(order):
            why = f"likelihood rerank {old + 1}->{new + 1} ({scores[old]:.1f} nats)"
            out[at[new]] = replace(hits[at[old]], score=hits[at[new]].score, reasons=hits[at[old]].reasons + (why,))
        return out


def candidate_text(hit: Hit) -> str:
    """What the embedding reranker reads of a candidate: its path and name, then its text."""
    return f"{hit.path} {hit.symbol or hit.kind}\n{hit.text}"[:RERANK_TEXT_CHARS]


def rerank_prompt(query: str, hits: Sequence[Hit], graph: GraphQueries) -> str:
    """The question and one numbered line a candidate: path and line, qualified name and signature,
    the docstring's first line (a chunk without a symbol shows its first line of text)."""
    by_id = graph.symbols_by_id(i for h in hits for i in h.symbol_ids[:1])
    lines = [f"Question: {one_line(query, 400)}", "", "Results:"]
    for number, hit in enumerate(hits, 1):
        symbol = by_id.get(hit.symbol_ids[0]) if hit.symbol_ids else None
        lines.append(f"{number}. {hit.path}:L{hit.start_line} {candidate_line(hit, symbol)}")
    lines += ["", f"The numbers of the results that help answer the question (1-{len(hits)}), best first:"]
    return "\n".join(lines)


def candidate_line(hit: Hit, symbol: Symbol | None) -> str:
    if symbol is None:
        first = next((line.strip() for line in hit.text.splitlines() if line.strip()), "")
        return f"{hit.symbol or hit.kind}: {one_line(first, SIGNATURE_CHARS)}"
    head = symbol.qualified_name
    if symbol.signature:
        head += f": {one_line(symbol.signature, SIGNATURE_CHARS)}"
    doc = next((line.strip() for line in symbol.docstring.splitlines() if line.strip()), "")
    return head + (f" - {one_line(doc, DOC_CHARS)}" if doc else "")


def grammar_for(count: int) -> str:
    """A GBNF grammar (llama.cpp) for a reply of 1 to `count` candidate numbers separated by spaces."""
    numbers = " | ".join(f'"{n}"' for n in range(count, 0, -1))  # longest first: "12" before "1"
    return f'root ::= num (" " num){{0,{max(0, count - 1)}}}\nnum ::= {numbers}\n'


def parse_order(reply: str, count: int) -> list[int]:
    """The candidates a reply names, as 0-based indexes in its order, each once; [] when the reply is
    not a list of numbers (prose, a refusal), and a number outside 1..count is ignored."""
    reply = reply.strip()
    if not reply or not _REPLY.fullmatch(reply):
        return []
    order: list[int] = []
    for token in re.findall(r"\d+", reply):
        index = int(token) - 1
        if 0 <= index < count and index not in order:
            order.append(index)
    return order


def reorder(pool: Sequence[Hit], order: Sequence[int]) -> list[Hit]:
    """The named candidates first in the model's order, then the others in search order; the scores
    are the pool's own values, handed out again best first, so they still descend."""
    ranked = [pool[i] for i in order] + [h for i, h in enumerate(pool) if i not in set(order)]
    scores = sorted((h.score for h in pool), reverse=True)
    named = set(order)
    out = []
    for place, (hit, score) in enumerate(zip(ranked, scores), 1):
        before = pool.index(hit) + 1
        why = f"llm rerank {before}->{place}" if pool.index(hit) in named else "llm rerank: not named"
        out.append(replace(hit, score=score, reasons=hit.reasons + (why,)))
    return out


def _keep(pool: Sequence[Hit], why: str) -> list[Hit]:
    return [replace(h, reasons=h.reasons + (why,)) for h in pool]


def reranker_from_settings(settings: Settings) -> Reranker | None:
    """The reranker CODEQA_RERANK asks for: None for "off"; "llm" needs the chat endpoint and model
    (OPENAI_BASE_URL / CODEQA_MODEL) and waits at most CODEQA_RERANK_TIMEOUT seconds a question;
    "openai:<model>" is an embeddings endpoint at CODEQA_RERANK_BASE_URL (else the embeddings endpoint,
    else OPENAI_BASE_URL), waited on as long as CODEQA_RERANK_TIMEOUT."""
    if settings.rerank == "off":
        return None
    if settings.rerank.startswith("likelihood:") and settings.rerank.split(":", 1)[1].strip():
        # the file is checked now, the model loads at the first question (query/likelihood.py)
        path = Path(settings.rerank.split(":", 1)[1].strip()).expanduser()
        check_gguf(path)
        return LikelihoodReranker(GGUFLikelihood(path))
    if settings.rerank.startswith("openai:") and settings.rerank.split(":", 1)[1].strip():
        end = settings.rerank_endpoint
        documents = make_embedder(settings.rerank, "none", end.base_url, end.api_key, concurrency=1,
                                  timeout=settings.rerank_timeout, settings_named=(end.url_setting, end.key_setting))
        return EmbeddingReranker(documents, query_embedder(documents))
    if settings.rerank != "llm":
        raise UsageError(f"CODEQA_RERANK={settings.rerank!r} is none of off, llm, openai:<model> (an embeddings "
                         "model that reorders the candidates) or likelihood:<file.gguf> (a chat model that picks what "
                         "leads a question about behaviour); fix or unset it.")
    if not settings.llm_configured or not settings.model:
        raise UsageError("CODEQA_RERANK=llm reorders results with the chat model, but none is configured: set "
                         "OPENAI_BASE_URL (and OPENAI_API_KEY) and CODEQA_MODEL, or unset CODEQA_RERANK.")
    chat = OpenAIChat(settings.model, settings.openai_base_url, settings.openai_api_key,
                      timeout=settings.rerank_timeout, max_retries=0, window=settings.context_window)
    count = settings.rerank_candidates
    # a number and a space are about two tokens; the reply may name every candidate
    generation = Generation(max_tokens=3 * count + 4, wait=settings.rerank_timeout,
                            first_wait=settings.rerank_timeout, grammar=grammar_for(count))
    return LLMReranker(chat, generation, count)
