"""codeqa's Streamlit chat: ask about an indexed repository, get a streamed answer whose citations open the code.

Started by `codeqa ui [--repo PATH] [--index-dir DIR] [--port N]` (or `make run REPO=PATH`). The page
only calls the library:

    sidebar  repository path, index status (index_status), Index / re-index (index_repo with live
             progress), the LLM in use, top-k and context budget
    chat     one Conversation per browser session; Answerer.stream -> st.write_stream; under each
             answer: citation chips, an expander per cited snippet (code highlighted at the cited
             lines), every reference site for usage questions, and "why these snippets"

Heavy things are cached across reruns and sessions with st.cache_resource: the embedding model (one
per embeddings setting) and the open index (a Retriever holding the Qdrant client). Embedded Qdrant
allows one client per folder, so "Index / re-index" releases the cached index before index_repo and
reopens it afterwards; the model stays loaded. The functions above `main()` are plain Python, tested
without Streamlit; the page shows only files that are inside the repository and in its index.
"""

from __future__ import annotations

import html
import logging
import os
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Collection, Iterable, Sequence
from urllib.parse import urlsplit, urlunsplit

import streamlit as st

from codeqa.answer import DEFAULT_MODEL, Answerer, Conversation, parse_citations
from codeqa.config import Settings
from codeqa.embed import make_embedder
from codeqa.errors import CodeQAError, IndexMissingError
from codeqa.extractive import span_label
from codeqa.index import IndexStatus, index_repo, index_status
from codeqa.retrieve import Retriever, group_references
from codeqa.types import Answer, Citation, Reference, Snippet

log = logging.getLogger("codeqa.ui")

MAX_CODE_VIEWS = 10  # expanders under one answer (a usage answer can cite hundreds of sites)
MAX_CHIPS = 24
CONTEXT_LINES = 2  # lines shown around a citation that no snippet holds
REASONS = {  # Hit/Snippet reasons from retrieve.py, in words
    "definition": "definition of the named symbol",
    "symbol": "symbol match",
    "dense": "dense (similar meaning)",
    "hybrid": "dense + keyword (BM25)",
    "keyword": "keyword (BM25)",
    "ref-hop": "reference hop from a top hit",
    "reference": "reference line",
    "header": "enclosing class/function header",
    "file named": "file named in the question",
}
INDEX_STAGES = {"parse": "Parsing files", "model": "Loading the embedding model", "embed": "Embedding chunks",
                "store": "Storing"}


# ---- what the page shows (plain functions) -------------------------------------------------------

def path_refusal(repo: Path, path: str, indexed: Collection[str]) -> str:
    """Why `path` must not be shown ("" when it may): it has to be a relative path inside the
    repository (symlinks resolved) and a file of the index, which never holds secret files."""
    if not path or path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", path):
        return f"{path or 'an empty path'} is not a path inside the repository"
    root = Path(repo).resolve()
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        return f"{path} is outside the indexed repository"
    if path not in indexed:
        return f"{path} is not in the index"
    return ""


@dataclass(frozen=True)
class CodeView:
    """One expander under an answer: a cited snippet (or the cited lines of a file no snippet holds)."""

    anchor: str  # html id the citation chips link to
    path: str
    start_line: int
    end_line: int
    text: str  # "" when refused
    marked: tuple[int, ...]  # the cited line numbers, highlighted
    citations: tuple[Citation, ...]
    note: str = ""  # why the snippet was retrieved, or why the code is not shown

    @property
    def verified(self) -> bool:
        return all(c.verified for c in self.citations)

    @property
    def label(self) -> str:
        return span_label(self.path, self.start_line, self.end_line)


