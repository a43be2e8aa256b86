"""Answer stage: conversation, prompt, streaming, citation check; the API the CLI and the UI drive.

    question --(Conversation: follow-up rewrite)--> Retriever.retrieve --> snippets
      --> prompt (system rules + history + graph facts + numbered snippets `path:Lstart-Lend`)
      --> ChatModel.stream (chat.py) --> text pieces --> citations parsed and verified --> Answer

Without an LLM (none configured, or `no_llm`) the answer is built from retrieval alone and says
so (extractive.py). A citation is `verified` only when its file is in the index, its lines exist,
and they lie inside the snippets the model was given; others are reported as unverified, never as
valid. Secrets never reach the model: snippets are redacted in packing, the question and history here.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Sequence

from .chat import ChatModel, FakeChat, Message, OpenAIChat
from .config import Settings
from .errors import LLMError
from .extractive import EXTRACTIVE_NOTE, describe_path, extractive_answer, refs_spec
from .files import redact
from .lookup import list_sites
from .pack import CHARS_PER_TOKEN, count_tokens
from .retrieve import Retriever
from .summary import describe_counts, summarize_usage, summary_to_json
from .citations import CitedSpan, parse_citations, verify_citations
from .types import Answer, Retrieval, Snippet, UsageSummary

EXTRACTIVE_BUDGET_TOKENS = 40_000  # evidence of an answer no model reads: every listed reference site fits

SYSTEM_PROMPT = """You answer questions about a code repository using only the evidence in the user's \
message: numbered code snippets, each labelled path:Lstart-Lend with every line numbered, and facts \
from the repository's reference graph.
Rules:
- Cite every claim as path:Lstart-Lend (or path:Lline), with the path exactly as in a snippet label \
and lines inside that snippet, e.g. `src/app/main.py:L12-L18`. Cite the narrowest lines that show it.
- Use nothing you were not shown: no guesses about code outside the snippets, no invented files or lines.
- If the snippets do not contain the evidence, say plainly that it is missing from the retrieved code \
and what would be needed; do not fill the gap from general knowledge.
- For "where/how is X used" questions, give the complete list of reference sites from the graph facts, \
grouped by file, with the count.
- Be concise: short paragraphs or lists; quote code only when it helps."""


# ---- conversation -------------------------------------------------------------------------------

_CONJUNCTION = re.compile(r"^\s*(?:and|also|but|so|then|ok(?:ay)?|now)\b[\s,]*", re.IGNORECASE)
_WHAT_ABOUT = re.compile(r"^\s*(?:(?:and\s+)?(?:what|how)\s+about|and)\s+", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(it|its|this|that|they|them|these|those|this one|that one|the same)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Turn:
    question: str  # as the user asked it
    query: str  # what retrieval used (the rewrite of a follow-up)
    answer: str
    subjects: tuple[str, ...] = ()  # qualified names the turn was about, for "it" in the next question


class Conversation:
    """The turns of one chat (the UI keeps one per session).

    Follow-ups are rewritten for retrieval ("and where is it called?" after a question about
    `EncoderClass` -> "where is EncoderClass called?") and the history goes into the prompt,
    bounded to the last `max_turns` turns and `max_history_tokens` tokens (oldest dropped first,
    long answers cut).
    """

    def __init__(self, max_turns: int = 4, max_history_tokens: int = 1500):
        self.turns: list[Turn] = []
        self.max_turns = max_turns
        self.max_history_tokens = max_history_tokens

    def __len__(self) -> int:
        return len(self.turns)

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)

    def clear(self) -> None:
        self.turns.clear()

    def rewrite(self, question: str, names: Sequence[str] = ()) -> str:
        """The retrieval query for `question`, given the names it mentions itself.

        A follow-up without names of its own gets the previous turn's subject in place of its
        pronoun ("where is it called?"); a bare "and X?" / "what about X?" repeats the previous
        question about X instead. Anything else is returned unchanged.
        """
        if not self.turns:
            return question
        last = self.turns[-1]
        subject = last.subjects[0] if last.subjects else None
        words = re.findall(r"\w+", question)
        if names:
            bare = _WHAT_ABOUT.sub("", question).strip(" ?.!")
            if _WHAT_ABOUT.match(question) and len(words) <= 5 and subject and subject in last.query:
                return last.query.replace(subject, bare)
            return question
        if subject is None:
            return question
        follow_up = bool(_CONJUNCTION.match(question)) or len(words) <= 10
        if not follow_up:
            return question
        stripped = _CONJUNCTION.sub("", question)
        if _PRONOUN.search(stripped):
            return _PRONOUN.sub(lambda m: f"{subject}'s" if m.group(1).lower() == "its" else subject, stripped, count=1)
        if _CONJUNCTION.match(question):
            return f"{stripped.rstrip(' ?')} ({subject})?"
        return question

    def messages(self) -> list[Message]:
        """History as alternating user/assistant messages, newest kept, within the bounds; redacted."""
        picked: list[Message] = []
        used = 0
        for turn in reversed(self.turns[-self.max_turns:]):
            answer = _cut_tokens(turn.answer, max(self.max_history_tokens // 2, 100))
            pair = [{"role": "user", "content": redact(turn.question)}, {"role": "assistant", "content": redact(answer)}]
            cost = count_tokens(turn.question) + count_tokens(answer) + 8
            if picked and used + cost > self.max_history_tokens:
                break
            picked = pair + picked
            used += cost
        return picked


def _cut_tokens(text: str, limit: int) -> str:
    if count_tokens(text) <= limit:
        return text
    cut = text[: int(limit * CHARS_PER_TOKEN)]
    return cut.rsplit("\n", 1)[0] + "\n[…]"


# ---- prompt -------------------------------------------------------------------------------------

def build_messages(question: str, retrieval: Retrieval, conversation: Conversation | None = None,
                   repo_name: str = "", summary: UsageSummary | None = None) -> list[Message]:
    """System rules, the bounded history, then one user message: question, graph facts, numbered snippets."""
    parts = [f"Repository: {repo_name}" if repo_name else "", f"Question: {redact(question)}"]
    if retrieval.query and retrieval.query != question:
        parts.append(f"(Follow-up, read as: {redact(retrieval.query)})")
    facts = graph_facts(retrieval, summary)
    if facts:
        parts.append("Graph facts (from the index):\n" + redact(facts))
    if retrieval.snippets:
        parts.append("Snippets:\n\n" + "\n\n".join(format_snippet(i, s) for i, s in enumerate(retrieval.snippets, 1)))
    else:
        parts.append("Snippets: none were found for this question.")
    user = "\n\n".join(p for p in parts if p)
    history = conversation.messages() if conversation else []
    return [{"role": "system", "content": SYSTEM_PROMPT}, *history, {"role": "user", "content": user}]


def format_snippet(number: int, snippet: Snippet) -> str:
    """`[n] path:Lstart-Lend (why)` and the code with every line numbered, fenced."""
    lines = snippet.text.splitlines() or [""]
    width = len(str(snippet.start_line + len(lines) - 1))
    body = "\n".join(f"{snippet.start_line + i:>{width}} | {line}" for i, line in enumerate(lines))
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", snippet.text)), default=0) + 1)
    why = f" ({snippet.reason})" if snippet.reason else ""
    return f"[{number}] {snippet.label}{why}\n{fence}\n{body}\n{fence}"


def graph_facts(retrieval: Retrieval, summary: UsageSummary | None = None) -> str:
    """Usage: definitions, the account of the uses, and the listed reference sites (all of them up to
    the cap: `Retrieval.listed`), grouped by file. Relationship: the paths."""
    lines: list[str] = []
    if retrieval.route == "usage":
        for sym in retrieval.definitions:
            lines.append(f"{sym.qualified_name} ({sym.kind}) is defined at {sym.path}:L{sym.start_line}-L{sym.end_line}.")
        if retrieval.ambiguous:
            lines.append("The name is ambiguous; it also names: " + "; ".join(
                f"{o.qualified_name} ({o.kind}) at {o.path}:L{o.start_line}" for o in retrieval.ambiguous[:6])
                + ". Say which one the answer is about.")
        if summary is not None:
            lines.extend(describe_counts(summary))
        listed = retrieval.listed or list_sites(retrieval.references)
        lines.append(f"{listed.total} reference site(s) in {listed.files} file(s)" + (":" if listed.complete else (
            f"; {listed.shown} of them, in {len(listed.groups)} of the files (package code first), are listed here, "
            f"the other {listed.total - listed.shown} are not (`codeqa refs {refs_spec(retrieval.definitions)} --json` "
            "lists every site):")))
        for group in listed.groups:
            cut = f"; {group.total - len(group.sites)} more not listed" if len(group.sites) < group.total else ""
            lines.append(f"- {group.path} ({group.total}): " + "; ".join(f"L{r.line} {r.kind}" for r in group.sites) + cut)
    elif retrieval.route == "relationship":
        if not retrieval.paths:
            lines.append("No path of at most 4 hops connects them in the reference graph.")
        for path in retrieval.paths:
            lines.append("Path: " + describe_path(path, retrieval.edges))
    return "\n".join(lines)


# ---- answering ----------------------------------------------------------------------------------

class AnswerStream:
    """One answer in progress. Iterate for text pieces as they arrive; afterwards `answer` holds the
    final Answer (citations verified). `retrieval` is there from the start, so a UI can show the
    evidence before the first token. `result()` finishes the answer without showing it."""

    def __init__(self, answerer: "Answerer", question: str, query: str, retrieval: Retrieval,
                 chat: ChatModel | None, conversation: Conversation | None, started: float,
                 summary: UsageSummary | None = None):
        self.question = question
        self.query = query
        self.retrieval = retrieval
        self.summary = summary
        self.mode = "llm" if chat is not None else "extractive"
        self.error: str | None = None
        self.answer: Answer | None = None
        self.started = started
        self.retrieval_seconds = time.perf_counter() - started
        self.first_token_seconds: float | None = None
        self._answerer = answerer
        self._chat = chat
        self._conversation = conversation
        self._iterator: Iterator[str] | None = None

    def __iter__(self) -> Iterator[str]:
        if self._iterator is None:
            self._iterator = self._run()
        return self._iterator

    def result(self) -> Answer:
        for _ in self:
            pass
        assert self.answer is not None
        return self.answer

    def _emit(self, piece: str) -> str:
        if self.first_token_seconds is None:
            self.first_token_seconds = time.perf_counter() - self.started
        return piece

    def _run(self) -> Iterator[str]:
        pieces: list[str] = []
        retriever = self._answerer.retriever
        if self._chat is not None:
            messages = build_messages(self.question, self.retrieval, self._conversation, retriever.repo.name, self.summary)
            try:
                for piece in self._chat.stream(messages):
                    pieces.append(piece)
                    yield self._emit(piece)
            except LLMError as exc:
                self.error = str(exc)
                if pieces:
                    note = f"\n\n[The answer was cut off: {self.error}]\n"
                else:
                    self.mode = "extractive"
                    note = (f"The LLM could not be used: {self.error}\n\n"
                            + extractive_answer(self.retrieval, retriever, summary=self.summary))
                pieces.append(note)
                yield self._emit(note)
        else:
            text = extractive_answer(self.retrieval, retriever, summary=self.summary)
            for part in re.split(r"(?<=\n\n)", text):
                pieces.append(part)
                yield self._emit(part)
        self.answer = self._answerer.finish(self, "".join(pieces))
        if self._conversation is not None:
            self._conversation.add(Turn(self.question, self.query, self.answer.answer,
                                        self._answerer.subjects(self.retrieval)))


class Answerer:
    """Answers questions about one indexed repository.

        answerer = Answerer(retriever, settings)            # OpenAIChat when an LLM is configured
        stream = answerer.stream("where is X used?", conversation)
        for piece in stream: ...                             # text as it arrives
        stream.answer                                        # Answer with verified citations

    `chat=None` uses OpenAIChat when `settings.llm_configured`, else extractive answers; `no_llm`
    forces extractive for one question. Extractive answers never touch the network.
    """

    def __init__(self, retriever: Retriever, settings: Settings, chat: ChatModel | None = None):
        self.retriever = retriever
        self.settings = settings
        self._chat = chat

    @property
    def chat(self) -> ChatModel | None:
        """The chat model: the one given, else OpenAIChat when an LLM is configured (built on first use, so
        `no_llm` answers need no model setting), else None."""
        if self._chat is None and self.settings.llm_configured:
            self._chat = OpenAIChat.from_settings(self.settings)
        return self._chat

    def stream(self, question: str, conversation: Conversation | None = None, no_llm: bool = False,
               top_k: int | None = None) -> AnswerStream:
        """Retrieve now (errors such as a missing index raise here) and return the answer to iterate."""
        started = time.perf_counter()
        query = question
        if conversation is not None and len(conversation):
            # a plain word that happens to be a symbol name ("validate") does not make a new subject
            names = [m.text for m in self.retriever.match_question(question) if m.strength >= 2]
            query = conversation.rewrite(question, names)
        chat = None if no_llm else self.chat
        # an extractive answer goes to no model: its evidence may cite every listed reference site
        budget = self.settings.context_tokens if chat is not None else max(self.settings.context_tokens,
                                                                            EXTRACTIVE_BUDGET_TOKENS)
        retrieval = self.retriever.retrieve(query, top_k=top_k or self.settings.top_k, budget_tokens=budget,
                                            sites_listed=self.settings.usage_sites_listed)
        if query != question:
            retrieval = replace(retrieval, query=query)
        summary = summarize_usage(retrieval, self.retriever.symbols_by_id)
        return AnswerStream(self, question, query, retrieval, chat, conversation, started, summary)

    def answer(self, question: str, conversation: Conversation | None = None, no_llm: bool = False) -> Answer:
        return self.stream(question, conversation, no_llm).result()

    def finish(self, stream: AnswerStream, text: str) -> Answer:
        retrieval = stream.retrieval
        cited = parse_citations(text, self.retriever.indexed_paths)
        citations = [replace(c, stale=True) if self.retriever.is_stale(c.path) else c
                     for c in verify_citations(cited, retrieval.snippets, self.retriever.indexed_paths, self._line_count)]
        model = self.chat.model if (self.chat is not None and stream.mode == "llm") else None
        return Answer(answer=text, citations=tuple(citations), snippets=retrieval.snippets, mode=stream.mode,
                      route=retrieval.route, references=retrieval.references, error=stream.error, hits=retrieval.hits,
                      question=stream.question, query=stream.query, model=model, definitions=retrieval.definitions,
                      summary=stream.summary, listed=retrieval.listed)

    def subjects(self, retrieval: Retrieval) -> tuple[str, ...]:
        """What a turn was about: the symbols it named, else the symbol of the best hit."""
        if retrieval.definitions:
            return tuple(dict.fromkeys(s.qualified_name for s in retrieval.definitions))
        by_id = self.retriever.symbols_by_id(sid for h in retrieval.hits[:1] for sid in h.symbol_ids)
        for h in retrieval.hits[:1]:
            for sid in h.symbol_ids:
                if sid in by_id:
                    return (by_id[sid].qualified_name,)
        return ()

    def _line_count(self, path: str) -> int | None:
        lines = self.retriever.file_lines(path)
        return None if lines is None else len(lines)


def ask(repo: Path | str, question: str, settings: Settings | None = None, *, no_llm: bool = False,
        chat: ChatModel | None = None, conversation: Conversation | None = None, embedder=None) -> Answer:
    """Answer one question about an indexed repository (library entry point)."""
    settings = settings or Settings.load()
    with Retriever.open(Path(repo), settings, embedder) as retriever:
        return Answerer(retriever, settings, chat).stream(question, conversation, no_llm=no_llm).result()


def answer_to_json(answer: Answer) -> dict:
    """The `ask --json` shape (DESIGN.md), plus route, query, model, error and the reference sites the
    answer lists (`references_total` counts them all; `codeqa refs --json` lists them all)."""
    listed = answer.listed.references if answer.listed is not None else answer.references
    return {
        "answer": answer.answer,
        "citations": [{"path": c.path, "start_line": c.start_line, "end_line": c.end_line, "verified": c.verified,
                       "reason": c.reason, "stale": c.stale} for c in answer.citations],
        "snippets": [{"path": s.path, "start_line": s.start_line, "end_line": s.end_line, "text": s.text,
                      "reason": s.reason} for s in answer.snippets],
        "mode": answer.mode,
        "route": answer.route,
        "query": answer.query,
        "model": answer.model,
        "error": answer.error,
        "references": [{"path": r.path, "line": r.line, "kind": r.kind, "confidence": r.confidence,
                        "text": r.line_text} for r in listed],
        "references_total": len(answer.references),
        "summary": summary_to_json(answer.summary),
    }


# ChatModel, OpenAIChat, FakeChat and extractive_answer are re-exported: the UI needs one import
__all__ = ["Answerer", "AnswerStream", "Conversation", "Turn", "ask", "answer_to_json", "build_messages",
           "format_snippet", "graph_facts", "parse_citations", "verify_citations", "CitedSpan", "SYSTEM_PROMPT",
           "ChatModel", "OpenAIChat", "FakeChat", "extractive_answer", "EXTRACTIVE_NOTE"]
