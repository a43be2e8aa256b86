"""Answers: the real `openai` client against a local OpenAI-compatible stub, citation verification,
redaction, follow-ups, extractive mode, and the `ask` command's output and exit codes."""

from __future__ import annotations

import json
import socket

import pytest

from codeqa.answer import (EXTRACTIVE_NOTE, SYSTEM_PROMPT, Answerer, Conversation, Turn, answer_to_json, build_messages,
                           parse_citations, verify_citations)
from codeqa.llm import ChatDelta, EndpointInfo, FakeChat, Generation, OpenAIChat
from codeqa.cli import main
from codeqa.config import Settings
from codeqa.errors import LLMError
from codeqa.redact import redact
from codeqa.query.pack import count_tokens
from codeqa.query.retrieve import Retriever
from codeqa.types import Snippet
from conftest import copy_fixture_repo
from llm_stub import Reply

USAGE_Q = "Where is EncoderClass used?"
FAKE_KEY = "sk-live-1234567890abcdefGHIJKLMN"
DB_PASSWORD = "hunter2hunter2"
KEY_BODY = "MIIEowIBAAKCAQEAx1234567890abcdefghijklmnopqrstuv"
SECRET_MODULE = f'''"""Service settings."""

API_KEY = "{FAKE_KEY}"
DB_URL = "postgres://admin:{DB_PASSWORD}@db.internal:5432/app"
SIGNING_KEY = """-----BEGIN RSA PRIVATE KEY-----
{KEY_BODY}
-----END RSA PRIVATE KEY-----"""


def connect_to_database(url=DB_URL):
    """Open the service database connection with the API key."""
    return (url, API_KEY, SIGNING_KEY)
'''


@pytest.fixture
def retriever(indexed_repo, embedder, settings):
    with Retriever.open(indexed_repo, settings, embedder) as r:
        yield r


@pytest.fixture(scope="module")
def secret_repo(tmp_path_factory, embedder):
    """The fixture repo plus a module with credentials in it, indexed."""
    from codeqa.indexing.index import index_repo

    repo = copy_fixture_repo(tmp_path_factory.mktemp("secret") / "repo")
    (repo / "app" / "service.py").write_text(SECRET_MODULE)
    index_repo(repo, Settings.load(env={}), embedder=embedder)
    return repo


def lines_of(repo, path):
    return (repo / path).read_text().splitlines()


# ---- citations ------------------------------------------------------------------------------------

def test_parse_citations_accepts_the_usual_spellings_and_nothing_else():
    text = ("See `app/main.py:L5-L9`, app/cli.py:L14 and encoders/encoder.py:21-26; also web/util.ts#L2-L4, "
            "docs/guide.md L7, Makefile:L3, again app/main.py:L5-L9. Not: localhost:8080, 12:30, "
            "http://example.com:80/x, ratio 3:4, code like {self.precision: 1} or obj.attr: 12.")
    found = [(c.path, c.start_line, c.end_line) for c in parse_citations(text, known_paths={"Makefile"})]
    assert found == [("app/main.py", 5, 9), ("app/cli.py", 14, 14), ("encoders/encoder.py", 21, 26),
                     ("web/util.ts", 2, 4), ("docs/guide.md", 7, 7), ("Makefile", 3, 3)]


def test_numbered_citations_side_by_side_each_count():
    """`[2][4]` is the form the prompt's REMINDER asks for and the citation grammar writes (`cite ::= ("[" n "]")+`),
    and Qwen2.5-Coder-1.5B writes it: every number of such a run is a citation, not only the first. Indexing,
    a markdown reference link and a marker followed by a link's parenthesis are not citations."""
    from codeqa.answer.citations import parse_numbered

    snippets = [Snippet(f"pkg/m{i}.py", i, i + 1, "x") for i in range(1, 6)]
    text = ("The cache is dropped on writes [1][3]. Ids come from the table [2] [4][5], "
            "not from foo[0][1], a [docs][2] link or [1][2](http://example.com).")
    assert sorted(c.path for c in parse_numbered(text, snippets)) == [f"pkg/m{i}.py" for i in range(1, 6)]
    assert parse_numbered("x = foo[0][1] and see [docs][2] or [1][2](http://example.com)", snippets) == []