def code_views(answer: Answer, anchor_prefix: str, refusal: Callable[[str], str],
               read_lines: Callable[[str], list[str] | None]) -> list[CodeView]:
    """The cited snippets of an answer in citation order, each with its cited lines marked.

    A citation belongs to the first snippet of its file that overlaps it; one that no snippet holds
    (an unverified citation) gets a view of its own with the file's lines from `read_lines(path)`.
    No code is shown for a path that `refusal(path)` gives a reason for (see `path_refusal`).
    """
    groups: dict[tuple[str, int, int], list[Citation]] = {}
    owners: dict[tuple[str, int, int], Snippet | None] = {}
    for c in answer.citations:
        snippet = next((s for s in answer.snippets if s.path == c.path and s.start_line <= c.end_line
                        and c.start_line <= s.end_line), None)
        key = (snippet.path, snippet.start_line, snippet.end_line) if snippet else (c.path, c.start_line, c.end_line)
        groups.setdefault(key, []).append(c)
        owners[key] = snippet
    views = []
    for number, (key, cited) in enumerate(groups.items(), start=1):
        marked = tuple(sorted({line for c in cited for line in range(c.start_line, c.end_line + 1)}))
        anchor = f"{anchor_prefix}-{number}"
        snippet = owners[key]
        path, start, end = key
        refused = refusal(path)
        lines = None if refused or snippet is not None else read_lines(path)
        if refused or (snippet is None and lines is None):
            views.append(CodeView(anchor, path, start, end, "", marked, tuple(cited),
                                  f"Not shown: {refused or f'{path} cannot be read'}."))
            continue
        if snippet is not None:
            views.append(CodeView(anchor, path, start, end, snippet.text, marked, tuple(cited),
                                  explain_reasons(snippet.reason)))
            continue
        first, last = max(1, start - CONTEXT_LINES), min(len(lines), end + CONTEXT_LINES)
        text = "".join(lines[first - 1:last]) if first <= last else ""
        note = "" if text else f"Not shown: {path} has only {len(lines)} lines."
        views.append(CodeView(anchor, path, first, max(first, last), text, marked, tuple(cited), note))
    return views


def citation_anchors(views: Iterable[CodeView]) -> dict[tuple[str, int, int], str]:
    return {(c.path, c.start_line, c.end_line): v.anchor for v in views for c in v.citations}


def citation_chips(citations: Sequence[Citation], anchors: dict[tuple[str, int, int], str],
                   limit: int = MAX_CHIPS) -> str:
    """HTML: one link-like chip per citation (green ✓ verified, red ✗ unverified with the reason as tooltip),
    unverified ones first; past `limit`, one grey chip counts the rest."""
    chips = []
    ordered = sorted(citations, key=lambda c: c.verified)  # stable: the answer's order within each group
    for c in ordered[:limit]:
        label = html.escape(span_label(c.path, c.start_line, c.end_line))
        state = "ok" if c.verified else "bad"
        title = html.escape("verified: inside the code the answer was given" if c.verified else f"unverified: {c.reason}",
                            quote=True)
        mark = "✓" if c.verified else "✗"
        anchor = anchors.get((c.path, c.start_line, c.end_line))
        href = f' href="#{anchor}"' if anchor else ""
        chips.append(f'<a class="cq-chip cq-{state}"{href} title="{title}">{mark} {label}</a>')
    if len(ordered) > limit:
        chips.append(f'<span class="cq-chip cq-more">+{len(ordered) - limit} more</span>')
    return '<div class="cq-chips">' + "".join(chips) + "</div>"


def link_citations(text: str, citations: Sequence[Citation], anchors: dict[tuple[str, int, int], str],
                   known_paths: Collection[str]) -> str:
    """The answer's markdown with each citation as it was written turned into a link to its code view;
    an unverified one is followed by a red "unverified" mark."""
    written = parse_citations(text, known_paths)
    if len(written) != len(citations) or not written:
        return text
    target = {span.text: c for span, c in zip(written, citations)}
    alternatives = "|".join(re.escape(t) for t in sorted(target, key=len, reverse=True))  # longest first
    pattern = re.compile(r"(`)?(?<![\w/.@+-])(" + alternatives + r")(?!\d)(?(1)`)")

    def link(m: re.Match) -> str:
        c = target[m.group(2)]
        shown = f"`{m.group(2)}`"
        anchor = anchors.get((c.path, c.start_line, c.end_line))
        linked = f"[{shown}](#{anchor})" if anchor else shown
        return linked if c.verified else f"{linked} :red[**✗ unverified**]"

    # fenced code blocks stay as they are
    pieces = re.split(r"(^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\2[ \t]*$)", text, flags=re.MULTILINE | re.DOTALL)
    out = []
    for i, piece in enumerate(pieces):
        if i % 3 == 0:
            out.append(pattern.sub(link, piece))
        elif i % 3 == 1:
            out.append(piece)
    return "".join(out)


def explain_reasons(reason: str) -> str:
    """`symbol,hybrid` -> words a newcomer understands."""
    words = []
    for part in filter(None, (p.strip() for p in reason.split(","))):
        words.append(REASONS.get(part, part))  # "call site", "import site"... read well as they are
    return "; ".join(dict.fromkeys(words))


