"""Chunk stage: cut a file into line spans along its syntax tree (Sweep's algorithm, done on lines).

    definition that fits max_chars  -> one chunk, from its decorators / doc comment to its last line
    definition that does not fit    -> recurse into its children; the first piece keeps the header
    other code between definitions  -> children packed greedily up to max_chars
    a node bigger than max_chars with no children -> cut by lines
    no grammar / a failed parse     -> 40-line windows overlapping by 15 lines
    markdown, reStructuredText      -> one chunk per heading section, named by its heading path
                                       (doc_sections.py); a big section cut between paragraphs

Sizes are counted without whitespace. Pieces are turned into line spans that tile the file with no
gap and no overlap (windows excepted), so the chunks, concatenated, are the file. Small pieces are
coalesced: trailing code into the chunk before it, a small header into the chunk after it.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

from .doc_sections import DocumentOutline, code_languages, document_grammar, document_outline, heading_paths, section_label
from ..embed.text import embedding_text
from .embedded import script_regions
from ..languages import language_by_name
from ..types import Chunk, SourceFile, Symbol

WINDOW_LINES = 40
WINDOW_OVERLAP = 15
# Nodes whose text says nothing about their children: never recursed into (strings, comments).
_ATTACHED = re.compile(r"comment|decorator|attribute|annotation|pragma")
# A gap larger than this (in error nodes) means the tree is not worth chunking by.
ERROR_SHARE_FOR_WINDOWS = 0.5
# The syntax chunker recurses into big nodes; real code nests far less than this, generated or
# hostile code (thousands of nested brackets) more: such a file is cut into line windows instead.
MAX_SYNTAX_DEPTH = 200


class NestingTooDeep(ValueError):
    """The syntax tree nests deeper than MAX_SYNTAX_DEPTH where the chunker would have to recurse."""


@dataclass
class _Piece:
    start: int  # 0-based first row
    end: int  # 0-based last row, inclusive
    size: int  # non-whitespace characters
    kind: str  # "def" (a whole symbol), "head" (first piece of a split symbol), "code"


_WHITESPACE = str.maketrans("", "", " \t\r\n\f\v")


def nonws_len(text: str) -> int:
    return len(text.translate(_WHITESPACE))


def chunk_file(file: SourceFile, text: str, tree, symbols: Sequence[Symbol], max_chars: int = 1500,
               min_chars: int = 100) -> list[Chunk]:
    """Chunks covering every line of `text`. `tree` is the tree-sitter tree, or None without a grammar."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return []
    if tree is None or _mostly_errors(tree.root_node):
        grammar = document_grammar(file.path)
        outline = _outline(text, grammar) if grammar else None
        if outline is not None:
            return [_section_chunk(file, lines, section, outline)
                    for section in document_sections(lines, outline, max_chars, min_chars)]
        spans = [(s, e, "window") for s, e in line_windows(len(lines))]
    elif file.language and language_by_name(file.language).script_regions:
        spans = _script_spans(file.language, text, lines, tree, symbols, max_chars, min_chars)
    else:
        spans = _syntax_spans(tree.root_node, text, lines, symbols, max_chars, min_chars)
    return [_make_chunk(file, lines, start, end, kind, symbols) for start, end, kind in spans]


# ---- syntax chunking -------------------------------------------------------------------------

_WHITESPACE_BUT_NEWLINE = b" \t\r\f\v"
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)  # UTF-8: 10xxxxxx continues a character


def _row_sizes(text: str, lines: list[str]) -> list[int]:
    """nonws_len of every line of `text` (split into `lines`): one delete and one split over the whole
    file's UTF-8 bytes where its only line break is \n (per line where splitlines sees other breaks:
    \r, \x0b, \u2028, ...). Over bytes, as str.translate is ~5x slower and ~20x on text that is not
    ASCII; a row's characters are its bytes less its UTF-8 continuation bytes."""
    data = text.encode("utf-8", "surrogatepass").translate(None, _WHITESPACE_BUT_NEWLINE)
    rows = data.split(b"\n")
    if lines[-1].endswith("\n"):
        rows.pop()  # the empty row after the final newline
    if len(rows) != len(lines):
        return [nonws_len(line) for line in lines]
    if text.isascii():
        return [len(row) for row in rows]
    return [len(row) - len(row.translate(None, _NOT_CONTINUATION)) for row in rows]


