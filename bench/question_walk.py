"""The walk one question takes through the query and answer code: which modules it enters, in what order.

Indexes a copy of tests/fixtures/repo with the bundled model, then runs each question below through
`Answerer.stream(..., no_llm=True)` (a follow-up after a first turn, as the chat page asks it) under
sys.setprofile, and prints for each:

    parse_question  how often question.parse_question ran (one pass per question: 1)
    rooms           the modules of codeqa/query/ and codeqa/answer/ the walk entered
    stays           the walk's steps: maximal runs of calls that start in one module. The walk is the
                    order in which codeqa functions START (returns are not steps), so an orchestrator
                    that calls its stages in turn is one stay, and a helper it calls back between two
                    stages (or a callback a later stage makes into it) is one more
    retrieve.py     the stays in query/retrieve.py (how often the walk came back to the hub)
    climbs          steps into a stage that sits earlier in STAGES than the one the walk left: data
                    flowing back up. The other rooms are the stages' helpers (choose.py for names.py,
                    rankers.py and lead.py for searcher.py, words.py for several): a call into one
                    returns, so a helper is never a climb

Readers that every stage shares (the store, query/source.py's files, the graph reads of query/lookup.py's
GraphQueries) and the value modules (types, config, errors, roles, redact, embed) are not rooms: they are
walked through like the store. Comprehensions are part of the line that holds them (a generator read in
another module is no step back); a lambda is a function like any other (a callback is a step).

Issue 64, on 199de9d (retrieve.py a hub) -> with the stages: usage 21 stays / 8 in retrieve.py / 7 climbs -> 17 / 1 / 1,
search 53 / 10 / 9 -> 42 / 1 / 2; a follow-up parsed twice -> once (with Answerer.stream handing route()'s value on).
The climbs left: the answerer building its stream after answer/summary.py, and on the search route the search's
reading of the question (ParsedQuestion.rank_query), kept on the parsed value but read when the search first asks.

    python bench/question_walk.py            # the table
    python bench/question_walk.py --walk     # and each question's walk, one stay a line
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PACKAGE = ROOT / "codeqa"
# the stages, earliest first (query/retrieve.py's docstring); a module of query/ or answer/ not listed is a helper
STAGES = ("answer/answerer.py", "answer/conversation.py", "query/retrieve.py", "query/question.py", "query/names.py",
          "query/evidence.py", "query/searcher.py", "query/pack.py", "answer/summary.py")
ROOMS = ("query/", "answer/")
READERS = ("query/source.py", "query/shared_reader.py")
READER_CLASSES = ("GraphQueries",)  # lookup.py's graph reads: a reader like the store, unlike its list_sites
COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")

QUESTIONS = (
    ("usage", "Where is EncoderClass used?", None),
    ("relationship", "what is the connection between run and tokenize", None),
    ("search", "How does the encoder turn text into vectors?", None),
    ("follow-up", "How is EncoderClass.encode used?", "Where is EncoderClass used?"),
)


def room_of(frame) -> str | None:
    """The room a starting function is in, or None when it is no room (outside query/ and answer/, a reader,
    a comprehension)."""
    code = frame.f_code
    if code.co_name in COMPREHENSIONS:
        return None
    try:
        path = Path(code.co_filename).resolve().relative_to(PACKAGE).as_posix()
    except ValueError:
        return None
    if not path.startswith(ROOMS) or path in READERS:
        return None
    owner = frame.f_locals.get("self")
    if owner is not None and type(owner).__name__ in READER_CLASSES:
        return None
    return path


def walk(run) -> tuple[list[tuple[str, str]], int]:
    """The calls `run()` makes, as (room, function) in the order they start, and how often parse_question ran."""
    steps: list[tuple[str, str]] = []
    parses = 0

    def profile(frame, event, arg):
        nonlocal parses
        if event != "call":
            return
        if frame.f_code.co_name == "parse_question":
            parses += 1
        room = room_of(frame)
        if room is not None:
            steps.append((room, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return steps, parses


def stays_of(steps: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """Maximal runs of steps in one room: (room, the functions that started there, first calls first)."""
    stays: list[tuple[str, list[str]]] = []
    for room, name in steps:
        if stays and stays[-1][0] == room:
            if name not in stays[-1][1]:
                stays[-1][1].append(name)
        else:
            stays.append((room, [name]))
    return stays


def climbs_of(stays: list[tuple[str, list[str]]]) -> int:
    order = {room: i for i, room in enumerate(STAGES)}
    return sum(1 for (a, _), (b, _) in zip(stays, stays[1:]) if a in order and b in order and order[b] < order[a])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--walk", action="store_true", help="print each question's walk, one stay a line")
    args = parser.parse_args()

    from codeqa.answer import Answerer
    from codeqa.answer.conversation import Conversation
    from codeqa.config import Settings
    from codeqa.embed import SentenceTransformerEmbedder
    from codeqa.indexing.index import index_repo
    from codeqa.query.retrieve import Retriever

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(shutil.copytree(ROOT / "tests" / "fixtures" / "repo", Path(tmp) / "repo", symlinks=True))
        settings = Settings.load(env={}, index_dir=Path(tmp) / "index")
        embedder = SentenceTransformerEmbedder()
        index_repo(repo, settings, embedder=embedder)
        with Retriever.open(repo, settings, embedder) as retriever:
            answerer = Answerer(retriever, settings, chat=None)
            answerer.stream("tokenize", no_llm=True)  # the model and the reads a first question warms
            print(f"{'question':<14}{'parse_question':>15}{'rooms':>7}{'stays':>7}{'retrieve.py':>13}{'climbs':>8}")
            for label, question, before in QUESTIONS:
                conversation = None
                if before is not None:
                    conversation = Conversation()
                    answerer.answer(before, conversation, no_llm=True)  # the first turn
                steps, parses = walk(lambda: answerer.stream(question, conversation, no_llm=True))
                stays = stays_of(steps)
                hub = sum(1 for room, _ in stays if room == "query/retrieve.py")
                print(f"{label:<14}{parses:>15}{len({r for r, _ in stays}):>7}{len(stays):>7}{hub:>13}"
                      f"{climbs_of(stays):>8}")
                if args.walk:
                    for room, names in stays:
                        print(f"    {room:<26} {', '.join(names[:6])}{' ...' if len(names) > 6 else ''}")


if __name__ == "__main__":
    main()
