"""Question understanding, rule by rule, on question strings alone: no index, no model."""

from __future__ import annotations

import pytest

from codeqa.query.names import select_mentions
from codeqa.query.question import Mention, choose_symbols, parse_question
from codeqa.types import Symbol


def sym(qualified: str, path: str, kind: str = "function", line: int = 1) -> Symbol:
    name = qualified.rpartition(".")[2]
    parent = qualified.rpartition(".")[0]
    parent_id = f"{path}#{parent}@1" if parent else None
    return Symbol(f"{path}#{qualified}@{line}", name, qualified, kind, "python", path, line, line + 5,
                  f"def {name}()", "", parent_id)


# (question, intent, subject as written, kind words it carries, container)
CASES = [
    ("How is the echo function used to print output?", "usage", "echo", "function", None),
    ("How is echo used?", "usage", "echo", None, None),
    ("Who calls the invoke method of Command?", "usage", "invoke", "method", "Command"),
    ("Who calls the `invoke` method of Command?", "usage", "invoke", "method", "Command"),
    ("who calls the invoke method of the Command class", "usage", "invoke", "method", "Command"),
    ("How is the Typer class used?", "usage", "Typer", "class", None),
    ("Where is the Parser class in core used?", "usage", "Parser", "class", "core"),
    ("where is parse_args called", "usage", "parse_args", None, None),
    ("Where does parse_args get called?", "usage", "parse_args", None, None),
    ("what calls format_name", "usage", "format_name", None, None),
    ("who uses Session.send", "usage", "Session.send", None, None),
    ("Where is click.echo called?", "usage", "click.echo", None, None),
    ("callers of the render method", "usage", "render", "method", None),
    ("usages of get_terminal_size", "usage", "get_terminal_size", None, None),
    ("show me the call sites of tokenize", "usage", "tokenize", None, None),
    ("who instantiates EncoderClass?", "usage", "EncoderClass", None, None),
    ("what implements BaseEncoder", "usage", "BaseEncoder", None, None),
    ("what subclasses the BaseEncoder class?", "usage", "BaseEncoder", "class", None),
    ("how do I use the Session object", "usage", "Session", None, None),
    ("how to call the send method", "usage", "send", "method", None),
    ("where is the function send used", "usage", "send", "function", None),
    ("Where is the ValidationError exception raised?", "usage", "ValidationError", "class", None),
    ("How is Context's invoke method used?", "usage", "invoke", "method", "Context"),
    ("how is the output function used", "usage", "output", "function", None),
    ("Where is the get method of Client called?", "usage", "get", "method", "Client"),
    ("who calls `Command.invoke`?", "usage", "Command.invoke", None, None),
    ("where are instances of Request created", "usage", "Request", None, None),
    ("which functions call make_context?", "usage", "make_context", None, None),
    ("How is the encoder class used", "usage", "encoder", "class", None),
    ("where is the Group.command decorator used", "usage", "Group.command", "function", None),
    ("How are options parsed from the command line?", "search", None, None, None),
    ("How does tokenize work?", "search", None, None, None),
    ("What does the encoder do with unknown words?", "search", None, None, None),
    ("Why does the progress bar flicker?", "search", None, None, None),
    ("what is the connection between run and tokenize", "relationship", None, None, None),
    ("How does EncoderClass relate to BaseEncoder?", "relationship", None, None, None),
    ("explain how cli.py loads the config", "search", None, None, None),
    ("what happens when a request times out", "search", None, None, None),
    ("How is retry configured for the adapter?", "search", None, None, None),
    ("Where are the tests for format_name?", "search", None, None, None),
    ("how is the Retry class in util used", "usage", "Retry", "class", "util"),
    ("Where is the resolve method of the Resolver used?", "usage", "resolve", "method", "Resolver"),
]


@pytest.mark.parametrize("question,intent,subject,kind,container", CASES, ids=[c[0] for c in CASES])
def test_intent_subject_and_qualifiers(question, intent, subject, kind, container):
    parsed = parse_question(question)
    assert parsed.intent == intent
    if subject is None:
        return
    first = parsed.subject
    assert first is not None and first.text == subject and first.strength >= 3
    assert (kind in first.kinds) if kind else not first.kinds
    assert first.container == container


