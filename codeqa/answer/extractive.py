"""Extractive answers: an answer from retrieval alone, when no LLM is configured or `--no-llm`.

Usage questions: the definition, an account of the uses (counts by area and kind, keyword arguments,
summary.py), the most informative sites shown in full, then the reference sites grouped by file: all
of them, or past a cap the most relevant files and a line saying how many more there are and how to
list them (`codeqa refs`). Relationship questions: the graph paths between the two symbols. Anything
else: the best hits with one-line explanations from symbol names, signatures and docstrings.
Every citation written here lies inside the retrieval's snippets, so all of them verify.
"""

from __future__ import annotations

import re
import shlex
from typing import Callable, Sequence

from ..query.lookup import list_sites
from ..query.retrieve import Retriever
from .summary import describe_counts, first_sentence, summarize_usage
from ..types import (Hit, Reference, Retrieval, SiteList, Snippet, Symbol, UsageSummary, one_line, span_label,
                     split_symbol_id)

EXTRACTIVE_NOTE = "Produced without an LLM (extractive answer from retrieval alone)."
FULL_LIST_HEADING = "All {count} reference sites in {files} files, by file:"
CAPPED_LIST_HEADING = ("{shown} of {count} reference sites, in {listed_files} of {files} files, by file "
                       "(package code first):")


def extractive_answer(retrieval: Retrieval, retriever: Retriever, max_items: int = 5, max_code_lines: int = 30,
                      summary: UsageSummary | None = None) -> str:
    """An answer from retrieval alone; every citation in it lies inside `retrieval.snippets`, but a usage
    answer's definitions, cited whole as the graph states them.
    `summary` is the usage account (computed here when not given)."""
    cover = _Coverage(retrieval.snippets)
    if retrieval.route == "usage":
        body = _extract_usage(retrieval, retriever, cover, summary or summarize_usage(retrieval, retriever.graph.symbols_by_id))
    elif retrieval.route == "relationship":
        body = _extract_relationship(retrieval, retriever, cover, max_items, max_code_lines)
    else:
        body = _extract_search(retrieval, retriever, cover, max_items, max_code_lines)
    return f"{EXTRACTIVE_NOTE}\n\n{body.strip()}\n"


class _Coverage:
    """Which lines of which files the snippets hold."""

    def __init__(self, snippets: Sequence[Snippet]):
        self.snippets = snippets
        self._by_path: dict[str, list[Snippet]] = {}
        for s in snippets:
            self._by_path.setdefault(s.path, []).append(s)

    def snippet_at(self, path: str, line: int) -> Snippet | None:
        return next((s for s in self._by_path.get(path, ()) if s.start_line <= line <= s.end_line), None)

    def clip(self, path: str, start: int, end: int) -> tuple[int, int] | None:
        """start..end cut to the snippet that holds `start`, or None when `start` is not covered."""
        s = self.snippet_at(path, start)
        return (start, min(end, s.end_line)) if s else None


def _describe_symbol(sym: Symbol) -> str:
    sig = " ".join(sym.signature.split()) if sym.signature else sym.qualified_name
    doc = first_sentence(sym.docstring)
    return f"{sym.kind} `{sym.qualified_name}` — `{one_line(sig, 90, drop_period=True)}`" + (f": {doc}" if doc else "")


def _trim(snippet: Snippet, start: int, end: int) -> tuple[int, int]:
    """start..end without leading and trailing blank lines (so the citation covers only what is shown)."""
    lines = snippet.text.splitlines()
    while start < end and start - snippet.start_line < len(lines) and not lines[start - snippet.start_line].strip():
        start += 1
    while end > start and end - snippet.start_line < len(lines) and not lines[end - snippet.start_line].strip():
        end -= 1
    return start, end


def _code_block(snippet: Snippet, start: int, end: int) -> str:
    lines = snippet.text.splitlines()[start - snippet.start_line:end - snippet.start_line + 1]
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", "\n".join(lines))), default=0) + 1)
    return f"{fence}\n" + "\n".join(lines) + f"\n{fence}"


