"""Usage questions about names several definitions share (issue 42), on a small package indexed for real:
a module-level `get` beside `Session.get`, and a public `is_error` beside a same-named helper in a
private module. The question's words decide the reading; without a deciding word the public API wins,
never the helper."""

from __future__ import annotations

import pytest

from codeqa.answer import Answerer
from codeqa.llm import FakeChat
from codeqa.query.retrieve import Retriever
from conftest import index_package

FILES = {
    "pkg/__init__.py": "from .api import get\nfrom .status import is_error\n",
    "pkg/api.py": '''from .sessions import Session


def get(url):
    """Send a GET request through a fresh session."""
    with Session() as session:
        return session.get(url)
''',
    "pkg/sessions.py": '''class Session:
    """Keeps settings across requests."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def get(self, url):
        """GET through this session."""
        return self.request("GET", url)

    def request(self, method, url):
        return (method, url)
''',
    "pkg/status.py": '''def is_error(code):
    """Whether an HTTP status code is an error."""
    return code >= 400
''',
    "pkg/_compat.py": '''def is_error(value):
    return isinstance(value, Exception)


def check(value):
    return is_error(value)
''',
    "pkg/client.py": '''from . import api
from .sessions import Session
from .status import is_error


def fetch(url):
    code = api.get(url)
    return None if is_error(code) else code


def fetch_many(urls):
    session = Session()
    return [session.get(u) for u in urls]
''',
}


@pytest.fixture(scope="module")
def shared_names_repo(tmp_path_factory, embedder):
    return index_package(tmp_path_factory.mktemp("shared-names") / "repo", FILES, embedder)


@pytest.fixture
def answerer(shared_names_repo, embedder, settings):
    with Retriever.open(shared_names_repo, settings, embedder) as retriever:
        yield Answerer(retriever, settings)


def first_citation(answer) -> tuple[str, int]:
    return answer.citations[0].path, answer.citations[0].start_line


def test_a_bare_get_means_the_module_function_not_the_method(answerer):
    answer = answerer.answer("Where is get called?")
    assert answer.route == "usage"
    assert [s.qualified_name for s in answer.definitions] == ["get"] and answer.definitions[0].path == "pkg/api.py"
    assert first_citation(answer) == ("pkg/api.py", 4)
    assert ("pkg/client.py", 7) in {(r.path, r.line) for r in answer.references}  # api.get(url)
    # the reading set aside is named, with the words that ask for it
    assert ("`get` also names `Session.get` in `pkg/sessions.py`; the uses below are those of `get` in `pkg/api.py`. "
            "Ask about “the get method of Session” for that one.") in answer.answer
    method = answerer.answer("Who calls the get method of Session?")
    assert [s.qualified_name for s in method.definitions] == ["Session.get"] and "also names" not in method.answer


def test_the_public_function_beats_a_helper_in_a_private_module(answerer):
    answer = answerer.answer("Which parts of the code call is_error?")
    assert answer.route == "usage"
    assert [s.path for s in answer.definitions] == ["pkg/status.py"] and not answer.summary.others
    assert first_citation(answer) == ("pkg/status.py", 1)
    sites = {(r.path, r.line) for r in answer.references}
    assert ("pkg/client.py", 8) in sites and ("pkg/_compat.py", 6) not in sites
    assert "`is_error` also names `is_error` in `pkg/_compat.py`" in answer.answer
    # the question's words still reach the helper
    helper = answerer.answer("Where is is_error in _compat.py called?")
    assert [s.path for s in helper.definitions] == ["pkg/_compat.py"]


def test_the_prompt_tells_the_model_which_readings_were_set_aside(shared_names_repo, embedder, settings):
    chat = FakeChat()
    with Retriever.open(shared_names_repo, settings, embedder) as retriever:
        Answerer(retriever, settings, chat=chat).answer("Where is get called?")
    prompt = chat.requests[0][-1]["content"]
    assert "the name also names: Session.get (method) at pkg/sessions.py:L10" in prompt
