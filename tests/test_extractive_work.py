"""The extractive answer's lead names what the best hits hand the work to (issue 42: evidence that explains "how")."""

from __future__ import annotations

from codeqa.answer.extractive import extractive_answer
from codeqa.types import Hit, Retrieval, Snippet, Symbol


class _Graph:
    def __init__(self, symbols):
        self.symbols = symbols

    def symbols_in_file(self, path):
        return [s for s in self.symbols if s.path == path]


class _Retriever:
    def __init__(self, symbols):
        self.graph = _Graph(symbols)


def _symbol(path, qualified, start, end, signature, doc=""):
    return Symbol(f"{path}#{qualified}@{start}", qualified.rpartition(".")[2], qualified, "method", "python", path,
                  start, end, signature, doc, None)


def test_the_work_the_best_hits_hand_over_is_cited_after_them():
    init = _symbol("app/routing.py", "Route.__init__", 10, 12, "def __init__(self, path):")
    matches = _symbol("app/routing.py", "Route.matches", 40, 42, "def matches(self, scope):", "Match the route against a path.")
    code = {10: "    def __init__(self, path):\n        self.path = path\n        self.regex = compile(path)\n",
            40: "    def matches(self, scope):\n        \"\"\"Match the route against a path.\"\"\"\n        return self.regex.match(scope)\n"}
    hits = (Hit("app/routing.py", 10, 12, 0.9, "method", "Route.__init__", code[10], "python", (init.id,), ("dense",)),
            Hit("app/routing.py", 40, 42, 0.5, "method", "Route.matches", code[40], "python", (matches.id,), ("work",)))
    snippets = tuple(Snippet(h.path, h.start_line, h.end_line, h.text) for h in hits)
    retrieval = Retrieval("How are routes matched?", "search", hits, snippets)
    answer = extractive_answer(retrieval, _Retriever([init, matches]), max_items=1)
    lead, _, work = answer.partition("The code above hands the work to:")
    assert "app/routing.py:L10-L12" in lead and "app/routing.py:L40-L42" not in lead
    assert work.strip().startswith("- app/routing.py:L40-L42 — method `Route.matches`")
    assert "Match the route against a path" in work
    # a hit shown in the list above is not named twice
    again = extractive_answer(retrieval, _Retriever([init, matches]), max_items=5)
    assert "hands the work to" not in again and again.count("app/routing.py:L40-L42") == 1
