"""The page's sidebar: which repository, the state of its index, the Index / re-index button, and this
session's settings (the LLM in use, top-k, context budget, a new chat).

The repository is the one `codeqa ui --repo` named (Settings.ui_repo); a visitor types another only when the
operator allowed it (`--any-repo`, Settings.ui_any_repo): whoever can choose a folder can read its files.
"""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

import streamlit as st

from codeqa.ui.answer_view import code_span, llm_description, plain, time_ago
from codeqa.answer import Conversation
from codeqa.config import Settings
from codeqa.errors import CodeQAError, IndexMismatchError, IndexMissingError
from codeqa.indexing.index import IndexStatus, index_repo
from codeqa.store import semantic_search_at
from codeqa.query.shared_reader import IndexReopenedError, SharedRetriever
from codeqa.ui.resources import WATCHED_AT_ONCE, cached_status, embedder_for, index_of, live_sync, release_index

log = logging.getLogger("codeqa.ui")

INDEX_STAGES = {"parse": "Parsing files", "model": "Loading the embedding model", "embed": "Embedding chunks",
                "resolve": "Resolving references", "store": "Storing"}


def sidebar_repository(base: Settings) -> tuple[Path | None, SharedRetriever | None, tuple[str, str]]:
    """Repository input, index status and the Index / re-index button.

    Returns (repo, its open index or None, (level, message) saying why there is none): "info" (no index yet),
    "error" (indexing settles it: an index another codeqa version wrote) or "fix" (a setting, the store's server,
    the model: indexing changes nothing, so it is not offered as the next step)."""
    state = st.session_state
    given = base.ui_repo or ""
    choose = base.ui_any_repo  # only when the operator allowed it: a visitor reads files
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
        shared = index_of(repo, base)
    except IndexMissingError:
        problem = ("info", f"No index for {plain(repo.name)} yet: press **Index repository** in the sidebar.")
    except IndexMismatchError as exc:
        problem = ("error", str(exc))
    except CodeQAError as exc:  # a setting, the store's server, the model: the message says what to fix first
        problem = ("fix", str(exc))
    except Exception as exc:  # never a traceback in the page; the server log has it
        log.exception("opening the index failed")
        problem = ("fix", f"Could not open the index of {repo}: {type(exc).__name__}: {exc}")
    if shared is not None and base.ui_watch and (stopped := live_sync(repo, base)):
        st.info(f"Live sync of {code_span(stopped)} stopped: the page watches at most {WATCHED_AT_ONCE} repositories "
                "at once, and that one was used least recently. It starts again when that repository is opened.")
    status, last_indexed = None, None
    if shared is not None:
        try:
            with shared.turn() as retriever:
                last_indexed = retriever.store.read_meta().get("last_indexed")
                status = cached_status(str(repo), str(base.index_dir or ""), last_indexed, retriever)
        except IndexReopenedError:
            st.rerun()
        except Exception as exc:  # a broken index must not take the page down
            log.exception("index status failed")
            st.error(f"Could not read the index status: {exc}")
    show_status(status, problem[0] in ("error", "fix"))
    settles = problem[0] != "fix"
    message = state.pop("index_message", None)
    if message:
        (st.success if message[0] == "ok" else st.error)(message[1])
    label = "Re-index" if status else "Index repository"
    # the page's next step is the primary button; not when the message on the right names something to fix first
    primary = settles and (status is None or bool(status.stale) or not status.complete or status.semantic < 1)
    if st.button(label, key="index", type="primary" if primary else "secondary", width="stretch",
                 help="Incremental: only files changed since the last run are parsed and embedded again." if settles
                 else "Fix what the message on the right names first: indexing does not change it."):
        run_index(repo, base, last_indexed)
    return repo, shared, problem


def show_status(status: IndexStatus | None, failed: bool) -> None:
    if status is None:
        st.caption("Index unavailable (see the message on the right)." if failed else "Not indexed yet.")
        return
    st.markdown(f"**{status.files:,}** files · **{status.symbols:,}** symbols · **{status.chunks:,}** chunks")
    st.caption(index_times(status))
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


def index_times(status: IndexStatus, now: datetime | None = None) -> str:
    """When each phase last completed: search works from phase 1 (keywords and the graph) on, and is whole once
    phase 2 has embedded every chunk; one "last indexed" time would name only one of them."""
    searchable = f"Searchable since {time_ago(status.last_indexed, now)}"
    if status.embedded_at:
        return f"{searchable} · embeddings complete {time_ago(status.embedded_at, now)}"
    embedded = round(status.semantic * status.chunks)
    return f"{searchable} · embedding: {embedded:,} of {status.chunks:,} chunks"


def run_index(repo: Path, settings: Settings, last_indexed: str | None) -> None:
    """index_repo with a live progress bar; the repository's cached index (whose status was computed for
    `last_indexed`) is released first and reopened on the rerun."""
    release_index(repo, settings, last_indexed)
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
