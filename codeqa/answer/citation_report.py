"""What an answer's citations are, in words: the one summary the page, the CLI and MCP all show.

    citation_status   one citation: its mark and what was checked ("✓ verified, and these lines mention `Typer`", "! verified, but
                      these lines do not mention `rich_utils`", "✗ written by rote: …", "~ attributed")
    describe_citations  the answer: one line counting them by what was checked, and the warnings (ungrounded,
                      unsupported sentences, a one-sentence answer to a "how" question)

"verified" only ever means that the lines exist in the index and were shown to the model; "supported" that
they mention what the sentence citing them names (support.py). The line never says one for the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..types import Answer, Citation

MARKS = {"supported": "✓", "unsupported": "!", "unchecked": "·", "unverified": "✗", "rote": "✗", "attributed": "~"}


@dataclass(frozen=True)
class CitationStatus:
    kind: str  # supported | unsupported | unchecked | unverified | rote | attributed
    mark: str
    words: str  # what was checked, for a tooltip or a line of its own


@dataclass(frozen=True)
class CitationReport:
    line: str  # "3 citations: 2 verified, their lines mention what their sentences name, 1 verified but its lines do not mention `X`"
    warnings: tuple[str, ...]


def citation_status(c: Citation, mode: str = "llm") -> CitationStatus:
    """What one citation is, as every shell marks it."""
    if c.rote:
        kind, words = "rote", c.reason
    elif not c.verified:
        kind, words = "unverified", f"unverified: {c.reason}"
    elif c.attributed:
        kind, words = "attributed", c.reason
    elif c.supported:
        kind, words = "supported", f"verified, and {c.support_reason}"
    elif c.supported is False:
        kind, words = "unsupported", ("verified (these lines exist and were shown to the model), but "
                                      + c.support_reason.removeprefix("cited, but "))
    elif mode != "llm":
        kind, words = "supported", "verified: codeqa quoted these lines (no model wrote this answer)"
    else:
        kind, words = "unchecked", f"verified (these lines exist and were shown to the model); {c.support_reason or 'support not checked'}"
    if c.stale:
        words += "; the file changed since it was indexed (re-index)"
    return CitationStatus(kind, MARKS[kind], words)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def describe_citations(answer: Answer) -> CitationReport:
    """The summary of `answer`'s citations and what they support, the same words in every shell."""
    statuses = [(c, citation_status(c, answer.mode)) for c in answer.citations]
    by_kind: dict[str, list[Citation]] = {}
    for c, s in statuses:
        by_kind.setdefault(s.kind, []).append(c)
    cited = [c for c, s in statuses if s.kind not in ("attributed", "rote")]
    parts = []
    if supported := by_kind.get("supported"):
        # what was checked, no more: the lines mention the names, which does not make the sentence true
        parts.append(("1 verified, its lines mention what its sentence names" if len(supported) == 1 else
                      f"{len(supported)} verified, their lines mention what their sentences name")
                     if answer.mode == "llm" else f"{len(supported)} verified (quoted by codeqa)")
    if unsupported := by_kind.get("unsupported"):
        if len(unsupported) == 1:
            parts.append("1 verified but its lines do not " + unsupported[0].support_reason.split("do not ", 1)[-1]
                         .replace("mention none of", "mention any of"))
        else:
            parts.append(f"{len(unsupported)} verified but their lines do not mention what their sentences name")
    if unchecked := by_kind.get("unchecked"):
        parts.append(f"{len(unchecked)} verified, support not checked (the sentence names nothing)")
    if unverified := by_kind.get("unverified"):
        parts.append(f"{len(unverified)} unverified ({unverified[0].reason}"
                     + (", …)" if len({c.reason for c in unverified}) > 1 else ")"))
    line = f"{_plural(len(cited), 'citation')}: " + ", ".join(parts) if cited else "no citations"
    if rote := by_kind.get("rote"):
        numbers = "; ".join(c.reason.removeprefix("written by rote: ") for c in rote[:2])
        line += f"; {_plural(len(rote), 'citation')} written by rote, not counted ({numbers}{', …' if len(rote) > 2 else ''})"
    if guessed := by_kind.get("attributed"):
        counted = sum(c.counted for c in guessed)
        line += (f"; {len(guessed)} attributed by codeqa"
                 + (f" ({counted} counted)" if counted else " (not counted as support)"))
    warnings = []
    if answer.mode == "llm" and not answer.grounded:
        open_claims = [c for c in answer.claims if not c.supported]
        if open_claims:
            warnings.append(f"Not grounded: {len(open_claims)} of {_plural(len(answer.claims), 'sentence')} that name "
                            f"code rest on no cited lines that mention what they name, e.g. “{open_claims[0].sentence}”.")
        else:
            warnings.append("Not grounded: no cited lines mention what the answer names. Treat it as unsupported.")
    if answer.echoes:
        many = len(answer.echoes) > 1
        warnings.append(f"Not an answer: {_plural(len(answer.echoes), 'sentence')} repeat{'' if many else 's'} the prompt's own wording, "
                        f"e.g. “{answer.echoes[0].strip()}”.")
    if answer.shallow:
        warnings.append(f"Possibly incomplete: {answer.shallow}.")
    return CitationReport(line, tuple(warnings))


__all__ = ["CitationStatus", "CitationReport", "citation_status", "describe_citations", "MARKS"]
