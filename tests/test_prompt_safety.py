"""The prompt gives a model nothing to copy as an answer (issue 63, item 6): no example claim, no
placeholder, no wording that reads as content; an answer that repeats the prompt's own wording is
flagged; and the citation grammar lets a cite name only the prompt's snippets, at most three at a time."""

from __future__ import annotations

import re

import pytest

from codeqa.answer import Answerer
from codeqa.answer.prompt import REMINDER, SYSTEM_PROMPT, cited_lines_grammar, prompt_echoes
from codeqa.llm import FakeChat
from codeqa.query.retrieve import Retriever

USAGE_Q = "Where is EncoderClass used?"
HOW_Q = "How does EncoderClass encode a text?"

# the system prompt of 2db6c95, whose example and wording Qwen2.5-Coder-1.5B copied into answers
OLD_SYSTEM_PROMPT = """You answer questions about a code repository using only the evidence in the user's \
message: numbered code snippets ([1], [2], ...), each labelled path:Lstart-Lend with its lines numbered, \
and facts from the repository's reference graph.
Rules:
- After each claim, cite the snippet it rests on by its number in square brackets, e.g. \
"`parse_args` reads the options [2]." You may also cite lines as path:Lstart-Lend, with the path as in a \
snippet label and lines inside that snippet, e.g. `src/app/main.py:L12-L18`.
- For "where/how is X used" questions, list the reference sites from the graph facts, grouped by file, \
with the count."""


@pytest.fixture
def retriever(indexed_repo, embedder, settings):
    with Retriever.open(indexed_repo, settings, embedder) as r:
        yield r


def sent_prompt(retriever, question: str) -> list[dict]:
    chat = FakeChat(["It is used [1]."])
    Answerer(retriever, retriever.settings, chat=chat).answer(question)
    return chat.requests[0]


# ---- nothing to copy -------------------------------------------------------------------------------

def test_the_instructions_hold_no_name_no_example_claim_and_no_placeholder():
    for text in (SYSTEM_PROMPT, REMINDER):
        assert "`" not in text, "a quoted name is a subject a model can put in its claim"
        assert not re.search(r"\b(path|file)\s*:\s*L|Lstart|Lend|<[a-z ]+>", text), "a placeholder to copy"
        assert "listed below" not in text and "graph facts" not in text  # wording that leaked into answers
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            words = re.sub(r"\[\d+\]", " ", sentence)
            if re.search(r"\[\d\]", sentence):  # a sentence that shows a citation shows only its form
                assert re.search(r"number|snippet|bracket|cite", words, re.I), sentence


@pytest.mark.parametrize("question", [USAGE_Q, HOW_Q])
def test_every_line_label_in_the_built_prompt_is_a_real_one(retriever, question):
    """A `x:Ln` the model can copy names a file the prompt shows: never a placeholder path."""
    messages = sent_prompt(retriever, question)
    whole = "\n".join(m["content"] for m in messages)
    paths = set(retriever.indexed_paths)
    labels = re.findall(r"([\w./-]+):L\d+", whole)
    assert labels and all(label in paths for label in labels), sorted(set(labels) - paths)
    assert not re.search(r"Lstart|Lend|\bpath:L|listed below", whole)


# ---- an answer that repeats the prompt is flagged -----------------------------------------------------

@pytest.mark.parametrize("answer", [
    "The `Context.invoke` method reads the options [2].",  # click, Qwen2.5-Coder-1.5B
    "When called, the `parse_args` function reads the options [2].",  # typer
    "The reference sites from the graph facts are listed below: [1][5]",  # the page, nothing below
])
def test_the_old_prompts_copied_sentences_are_flagged(answer):
    assert prompt_echoes(answer, instructions=OLD_SYSTEM_PROMPT) == [answer]


def test_a_placeholder_and_the_current_wording_are_flagged_and_real_answers_are_not():
    assert prompt_echoes("Typer is defined in main.py, which is located at path:L135-L293 [1].")
    reminder = "End every sentence with the number of the snippet it rests on [1]."
    assert prompt_echoes("EncoderClass hashes words [1]. " + reminder) == [reminder]
    honest = ("EncoderClass hashes each word of the text into a bucket of its vector [1]. It is built in "
              "`app/cli.py` and `app/main.py`, with 2 reference sites in each [2][3].\n"
              "- `encoders/encoder.py` defines it, with the snippet's `encode` method [1].\n"
              "The reference graph shows two uses in app/cli.py [2].\n"
              "The snippets do not contain the evidence of how the vector is stored [1].")  # as the rule asks
    assert prompt_echoes(honest) == []
    # wording the evidence itself holds is the code's, not the prompt's
    quoted = "The docstring says it reads the options [2]."
    assert prompt_echoes(quoted, evidence="def parse(): '''Reads the options.'''",
                         instructions=OLD_SYSTEM_PROMPT) == []


# ---- the grammar names only this prompt's snippets -----------------------------------------------------

def gbnf_regex(grammar: str) -> re.Pattern:
    """The GBNF subset the grammar uses (literals, classes, rule names, ( ) | ? * +, no recursion) as a regex:
    what llama.cpp would accept, without llama.cpp."""
    rules = dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())
    token = re.compile(r'\s*("(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|[A-Za-z][\w-]*|[()|?*+])')

    def convert(name: str) -> str:
        out, body = [], rules[name]
        for piece in token.findall(body):
            if piece.startswith('"'):
                out.append(re.escape(piece[1:-1].encode().decode("unicode_escape")))
            elif piece.startswith("["):
                out.append(piece)
            elif piece[0].isalpha():
                out.append(f"(?:{convert(piece)})")
            else:
                out.append(piece)
        assert "".join(token.findall(body)).replace(" ", "") == body.replace(" ", ""), f"unparsed: {body}"
        return "".join(out)

    return re.compile(convert("root"))


@pytest.mark.parametrize("n", [1, 9, 12, 25])
def test_a_cite_names_only_numbers_up_to_the_last_snippet_and_at_most_three(n):
    grammar = cited_lines_grammar(n)
    assert re.search(r"^num ::= " + " \\| ".join(f'"{i}"' for i in range(1, n + 1)) + "$", grammar, re.M)
    ok = gbnf_regex(grammar)

    def accepts(text: str) -> bool:
        return ok.fullmatch(text) is not None

    assert accepts(f"It hashes words [{n}]") and accepts("It hashes words [1]\n\nIt is built in cli [1]")
    assert accepts("one [1][1][1]") and not accepts("one [1][1][1][1]")
    assert not accepts(f"past the last [{n + 1}]") and not accepts("zero [0]") and not accepts("padded [01]")
    assert not accepts("no number at the end") and not accepts("[1]")
    if n >= 12:
        assert accepts("twelve [12][3]") and accepts(f"last [{n}][1][{n}]")


def test_no_snippets_means_no_grammar_a_cite_could_satisfy():
    assert cited_lines_grammar(0) is None