def _syntax_spans(root, text: str, lines: list[str], symbols: Sequence[Symbol], max_chars: int, min_chars: int):
    row_sizes = _row_sizes(text, lines)
    prefix = [0]
    for size in row_sizes:
        prefix.append(prefix[-1] + size)

    def size_of(start: int, end: int) -> int:
        return prefix[min(end, len(lines) - 1) + 1] - prefix[max(start, 0)]

    ends = {}  # end row -> smallest start row of a symbol ending there
    for s in symbols:
        row = s.end_line - 1
        ends[row] = min(ends.get(row, s.start_line - 1), s.start_line - 1)

    def is_definition(node) -> bool:
        start, end = node.start_point[0], _end_row(node)
        first = ends.get(end)
        return first is not None and start <= first

    def chunk_node(node, depth: int = 0) -> list[_Piece]:
        if depth > MAX_SYNTAX_DEPTH:
            raise NestingTooDeep(f"code nested deeper than {MAX_SYNTAX_DEPTH} levels near line {node.start_point[0] + 1}")
        pieces: list[_Piece] = []
        run: _Piece | None = None
        children = [c for c in node.children if _end_row(c) >= c.start_point[0]]
        attached_start: int | None = None  # comments/decorators directly above the next node
        for i, child in enumerate(children):
            start, end = child.start_point[0], _end_row(child)
            if _ATTACHED.search(child.type) and i + 1 < len(children) and children[i + 1].start_point[0] <= end + 1 \
                    and is_definition(children[i + 1]):
                attached_start = start if attached_start is None else attached_start
                continue
            if attached_start is not None:
                start, attached_start = min(start, attached_start), None
            size = size_of(start, end)
            if is_definition(child) and size <= max_chars:
                if run:
                    pieces.append(run)
                    run = None
                pieces.append(_Piece(start, end, size, "def"))
            elif size > max_chars:
                if run:
                    pieces.append(run)
                    run = None
                sub = chunk_node(child, depth + 1) if child.child_count else []
                if not sub:
                    sub = [_Piece(s, e, size_of(s, e), "code") for s, e in _cut_rows(start, end, row_sizes, max_chars)]
                sub[0].start = min(sub[0].start, start)
                if is_definition(child) and sub[0].kind == "code":
                    sub[0].kind = "head"
                pieces.extend(sub)
            elif run and size_of(run.start, end) <= max_chars:
                run.end, run.size = max(run.end, end), size_of(run.start, max(run.end, end))
            else:
                if run:
                    pieces.append(run)
                run = _Piece(start, end, size, "code")
        if run:
            pieces.append(run)
        return pieces

    pieces = chunk_node(root) or [_Piece(0, len(lines) - 1, size_of(0, len(lines) - 1), "code")]
    pieces = _tile(pieces, len(lines), lines, size_of)
    pieces = _coalesce(pieces, min_chars, max_chars, size_of)
    return [(p.start + 1, p.end + 1, p.kind) for p in pieces]


def _script_spans(language: str, text: str, lines: list[str], tree, symbols: Sequence[Symbol], max_chars: int,
                  min_chars: int) -> list[tuple[int, int, str]]:
    """A single-file component: its scripts chunked along the tree of their blanked text (embedded.py),
    the markup around them (template, style) cut by lines into "text" chunks of its own."""
    regions = script_regions(language_by_name(language).grammar, text)
    if regions is None:
        return [(s, e, "window") for s, e in line_windows(len(lines))]
    masked_lines = regions.masked.splitlines(keepends=True)
    inside = [False] * len(lines)
    for first, last in regions.rows:
        inside[first:last + 1] = [True] * (last + 1 - first)
    sizes = [nonws_len(line) for line in lines]
    out = []
    for start, end, kind in _syntax_spans(tree.root_node, regions.masked, masked_lines, symbols, max_chars, min_chars):
        row = start - 1
        while row < end:  # runs of rows inside or outside the scripts
            stop = row
            while stop + 1 < end and inside[stop + 1] == inside[row]:
                stop += 1
            if inside[row]:
                out.append((row + 1, stop + 1, kind))
            else:
                out.extend((s + 1, e + 1, "text") for s, e in _cut_rows(row, stop, sizes, max_chars))
            row = stop + 1
    return out


def _end_row(node) -> int:
    """Last row a node has text on (a node ending at column 0 ends on the row before)."""
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


def _cut_rows(start: int, end: int, row_sizes: list[int], max_chars: int) -> list[tuple[int, int]]:
    """A node with no children bigger than max_chars (a long string): cut between lines."""
    spans, first, total = [], start, 0
    for row in range(start, end + 1):
        if total and total + row_sizes[row] > max_chars:
            spans.append((first, row - 1))
            first, total = row, 0
        total += row_sizes[row]
    spans.append((first, end))
    return spans


