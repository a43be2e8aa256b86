"""Markdown as the page and the terminal read it: one parser, and where its code lies.

    parse(text)          markdown-it's tokens: CommonMark, raw HTML recognised, GFM tables and strikethrough
    code_regions(text)   every code block and code span, as offsets into `text`
    blank_code(text)     `text` with its code blanked out (same length), for readers of prose

Code is wherever the parser says it is, so a fence indented four spaces, an info string holding a backtick
or a fence closed by a longer one mean what they mean to a renderer: there is no second set of rules here.
Link reference definitions are left as text unless asked for (`definitions=True`, as a renderer reads
them), so `[x]: url` is never swallowed: `defang` shows it, and a reader of prose sees its words.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Callable, Literal, Sequence

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick
from markdown_it.token import Token


def _code_span_with_place(state: StateInline, silent: bool) -> bool:
    """markdown-it's own code-span rule, which also records where the span lies in its inline source:
    token positions are what the parser knows, not a second guess at them."""
    start, before = state.pos, len(state.tokens)
    matched = backtick(state, silent)
    if matched and not silent and len(state.tokens) > before and state.tokens[-1].type == "code_inline":
        state.tokens[-1].meta = {"span": (start, state.pos), "source": state.src}
    return matched


def _parser(definitions: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    if not definitions:
        md.disable("reference")
    md.inline.ruler.at("backticks", _code_span_with_place)
    return md


# configured once, never changed after: like compiled regular expressions
_MD, _MD_DEFINITIONS = _parser(definitions=False), _parser(definitions=True)
_LINE_BREAK = re.compile(r"\r\n?|\n")  # markdown-it's own line endings (rules_core/normalize.py)


def parse(text: str, definitions: bool = False, env: dict | None = None) -> list[Token]:
    """`definitions`: read `[x]: url` as a renderer does, a definition that leaves no token (and holds no code)
    but an entry in `env["references"]`."""
    return (_MD_DEFINITIONS if definitions else _MD).parse(text, {} if env is None else env)


def normalize_link_text(url: str) -> str:
    """A link target as a reader should see it (percent-escapes and punycode decoded), as markdown-it shows one."""
    return _MD.normalizeLinkText(url)


def opens_with_definition(paragraph: str) -> bool:
    """Whether a renderer would read `paragraph` as starting with a link reference definition (`[x]: url`,
    its label or URL possibly on later lines), or a GFM footnote definition (`[^1]: note`)."""
    if paragraph.startswith("[^"):
        return True
    env: dict = {}
    _MD_DEFINITIONS.parse(paragraph, env)
    return bool(env.get("references"))


@dataclass(frozen=True)
class Code:
    """One code block or code span of a text: [start, end) is all of it (for a block, its whole lines, fences
    and container markers included), [inner_start, inner_end) what it shows (a block's lines between its
    fences, a span's text between its backticks). `closed`: a fence that has its closing fence."""
    kind: Literal["fence", "indented", "inline"]
    start: int
    end: int
    inner_start: int
    inner_end: int
    closed: bool = True


def code_regions(text: str, tokens: Sequence[Token] | None = None) -> tuple[Code, ...]:
    """Every code block and code span of `text`, in order. A code span is given only where its place in
    `text` is certain (its backticks and content found exactly there); `tokens` may be `parse(text)`."""
    tokens = parse(text) if tokens is None else tokens
    starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
    ends = [m.start() for m in _LINE_BREAK.finditer(text)] + [len(text)]
    out: list[Code] = []
    parent = ""
    for token in tokens:
        if token.type in ("fence", "code_block") and token.map:
            first, stop = token.map
            body = token.content.count("\n")
            closed = token.type == "fence" and stop - first - 1 > body
            last_body = stop - 1 - (1 if closed else 0)
            inner_from = first + (1 if token.type == "fence" else 0)
            inner = (starts[inner_from], ends[last_body]) if inner_from <= last_body else (ends[first], ends[first])
            out.append(Code("fence" if token.type == "fence" else "indented", starts[first], ends[stop - 1],
                            *inner, closed or token.type == "code_block"))
        elif token.type == "inline" and token.map and token.children:
            out += _spans(text, token, starts, ends, searched=parent != "paragraph_open")
        parent = token.type
    return tuple(sorted(out, key=lambda c: c.start))


def _spans(text: str, token: Token, starts: list[int], ends: list[int], searched: bool) -> list[Code]:
    """The code spans of one inline token, placed in `text`: each line of the token's content is found on
    its own source line (after container markers and indentation; a heading or table cell is searched for)."""
    lines = token.content.split("\n")
    first = token.map[0]
    if first + len(lines) > len(starts):
        return []
    offsets = []
    for i, line in enumerate(lines):
        source = text[starts[first + i]:ends[first + i]]
        if not searched and source.endswith(line):
            column = len(source) - len(line)
        elif not searched and source.rstrip(" \t").endswith(line):
            column = len(source.rstrip(" \t")) - len(line)
        else:
            column = source.find(line)
        if column < 0:
            return []  # a tab the parser expanded: this token's spans are not placed rather than misplaced
        offsets.append(starts[first + i] + column)
    line_starts = [0] + [m.end() for m in re.finditer("\n", token.content)]

    def place(pos: int) -> int:
        i = bisect.bisect_right(line_starts, pos) - 1
        return offsets[i] + pos - line_starts[i]

    out = []
    for child in token.children:
        meta = child.meta or {}
        if child.type != "code_inline" or meta.get("source") is not token.content:
            continue  # a span inside an image's text is parsed from another string
        a, b = meta["span"]
        first_line, last_line = bisect.bisect_right(line_starts, a) - 1, bisect.bisect_right(line_starts, b - 1) - 1
        stops = [n - 1 for n in line_starts[first_line + 1:last_line + 1]] + [b]  # each line's part, less its break
        pieces = [(max(a, s), e) for s, e in zip(line_starts[first_line:last_line + 1], stops)]
        if any(text[place(s):place(s) + e - s] != token.content[s:e] for s, e in pieces):
            continue  # not exactly there: left out, never guessed
        start, end, width = place(a), place(b - 1) + 1, len(child.markup)
        out.append(Code("inline", start, end, start + width, end - width))
    return out


def blank_code(text: str, inline: bool = True, keep: Callable[[str], bool] | None = None,
               regions: Sequence[Code] | None = None, fill: str = " ") -> str:
    """`text` with code replaced by `fill`, line breaks kept, so offsets still match: code blocks, and code
    spans too when `inline`. A span whose text `keep(inner)` accepts keeps it, losing only its backticks."""
    chars = list(text)
    for code in code_regions(text) if regions is None else regions:
        if code.kind == "inline" and not inline:
            continue
        kept = code.kind == "inline" and keep is not None and keep(text[code.inner_start:code.inner_end])
        for i in range(code.start, code.end):
            if chars[i] not in "\r\n" and not (kept and code.inner_start <= i < code.inner_end):
                chars[i] = fill
    return "".join(chars)


__all__ = ["Code", "parse", "code_regions", "blank_code", "normalize_link_text", "opens_with_definition"]
