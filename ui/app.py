"""codeqa's Streamlit chat: ask about an indexed repository, get a streamed answer whose citations open the code.

Started by `codeqa ui [--repo PATH] [--index-dir DIR] [--port N]` (or `make run REPO=PATH`). The page
only calls the library:

    sidebar  repository path, index status (index_status), Index / re-index (index_repo with live
             progress), the LLM in use, top-k and context budget
    chat     one Conversation per browser session; Answerer.stream -> st.write_stream; under each
             answer: citation chips, an expander per cited snippet (code highlighted at the cited
             lines), every reference site for usage questions, and "why these snippets"

Heavy things are cached across reruns and sessions with st.cache_resource: the embedding model (one
per embeddings setting) and the open index (a Retriever over the store). Other processes may read and
write the same index meanwhile: the Retriever notices a finished run on its next question. "Index /
re-index" still reopens the cached index afterwards, so the sidebar's counts are the new run's; the
model stays loaded. What the page shows is built by plain functions in
answer_view.py (tested without Streamlit); only files inside the repository and in its index are shown.
"""

from __future__ import annotations

import hmac
import logging
import os
import time
from dataclasses import replace
from pathlib import Path

import streamlit as st

from answer_view import (answer_summary, citation_anchors, citation_chips, code_span, code_views, evidence_rows,
                         example_questions, highlighted_html, link_citations, llm_description, path_refusal, plain,
                         references_markdown, sites_label, time_ago)
from codeqa.answer import Answerer, Conversation
from codeqa.answer.citations import parse_citations
from codeqa.config import Settings
from codeqa.answer.defang import MarkdownStream
from codeqa.embed import make_embedder
from codeqa.errors import CodeQAError, IndexMissingError
from codeqa.answer.extractive import refs_spec, span_label, split_full_list
from codeqa.index import IndexStatus, index_repo, index_status
from codeqa.query.lookup import list_sites
from codeqa.query.retrieve import Retriever
from codeqa.query.shared_reader import IndexReopenedError, SharedRetriever
from codeqa.store import semantic_search_at
from codeqa.types import Answer

log = logging.getLogger("codeqa.ui")

MAX_CODE_VIEWS = 10  # expanders under one answer (a usage answer can cite hundreds of sites)
INDEX_STAGES = {"parse": "Parsing files", "model": "Loading the embedding model", "embed": "Embedding chunks",
                "resolve": "Resolving references", "store": "Storing"}


# ---- cached resources (shared by every rerun and browser session) --------------------------------

@st.cache_resource(show_spinner=False)
def load_embedder(spec: str, adapter: str, base_url: str | None, _api_key: str | None, concurrency: int, timeout: float,
                  settings_named: tuple[str, str]):
    """The embedding model, built once per embeddings setting; it loads its weights on first use."""
    return make_embedder(spec, adapter, base_url, _api_key, concurrency=concurrency, timeout=timeout,
                         settings_named=settings_named)


@st.cache_resource(show_spinner="Opening the index…", on_release=lambda shared: shared.retire())
def open_index(repo: str, index_dir: str | None, qdrant_url: str | None, _settings: Settings) -> SharedRetriever:
    """The open index of `repo`, shared by all sessions, which take turns on it; reopened after re-indexing (the
    old one is closed when the last session using it is done)."""
    return SharedRetriever(Retriever.open(Path(repo), _settings, embedder=embedder_for(_settings)))


@st.cache_data(ttl=60, show_spinner=False)
def cached_status(repo: str, index_dir: str | None, last_indexed: str | None, _retriever: Retriever) -> IndexStatus:
    """Hashing every file to find the changed ones costs a walk; once a minute is enough."""
    return index_status(Path(repo), _retriever.settings, _retriever.store)


def embedder_for(settings: Settings):
    end = settings.embeddings_endpoint
    return load_embedder(settings.embeddings, settings.embedding_adapter, end.base_url, end.api_key,
                         settings.embedding_concurrency, settings.embedding_timeout, (end.url_setting, end.key_setting))


