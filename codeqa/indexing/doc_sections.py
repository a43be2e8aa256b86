"""Documents by structure: Markdown and reStructuredText cut into heading sections (for chunk.py).

    heading (ATX `## x`, setext `x` + `---`, RST underlined or over-and-underlined) -> a section to the next heading
    section path       -> the titles of the headings above it, outermost first (`Install › From source`)
    code blocks        -> the languages they are written in (```` ```python ````, `.. code-block:: python`)

The headings come from tree-sitter's markdown and rst grammars: they know what a line parser has to
guess (a `#` line inside a fence or an indented block, a setext underline after a list, an RST title
with an overline), but neither nests sections reliably (markdown keeps a setext heading inside the ATX
section before it; rst gives flat titles), so the nesting is worked out here from the heading levels:
markdown's are written in the marker, RST's are the order in which each adornment style (character,
with or without an overline) first appears, as docutils assigns them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

DOCUMENT_GRAMMARS = {".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".rst": "rst"}
PATH_SEPARATOR = " › "
# RST directives whose argument names the language of the code they hold
_RST_CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "highlight"})
_MARKUP = re.compile(r"[`*]|\\(?=.)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


@dataclass(frozen=True)
class Heading:
    row: int  # 0-based first row (an RST overline's row)
    level: int  # 1 outermost
    title: str


@dataclass(frozen=True)
class CodeBlock:
    start: int  # 0-based rows, inclusive
    end: int
    language: str


@dataclass(frozen=True)
class DocumentOutline:
    headings: tuple[Heading, ...]
    code_blocks: tuple[CodeBlock, ...]


def document_grammar(path: str) -> str | None:
    """The grammar a documentation file's sections are read with; None for other files."""
    return DOCUMENT_GRAMMARS.get(os.path.splitext(path)[1].lower())


def document_outline(text: str, grammar: str) -> DocumentOutline:
    """The headings and code blocks of a document. Raises what tree-sitter raises (the caller cuts the
    file into windows instead) and parse.ParseTimeout on a parse that takes too long."""
    from tree_sitter_language_pack import get_parser

    from .parse import _parse_with_deadline

    source = text.encode("utf-8")
    tree = _parse_with_deadline(get_parser(grammar), source)
    if grammar == "rst":
        return _rst_outline(tree.root_node, source)
    return _markdown_outline(tree.root_node, source)


def _text(node, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _clean_title(title: str) -> str:
    title = _LINK.sub(r"\1", " ".join(title.split()))
    return _MARKUP.sub("", title).strip()


def _descendants(root, wanted: frozenset[str]):
    """Nodes of the wanted types, in document order; their own children are not searched."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in wanted:
            yield node
            continue
        stack.extend(reversed(node.children))


_MD_BLOCKS = frozenset({"atx_heading", "setext_heading", "fenced_code_block"})


def _markdown_outline(root, source: bytes) -> DocumentOutline:
    headings, blocks = [], []
    for node in _descendants(root, _MD_BLOCKS):
        if node.type == "fenced_code_block":
            info = next((c for c in node.children if c.type == "info_string"), None)
            language = _fence_language(_text(info, source)) if info is not None else ""
            if language:
                blocks.append(CodeBlock(node.start_point[0], _last_row(node), language))
            continue
        if not _top_level(node):
            continue  # a heading inside a list item or a block quote is no section of the document
        if node.type == "atx_heading":
            marker = node.children[0].type  # atx_h2_marker
            level = int(marker[5]) if marker.startswith("atx_h") else 1
            inline = next((c for c in node.children if c.type == "inline"), None)
            title = re.sub(r"\s#+\s*$", "", _text(inline, source)) if inline is not None else ""
        else:
            underline = next((c for c in node.children if c.type.startswith("setext_h")), None)
            level = 2 if underline is not None and underline.type.startswith("setext_h2") else 1
            title = "".join(_text(c, source) for c in node.children if c.type == "paragraph")
        headings.append(Heading(node.start_point[0], level, _clean_title(title)))
    return DocumentOutline(tuple(headings), tuple(blocks))


def _top_level(node) -> bool:
    """Whether only sections stand between a node and the document (the grammar nests them)."""
    parent = node.parent
    while parent is not None and parent.type == "section":
        parent = parent.parent
    return parent is None or parent.type == "document"


def _fence_language(info: str) -> str:
    """```` ```python title="x" ````, ```` ```{.python} ````, ```` ```{code-cell} ipython3 ```` -> the language."""
    words = info.replace("{", " ").replace("}", " ").split()
    if words and words[0] in ("code-cell", "code-block", "code", "eval-rst") and len(words) > 1:
        words = words[1:]
    return words[0].lstrip(".").lower() if words else ""


def _rst_outline(root, source: bytes) -> DocumentOutline:
    headings, blocks = [], []
    styles: list[tuple[str, bool]] = []  # adornment styles in the order they first appear: their levels
    for node in _descendants(root, frozenset({"section", "directive", "doctest_block"})):
        if node.type == "section":
            adornments = [c for c in node.children if c.type == "adornment"]
            title = next((c for c in node.children if c.type == "title"), None)
            if not adornments or title is None:
                continue
            char = _text(adornments[-1], source).strip()[:1]
            style = (char, adornments[0].start_byte < title.start_byte)
            if style not in styles:
                styles.append(style)
            headings.append(Heading(node.start_point[0], styles.index(style) + 1, _clean_title(_text(title, source))))
        elif node.type == "doctest_block":
            blocks.append(CodeBlock(node.start_point[0], _last_row(node), "python"))
        else:
            kind = next((c for c in node.children if c.type == "type"), None)
            body = next((c for c in node.children if c.type == "body"), None)
            arguments = next((c for c in body.children if c.type == "arguments"), None) if body is not None else None
            if kind is not None and arguments is not None and _text(kind, source) in _RST_CODE_DIRECTIVES:
                words = _text(arguments, source).split()
                if words:
                    blocks.append(CodeBlock(node.start_point[0], _last_row(node), words[0].lower()))
    return DocumentOutline(tuple(headings), tuple(blocks))


def _last_row(node) -> int:
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


def heading_paths(headings: tuple[Heading, ...]) -> list[tuple[int, tuple[str, ...]]]:
    """(first row, the titles from the outermost heading down to this one) for each heading, in order.
    A heading closes every open heading of its level or deeper; a skipped level (`#` then `###`) nests."""
    stack: list[Heading] = []
    out = []
    for heading in sorted(headings, key=lambda h: h.row):
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        out.append((heading.row, tuple(h.title or "(untitled)" for h in stack)))
    return out


def section_label(path: str, titles: tuple[str, ...]) -> str:
    """A section's name, as search results and citations show it: `README.md › Install › From source`."""
    return PATH_SEPARATOR.join((path.rsplit("/", 1)[-1], *titles))


def code_languages(blocks: tuple[CodeBlock, ...], start: int, end: int) -> tuple[str, ...]:
    """The languages of the code blocks that overlap 0-based rows start..end, each once, in order."""
    seen: dict[str, None] = {}
    for block in blocks:
        if block.start <= end and block.end >= start:
            seen.setdefault(block.language)
    return tuple(seen)


__all__ = ["DOCUMENT_GRAMMARS", "PATH_SEPARATOR", "Heading", "CodeBlock", "DocumentOutline", "document_grammar",
           "document_outline", "heading_paths", "section_label", "code_languages"]
