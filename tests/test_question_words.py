"""A question about behaviour: the words it shares with code lift that code (Searcher._lift_by_words), an
acronym of its words names a class (lead.work_first), and a class goes behind the methods doing the work.
Indexed for real: a request property whose docstring names the topic, and the router method doing it."""

from __future__ import annotations

import pytest

from codeqa.query import searcher
from codeqa.query.lead import work_first
from codeqa.query.question import asks_behaviour
from codeqa.query.retrieve import Retriever
from codeqa.query.words import acronyms, inflections, name_acronyms
from codeqa.store import token_id
from codeqa.types import Hit
from conftest import index_package

FILES = {
    "web/__init__.py": "from .request import Request\nfrom .router import Router\n",
    "web/request.py": '''class Request:
    """An incoming HTTP request."""

    def __init__(self, environ):
        self.environ = environ

    @property
    def route(self):
        """The route object for this request."""
        return self.environ.get("web.route")
''',
    "web/router.py": '''class Router:
    def __init__(self):
        self.routes = []

    def match(self, request):
        path, method = request.path, request.method
        for route in self.routes:
            if route.method != method and route.method != "ANY":
                continue
            found = route.pattern.match(path)
            if found:
                return route.handler, found.groupdict()
        raise LookupError(f"no route handles {method} {path}")
''',
    "README.md": "# web\n\n## Routing\n\nThe router finds which route handles an incoming request's path and HTTP "
                 "method, the route handles the request.\n",
    "tests/test_router.py": '''from web import Router


def test_router_finds_route_for_request_path_and_method():
    router = Router()
    assert router.routes == []
''',
}
QUESTION = "How does the router find which route handles an incoming request's path and HTTP method?"


@pytest.fixture(scope="module")
def web_repo(tmp_path_factory, embedder):
    return index_package(tmp_path_factory.mktemp("question-words") / "repo", FILES, embedder)


@pytest.fixture
def retriever(web_repo, embedder, settings):
    with Retriever.open(web_repo, settings, embedder) as r:
        yield r


def test_the_code_sharing_a_behaviour_questions_words_leads_the_search(retriever):
    hits = retriever.search(QUESTION, top_k=5)
    assert (hits[0].path, hits[0].symbol) == ("web/router.py", "Router"), [(h.path, h.symbol) for h in hits]
    assert "words" in hits[0].reasons and 0 < hits[0].lift <= searcher.WORDS_LIFT
    # the README section and the test share the words best, but only code definitions are lifted
    assert all(h.lift == 0 and "words" not in h.reasons for h in hits if h.path in ("README.md", "tests/test_router.py"))
    assert {"README.md", "tests/test_router.py"} <= {h.path for h in hits}


class _WordsOnly:
    """The one store call _lift_by_words makes: BM25 alone (dense None), best first."""

    def __init__(self, ranked: list[Hit]):
        self.ranked = ranked

    def search(self, dense, sparse, limit, weights=(1.0, 1.0), where=None):
        assert dense is None and sparse[0]
        return self.ranked[:limit]


def test_the_lift_moves_code_the_words_find_above_what_the_dense_model_put_first():
    talks = Hit("web/request.py", 1, 9, 0.60, "method", "Request.route", "...", reasons=("dense",))
    section = Hit("README.md", 1, 5, 0.59, "section", "README.md > Routing", "...", reasons=("dense",))
    works = Hit("web/router.py", 5, 15, 0.50, "method", "Router.match", "...", reasons=("dense",))
    lifting = object.__new__(searcher.Searcher)
    lifting.store = _WordsOnly([section, works])  # the README shares the most words; it is not code
    out = lifting._lift_by_words(QUESTION, [talks, section, works], searcher.WORDS_LIFT)
    assert [h.symbol for h in out] == ["Router.match", "Request.route", "README.md > Routing"]
    assert out[0].lift == pytest.approx(searcher.WORDS_LIFT) and out[0].score == pytest.approx(0.50 + searcher.WORDS_LIFT)
    assert out[1].lift == 0 and out[2].lift == 0


def test_a_query_not_asked_in_words_is_not_lifted(retriever):
    for query in ("Router.match", "match a request path to a route"):
        assert not any("words" in h.reasons or h.lift for h in retriever.search(query, top_k=5)), query


def test_a_question_not_about_behaviour_is_lifted_less(retriever):
    hits = retriever.search("What is the route of a request?", top_k=5)
    lifted = [h for h in hits if "words" in h.reasons]
    assert lifted and all(0 < h.lift <= searcher.WORDS_ASKED_LIFT < searcher.WORDS_LIFT for h in lifted), \
        [(h.symbol, h.lift) for h in hits]
    assert all(h.path not in ("README.md", "tests/test_router.py") for h in lifted)


def test_a_scene_setting_clause_before_how_still_asks_about_behaviour():
    assert asks_behaviour("After an attempt finishes, how does tenacity decide whether to retry?")
    assert asks_behaviour("When the cache is full, what happens to the oldest item?")
    assert not asks_behaviour("What is the Router, and how is it configured?")
    assert not asks_behaviour("For each route, how many methods are allowed?")


def test_acronyms_of_a_questions_words_and_of_names():
    assert "lru" in acronyms("How does the least-recently-used cache choose what to evict?")
    assert "tlru" not in acronyms("How does the least-recently-used cache choose what to evict?")  # not from "the"
    assert "ttl" in acronyms("How are entries removed from a time to live cache?")
    assert name_acronyms("LRUCache.popitem") == {"lru"}
    assert name_acronyms("HTTPServer") == {"http"}
    assert name_acronyms("ttl_cache") == {"ttl"}
    assert name_acronyms("get") == set() and name_acronyms("Cache.__init__") == set()