@st.cache_resource(show_spinner=False, on_release=lambda watcher: watcher.stop())
def live_sync(repo: str, _settings: Settings):
    """`codeqa ui --watch`: one watcher per repository for the server's life; its runs reach every session
    through the index (an open retriever sees a finished run on its next question)."""
    from codeqa.watch import RepoWatcher

    def failed(exc: Exception) -> None:
        log.warning("live sync of %s: %s", repo, exc)

    return RepoWatcher(Path(repo), _settings, embedder=embedder_for(_settings), on_error=failed).start()


def release_index() -> None:
    open_index.clear()  # on_release retires each shared retriever: closed once no session is using it
    cached_status.clear()


# ---- page -------------------------------------------------------------------------------------

CSS = """<style>
.cq-chips { display: flex; flex-wrap: wrap; gap: 0.35rem; margin: 0.25rem 0 0.5rem 0; }
.cq-chip { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.8rem; padding: 0.1rem 0.55rem;
  border-radius: 1rem; border: 1px solid; text-decoration: none !important; white-space: nowrap; }
.cq-chip.cq-ok { color: #11643a !important; background: #e7f6ec; border-color: #9fd8b4; }
.cq-chip.cq-bad { color: #9b1c1c !important; background: #fdecec; border-color: #f2a7a7; text-decoration: line-through !important; }
.cq-chip.cq-more { color: #555; background: #f0f0f0; border-color: #d5d5d5; }
.cq-chip:hover { filter: brightness(0.95); }
.cq-code { max-height: 28rem; overflow: auto; border: 1px solid #e6e6e6; border-radius: 0.4rem; background: #f8f8f8; }
</style>"""
# A citation (chip or link in the answer) opens the expander holding its code and scrolls to it. Expanders
# carry the key "cq-<turn>-<n>", which Streamlit renders as the class "st-key-cq-<turn>-<n>".
OPEN_CITATION_JS = """<script>
(function () {
  if (document.__codeqaCitations) return;
  document.__codeqaCitations = true;
  document.addEventListener("click", function (event) {
    const link = event.target.closest && event.target.closest('a[href^="#cq-"]');
    if (!link) return;
    const box = document.querySelector(".st-key-" + link.getAttribute("href").slice(1));
    if (!box) return;
    event.preventDefault();
    event.stopPropagation();
    const details = box.querySelector("details");
    if (details && !details.open) details.querySelector("summary").click();
    box.scrollIntoView({behavior: "smooth", block: "start"});
  }, true);
})();
</script>"""


def main() -> None:
    st.set_page_config(page_title="codeqa — ask your code", page_icon=":material/manage_search:", layout="wide")
    st.html(CSS)
    token = os.environ.get("CODEQA_UI_TOKEN")
    if token and not hmac.compare_digest(str(st.query_params.get("token", "")).encode(), token.encode()):
        st.error("This codeqa page needs its token: open the address `codeqa ui` printed (…/?token=…).")
        st.stop()
    st.html(OPEN_CITATION_JS, unsafe_allow_javascript=True)
    state = st.session_state
    state.setdefault("turns", [])
    state.setdefault("conversation", Conversation())
    try:
        base = Settings.load()
    except CodeQAError as exc:
        st.error(str(exc))
        st.stop()
    with st.sidebar:
        st.title(":material/manage_search: codeqa")
        repo, shared, problem = sidebar_repository(base)
        settings = sidebar_settings(base)
    if state.get("chat_repo") != str(repo):  # a conversation belongs to one repository
        state["chat_repo"] = str(repo)
        state["turns"] = []
        state["conversation"] = Conversation()

    st.header(f"Ask about {plain(repo.name)}" if repo else "Ask about your code")
    if repo is None or shared is None:
        level, text = problem
        (st.info if level == "info" else st.error)(text)
        st.chat_input("Index the repository first (sidebar)" if repo else "Choose a repository first (sidebar)",
                      disabled=True)
        return
    st.caption(f"Answers cite `path:Lstart-Lend` in **{repo}**; click a citation to see the code.")
    # read first (the input stays pinned to the bottom) so the intro is gone as soon as a question is asked
    question = st.chat_input("Ask about the code, e.g. “How is X used?”", key="question") or state.pop("pending", None)
    question = (question or "").strip()  # an empty question is no question: nothing to answer
    try:
        with shared.held():  # this run's index stays open even if another session re-indexes meanwhile
            chat(question, shared, settings)
    except IndexReopenedError:
        st.rerun()