def _extract_usage(retrieval: Retrieval, retriever: Retriever, cover: _Coverage, summary: UsageSummary | None) -> str:
    """The definition, the account of the uses (summary.py), the best sites in full, then every site."""
    out: list[str] = []
    for sym in retrieval.definitions:  # cited whole, as the graph states it (verified as a fact: answerer.py)
        out.append(f"Definition: {_describe_symbol(sym)} ({span_label(sym.path, sym.start_line, sym.end_line)})")
    names = ", ".join(f"`{n}`" for n in dict.fromkeys(s.qualified_name for s in retrieval.definitions))
    if retrieval.ambiguous:
        name = retrieval.definitions[0].name
        readings = list(dict.fromkeys(f"`{s.qualified_name}` in `{s.path}`" for s in retrieval.definitions))
        out.append(f"\n`{name}` is ambiguous: it names {len(readings)} definitions ({', '.join(readings)}), and the "
                   f"uses below are those of all of them. Ask about {_how_to_name(retrieval.definitions[0])} "
                   f"or {_how_to_name(retrieval.ambiguous[0])} for one.")
    elif retrieval.passed_over and retrieval.definitions:
        chosen = retrieval.definitions[0]
        aside = retrieval.passed_over[:3]
        also = ", ".join(f"`{s.qualified_name}` in `{s.path}`" for s in aside)
        out.append(f"\n`{chosen.name}` also names {also}{' and more' if len(retrieval.passed_over) > 3 else ''}; the uses "
                   f"below are those of `{chosen.qualified_name}` in `{chosen.path}`. Ask about "
                   f"{_how_to_name(aside[0])} for {'that one' if len(aside) == 1 else 'another'}.")
    refs = retrieval.references
    if not refs:
        out.append(f"\nNo reference to {names} was found in the index: it may be unused, or used only in ways the "
                   "reference graph does not resolve (dynamic calls, strings, other languages).")
        return "\n".join(out)
    if summary is not None:
        out.append("\n" + " ".join(describe_counts(summary)))
        if summary.sites:
            out.append("\nMost informative sites" + (" (package code first):" if any(a == "package" for a, _ in summary.by_area)
                                                      else ":"))
        for number, site in enumerate(summary.sites, 1):
            span = cover.clip(site.path, site.start_line, site.end_line)
            snippet = cover.snippet_at(site.path, site.start_line)
            where = f" in `{site.enclosing}`" if site.enclosing else ""
            if span and snippet:
                span = _trim(snippet, *span)
                out.append(f"\n{number}. {span_label(site.path, *span)} — {site.kind}{where}\n{_code_block(snippet, *span)}")
            else:
                code = one_line(site.code, 100, drop_period=True)
                out.append(f"\n{number}. `{site.path}` line {site.line} — {site.kind}{where}: `{code}`")
    listed = retrieval.listed or list_sites(refs)
    by_id = retriever.graph.symbols_by_id(r.enclosing_symbol_id for r in listed.references if r.enclosing_symbol_id)
    if listed.complete:
        out.append("\n" + FULL_LIST_HEADING.format(count=listed.total, files=listed.files))
    else:
        out.append("\n" + CAPPED_LIST_HEADING.format(shown=listed.shown, count=listed.total, listed_files=len(listed.groups),
                                                     files=listed.files))
    uncited = 0
    for group in listed.groups:
        count = f"{len(group.sites)} of {group.total}" if len(group.sites) < group.total else str(group.total)
        out.append(f"\n`{group.path}` ({count})")  # backticks: a path like pkg/__init__.py is not markdown
        for r in group.sites:
            enclosing = by_id.get(r.enclosing_symbol_id) if r.enclosing_symbol_id else None
            where = f" in `{enclosing.qualified_name}`" if enclosing else ""
            code = one_line(r.line_text.strip(), 100, drop_period=True)
            if cover.snippet_at(r.path, r.line):
                out.append(f"- {span_label(r.path, r.line, r.line)} {r.kind}{where}: `{code}`")
            else:
                uncited += 1
                out.append(f"- line {r.line} {r.kind}{where}: `{code}`")
    if uncited:
        out.append(f"\n({uncited} site(s) did not fit into the context budget; they are listed without citations.)")
    if not listed.complete:
        out.append("\n" + _not_listed(listed, retrieval.definitions, retriever))
    return "\n".join(out)


def _not_listed(listed: SiteList, definitions: Sequence[Symbol], retriever: Retriever) -> str:
    """The line under a capped list: what it leaves out, and the command that lists every site."""
    spec = refs_spec(definitions)
    command = ["codeqa", "refs", spec, "--repo", str(retriever.repo)]
    if retriever.settings.index_dir:
        command += ["--index-dir", str(retriever.settings.index_dir)]
    # a name in several files: refs takes every definition of that name, maybe more than were meant here
    which = "" if ":" in spec else f"; it takes every definition named `{spec}`, and each site's `target_ids` says which"
    return f"Not listed: {unlisted(listed)}. Every site: `{shlex.join([*command, '--json'])}` (MCP: `find_references`{which})."