def _hit(start, score, symbol, kind="method", logic=3):
    text = "def f(self):\n" + "".join(f"    step{i}()\n" for i in range(logic))
    return Hit("c.py", start, start + logic, score, kind, symbol, text, reasons=("dense",))


def test_work_first_prefers_the_class_an_acronym_of_the_question_names():
    timed = _hit(1, 0.62, "TLRUCache.popitem")
    plain = _hit(20, 0.60, "LRUCache.popitem")
    question = "How does the least-recently-used cache choose which entry to evict?"
    assert [h.start_line for h in work_first([timed, plain], question)] == [20, 1]
    assert [h.start_line for h in work_first([timed, plain])] == [1, 20]  # no question, no acronym


def test_work_first_puts_a_class_behind_the_methods_unless_it_is_far_ahead():
    header = Hit("c.py", 1, 8, 0.72, "class", "Router", "class Router:\n    x = 1\n    y = 2\n", reasons=("dense",))
    method = _hit(20, 0.61, "Router.add")
    assert [h.start_line for h in work_first([header, method])] == [20, 1]
    far = Hit("c.py", 1, 8, 0.95, "class", "Router", header.text, reasons=("dense",))
    assert [h.start_line for h in work_first([far, method])] == [1, 20]


def test_the_spread_over_files_goes_by_the_dense_scores_not_the_lifts():
    # one file's definitions share the question's words and are all lifted: another file the dense model finds
    # as near still gets a slot of a question's top k (without this, multi-file all-files fell 0.657 -> 0.543)
    lifted = [Hit("web/router.py", 10 * i, 10 * i + 5, 0.90 - 0.01 * i, "method", f"Router.m{i}", "...",
                  reasons=("dense", "words"), lift=0.40) for i in range(12)]
    other = Hit("web/response.py", 1, 9, 0.30, "function", "respond", "...", reasons=("dense",))
    spreading = object.__new__(searcher.Searcher)
    spreading._callees = lambda head, count=0: []
    spreading._named_file_hits = lambda query, ranked, shown, count: []
    top = spreading._spread_question(QUESTION, lifted + [other], top_k=10)
    assert "web/response.py" in {h.path for h in top}, [h.path for h in top]


def test_pieces_of_one_definition_merge_with_the_lift_inside_their_best_score():
    lifted = Hit("web/router.py", 5, 12, 0.70, "method", "Router.match", "...", reasons=("dense", "words"), lift=0.15)
    longer = Hit("web/router.py", 5, 30, 0.60, "method", "Router.match", "...", reasons=("dense",))
    for pieces in ([lifted, longer], [longer, lifted]):
        (merged,) = searcher._merge_same_symbol(pieces)
        assert (merged.end_line, merged.score, merged.lift) == (30, 0.70, 0.15)


EXPIRY_FILES = {
    "kv/__init__.py": "from .table import Table\n",
    "kv/table.py": '''class Table:
    def __init__(self):
        self.rows = {}
        self.journal = []
        self.size = 0

    def expire(self, key):
        entry = self.rows.pop(key)
        self.journal.append(("gone", key))
        self.size -= entry.size
        return entry
''',
    "kv/notes.py": '''def describe():
    """What happens when entries get expired: expired entries are dropped."""
    return "expired entries are dropped"
''',
}
EXPIRY_QUESTION = "What happens when entries get expired?"


def test_a_words_plain_forms_join_the_keywords_at_a_lower_weight():
    assert inflections("matches")[:2] == ["matches", "match"] and "cache" in inflections("caching")
    assert "handle" in inflections("handled") and "retry" in inflections("retries")
    assert inflections("map") == ["map"] and inflections("full") == ["full"]  # nothing to strip
    ids, weights = searcher.words_vector("How are matches handled?", form_weight=0.5)
    by_token = dict(zip(ids, weights))
    assert by_token[token_id("matches")] == 1.0 and by_token[token_id("match")] == 0.5
    assert by_token[token_id("handle")] == 0.5
    assert token_id("match") not in searcher.words_vector("How are matches handled?", form_weight=0)[0]
    # a token two words share keeps the higher weight: "match" written, and a form of "matches"
    ids, weights = searcher.words_vector("How does match find matches?", form_weight=0.5)
    assert dict(zip(ids, weights))[token_id("match")] == 1.0


def test_the_code_naming_a_plain_form_of_the_questions_words_is_lifted(tmp_path_factory, embedder, settings,
                                                                        monkeypatch):
    # the code says `expire` and `entry`, the question "expired" and "entries": only their plain forms meet
    repo = index_package(tmp_path_factory.mktemp("word-forms") / "repo", EXPIRY_FILES, embedder)
    with Retriever.open(repo, settings, embedder) as r:
        lifted = {h.symbol for h in r.search(EXPIRY_QUESTION, top_k=5) if "words" in h.reasons}
        assert {"Table", "describe"} <= lifted, lifted  # the class holds its methods whole: one chunk
        monkeypatch.setattr(searcher, "WORDS_FORM_WEIGHT", 0.0)
        lifted = {h.symbol for h in r.search(EXPIRY_QUESTION, top_k=5) if "words" in h.reasons}
        assert "Table" not in lifted and "describe" in lifted, lifted
