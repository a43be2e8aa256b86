"""Question understanding: what a question asks for and which symbol it is about, from its words alone.

    question --parse_question--> ParsedQuestion(intent, mentions: the names it uses, each with the
             kind word next to it ("the echo function"), its container ("the invoke method of
             Command", "the Parser class in core") and whether it sits where the subject goes
             ("how is X used", "who calls X"); and, read when a search first asks, rank_query: what the
             search reads of it (RankQuery: its code terms, a question in words?, about behaviour?, its deed))
    mention + the symbols an index holds under its name --choose_symbols (choose.py)--> Choice(symbols, others)

Everything here is plain string work: no index, no model. names.py looks the mentions up in the
index (choose.py ranks what it finds) and routes on `intent`. The work
grows linearly with the question (bench/question_length.py), and the Retriever refuses one longer than
CODEQA_MAX_QUESTION_CHARS before any (check_question_length).

Rules, each tested on question strings in tests/test_question.py:
- A name is a name when written as code (`x`, snake_case, CamelCase, a.b), spelled over several words
  ("encoder class" -> EncoderClass), or when it stands in a subject slot (the noun next to "function",
  "class" or "method"; what follows "how is", "where is", "who calls"; there a bare verb that names
  functions as often, get/set/run/call/main, counts too). A plain English word anywhere else ("output",
  "command", "options") is never a name on its own.
- A qualifier narrows: "the invoke method of Command" keeps members of Command; "in core" keeps
  symbols whose path or parent has that word; "function"/"class"/"method" keeps that kind.
- Which definition a name shared by several symbols means is choose.py's part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Sequence

from ..errors import QuestionTooLongError
from ..types import name_key
from .words import code_share, code_terms
from .choose import Choice, Mention, choose_symbols, container_ends, is_container, matching_symbols, rank_key

# ---- intents -------------------------------------------------------------------------------------

# what may stand between a question's words and the verb they go with ("where ... is X used"): at most this much of
# a line. An unbounded gap made the search from every "where" run to the line's end, quadratic in a long question
_GAP = r".{0,300}"
# "which functions", "which parts of the code": the asker of a "which ... call X" question
_WHICH = r"\w+(?:\s+of\s+(?:the\s+)?\w+)?"
_PARTICIPLE = (r"(used|called|invoked|instantiated|referenced|imported|constructed|created|implemented|"
               r"subclassed|extended|overridden|inherited|raised|caught|handled|registered|triggered)")
USAGE_PATTERN = re.compile(
    r"\b(how|where)\s+(is|are|was|were)\b" + _GAP + r"\b" + _PARTICIPLE + r"\b"
    r"|\bwhere\b" + _GAP + r"\b" + _PARTICIPLE + r"\b|\bwhere\s+(do|does|did|can)\s+(i|we|you|they|people|\w+)\s+(use|call|get called|get used)\b"
    r"|\bwhere\s+(do|does|did)\b" + _GAP + r"\bget\s+(called|used|invoked|instantiated|created)\b"
    r"|\bwhere\s+(do|does|did|can)\b" + _GAP + r"\b(use|call|invoke|raise|throw|catch|instantiate|import|subclass)\b"
    r"|\bhow\s+(do|can|should|would|to)\s+(i|we|you|one)?\s*(use|call)\b|\bhow to (use|call)\b"
    r"|\bwho\s+(calls|uses|imports|instantiates|creates|invokes|subclasses|extends|references)\b"
    r"|\b(callers|usages?|uses|references?|call sites?|instances|instantiations) (of|to)\b"
    r"|\bwhat\s+(implements|extends|subclasses|inherits|calls|uses|imports|instantiates|invokes)\b"
    r"|\bwhich\s+" + _WHICH + r"\s+(call|use|implement|import|extend|inherit|invoke)s?\b|\b(implementations|subclasses) of\b"
    r"|\bwhere\s+(is|are)\b" + _GAP + r"\b(used|called)\b|\bwhat\s+(code|functions?|methods?|classes)\s+(calls?|uses?)\b",
    re.IGNORECASE)
RELATION_PATTERN = re.compile(r"\b(connection|relationship|relation|related|relate|interact|link|between)\b", re.IGNORECASE)
INHERITANCE_QUESTION = re.compile(r"\b(implement\w*|extend\w*|subclass\w*|inherit\w*|derive\w*)\b", re.IGNORECASE)
SECONDARY_WORDS = re.compile(r"\b(tests?|tested|testing|examples?|samples?|demos?|docs?|documentation|readme|guide|tutorial)\b",
                             re.IGNORECASE)

# "How does ...", "Where is the error raised when ...?": a question in words, not a name or a description
_QUESTION_START = re.compile(r"^\W*(how|what|where|why|when|which|who|whose|does|do|did|is|are|can|could|should|would)\b",
                             re.IGNORECASE)


def is_question(text: str) -> bool:
    """Whether a query is asked as a question (a first word that asks, or a closing question mark).

    A docstring's description ("Return the parsed value") and a bare name (`parse_args`) are not.
    """
    stripped = text.strip()
    return stripped.endswith("?") or _QUESTION_START.match(stripped) is not None


# "How does the router pick a rule?", "What happens when the cache is full?": asks how code behaves; also after a
# clause that sets the scene ("After an attempt finishes, how does tenacity decide ...?")
_BEHAVIOUR_START = re.compile(r"^\W*(?:[^?,;]{3,100},\s*)?(?:how\b(?!\s+(?:many|much|often|long)\b)|(?:where|when)\s+(?:does|do|is|are|gets?)\b"
                              r"|what\s+happens\b|at\s+what\s+point\b)", re.IGNORECASE)


def asks_behaviour(text: str) -> bool:
    """Whether a question asks how code behaves ("How does ...", "Where is ... done?", "What happens when
    ...?"), so that the code doing it answers it, not a name's definition or a description."""
    return _BEHAVIOUR_START.match(text.strip()) is not None


# "How are options parsed from the command line?": a be-verb question whose deed is a participle
_DEED_QUESTION = re.compile(r"^\W*(?:how|where|when|why|at what point)\s+(?:is|are|was|were|gets?|got)\s+(?P<rest>.+)$",
                            re.IGNORECASE)
_DEED = re.compile(r"\b([A-Za-z]{3,}ed|built|made|sent|written|kept|found|shown|drawn|thrown|taken|chosen|bound|split|read|run|set)"
                   r"(?=\s*(?:[?.!,;:]|$)|\s+(?:from|into|in|on|onto|to|by|with|for|when|after|before|at|out|up|over|"
                   r"through|via|during|against|per|if|so|once|while|between|and|or|the|a|an)\b)", re.IGNORECASE)
# participles that say a question is about usage or about nothing in particular, not what the code does
_VAGUE_DEEDS = frozenset(("used", "called", "based", "needed", "supposed", "required", "related", "involved",
                          "concerned", "expected", "allowed", "intended", "designed", "structured", "organized",
                          "organised", "implemented", "handled", "done", "made"))


def question_deed(question: str) -> str | None:
    """The deed a "how is/are X <participle>" question asks about, lower case: "parsed" in "How are options
    parsed from the command line?", "pickled" in "How are slotted instances pickled?". The participle is
    first one that ends a clause (a preposition, an article or the end follows it), so an adjective
    before a noun ("slotted instances") is not taken, nor the deed of a clause that follows ("decoded
    when it is gzipped" -> "decoded"). None when the question has no such word, or only a
    vague one ("used", "handled", "implemented": the usage route and the words around them decide)."""
    m = _DEED_QUESTION.match(question.strip())
    if m is None:
        return None
    deeds = [w.lower() for w in _DEED.findall(m.group("rest"))]
    deed = deeds[0] if deeds else None
    return None if deed is None or deed in _VAGUE_DEEDS or deed in ARTICLES else deed


KEYWORD_CODE_SHARE = 0.5  # a query at least this much code (words.code_share) is code, not a question in words


@dataclass(frozen=True)
class RankQuery:
    """What the search and its rankers read of a query (searcher.py, rankers.py): its code terms and their share
    of it; asked: a question in words (not mostly code); behaviour: one about how code behaves (asks_behaviour:
    lead.py's steps apply); deed: a question in words' deed (question_deed); secondary: it names tests,
    examples or docs."""

    text: str
    terms: tuple[str, ...]
    share: float
    asked: bool
    behaviour: bool = False
    deed: str | None = None
    secondary: bool = False

    @classmethod
    def of(cls, query: str) -> "RankQuery":
        terms = code_terms(query)
        share = code_share(query, terms)
        asked = is_question(query) and share < KEYWORD_CODE_SHARE
        return cls(query, tuple(terms), share, asked, asked and asks_behaviour(query),
                   question_deed(query) if asked else None, SECONDARY_WORDS.search(query) is not None)


# ---- names ---------------------------------------------------------------------------------------

KIND_WORDS = {
    "function": ("function",), "func": ("function",), "helper": ("function", "method"),
    "method": ("method",), "constructor": ("method", "class"),
    "class": ("class", "struct", "interface", "enum", "trait", "type"), "type": ("class", "struct", "interface", "enum", "type"),
    "decorator": ("function",), "exception": ("class",),
    "interface": ("interface", "class", "trait"), "protocol": ("class", "interface"), "struct": ("struct", "class"),
    "enum": ("enum", "class"), "trait": ("trait", "interface"), "module": ("module",),
    "property": ("method", "function", "attribute", "property"), "attribute": ("attribute", "property", "method"),
}
# "the get class method of Measurement": a class/static method is a method, not a class
_METHOD_PHRASE = re.compile(r"\b(?:class|static|instance|abstract)(?=\s+methods?\b)", re.IGNORECASE)
_KIND = "|".join(KIND_WORDS)
_NAME = r"`?([A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*)(?:\(\))?`?"
# "the echo function", "echo()", "the Typer class" (name before the kind word)
_NAME_KIND = re.compile(r"(?:\bthe\s+|\ban?\s+|^|[\s(\"'])" + _NAME + r"\s+(" + _KIND + r")s?\b", re.IGNORECASE)
# "the function echo", "method `invoke`", "class called Typer" (kind word before the name)
_KIND_NAME = re.compile(r"\b(" + _KIND + r")\s+(?:called\s+|named\s+)?" + _NAME, re.IGNORECASE)
# "... of Command", "... of the Command class", "... on Context", "... in core", "Command's invoke"
_OF_CONTAINER = re.compile(r"\s*(?:(?:" + _KIND + r")s?\s+)?(of|on|in|inside|within)\s+(?:the\s+|a\s+|an\s+)?"
                           + _NAME + r"(?:\s+(" + _KIND + r"|file|package|folder|directory))?", re.IGNORECASE)
_POSSESSIVE = re.compile(_NAME + r"'s\s+(?:" + _KIND + r"\s+)?" + _NAME, re.IGNORECASE)
_POSSESSIVE_MARK = re.compile(r"'s\s", re.IGNORECASE)
# what stands right before or after a name: its kind word ("the function `echo`", "echo() function"), an article
# ("the main"), a capitalised word ("TOMLFile write"); the ones before are matched on the text up to the name
_KIND_AFTER = re.compile(r"[`()]*\s+(" + _KIND + r")s?\b", re.IGNORECASE)
_KIND_BEFORE = re.compile(r"\b(" + _KIND + r")\s+(?:called\s+|named\s+)?`?$", re.IGNORECASE)
_ARTICLE_BEFORE = re.compile(r"\b(?:the|a|an)\s+$", re.IGNORECASE)
_WORD_BEFORE = re.compile(r"\b([A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*)\s+$")
_CODE_MARKS = re.compile(r"[`()]*")
# how far before a name those are looked for. Searching the whole text before every name made a long question
# quadratic (a pasted log of 37,000 characters took a minute); a kind word, an article or a class name is
# within a few words of its name, so this changes nothing but a gap of ~150 spaces or a 190-letter word
LOOK_BACK = 200
# the object of a usage question: "how is X used", "where is X called", "who calls X", "uses of X"
_SUBJECT_SLOT = re.compile(
    r"\b(?:how|where)\s+(?:is|are|was|were)\s+(?:the\s+|a\s+|an\s+)?" + _NAME + r"(?=(?:\s+[\w`()]+){0,3}?\s+"
    + _PARTICIPLE + r"\b)"
    + r"|\bwhere\s+(?:does|do|did)\s+(?:the\s+|a\s+|an\s+)?(?:[A-Z]\w*(?:'s)?\s+)?" + _NAME
    + r"(?=(?:\s+[\w`()]+){0,3}?\s+get\s+\w+)"
    + r"|\b(?:who|what|which\s+" + _WHICH + r")\s+(?:calls?|uses?|imports?|instantiates?|creates?|invokes?|subclasses|"
      r"subclass|extends?|implements?|inherits from|inherit from|references?)\s+(?:the\s+|a\s+|an\s+)?" + _NAME
    + r"|\b(?:callers|usages?|uses|references?|call sites?|instances|instantiations|implementations|subclasses)\s+(?:of|to)\s+"
      r"(?:the\s+|a\s+|an\s+)?" + _NAME
    + r"|\bhow\s+(?:do|can|should|would)\s+(?:i|we|you|one)\s+(?:use|call)\s+(?:the\s+|a\s+|an\s+)?" + _NAME
    + r"|\bhow\s+to\s+(?:use|call)\s+(?:the\s+|a\s+|an\s+)?" + _NAME
    + r"|\bwhere\b" + _GAP + r"?\b(?:call|calls|use|uses|raise|raises|throw|throws|invoke|invokes|instantiate|instantiates|catch|"
      r"catches|import|imports|subclass|subclasses)\s+(?:the\s+|a\s+|an\s+)?" + _NAME,
    re.IGNORECASE)
_IDENT = re.compile(r"`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*)")
FILE_NAME = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,8})(?![\w/])")
_WORD = re.compile(r"[A-Za-z0-9]+")
# names around "between A and B" / "A relates to B" are names even when they are plain words (`run`)
_RELATION_NAMES = re.compile(r"\bbetween\s+(?:the\s+)?`?([A-Za-z_][\w.:]*)`?" + _GAP + r"?\band\s+(?:the\s+)?`?([A-Za-z_][\w.:]*)`?"
                             # "A relates to B": A starts a run of [\w.:] (or follows a backtick). Tried from every
                             # letter, a search ran to the end of a long word from each: quadratic in its length
                             r"|(?:(?=`)|(?<![\w.:]))"
                             r"`?([A-Za-z_][\w.:]*)`?\s+(?:relates?|interacts?|connects?|is (?:related|connected))\s+(?:to|with)\s+"
                             r"(?:the\s+)?`?([A-Za-z_][\w.:]*)`?", re.IGNORECASE)
