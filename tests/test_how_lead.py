"""An extractive answer to "how does X work?" leads with the code that does the work (issue 42), on a small
package indexed for real: a retry strategy whose work sits in `__call__` under a long class docstring, and
an entry point (`App.url_for`) that hands the work to `Router.build`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from codeqa.answer import Answerer
from codeqa.query.lead import logic_lines, work_first
from codeqa.query.question import asks_behaviour
from codeqa.query.retrieve import Retriever
from codeqa.types import Hit
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
    "pkg/stop.py": '''import time


class stop_before_delay:
    """Stop condition for a time limit: stops retrying before the deadline would be passed."""

    def __init__(self, time_limit, clock=time.monotonic, sleep=time.sleep):
        self.deadline = clock() + float(time_limit)
        self.sleep_past_deadline = False
        self.clock = clock

    def __call__(self, state):
        left = self.deadline - self.clock()
        return state.next_wait >= left
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


def test_a_constructor_does_not_lead_a_behaviour_answer(answerer):
    # __init__ has more lines of logic than __call__ here, and the zoom used to pick it: it only sets up
    answer = answerer.answer("How does the time-limit stop condition avoid sleeping past the deadline?", no_llm=True)
    assert lead(answer) == ("pkg/stop.py", 12), answer.answer  # stop_before_delay.__call__
    assert ("pkg/stop.py", 7) not in [(c.path, c.start_line) for c in answer.citations]


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


def _hit(start, score, text, reasons=("dense",)):
    return Hit("m.py", start, start + 3, score, "function", f"f{start}", text, reasons=reasons)


def test_work_first_leads_with_the_hit_that_does_something_of_two_about_as_near():
    idle = _hit(1, 0.62, "def name(self):\n    return self._name\n")
    busy = _hit(10, 0.58, "def match(self, path):\n" + "".join(f"    step{i}(path)\n" for i in range(6)))
    far = _hit(30, 0.40, busy.text)
    assert [h.start_line for h in work_first([idle, busy, far])] == [10, 1, 30]
    # a long function is not preferred to one that does enough: the prior stops growing at WORK_CAP lines
    longer = _hit(50, 0.55, "def run(self):\n" + "".join(f"    step{i}()\n" for i in range(60)))
    assert [h.start_line for h in work_first([busy, longer])] == [10, 50]


def test_work_first_keeps_a_class_behind_the_method_zoomed_out_of_it():
    method = _hit(12, 0.50, "    def __call__(self, x):\n        return x + 1\n", reasons=("dense", "zoom"))
    cls = Hit("m.py", 5, 20, 0.70, "class", "C", "class C:\n" + "".join(f"    a{i} = f()\n" for i in range(8)),
              reasons=("dense",))
    other = _hit(40, 0.52, "def g():\n    return 1\n")
    assert [h.start_line for h in work_first([method, cls, other])] == [40, 12, 5]


class _Graph:
    def __init__(self, symbols):
        self.symbols = {s.id: s for s in symbols}

    def symbols_by_id(self, ids):
        return {i: self.symbols[i] for i in ids if i in self.symbols}

    def symbols_in_file(self, path):
        return [s for s in self.symbols.values() if s.path == path]


class _Source:
    def __init__(self, text):
        self.lines = text.splitlines()

    def text(self, path, start, end):
        return "\n".join(self.lines[start - 1:end])


class _Documents:
    """Embeds a text as a unit vector along axis 0 when it holds `send`, else along axis 1."""

    def encode(self, texts, batch_size=64):
        import numpy as np

        return np.array([[0.8, 0.6] if "send" in t else [0.0, 1.0] for t in texts], dtype=np.float32)


def test_a_zoomed_method_carries_what_the_questions_words_lifted_its_class_by():
    """The words lift (Searcher._lift_by_words) raised the class hit; the method zoomed out of it scores its own
    similarity plus that lift, so that it can lead before the class and the hits that were not lifted."""
    from codeqa.query.lead import zoom_hits
    from codeqa.types import Symbol

    text = ("class Mailer:\n    \"\"\"Sends mail.\"\"\"\n\n    def send(self, msg):\n        sock = connect()\n"
            "        sock.write(msg)\n        return sock.close()\n\n    def reset(self):\n        self.sent = []\n"
            "        clear()\n")
    def sym(name, kind, start, end):
        return Symbol(f"m.py#{name}@{start}", name.rpartition(".")[2], name, kind, "python", "m.py", start, end, "", "", None)

    cls, send, reset = sym("Mailer", "class", 1, 11), sym("Mailer.send", "method", 4, 7), sym("Mailer.reset", "method", 9, 11)
    hit = Hit("m.py", 1, 11, 0.9, "class", "Mailer", text, symbol_ids=(cls.id,), reasons=("dense", "words"), lift=0.15)
    out = zoom_hits([hit], "How is a message sent?", [1.0, 0.0], _Documents(), _Graph([cls, send, reset]), _Source(text))
    assert [h.symbol for h in out] == ["Mailer.send", "Mailer"]
    assert out[0].score == pytest.approx(0.8 + 0.15) and "zoom" in out[0].reasons


def test_a_signature_over_several_lines_is_no_logic():
    """A typed `@overload` stub (pathspec's `GitIgnoreSpec.from_lines`) did nothing, but its parameters, one a line,
    counted as logic, and it led the answer before the implementation; braces (a class body elsewhere) still count."""
    stub = ("\t@overload\n\t@classmethod\n\tdef from_lines(\n\t\tcls: Type[Self],\n\t\tlines: Iterable[AnyStr],\n"
            "\t\tfactory: Union[str, Callable[[AnyStr], Pattern], None] = None,\n\t) -> Self:\n\t\t...\n")
    assert logic_lines(stub) == 0
    assert logic_lines(stub.replace("\t\t...\n", "\t\tif lines:\n\t\t\treturn cls(lines)\n\t\treturn None\n")) == 3
    assert logic_lines("class Foo {\n  int x = 1;\n  void f() { run(); }\n}\n") == 2


def test_a_test_or_a_doc_does_not_lead_an_answer_about_how_code_works():
    """structlog's logfmt question led with the test of the renderer, not the renderer."""
    test = Hit("tests/test_renderers.py", 1, 20, 0.70, "function", "test_escapes",
               "def test_escapes():\n" + "".join(f"    assert render(v{i})\n" for i in range(6)))
    code = Hit("src/pkg/processors.py", 10, 40, 0.62, "method", "LogfmtRenderer.__call__",
               "def __call__(self, d):\n" + "".join(f"    step{i}(d)\n" for i in range(6)))
    assert [h.path for h in work_first([test, code], "How are values quoted and escaped in the output?")] == \
        ["src/pkg/processors.py", "tests/test_renderers.py"]
    # asked for, a test keeps its place
    assert work_first([test, code], "How do the tests check that values are escaped?")[0].path == "tests/test_renderers.py"


def test_of_two_about_as_near_the_callee_leads():
    """tinydb's `Table.insert` calls `_get_next_id`, which picks the new document's id: about as near the question,
    the callee leads, and the extractive answer says who hands it the work."""
    from codeqa.query.lead import CALLEE_MARGIN, callee_first

    insert = Hit("t.py", 10, 40, 0.60, "method", "Table.insert", "def insert(self, doc): ...",
                 symbol_ids=("t.py#Table.insert@10",))
    next_id = Hit("t.py", 60, 90, 0.60 - CALLEE_MARGIN / 2, "method", "Table._get_next_id", "def _get_next_id(self): ...",
                  symbol_ids=("t.py#Table._get_next_id@60",))
    other = Hit("t.py", 100, 120, 0.59, "method", "Table.search", "def search(self, cond): ...",
                symbol_ids=("t.py#Table.search@100",))
    called = {"t.py#Table._get_next_id@60": 1}  # what Table.insert calls (Searcher._calls_from)
    out = callee_first([insert, other, next_id], called)
    assert [h.symbol for h in out] == ["Table._get_next_id", "Table.insert", "Table.search"]
    assert "delegate" in out[0].reasons
    # far below the first, or not called by it: the order stays
    far = replace(next_id, score=0.60 - 2 * CALLEE_MARGIN)
    assert callee_first([insert, other, far], called) == [insert, other, far]
    assert callee_first([insert, other, next_id], {}) == [insert, other, next_id]
