"""What the chat page shows, as plain Python (no Streamlit): tested directly by tests/test_ui.py.

    code_views          cited snippets of an answer, cited lines marked; citation_anchors links each citation
                        to its own lines (`cq-<turn>-<n>-L<start>-L<end>`: app.py's script opens, scrolls, lights them)
    citation_chips      the chips under an answer (HTML); link_citations turns citations in the text into links
    highlighted_html    code highlighted with its real line numbers (pygments, inline styles)
    references_markdown the listed reference sites grouped by file; evidence_rows "why these snippets"
    plain, answer_summary, llm_description, time_ago, example_questions   small texts of the page
    early_heading, early_text, EARLY_FOLDED   the answer found in the code, shown while the model reads

`streamlit run ui/app.py` puts this folder on sys.path, so app.py imports this module as `answer_view`
(a name that shadows nothing).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable, Sequence
from urllib.parse import urlsplit, urlunsplit

from codeqa.answer import parse_citations
from codeqa.answer.citation_report import citation_status, describe_citations
from codeqa.config import Settings
from codeqa.answer.extractive import EXTRACTIVE_NOTE, span_label, unlisted
from codeqa.answer.markdown import code_regions
from codeqa.query.retrieve import Retriever
from codeqa.types import Answer, Citation, SiteList, Snippet

MAX_CHIPS = 24
CONTEXT_LINES = 2  # lines shown around a citation that no snippet holds
REASONS = {  # Hit/Snippet reasons from retrieve.py, in words
    "definition": "definition of the named symbol",
    "symbol": "symbol match",
    "dense": "dense (similar meaning)",
    "hybrid": "dense + keyword (BM25)",
    "keyword": "keyword (BM25)",
    "ref-hop": "reference hop from a top hit",
    "member": "method of a class among the top hits",
    "reference": "reference line",
    "header": "enclosing class/function header",
    "file named": "file named in the question",
}


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
        """The expander's label: what it cites, spelt as the chips and links that open it spell it (the
        lines shown around them are in its caption)."""
        spans = dict.fromkeys(span_label("", c.start_line, c.end_line)[1:] for c in self.citations)
        return f"{self.path}:{', '.join(spans)}" if spans else span_label(self.path, self.start_line, self.end_line)


def code_views(answer: Answer, anchor_prefix: str, refusal: Callable[[str], str],
               read_lines: Callable[[str], list[str] | None]) -> list[CodeView]:
    """The cited snippets of an answer in citation order, each with its cited lines marked.

    A citation belongs to the first snippet of its file that overlaps it; one that no snippet holds
    (an unverified citation) gets a view of its own with the file's lines from `read_lines(path)`. A view
    shows every line it cites: where a citation runs past its snippet (a definition is cited whole, as the
    graph states it, while its snippet was cut to the budget), the view reads the file's lines.
    No code is shown for a path that `refusal(path)` gives a reason for (see access.py's `path_refusal`).
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
        if snippet is not None and marked[0] >= start and marked[-1] <= end:
            views.append(CodeView(anchor, path, start, end, snippet.text, marked, tuple(cited),
                                  explain_reasons(snippet.reason)))
            continue
        if snippet is not None:  # the cited lines, with the snippet's own around them
            lines = read_lines(path)
            if lines is None:
                views.append(CodeView(anchor, path, start, end, snippet.text, marked, tuple(cited),
                                      explain_reasons(snippet.reason)))
                continue
            first, last = min(start, marked[0]), min(len(lines), max(end, marked[-1]))
            views.append(CodeView(anchor, path, first, last, "".join(lines[first - 1:last]), marked, tuple(cited),
                                  explain_reasons(snippet.reason)))
            continue
        first, last = max(1, start - CONTEXT_LINES), min(len(lines), end + CONTEXT_LINES)
        text = "".join(lines[first - 1:last]) if first <= last else ""
        note = "" if text else f"Not shown: {path} has only {len(lines)} lines."
        views.append(CodeView(anchor, path, first, max(first, last), text, marked, tuple(cited), note))
    return views


def citation_anchors(views: Iterable[CodeView]) -> dict[tuple[str, int, int], str]:
    """Each citation's link target: its view's anchor and its own lines, so a click lands on them."""
    return {(c.path, c.start_line, c.end_line): f"{v.anchor}-L{c.start_line}-L{c.end_line}"
            for v in views for c in v.citations}


CHIP_CLASSES = {"supported": "ok", "unsupported": "warn", "unchecked": "unchecked", "unverified": "bad", "rote": "bad",
                "attributed": "attr"}
CHIP_ORDER = {"unverified": 0, "rote": 0, "unsupported": 1, "supported": 2, "unchecked": 2, "attributed": 3}


def citation_chips(citations: Sequence[Citation], anchors: dict[tuple[str, int, int], str],
                   limit: int = MAX_CHIPS, mode: str = "llm") -> str:
    """HTML: one link-like chip per citation, marked as every shell marks it (citation_report.citation_status:
    green ✓ verified and its lines mention what its sentence names, amber ! verified but its lines do not mention what its sentence names,
    grey · verified with nothing to check, red ✗ unverified or written by rote, dashed ~ attributed), what was
    checked as its tooltip; unverified ones first and attributed ones last; past `limit`, one grey chip
    counts the rest."""
    chips = []
    statuses = {id(c): citation_status(c, mode) for c in citations}
    # stable: the answer's order within each group
    ordered = sorted(citations, key=lambda c: CHIP_ORDER[statuses[id(c)].kind])
    for c in ordered[:limit]:
        status = statuses[id(c)]
        label = html.escape(c.path if c.start_line == 0 else span_label(c.path, c.start_line, c.end_line))
        state = CHIP_CLASSES[status.kind]
        title = html.escape(status.words, quote=True)
        mark = status.mark + (" ⟳" if c.stale else "")
        anchor = anchors.get((c.path, c.start_line, c.end_line))
        href = f' href="#{anchor}"' if anchor else ""
        chips.append(f'<a class="cq-chip cq-{state}"{href} title="{title}">{mark} {label}</a>')
    if len(ordered) > limit:
        chips.append(f'<span class="cq-chip cq-more">+{len(ordered) - limit} more</span>')
    return '<div class="cq-chips">' + "".join(chips) + "</div>"


def link_citations(text: str, citations: Sequence[Citation], anchors: dict[tuple[str, int, int], str],
                   known_paths: Collection[str], whole_answer: str | None = None) -> str:
    """The answer's markdown (or a part of it: `whole_answer` is then the text the citations were read
    from) with each citation as it was written turned into a link to its code view; an unverified one
    is followed by a red "unverified" mark."""
    written = parse_citations(whole_answer if whole_answer is not None else text, known_paths)
    by_span = {(c.path, c.start_line, c.end_line): c for c in citations if not c.attributed}
    target = {}
    for span in written:  # a path written as a suffix (`encoder.py:L3`) was completed by verification
        c = by_span.get((span.path, span.start_line, span.end_line)) or next(
            (c for (path, start, end), c in by_span.items()
             if (start, end) == (span.start_line, span.end_line) and path.endswith("/" + span.path)), None)
        if c is not None:
            target[span.text] = c
    if not target:
        return text
    alternatives = "|".join(re.escape(t) for t in sorted(target, key=len, reverse=True))  # longest first
    pattern = re.compile(r"(`)?(?<![\w/.@+-])(" + alternatives + r")(?!\d)(?(1)`)")

    def link(m: re.Match) -> str:
        c = target[m.group(2)]
        shown = f"`{m.group(2)}`"
        anchor = anchors.get((c.path, c.start_line, c.end_line))
        linked = f"[{shown}](#{anchor})" if anchor else shown
        if anchor and m.start() and m.string[m.start() - 1] == "!":
            linked = " " + linked  # `!` before the link would make it an image of the page
        return linked if c.verified else f"{linked} :red[**✗ unverified**]"

    # code blocks stay as they are, wherever the Markdown parser finds them
    out, pos = [], 0
    for code in code_regions(text):
        if code.kind != "inline":
            out += [pattern.sub(link, text[pos:code.start]), text[code.start:code.end]]
            pos = code.end
    return "".join(out) + pattern.sub(link, text[pos:])


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


def references_markdown(listed: SiteList, name: str = "NAME") -> str:
    """The listed reference sites grouped by file: `**path** — n sites`, then one line each with line, kind
    and code; under a capped list, how many are not listed (`name`: what to give `codeqa refs` for them)."""
    parts = []
    for group in listed.groups:
        count = f"{group.total} site{'s' if group.total != 1 else ''}"
        if len(group.sites) < group.total:
            count += f", {len(group.sites)} listed"
        parts.append(f"**{code_span(group.path)}** — {count}")
        lines = []
        for r in group.sites:
            code = r.line_text.strip()
            lines.append(f"- L{r.line} · {r.kind}" + (f" · {code_span(code)}" if code else ""))
        parts.append("\n".join(lines))
    if not listed.complete:
        parts.append(f"Not listed: {unlisted(listed)}; {code_span(f'codeqa refs {name} --json')} lists every site.")
    return "\n\n".join(parts)


def sites_label(listed: SiteList) -> str:
    """The label of the folded list of sites: "Show all 5 reference sites", "Show 300 of 56436 reference sites"."""
    return (f"Show all {listed.total} reference sites" if listed.complete
            else f"Show {listed.shown} of {listed.total} reference sites")


def plain(text: str) -> str:
    """`text` shown literally where Streamlit reads markdown (labels, captions): `pkg/__init__.py` is not bold."""
    return re.sub(r"([\\`*_\[\]<>~$|#])", r"\\\1", text)


def code_span(text: str) -> str:
    """`text` as an inline code span that survives backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def highlighted_html(text: str, path: str, start_line: int, marked: Iterable[int] = (), anchor: str = "") -> str:
    """The code syntax-highlighted (pygments, inline styles), numbered from `start_line`, `marked` lines lit;
    with an `anchor`, line N is the element `<anchor>-line-N` (where a citation's link scrolls to)."""
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
                              linespans=f"{anchor}-line" if anchor else "",
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
    return endpoint, settings.model or "no model set (CODEQA_MODEL)"


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
    """Usage questions about the most referenced classes and functions of the repository (the index
    run records their names, so the page reads no graph to ask them)."""
    names = [n for n in retriever.store.read_meta().get("most_used") or [] if isinstance(n, str)][:count]
    return [f"How is {name} used?" for name in names]


EARLY_FOLDED = "Found in the code, before the model answered (not the model's answer)"


def early_heading(tokens: int | None, expected: str) -> str:
    """What the answer found in the code is, above it: while the model reads (`tokens` of context, `expected` the
    wait, "" when unknown), or after the run was stopped (`tokens` None)."""
    if tokens is None:
        return "Found in the code (not the model's answer: it was stopped before it finished)"
    wait = f", {expected} in all" if expected else ""
    return f"Found in the code (not the model's answer: the model is reading {tokens:,} tokens of context{wait})"


def early_text(answer: Answer) -> str:
    """The answer found in the code without its first line, which says what the heading above it says."""
    return answer.answer.removeprefix(EXTRACTIVE_NOTE).lstrip("\n")


def answer_summary(answer: Answer, seconds: float | None) -> str:
    """One caption line under an answer: mode, kind of question, citations, time."""
    if answer.mode == "llm":
        mode = f"answer by {answer.model}" + (" (cut off: the LLM failed)" if answer.error else "")
    else:
        mode = "extractive answer (the LLM failed)" if answer.error else "extractive answer (no LLM)"
    route = {"usage": "usage question: definition + every reference site", "relationship": "relationship question: graph paths",
             "search": "search: hybrid dense + keyword"}.get(answer.route, answer.route)
    cites = describe_citations(answer).line  # the CLI's and MCP's words: what was verified, what supported
    if answer.prompt is not None:
        cites += f" · read {answer.prompt.tokens:,} of {answer.prompt.window:,} tokens"
    took = f" · {seconds:.1f} s" if seconds is not None else ""
    return f"{mode} · {route} · {cites}{took}"