def unlisted(listed: SiteList) -> str:
    """What a capped list leaves out, in words: "56136 more sites, in 2372 more files and in 20 of the files above"."""
    more_files = listed.files - len(listed.groups)
    cut = sum(len(g.sites) < g.total for g in listed.groups)
    where = [f"{more_files} more file{'s' if more_files != 1 else ''}"] if more_files else []
    if cut:
        where.append(f"{'in ' if where else ''}{cut} of the files above")
    more = listed.total - listed.shown
    return f"{more} more site{'s' if more != 1 else ''}, in {' and '.join(where)}"


def refs_spec(definitions: Sequence[Symbol]) -> str:
    """What to give `codeqa refs` for the sites of these definitions: `path:Qualified.name` when they
    are one (or overloads in one file), the qualified name when they share it, else the name (refs
    then finds every definition of it)."""
    qualified = {s.qualified_name for s in definitions}
    if len(qualified) == 1 and len({s.path for s in definitions}) == 1:
        return f"{definitions[0].path}:{definitions[0].qualified_name}"
    return qualified.pop() if len(qualified) == 1 else definitions[0].name


def _how_to_name(sym: Symbol) -> str:
    """How to ask about one reading of an ambiguous name: "the invoke method of Context", "`pkg.utils.echo`"."""
    parent = sym.qualified_name.rpartition(".")[0]
    if parent and sym.parent_id:
        return f"“the {sym.name} {sym.kind} of {parent.rpartition('.')[2]}”"
    return f"“{sym.name} in {sym.path}”"


def split_full_list(answer: str) -> tuple[str, str]:
    """(the answer up to the list of reference sites, the list) — the UI folds the list."""
    m = re.search(r"^(?:All \d+|\d+ of \d+) reference sites?,? in (?:\d+ of )?\d+ files?, by file", answer, re.MULTILINE)
    return (answer, "") if m is None else (answer[:m.start()].rstrip() + "\n", answer[m.start():])


def _extract_relationship(retrieval: Retrieval, retriever: Retriever, cover: _Coverage, max_items: int,
                          max_code_lines: int) -> str:
    out: list[str] = []
    for sym in retrieval.definitions:
        span = cover.clip(sym.path, sym.start_line, sym.end_line)
        out.append(f"- {_describe_symbol(sym)}" + (f" ({span_label(sym.path, *span)})" if span else ""))
    if not retrieval.paths:
        out.append("\nNo path of at most 4 hops connects them in the reference graph. The closest code by search:")
        out.append(_extract_search(retrieval, retriever, cover, max_items, max_code_lines))
        return "\n".join(out)
    out.append("\nConnections in the reference graph:")

    def cite(ref: Reference) -> str:
        return span_label(ref.path, ref.line, ref.line) if cover.snippet_at(ref.path, ref.line) else f"`{ref.path}` line {ref.line}"

    for path in retrieval.paths:
        out.append(f"- {describe_path(path, retrieval.edges, cite)}")
    return "\n".join(out)


def _extract_search(retrieval: Retrieval, retriever: Retriever, cover: _Coverage, max_items: int,
                    max_code_lines: int) -> str:
    if not retrieval.snippets:
        return "Nothing in the index matches this question."
    out = ["The most relevant code, best first:"]
    seen: set[tuple[str, int]] = set()
    zoomed: list[Hit] = []  # methods shown for their class (query/lead.py): the class itself is not listed again
    best = _best_hits(retrieval, cover)
    for i, h in enumerate(best):
        placed = _unseen_span(h, cover, seen)
        if placed is None or any(z.path == h.path and h.start_line <= z.start_line <= h.end_line for z in zoomed):
            continue
        if "zoom" in h.reasons:
            zoomed.append(h)
        snippet, span = placed
        seen.add((h.path, span[0]))
        start, end = _trim(snippet, span[0], min(span[1], span[0] + max_code_lines - 1))
        about = f"documentation, section “{h.title}”" if h.kind == "section" and h.symbol else \
            _explain_span(retriever, h.path, start, end)
        if "delegate" in h.reasons and i + 1 < len(best) and best[i + 1].symbol:  # lead.follow_delegates: its caller follows
            about += f"; `{best[i + 1].symbol}` hands it the work"
        out.append(f"\n{len(seen)}. {span_label(h.path, start, end)} — {about}")
        out.append(_code_block(snippet, start, end))
        if len(seen) >= max_items:
            break
    out += _work_lines(retrieval, retriever, cover, seen)
    return "\n".join(out)


def _work_lines(retrieval: Retrieval, retriever: Retriever, cover: _Coverage, seen: set[tuple[str, int]],
                limit: int = 3) -> list[str]:
    """What the best hits hand the work to (the searcher's "work" evidence: definitions they call that share
    words with the question), one cited line each, when not shown above."""
    lines: list[str] = []
    for h in retrieval.hits:
        placed = _unseen_span(h, cover, seen) if "work" in h.reasons and len(lines) < limit else None
        if placed is None:
            continue
        snippet, span = placed
        seen.add((h.path, span[0]))
        start, end = _trim(snippet, *span)
        lines.append(f"- {span_label(h.path, start, end)} — {_explain_span(retriever, h.path, start, end)}")
    return ["\nThe code above hands the work to:", *lines] if lines else []