def chat(question: str, shared: SharedRetriever, settings: Settings) -> None:
    state = st.session_state
    for number, turn in enumerate(state["turns"], start=1):
        with st.chat_message("user"):
            st.markdown(turn["question"])
        with st.chat_message("assistant"), shared.turn() as retriever:
            show_answer(turn, retriever, number)
    if not state["turns"] and not question:
        with shared.turn() as retriever:
            show_intro(retriever)
    if question:
        ask(question, shared, settings, len(state["turns"]) + 1)


def sidebar_repository(base: Settings) -> tuple[Path | None, SharedRetriever | None, tuple[str, str]]:
    """Repository input, index status and the Index / re-index button.

    Returns (repo, its open index or None, (level, message) saying why there is none: "info" or "error")."""
    state = st.session_state
    given = os.environ.get("CODEQA_UI_REPO", "")
    choose = bool(os.environ.get("CODEQA_UI_ANY_REPO"))  # only when the operator allowed it: a visitor reads files
    typed = st.text_input("Repository", value=given, key="repo", disabled=not choose,
                          placeholder="/path/to/repository" if choose else "codeqa ui --repo PATH",
                          help="The folder of the code repository to ask about." if choose else
                          "The page serves the repository `codeqa ui --repo` named (`--any-repo` lets you type one here).")
    if not choose:
        typed = given
    if not typed.strip():
        if not choose:
            return None, None, ("info", "Start the page with `codeqa ui --repo PATH` (or `--any-repo` to choose a "
                                        "folder here).")
        return None, None, ("info", "Enter the path of a repository in the sidebar.")
    repo = Path(typed.strip()).expanduser()
    if not repo.is_dir():
        st.error(f"{repo} is not a folder.")
        return None, None, ("error", f"{repo} is not a folder; enter the path of a code repository in the sidebar.")
    repo = repo.resolve()
    shared, problem = None, ("", "")
    try:
        shared = open_index(str(repo), str(base.index_dir or ""), base.qdrant_url, base)
    except IndexMissingError:
        problem = ("info", f"No index for {plain(repo.name)} yet: press **Index repository** in the sidebar.")
    except CodeQAError as exc:
        problem = ("error", str(exc))
    except Exception as exc:  # never a traceback in the page; the server log has it
        log.exception("opening the index failed")
        problem = ("error", f"Could not open the index of {repo}: {type(exc).__name__}: {exc}")
    if shared is not None and os.environ.get("CODEQA_UI_WATCH"):
        live_sync(str(repo), base)
    status = None
    if shared is not None:
        try:
            with shared.turn() as retriever:
                status = cached_status(str(repo), str(base.index_dir or ""),
                                       retriever.store.read_meta().get("last_indexed"), retriever)
        except IndexReopenedError:
            st.rerun()
        except Exception as exc:  # a broken index must not take the page down
            log.exception("index status failed")
            st.error(f"Could not read the index status: {exc}")
    show_status(status, problem[0] == "error")
    message = state.pop("index_message", None)
    if message:
        (st.success if message[0] == "ok" else st.error)(message[1])
    label = "Re-index" if status else "Index repository"
    primary = status is None or bool(status.stale) or not status.complete or status.semantic < 1
    if st.button(label, key="index", type="primary" if primary else "secondary", width="stretch",
                 help="Incremental: only files changed since the last run are parsed and embedded again."):
        run_index(repo, base)
    return repo, shared, problem


