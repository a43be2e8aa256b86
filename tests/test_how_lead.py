"""An extractive answer to "how does X work?" leads with the code that does the work (issue 42), on a small
package indexed for real: a retry strategy whose work sits in `__call__` under a long class docstring, and
an entry point (`App.url_for`) that hands the work to `Router.build`."""

from __future__ import annotations

import pytest

from codeqa.answer import Answerer
from codeqa.query.lead import logic_lines
from codeqa.query.question import asks_behaviour
from codeqa.query.retrieve import Retriever
from conftest import index_package

FILES = {
    "pkg/__init__.py": "from .wait import wait_exponential\nfrom .app import App\n",
    "pkg/wait.py": '''class WaitError(Exception):
    """Raised when the exponential backoff wait before the next attempt cannot be computed."""


class wait_exponential:
    """Wait strategy that applies exponential backoff.

    It allows for a customized multiplier and an ability to restrict the
    upper and lower limits to some maximum and minimum value. The
    intervals are fixed (i.e. there is no jitter), so this strategy is
    suitable for balancing retries against latency when a required
    resource is unavailable for an unknown duration.
    """

    def __init__(self, multiplier=1, max_wait=60, exp_base=2, min_wait=0):
        self.multiplier = multiplier
        self.min_wait = min_wait
        self.max_wait = max_wait
        self.exp_base = exp_base

    def __call__(self, attempt_number):
        try:
            exp = self.exp_base ** (attempt_number - 1)
            result = self.multiplier * exp
        except OverflowError:
            return self.max_wait
        return max(max(0, self.min_wait), min(result, self.max_wait))
''',
    "pkg/app.py": '''from .router import Router


class App:
    """A web application: routes and the URLs built from them."""

    def __init__(self):
        self.router = Router()

    def url_for(self, name, **args):
        """Return the URL of a named route, its wildcards filled in from args."""
        return self.router.build(name, **args)
''',
    "pkg/router.py": '''class Router:
    def __init__(self):
        self.builders = {}

    def add(self, name, parts):
        self.builders[name] = parts

    def build(self, name, **args):
        builder = self.builders.get(name)
        if builder is None:
            raise KeyError(name)
        url = []
        for key, value in builder:
            url.append(str(args.pop(key)) if key else value)
        query = "&".join(f"{k}={v}" for k, v in args.items())
        return "".join(url) + ("?" + query if query else "")
''',
}


@pytest.fixture(scope="module")
def how_repo(tmp_path_factory, embedder):
    return index_package(tmp_path_factory.mktemp("how-lead") / "repo", FILES, embedder)


@pytest.fixture
def answerer(how_repo, embedder, settings):
    with Retriever.open(how_repo, settings, embedder) as retriever:
        yield Answerer(retriever, settings)


def lead(answer) -> tuple[str, int]:
    return answer.citations[0].path, answer.citations[0].start_line


def test_a_class_hit_is_led_by_its_method_that_does_the_work(answerer):
    answer = answerer.answer("How does exponential backoff compute how long to wait before the next attempt?",
                             no_llm=True)
    assert lead(answer) == ("pkg/wait.py", 21), answer.answer  # wait_exponential.__call__, not the class header
    # the class stays in the evidence, so an LLM reads the method in its class; the list does not show it again
    assert any(s.path == "pkg/wait.py" and s.start_line <= 5 and s.end_line >= 27 for s in answer.snippets)
    assert ("pkg/wait.py", 5) not in [(c.path, c.start_line) for c in answer.citations]


def test_a_thin_entry_point_is_led_by_the_callee_doing_the_work(answerer):
    answer = answerer.answer("How does url_for fill in the wildcards of a named route?", no_llm=True)
    assert lead(answer) == ("pkg/router.py", 8), answer.answer  # Router.build, then the entry point
    assert "`App.url_for` hands it the work" in answer.answer.split("\n2.")[0]
    assert ("pkg/app.py", 10) in [(c.path, c.start_line) for c in answer.citations[1:]]


def test_a_name_or_a_description_is_searched_as_before(answerer):
    hits = answerer.retriever.search("url_for", top_k=3)
    assert hits[0].path == "pkg/app.py" and hits[0].start_line <= 10 <= hits[0].end_line
    assert not any("zoom" in h.reasons or "delegate" in h.reasons for h in hits)


def test_behaviour_questions():
    assert asks_behaviour("How does the router match a path?")
    assert asks_behaviour("What happens when the cache is full?")
    assert asks_behaviour("Where are middleware applied?")
    assert not asks_behaviour("What is the Router for?")
    assert not asks_behaviour("How many routes can an app have?")
    assert not asks_behaviour("Return the URL of a named route")


def test_logic_lines_leave_out_docstrings_decorators_and_headers():
    assert logic_lines(FILES["pkg/wait.py"].split("\n\n\n")[0]) == 0  # an exception class with a docstring
    method = '''    @property
    def size(self):
        """The size.

        Long."""
        # cached
        if self._size is None:
            self._size = len(self.items)
        return self._size
'''
    assert logic_lines(method) == 3
    assert logic_lines("    def " + FILES["pkg/wait.py"].split("    def ")[1]) == 0  # a constructor that stores its arguments