def evidence_rows(snippets: Sequence[Snippet], citations: Sequence[Citation]) -> list[dict]:
    """'Why these snippets': each snippet the answer was built from, best first, with score and reason."""
    rows = []
    for number, s in enumerate(snippets, start=1):
        cited = any(c.path == s.path and c.start_line <= s.end_line and s.start_line <= c.end_line for c in citations)
        rows.append({"#": number, "snippet": s.label, "score": round(s.score, 3), "why": explain_reasons(s.reason),
                     "cited": "✓" if cited else ""})
    return rows


def references_markdown(references: Sequence[Reference]) -> str:
    """Every reference site grouped by file: `**path** — n sites`, then one line each with line, kind and code."""
    parts = []
    for path, refs in group_references(references):
        parts.append(f"**{_code(path)}** — {len(refs)} site{'s' if len(refs) != 1 else ''}")
        parts.append("\n".join(f"- L{r.line} · {r.kind}" + (f" · {_code(r.line_text.strip())}" if r.line_text.strip() else "")
                               for r in refs))
    return "\n\n".join(parts)


def plain(text: str) -> str:
    """`text` shown literally where Streamlit reads markdown (labels, captions): `pkg/__init__.py` is not bold."""
    return re.sub(r"([\\`*_\[\]<>~$|#])", r"\\\1", text)


def _code(text: str) -> str:
    """`text` as an inline code span that survives backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def highlighted_html(text: str, path: str, start_line: int, marked: Iterable[int] = ()) -> str:
    """The code syntax-highlighted (pygments, inline styles), numbered from `start_line`, `marked` lines lit."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, get_lexer_for_filename
    from pygments.styles.default import DefaultStyle
    from pygments.util import ClassNotFound

    class Style(DefaultStyle):
        line_number_color = "#9a9a9a"
        highlight_color = "#fff5c2"

    options = {"stripnl": False, "stripall": False, "ensurenl": True}
    try:
        lexer = get_lexer_for_filename(path, **options)
    except ClassNotFound:
        lexer = TextLexer(**options)
    count = text.count("\n") + (0 if text.endswith("\n") else 1)
    lit = [line - start_line + 1 for line in marked if 0 <= line - start_line < count]
    formatter = HtmlFormatter(noclasses=True, linenos="inline", linenostart=start_line, hl_lines=lit, style=Style,
                              prestyles="margin:0; padding:0.5rem 0.75rem; font-size:0.85rem; line-height:1.45;")
    return f'<div class="cq-code">{highlight(text, lexer, formatter)}</div>'


def llm_description(settings: Settings) -> tuple[str, str]:
    """(endpoint, model) of the chat LLM in use, credentials removed from the URL; ("", "") when none."""
    if not settings.llm_configured:
        return "", ""
    endpoint = settings.openai_base_url or "https://api.openai.com/v1"
    parts = urlsplit(endpoint)
    if parts.username or parts.password:
        endpoint = urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")))
    return endpoint, settings.model or DEFAULT_MODEL


def time_ago(iso: str | None, now: datetime | None = None) -> str:
    """`2025-01-02T03:04:05+00:00` -> `2025-01-02 03:04 UTC (5 minutes ago)`."""
    if not iso:
        return "never"
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    seconds = max(0, int(((now or datetime.now(timezone.utc)) - when).total_seconds()))
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            n = seconds // size
            ago = f"{n} {unit}{'s' if n != 1 else ''} ago"
            break
    else:
        ago = "just now"
    return f"{when.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC ({ago})"


def example_questions(retriever: Retriever, count: int = 3) -> list[str]:
    """Usage questions about the most referenced classes and functions of the repository."""
    by_id = {s.id: s for s in retriever.symbols}
    used: dict[str, int] = {}
    for r in retriever.all_references:
        if r.kind in ("call", "instantiation", "inheritance") and r.confidence in ("exact", "likely"):
            for t in r.target_ids:
                s = by_id.get(t)
                if s is not None and s.path != r.path and not s.name.startswith("_") and len(s.name) > 3:
                    used[s.name] = used.get(s.name, 0) + 1
    names = sorted(used, key=lambda n: (-used[n], n))[:count]
    return [f"How is {name} used?" for name in names]