def show_status(status: IndexStatus | None, failed: bool) -> None:
    if status is None:
        st.caption("Index unavailable (see the message on the right)." if failed else "Not indexed yet.")
        return
    st.markdown(f"**{status.files:,}** files · **{status.symbols:,}** symbols · **{status.chunks:,}** chunks")
    st.caption(f"Last indexed {time_ago(status.last_indexed)}")
    if not status.complete:
        st.warning("The last indexing run did not finish; re-index to complete it.")
    elif status.semantic < 1:
        st.info(f"{semantic_search_at(status.semantic)}: the chunks are still being embedded (or the "
                "last run stopped; re-index to finish). Meanwhile search finds the rest by keywords and the graph.")
    if status.stale:
        with st.expander(f"{status.stale} file{'s' if status.stale != 1 else ''} changed since — re-index",
                         icon=":material/warning:"):
            st.markdown("\n".join([f"- {code_span(p)} (changed)" for p in status.changed[:50]]
                                  + [f"- {code_span(p)} (deleted)" for p in status.deleted[:50]]))
    else:
        st.caption("✓ Up to date with the files on disk.")


def run_index(repo: Path, settings: Settings) -> None:
    """index_repo with a live progress bar; the cached index is released first and reopened on the rerun."""
    release_index()
    bar = st.progress(0.0, text="Walking the repository…")

    def progress(stage: str, done: int, total: int) -> None:
        bar.progress(min(1.0, done / total) if total else 1.0,
                     text=f"{INDEX_STAGES.get(stage, stage)}: {done:,} / {total:,}")

    try:
        report = index_repo(repo, settings, progress=progress, embedder=embedder_for(settings))
    except CodeQAError as exc:
        st.session_state["index_message"] = ("error", str(exc))
    except Exception as exc:  # never a traceback in the page; the log has it
        log.exception("indexing failed")
        st.session_state["index_message"] = ("error", f"Indexing failed: {exc}")
    else:
        did = ("Nothing changed since the last run." if report.nothing_to_do else
               f"Indexed {report.files_changed:,} changed file(s), removed {report.files_deleted:,}.")
        st.session_state["index_message"] = ("ok", f"{did} {report.files_total:,} files, {report.symbols:,} symbols, "
                                                   f"{report.chunks:,} chunks ({report.elapsed_seconds:.1f} s).")
    st.rerun()


def sidebar_settings(base: Settings) -> Settings:
    st.divider()
    st.subheader("LLM")
    endpoint, model = llm_description(base)
    no_llm = False
    if endpoint:
        st.markdown(f"Endpoint {code_span(endpoint)}  \nModel {code_span(model)}")
        no_llm = st.toggle("Answer without the LLM", key="no_llm", help="Extractive answers from retrieval alone.")
    else:
        st.markdown("**no LLM — extractive answers**")
        st.caption("Answers are built from the index alone. Set `OPENAI_BASE_URL` (and `OPENAI_API_KEY`, "
                   "`CODEQA_MODEL`) before `codeqa ui` to use an LLM.")
    st.session_state["use_llm"] = bool(endpoint) and not no_llm
    st.divider()
    st.subheader("Retrieval")
    top_k = st.slider("Top-k search results", 3, 30, base.top_k, key="top_k",
                      help="How many chunks the search returns before packing.")
    budget = st.slider("Context budget (tokens)", 1000, 16000, base.context_tokens, step=500, key="context_tokens",
                       help="How much code the answer may be built from.")
    if st.button("New chat", key="new_chat", width="stretch", help="Forget the conversation so far."):
        st.session_state["turns"] = []
        st.session_state["conversation"] = Conversation()
    return base.with_(top_k=top_k, context_tokens=budget)


