"""Citations: read out of an answer's text, and checked against the evidence.

A model may cite a snippet by its number (`[2]`, `[1, 3]`), by `path:Lstart-Lend`, by a snippet's file
named without lines (its snippet, or the one of that file closest to the sentence), by the layout of the
graph facts (`src/core.py (L929 call; L1415 call)`), by line numbers alone when one snippet holds them
("defined at lines 252 to 292"), or by quoting numbered lines as the prompt showed them (`849 | ...`,
whose prefixes are then taken out of the answer). Every form maps to lines, and every citation is
checked the same way: `verified` only when its file is in the index, its lines exist, and they lie
inside the snippets (or the reference sites) the model was given. Code in the answer never yields
`path:line` citations (a quoted `host:3128` is not one), and a file that is not in the index is
reported, not dropped.

Snippet numbers written by rote (a run longer than a sentence can use, a number with no snippet) are
kept as one unverified citation each, with the reason. What the cited lines say is support.py's check;
names the answer uses that the index does not know are reported (`unknown_names`), with the closest
name from the evidence.
"""

from __future__ import annotations

import difflib
import re
import sys
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from ..languages import detect_language
from ..types import Citation, Snippet
from .markdown import blank_code, code_regions

_CITATION = re.compile(
    r"(?<![\w/.@+-])(?P<path>(?:\.{1,2}/)?(?:[\w.@+-]+/)*[\w.@+-]*\w)"
    r"(?:[:#]|\s*[:#]\s+(?=L\d)|\s+(?=L\d))L?(?P<start>\d+)(?:\s*(?:-|–|—|\.\.|to)\s*L?(?P<end>\d+))?(?!\w|\.\w)")


@dataclass(frozen=True)
class CitedSpan:
    path: str
    start_line: int
    end_line: int
    text: str  # as written in the answer
    rote: str = ""  # why these snippet numbers were written by rote (then `path` is the run, lines 0)


# A path of the repository with a space in it (`my notes/setup.py`) is read with this letter for each of its
# spaces, so the one citation grammar below reads it whole; the space comes back in the span.
_SPACE = "\u01c2"


def _join_spaced(text: str, known: set[str]) -> str:
    spaced = sorted((p for p in known if " " in p), key=len, reverse=True)  # longest first: the whole path wins
    if not spaced:
        return text
    pattern = re.compile("|".join(re.escape(p) for p in spaced))
    return pattern.sub(lambda m: m.group(0).replace(" ", _SPACE), text)


def parse_citations(text: str, known_paths: Iterable[str] = ()) -> list[CitedSpan]:
    """Every `path:Lstart-Lend` in `text`, in order, duplicates removed.

    Accepted: `path:L3-L9`, `path:L3`, `path:3-9`, `path#L3-L9`, `path L3-L9`, with or without
    backticks around the whole citation. Nothing inside code counts: fenced blocks and inline code that
    is more than a citation (`proxies = {'http': 'foo.bar:3128'}`) are skipped. The path must be a file
    of the repository (`known_paths`, or a unique suffix of one: `encoder.py:L3`; a known path may hold
    spaces: `my notes/setup.py:L2`); a path with a folder
    and a file extension counts too, and so does a source or document file name (`utils.py`), so an
    invented file is reported as unverified rather than ignored. URLs and host:port never count (`http://foo.bar:3128`, `localhost:8080`), nor does code
    like `{self.precision: 1}` (a space after the colon needs the `L`). Without `known_paths` any
    file-like path (one with `/` or `.`) is accepted.
    """
    known = set(known_paths)
    names = {p.rsplit("/", 1)[-1] for p in known}
    visible = _hide_code(_join_spaced(text, known))
    found: dict[tuple[str, int, int], CitedSpan] = {}
    for m in _CITATION.finditer(visible):
        path = m.group("path").removeprefix("./").replace(_SPACE, " ")
        if not _citable_path(path, known, names):
            continue
        start = int(m.group("start"))
        end = int(m.group("end")) if m.group("end") else start
        found.setdefault((path, start, end), CitedSpan(path, start, end, m.group(0).replace(_SPACE, " ")))
    return list(found.values())


_DOCUMENT_SUFFIXES = (".md", ".rst", ".txt", ".toml", ".json", ".yaml", ".yml", ".cfg", ".ini")
_FILE_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")


def _hide_code(text: str) -> str:
    """`text` with code blanked out (same length), where the Markdown parser finds it: code blocks, and code
    spans that are not exactly one citation."""
    return blank_code(text, keep=lambda inner: bool(_CITATION.fullmatch(inner.strip())))


