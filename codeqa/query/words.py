"""The words of a query as search uses them: its code terms, its prose keywords, and crude stems.

    code_terms("how does `parse_args` use Context.obj")  -> ["parse_args", "Context.obj"]
    code_share(query, terms)                              -> the share of the query that is code
    prose_keywords(query)                                 -> its words minus STOP_WORDS (BM25 without vectors)
    question_stems / name_stems / stems                   -> stems that match a question word to a file or symbol name
"""

from __future__ import annotations

import re
from typing import Sequence

_SUFFIXES = ("ings", "ing", "ers", "er", "ed", "es", "s")
_CODE_TERM = re.compile(r"`[^`]+`|(?<!\w)\"[^\"]{3,}\"(?!\w)|(?<!\w)'[^']{3,}'(?!\w)|[\w./-]+\.[A-Za-z]{1,5}\b|[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+"
                        r"|\b[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*\b|\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b|\b\w+\(\)")

# Words of a question that say nothing of the code it asks about (BM25 over a whole question, phase 1)
STOP_WORDS = frozenset("""a an and are as at be been being but by can could did do does doing done for from get gets
had has have how i if in into is it its me my of on or our should so than that the their them then there these they
this those to was we were what when where which while who whom why will with would you your code function functions
method methods class classes file files implemented implement work works happen happens used use uses""".split())


def prose_keywords(query: str) -> str:
    """A question's words for BM25 when dense vectors are missing: the words that say what it is about."""
    return " ".join(w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query) if w.lower() not in STOP_WORDS)


def inflections(word: str) -> list[str]:
    """`word` (lower case) and the plain forms its crude stem (stem()) can stand for: matches -> match, matche;
    handled -> handl, handle; retries -> retri, retrie, retry. Most are not words and match nothing; the
    point is the one that is, because code names a thing `match` or `handle` where a question writes
    "matches" or "handled", and the keyword index holds words as written."""
    word = word.lower()
    base = stem(word)
    if base == word:  # nothing to strip: map, full
        return [word]
    forms = [word, base, base + "e"] + ([base[:-1] + "y"] if base.endswith("i") else [])
    return list(dict.fromkeys(forms))


def code_terms(query: str) -> list[str]:
    """Tokens of a query that are code, not prose: `quoted`, "a string", snake_case, camelCase, a.b, f(), file.ext."""
    terms = [t.strip("`'\"()") for t in _CODE_TERM.findall(query)]
    return [t for t in terms if len(re.sub(r"\W", "", t)) >= 3]  # not "e.g." or "i.e."


def code_share(query: str, terms: Sequence[str]) -> float:
    """The share of a query's words that are inside its code terms (0: prose, 1: all code)."""
    words = len(re.findall(r"\w+", query)) or 1
    return min(1.0, sum(len(re.findall(r"\w+", t)) for t in terms) / words)


def stem(word: str) -> str:
    """A crude stem, enough to match a file name to a question word: spinners/spinner, parsed/parser, styles/style."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[:-len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def stems(text: str) -> list[str]:
    """The stem of every word of three letters or more in `text`, in order."""
    return [stem(w) for w in re.findall(r"[A-Za-z]{3,}", text)]


def question_stems(query: str) -> list[str]:
    """The stems of a question's content words, and of each two neighbours written together ("file size" -> filesize)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", query)]
    content = [w for w in words if len(w) >= 3 and w not in STOP_WORDS]
    pairs = [a + b for a, b in zip(words, words[1:]) if len(a) >= 3 and len(b) >= 3]
    return list(dict.fromkeys(stem(w) for w in content + pairs))


def name_stems(name: str) -> set[str]:
    """Stems of the words of a symbol name, split at dots, underscores and case: OptionParser.parse_args ->
    {option, pars, arg}."""
    return {stem(w) for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name) if len(w) >= 3}


# words that start or end no phrase an acronym stands for
_GRAMMAR_WORDS = frozenset("""a an the of to in on at by for from into with and or but is are be was were it its this that these
those which what when where why how does do did can will""".split())


def acronyms(text: str) -> set[str]:
    """The initials of each run of three or four words that neither starts nor ends with a grammar word,
    lower case: "the least-recently-used cache" -> lru (not tlru), "time to live" -> ttl, "first in first out"
    -> fifo, and every other such run: the caller matches them against names."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
    return {"".join(w[0] for w in run) for n in (3, 4) for i in range(len(words) - n + 1)
            if (run := words[i:i + n])[0] not in _GRAMMAR_WORDS and run[-1] not in _GRAMMAR_WORDS}


def name_acronyms(name: str) -> set[str]:
    """The words of a symbol name that can be an acronym, lower case: capital runs (LRUCache -> lru,
    HTTPServer -> http) and short snake-case words (ttl_cache -> ttl), three or four letters."""
    caps = re.findall(r"[A-Z]{3,4}(?=[A-Z][a-z]|[^A-Za-z]|$)", name)
    snake = [w for part in name.split(".") if "_" in part.strip("_") for w in part.split("_") if w.islower()]
    return {w.lower() for w in caps + [w for w in snake if 3 <= len(w) <= 4]}
