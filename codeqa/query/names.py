"""Names stage: a parsed question's names matched to the symbols they mean, and the route it takes.

    ParsedQuestion (question.py) + the index's symbols (lookup.GraphQueries) + its files
      --route_question--> RoutedQuestion(parsed, files it names, names: NameMatch, strongest first, route)

The route is the question's intent when the names it was matched to carry it:
    usage         "how/where is X used", "who calls X": X must be a name of strength 3 or more, or the subject
    relationship  "connection between A and B": two names that mean different symbols
    search        everything else
A RoutedQuestion is what travels on to the evidence (evidence.py, searcher.py): nothing downstream reads the
question's words for names again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import AbstractSet, Callable, Sequence

from ..types import Symbol, name_key
from .choose import Mention, choose_symbols, container_ends, is_container
from .lookup import GraphQueries
from .question import FILE_NAME, ParsedQuestion


@dataclass(frozen=True)
class NameMatch:
    """A name found in a question and the symbols it is taken to mean.

    strength: 4 backticked or qualified (`EncoderClass.encode`), 3 identifier-shaped (CamelCase,
    snake_case) or in a subject slot ("the echo function"), 2 spelled out over several words
    ("encoder class"), 1 one plain word. start/end: where the name is in the question.
    others: definitions that matched as well as `symbols` (the name stayed ambiguous).
    passed_over: same-named definitions the question's words and the ranking set aside (Choice.passed_over).
    """

    text: str
    strength: int
    start: int
    end: int
    symbols: tuple[Symbol, ...]
    others: tuple[Symbol, ...] = ()
    subject: bool = False  # it stands where a usage question puts its subject ("how is X used")
    passed_over: tuple[Symbol, ...] = ()


@dataclass(frozen=True)
class RoutedQuestion:
    """A question parsed once and matched to one index: what retrieval's later stages read.

    files: indexed files the question names (`cli.py`, `app/cli.py`), as (path, start, end of the mention).
    names: its names matched to symbols, strongest first (match_names). route: usage | relationship | search.
    other: the relationship's other end (second_name), None on the other routes.
    """

    parsed: ParsedQuestion
    files: tuple[tuple[str, int, int], ...]
    names: tuple[NameMatch, ...]
    route: str
    other: NameMatch | None = None


def route_question(parsed: ParsedQuestion, graph: GraphQueries, indexed_paths: AbstractSet[str]) -> RoutedQuestion:
    """The names stage: the files and the names of `parsed` found in the index, and the route they allow."""
    files = files_named(parsed.text, indexed_paths)
    names = match_names(parsed, graph, files)
    route = route_of(parsed, names)
    other = second_name(names) if route == "relationship" else None
    return RoutedQuestion(parsed, tuple(files), tuple(names), route, other)


def files_named(question: str, indexed_paths: AbstractSet[str]) -> list[tuple[str, int, int]]:
    """Indexed files the question names (`cli.py`, `app/cli.py`): (path, start, end of the mention)."""
    found = []
    for m in FILE_NAME.finditer(question):
        token = m.group(1).removeprefix("./")
        found.extend((p, m.start(1), m.end(1)) for p in sorted(p for p in indexed_paths
                                                                 if p == token or p.endswith("/" + token)))
    return found


def match_names(parsed: ParsedQuestion, graph: GraphQueries, files: Sequence[tuple[str, int, int]]) -> list[NameMatch]:
    """The names of a question matched to the symbols they mean, strongest first.

    A file the question names (`files`) narrows a name defined in several files to that file; among the rest,
    `choose_symbols` picks one qualified name and keeps the equally good others as `others`.
    """
    keys = [name_key(m.text) for m in parsed.mentions if "." not in m.text and ":" not in m.text]
    by_key = graph.symbols_by_key(keys)
    named_files = {p for p, _, _ in files}
    chosen: dict[tuple[int, int], NameMatch] = {}
    for m in parsed.mentions:
        symbols = (graph.find_symbols(m.text) if ("." in m.text or ":" in m.text)
                   else by_key.get(name_key(m.text), []))
        in_files = [s for s in symbols if s.path in named_files]
        choice = choose_symbols(m, in_files or symbols)
        if choice.symbols:
            chosen[(m.start, m.end)] = NameMatch(m.text, m.strength, m.start, m.end, choice.symbols, choice.others,
                                               passed_over=choice.passed_over)
    kept = select_mentions(parsed, lambda m: (m.start, m.end) in chosen, files)
    out: dict[tuple[str, ...], NameMatch] = {}
    for m in kept:
        # "encoder class" in "how is the encoder class used" holds the subject slot's word
        subject = m.subject or any(o.subject and m.start <= o.start and o.end <= m.end for o in parsed.mentions)
        match = replace(chosen[(m.start, m.end)], subject=subject)
        key = tuple(s.id for s in match.symbols)
        if key not in out or out[key].strength < match.strength:
            out[key] = match
    return list(out.values())


def route_of(parsed: ParsedQuestion, matches: Sequence[NameMatch]) -> str:
    """"usage", "relationship" or "search": the question's intent, when the names it was matched to carry it."""
    route = parsed.intent if matches else "search"
    if route == "usage" and matches[0].strength < 3 and not matches[0].subject:
        route = "search"  # "how are strings escaped when a value is created": no symbol is the subject
    if route == "relationship" and second_name(matches) is None:
        route = "search"  # one name, or several meaning the same symbols: no second end to find paths to
    return route