STOP_NAMES = frozenset("""a an and are as at be by call called calls class code connection does do for from function
get gets got how in is it its main method methods functions classes of on or run set the this that these those to use used
uses using what where which who whom why with work works between relationship test tests file files return returns value
values when will would can could should i we you they one me my our your their there here into about all any some
other each every more most not no yes if then than also just only very much many get called being been has have had
implemented instantiated invoked imported created subclassed extended referenced constructed overridden defined
instance instances usage usages caller callers object objects subclass subclasses implementation implementations
site sites reference references""".split())
ARTICLES = frozenset(("the", "a", "an"))
VERB_NAMES = frozenset(("get", "set", "run", "call", "main"))  # stop words that are a usage question's subject when bare
# a spelled-out name neither starts nor ends with these ("the encoder", "encoder used"); verbs that start
# names (`get value` -> get_value) and kind words that end them (`encoder class` -> EncoderClass) may
EDGE_STOP = STOP_NAMES - frozenset("get set run call main return value values file files test tests code work works "
                                   "class function method".split())


@dataclass(frozen=True)
class ParsedQuestion:
    """What a question asks, from its words alone. `mentions` are strongest first; `files` are file
    names it mentions (`cli.py`) with their spans."""

    text: str
    intent: str  # usage | relationship | search (the retriever falls back to search when nothing is found)
    mentions: tuple[Mention, ...]
    files: tuple[tuple[str, int, int], ...]
    inheritance: bool = False
    wants_secondary: bool = False  # asks about tests, examples or docs

    @cached_property
    def rank_query(self) -> RankQuery:
        """What the search reads of the question (RankQuery), read when a search first asks, then kept: a question
        that no search reads does not pay for words.code_terms, which is slow on one long word (0.4 s at 4,000
        letters)."""
        return RankQuery.of(self.text)

    @property
    def subject(self) -> Mention | None:
        return next((m for m in self.mentions if m.subject), self.mentions[0] if self.mentions else None)


