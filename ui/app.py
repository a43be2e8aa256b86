"""codeqa's Streamlit chat: ask about an indexed repository, get a streamed answer whose citations open the code.

Started by `codeqa ui [--repo PATH] [--index-dir DIR] [--port N]` (or `make run REPO=PATH`), which serves this
file through serve.py. The page only calls the library, and is split by concern:

    serve.py        what `streamlit run` serves: this page behind hosts.py's check (403 for a request whose Host
                    or Origin is not the page's own: the DNS-rebinding case)
    app.py          the page: its token gate, CSS and script, and the layout (main)
    resources.py    what is cached across reruns and sessions: the embedding model, each repository's open index
                    and status, the --watch watchers (a few at once)
    sidebar.py      repository path, index status, Index / re-index (index_repo with live progress), the LLM
                    in use, top-k and context budget
    chat.py         one Conversation per browser session; Answerer.stream -> the answer as it is written; under
                    each answer its citations, the cited code, every reference site of a usage question, and
                    "why these snippets"
    answer_view.py  what an answer shows, as plain functions (tested without Streamlit)
    access.py       what the page may show: only indexed files inside the repository

The page imports its modules as the package the install gives this folder, `codeqa.ui` (setup.py): whether
the folder is on sys.path differs between `streamlit run` and streamlit's AppTest across versions.
"""

from __future__ import annotations

import hmac

import streamlit as st

from codeqa.ui.answer_view import plain
from codeqa.ui.chat import chat
from codeqa.answer import Conversation
from codeqa.config import Settings
from codeqa.errors import CodeQAError
from codeqa.query.shared_reader import IndexReopenedError
from codeqa.ui.sidebar import sidebar_repository, sidebar_settings

CSS = """<style>
.cq-chips { display: flex; flex-wrap: wrap; gap: 0.35rem; margin: 0.25rem 0 0.5rem 0; }
.cq-chip { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.8rem; padding: 0.1rem 0.55rem;
  border-radius: 1rem; border: 1px solid; text-decoration: none !important; white-space: nowrap; }
.cq-chip.cq-ok { color: #11643a !important; background: #e7f6ec; border-color: #9fd8b4; }
.cq-chip.cq-bad { color: #9b1c1c !important; background: #fdecec; border-color: #f2a7a7; text-decoration: line-through !important; }
.cq-chip.cq-attr { color: #3d5c48 !important; background: #f6faf7; border-color: #9fd8b4; border-style: dashed; }
.cq-chip.cq-warn { color: #7a4b00 !important; background: #fff4de; border-color: #f0c36d; }
.cq-chip.cq-unchecked { color: #4a4a4a !important; background: #f3f3f3; border-color: #cfcfcf; }
.cq-chip.cq-more { color: #555; background: #f0f0f0; border-color: #d5d5d5; }
.cq-chip:hover { filter: brightness(0.95); }
.cq-code .cq-focus, .cq-code .cq-focus span { background-color: #ffd966 !important; }
.cq-code { max-height: 28rem; overflow: auto; border: 1px solid #e6e6e6; border-radius: 0.4rem; background: #f8f8f8; }
</style>"""
# A citation (chip or link in the answer) opens the expander holding its code, scrolls to its own lines and
# lights them. A link is "#cq-<turn>-<n>-L<start>-L<end>"; expanders carry the key "cq-<turn>-<n>", which
# Streamlit renders as the class "st-key-cq-<turn>-<n>", and line N of their code is "cq-<turn>-<n>-line-N"
# (answer_view.highlighted_html). An expander draws its code once open: the lines are waited for.
OPEN_CITATION_JS = """<script>
(function () {
  if (document.__codeqaCitations) return;
  document.__codeqaCitations = true;
  function land(view, start, end, box, tries) {
    const lines = [];
    for (let n = start; start && n <= end; n++) {
      const line = document.getElementById(view + "-line-" + n);
      if (line) lines.push(line);
    }
    if (!lines.length && start && tries > 0) {
      setTimeout(function () { land(view, start, end, box, tries - 1); }, 100);
      return;
    }
    document.querySelectorAll(".cq-focus").forEach(function (e) { e.classList.remove("cq-focus"); });
    lines.forEach(function (e) { e.classList.add("cq-focus"); });
    if (!lines.length) { box.scrollIntoView({block: "start"}); return; }
    show(lines);
    // an expander that has just opened is still growing (and a busy browser lays it out late): look again
    // for two seconds, and scroll again while the first line is out of view
    let again = 10;
    (function settle() {
      setTimeout(function () {
        if (!inView(lines[0])) show(lines);
        if (--again > 0) settle();
      }, 200);
    })();
  }
  // two scrolls, one at a time (smooth nested ones stop short): the lines to the middle of their code view
  // (their start to its top when they do not fit), then that view to the middle of the page
  function show(lines) {
    const code = lines[0].closest(".cq-code");
    const top = lines[0].getBoundingClientRect().top, height = lines[lines.length - 1].getBoundingClientRect().bottom - top;
    code.scrollTop += top - code.getBoundingClientRect().top - Math.max(0, (code.clientHeight - height) / 2);
    code.scrollIntoView({block: "center"});
  }
  function inView(line) {
    const r = line.getBoundingClientRect(), code = line.closest(".cq-code").getBoundingClientRect();
    return r.top >= Math.max(0, code.top) && r.bottom <= Math.min(window.innerHeight, code.bottom);
  }
  document.addEventListener("click", function (event) {
    const link = event.target.closest && event.target.closest('a[href^="#cq-"]');
    if (!link) return;
    const m = link.getAttribute("href").match(/^#(cq-\\d+-\\d+)(?:-L(\\d+)-L(\\d+))?$/);
    const box = m && document.querySelector(".st-key-" + m[1]);
    if (!box) return;
    event.preventDefault();
    event.stopPropagation();
    const details = box.querySelector("details");
    if (details && !details.open) details.querySelector("summary").click();
    land(m[1], Number(m[2] || 0), Number(m[3] || 0), box, 30);
  }, true);
})();
</script>"""


def main() -> None:
    st.set_page_config(page_title="codeqa — ask your code", page_icon=":material/manage_search:", layout="wide")
    st.html(CSS)
    try:
        base = Settings.load()
    except CodeQAError as exc:  # names a setting and its value, never a secret (those are not converted)
        st.error(str(exc))
        st.stop()
    token = base.ui_token
    if token and not hmac.compare_digest(str(st.query_params.get("token", "")).encode(), token.encode()):
        st.error("This codeqa page needs its token: open the address `codeqa ui` printed (…/?token=…).")
        st.stop()
    st.html(OPEN_CITATION_JS, unsafe_allow_javascript=True)
    state = st.session_state
    state.setdefault("turns", [])
    state.setdefault("conversation", Conversation())
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
        waiting = ("Fix what the message above names first" if level == "fix" else "Index the repository first (sidebar)")
        st.chat_input(waiting if repo else "Choose a repository first (sidebar)", disabled=True)
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


if __name__ == "__main__":
    main()