def answer_summary(answer: Answer, seconds: float | None) -> str:
    """One caption line under an answer: mode, kind of question, citations, time."""
    if answer.mode == "llm":
        mode = f"answer by {answer.model}" + (" (cut off: the LLM failed)" if answer.error else "")
    else:
        mode = "extractive answer (the LLM failed)" if answer.error else "extractive answer (no LLM)"
    route = {"usage": "usage question: definition + every reference site", "relationship": "relationship question: graph paths",
             "search": "search: hybrid dense + keyword"}.get(answer.route, answer.route)
    bad = sum(not c.verified for c in answer.citations)
    cites = f"{len(answer.citations)} citation{'s' if len(answer.citations) != 1 else ''}"
    cites += f", {bad} unverified" if bad else (", all verified" if answer.citations else "")
    took = f" · {seconds:.1f} s" if seconds is not None else ""
    return f"{mode} · {route} · {cites}{took}"


# ---- cached resources (shared by every rerun and browser session) --------------------------------

@st.cache_resource(show_spinner=False)
def load_embedder(spec: str, adapter: str, base_url: str | None, _api_key: str | None):
    """The embedding model, built once per embeddings setting; it loads its weights on first use."""
    return make_embedder(spec, adapter, base_url, _api_key)


@st.cache_resource(show_spinner="Opening the index…", on_release=lambda retriever: retriever.close())
def open_index(repo: str, index_dir: str | None, qdrant_url: str | None, _settings: Settings) -> Retriever:
    """The open index of `repo`: one Qdrant client per folder, shared by all sessions; released before re-indexing."""
    return Retriever.open(Path(repo), _settings, embedder=embedder_for(_settings))


@st.cache_data(ttl=60, show_spinner=False)
def cached_status(repo: str, index_dir: str | None, last_indexed: str | None, _retriever: Retriever) -> IndexStatus:
    """Hashing every file to find the changed ones costs a walk; once a minute is enough."""
    return index_status(Path(repo), _retriever.settings, _retriever.store)


def embedder_for(settings: Settings):
    return load_embedder(settings.embeddings, settings.embedding_adapter, settings.openai_base_url, settings.openai_api_key)


def release_index() -> None:
    open_index.clear()  # on_release closes each Qdrant client
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
        repo, retriever, problem = sidebar_repository(base)
        settings = sidebar_settings(base)
    if state.get("chat_repo") != str(repo):  # a conversation belongs to one repository
        state["chat_repo"] = str(repo)
        state["turns"] = []
        state["conversation"] = Conversation()

    st.header(f"Ask about {plain(repo.name)}" if repo else "Ask about your code")
    if repo is None or retriever is None:
        level, text = problem
        (st.info if level == "info" else st.error)(text)
        st.chat_input("Index the repository first (sidebar)" if repo else "Choose a repository first (sidebar)",
                      disabled=True)
        return
    st.caption(f"Answers cite `path:Lstart-Lend` in **{repo}**; click a citation to see the code.")
    # read first (the input stays pinned to the bottom) so the intro is gone as soon as a question is asked
    question = st.chat_input("Ask about the code, e.g. “How is X used?”", key="question") or state.pop("pending", None)
    for number, turn in enumerate(state["turns"], start=1):
        with st.chat_message("user"):
            st.markdown(turn["question"])
        with st.chat_message("assistant"):
            show_answer(turn, retriever, number)
    if not state["turns"] and not question:
        show_intro(retriever)
    if question:
        ask(question, retriever, settings, len(state["turns"]) + 1)


def sidebar_repository(base: Settings) -> tuple[Path | None, Retriever | None, tuple[str, str]]:
    """Repository input, index status and the Index / re-index button.

    Returns (repo, its open index or None, (level, message) saying why there is none: "info" or "error")."""
    state = st.session_state
    typed = st.text_input("Repository", value=os.environ.get("CODEQA_UI_REPO", ""), key="repo",
                          placeholder="/path/to/repository", help="The folder of the code repository to ask about.")
    if not typed.strip():
        return None, None, ("info", "Enter the path of a repository in the sidebar.")
    repo = Path(typed.strip()).expanduser()
    if not repo.is_dir():
        st.error(f"{repo} is not a folder.")
        return None, None, ("error", f"{repo} is not a folder; enter the path of a code repository in the sidebar.")
    repo = repo.resolve()
    retriever, problem = None, ("", "")
    try:
        retriever = open_index(str(repo), str(base.index_dir or ""), base.qdrant_url, base)
    except IndexMissingError:
        problem = ("info", f"No index for {plain(repo.name)} yet: press **Index repository** in the sidebar.")
    except CodeQAError as exc:
        problem = ("error", str(exc))
    except Exception as exc:  # never a traceback in the page; the server log has it
        log.exception("opening the index failed")
        problem = ("error", f"Could not open the index of {repo}: {type(exc).__name__}: {exc}")
    status = None
    if retriever is not None:
        try:
            status = cached_status(str(repo), str(base.index_dir or ""), retriever.store.read_meta().get("last_indexed"),
                                   retriever)
        except Exception as exc:  # a broken index must not take the page down
            log.exception("index status failed")
            st.error(f"Could not read the index status: {exc}")
    show_status(status, problem[0] == "error")
    message = state.pop("index_message", None)
    if message:
        (st.success if message[0] == "ok" else st.error)(message[1])
    label = "Re-index" if status else "Index repository"
    primary = status is None or bool(status.stale) or not status.complete
    if st.button(label, key="index", type="primary" if primary else "secondary", width="stretch",
                 help="Incremental: only files changed since the last run are parsed and embedded again."):
        run_index(repo, base)
    return repo, retriever, problem


