"""Search ranking rules on hand-made hits, with a fake store: no index, no model."""

from __future__ import annotations

from codeqa.query.searcher import (QUESTION_HEAD, QUESTION_NEW_FILES, Searcher, files_named_by_words, question_stems)
from codeqa.types import Hit, Reference

PATHS = ["rich/status.py", "rich/spinner.py", "rich/_spinners.py", "rich/console.py", "rich/control.py",
         "rich/live.py", "tests/test_spinner.py", "tomlkit/toml_char.py", "tomlkit/toml_file.py",
         "tomlkit/toml_document.py", "tomlkit/toml_source.py", "rich/filesize.py"]


def hit(path: str, line: int, score: float, symbol_id: str | None = None) -> Hit:
    ids = (symbol_id,) if symbol_id else ()
    return Hit(path, line, line + 5, score, "function", None, f"text of {path}", "python", ids, ("dense",))


class FakeStore:
    """references_from / chunks_for_symbols / chunks_in_file over a few hand-made rows."""

    def __init__(self, calls: dict[str, list[str]], chunks: dict[str, list[Hit]]):
        self.calls, self.chunks = calls, chunks

    def references_from(self, ids):
        return [Reference(t.split("#")[1], s.split("#")[0], 1, 0, "call", s, (t,), "exact", "")
                for s in ids for t in self.calls.get(s, [])]

    def chunks_for_symbols(self, ids, limit=50):
        return [h for hits in self.chunks.values() for h in hits if set(h.symbol_ids) & set(ids)][:limit]

    def chunks_in_file(self, path):
        return list(self.chunks.get(path, []))


class FakeSource:
    def paths(self):
        return PATHS


def test_question_words_name_files_by_stem_and_joined_neighbours():
    assert set(files_named_by_words("How does the status indicator animate its spinner?", PATHS)) == {
        "rich/status.py", "rich/spinner.py", "rich/_spinners.py"}  # tests/test_spinner.py is no package file
    assert files_named_by_words("How does a download show the file size?", PATHS) == ["rich/filesize.py"]
    # "toml" is in four file names: it names none of them
    assert files_named_by_words("How is a TOML document written?", PATHS) == ["tomlkit/toml_document.py"]
    assert "filesiz" in question_stems("the file size") and "the" not in question_stems("the file size")


def test_a_question_keeps_its_head_and_gives_the_rest_to_other_package_files():
    live = "rich/live.py#Live.refresh@10"
    cursor = "rich/control.py#Control.move_to@40"
    ranked = ([hit("rich/live.py", 10 * i, 0.9 - i / 100, live if i == 0 else None) for i in range(8)]
              + [hit("docs/live.md", 1, 0.7), hit("tests/test_live.py", 1, 0.69), hit("rich/live.py", 200, 0.68),
                 hit("rich/console.py", 5, 0.5)])
    store = FakeStore({live: [cursor]}, {"rich/control.py": [hit("rich/control.py", 40, 0.0, cursor)]})
    top = Searcher(store, None, None, FakeSource())._spread_question("How does Live redraw in place?", ranked, 10)
    assert top[:QUESTION_HEAD] == ranked[:QUESTION_HEAD]
    tail = [h.path for h in top[QUESTION_HEAD:]]
    # the definition the head calls and the best hit of the other package file, though it ranked 12th
    assert tail[0] == "rich/control.py" and "rich/console.py" in tail
    # docs and tests get no slot of their own: the next live.py results outscore them
    assert "docs/live.md" not in tail and "tests/test_live.py" not in tail
    assert len(top) == 10 and len({(h.path, h.start_line) for h in top}) == 10
    assert QUESTION_NEW_FILES >= 2


def test_a_question_shorter_than_the_head_or_a_small_top_k_is_left_as_ranked():
    ranked = [hit("rich/live.py", 10 * i, 0.9 - i / 100) for i in range(8)] + [hit("rich/console.py", 5, 0.5)]
    searcher = Searcher(FakeStore({}, {}), None, None, FakeSource())
    assert searcher._spread_question("How does Live work?", ranked, QUESTION_HEAD) == ranked[:QUESTION_HEAD]
    assert searcher._spread_question("How does Live work?", ranked[:3], 10) == ranked[:3]