def check_question_length(question: str, max_chars: int) -> None:
    """Refuse a question longer than `max_chars` (CODEQA_MAX_QUESTION_CHARS) before any work on it: the page and
    the MCP server answer one question at a time over a shared index, so one pasted log must not hold the rest."""
    if len(question) > max_chars:
        raise QuestionTooLongError(
            f"The question is {len(question):,} characters long; codeqa takes at most {max_chars:,} "
            "(CODEQA_MAX_QUESTION_CHARS). Ask about the few lines that matter (quote the error, not the whole log), "
            "or raise CODEQA_MAX_QUESTION_CHARS.")


def parse_question(question: str, max_chars: int | None = None) -> ParsedQuestion:
    """The intent and the names of a question (see the module docstring for the rules). With `max_chars`
    (CODEQA_MAX_QUESTION_CHARS), a longer question is refused first (check_question_length)."""
    if max_chars is not None:
        check_question_length(question, max_chars)
    asked = question
    question = _METHOD_PHRASE.sub(lambda m: " " * len(m.group(0)), question)
    files = tuple((m.group(1).removeprefix("./"), m.start(1), m.end(1)) for m in FILE_NAME.finditer(question)
                  if re.search(r"[A-Za-z]", m.group(1).rsplit(".", 1)[-1]) and not _is_qualified_name(m.group(1)))
    mentions = _mentions(question, files)
    usage = bool(USAGE_PATTERN.search(question))
    names = {name_key(m.text) for m in mentions if m.strength >= 2}
    if len(names) >= 2 and RELATION_PATTERN.search(question):
        intent = "relationship"
    elif usage and mentions:
        intent = "usage"
    else:
        intent = "search"
    return ParsedQuestion(asked, intent, tuple(mentions), files, bool(INHERITANCE_QUESTION.search(question)),
                          bool(SECONDARY_WORDS.search(question)))