def test_verify_citations_only_within_the_given_snippets():
    snippets = [Snippet("pkg/a.py", 10, 20, "x\n" * 11), Snippet("pkg/a.py", 21, 25, "y\n" * 5),
                Snippet("pkg/b.py", 1, 3, "z\n" * 3)]
    lengths = {"pkg/a.py": 40, "pkg/b.py": 3, "pkg/c.py": 10}
    cited = parse_citations("pkg/a.py:L12-L24 pkg/a.py:L5-L12 pkg/b.py:L2-L9 pkg/c.py:L1 pkg/nope.py:L1 a.py:L10 "
                            "b.py:L3-L2")
    result = {(c.path, c.start_line, c.end_line): c for c in verify_citations(cited, snippets, lengths, lengths.get)}
    assert result[("pkg/a.py", 12, 24)].verified  # spans two adjacent snippets
    assert result[("pkg/a.py", 5, 12)].reason == "lines outside the snippets given to the model"
    assert result[("pkg/b.py", 2, 9)].reason == "the file has only 3 lines"
    assert result[("pkg/c.py", 1, 1)].reason == "lines outside the snippets given to the model"  # indexed, not shown
    assert result[("pkg/nope.py", 1, 1)].reason == "file not in the index"
    assert result[("pkg/a.py", 10, 10)].verified  # unique suffix completed
    assert not result[("pkg/b.py", 3, 2)].verified
    assert sum(c.verified for c in result.values()) == 2


def test_redact_blanks_credentials_and_keeps_lines():
    redacted = redact(SECRET_MODULE + 'token = get_token(user)\npassword = os.environ["DB_PASSWORD"]\n'
                      'headers = {"Authorization": "Bearer abcdefghijklmnop1234"}\nAWS = "AKIAABCDEFGHIJKLMNOP"\n')
    for secret in (FAKE_KEY, DB_PASSWORD, KEY_BODY, "abcdefghijklmnop1234", "AKIAABCDEFGHIJKLMNOP"):
        assert secret not in redacted
    assert "token = get_token(user)" in redacted and 'os.environ["DB_PASSWORD"]' in redacted
    assert len(redacted.splitlines()) == len(SECRET_MODULE.splitlines()) + 4