def _tile(pieces: list[_Piece], n_lines: int, lines: list[str], size_of) -> list[_Piece]:
    """Make the pieces cover rows 0..n-1 exactly once: gaps go to the neighbours, overlaps are cut."""
    pieces = sorted(pieces, key=lambda p: (p.start, -p.end))
    tiled: list[_Piece] = []
    for p in pieces:
        if tiled and p.start <= tiled[-1].end:
            if p.end <= tiled[-1].end:
                continue  # shares only rows already taken
            p.start = tiled[-1].end + 1
        if tiled and p.start > tiled[-1].end + 1:
            # blank rows of the gap trail the previous piece; from the first text row on it leads this one
            gap_start = tiled[-1].end + 1
            first_text = next((r for r in range(gap_start, p.start) if lines[r].strip()), p.start)
            tiled[-1].end = first_text - 1
            p.start = first_text
        elif not tiled:
            p.start = 0
        tiled.append(p)
    tiled[-1].end = n_lines - 1
    for p in tiled:
        p.size = size_of(p.start, p.end)
    return [p for p in tiled if p.end >= p.start]


def _coalesce(pieces: list[_Piece], min_chars: int, max_chars: int, size_of) -> list[_Piece]:
    """Join small pieces to a neighbour without blurring symbol chunks.

    A symbol's chunk starts at its definition, so the model reads its code first: small module code
    joins neighbouring module code, not a symbol; a small header of a split symbol leads the piece
    after it; a trivial tail (a closing brace, `end`) trails the piece before it.
    """
    out: list[_Piece] = []
    for p in pieces:
        prev = out[-1] if out else None
        if prev is not None and prev.kind == "head" and prev.size < min_chars:
            prev.end, prev.size, prev.kind = p.end, prev.size + p.size, p.kind if p.kind != "code" else "head"
            continue
        if prev is not None and p.kind == "code" and p.size < min_chars and (
                (prev.kind == "code" and prev.size + p.size <= max_chars) or p.size < min_chars // 4):
            prev.end, prev.size = p.end, prev.size + p.size
            continue
        if prev is not None and prev.kind == "code" and prev.size < min_chars and p.kind == "code" \
                and prev.size + p.size <= max_chars:
            prev.end, prev.size = p.end, prev.size + p.size
            continue
        out.append(p)
    return out


def _mostly_errors(root) -> bool:
    if not root.has_error:
        return False
    error_bytes = sum(c.end_byte - c.start_byte for c in root.children if c.type == "ERROR")
    return error_bytes > ERROR_SHARE_FOR_WINDOWS * max(root.end_byte - root.start_byte, 1)


# ---- files without a grammar ------------------------------------------------------------------

def line_windows(n_lines: int, window: int = WINDOW_LINES, overlap: int = WINDOW_OVERLAP) -> list[tuple[int, int]]:
    """1-based (start, end) windows of `window` lines, each overlapping the previous by `overlap`."""
    spans, start = [], 1
    while start <= n_lines:
        end = min(start + window - 1, n_lines)
        spans.append((start, end))
        if end == n_lines:
            break
        start = end - overlap + 1
    return spans


def _outline(text: str, grammar: str) -> DocumentOutline | None:
    try:
        return document_outline(text, grammar)
    except Exception:  # a grammar crash or a parse over the deadline: the document is cut into windows
        return None


@dataclass
class _Section:
    start: int  # 0-based rows, inclusive
    end: int
    titles: list[tuple[str, ...]]  # heading paths of the sections inside, the first one names it


def document_sections(lines: list[str], outline: DocumentOutline, max_chars: int, min_chars: int) -> list[_Section]:
    """Heading sections tiling the document: a section smaller than min_chars (a heading with nothing
    but subsections under it) joins the one after it, the last one the one before it; a section over
    max_chars is cut between paragraphs outside code blocks, every piece keeping its heading path."""
    sizes = [nonws_len(line) for line in lines]
    starts = heading_paths(outline.headings)
    if not starts or starts[0][0] > 0:
        starts.insert(0, (0, ()))  # the text above the first heading
    merged: list[_Section] = []
    for (start, titles), (stop, _) in zip(starts, starts[1:] + [(len(lines), ())]):
        section = _Section(start, stop - 1, [titles])
        last = merged[-1] if merged else None
        if last is not None and sum(sizes[last.start:last.end + 1]) < min_chars \
                and sum(sizes[last.start:stop]) <= max_chars:
            # text above the first heading (a badge, a comment) takes the name of the section it joins
            last.end, last.titles = section.end, [t for t in last.titles if t] + section.titles
        else:
            merged.append(section)
    if len(merged) > 1 and sum(sizes[merged[-1].start:]) < min_chars \
            and sum(sizes[merged[-2].start:]) <= max_chars:
        tail = merged.pop()
        merged[-1].end, merged[-1].titles = tail.end, merged[-1].titles + tail.titles
    in_code = {row for block in outline.code_blocks for row in range(block.start + 1, block.end + 1)}
    out = []
    for section in merged:
        for s, e in _cut_at_paragraphs(section.start, section.end, sizes, lines, in_code, max_chars):
            out.append(_Section(s, e, section.titles if s == section.start else section.titles[-1:]))
    return out


def _cut_at_paragraphs(start: int, end: int, sizes: list[int], lines: list[str], in_code: set[int],
                       max_chars: int) -> list[tuple[int, int]]:
    """Rows start..end cut into pieces of at most max_chars (a single longer line excepted), each cut
    after the last blank line outside a code block that leaves the piece at least half full, else
    where the size runs out."""
    spans, first, total, last_break, at_break = [], start, 0, None, 0
    for row in range(start, end + 1):
        if total and total + sizes[row] > max_chars:
            cut = last_break if last_break is not None and at_break * 2 >= max_chars else row
            spans.append((first, cut - 1))
            first, total, last_break = cut, sum(sizes[cut:row]), None
        total += sizes[row]
        if not lines[row].strip() and row not in in_code:
            last_break, at_break = row + 1, total
    spans.append((first, end))
    return spans


def _section_chunk(file: SourceFile, lines: list[str], section: _Section, outline: DocumentOutline) -> Chunk:
    chunk = _make_chunk(file, lines, section.start + 1, section.end + 1, "section", ())
    return replace(chunk, symbol_names=tuple(section_label(file.path, t) for t in section.titles),
                   code_languages=code_languages(outline.code_blocks, section.start, section.end))


# ---- chunks and their embedded text ------------------------------------------------------------

def _make_chunk(file: SourceFile, lines: list[str], start: int, end: int, kind: str, symbols: Sequence[Symbol]) -> Chunk:
    inside = [s for s in symbols if start <= s.start_line <= end]
    enclosing = sorted((s for s in symbols if s.start_line < start <= s.end_line), key=lambda s: -s.start_line)
    # outermost symbol defined here first, then the symbols this piece sits inside, innermost first
    ordered = sorted(inside, key=lambda s: (s.start_line, -s.end_line)) + enclosing
    if kind in ("def", "head", "code"):
        kind = ordered[0].kind if ordered else "module"
    digest = hashlib.sha256(f"{file.path}\0{start}\0{end}".encode()).digest()
    return Chunk(
        id=str(uuid.UUID(bytes=digest[:16])),
        path=file.path,
        start_line=start,
        end_line=end,
        language=file.language,
        kind=kind,
        symbol_ids=tuple(s.id for s in ordered),
        text="".join(lines[start - 1:end]),
        symbol_names=tuple(s.qualified_name for s in ordered),
    )


def chunk_embedding_text(chunk: Chunk, symbols_by_id: Mapping[str, Symbol]) -> str:
    """What the model reads for a chunk: header (path, symbol, signature, docstring) + code."""
    main = _main_symbol(chunk, symbols_by_id)
    if main is None and chunk.kind == "section":  # its heading path, and the languages of its code
        code = f"{', '.join(chunk.code_languages)} code" if chunk.code_languages else ""
        return embedding_text(chunk.path, chunk.symbol_names[0] if chunk.symbol_names else "", code, "", chunk.text)
    if main is None:
        return embedding_text(chunk.path, "", "", "", chunk.text)
    return embedding_text(chunk.path, main.qualified_name, main.signature, main.docstring, chunk.text)


def _main_symbol(chunk: Chunk, symbols_by_id: Mapping[str, Symbol]) -> Symbol | None:
    """The outermost symbol defined in the chunk, else the innermost one it sits inside (symbol_ids' order)."""
    return next((symbols_by_id[i] for i in chunk.symbol_ids if i in symbols_by_id), None)


def reassemble(chunks: Iterable[Chunk]) -> str:
    """The file again from its chunks, overlapping window lines counted once (the property tests use it)."""
    out, last = [], 0
    for chunk in sorted(chunks, key=lambda c: (c.start_line, c.end_line)):
        lines = chunk.text.splitlines(keepends=True)
        skip = max(0, last - chunk.start_line + 1)
        out.extend(lines[skip:])
        last = max(last, chunk.end_line)
    return "".join(out)


__all__ = ["chunk_file", "NestingTooDeep", "MAX_SYNTAX_DEPTH", "chunk_embedding_text", "line_windows", "document_sections", "reassemble", "nonws_len"]