def test_there_are_at_least_forty_phrasings():
    assert len(CASES) >= 40


def names(question: str, known: set[str]) -> list[str]:
    """The mentions that stand when the index holds symbols named `known` (lowercased name keys)."""
    parsed = parse_question(question)
    return [m.text for m in select_mentions(parsed, lambda m: m.text.lower().replace("_", "") in known)]


def test_a_plain_word_never_beats_a_named_symbol():
    # "output" names a symbol too (Result.output), but the question names the echo function
    assert names("How is the echo function used to print output?", {"echo", "output", "print"}) == ["echo"]


def test_plain_words_are_not_names_in_a_search_question():
    assert names("How are options parsed from the command line?", {"command", "options", "parse"}) == []
    assert names("How does the Command class parse options?", {"command", "options"}) == ["Command"]


def test_a_container_is_not_a_second_subject():
    assert names("Who calls the invoke method of Command?", {"invoke", "command"}) == ["invoke"]


def test_a_name_inside_a_longer_one_is_dropped():
    assert names("who calls EncoderClass.encode?", {"encoderclass.encode", "encoderclass", "encode"}) == \
        ["EncoderClass.encode"]
    assert names("how is the encoder class used", {"encoderclass", "encoder"}) == ["encoderclass"]


def test_a_plain_word_is_a_last_resort_only_in_usage_questions():
    assert names("where is the thing with tokenize stuff used", {"tokenize"}) == ["tokenize"]
    assert names("tell me about tokenize stuff", {"tokenize"}) == []


# ---- choosing among same-named symbols ------------------------------------------------------------

def choose(question: str, symbols: list[Symbol]):
    return choose_symbols(parse_question(question).subject, symbols)


def test_public_package_code_beats_private_helpers_and_tests():
    public = sym("echo", "src/click/utils.py")
    private = sym("EchoingStdin._echo", "src/click/testing.py", "method")
    test_helper = sym("echo", "tests/test_utils.py")
    choice = choose("How is echo used?", [private, test_helper, public])
    assert choice.symbols == (public,) and not choice.ambiguous


def test_container_narrows_to_the_members_of_that_class():
    command = sym("Command.invoke", "src/click/core.py", "method", 1100)
    overloads = [sym("Context.invoke", "src/click/core.py", "method", line) for line in (700, 710, 720)]
    choice = choose("Who calls the invoke method of Command?", [*overloads, command])
    assert choice.symbols == (command,)
    # without the qualifier both are as good a reading: the answer must say so
    plain = choose("Who calls invoke?", [*overloads, command])
    assert plain.ambiguous and {s.qualified_name for s in plain.symbols + plain.others} == {"Command.invoke",
                                                                                            "Context.invoke"}
    # overloads of one method are one definition; the implementation, written after them, comes first
    context = choose("Who calls the invoke method of Context?", [*overloads, command])
    assert context.symbols == tuple(reversed(overloads)) and not context.ambiguous


def test_the_class_in_package_code_beats_its_uses_in_docs_and_tutorials():
    real = sym("Typer", "typer/main.py", "class")
    tutorial = sym("Typer", "docs_src/first_steps/tutorial001.py", "class")
    assert choose("How is the Typer class used?", [tutorial, real]).symbols == (real,)


def test_kind_word_narrows():
    function = sym("render", "pkg/render.py")
    klass = sym("Render", "pkg/classes.py", "class")
    assert choose("how is the render function used", [klass, function]).symbols == (function,)
    assert choose("how is the Render class used", [klass, function]).symbols == (klass,)


def test_module_qualifier_narrows_by_path():
    core = sym("Parser", "pkg/core.py", "class")
    other = sym("Parser", "pkg/legacy/parser.py", "class")
    assert choose("Where is the Parser class in core used?", [other, core]).symbols == (core,)