@pytest.mark.parametrize("token", [
    "sk-proj-Ab3dEf6hIj9kLm2nOp5q", "ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3L", "gho_Zx9Yw8Vu7Ts6Rq5Po4Nm3L", "ghu_Zx9Yw8Vu7Ts6Rq5Po4Nm3L",
    "ghs_Zx9Yw8Vu7Ts6Rq5Po4Nm3L", "ghr_Zx9Yw8Vu7Ts6Rq5Po4Nm3L", "github_pat_11ABCDEFG0123456789abc",
    "xoxb-123456789012-abc", "AKIAABCDEFGHIJKLMNOP", "ASIAABCDEFGHIJKLMNOP", "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "glpat-Ab3dEf6hIj9kLm2nOp5q", "hf_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"])
def test_every_kind_of_api_token_is_blanked(token):
    # the token regex only runs where one of its prefixes occurs: each kind must still be caught
    redacted = redact(f"client = Client({token!r})  # pasted by mistake\n")
    assert token not in redacted and "[REDACTED]" in redacted


def test_a_password_in_a_url_is_blanked_on_every_line_that_has_one():
    # the URL pattern runs only on the lines holding a `://`: the first, a middle and an unterminated last
    source = ("A = 'https://user:pw1secret@host/x'\n# docs: http://example.com/a:b\n\n"
              "B = connect('redis://default:pw2secret@cache:6379') or 'x://y'\nC = 'ftp://me:pw3secret@files'")
    redacted = redact(source)
    assert not any(pw in redacted for pw in ("pw1secret", "pw2secret", "pw3secret"))
    assert redacted.count("[REDACTED]@") == 3 and redacted.count("\n") == source.count("\n")
    assert "http://example.com/a:b" in redacted and redacted.endswith("[REDACTED]@files'")


def test_an_unterminated_key_header_blanks_the_key_not_the_rest_of_the_file():
    source = ('HEADER = "-----BEGIN OPENSSH PRIVATE KEY-----\\n"\nunterminatedKeyHeaderCheck = 1\n\ndef check(text):\n    return text.startswith(HEADER)\n'
              'PASTED = """-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"""\n')
    redacted = redact(source)
    assert "unterminatedKeyHeaderCheck = 1\n\ndef check(text):\n    return text.startswith(HEADER)\n" in redacted  # code stays
    assert 'HEADER = "[REDACTED PRIVATE KEY]\\n"' in redacted
    assert "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo" not in redacted and "4lgOEePzNm0tRgeLezV6ffAt0gunVTLw" not in redacted
    assert len(redacted.splitlines()) == len(source.splitlines())


# ---- the ChatModel contract, one test class for every implementation ------------------------------

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say something."}]


class ChatModelContract:
    """What every ChatModel must do (see the protocol's docstring). Subclasses provide `chat_for`:
    reply text -> (chat model answering with it, function counting the requests sent); None -> a
    chat model whose endpoint fails."""

    @pytest.fixture
    def chat_for(self):
        raise NotImplementedError

    def test_stream_pieces_join_to_the_reply_and_nothing_is_sent_before_iteration(self, chat_for):
        chat, sent = chat_for("one two  three\nfour")
        stream = chat.stream(MESSAGES)
        assert sent() == 0
        deltas = list(stream)
        texts = [d.text for d in deltas if d.text]
        assert len(texts) > 1 and all(isinstance(d, ChatDelta) for d in deltas)
        assert "".join(texts) == "one two  three\nfour" and sent() == 1
        assert deltas[-1].finish == "stop" and not any(d.reasoning for d in deltas)

    def test_max_tokens_cuts_the_reply_and_says_length(self, chat_for):
        chat, _ = chat_for("w " * 50)
        deltas = list(chat.stream(MESSAGES, Generation(max_tokens=5)))
        assert "".join(d.text for d in deltas).split() == ["w"] * 5 and deltas[-1].finish == "length"

    def test_complete_returns_the_whole_reply(self, chat_for):
        chat, sent = chat_for("the whole reply")
        assert chat.complete(MESSAGES) == "the whole reply" and sent() == 1

    def test_failures_are_one_llm_error_sentence(self, chat_for):
        chat, _ = chat_for(None)
        for call in (lambda: list(chat.stream(MESSAGES)), lambda: chat.complete(MESSAGES)):
            with pytest.raises(LLMError) as info:
                call()
            assert str(info.value).strip() and "\n" not in str(info.value)

    def test_model_is_named_and_info_never_raises(self, chat_for):
        chat, _ = chat_for("x")
        assert isinstance(chat.model, str) and chat.model
        info = chat.info()
        assert isinstance(info, EndpointInfo) and (info.window is None or info.window > 0)
        counted = chat.count_tokens(MESSAGES)
        assert counted is None or counted > 0


class TestFakeChat(ChatModelContract):
    @pytest.fixture
    def chat_for(self):
        def make(reply):
            chat = FakeChat([reply or ""], error=None if reply else LLMError("The fake chat endpoint failed."))
            return chat, lambda: len(chat.requests)
        return make


class TestOpenAIChat(ChatModelContract):
    @pytest.fixture
    def chat_for(self, llm_stub):
        def make(reply):
            llm_stub.reply(reply) if reply is not None else llm_stub.reply(status=500, error="broken")
            return OpenAIChat("stub-model", llm_stub.base_url, "k", timeout=2, max_retries=0), \
                lambda: len(llm_stub.chat_requests)
        return make


# ---- the LLM path against the stub ----------------------------------------------------------------

def test_llm_answer_streams_and_verifies_citations(retriever, llm_stub, llm_settings):
    llm_stub.reply("EncoderClass is defined in `encoders/encoder.py:L15-L30` and built in app/cli.py:L9. "
                   "It is also used in app/ghost.py:L1-L4 and app/legacy.py:L1-L3.")
    stream = Answerer(retriever, llm_settings).stream(USAGE_Q)
    pieces = list(stream)
    answer = stream.answer
    assert len(pieces) > 5 and "".join(pieces) == answer.answer and answer.mode == "llm"
    assert answer.model == "stub-model" and answer.error is None
    by_label = {(c.path, c.start_line, c.end_line): c for c in answer.citations}
    assert by_label[("encoders/encoder.py", 15, 30)].verified
    assert by_label[("app/cli.py", 9, 9)].verified
    assert by_label[("app/ghost.py", 1, 4)].reason == "file not in the index"
    assert by_label[("app/legacy.py", 1, 3)].reason == "lines outside the snippets given to the model"
    request = llm_stub.chat_requests[-1]
    assert request.body["stream"] is True and request.body["model"] == "stub-model"
    assert request.headers["authorization"] == "Bearer test-key"
    system, user = request.messages[0], request.messages[-1]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    assert "Question: Where is EncoderClass used?" in user["content"]
    assert "encoders/encoder.py:L15-L" in user["content"] and "15 | class EncoderClass(BaseEncoder):" in user["content"]
    assert "5 reference site(s) in 2 file(s)" in user["content"]
    for snippet in answer.snippets:  # the model saw exactly the snippets the answer reports
        assert snippet.label in user["content"]


def test_plain_completion_is_not_streamed(llm_stub):
    llm_stub.reply("plain reply")
    chat = OpenAIChat("stub-model", llm_stub.base_url, "k", timeout=5)
    assert chat.complete([{"role": "user", "content": "hi"}]) == "plain reply"
    assert llm_stub.chat_requests[-1].body["stream"] is False


def test_secrets_never_reach_the_llm(secret_repo, embedder, llm_stub, llm_settings):
    llm_stub.reply("It passes the key: app/service.py:L10-L12.")
    with Retriever.open(secret_repo, llm_settings, embedder) as retriever:
        answer = Answerer(retriever, llm_settings).answer("how does connect_to_database use the API key and SIGNING_KEY?")
    sent = llm_stub.chat_requests[-1].text
    assert "def connect_to_database" in sent and "[REDACTED" in sent
    for secret in (FAKE_KEY, DB_PASSWORD, KEY_BODY):
        assert secret not in sent
        assert all(secret not in s.text for s in answer.snippets)
    assert any(c.verified and c.path == "app/service.py" for c in answer.citations)


def test_follow_up_rewrites_the_query_and_sends_history(retriever, llm_stub, llm_settings):
    llm_stub.script(Reply("EncoderClass hashes words: encoders/encoder.py:L15-L30."), Reply("Called in app/main.py:L9."))
    answerer = Answerer(retriever, llm_settings)
    conversation = Conversation()
    first = answerer.stream("What does EncoderClass do?", conversation).result()
    second = answerer.stream("and where is it used?", conversation).result()
    assert first.query == "What does EncoderClass do?"
    assert second.query == "where is EncoderClass used?" and second.route == "usage"
    messages = llm_stub.chat_requests[-1].messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "What does EncoderClass do?"
    assert messages[2]["content"] == "EncoderClass hashes words: encoders/encoder.py:L15-L30."
    assert "(Follow-up, read as: where is EncoderClass used?)" in messages[3]["content"]
    assert len(conversation) == 2


def test_conversation_rewrites_and_bounds():
    conversation = Conversation(max_turns=2, max_history_tokens=60)
    assert conversation.rewrite("and where is it called?") == "and where is it called?"  # no history yet
    conversation.add(Turn("Where is EncoderClass used?", "Where is EncoderClass used?", "answer " * 5, ("EncoderClass",)))
    assert conversation.rewrite("and where is it called?") == "where is EncoderClass called?"
    assert conversation.rewrite("what about tokenize?", names=["tokenize"]) == "Where is tokenize used?"
    assert conversation.rewrite("How does format_name title-case a name?", names=["format_name"]) == \
        "How does format_name title-case a name?"
    assert conversation.rewrite("and its tests?") == "EncoderClass's tests?"
    for n in range(5):
        conversation.add(Turn(f"question {n}", f"question {n}", "word " * 30, ("X",)))
    history = conversation.messages()
    assert 2 <= len(history) <= 4 and history[-2]["content"] == "question 4"
    assert sum(count_tokens(m["content"]) for m in history) <= 60 + 16


def test_endpoint_errors_are_one_clear_sentence(llm_stub):
    chat = OpenAIChat("stub-model", llm_stub.base_url, "k", timeout=1.0, max_retries=0)
    messages = [{"role": "user", "content": "hi"}]
    cases = [(Reply(status=500, error="model crashed"), "answered HTTP 500 for model 'stub-model': model crashed"),
             (Reply(status=401), "OPENAI_API_KEY"), (Reply(status=404), "CODEQA_MODEL"),
             (Reply(delay=3), "did not answer within 1s")]
    for reply, expected in cases:
        llm_stub.script(reply)
        with pytest.raises(LLMError) as info:
            list(chat.stream(messages))
        message = str(info.value)
        assert expected in message and llm_stub.base_url in message and "\n" not in message
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    with pytest.raises(LLMError, match="Could not reach the chat endpoint .* check OPENAI_BASE_URL"):
        list(OpenAIChat("m", f"http://127.0.0.1:{closed}/v1", "k", timeout=1.0, max_retries=0).stream(messages))


def test_llm_down_still_returns_the_evidence(retriever, llm_stub, llm_settings):
    llm_stub.reply(status=503, error="overloaded")
    answer = Answerer(retriever, llm_settings.with_(llm_timeout=2.0)).answer(USAGE_Q)
    assert answer.error and "HTTP 503" in answer.error and "overloaded" in answer.error
    assert answer.mode == "extractive" and answer.snippets and answer.references
    assert answer.answer.startswith("The LLM could not be used:") and EXTRACTIVE_NOTE in answer.answer
    assert answer.citations and all(c.verified for c in answer.citations)


def test_stream_cut_off_keeps_the_partial_answer(retriever, llm_stub, llm_settings):
    llm_stub.reply("EncoderClass is at encoders/encoder.py:L15-L30 and more words follow", stall_after=4)
    answer = Answerer(retriever, llm_settings.with_(llm_timeout=1.0)).answer(USAGE_Q)
    assert answer.mode == "llm" and "did not answer within 1s" in answer.error
    assert answer.answer.startswith("EncoderClass is at encoders/encoder.py:L15-L30")
    assert "[The answer was cut off:" in answer.answer and "more words follow" not in answer.answer
    assert [c.verified for c in answer.citations] == [True]


def test_extractive_needs_no_network_and_every_citation_is_real(retriever, indexed_repo, llm_stub, llm_settings):
    answerer = Answerer(retriever, llm_settings)
    for question in (USAGE_Q, "How does tokenize split text?", "what is the connection between run and tokenize",
                     "what does app/cli.py do", "How are greetings built in Java?"):
        stream = answerer.stream(question, no_llm=True)
        answer = stream.result()
        assert answer.mode == "extractive" and answer.answer.startswith(EXTRACTIVE_NOTE), question
        assert answer.citations and all(c.verified for c in answer.citations), question
        assert stream.first_token_seconds is not None
        for c in answer.citations:
            assert 1 <= c.start_line <= c.end_line <= len(lines_of(indexed_repo, c.path))
    assert llm_stub.requests == []


def test_answerer_with_a_fake_chat(retriever):
    chat = FakeChat(["First `encoders/encoder.py:L33-L35`.", lambda messages: f"{len(messages)} messages"])
    answerer = Answerer(retriever, retriever.settings, chat=chat)
    first = answerer.answer("How does tokenize work?")
    assert first.mode == "llm" and first.model == "fake" and first.citations[0].verified
    assert answerer.answer("again?").answer == "2 messages"
    assert chat.requests[0][0]["content"] == SYSTEM_PROMPT
    failing = Answerer(retriever, retriever.settings, chat=FakeChat(error=LLMError("Could not reach the chat endpoint x.")))
    assert failing.answer(USAGE_Q).error == "Could not reach the chat endpoint x."


def test_prompt_numbers_snippets_and_lines(retriever):
    retrieval = retriever.retrieve(USAGE_Q)
    messages = build_messages(USAGE_Q, retrieval)
    user = messages[-1]["content"]
    assert user.count("\n[1] ") == 1 and f"[{len(retrieval.snippets)}] " in user
    assert " 7 | def build(dim):\n 8 | " in user and " 9 |     return enc.EncoderClass(dim)" in user


# ---- the command line ------------------------------------------------------------------------------

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_json_shape_extractive(capsys, indexed_repo):
    code, out, err = run(capsys, "ask", USAGE_Q, "--repo", str(indexed_repo), "--json", "--no-llm")
    assert code == 0, err
    result = json.loads(out)
    assert {"answer", "citations", "snippets", "mode"} <= set(result)
    assert result["mode"] == "extractive" and result["route"] == "usage"
    assert result["citations"] and all(set(c) >= {"path", "start_line", "end_line", "verified"} and c["verified"]
                                       for c in result["citations"])
    for s in result["snippets"]:
        assert set(s) >= {"path", "start_line", "end_line", "text"}
        assert s["text"].splitlines() == lines_of(indexed_repo, s["path"])[s["start_line"] - 1:s["end_line"]]
    assert len(result["references"]) == 5


def test_ask_with_llm_from_the_environment(capsys, indexed_repo, llm_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm_stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    llm_stub.reply("See encoders/encoder.py:L15-L30 and invented/file.py:L1-L2.")
    code, out, err = run(capsys, "ask", USAGE_Q, "--repo", str(indexed_repo), "--json", "--model", "m-flag")
    assert code == 0, err
    result = json.loads(out)
    assert result["mode"] == "llm" and result["model"] == "m-flag"
    assert [(c["path"], c["verified"]) for c in result["citations"]] == \
        [("encoders/encoder.py", True), ("invented/file.py", False)]
    assert llm_stub.chat_requests[-1].body["model"] == "m-flag"
    monkeypatch.setenv("CODEQA_MODEL", "m-env")
    code, out, err = run(capsys, "ask", USAGE_Q, "--repo", str(indexed_repo))
    assert code == 0 and llm_stub.chat_requests[-1].body["model"] == "m-env"
    assert "See encoders/encoder.py:L15-L30" in out
    # issue 63: the sentence names nothing but its citations, so its lines are verified, not checked for support (·)
    assert "· encoders/encoder.py:L15-L30 (verified" in out and "✗ invented/file.py:L1-L2 (unverified: file not in the index)" in out


def test_ask_llm_down_exit_1_with_message_and_evidence(capsys, indexed_repo, llm_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm_stub.base_url)
    monkeypatch.setenv("CODEQA_MODEL", "stub-model")
    llm_stub.reply(status=503, error="overloaded")
    code, out, err = run(capsys, "ask", USAGE_Q, "--repo", str(indexed_repo), "--json")
    assert code == 1
    *before, error = err.strip().splitlines()
    assert error.startswith("error: The chat endpoint") and "HTTP 503" in error and "overloaded" in error
    # the stub does not say its window: one note says what codeqa assumes and what to set; then what the model does
    notes = [line for line in before if line.startswith("note: ")]
    assert [n.split(";")[0] for n in notes] == [f"note: The endpoint {llm_stub.base_url} does not say its context window"]
    assert "CODEQA_CONTEXT_WINDOW" in notes[0] and "Traceback" not in err
    assert all(line.startswith("The model is reading") for line in before if line not in notes)
    result = json.loads(out)
    assert result["error"] and result["snippets"] and result["mode"] == "extractive"
    llm_stub.reply(status=500)
    code, out, err = run(capsys, "ask", USAGE_Q, "--repo", str(indexed_repo))
    assert code == 1 and "HTTP 500" in err
    # the answer found in the code was printed before the model was asked: it stands, once (issue 65)
    assert "The model could not answer" in out and "✓ app/cli.py:L9" in out and "The LLM could not be used" not in out


def test_answer_to_json_has_the_contract_keys(retriever):
    answer = Answerer(retriever, retriever.settings).answer("How does tokenize work?")
    data = answer_to_json(answer)
    assert list(data)[:4] == ["answer", "citations", "snippets", "mode"]
    json.dumps(data)


def test_a_definition_is_cited_with_the_range_refs_gives_even_when_its_snippet_was_cut(retriever):
    """One range per symbol: the definition the answer cites (chip, expander) is the graph's, as `refs` and
    find_symbol give it, though a small budget cut its snippet short."""
    (sym,) = retriever.graph.find_symbols("EncoderClass")
    whole = f"{sym.path}:L{sym.start_line}-L{sym.end_line}"
    small = Settings.load(env={"CODEQA_CONTEXT_TOKENS": "300"})
    chat = FakeChat([f"EncoderClass is defined at `{whole}`."])
    answer = Answerer(retriever, small, chat=chat).answer("How is EncoderClass used?")
    cut = next(s for s in answer.snippets if s.path == sym.path and s.start_line == sym.start_line)
    assert cut.end_line < sym.end_line  # the budget cut the definition's snippet
    assert [(c.path, c.start_line, c.end_line, c.verified) for c in answer.citations][:1] == [
        (sym.path, sym.start_line, sym.end_line, True)]
    extractive = Answerer(retriever, small).answer("How is EncoderClass used?", no_llm=True)
    assert f"({whole})" in extractive.answer.splitlines()[2] and all(c.verified for c in extractive.citations)