def _citable_path(path: str, known: set[str], names: set[str]) -> bool:
    if not re.search(r"[A-Za-z]", path):
        return False
    if not known:
        return "/" in path or "." in path.strip(".")
    if path in known or path.rsplit("/", 1)[-1] in names and any(p.endswith("/" + path) for p in known):
        return True
    if "/" in path and _FILE_EXTENSION.search(path):
        return True
    # a file name alone counts when it is a source or document file (`utils.py`), never `foo.bar`
    return source_or_document(path)


def source_or_document(name: str) -> bool:
    """Whether a file name is one of a source language codeqa knows or a document (`utils.py`, `README.md`)."""
    return detect_language(name) is not None or name.lower().endswith(_DOCUMENT_SUFFIXES)


# One marker: [2], [1, 3], [snippet 2]. A run of them side by side ([2][4]) is one match: the prompt's REMINDER asks
# for that form and the citation grammar writes it, and each of its numbers counts. Not after a word, a bracket, a
# parenthesis or a backtick (foo[0][1], a markdown [docs][2]), nor before a link's "(" ([1](http://...)).
_MARKER = r"\[(?:snippet\s*)?\d{1,3}(?:\s*[,;]\s*(?:snippet\s*)?\d{1,3})*\]"
_NUMBERED = re.compile(rf"(?<![\w\]\)`])((?:{_MARKER})+)(?!\(|{_MARKER})", re.IGNORECASE)
# A sentence rests on a few snippets; a longer run of numbers ([1][3][4][6]…[99][10][11]) is written by rote
# (a small model under the citation grammar loops on them) and supports nothing.
MAX_MARKER_RUN = 4
_SNIPPET_WORD = re.compile(r"\bsnippets?\s+#?(\d{1,3})\b", re.IGNORECASE)
_FACT_LAYOUT = re.compile(r"(?<![\w/.@+-])(?P<path>(?:[\w.@+-]+/)*[\w.@+-]*\w\.\w+)\s*\((?P<inner>[^()\n]*?\bL\d+[^()\n]*)\)")
_LINES_ONLY = re.compile(r"\b(?:lines?|L)\s*(\d+)(?:\s*(?:-|–|—|to|through|and)\s*L?(\d+))?\b", re.IGNORECASE)
_ECHOED = re.compile(r"^(\s*)(\d+) \| ?(.*)$")


def parse_numbered(text: str, snippets: Sequence[Snippet]) -> list[CitedSpan]:
    """`[2]`, `[1, 3]`, `[snippet 2]` and "snippet 2" outside code: each number the span of that snippet
    (numbered from 1 in prompt order). Numbers written by rote are kept as one span of line 0 whose path
    is what was written, with the reason (`rote`), which verification reports: a run of more than
    MAX_MARKER_RUN numbers (runs apart by white space only are one), or a number with no snippet."""
    visible = _hide_code(text)
    found: dict[tuple[str, int, int], CitedSpan] = {}
    runs: list[tuple[int, int, list[int]]] = []
    for m in _NUMBERED.finditer(visible):
        numbers = [int(n) for n in re.findall(r"\d+", m.group(1))]
        if runs and not visible[runs[-1][1]:m.start()].strip():
            runs[-1] = (runs[-1][0], m.end(), runs[-1][2] + numbers)
        else:
            runs.append((m.start(), m.end(), numbers))
    numbers: list[tuple[int, str]] = []
    for start, end, run in runs:
        written = text[start:end]
        if len(run) > MAX_MARKER_RUN:
            shown = "".join(f"[{n}]" for n in run[:3]) + "…" + f"[{run[-1]}]"
            found.setdefault((shown, 0, 0), CitedSpan(shown, 0, 0, written, rote=f"a run of {len(run)} snippet "
                                                      f"numbers, more than a sentence can rest on"))
        else:
            numbers += [(n, written) for n in run]
    numbers += [(int(m.group(1)), m.group(0)) for m in _SNIPPET_WORD.finditer(visible)]
    for n, written in numbers:
        if 1 <= n <= len(snippets):
            s = snippets[n - 1]
            found.setdefault((s.path, s.start_line, s.end_line), CitedSpan(s.path, s.start_line, s.end_line, written))
        else:
            found.setdefault((f"[{n}]", 0, 0), CitedSpan(f"[{n}]", 0, 0, written, rote=f"the prompt had no snippet [{n}]"))
    return list(found.values())