def test_a_file_named_by_the_question_gets_a_slot_even_when_search_missed_it():
    ranked = [hit("rich/status.py", 10 * i, 0.9 - i / 100) for i in range(12)]
    spinners = [hit("rich/_spinners.py", 1, 0.0), hit("rich/_spinners.py", 30, 0.0)]
    spinners[1] = Hit("rich/_spinners.py", 30, 40, 0.0, "block", None,
                      "SPINNERS = {'dots': ...} frames that animate a spinner in a status indicator", "python")
    store = FakeStore({}, {"rich/_spinners.py": spinners})
    top = Searcher(store, None, None, FakeSource())._spread_question(
        "How does the status indicator animate its spinner?", ranked, 10)
    named = [h for h in top if h.path == "rich/_spinners.py"]
    assert len(named) == 1 and named[0].start_line == 30 and "file name" in named[0].reasons
    assert top[:QUESTION_HEAD] == ranked[:QUESTION_HEAD]


def test_a_file_the_search_missed_needs_more_than_its_name_to_get_a_slot():
    """"the Basic authentication credential processor" named conan's new/basic.py (a project template) by one
    word: a file the search missed gets a slot only when a chunk of it shares NAMED_FILE_SHARED_WORDS words
    with the question."""
    from codeqa.query.searcher import NAMED_FILE_SHARED_WORDS

    ranked = [hit("rich/status.py", 10 * i, 0.9 - i / 100) for i in range(12)]
    spinners = [Hit("rich/_spinners.py", 1, 9, 0.0, "block", None, "SPINNERS = {'dots': ...} spinner", "python")]
    top = Searcher(FakeStore({}, {"rich/_spinners.py": spinners}), None, None, FakeSource())._spread_question(
        "How does the status indicator animate its spinner?", ranked, 10)
    assert "rich/_spinners.py" not in [h.path for h in top] and NAMED_FILE_SHARED_WORDS >= 2
    # found by the search, the file keeps its slot on its name
    found = ranked[:11] + [hit("rich/_spinners.py", 1, 0.2)]
    top = Searcher(FakeStore({}, {}), None, None, FakeSource())._spread_question(
        "How does the status indicator animate its spinner?", found, 10)
    assert [h.path for h in top].count("rich/_spinners.py") == 1


def test_an_answers_evidence_adds_what_the_best_hits_hand_the_work_to():
    """"How are routes matched?" finds Route.__init__; the work is in Route.matches, which it calls: the
    callees that share words with the question join the evidence, from any file (the hit's own too), most
    shared words first; a callee sharing none (a logging helper) does not."""
    init = "app/routing.py#Route.__init__@10"
    matches = "app/routing.py#Route.matches@40"
    trace = "app/output.py#Output.trace@5"
    compile_ = "app/compile.py#compile_path@1"
    ranked = [Hit("app/routing.py", 10, 20, 0.9, "method", "Route.__init__", "def __init__(self, path): ...",
                  "python", (init,), ("dense",))]
    chunks = {"app/routing.py": [Hit("app/routing.py", 40, 60, 0.0, "method", "Route.matches",
                                     "def matches(self, scope): match the route against a path", "python", (matches,))],
              "app/output.py": [Hit("app/output.py", 5, 9, 0.0, "method", "Output.trace", "def trace(self, msg): ...",
                                    "python", (trace,))],
              "app/compile.py": [Hit("app/compile.py", 1, 9, 0.0, "function", "compile_path", "def compile_path(path): ...",
                                     "python", (compile_,))]}
    store = FakeStore({init: [trace, trace, trace, compile_, matches]}, chunks)
    work = Searcher(store, None, None, FakeSource())._work(ranked, "How are routes matched to a path?")
    assert [h.symbol for h in work] == ["Route.matches", "compile_path"]
    assert all(h.reasons == ("work",) and h.score < ranked[-1].score for h in work)
    # already shown: not again
    assert Searcher(store, None, None, FakeSource())._work(ranked + work[:1], "How are routes matched to a path?")[0].symbol \
        == "compile_path"


def test_a_further_file_far_below_the_best_score_gets_no_slot():
    """In a small repository the other files can be unrelated: their best hit must reach half the best score."""
    ranked = ([hit("app/cli.py", 10 * i, 0.6 - i / 100) for i in range(12)]
              + [hit("app/formatting.py", 1, 0.4), hit("web/util.py", 1, 0.09)])
    top = Searcher(FakeStore({}, {}), None, None, FakeSource())._spread_question("Where is the encoder used?", ranked, 10)
    assert [h.path for h in top].count("app/formatting.py") == 1 and "web/util.py" not in [h.path for h in top]
    assert top[QUESTION_HEAD:] == sorted(top[QUESTION_HEAD:], key=lambda h: -h.score)