def show_intro(retriever: Retriever) -> None:
    with st.chat_message("assistant"):
        st.markdown("Ask a question about this repository. Usage questions (“How is `X` used?”) list every place the "
                    "symbol is used; other questions search the code. Every answer cites `path:Lstart-Lend`; "
                    "green citations are verified against the indexed lines.")
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
        turn = {"question": question, "answer": None, "error": None, "seconds": None}
        try:
            retriever = shared.retriever
            answerer = Answerer(retriever, settings)  # this session's top-k and budget; the retriever is shared
            first = not getattr(retriever.embedder, "loaded", True)
            waiting = st.empty()  # what the model is doing before its first word (a CPU model reads for minutes)

            def progress(p) -> None:
                if p.stage == "reading":
                    waiting.caption(f":material/hourglass_top: {p.message}")
                else:
                    waiting.empty()

            with st.spinner("Searching the code…" + (" (the first search also loads the embedding model)" if first else "")), \
                    shared.turn():  # retrieval takes its turn; the model then writes while other sessions search
                stream = answerer.stream(question, state["conversation"], no_llm=not state.get("use_llm"),
                                         top_k=settings.top_k, on_progress=progress)
            placeholder = st.empty()
            shown = MarkdownStream()  # the answer is data: no image it writes is fetched, no link is live
            for piece in stream:
                waiting.empty()
                placeholder.markdown(shown.feed(piece))
            waiting.empty()
            turn["answer"] = stream.answer
            turn["seconds"] = time.perf_counter() - started
            placeholder.empty()
        except CodeQAError as exc:
            turn["error"] = str(exc)
        except Exception as exc:  # never a traceback in the page; the server log has it
            log.exception("answering failed")
            turn["error"] = f"Something went wrong while answering: {type(exc).__name__}: {exc}"
        state["turns"].append(turn)
        with shared.turn() as retriever:
            show_answer(turn, retriever, number)


def show_answer(turn: dict, retriever: Retriever, number: int) -> None:
    answer: Answer | None = turn["answer"]
    if answer is None:
        st.error(turn["error"])
        return
    if answer.error:
        st.warning(f"The LLM failed: {answer.error}" + (" The answer below comes from retrieval alone."
                                                       if answer.mode == "extractive" else " The answer was cut off."))

    if answer.cut:
        st.warning({"length": "The answer is incomplete: it reached its token limit (CODEQA_ANSWER_TOKENS).",
                    "repeating": "The answer is incomplete: the model started repeating itself, and was stopped."}.get(
                        answer.cut, "The answer is incomplete: the stream broke."))
    if answer.mode == "llm" and not answer.grounded:
        st.warning("No verified evidence supports this answer: it cites nothing, and none of its sentences matches "
                   "the retrieved code. Treat it as ungrounded.")
    if answer.reasoning:
        with st.expander("The model's thinking (not part of the answer)", icon=":material/psychology:"):
            st.text(answer.reasoning)
    answer = replace(answer, citations=tuple(c for c in answer.citations if c.start_line > 0))  # "[n]" of no snippet
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
    st.caption(answer_summary(answer, turn["seconds"]))
    if answer.unknown_names:
        st.caption(":material/help: Names the index does not know: " + plain(", ".join(answer.unknown_names)))
    if answer.prompt is not None and answer.prompt.left_out:
        st.caption("Left out to fit the model's window: " + plain("; ".join(answer.prompt.left_out)))
    if head_citations:
        st.caption("Citations (green: verified against the indexed lines; red: not) — click one to open its code:")
        st.html(citation_chips(head_citations, anchors))
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
            if view.text:
                st.caption(f"{plain(view.path)} · lines {view.start_line}-{view.end_line}"
                           + (f" · retrieved as: {view.note}" if view.note else ""))
                st.html(highlighted_html(view.text, view.path, view.start_line, view.marked))
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


if __name__ == "__main__":
    main()
