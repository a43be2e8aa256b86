"""Issue 63, items 5 and 6: a ✓ says what was checked, and grounded means supported.

Verified (the lines exist and were shown) is kept apart from supported (the lines mention what the sentence
names); attribution shows a sentence's names in the lines, not two shared words; numbers written by rote count
nothing; a one-sentence answer to a "how" question is flagged; the page, the CLI and MCP say the same summary."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from codeqa.answer import Answerer, parse_citations, verify_citations
from codeqa.llm import FakeChat
from codeqa.answer.citation_report import citation_status, describe_citations
from codeqa.answer.support import attribute, check_support, claims, model_text, names, sentences
from codeqa.query.retrieve import Retriever
from codeqa.types import Answer, Citation, Snippet
from test_ui import ask, calls, page, texts  # noqa: F401  (calls: the page's fixture)

HOW_Q = "How does EncoderClass encode a text?"
MADE_UP = "The Encoder class uploads the text over HTTP to a remote make_encoder service and caches it in Redis."
ENCODER = Snippet("encoders/encoder.py", 1, 9, "class Encoder:\n    def __init__(self, dim):\n        self.dim = dim\n\n"
                  "    def encode(self, text):\n        return [0.0] * self.dim\n\n\ndef make_encoder(dim=8):\n"
                  "    return Encoder(dim)\n")


@pytest.fixture
def retriever(indexed_repo, embedder, settings):
    with Retriever.open(indexed_repo, settings, embedder) as r:
        yield r


def _ask(retriever, reply: str, question: str = HOW_Q) -> Answer:
    return Answerer(retriever, retriever.settings, chat=FakeChat([reply])).answer(question)


# ---- attribution: the claim is in the lines, not two words --------------------------------------------------

def test_the_made_up_sentence_is_attributed_to_nothing():
    """It shares `Encoder`, `make_encoder` and `text` with the snippet (the old rule attributed it), but the
    snippet says nothing of HTTP or Redis."""
    assert {n.text for n in names(MADE_UP)} >= {"Encoder", "make_encoder", "HTTP", "Redis"}
    assert attribute(MADE_UP, [ENCODER], []) == []
    true = "The make_encoder function returns an Encoder built with the given dim."
    assert [(c.path, c.start_line) for c in attribute(true, [ENCODER], [])] == [("encoders/encoder.py", 1)]
    # cited, it is verified (the lines exist and were shown) but not supported, and the answer is not grounded
    text = MADE_UP[:-1] + " [1]."
    shown = Citation(ENCODER.path, ENCODER.start_line, ENCODER.end_line, True)
    (checked,) = check_support(text, [shown], [ENCODER], [ENCODER.path], lambda p, s, e: ENCODER.text)
    checked = replace(checked, counted=bool(checked.supported))
    answer = Answer(text, (checked,), (ENCODER,), "llm", claims=tuple(claims(text, [checked], [ENCODER], [ENCODER.path])))
    assert checked.supported is False and not answer.grounded
    assert checked.support_reason == "cited, but these lines do not mention `HTTP`, `Redis`"


def test_a_made_up_answer_is_not_grounded_cited_or_not(retriever):
    uncited = ("The EncoderClass class uploads the text over HTTP to a remote tokenize service and caches it in Redis. "
               "That is all.")
    answer = _ask(retriever, uncited)
    assert not answer.grounded and not any(c.attributed for c in answer.citations)
    cited = _ask(retriever, "The EncoderClass class uploads the text over HTTP to a remote service and caches it in Redis [1].")
    (c,) = [c for c in cited.citations if not c.attributed]
    assert c.verified and c.supported is False and not c.counted and not cited.grounded
    assert "do not mention `HTTP`, `Redis`" in c.support_reason
    assert describe_citations(cited).warnings[0].startswith("Not grounded: 1 of 1 sentence")


def test_an_answer_whose_cited_lines_mention_what_it_names_is_grounded(retriever):
    answer = _ask(retriever, "EncoderClass.encode adds one to a bucket for each word of tokenize(text) [1].\n"
                             "`_bucket` hashes the word with sha256 [1].")
    (c,) = [c for c in answer.citations if not c.attributed]
    assert c.verified and c.supported and c.counted and answer.grounded
    assert describe_citations(answer).line == "1 citation: 1 verified, its lines mention what its sentence names"


def test_attribution_does_not_count_until_its_precision_is_measured(retriever):
    answer = _ask(retriever, "The EncoderClass encode method adds one to vector[self._bucket(word)] for each word of "
                             "tokenize(text). That is all.")
    (guess,) = [c for c in answer.citations if c.attributed]
    assert guess.verified and guess.supported and not guess.counted and not answer.grounded
    assert "not counted as support" in guess.reason
    assert "1 attributed by codeqa (not counted as support)" in describe_citations(answer).line


# ---- support: a ✓ says what was checked ---------------------------------------------------------------------

def test_a_cited_span_that_does_not_mention_what_its_sentence_names_is_marked():
    """The typer case: `rich_utils` cited to `Typer.__init__`'s parameters."""
    init = Snippet("typer/main.py", 135, 140, "class Typer:\n    def __init__(\n        self,\n        *,\n"
                                              "        name: Optional[str] = Default(None),\n    ):\n")
    text = "rich_utils is imported within the Typer class in the main.py file [1]."
    (c,) = verify_citations(parse_citations("typer/main.py:L135-L140", ["typer/main.py"]), [init], ["typer/main.py"],
                            lambda p: 300)
    (checked,) = check_support(text.replace("[1]", "typer/main.py:L135-L140"), [c], [init], ["typer/main.py"],
                               lambda p, s, e: init.text)
    assert checked.verified and checked.supported is False
    assert checked.support_reason == "cited, but these lines do not mention `rich_utils`"
    status = citation_status(checked)
    assert status.mark == "!" and status.words.startswith("verified (these lines exist and were shown to the model), but")
    answer = Answer("", (checked, replace_supported(c)), (init,), "llm")
    assert describe_citations(answer).line == ("2 citations: 1 verified, its lines mention what its sentence names, "
                                              "1 verified but its lines do not mention `rich_utils`")