def parse_loose(text: str, snippets: Sequence[Snippet], known_paths: Iterable[str] = ()) -> list[CitedSpan]:
    """Citations written in the facts' layout (`src/core.py (L929 call; L1415 call)`, one per line) and
    line numbers without a path ("lines 252 to 292") that exactly one snippet holds."""
    visible = _hide_code(text)
    known = set(known_paths)
    names = {p.rsplit("/", 1)[-1] for p in known}
    found: dict[tuple[str, int, int], CitedSpan] = {}
    used: list[tuple[int, int]] = []
    for m in _FACT_LAYOUT.finditer(visible):
        path = m.group("path")
        if not _citable_path(path, known, names):
            continue
        used.append(m.span())
        for line in re.findall(r"\bL(\d+)\b", m.group("inner")):
            found.setdefault((path, int(line), int(line)), CitedSpan(path, int(line), int(line), m.group(0)))
    for m in _LINES_ONLY.finditer(visible):
        if any(a <= m.start() < b for a, b in used) or _CITATION.search(visible[max(0, m.start() - 120):m.end()]):
            continue  # part of a path citation already read
        start = int(m.group(1))
        end = int(m.group(2)) if m.group(2) else start
        if end < start:
            continue
        holders = [s for s in snippets if s.start_line <= start and end <= s.end_line]
        if len({s.path for s in holders}) == 1:
            s = holders[0]
            found.setdefault((s.path, start, end), CitedSpan(s.path, start, end, m.group(0)))
    return list(found.values())


def parse_path_mentions(text: str, snippets: Sequence[Snippet]) -> list[CitedSpan]:
    """A file of the prompt named without lines ("the `Worker` class in `src/app/worker.py`", or a tail of its
    path that names no other snippet's file, `app/worker.py`): the model cites that file's snippet; of
    several, the one sharing the most code words with the sentence, else the best-ranked. Code blocks do
    not count."""
    prose = blank_code(text, inline=False)
    by_path: dict[str, list[Snippet]] = {}
    for s in snippets:
        by_path.setdefault(s.path, []).append(s)
    found: dict[tuple[str, int, int], CitedSpan] = {}
    for path, own in by_path.items():
        # the path, or a tail of it at a folder boundary that no other snippet's path shares (`devtools/network.py`)
        parts = path.split("/")
        tails = [t for t in ("/".join(parts[i:]) for i in range(len(parts)))
                 if "." in t and sum(1 for other in by_path if other == t or other.endswith("/" + t)) == 1]
        if not tails:
            continue
        alternatives = "|".join(re.escape(t) for t in tails)  # longest first: the whole path wins
        for m in re.finditer(rf"(?<![\w/.-])(?:{alternatives})(?![\w/-]|\.\w)", prose):
            start = prose.rfind("\n", 0, m.start()) + 1
            end = prose.find("\n", m.end())
            line = prose[start:end if end >= 0 else len(prose)]
            words = _code_words(line)
            best = max(own, key=lambda s: (len(words & _code_words(s.text)), -own.index(s)))
            found.setdefault((best.path, best.start_line, best.end_line),
                             CitedSpan(best.path, best.start_line, best.end_line, m.group(0)))
    return list(found.values())


def take_echoed_lines(text: str, snippets: Sequence[Snippet]) -> tuple[str, list[CitedSpan]]:
    """Code the model quoted with the prompt's `849 | ` prefixes: the text without them, and a citation
    of the quoted lines wherever a snippet holds those numbers with that code. Only the lines of a closed
    fenced block count, as the Markdown parser finds it."""
    spans: list[CitedSpan] = []

    def fix(body: list[str]) -> list[str]:
        numbered = [_ECHOED.match(line) for line in body]
        if sum(1 for m in numbered if m) < max(1, int(0.6 * sum(1 for line in body if line.strip()))):
            return body
        quoted = [(int(m.group(2)), m.group(3)) for m in numbered if m]
        for s in snippets:
            own = s.text.splitlines()
            if all(s.start_line <= n <= s.end_line and own[n - s.start_line].strip() == code.strip() for n, code in quoted):
                first, last = min(n for n, _ in quoted), max(n for n, _ in quoted)
                spans.append(CitedSpan(s.path, first, last, f"{first} | …"))
                break
        return [(m.group(1) + m.group(3)) if m else line for m, line in zip(numbered, body)]

    out, pos = [], 0
    for code in code_regions(text):
        if code.kind == "fence" and code.closed and code.inner_end > code.inner_start:
            body = text[code.inner_start:code.inner_end]
            out += [text[pos:code.inner_start], "\n".join(fix(body.split("\n")))]
            pos = code.inner_end
    return "".join(out) + text[pos:], spans


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLAIN = frozenset("""a an and are as at be by can code class does for from function has have how if in into is it its
method module not of on or return returns self that the then this to uses using value when which with""".split())