def test_a_stub_is_the_same_definition_as_its_module():
    impl = sym("Session.send", "requests/sessions.py", "method")
    stub = sym("Session.send", "requests/sessions.pyi", "method")
    choice = choose("who uses Session.send", [stub, impl])
    assert choice.symbols[0] == impl and set(choice.symbols) == {impl, stub} and not choice.ambiguous


def test_a_bare_name_prefers_a_top_level_definition_to_a_method():
    function = sym("send", "pkg/api.py")
    method = sym("Client.send", "pkg/client.py", "method")
    assert choose("where is send called", [method, function]).symbols == (function,)
    assert choose("where is the send method called", [method, function]).symbols == (method,)


def test_a_bare_verb_name_is_the_subject_of_a_usage_question():
    for question in ("Where is get called?", "Which parts of the code call get?", "Show me callers of get"):
        parsed = parse_question(question)
        assert parsed.intent == "usage" and parsed.subject.text == "get", question
    assert parse_question("Where is the main used?").subject is None  # after an article it is a word


def test_which_parts_of_the_code_call_is_a_usage_question():
    parsed = parse_question("Which parts of the code call is_error?")
    assert parsed.intent == "usage" and parsed.subject.text == "is_error"


def test_a_helper_in_a_private_module_loses_to_the_public_function():
    public = sym("is_error", "pkg/status.py")
    helper = sym("is_error", "pkg/_compat.py")
    choice = choose("Which functions call is_error?", [helper, public])
    assert choice.symbols == (public,) and not choice.ambiguous and choice.passed_over == (helper,)


def test_mentions_carry_their_spans():
    question = "Who calls the invoke method of Command?"
    subject = parse_question(question).subject
    assert isinstance(subject, Mention) and question[subject.start:subject.end] == "invoke"


MORE_CASES = [
    ("How is the get class method of Measurement used?", "usage", "get", "method", "Measurement"),
    ("Where does TOMLFile write get called?", "usage", "write", None, "TOMLFile"),
    ("Where does the parser call consume?", "usage", "consume", None, None),
    ("Where do we raise UnexpectedCharError?", "usage", "UnexpectedCharError", None, None),
    ("how is the value property of AbstractTable used", "usage", "value", "method", "AbstractTable"),
    ("Where does Text's append method get called?", "usage", "append", "method", "Text"),
]


@pytest.mark.parametrize("question,intent,subject,kind,container", MORE_CASES, ids=[c[0] for c in MORE_CASES])
def test_more_phrasings(question, intent, subject, kind, container):
    test_intent_subject_and_qualifiers(question, intent, subject, kind, container)


@pytest.mark.parametrize("query, asked", [
    ("How does Live redraw its renderable in place?", True),
    ("where is the error raised when a required attribute comes after a default", True),
    ("Does the parser backtrack on a bad key?", True),
    ("the parser's position in the input?", True),
    ("Return the parsed value of a TOML string.", False),  # a docstring's description (bench/retrieval.py)
    ("Create a :class:`RequestContext` for the given environ", False),
    ("parse_args", False),
    ("Howard's helper", False),
])
def test_a_question_is_known_by_its_first_word_or_question_mark(query, asked):
    from codeqa.query.question import is_question

    assert is_question(query) is asked


@pytest.mark.parametrize("question, deed", [
    ("How are options parsed from the command line?", "parsed"),
    ("How are slotted instances pickled?", "pickled"),  # "slotted" stands before a noun: no deed
    ("How is the response body decoded when it is gzipped?", "decoded"),  # the main clause's
    ("How is the parsed value of a parameter converted?", "converted"),
    ("Where is the error raised when a parameter is missing?", "raised"),
    ("How is the config file read?", "read"),
    ("How is the echo function used to print output?", None),  # usage: vague
    ("How is a missing value handled?", None),
    ("How does Live redraw its renderable in place?", None),  # no be-verb participle
    ("Return the parsed value", None),  # a description, not a question
])
def test_the_deed_of_a_question_is_its_clause_ending_participle(question, deed):
    from codeqa.query.question import question_deed

    assert question_deed(question) == deed