def replace_supported(c: Citation) -> Citation:
    return replace(c, start_line=136, supported=True, support_reason="these lines mention `Typer`", counted=True)


def test_a_sentence_that_names_nothing_is_not_checked_and_says_so(retriever):
    answer = _ask(retriever, "It returns the list it built [1].")
    (c,) = answer.citations
    assert c.verified and c.supported is None and not c.counted and not answer.grounded
    assert "support not checked" in describe_citations(answer).line


def test_citations_after_the_sentence_end_belong_to_it():
    assert [s.text for s in sentences("Encoder encodes. [1] It is built by `make_encoder` [2].\n```\na. b\n```\n")] == \
        ["Encoder encodes. [1]", "It is built by `make_encoder` [2]."]
    # a run that starts a line is the 1.5B's numbers for the lines above it, not for the sentence after it
    assert [s.text for s in sentences("It sorts them.\n\n[6] The `build_parser` function parses [7].")] == \
        ["It sorts them.", "[6]", "The `build_parser` function parses [7]."]


# ---- numbers written by rote --------------------------------------------------------------------------------

def test_a_run_of_numbers_written_by_rote_counts_nothing(retriever):
    run = [1, 3, 4, 6, 7, 8, 9, *range(10, 100), 10, 11, 12]
    answer = _ask(retriever, "EncoderClass.encode hashes each word of tokenize(text) [1].\n" + "".join(f"[{n}]" for n in run))
    rote = [c for c in answer.citations if c.rote]
    assert len(rote) == 1 and not rote[0].verified and not rote[0].counted
    assert rote[0].reason == f"written by rote: a run of {len(run)} snippet numbers, more than a sentence can rest on"
    assert len(answer.citations) == 2 and sum(c.counted for c in answer.citations) == 1
    past = _ask(retriever, "EncoderClass.encode hashes each word of tokenize(text) [1][42].")
    (ghost,) = [c for c in past.citations if c.rote]
    assert ghost.reason == "written by rote: the prompt had no snippet [42]" and not ghost.verified
    assert "1 citation written by rote, not counted (the prompt had no snippet [42])" in describe_citations(past).line


# ---- a one-line answer to a "how" question -------------------------------------------------------------------

def test_a_one_sentence_answer_to_a_how_question_is_flagged(retriever):
    short = _ask(retriever, "EncoderClass.encode hashes each word of tokenize(text) [1].")
    assert short.shallow and any(w.startswith("Possibly incomplete: one sentence answers") for w in
                                 describe_citations(short).warnings)
    longer = _ask(retriever, "EncoderClass.encode splits the text with tokenize(text) [1].\n"
                             "Each word's bucket comes from `_bucket`, a sha256 digest [1].")
    assert longer.shallow is None
    assert _ask(retriever, "It is in encoders/encoder.py [1].", "Where is EncoderClass defined?").shallow is None