def _is_qualified_name(token: str) -> bool:
    """`click.echo` or `Command.invoke` rather than a file name: the part after the last dot is not an extension."""
    head, _, tail = token.rpartition(".")
    return bool(head) and "/" not in token and (tail[:1].isupper() or len(tail) > 5 or "_" in tail)


def _mentions(question: str, files: Sequence[tuple[str, int, int]]) -> list[Mention]:
    """Every candidate name with its strength and qualifiers, strongest first (overlaps are settled by
    names.select_mentions, once it is known which candidates name a symbol)."""
    found: list[Mention] = []
    slots = _subject_slots(question)
    for m in _IDENT.finditer(question):
        if m.group(1) is not None:
            token = m.group(1).strip().removesuffix("()")
            found.append(Mention(token, 4, m.start(), m.end()))
        elif looks_like_identifier(m.group(2)):
            token = m.group(2)
            found.append(Mention(token, 4 if ("." in token or "::" in token) else 3, m.start(), m.end()))
    for m in _RELATION_NAMES.finditer(question):
        for group in range(1, 5):
            if m.group(group) and m.group(group).lower() not in ARTICLES:
                found.append(Mention(m.group(group), 3, m.start(group), m.end(group)))
    words = list(_WORD.finditer(question))
    for size in (4, 3, 2):  # spelled-out names: "encoder class" -> EncoderClass / encoder_class
        for i in range(len(words) - size + 1):
            phrase = [w.group() for w in words[i:i + size]]
            if phrase[0].lower() in EDGE_STOP or phrase[-1].lower() in EDGE_STOP:
                continue  # "encoder class" is a name; "the encoder", "encoder used" are not
            if all(w.lower() in STOP_NAMES or w.lower() in KIND_WORDS for w in phrase):
                continue
            found.append(Mention("".join(phrase), 2, words[i].start(), words[i + size - 1].end()))
    spans = {(f.start, f.end) for f in found}
    for start, end, text in slots:  # a plain word where the subject goes is a name
        if (start, end) not in spans:
            spans.add((start, end))
            found.append(Mention(text, 3, start, end))
    for w in words:  # other plain words: candidates of last resort (see names.select_mentions)
        text = w.group()
        if len(text) >= 4 and text.lower() not in STOP_NAMES and not text.isdigit() and text.lower() not in KIND_WORDS:
            found.append(Mention(text, 1, w.start(), w.end()))
    slot_spans = {(start, end) for start, end, _ in slots}
    possessive = _first_possessive(question)  # the first "X's y" names y's container
    found = [_qualify(question, m, slot_spans, possessive) for m in found]
    containers = container_ends(found)
    found = [replace(m, subject=False) if is_container(m, containers) else m for m in found]
    unique: dict[tuple[int, int], Mention] = {}
    for m in found:
        if (m.start, m.end) not in unique or unique[(m.start, m.end)].strength < m.strength:
            unique[(m.start, m.end)] = m
    return sorted(unique.values(), key=lambda m: (not m.subject, -m.strength, -(m.end - m.start), m.start))


