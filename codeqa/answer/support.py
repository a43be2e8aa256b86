"""Support: do the lines a sentence rests on say what the sentence names?

`verified` (citations.py) says a citation's lines exist and were shown to the model; it says nothing about what
they contain. This module checks the next thing a reader assumes: that the lines mention what the sentence
names. A sentence's names are the identifiers (`rich_utils`, `Typer.__init__`, `EncoderClass`, `tokenize()`, a
capitalised word inside a sentence: `Redis`, `HTTP`), file names (`main.py`) and literals (`"--install"`) it
writes, code spans included, its citations left out. A name is mentioned by lines when they hold it as a
word, as a part of an identifier (`HTTP` in `HTTPAdapter`), or in their file's path.

    check_support  each model citation: supported when, for each sentence citing it, one cited span mentions
                   every name the sentence writes, and these lines mention one of them;
                   the reason names what is missing ("cited, but these lines do not mention `rich_utils`")
    attribute      each uncited sentence that names code: the snippet that mentions every one of its names and
                   most of its content words, shown as `attributed`, never as cited
    claims         the sentences that name code, each with whether counted evidence supports it

Sentences that name nothing ("It returns a list [2].") cannot be checked: their citations are `supported=None`.
Code blocks are not sentences: markdown-it (CommonMark) finds them, as a reader's renderer does.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from markdown_it import MarkdownIt

from ..types import Citation, Claim, Snippet
from .citations import _WORD as _DOTTED  # a dotted name: `Route.matches`
from .citations import (_CITATION, _MARKER, _NUMBERED, CitedSpan, parse_citations, parse_loose, parse_numbered,
                        parse_path_mentions, source_or_document)

# Attribution counts as support only when its precision, measured on hand-labelled sentences of real answers
# (bench/attribution_precision.py), reaches the floor on enough attributions. Measured 2026-12-07 on
# bench/questions/attribution-labels-real.jsonl (94 sentences of sixteen Qwen2.5-Coder-1.5B answers on streamlink,
# eight under the citation grammar): 18 of 21 attributions right (86%, recall 18 of 56), below the floor; attributed
# spans are shown, and never make an answer grounded. The three wrong ones matched a sentence's names to lines that
# hold them but not its claim (a half-true "inherits X and decrypts", a guessed use of an attribute, a test class
# it does not use). (The same labels: a "do not mention" flag was right 55 of 57 times; "its lines mention what it
# names" held the claim 10 of 23 times: names, not meaning, are checked.)
ATTRIBUTION_PRECISION_FLOOR = 0.9
MIN_ATTRIBUTIONS_MEASURED = 20
MEASURED_ATTRIBUTIONS = (18, 21)  # (right, attributed)
ATTRIBUTION_COUNTS = (MEASURED_ATTRIBUTIONS[1] >= MIN_ATTRIBUTIONS_MEASURED
                      and MEASURED_ATTRIBUTIONS[0] / MEASURED_ATTRIBUTIONS[1] >= ATTRIBUTION_PRECISION_FLOOR)
CONTENT_SHARE = 0.6  # of a sentence's content words, the share its attributed snippet must hold
NOT_CHECKED = "nothing to check: its sentence names no identifier, file or literal"


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str  # as written, its citations included


@dataclass(frozen=True)
class Name:
    text: str  # as the sentence writes it, `()` left out
    kind: str  # "identifier" | "file" | "literal"


# ---- sentences ---------------------------------------------------------------------------------------------

_END = re.compile(r"[.!?](?=\s|$)|\n")
_RUN_ALONE = re.compile(rf"\s*(?:{_MARKER}\s*)+[.!?]?\s*", re.IGNORECASE)
_RUN_END = re.compile(rf"(?:{_MARKER}\s*)+[.!?]?\s*$", re.IGNORECASE)
_RUN_AT_LINE_START = re.compile(rf"^[ \t]*(?:{_MARKER}[ \t]*)+", re.MULTILINE | re.IGNORECASE)
_RUN_ONLY = re.compile(rf"[ \t]*(?:{_NUMBERED.pattern})[ \t]*[.!?]?", re.IGNORECASE)


def prose(text: str) -> str:
    """`text` with code blocks (fenced and indented, as CommonMark reads them) blanked, same length."""
    lines = text.split("\n")
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block") and token.map:
            first, last = token.map
            for i in range(first, min(last, len(lines))):
                lines[i] = " " * len(lines[i])
    return "\n".join(lines)


def sentences(text: str) -> list[Sentence]:
    """The sentences of an answer's prose. A sentence ends at `.`, `!` or `?` before a space, or at a line's
    end; a run of citations written just after its end on the same line ("… the options. [2]") belongs to it,
    and one that starts a line stands alone ("…criteria.\n\n[6] The …": the 1.5B's numbers for the lines above)."""
    visible = prose(text)
    alone = [m.end() for m in _RUN_AT_LINE_START.finditer(visible)]
    out: list[Sentence] = []
    start = 0
    while start < len(visible):
        m = _END.search(visible, start)
        end = min([m.end() if m else len(visible), *(a for a in alone if a > start)])
        tail = _RUN_ONLY.match(visible, end) if m and m.end() == end and m.group(0) != "\n" else None
        if tail and visible[end:tail.end()].strip():
            end = tail.end()
        piece = visible[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append(Sentence(start + lead, end, text[start + lead:end].rstrip()))
        start = end
    return out


# ---- names a sentence writes -------------------------------------------------------------------------------

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_QUOTED = re.compile(r"(?<![\w])[\"'“‘]([^\"'“”‘’\n]{1,40})[\"'”’](?![\w])")
_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
_WORD = re.compile(rf"{_IDENT}(?:\.{_IDENT})*(?:\(\))?")
# capitalised words that name nothing in the code when they stand inside a sentence
_COMMON_CAPITALS = frozenset("""I A An The This That These Those It Its If In On Of For To When While With And Or But
Note Also However Then Here There Python Yes No True False None Finally First Second Third Each Both It's""".split())
_CODE_STOP = frozenset(keyword.kwlist) | {"self", "cls", "args", "kwargs", "str", "int", "bool", "dict", "list",
                                          "None", "True", "False", "return"}
_STOP = frozenset("""a an and are as at be been by can could does do for from function functions has have how if in
into is it its method methods module class classes object not of on or return returns self that the then this
these those to uses used using value values when which with will would each all any also used both other such
there their they them than was were what where who why may might must should only more most some very just like
file files line lines code snippet snippets call calls called""".split())


def _is_file(word: str) -> bool:
    return "." in word and source_or_document(word)


def _identifier_like(word: str) -> bool:
    return ("_" in word or "." in word or bool(re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|[a-z][0-9]", word))
            or word.endswith("()"))


def names(sentence: str) -> list[Name]:
    """The identifiers, file names and literals `sentence` writes, in order, its citations left out."""
    text = _NUMBERED.sub(" ", sentence)
    text = _CITATION.sub(" ", text)
    found: dict[str, Name] = {}

    def add(word: str, kind: str) -> None:
        word = word.removesuffix("()").strip(".")
        if word and word not in _CODE_STOP and word.lower() not in found:
            found[word.lower()] = Name(word, kind)

    for m in _CODE_SPAN.finditer(text):  # inside code every word is code
        inner = m.group(2).strip()
        for q in _QUOTED.finditer(inner):
            add(q.group(1), "literal")
        inner = _QUOTED.sub(" ", inner)
        if _is_file(inner) and " " not in inner:
            add(inner, "file")
            continue
        for o in _OPTION.finditer(inner):
            add(o.group(0), "literal")
        for w in _DOTTED.findall(inner):
            if not keyword.iskeyword(w) and not w.isdigit():
                add(w, "identifier")
    text = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)
    for q in _QUOTED.finditer(text):
        add(q.group(1), "literal")
    text = _QUOTED.sub(" ", text)
    for o in _OPTION.finditer(text):
        add(o.group(0), "literal")
    for m in re.finditer(r"[\w./-]+", text):
        if _is_file(m.group(0).strip("./")) and "/" in m.group(0) or _is_file(m.group(0).rstrip(".")):
            add(m.group(0).rstrip("."), "file")
    for m in _WORD.finditer(text):
        word = m.group(0)
        if _is_file(word.rstrip(".")):
            continue
        # the first word of a sentence, a list item or a "**Label**: Text" is capitalised whatever it is
        before = re.sub(r"[*#>`\"“”'(\[\]]", " ", text[:m.start()])
        starts = not re.search(r"[A-Za-z0-9]", before) or bool(re.search(r"(?:[:;!?]|\n|(?:^|\s)[-+•]|\d[.)])\s*$", before))
        if _identifier_like(word) or text[m.end():m.end() + 1] == "(":
            add(word, "identifier")
        elif word[0].isupper() and not starts and word not in _COMMON_CAPITALS and len(word) > 1:
            add(word, "identifier")
    return list(found.values())


def content_words(sentence: str) -> list[str]:
    """The words of `sentence` that carry its meaning: not stop words, three letters or more, citations out."""
    text = _CITATION.sub(" ", _NUMBERED.sub(" ", sentence))
    words = []
    for w in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
        if len(w) >= 3 and w.lower() not in _STOP and w.lower() not in words:
            words.append(w.lower())
    return words


# ---- what lines mention ------------------------------------------------------------------------------------

def _parts(identifier: str) -> list[str]:
    """`HTTPAdapter` -> http, adapter; `rich_utils` -> rich, utils; `Typer.__init__` -> typer, init."""
    out = []
    for piece in re.split(r"[._]+", identifier):
        out += re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", piece)
    return [p.lower() for p in out if p]


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[:-len(suffix)]
    return word


@dataclass(frozen=True)
class Lines:
    """What a span of code holds, as the checks look it up."""

    path: str
    text: str

    def __post_init__(self) -> None:
        idents = _DOTTED.findall(self.text) + _DOTTED.findall(self.path.replace("/", " "))
        words = {w.lower() for i in idents for w in [i, *i.split(".")]}
        parts = {p for i in idents for p in _parts(i)} | set(_parts(self.path))
        object.__setattr__(self, "_words", words)
        object.__setattr__(self, "_parts", parts)
        object.__setattr__(self, "_stems", {_stem(p) for p in parts | words})
        # a method's snippet starts indented, inside a class it does not show: `Context.invoke` is `invoke` there
        first = next((line for line in self.text.splitlines() if line.strip()), "")
        object.__setattr__(self, "_member", first[:1].isspace())

    def mentions(self, name: Name) -> bool:
        text = name.text
        if name.kind == "file":
            base = text.rsplit("/", 1)[-1]
            return (self.path == text or self.path.endswith("/" + text) or base in self.text
                    or base.rsplit(".", 1)[0].lower() in self._words)
        if name.kind == "literal":
            return text.lower() in self.text.lower() or text.lower() in self.path.lower()
        words, parts = self._words, self._parts
        pieces = [p for p in text.split(".") if p]
        if not pieces:
            return True
        last = pieces[-1].lower()
        if last not in words and not ("_" not in last and (last in parts or last.rstrip("s") in parts)):
            return False
        return self._member or all(p.lower() in words or p.lower() in parts for p in pieces[:-1])

    def holds(self, word: str) -> bool:
        return word in self._words or word in self._parts or _stem(word) in self._stems


# ---- model citations: supported or not ---------------------------------------------------------------------

def _same(c: Citation, span: CitedSpan) -> bool:
    return ((c.path == span.path or c.path.endswith("/" + span.path))
            and (c.start_line, c.end_line) == (span.start_line, span.end_line))


def cited_in(sentence: str, snippets: Sequence[Snippet], known_paths: Sequence[str]) -> list[CitedSpan]:
    """What one sentence cites, in the forms a model writes (numbers, path:lines, line numbers alone)."""
    return (parse_numbered(sentence, snippets) + parse_citations(sentence, known_paths)
            + parse_loose(sentence, snippets, known_paths) + parse_path_mentions(sentence, snippets))


def cited_sentences(text: str, snippets: Sequence[Snippet], known_paths: Sequence[str]
                    ) -> list[tuple[Sentence, list[CitedSpan]]]:
    """Each sentence with what it cites: its own citations, else those of the next run of numbers that stands on
    a line of its own ("… the segments.\n\n[1][2]"), or that ends its line ("A does x. It then y [2][4]"): a model
    writes that run for the uncited sentences above it (the citation grammar makes every line end with one)."""
    out: list[tuple[Sentence, list[CitedSpan]]] = []
    waiting: list[int] = []  # uncited sentences since the last citation
    for sentence in sentences(text):
        spans = cited_in(sentence.text, snippets, known_paths)
        ends_line = text[sentence.end:].split("\n", 1)[0].strip() == "" and _RUN_END.search(sentence.text)
        if _RUN_ALONE.fullmatch(sentence.text) or (spans and ends_line):
            for i in waiting:
                if _RUN_ALONE.fullmatch(sentence.text) or "\n" not in text[out[i][0].start:sentence.start]:
                    out[i] = (out[i][0], spans)
            waiting = []
        elif not spans:
            waiting.append(len(out))
        else:
            waiting = []
        out.append((sentence, spans))
    return out


def _quoted(names_: Sequence[Name]) -> str:
    return ", ".join(f"`{n.text}`" for n in names_[:4]) + (f" and {len(names_) - 4} more" if len(names_) > 4 else "")


def _header(path: str, start: int, body: str, snippets: Sequence[Snippet]) -> str:
    """The first line of the snippet the model was shown that encloses an indented span (a method's class:
    retrieval adds the header of a member's class), so `format` of `ProgressFormatter` is read as such."""
    first = next((line for line in body.splitlines() if line.strip()), "")
    indent = len(first) - len(first.lstrip())
    if not indent:
        return ""
    heads = [s for s in snippets if s.path == path and s.start_line < start]
    for s in sorted(heads, key=lambda s: -s.start_line):
        top = next((line for line in s.text.splitlines() if line.strip()), "")
        if len(top) - len(top.lstrip()) < indent and re.match(r"\s*(?:class|struct|impl|interface|trait)\b", top):
            return top + "\n"
    return ""


def check_support(text: str, citations: Sequence[Citation], snippets: Sequence[Snippet], known_paths: Sequence[str],
                  read: Callable[[str, int, int], str | None]) -> list[Citation]:
    """`citations` (the model's, verified) with `supported` and `support_reason` set from the sentences that
    cite them: a sentence is supported when one of its cited spans mentions every name it writes, and then
    each of its spans that mentions one of them supports it. `read(path, start, end)` gives the text of lines. Unverified citations are left unchecked:
    lines that were not shown support nothing."""
    texts: dict[int, Lines | None] = {}

    def lines_of(i: int) -> Lines | None:
        if i not in texts:
            c = citations[i]
            body = read(c.path, c.start_line, c.end_line)
            texts[i] = None if body is None else Lines(c.path, _header(c.path, c.start_line, body, snippets) + body)
        return texts[i]

    verdicts: dict[int, tuple[bool, str]] = {}
    for sentence, spans in cited_sentences(text, snippets, known_paths):
        wanted = names(sentence.text)
        mine = [i for i, c in enumerate(citations) if c.verified and not c.attributed and any(_same(c, s) for s in spans)]
        if not mine or not wanted:
            continue
        held = {i: [n for n in wanted if (lines_of(i) is not None and lines_of(i).mentions(n))] for i in mine}
        # the claim is in one place: some cited span mentions all the sentence names (names spread over two
        # spans, `DASHStream` in one and `process_segments` in the other, do not say that one has the other)
        whole = any(len(held[i]) == len(wanted) for i in mine)
        for i in mine:
            if not whole:
                missing = [n for n in wanted if n not in held[i]]
                verdict = (False, f"cited, but these lines do not mention {_quoted(missing)}")
            elif not held[i]:
                verdict = (False, f"cited, but these lines mention none of {_quoted(wanted)}")
            else:
                verdict = (True, "these lines mention " + _quoted(held[i]))
            if verdicts.get(i, (True, ""))[0]:  # one sentence the lines do not support is enough to say so
                verdicts[i] = verdict
    out = []
    for i, c in enumerate(citations):
        if not c.verified or c.attributed:
            out.append(c)
        elif i in verdicts:
            out.append(replace(c, supported=verdicts[i][0], support_reason=verdicts[i][1]))
        else:
            out.append(replace(c, supported=None, support_reason=NOT_CHECKED))
    return out


# ---- attribution -------------------------------------------------------------------------------------------

def attribute_sentence(sentence: str, snippets: Sequence[Snippet]) -> Snippet | None:
    """The snippet that mentions every name `sentence` writes and at least CONTENT_SHARE of its content
    words (the most of them; the better-ranked of equals), or None: a sentence that names no code is
    never attributed, since words alone do not show that a claim is in the lines."""
    wanted = names(sentence)
    if not any(n.kind == "identifier" for n in wanted) or len(sentence.split()) < 4:
        return None
    words = content_words(sentence)
    best, best_share = None, 0.0
    for s in snippets:
        lines = Lines(s.path, s.text)
        if not all(lines.mentions(n) for n in wanted):
            continue
        share = sum(lines.holds(w) for w in words) / len(words) if words else 1.0
        if share >= CONTENT_SHARE and share > best_share:
            best, best_share = s, share
    return best


def attribute(text: str, snippets: Sequence[Snippet], cited: Sequence[CitedSpan],
              known_paths: Sequence[str] = ()) -> list[CitedSpan]:
    """For each sentence that cites nothing, the snippet that holds its claim (`attribute_sentence`): its whole
    span, unless the model cited that span itself."""
    out: dict[tuple[str, int, int], CitedSpan] = {}
    for sentence, spans in cited_sentences(text, snippets, known_paths):
        if spans or _NUMBERED.search(sentence.text) or _CITATION.search(sentence.text):
            continue
        best = attribute_sentence(sentence.text, snippets)
        if best is not None:
            out.setdefault((best.path, best.start_line, best.end_line),
                           CitedSpan(best.path, best.start_line, best.end_line, sentence.text.strip()[:80]))
    already = {(c.path, c.start_line, c.end_line) for c in cited}
    return [c for key, c in out.items() if key not in already]


# ---- the whole check, as the answerer runs it ---------------------------------------------------------------

# the note AnswerStream appends ("[The answer was cut: …]", "[The answer was cut off: <error>]"): codeqa's words, not
# claims; only that note, so a model's own closing run of numbers ("…\n\n[1]") stays and cites the lines above it
_OWN_NOTES = re.compile(r"\n\n\[The answer was cut(?: off)?: [^\n]*\]\s*$")
_HOW = re.compile(r"^\W*how\b(?!\s+(?:many|much|often|long|big|large|old)\b)", re.IGNORECASE)


def model_text(text: str) -> str:
    """An LLM answer without the notes codeqa appends to it (how it was cut)."""
    return _OWN_NOTES.sub("", text)


def shallow(question: str, route: str, text: str) -> str | None:
    """Why an answer is too short for its question, or None: one sentence answering a "how" question (not a
    usage question, whose listed sites are the answer) leaves the how out."""
    if route == "usage" or not _HOW.search(question):
        return None
    said = [s for s in sentences(model_text(text)) if re.search(r"[A-Za-z]{2}", _NUMBERED.sub("", s.text))]
    return "one sentence answers a “how” question: the steps are likely missing" if len(said) <= 1 else None


def line_reader(snippets: Sequence[Snippet], file_lines: Callable[[str], list[str] | None]
                ) -> Callable[[str, int, int], str | None]:
    """`read(path, start, end)` for check_support: the lines as a snippet showed them, else from the file."""
    def read(path: str, start: int, end: int) -> str | None:
        for s in snippets:
            if s.path == path and s.start_line <= start and end <= s.end_line:
                return "".join(s.text.splitlines(True)[start - s.start_line:end - s.start_line + 1])
        lines = file_lines(path)
        return None if lines is None else "".join(lines[start - 1:end])
    return read


def attributed(citation: Citation, sentence: str) -> Citation:
    """A verified span attribution found, as shown: supported by construction, counted only when attribution's
    measured precision reaches the floor."""
    right, total = MEASURED_ATTRIBUTIONS
    why = (f"counted: attribution was right {right} times of {total} on real answers" if ATTRIBUTION_COUNTS else
           f"not counted as support: attribution's precision is measured on {total} real attributions ({right} right), "
           f"and counts from {MIN_ATTRIBUTIONS_MEASURED} at {ATTRIBUTION_PRECISION_FLOOR:.0%}")
    return replace(citation, attributed=True, supported=citation.verified,
                   reason=f"attributed: codeqa found the names and most words of an uncited sentence in these lines "
                          f"(“{sentence}”); {why}",
                   support_reason="these lines mention what the sentence names",
                   counted=citation.verified and ATTRIBUTION_COUNTS)


# ---- claims ------------------------------------------------------------------------------------------------

def claims(text: str, citations: Sequence[Citation], snippets: Sequence[Snippet],
           known_paths: Sequence[str]) -> list[Claim]:
    """Each sentence that names code, and whether counted evidence supports it: a model citation that is
    verified and supported, or (when ATTRIBUTION_COUNTS) a supported attribution of its own."""
    out = []
    for sentence, spans in cited_sentences(text, snippets, known_paths):
        if not names(sentence.text):
            continue
        ok = any(c.counted and any(_same(c, s) for s in spans) for c in citations if not c.attributed)
        if not ok and not spans and ATTRIBUTION_COUNTS:
            best = attribute_sentence(sentence.text, snippets)
            ok = best is not None and any(c.counted and c.attributed and (c.path, c.start_line, c.end_line)
                                          == (best.path, best.start_line, best.end_line) for c in citations)
        out.append(Claim(" ".join(sentence.text.split())[:120], ok))
    return out


__all__ = ["cited_sentences", "model_text", "shallow", "line_reader", "attributed", "Sentence", "Name", "Lines", "sentences", "names", "content_words", "check_support",
           "attribute", "attribute_sentence", "claims", "prose", "ATTRIBUTION_COUNTS", "ATTRIBUTION_PRECISION_FLOOR",
           "MEASURED_ATTRIBUTIONS", "MIN_ATTRIBUTIONS_MEASURED", "NOT_CHECKED"]