# ---- paths with spaces ----------------------------------------------------------------------------------------

def test_a_citation_of_a_known_path_with_a_space_is_read_whole():
    known = ["my notes/setup.py", "notes/setup.py"]
    for text in ("See my notes/setup.py:L2-L3.", "See `my notes/setup.py:L2-L3`."):
        (span,) = parse_citations(text, known)
        assert (span.path, span.start_line, span.end_line) == ("my notes/setup.py", 2, 3)
    (c,) = verify_citations(parse_citations("See my notes/setup.py:L2-L3.", known),
                            [Snippet("my notes/setup.py", 1, 5, "a\nb\nc\nd\ne\n")], known, lambda p: 5)
    assert c.verified and c.path == "my notes/setup.py"


# ---- one summary in every shell -------------------------------------------------------------------------------

def test_the_cli_and_mcp_say_the_summary_the_page_says(retriever, monkeypatch, capsys):
    """A `[7]` with no snippet 7 is counted and named by every shell: never "all verified"."""
    from codeqa.cli.ask import _print_citations
    from codeqa.mcp.schemas import answer_text
    from codeqa.mcp.tools import RepositoryTools
    from rich.console import Console

    answer = _ask(retriever, "EncoderClass.encode hashes each word of tokenize(text) [1][42].\nThat is the how.")
    report = describe_citations(answer)
    assert "1 unverified (the prompt had no snippet [42])" not in report.line  # 42 is past the last snippet: rote
    assert "written by rote" in report.line and "all verified" not in report.line
    console = Console(highlight=False, soft_wrap=True, width=400)
    _print_citations(console, answer)
    assert report.line in capsys.readouterr().out
    tools = RepositoryTools.__new__(RepositoryTools)
    tools._answers = {}
    result = tools._keep(HOW_Q, answer)
    assert result.citations_summary == report.line and report.line in answer_text(result)
    assert any(c.supported for c in result.citations)
    from codeqa.answer import answer_to_json
    data = json.loads(json.dumps(answer_to_json(answer)))
    assert data["citations_summary"] == report.line and data["grounded"] == answer.grounded
    assert {"supported", "support_reason", "counted", "rote"} <= set(data["citations"][0])


def test_the_page_counts_a_citation_of_no_snippet_and_never_says_all_verified(monkeypatch, calls, indexed_repo, llm_stub):
    """The page used to drop `[42]` (line 0) before its summary and say "all verified"; the CLI marked it ✗."""
    llm_stub.reply("EncoderClass.encode hashes each word of tokenize(text) [1][42].\nThat is the how.")
    at = page(monkeypatch, indexed_repo, OPENAI_BASE_URL=llm_stub.base_url, OPENAI_API_KEY="test-key",
              CODEQA_MODEL="stub-model", CODEQA_LLM_TIMEOUT="5")
    ask(at, HOW_Q)
    captions = texts(at.caption)
    assert "all verified" not in captions
    assert "1 citation written by rote, not counted (the prompt had no snippet [42])" in captions
    chips = at.chat_message[-1].get("html")[0].proto.body
    assert "✗ [42]" in chips and "cq-bad" in chips