def _subject_slots(question: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of the names in subject positions: next to a kind word, after "how is" / "who calls"."""
    slots = []
    for pattern in (_NAME_KIND, _KIND_NAME):
        for m in pattern.finditer(question):
            group = 1 if pattern is _NAME_KIND else 2
            text = m.group(group)
            if text.lower() not in EDGE_STOP | ARTICLES and text.lower() not in KIND_WORDS:
                slots.append((m.start(group), m.end(group), text))
    for m in _SUBJECT_SLOT.finditer(question):
        group = next(g for g in range(1, m.re.groups + 1) if m.group(g))
        text = m.group(group)
        if text.lower() in KIND_WORDS:  # "how is the function echo used": the name follows the kind word
            continue
        if text.lower() not in STOP_NAMES | ARTICLES or _verb_name(question, m.start(group), text):
            slots.append((m.start(group), m.end(group), text))
    return slots


def _verb_name(question: str, start: int, text: str) -> bool:
    """A verb that names functions as often as it is English ("where is get called"), standing bare in a
    subject slot at `start`: a name. After an article ("where is the main used") it stays a word."""
    return text.lower() in VERB_NAMES and not _just_before(_ARTICLE_BEFORE, question, start)


def _just_before(pattern: re.Pattern, question: str, start: int) -> re.Match | None:
    """`pattern` (anchored with $) on the text before `start`, within LOOK_BACK characters of it. The search
    starts there but sees the whole text: a word cut by the window is no word (`\\b` looks before it)."""
    return pattern.search(question, max(0, start - LOOK_BACK), start)


def _qualify(question: str, m: Mention, slots: set[tuple[int, int]], possessive: re.Match | None) -> Mention:
    """The mention with the kind word next to it, its container and its subject flag. Only a name that is
    identifier-shaped or stands in a subject slot takes qualifiers; a plain word next to a kind word
    ("the echo function") becomes a subject of strength 3. `slots`: the subject slots' spans; `possessive`:
    the question's first "X's y". Everything is matched in place: a copy of the text after or before every
    name made a long question quadratic."""
    if m.strength == 2:
        return m
    subject = (m.start, m.end) in slots
    k = _KIND_AFTER.match(question, m.end) or _just_before(_KIND_BEFORE, question, m.start)
    kinds = KIND_WORDS[k.group(1).lower()] if k else ()
    if m.strength < 3 and not subject and not kinds:
        return m
    container = None
    c = _OF_CONTAINER.match(question, _CODE_MARKS.match(question, m.end).end())
    if c and c.group(2).lower() not in STOP_NAMES | ARTICLES:
        container = c.group(2)
    if possessive and possessive.start(2) == m.start:
        container = possessive.group(1)
    before_word = _just_before(_WORD_BEFORE, question, m.start) if container is None and subject else None
    if before_word and m.text[:1].islower() and not _sentence_start(before_word.group(1)):
        container = before_word.group(1)  # "where does TOMLFile write get called"
    return replace(m, strength=max(m.strength, 3), kinds=kinds, container=container, subject=subject or bool(kinds))


def _first_possessive(question: str) -> re.Match | None:
    """_POSSESSIVE.search(question), tried only from the LOOK_BACK characters before each "'s" (a name holds no
    quote, so a match for one "'s" starts after the one before): searched from every letter, a long dotted name
    was read to its end from each of its letters, quadratic in its length."""
    after = 0
    for mark in _POSSESSIVE_MARK.finditer(question):
        for start in range(max(after, mark.start() - LOOK_BACK), mark.start()):
            if found := _POSSESSIVE.match(question, start):
                return found
        after = mark.start() + 1
    return None


def looks_like_identifier(token: str) -> bool:
    """CamelCase, snake_case, a.b, ns::name, or a capitalised word that is not all capitals (`Typer`)."""
    if token.lower() in STOP_NAMES:
        return False
    return ("_" in token or "." in token or "::" in token or bool(re.search(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]", token))
            or (token[:1].isupper() and len(token) > 3 and not token.isupper() and not _sentence_start(token)))


def _sentence_start(token: str) -> bool:
    """Capitalised only because it starts the question ("How", "Where", "Show")."""
    return token.lower() in {"how", "where", "what", "which", "who", "why", "when", "show", "list", "find", "explain",
                             "describe", "give", "tell", "does", "is", "are", "can"}


__all__ = ["FILE_NAME", "check_question_length", "parse_question", "ParsedQuestion", "Mention", "Choice", "choose_symbols",
           "matching_symbols", "rank_key", "looks_like_identifier", "USAGE_PATTERN", "RELATION_PATTERN", "INHERITANCE_QUESTION", "SECONDARY_WORDS",
           "STOP_NAMES", "is_question", "question_deed", "RankQuery", "KEYWORD_CODE_SHARE"]
