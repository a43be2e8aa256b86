"""Answer stage: Answerer and AnswerStream, the API the CLI and the UI drive (the conversation is conversation.py).

    question --(Conversation: follow-up rewrite)--> Retriever.retrieve --> snippets
      --> prompt.fit_prompt (system rules + history + graph facts + numbered snippets [n] path:Lstart-Lend,
          counted against the model's window, least useful evidence left out first)
      --> ChatModel.stream (codeqa.llm) --> text pieces (thinking set apart, loops cut, max_tokens marked)
      --> citations read in every form a model writes them, verified, and attributed --> Answer

Without an LLM (none configured, or `no_llm`) the answer is built from retrieval alone and says
so (extractive.py). A citation is `verified` only when its file is in the index, its lines exist,
and they lie inside the snippets the model was given; others are reported as unverified, never as
valid. Secrets never reach the model: snippets are redacted in packing, the question and history here.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Sequence

from ..config import Settings
from ..errors import LLMError, UsageError
from ..query.retrieve import Retriever
from ..llm import ChatModel, Generation, LLMClosed, LLMTimeout, Message, OpenAIChat
from .citations import (CitedSpan, parse_citations, parse_loose, parse_numbered, parse_path_mentions, take_echoed_lines,
                        unknown_names, verify_citations)
from .citation_report import describe_citations
from .support import attribute, attributed, check_support, line_reader, model_text
from .support import claims as support_claims
from .support import shallow as answer_shallow
from .conversation import Conversation, Turn
from .defang import defang_markdown
from .extractive import extractive_answer
from .pace import Estimate, Pace
from .prompt import FittedPrompt, PromptParts, PromptTooLarge, cited_lines_grammar, fit_prompt, prompt_echoes
from .prompt import build_messages as _build_messages
from .streaming import AnswerProgress, ProgressCallback, ThinkSplitter, repeating
from .summary import summarize_usage, summary_to_json
from ..types import Answer, Retrieval, ServerUsage, UsageSummary

EXTRACTIVE_BUDGET_TOKENS = 40_000  # evidence of an answer no model reads: every listed reference site fits
# the slowest prompt reading we plan for (tokens/s): a 1.5B model on two busy CPU cores reads 26-32, so the
# wait for the first piece is CODEQA_LLM_TIMEOUT plus the prompt's tokens at this rate
READ_TOKENS_PER_SECOND_FLOOR = 10.0
LOOP_CHECK_EVERY = 80  # characters of answer between two checks for a repeating stream
# a stream's finish reason -> Answer.cut (None: the answer ended whole); any other reason is "stopped", and a
# stream with none is "closed". Text Generation Inference said "eos_token" and "stop_sequence" for "stop"
# before 2.2 (huggingface/text-generation-inference#2344).
FINISH_CUTS: dict[str, str | None] = {"stop": None, "eos_token": None, "stop_sequence": None, "length": "length",
                                      "content_filter": "content_filter"}


# ---- prompt (prompt.py) ------------------------------------------------------------------------

def build_messages(question: str, retrieval: Retrieval, conversation: Conversation | None = None,
                   repo_name: str = "", summary: UsageSummary | None = None) -> list[Message]:
    """The whole request, unfitted: system rules, the bounded history, then question, facts and snippets."""
    history = tuple(conversation.messages()) if conversation else ()
    return _build_messages(PromptParts(question, retrieval, history, repo_name, summary))[0]


# ---- answering ----------------------------------------------------------------------------------

class AnswerStream:
    """One answer in progress. Iterate for text pieces as they arrive; afterwards `answer` holds the
    final Answer (citations verified). `retrieval` is there from the start, so a UI can show the
    evidence before the first token, and so is `prompt` (PromptInfo: the tokens the model will read)
    for an LLM answer, with `early` (the answer found in the code, to show while the model reads) and
    `estimate` (how long the model should take, once this server has answered in this process).
    `result()` finishes the answer without showing it. `on_progress`, when given, hears where the model
    is (reading the prompt, writing) while the shell waits."""

    def __init__(self, answerer: "Answerer", question: str, query: str, retrieval: Retrieval,
                 chat: ChatModel | None, conversation: Conversation | None, started: float,
                 summary: UsageSummary | None = None, fitted: FittedPrompt | None = None,
                 error: str | None = None, on_progress: ProgressCallback | None = None,
                 estimate: Estimate | None = None):
        self.question = question
        self.query = query
        self.retrieval = retrieval
        self.summary = summary
        self.fitted = fitted
        self.prompt = fitted.info if fitted is not None else None
        self.mode = "llm" if chat is not None and fitted is not None else "extractive"
        self.estimate = estimate
        self.served: ServerUsage | None = None  # what the server said of the request, when it did
        self.error: str | None = error
        self.cut: str | None = None
        self.reasoning = ""
        self.answer: Answer | None = None
        self.started = started
        self.retrieval_seconds = time.perf_counter() - started
        self.first_token_seconds: float | None = None
        self._answerer = answerer
        self._chat = chat
        self._conversation = conversation
        self._on_progress = on_progress
        self._iterator: Iterator[str] | None = None
        self._asks_model = self.mode == "llm"
        self._early: Answer | None = None

    @property
    def early(self) -> Answer | None:
        """An LLM answer's first part, for the shell to show while the model reads: the answer codeqa finds in
        the retrieved code alone, built and checked exactly as a no-LLM answer (mode "extractive": never the
        model's), on first use. None when the answer itself is extractive."""
        if self._early is None and self._asks_model:
            self._early = AnswerStream(self._answerer, self.question, self.query, self.retrieval, None, None,
                                       self.started, self.summary).result()
        return self._early

    @property
    def estimate_seconds(self) -> float | None:
        """How long the model's answer should take in all, from what this server did before; None until it did."""
        return None if self.estimate is None else self.estimate.seconds

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

    def _progress(self, stage: str, done: int, total: int | None, message: str) -> None:
        if self._on_progress is not None:
            self._on_progress(AnswerProgress(stage, done, total, message))

    def _run(self) -> Iterator[str]:
        pieces: list[str] = []
        retriever = self._answerer.retriever
        if self.mode == "llm":
            yield from self._stream_llm(pieces)
        else:
            text = extractive_answer(self.retrieval, retriever, summary=self.summary)
            if self.error:  # the LLM was configured but could not be asked (the prompt cannot fit)
                text = self._unusable() + text
            for part in re.split(r"(?<=\n\n)", text):
                pieces.append(part)
                yield self._emit(part)
        self.answer = self._answerer.finish(self, "".join(pieces))
        if self._conversation is not None:
            self._conversation.add(Turn(self.question, self.query, self.answer.answer,
                                        self._answerer.subjects(self.retrieval)))

    def _unusable(self) -> str:
        return f"The LLM could not be used: {self.error}\n\n"

    def _stream_llm(self, pieces: list[str]) -> Iterator[str]:
        assert self.fitted is not None and self._chat is not None
        settings = self._answerer.settings
        info = self.fitted.info
        tokens = info.tokens
        self._progress("reading", 0, tokens, f"The model is reading {tokens:,} tokens of context…")
        generation = Generation(max_tokens=info.max_tokens, wait=settings.llm_timeout,
                                first_wait=settings.llm_timeout + tokens / READ_TOKENS_PER_SECOND_FLOOR,
                                grammar=cited_lines_grammar(len(self.fitted.snippets)) if settings.cite_grammar else None)
        splitter = ThinkSplitter()
        finish = None
        checked = written_chars = 0
        written = 0
        asked = time.perf_counter()
        first: float | None = None
        stream = self._chat.stream(self.fitted.messages, generation)
        try:
            for delta in stream:
                if delta.usage is not None:
                    self.served = delta.usage
                    continue
                if delta.progress is not None:
                    done, total = delta.progress
                    self._progress("reading", done, total, f"The model is reading the context: {done:,} of {total:,} tokens…")
                    continue
                text, thought = splitter.feed(delta.text)
                self.reasoning += delta.reasoning + thought
                finish = delta.finish or finish
                if text:
                    first = first or time.perf_counter()
                    pieces.append(text)
                    written_chars += len(text)
                    written += 1
                    if written == 1 or written % 20 == 0:
                        self._progress("writing", written, None, "The model is writing the answer…")
                    yield self._emit(text)
                if written_chars - checked >= LOOP_CHECK_EVERY:
                    checked = written_chars
                    at = repeating("".join(pieces))
                    if at is not None:
                        whole = "".join(pieces)[:at]
                        # end where a sentence or line ended, not inside the word the repetition began with
                        boundary = max(whole.rfind(". ") + 1, whole.rfind("\n"))
                        whole = (whole[:boundary] if boundary > len(whole) // 2 else whole).rstrip()
                        pieces[:] = [whole]
                        self.cut = "repeating"
                        break
            tail, thought = splitter.feed("", final=True)
            self.reasoning += thought
            if tail and self.cut is None:
                pieces.append(tail)
                yield self._emit(tail)
        except LLMError as exc:
            self.error = str(exc)
            if pieces:
                self.cut = "timeout" if isinstance(exc, LLMTimeout) else "closed" if isinstance(exc, LLMClosed) else "error"
                note = f"\n\n[The answer was cut off: {self.error}]\n"
            else:
                self.mode = "extractive"
                note = self._unusable() + extractive_answer(self.retrieval, self._answerer.retriever, summary=self.summary)
            pieces.append(note)
            yield self._emit(note)
            return
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # a loop cut early stops the request
        if self.cut is None:
            self.cut = FINISH_CUTS.get(finish, "stopped") if finish else "closed"
        if first is not None:
            self._answerer.pace.learn(self._answerer.server(self._chat), self.fitted.messages, tokens, self.served,
                                      first - asked, time.perf_counter() - first, written)
        if self.cut == "closed":  # as OpenAIChat's LLMClosed: the endpoint failed to finish
            self.error = f"The chat model {self._chat.model!r} ended its stream without saying the answer was done."
        note = self._cut_note(finish, info.max_tokens)
        if note:
            pieces.append(note)
            yield self._emit(note)

    def _cut_note(self, finish: str | None, max_tokens: int) -> str:
        """What the answer's text says about how it ended early ("" when it ended whole)."""
        why = {"repeating": "the model had started repeating itself.",
               "length": f"it reached its limit of {max_tokens} tokens (CODEQA_ANSWER_TOKENS, at most a quarter of "
                         "the model's window).",
               "content_filter": "the endpoint's content filter stopped it (finish reason content_filter).",
               "stopped": f"the endpoint ended it with finish reason {finish!r}, not as a finished answer.",
               "closed": "the stream ended before the model said the answer was done."}.get(self.cut or "")
        return f"\n\n[The answer was cut: {why}]\n" if why else ""


class Answerer:
    """Answers questions about one indexed repository.

        answerer = Answerer(retriever, settings)            # OpenAIChat when an LLM is configured
        stream = answerer.stream("where is X used?", conversation)
        for piece in stream: ...                             # text as it arrives
        stream.answer                                        # Answer with verified citations

    `chat=None` uses OpenAIChat when `settings.llm_configured`, else extractive answers; `no_llm`
    forces extractive for one question. Extractive answers never touch the network. `pace` holds the
    speeds of the servers answered before (pace.py): a shell that makes an Answerer per question keeps
    one Pace across them, so that each later question says how long it should take.
    """

    def __init__(self, retriever: Retriever, settings: Settings, chat: ChatModel | None = None,
                 pace: Pace | None = None):
        self.retriever = retriever
        self.settings = settings
        self._chat = chat
        self.pace = pace if pace is not None else Pace()

    @property
    def chat(self) -> ChatModel | None:
        """The chat model: the one given, else OpenAIChat when an LLM is configured (built on first use, so
        `no_llm` answers need no model setting), else None."""
        if self._chat is None and self.settings.llm_configured:
            self._chat = OpenAIChat.from_settings(self.settings)
        return self._chat

    @staticmethod
    def server(chat: ChatModel) -> tuple[str, str]:
        """Whose speeds `pace` keeps: the chat model's endpoint and model."""
        return str(getattr(chat, "endpoint", "")), chat.model

    def stream(self, question: str, conversation: Conversation | None = None, no_llm: bool = False,
               top_k: int | None = None, on_progress: ProgressCallback | None = None) -> AnswerStream:
        """Retrieve now and fit the prompt to the model's window (errors such as a missing index raise
        here), and return the answer to iterate."""
        if not question.strip():
            raise UsageError("The question is empty: ask something about the code, e.g. \"How is EncoderClass used?\".")
        started = time.perf_counter()
        query = asked = question
        if conversation is not None and len(conversation):
            routed = self.retriever.route(question)  # parsed once: retrieve takes it when the rewrite keeps the question
            # a plain word that happens to be a symbol name ("validate") does not make a new subject
            query = conversation.rewrite(question, [m.text for m in routed.names if m.strength >= 2])
            asked = routed if query == question else query
        chat = None if no_llm else self.chat
        # an extractive answer goes to no model: its evidence may cite every listed reference site
        budget = self.settings.context_tokens if chat is not None else max(self.settings.context_tokens,
                                                                            EXTRACTIVE_BUDGET_TOKENS)
        retrieval = self.retriever.retrieve(asked, top_k=top_k or self.settings.top_k, budget_tokens=budget,
                                            sites_listed=self.settings.usage_sites_listed)
        if query != question:
            retrieval = replace(retrieval, query=query)
        summary = summarize_usage(retrieval, self.retriever.graph.symbols_by_id)
        fitted, error, estimate = None, None, None
        if chat is not None:
            parts = PromptParts(question, retrieval, tuple(conversation.messages()) if conversation else (),
                                self.retriever.repo.name, summary)
            try:
                fitted = fit_prompt(parts, chat.info(), chat.count_tokens, self.settings.answer_tokens)
                estimate = self.pace.estimate(self.server(chat), fitted.messages, fitted.info.tokens)
            except PromptTooLarge as exc:
                error = str(exc)
        return AnswerStream(self, question, query, retrieval, chat, conversation, started, summary, fitted, error,
                            on_progress, estimate)

    def answer(self, question: str, conversation: Conversation | None = None, no_llm: bool = False,
               on_progress: ProgressCallback | None = None) -> Answer:
        return self.stream(question, conversation, no_llm, on_progress=on_progress).result()

    def finish(self, stream: AnswerStream, text: str) -> Answer:
        retrieval = stream.retrieval
        indexed = self.retriever.indexed_paths
        llm = stream.mode == "llm" and stream.fitted is not None
        snippets = stream.fitted.snippets if llm else retrieval.snippets
        sites = stream.fitted.fact_lines if llm else ()
        # a usage answer's facts state where each definition lies: the one range the chip, refs and find_symbol give
        defined = [(s.path, s.start_line, s.end_line) for s in retrieval.definitions] if retrieval.route == "usage" else ()
        cited: list[CitedSpan] = []
        unknown: list[str] = []
        text = defang_markdown(text)  # model output and quoted repository text are data: nothing to fetch
        if llm:
            text, echoed = take_echoed_lines(text, snippets)
            cited = parse_numbered(text, snippets) + parse_loose(text, snippets, indexed) + echoed
            written = {(c.path, c.start_line, c.end_line) for c in cited + parse_citations(text, indexed)}
            cited += [c for c in parse_path_mentions(text, snippets) if (c.path, c.start_line, c.end_line) not in written
                      and not any(w[0] == c.path for w in written)]  # a file cited with lines already is not again
            evidence = "\n".join(m["content"] for m in stream.fitted.messages[-1:])
            unknown = unknown_names(text, evidence, lambda name: bool(self.retriever.graph.find_symbols(name)))
        cited = _unique(parse_citations(text, indexed) + cited)
        citations = [replace(c, stale=True) if self.retriever.source.is_stale(c.path) else c
                     for c in verify_citations(cited, snippets, indexed, self._line_count, sites, defined)]
        claims, shallow, echoes = (), None, ()
        if llm:  # verified says the lines exist and were shown; support says they mention what the sentence names
            said, files = model_text(text), sorted(indexed)
            citations = [replace(c, counted=c.verified and c.supported is True) for c in
                         check_support(said, citations, snippets, files,
                                       line_reader(snippets, self.retriever.source.lines))]
            guesses = attribute(said, snippets, cited, files)
            for span, c in zip(guesses, verify_citations(guesses, snippets, indexed, self._line_count)):
                citations.append(attributed(c, span.text))
            claims = tuple(support_claims(said, citations, snippets, files))
            shallow = answer_shallow(stream.question, retrieval.route, said)
            echoes = tuple(prompt_echoes(said, evidence))
        model = None
        if llm and self.chat is not None:
            model = self.chat.info().served_model or self.chat.model
        return Answer(answer=text, citations=tuple(citations), snippets=tuple(snippets), mode=stream.mode,
                      route=retrieval.route, references=retrieval.references, error=stream.error, hits=retrieval.hits,
                      question=stream.question, query=stream.query, model=model, definitions=retrieval.definitions,
                      summary=stream.summary, listed=retrieval.listed, cut=stream.cut, reasoning=stream.reasoning.strip(),
                      prompt=stream.prompt if llm else None, unknown_names=tuple(unknown), claims=claims, shallow=shallow,
                      echoes=echoes, first_token_seconds=stream.first_token_seconds,
                      seconds=time.perf_counter() - stream.started, served=stream.served if llm else None)

    def subjects(self, retrieval: Retrieval) -> tuple[str, ...]:
        """What a turn was about: the symbols it named, else the symbol of the best hit."""
        if retrieval.definitions:
            return tuple(dict.fromkeys(s.qualified_name for s in retrieval.definitions))
        by_id = self.retriever.graph.symbols_by_id(sid for h in retrieval.hits[:1] for sid in h.symbol_ids)
        for h in retrieval.hits[:1]:
            for sid in h.symbol_ids:
                if sid in by_id:
                    return (by_id[sid].qualified_name,)
        return ()

    def _line_count(self, path: str) -> int | None:
        lines = self.retriever.source.lines(path)
        return None if lines is None else len(lines)


def ask(repo: Path | str, question: str, settings: Settings | None = None, *, no_llm: bool = False,
        chat: ChatModel | None = None, conversation: Conversation | None = None, embedder=None) -> Answer:
    """Answer one question about an indexed repository (library entry point)."""
    settings = settings or Settings.load()
    with Retriever.open(Path(repo), settings, embedder) as retriever:
        return Answerer(retriever, settings, chat).stream(question, conversation, no_llm=no_llm).result()


def served_to_json(served: ServerUsage | None) -> dict:
    """The prompt's tokens as the server read them: `read_tokens` it read, `cached_tokens` it reused from its
    cache (a follow-up's start), its speeds in tokens/s; None where it did not say."""
    served = served or ServerUsage()
    return {"read_tokens": served.read_tokens, "cached_tokens": served.cached_tokens,
            "written_tokens": served.written_tokens,
            "read_per_second": None if served.read_per_second is None else round(served.read_per_second, 1),
            "write_per_second": None if served.write_per_second is None else round(served.write_per_second, 1)}


def _unique(spans: Sequence[CitedSpan]) -> list[CitedSpan]:
    seen: dict[tuple[str, int, int], CitedSpan] = {}
    for span in spans:
        seen.setdefault((span.path, span.start_line, span.end_line), span)
    return list(seen.values())


def answer_to_json(answer: Answer) -> dict:
    """The `ask --json` shape (DESIGN.md), plus route, query, model, error and the reference sites the
    answer lists (`references_total` counts them all; `codeqa refs --json` lists them all)."""
    listed = answer.listed.references if answer.listed is not None else answer.references
    report = describe_citations(answer)
    return {
        "answer": answer.answer,
        "citations": [{"path": c.path, "start_line": c.start_line, "end_line": c.end_line, "verified": c.verified,
                       "reason": c.reason, "stale": c.stale, "attributed": c.attributed, "supported": c.supported,
                       "support_reason": c.support_reason, "counted": c.counted, "rote": c.rote}
                      for c in answer.citations],
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
        "grounded": answer.grounded,
        "citations_summary": report.line,  # the page's and MCP's words
        "warnings": list(report.warnings),
        "claims": [{"sentence": c.sentence, "supported": c.supported} for c in answer.claims],
        "shallow": answer.shallow,
        "echoes": list(answer.echoes),
        "cut": answer.cut,
        "reasoning": answer.reasoning or None,
        "unknown_names": list(answer.unknown_names),
        "prompt": None if answer.prompt is None else {
            "tokens": answer.prompt.tokens, "window": answer.prompt.window, "window_source": answer.prompt.window_source,
            "max_tokens": answer.prompt.max_tokens, "counted": answer.prompt.counted,
            "left_out": list(answer.prompt.left_out), "notes": list(answer.prompt.notes),
            **served_to_json(answer.served)},
        "first_token_seconds": None if answer.first_token_seconds is None else round(answer.first_token_seconds, 3),
        "seconds": None if answer.seconds is None else round(answer.seconds, 3),
    }


__all__ = ["Answerer", "AnswerStream", "ask", "answer_to_json", "build_messages"]