def second_name(matches: Sequence[NameMatch]) -> NameMatch | None:
    """The first match after the first that names other symbols than it: the other end of a relationship."""
    first = {s.name for s in matches[0].symbols}
    return next((m for m in matches[1:] if {s.name for s in m.symbols} != first), None)


def select_mentions(parsed: ParsedQuestion, names_something: Callable[[Mention], bool],
                    files: Sequence[tuple[str, int, int]] = ()) -> list[Mention]:
    """The mentions that stand, given which of them name a symbol (`names_something`), strongest first.

    A mention inside a longer or stronger one that names something is dropped (`EncoderClass.encode`
    does not also mean every `encode`), and so is one inside a file of the index the question names
    (`files`: path, start, end), and the
    container of another mention ("Command" in "the invoke method of Command"). One plain word is a name
    only in a usage question that names nothing better.
    """
    found = [m for m in parsed.mentions if names_something(m)]
    covered = _covered_spans([(m.start, m.end, m.strength) for m in found] + [(s, e, 5) for _, s, e in files])
    containers = container_ends(found)
    kept = [m for m in found if (m.start, m.end, m.strength) not in covered and not is_container(m, containers)]
    if any(m.strength >= 2 for m in kept) or parsed.intent != "usage":
        kept = [m for m in kept if m.strength >= 2]
    return kept


def _covered_spans(spans: Sequence[tuple[int, int, int]]) -> set[tuple[int, int, int]]:
    """The spans (start, end, strength) that lie inside a longer span, or under a stronger one at the same place.

    One pass over the starts in order: a span is inside a longer one when a span that starts before it reaches
    its end, or one that starts with it ends later (comparing every pair was quadratic in a long question)."""
    strongest: dict[tuple[int, int], int] = {}
    farthest_at: dict[int, int] = {}
    for start, end, strength in spans:
        strongest[(start, end)] = max(strongest.get((start, end), strength), strength)
        farthest_at[start] = max(farthest_at.get(start, end), end)
    reach_before: dict[int, int] = {}  # start -> the farthest end of the spans that start before it
    reach = -1
    for start in sorted(farthest_at):
        reach_before[start] = reach
        reach = max(reach, farthest_at[start])
    return {(start, end, strength) for start, end, strength in spans
            if reach_before[start] >= end or farthest_at[start] > end or strongest[(start, end)] > strength}


__all__ = ["NameMatch", "RoutedQuestion", "route_question", "files_named", "match_names", "route_of", "second_name",
           "select_mentions"]