def test_file_names_are_stemmed_once_per_set_of_indexed_files(monkeypatch):
    """Stemming every file name took 450 ms a question on site-packages: it is done again only when the
    indexed files change."""
    import codeqa.query.searcher as searcher

    made = []
    real = searcher.file_name_stems
    monkeypatch.setattr(searcher, "file_name_stems", lambda paths: made.append(len(paths)) or real(paths))
    source = FakeSource()
    s = Searcher(FakeStore({}, {}), None, None, source)
    head = [hit("rich/console.py", 1, 0.9)]
    for _ in range(3):
        s._named_file_hits("How does the spinner spin?", head, head, 2)
    assert made == [len(PATHS)]
    monkeypatch.setattr(source, "paths", lambda: PATHS + ["rich/progress.py"])
    s._named_file_hits("How does the progress bar move?", head, head, 2)
    assert made == [len(PATHS), len(PATHS) + 1]


def test_a_candidate_named_for_the_questions_deed_moves_up():
    """"How are options parsed ...?" ranked Command.format_options (options, command) first by the dense
    model; the names that carry the deed ("parsed": OptionParser, make_parser) lift above it."""
    from codeqa.query.rankers import DEED_BOOST, lift_deed
    from codeqa.query.words import name_stems

    def named(path: str, line: int, score: float, symbol: str) -> Hit:
        return Hit(path, line, line + 5, score, "method", symbol, "", "python", (f"{path}#{symbol}@{line}",), ("dense",))

    ranked = [named("src/click/core.py", 1378, 0.637, "Command.format_options"),
              named("src/click/decorators.py", 351, 0.615, "option"),
              named("src/click/parser.py", 355, 0.614, "OptionParser._process_args_for_options"),
              named("src/click/core.py", 1312, 0.600, "Command.make_parser")]
    lifted = lift_deed(ranked, "parsed")
    assert [h.symbol for h in lifted[:2]] == ["OptionParser._process_args_for_options", "Command.make_parser"]
    assert "deed" in lifted[0].reasons and abs(lifted[0].score - (0.614 + DEED_BOOST)) < 1e-9
    assert lift_deed(ranked, None) == ranked
    assert name_stems("OptionParser.parse_args") == {"option", "pars", "arg"}


def test_each_ranker_records_what_it_added_as_the_hits_boost():
    """Hit.boost holds what the rankers moved a hit by, so a reranker that replaces the engine's score keeps it
    (query/rerank.py): a deed, a hop from the top hits, a test's role penalty."""
    from codeqa.query.question import RankQuery
    from codeqa.query.rankers import DEED_BOOST, HOP_BOOST, ROLE_PENALTY, ReferenceHop, SecondaryFiles, lift_deed

    top = [hit("pkg/a.py", 1, 0.9, "pkg/a.py#a@1"), hit("pkg/b.py", 1, 0.8, "pkg/b.py#b@1"),
           hit("pkg/c.py", 1, 0.7, "pkg/c.py#c@1")]
    called = hit("pkg/d.py", 1, 0.6, "pkg/d.py#d@1")
    hopped = ReferenceHop(FakeStore({"pkg/a.py#a@1": ["pkg/d.py#d@1"]}, {})).rank(top + [called])
    assert [(h.path, h.boost) for h in hopped if h.boost] == [("pkg/d.py", HOP_BOOST)]
    tested = SecondaryFiles().rank([hit("tests/test_a.py", 1, 0.5)], RankQuery.of("How does a work?"))
    assert tested[0].boost == -ROLE_PENALTY["test"] and abs(tested[0].score - (0.5 - ROLE_PENALTY["test"])) < 1e-9
    deed = Hit("pkg/p.py", 1, 5, 0.5, "function", "parse_args", "", "python", (), ("dense",), boost=HOP_BOOST)
    assert lift_deed([deed], "parsed")[0].boost == HOP_BOOST + DEED_BOOST
    engine = {h.path: h.score for h in top + [called]}
    assert all(abs(h.score - h.boost - engine[h.path]) < 1e-9 for h in hopped)