def _code_words(text: str) -> set[str]:
    """Words that look like code (snake_case, CamelCase, dotted, or longer than 3 letters and not plain English)."""
    words = set()
    for w in _WORD.findall(text):
        for part in [w, *w.split(".")]:
            if len(part) >= 3 and part.lower() not in _PLAIN:
                words.add(part)
    return words


def _is_identifier(word: str) -> bool:
    return "_" in word or "." in word or bool(re.search(r"[a-z][A-Z]|[A-Z][a-z]+[A-Z]", word))


_STANDARD_MODULES = frozenset(sys.stdlib_module_names)
_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\(\))?`|\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\b")


def unknown_names(text: str, evidence: str, known: Callable[[str], bool]) -> list[str]:
    """Identifiers the answer names (in backticks, or CamelCase in prose) that neither the evidence nor the
    index (`known`) holds, each with the closest name from the evidence: "ShellCompletion (did you mean
    ShellComplete?)"."""
    seen = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", evidence))
    seen_lower = {w.lower() for w in seen}
    out: list[str] = []
    for m in _NAME.finditer(blank_code(text, inline=False)):
        name = m.group(1) or m.group(2)
        if not _is_identifier(name) and not m.group(1):
            continue
        if name in out or any(o.startswith(name + " ") for o in out):
            continue
        if name.split(".")[0] in _STANDARD_MODULES:
            continue  # `threading.Lock`: the standard library is not in the index, and not invented
        missing = next((part for part in name.split(".") if part.lower() not in seen_lower and not known(part)), None)
        if missing is None:
            continue
        close = difflib.get_close_matches(missing, seen, n=1, cutoff=0.75)
        out.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return out


def verify_citations(cited: Iterable[CitedSpan], snippets: Sequence[Snippet], indexed_paths: Iterable[str],
                     line_count: Callable[[str], int | None], sites: Iterable[tuple[str, int]] = (),
                     definitions: Iterable[tuple[str, int, int]] = ()) -> list[Citation]:
    """`verified` only when the file is in the index, the lines exist in it, and every cited line lies
    inside the snippets given to the model. A path given as a unique suffix of a snippet's path
    (`encoder.py`) is completed. Unverified citations carry the reason. `sites` are the reference sites
    the graph facts listed: a citation of one of those lines is verified too, and so is one within the
    `definitions` the facts stated ((path, start, end): the symbol's whole range, as `refs` gives it, even
    where its snippet was cut to the budget). A snippet number the prompt
    did not have, or a run of them written by rote (a CitedSpan with `rote`), is reported as such: never verified."""
    indexed = set(indexed_paths)
    covered: dict[str, list[tuple[int, int]]] = {}
    for s in snippets:
        covered.setdefault(s.path, []).append((s.start_line, s.end_line))
    for path, line in sites:
        covered.setdefault(path, []).append((line, line))
    for path, start, end in definitions:
        covered.setdefault(path, []).append((start, end))
    out = []
    for c in cited:
        if c.rote:
            out.append(Citation(c.path, 0, 0, verified=False, reason=f"written by rote: {c.rote}", rote=True))
            continue
        path, note = c.path, ""
        if path not in indexed:
            completions = sorted({p for p in covered if p.endswith("/" + path)})
            if len(completions) == 1:
                path, note = completions[0], f" (path completed from {c.path})"
        reason = _check(path, c.start_line, c.end_line, indexed, covered, line_count)
        out.append(Citation(path, c.start_line, c.end_line, verified=not reason, reason=reason or note.strip(" ()")))
    return out


def _check(path: str, start: int, end: int, indexed: set[str], covered: dict[str, list[tuple[int, int]]],
           line_count: Callable[[str], int | None]) -> str:
    if path not in indexed:
        return "file not in the index"
    if start < 1 or end < start:
        return "not a valid line range"
    total = line_count(path)
    if total is None:
        return "file cannot be read"
    if end > total:
        return f"the file has only {total} lines"
    spans = sorted(covered.get(path, ()))
    line = start
    for s, e in spans:
        if s <= line <= e:
            line = e + 1
        if line > end:
            return ""
    return "lines outside the snippets given to the model"


__all__ = ["CitedSpan", "parse_citations", "parse_numbered", "parse_loose", "parse_path_mentions", "take_echoed_lines",
           "unknown_names", "verify_citations", "MAX_MARKER_RUN"]
