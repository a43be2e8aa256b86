"""The account of a usage answer, from retrieval alone: what a reader wants before the full list.

    definition (signature, first docstring sentence)
    -> counts by area (package / tests / docs / examples / stubs) and by kind of use (called,
       instantiated, subclassed, imported, ...), keyword arguments seen at call sites
    -> the three to five most informative sites, package code first
    -> the other definitions the name could have meant, when it stayed ambiguous

The extractive answer renders it first (then the list of sites), `ask --json` carries it as
`summary`, and the UI shows it above the folded list. It counts every site from fields the store
returns anyway (path, kind, line text); symbols are looked up for the sites shown only.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Iterable, Mapping

from ..roles import path_role, top_folder
from ..types import Hit, Reference, Retrieval, Symbol, UsageSite, UsageSummary

AREAS = {"code": "package", "test": "tests", "docs": "docs", "example": "examples", "stub": "stubs"}
KIND_WORDS = {"call": "called", "instantiation": "instantiated", "inheritance": "subclassed", "import": "imported",
              "type": "used as a type", "attribute": "read as an attribute"}
SITES_SHOWN = 5
_KEYWORD = re.compile(r"[(,]\s*([A-Za-z_]\w*)\s*=(?!=)")


def summarize_usage(retrieval: Retrieval, symbols_by_id: Callable[[Iterable[str]], Mapping[str, Symbol]]
                    ) -> UsageSummary | None:
    """The summary of a usage retrieval, or None for other routes or when nothing was named."""
    if retrieval.route != "usage" or not retrieval.definitions:
        return None
    symbol = retrieval.definitions[0]
    refs = retrieval.references
    areas: Counter[str] = Counter()
    for path, n in Counter(r.path for r in refs).items():  # a file's role once per file, not per site
        areas[AREAS[path_role(path)]] += n
    kinds = Counter(r.kind for r in refs)
    keywords = Counter(k for r in refs if r.kind in ("call", "instantiation") for k in call_keywords(r))
    shown = site_hits(retrieval)
    by_line = {(r.path, r.line): r for r in refs}
    home = top_folder(symbol.path)
    at_home = [h for h in shown if path_role(h.path) == "code" and top_folder(h.path) == home]
    if len(at_home) < 3:  # too few in the definition's own package: package code elsewhere, then the rest
        at_home = sorted(shown, key=lambda h: (path_role(h.path) != "code", top_folder(h.path) != home))
    picked = [(h, next((by_line[(h.path, line)] for line in range(h.start_line, h.end_line + 1)
                        if (h.path, line) in by_line), None)) for h in at_home[:SITES_SHOWN]]
    # the enclosing symbols of the sites shown only: a common name has tens of thousands of sites
    enclosing = symbols_by_id(r.enclosing_symbol_id for _, r in picked if r is not None and r.enclosing_symbol_id)
    sites = []
    for h, ref in picked:
        if ref is None:
            continue
        owner = enclosing.get(ref.enclosing_symbol_id) if ref.enclosing_symbol_id else None
        sites.append(UsageSite(h.path, ref.line, h.start_line, h.end_line, ref.kind,
                               owner.qualified_name if owner else None, " ".join(ref.line_text.split())))
    order = list(AREAS.values())
    return UsageSummary(
        symbol=symbol, doc=first_sentence(symbol.docstring), total=len(refs), files=len({r.path for r in refs}),
        by_area=tuple(sorted(areas.items(), key=lambda kv: order.index(kv[0]))),
        by_kind=tuple(kinds.most_common()), keywords=tuple(keywords.most_common(6)), sites=tuple(sites),
        others=retrieval.ambiguous)


def call_keywords(ref: Reference) -> list[str]:
    """Keyword argument names at a call site, read off its line (`echo(msg, err=True)` -> ["err"])."""
    text = ref.line_text
    at = text.find("(", max(0, ref.column))
    if at < 0:
        return []
    depth, end = 0, len(text)
    for i in range(at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            end = i
            break
    inner = text[at:end]
    flat = re.sub(r"\([^()]*\)", "", inner[1:])  # keywords of nested calls are not this call's
    return list(dict.fromkeys(_KEYWORD.findall("(" + flat)))


def first_sentence(doc: str, limit: int = 140) -> str:
    """The docstring's first sentence, with reST roles (:term:`x <y>`) reduced to their text."""
    text = " ".join(doc.strip().split("\n\n", 1)[0].split())
    text = re.sub(r":[\w:.-]+:`[~.]?([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    text = (m.group(1) if m else text).rstrip(".")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def describe_counts(summary: UsageSummary) -> list[str]:
    """The summary's counts as sentences: "Used 439 times in 296 files: 12 in package code, ..."."""
    where = ", ".join(f"{n} in {'package code' if area == 'package' else area}" for area, n in summary.by_area)
    lines = [f"Used {summary.total} time{'s' if summary.total != 1 else ''} in {summary.files} "
             f"file{'s' if summary.files != 1 else ''}" + (f": {where}." if where else ".")]
    how = ", ".join(f"{KIND_WORDS.get(kind, kind)} {n}×" for kind, n in summary.by_kind)
    if how:
        lines.append(f"How: {how}.")
    if summary.keywords:
        lines.append("Keyword arguments at call sites: " + ", ".join(f"`{k}=` ({n})" for k, n in summary.keywords) + ".")
    return lines


def summary_to_json(summary: UsageSummary | None) -> dict | None:
    """The `summary` field of `ask --json`."""
    if summary is None:
        return None
    s = summary.symbol
    return {
        "symbol": s.qualified_name, "kind": s.kind, "path": s.path, "start_line": s.start_line, "end_line": s.end_line,
        "signature": " ".join(s.signature.split()), "doc": summary.doc, "total": summary.total, "files": summary.files,
        "by_area": dict(summary.by_area), "by_kind": dict(summary.by_kind), "keywords": dict(summary.keywords),
        "sites": [{"path": x.path, "line": x.line, "start_line": x.start_line, "end_line": x.end_line, "kind": x.kind,
                   "enclosing": x.enclosing, "code": x.code} for x in summary.sites],
        "others": [{"symbol": o.qualified_name, "kind": o.kind, "path": o.path, "start_line": o.start_line} for o in summary.others],
    }


def site_hits(retrieval: Retrieval) -> list[Hit]:
    """The reference sites retrieval chose to show with context."""
    return [h for h in retrieval.hits if any(reason.endswith(" site") for reason in h.reasons)]


__all__ = ["summarize_usage", "call_keywords", "first_sentence", "describe_counts", "summary_to_json", "AREAS"]