def test_the_precision_bench_reads_its_label_format():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("attribution_precision", root / "bench" / "attribution_precision.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.measure([str(root / "bench" / "questions" / "attribution-labels.jsonl")])
    assert result["counts"]["sentences"] == 6 and result["attribution_precision"] == 1.0
    assert result["unsupported_precision"] == 1.0 and not result["misses"]


def test_a_run_on_a_line_of_its_own_cites_the_uncited_sentences_above_it():
    """Qwen2.5-Coder-1.5B without the grammar writes a paragraph, then its numbers alone on the next line."""
    text = ("The make_encoder function builds an Encoder. It keeps the dim on the Encoder.\n\n[1]\n\n"
            "The Encoder caches vectors in Redis.\n\n[1]")
    shown = Citation(ENCODER.path, ENCODER.start_line, ENCODER.end_line, True)
    (checked,) = check_support(text, [shown], [ENCODER], [ENCODER.path], lambda p, s, e: ENCODER.text)
    assert checked.supported is False and "`Redis`" in checked.support_reason
    found = claims(text, [replace(shown, supported=True, counted=True)], [ENCODER], [ENCODER.path])
    assert [c.supported for c in found] == [True, True, True]  # each sentence rests on the run after it
    assert attribute(text, [ENCODER], []) == []  # they are cited: nothing to attribute
    # under the citation grammar a line ends with its numbers: they cite the line's uncited sentences too
    line = "The make_encoder function builds an Encoder. It caches vectors in Redis. It keeps the dim [1].\nOther [1]."
    (checked,) = check_support(line, [shown], [ENCODER], [ENCODER.path], lambda p, s, e: ENCODER.text)
    assert checked.supported is False and "`Redis`" in checked.support_reason


def test_names_spread_over_two_cited_spans_are_not_support():
    """The 1.5B on streamlink: "The `DASHStream` class … defining its own `process_segments` method [1][2]", with
    `DASHStream` in [1] and `process_segments` in [2] (another class's method): neither says the claim."""
    dash = Snippet("dash.py", 216, 220, "class DASHStream(Stream):\n    __shortname__ = \"dash\"\n")
    kick = Snippet("kick.py", 78, 82, "class KickHLSStreamWorker(HLSStreamWorker):\n    def process_segments(self, playlist):\n"
                                      "        return super().process_segments(playlist)\n")
    text = "The `DASHStream` class defines its own implementation of the `process_segments` method [1][2]."
    shown = [Citation(s.path, s.start_line, s.end_line, True) for s in (dash, kick)]
    by_path = {s.path: s.text for s in (dash, kick)}
    checked = check_support(text, shown, [dash, kick], ["dash.py", "kick.py"], lambda p, s, e: by_path[p])
    assert [c.supported for c in checked] == [False, False]
    assert checked[0].support_reason == "cited, but these lines do not mention `process_segments`"
    calls = "`KickHLSStreamWorker` overrides `process_segments` [2][1]."
    checked = check_support(calls, shown, [dash, kick], ["dash.py", "kick.py"], lambda p, s, e: by_path[p])
    assert [c.supported for c in checked] == [False, True]  # [2] says it all; [1] mentions none of it


def test_a_method_snippet_mentions_the_class_whose_header_the_model_was_shown():
    """Retrieval adds a member's class header ([1]); "the `format` method of the `ProgressFormatter` class [2]" is
    then supported by the method's lines, which do not repeat the class name."""
    header = Snippet("progress.py", 26, 27, "class ProgressFormatter:\n    \"\"\"Format a progress line.\"\"\"\n")
    method = Snippet("progress.py", 53, 55, "    @classmethod\n    def format(cls, formats, params):\n        return ''\n")
    shown = [Citation(s.path, s.start_line, s.end_line, True) for s in (header, method)]
    text = "It is done in the `format` method of the `ProgressFormatter` class [2]."
    checked = check_support(text, shown, [header, method], ["progress.py"],
                            lambda p, s, e: next(x.text for x in (header, method) if x.start_line == s))
    assert checked[1].supported is True
    alone = check_support(text.replace("[2]", "[1]"), shown[1:], [method], ["progress.py"], lambda p, s, e: method.text)
    assert alone[0].supported is False  # without the header the model saw nothing of the class


def test_an_answer_that_repeats_the_prompts_wording_is_not_grounded(retriever):
    """The prompt's own rule, turned into a cited claim, is no answer: the answer is flagged and not grounded,
    whatever its citation says, in the summary every shell shows."""
    real = "EncoderClass.encode adds one to a bucket for each word of tokenize(text) [1]."
    assert _ask(retriever, real).grounded
    echo = real + "\nEnd every sentence with the number of the snippet it rests on [1]."
    answer = _ask(retriever, echo)
    assert answer.echoes == ("End every sentence with the number of the snippet it rests on [1].",)
    assert not answer.grounded
    assert any(w.startswith("Not an answer: 1 sentence repeats the prompt's own wording") for w in describe_citations(answer).warnings)


def test_only_codeqas_own_note_is_taken_off_the_model_text(retriever):
    """A model's closing run of numbers on a line of its own cites the sentences above it: it is the model's text,
    not codeqa's note (which may hold brackets of its own, from the endpoint's error)."""
    closing = "EncoderClass.encode adds one to a bucket for each word of tokenize(text).\n\n[1]"
    assert model_text(closing) == closing
    note = "\n\n[The answer was cut off: HTTP 500 [oops] from the server]\n"
    assert model_text(closing + note) == closing
    assert model_text(closing + "\n\n[The answer was cut: the model had started repeating itself.]\n") == closing
    assert _ask(retriever, closing).grounded  # the run cites the sentence above it
