"""The page's chat: the conversation so far, the intro with example questions, asking one question (retrieval,
then the answer found in the code at once, then the model's answer streamed as it is written, the first one
folded above it) and showing an answer with its evidence. A turn is kept from the moment it has something to
show: the stop button ends the run where it is, and the page keeps the answer found in the code.

What an answer shows is built by the plain functions of answer_view.py (tested without Streamlit); only files
inside the repository and in its index are shown (access.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

import streamlit as st

from codeqa.ui.access import path_refusal
from codeqa.ui.answer_view import (EARLY_FOLDED, answer_summary, citation_anchors, citation_chips, code_views,
                                   early_heading, early_text, evidence_rows, example_questions, highlighted_html,
                                   link_citations, plain, references_markdown, sites_label)
from codeqa.answer import Answerer
from codeqa.answer.pace import Pace, about
from codeqa.answer.citation_report import describe_citations
from codeqa.answer.citations import parse_citations
from codeqa.config import Settings
from codeqa.answer.defang import MarkdownStream
from codeqa.errors import CodeQAError
from codeqa.answer.extractive import refs_spec, span_label, split_full_list
from codeqa.answer.streaming import describe_cut
from codeqa.query.lookup import list_sites
from codeqa.query.retrieve import Retriever
from codeqa.query.shared_reader import SharedRetriever
from codeqa.types import Answer

log = logging.getLogger("codeqa.ui")

MAX_CODE_VIEWS = 10  # expanders under one answer (a usage answer can cite hundreds of sites)


def chat(question: str, shared: SharedRetriever, settings: Settings) -> None:
    state = st.session_state
    for number, turn in enumerate(state["turns"], start=1):
        with st.chat_message("user"):
            st.markdown(turn["question"])
        with st.chat_message("assistant"), shared.turn() as retriever:
            show_answer(turn, retriever, number)
    if not state["turns"]:
        # the intro's place, emptied at once when the first question comes: drawn where the question's bubble
        # goes, its suggestions would stay there, faded, until the answer is written
        intro = st.empty()
        if not question:
            with intro.container(), shared.turn() as retriever:
                show_intro(retriever)
    if question:
        ask(question, shared, settings, len(state["turns"]) + 1)


def show_intro(retriever: Retriever) -> None:
    with st.chat_message("assistant"):
        st.markdown("Ask a question about this repository. Usage questions (“How is `X` used?”) list every place the "
                    "symbol is used; other questions search the code. Every answer cites `path:Lstart-Lend`; "
                    "a green ✓ says the cited lines exist, were shown to the model and mention what the sentence names.")
        cache = st.session_state.setdefault("examples", {})  # counting references once per repository
        if str(retriever.repo) not in cache:
            try:
                cache[str(retriever.repo)] = example_questions(retriever)
            except Exception:  # suggestions are a convenience, never a failure
                log.exception("example questions failed")
                cache[str(retriever.repo)] = []
        examples = cache[str(retriever.repo)]
        if examples:
            st.caption("Try:")
            with st.container(horizontal=True):
                for i, q in enumerate(examples):
                    st.button(q, key=f"example-{i}", icon=":material/chat:",
                              on_click=lambda q=q: st.session_state.update(pending=q))


def ask(question: str, shared: SharedRetriever, settings: Settings, number: int) -> None:
    """Answer one question: retrieval (errors shown in the page), the streamed answer, then its evidence."""
    state = st.session_state
    with st.chat_message("user"):
        st.markdown(question)
    with st.chat_message("assistant"):
        started = time.perf_counter()
        # kept at once: a run stopped before the answer is ready leaves this turn as it stands
        turn = {"question": question, "answer": None, "error": "Stopped before an answer was ready.", "seconds": None,
                "early": None}
        state["turns"].append(turn)
        try:
            retriever = shared.retriever
            # this session's top-k and budget; the retriever is shared; the pace learnt from earlier answers
            answerer = Answerer(retriever, settings, pace=state.setdefault("pace", Pace()))
            first = not getattr(retriever.embedder, "loaded", True)
            waiting = st.empty()  # what the model is doing before its first word (a CPU model reads for minutes)
            expected = ""  # "about 40 s", once this session has seen the model answer

            def progress(p) -> None:
                if p.stage == "reading":
                    waiting.caption(f":material/hourglass_top: {p.message}" + (f" ({expected} in all)" if expected else ""))
                else:
                    waiting.empty()

            loading = retriever.loading_note(question)  # the likelihood lead's model, at the first question it reads
            waits = (["the first search also loads the embedding model"] if first else []) + ([loading] if loading else [])
            with st.spinner("Searching the code…" + (f" ({'; '.join(waits)})" if waits else "")), \
                    shared.turn():  # retrieval takes its turn; the model then writes while other sessions search
                stream = answerer.stream(question, state["conversation"], no_llm=not state.get("use_llm"),
                                         top_k=settings.top_k, on_progress=progress)
                early = stream.early  # the answer found in the code (it reads the index: within the turn)
            expected = about(stream.estimate_seconds) if stream.estimate_seconds is not None else ""
            early_box = st.empty()
            if early is not None:
                turn.update(answer=early, early=early, error=None, seconds=time.perf_counter() - started)
                with early_box.container():
                    st.caption(f":material/search: {plain(early_heading(stream.prompt.tokens, expected))}")
                    st.markdown(MarkdownStream().feed(early_text(early)))
                    # its citations as chips at once (the lines open with the model's answer, or the stop)
                    st.html(citation_chips([c for c in early.citations if c.start_line > 0], {}, mode=early.mode))
                    st.caption(describe_citations(early).line)
            placeholder = st.empty()
            shown = MarkdownStream()  # the answer is data: no image it writes is fetched, no link is live
            for piece in stream:
                waiting.empty()
                if early is not None and stream.mode != "llm":
                    continue  # the model failed: the answer found in the code is the answer (shown below)
                if early is not None and not shown.text:  # the model's first words: the first answer folds
                    with early_box.container(), st.expander(EARLY_FOLDED, icon=":material/search:"):
                        st.markdown(MarkdownStream().feed(early_text(early)))
                placeholder.markdown(shown.feed(piece))
            waiting.empty()
            early_box.empty()
            turn.update(answer=stream.answer, error=None, seconds=time.perf_counter() - started)
            placeholder.empty()
        except CodeQAError as exc:
            turn.update(answer=None, error=str(exc))
        except Exception as exc:  # never a traceback in the page; the server log has it
            log.exception("answering failed")
            turn.update(answer=None, error=f"Something went wrong while answering: {type(exc).__name__}: {exc}")
        with shared.turn() as retriever:
            show_answer(turn, retriever, number)


def show_answer(turn: dict, retriever: Retriever, number: int) -> None:
    answer: Answer | None = turn["answer"]
    if answer is None:
        st.error(turn["error"])
        return
    early: Answer | None = turn.get("early")
    if answer is early:  # the run stopped while the model read or wrote
        st.caption(":material/search: " + plain(early_heading(None, "")))
    elif early is not None and answer.mode == "llm":
        with st.expander(EARLY_FOLDED, icon=":material/search:"):
            st.markdown(MarkdownStream().feed(early_text(early)))
            st.caption(describe_citations(early).line)
    if answer.error:
        st.warning(f"The LLM failed: {answer.error}" + (" The answer below comes from retrieval alone."
                                                       if answer.mode == "extractive" else " The answer was cut off."))

    if answer.cut:  # the same words as the CLI's and MCP's (streaming.CUT_REASONS)
        st.warning(f"The answer is incomplete: {plain(describe_cut(answer.cut))}.")
    report = describe_citations(answer)  # the CLI's and MCP's words, from every citation ("[7]" of no snippet too)
    for warning in report.warnings:
        st.warning(plain(warning))
    if answer.reasoning:
        with st.expander("The model's thinking (not part of the answer)", icon=":material/psychology:"):
            st.text(answer.reasoning)
    no_lines = tuple(c for c in answer.citations if c.start_line == 0)  # "[n]" of no snippet, a rote run: no code
    answer = replace(answer, citations=tuple(c for c in answer.citations if c.start_line > 0))
    head, full_list = split_full_list(answer.answer)  # a usage answer: its account first, every site folded
    # the chips and code views are those of what the page shows open: the folded list has its own links
    head_citations = (answer.citations[:len(parse_citations(head, retriever.indexed_paths))] if full_list
                      else answer.citations)
    views = code_views(replace(answer, citations=tuple(head_citations)), f"cq-{number}",
                       lambda path: path_refusal(retriever.repo, path, retriever.indexed_paths), retriever.source.redacted_lines)
    shown = [v for i, v in enumerate(views) if i < MAX_CODE_VIEWS or not v.verified]  # unverified ones always
    anchors = citation_anchors(shown)
    st.markdown(link_citations(head, answer.citations, anchors, retriever.indexed_paths, answer.answer))
    listed = answer.listed or list_sites(answer.references)
    if full_list:
        with st.expander(sites_label(listed), icon=":material/list:"):
            st.markdown(link_citations(full_list, answer.citations, anchors, retriever.indexed_paths, answer.answer))
    st.caption(answer_summary(turn["answer"], turn["seconds"]))
    if answer.unknown_names:
        st.caption(":material/help: Names the index does not know: " + plain(", ".join(answer.unknown_names)))
    if answer.prompt is not None and answer.prompt.left_out:
        st.caption("Left out to fit the model's window: " + plain("; ".join(answer.prompt.left_out)))
    if head_citations or no_lines:
        dashed = "; dashed ~: not cited, lines codeqa found an uncited sentence's names in" if any(
            c.verified and c.attributed for c in head_citations) else ""  # what citation_chips draws dashed
        st.caption("Citations (✓ green: verified, and the lines mention what the sentence names; ! amber: verified, "
                   f"but they do not; · grey: verified, nothing to check; ✗ red: unverified or written by rote{dashed}) — "
                   "click one to open its code:")
        st.html(citation_chips([*no_lines, *head_citations], anchors, mode=answer.mode))
        if len(answer.citations) > len(head_citations):
            st.caption(f"{len(answer.citations) - len(head_citations)} more citations in “{sites_label(listed)}”.")
    elif answer.mode == "llm":
        st.caption(":material/warning: The answer cites no code; see the evidence below.")
    for view in shown:
        icon = ":material/check_circle:" if view.verified else ":material/cancel:"
        suffix = "" if view.verified else " — :red[unverified citation]"
        with st.expander(f"{plain(view.label)}{suffix}", icon=icon, key=view.anchor):
            for c in view.citations:
                if not c.verified:
                    st.markdown(f":red[**✗ {plain(span_label(c.path, c.start_line, c.end_line))} is unverified:** "
                                f"{plain(c.reason)}]")
                elif c.supported is False:
                    st.markdown(f":orange[**! {plain(span_label(c.path, c.start_line, c.end_line))} is verified, "
                                f"not supported:** {plain(c.support_reason)}]")
            if view.text:
                st.caption(f"{plain(view.path)} · lines {view.start_line}-{view.end_line}"
                           + (f" · retrieved as: {view.note}" if view.note else ""))
                st.html(highlighted_html(view.text, view.path, view.start_line, view.marked, view.anchor))
            elif view.note:
                st.info(view.note)
    if len(views) > len(shown):
        st.caption(f"…and {len(views) - len(shown)} more cited snippets, not opened here"
                   + (": the reference sites are in the list above." if answer.route == "usage" else "."))
    if answer.route == "usage" and answer.references and not full_list:
        names = ", ".join(dict.fromkeys(s.qualified_name for s in answer.definitions)) or "the symbol"
        with st.expander(f"References to {plain(names)}: {listed.total} sites in {listed.files} files",
                         icon=":material/account_tree:"):
            st.markdown(references_markdown(listed, refs_spec(answer.definitions)))
    with st.expander(f"Why these snippets: {len(answer.snippets)} retrieved", icon=":material/manage_search:"):
        if answer.query and answer.query != answer.question:
            st.caption(f"Follow-up read as: “{plain(answer.query)}”")
        if answer.snippets:
            st.dataframe(evidence_rows(answer.snippets, answer.citations), hide_index=True, width="stretch",
                         column_config={"score": st.column_config.NumberColumn(format="%.3f", width="small"),
                                        "snippet": st.column_config.TextColumn(width="medium"),
                                        "why": st.column_config.TextColumn(width="large"),
                                        "cited": st.column_config.TextColumn(width="small")})
        else:
            st.caption("Nothing in the index matched this question.")
