"""Embedded script regions: markup files (Vue and Svelte single-file components) whose `<script>` blocks
are code in another language.

    <template> ... </template>          -> blanked: stays text for the chunker, no symbols
    <script setup lang="ts"> ... </script>  -> parsed as TypeScript (lang ts, typescript), TSX (tsx), else JavaScript
    <style> ... </style>                -> blanked

The markup grammar (a registry row with `script_regions`) finds the top-level script elements, so a
`<script>` inside a comment or a string is none. Everything outside their content is replaced by spaces,
byte for byte, line breaks kept: the script language's grammar and queries then run over a text of the
same length and lines, and every symbol and reference keeps the file's real line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LANG = re.compile(rb"""\blang\s*=\s*["']?([\w-]+)""", re.IGNORECASE)
_SCRIPT_LANGUAGES = {b"ts": "typescript", b"typescript": "typescript", b"tsx": "tsx"}
_KEEP = frozenset(b"\r\n")


@dataclass(frozen=True)
class ScriptRegions:
    language: str  # the registry name the scripts are parsed as
    spans: tuple[tuple[int, int], ...]  # byte ranges of the scripts' content
    rows: tuple[tuple[int, int], ...]  # 0-based first and last row of each script's content
    masked: str  # the file with everything outside the scripts blanked


def script_regions(markup_grammar: str, text: str) -> ScriptRegions | None:
    """The scripts of a markup file, parsed by `markup_grammar`; None when it has none."""
    from tree_sitter_language_pack import get_parser

    source = text.encode("utf-8")
    root = get_parser(markup_grammar).parse(source).root_node
    spans, rows, language = [], [], "javascript"
    for element in root.children:
        if element.type != "script_element":
            continue
        content = next((c for c in element.children if c.type == "raw_text"), None)
        tag = next((c for c in element.children if c.type == "start_tag"), None)
        if content is None:
            continue
        lang = _LANG.search(source[tag.start_byte:tag.end_byte]) if tag is not None else None
        if lang is not None and _SCRIPT_LANGUAGES.get(lang.group(1).lower()):
            language = _SCRIPT_LANGUAGES[lang.group(1).lower()]  # one TS block makes the file TypeScript
        spans.append((content.start_byte, content.end_byte))
        first = content.start_point[0] + (source[content.start_byte:content.start_byte + 1] in (b"\n", b"\r"))
        end_row, end_col = content.end_point
        rows.append((first, max(first, end_row - 1 if end_col == 0 else end_row)))
    if not spans:
        return None
    masked = bytearray(b if b in _KEEP else 0x20 for b in source)
    for start, end in spans:
        masked[start:end] = source[start:end]
    return ScriptRegions(language, tuple(spans), tuple(rows), masked.decode("utf-8"))


__all__ = ["ScriptRegions", "script_regions"]