def _unseen_span(h: Hit, cover: _Coverage, seen: set[tuple[str, int]]) -> tuple[Snippet, tuple[int, int]] | None:
    """The snippet holding a hit's first line and the hit's span cut to it, unless the snippets do not hold
    that line or a span starting there was shown already."""
    span = cover.clip(h.path, h.start_line, h.end_line)
    snippet = cover.snippet_at(h.path, h.start_line)
    return None if not span or not snippet or (h.path, span[0]) in seen else (snippet, span)


def _best_hits(retrieval: Retrieval, cover: _Coverage) -> list[Hit]:
    """Hits in rank order; when there are none (graph routes), the snippets themselves."""
    hits = [h for h in retrieval.hits if h.reasons != ("reference",)]
    if hits:
        return hits
    return [Hit(s.path, s.start_line, s.end_line, s.score, "", None, s.text) for s in retrieval.snippets]


def _explain_span(retriever: Retriever, path: str, start: int, end: int) -> str:
    """One line from the symbols the span defines (name, signature, docstring) or the one that encloses it."""
    symbols = retriever.graph.symbols_in_file(path)
    defined = sorted((s for s in symbols if start <= s.start_line <= end), key=lambda s: (s.start_line, -s.end_line))
    top = [s for s in defined if not any(o is not s and o.start_line <= s.start_line and s.end_line <= o.end_line
                                         and o in defined for o in defined)]
    if top:
        first = _describe_symbol(top[0])
        more = [s.name for s in defined if s is not top[0]][:4]
        return first + (f" (also {', '.join(f'`{n}`' for n in more)})" if more else "")
    enclosing = [s for s in symbols if s.start_line < start <= s.end_line]
    if enclosing:
        inner = max(enclosing, key=lambda s: s.start_line)
        return f"part of {_describe_symbol(inner)}"
    if path.endswith((".md", ".rst", ".txt", ".adoc")):
        heading = _heading_above(retriever.source.lines(path) or [], start, end)
        return f"documentation, section “{heading}”" if heading else "documentation"
    return "module-level code"


def _heading_above(lines: Sequence[str], start: int, end: int) -> str:
    """The heading that names the span: one in its first lines, else the nearest above it
    (markdown `# Title` or a reStructuredText underlined title)."""
    def heading(number: int) -> str:
        line = lines[number - 1].strip()
        if line.startswith("#") and line.lstrip("#").startswith(" "):
            return one_line(line.lstrip("#").strip(), 80, drop_period=True)
        underline = lines[number].strip() if number < len(lines) else ""
        if line and len(underline) >= len(line) >= 3 and len(set(underline)) == 1 and underline[0] in "=-~^*+#":
            return one_line(line, 80, drop_period=True)
        return ""

    for number in [*range(start, min(start + 3, end, len(lines)) + 1), *range(min(start - 1, len(lines)), 0, -1)]:
        found = heading(number)
        if found:
            return found
    return ""


def describe_path(path: Sequence[str], edges: Sequence[tuple[str, str, Reference | None]],
                  cite: Callable[[Reference], str] | None = None) -> str:
    """`a —[call at p:L3]→ b ←[instantiation at q:L7]— c —[contains]— c.m`: an arrow points from the
    code that refers to the symbol it refers to. `cite` renders a reference's place (default `path:Lline`)."""
    steps = {(a, b): r for a, b, r in edges}
    out = _symbol_name(path[0])
    for a, b in zip(path, path[1:]):
        ref = steps.get((a, b))
        if ref is None:
            how = "contains" if _symbol_name(b).startswith(_symbol_name(a) + ".") else "member of"
            out += f" —[{how}]— {_symbol_name(b)}"
            continue
        place = f"{ref.kind} at " + (cite(ref) if cite else f"{ref.path}:L{ref.line}")
        out += f" ←[{place}]— {_symbol_name(b)}" if a in ref.target_ids else f" —[{place}]→ {_symbol_name(b)}"
    return out


def _symbol_name(symbol_id: str) -> str:
    """The qualified name inside a symbol id (`path#Qualified.name@line`)."""
    return split_symbol_id(symbol_id)[1]


__all__ = ["extractive_answer", "describe_path", "span_label", "split_full_list", "refs_spec", "unlisted", "EXTRACTIVE_NOTE",
           "FULL_LIST_HEADING", "CAPPED_LIST_HEADING"]