def show_status(status: IndexStatus | None, failed: bool) -> None:
    if status is None:
        st.caption("Index unavailable (see the message on the right)." if failed else "Not indexed yet.")
        return
    st.markdown(f"**{status.files:,}** files · **{status.symbols:,}** symbols · **{status.chunks:,}** chunks")
    st.caption(f"Last indexed {time_ago(status.last_indexed)}")
    if not status.complete:
        st.warning("The last indexing run did not finish; re-index to complete it.")
    if status.stale:
        with st.expander(f"{status.stale} file{'s' if status.stale != 1 else ''} changed since — re-index",
                         icon=":material/warning:"):
            st.markdown("\n".join([f"- {_code(p)} (changed)" for p in status.changed[:50]]
                                  + [f"- {_code(p)} (deleted)" for p in status.deleted[:50]]))
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
        st.markdown(f"Endpoint {_code(endpoint)}  \nModel {_code(model)}")
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


def ask(question: str, retriever: Retriever, settings: Settings, number: int) -> None:
    """Answer one question: retrieval (errors shown in the page), the streamed answer, then its evidence."""
    state = st.session_state
    with st.chat_message("user"):
        st.markdown(question)
    with st.chat_message("assistant"):
        started = time.perf_counter()
        turn = {"question": question, "answer": None, "error": None, "seconds": None}
        try:
            retriever.settings = settings  # top-k and context budget come from the sidebar, per question
            answerer = Answerer(retriever, settings)
            first = not getattr(retriever.embedder, "loaded", True)
            with st.spinner("Searching the code…" + (" (the first search also loads the embedding model)" if first else "")):
                stream = answerer.stream(question, state["conversation"], no_llm=not state.get("use_llm"),
                                         top_k=settings.top_k)
            placeholder = st.empty()
            with placeholder:
                st.write_stream(iter(stream))
            turn["answer"] = stream.answer
            turn["seconds"] = time.perf_counter() - started
            placeholder.empty()
        except CodeQAError as exc:
            turn["error"] = str(exc)
        except Exception as exc:  # never a traceback in the page; the server log has it
            log.exception("answering failed")
            turn["error"] = f"Something went wrong while answering: {type(exc).__name__}: {exc}"
        state["turns"].append(turn)
        show_answer(turn, retriever, number)


def show_answer(turn: dict, retriever: Retriever, number: int) -> None:
    answer: Answer | None = turn["answer"]
    if answer is None:
        st.error(turn["error"])
        return
    if answer.error:
        st.warning(f"The LLM failed: {answer.error}" + (" The answer below comes from retrieval alone."
                                                       if answer.mode == "extractive" else " The answer was cut off."))

    views = code_views(answer, f"cq-{number}", lambda path: path_refusal(retriever.repo, path, retriever.indexed_paths),
                       retriever.redacted_lines)
    shown = [v for i, v in enumerate(views) if i < MAX_CODE_VIEWS or not v.verified]  # unverified ones always
    anchors = citation_anchors(shown)
    st.markdown(link_citations(answer.answer, answer.citations, anchors, retriever.indexed_paths))
    st.caption(answer_summary(answer, turn["seconds"]))
    if answer.citations:
        st.caption("Citations (green: verified against the indexed lines; red: not) — click one to open its code:")
        st.html(citation_chips(answer.citations, anchors))
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
                   + (": every reference site is in the panel below." if answer.route == "usage" else "."))
    if answer.route == "usage" and answer.references:
        files = len({r.path for r in answer.references})
        names = ", ".join(dict.fromkeys(s.qualified_name for s in answer.definitions)) or "the symbol"
        with st.expander(f"References to {plain(names)}: {len(answer.references)} sites in {files} files",
                         icon=":material/account_tree:"):
            st.markdown(references_markdown(answer.references))
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
