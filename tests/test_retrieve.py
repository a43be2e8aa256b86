"""Retrieval on the fixture repo with the real model and a real index: search boosts, names in
questions, usage evidence and its summary, relationship paths, packing, and one retriever shared by
users with different settings."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace

import numpy as np
import pytest

from codeqa.answer import EXTRACTIVE_NOTE, Answerer, answer_to_json
from codeqa.cli import main
from codeqa.config import Settings
from codeqa.answer.extractive import split_full_list
from codeqa.indexing.index import index_repo
from codeqa.llm import FakeChat
from codeqa.query.evidence import definition_hit
from codeqa.query.lookup import list_sites
from codeqa.query.pack import _load_tokenizer, count_tokens, snippet_tokens
from codeqa.query.retrieve import Retriever
from codeqa.types import Hit, Reference

USAGE_Q = "Where is EncoderClass used?"


@pytest.fixture
def retriever(indexed_repo, embedder, settings):
    with Retriever.open(indexed_repo, settings, embedder) as r:
        yield r


def lines_of(repo, path):
    return (repo / path).read_text().splitlines()


def test_methods_of_a_class_among_the_top_hits_move_up(retriever):
    from codeqa.query.rankers import HOP_SOURCES, MEMBER_BOOST, ReferenceHop

    def hit(symbol_id, score):
        path, _, rest = symbol_id.partition("#")
        return Hit(path, 1, 2, score, "function", rest.split("@")[0], "", "python", (symbol_id,), ("dense",))

    encoder = next(s for s in retriever.graph.find_symbols("EncoderClass") if s.kind == "class")
    method = next(s for s in retriever.graph.find_symbols("EncoderClass.encode"))
    other = next(s for s in retriever.graph.find_symbols("tokenize"))
    top = [hit(encoder.id, 0.9)] + [hit(f"x.py#f{i}@1", 0.8 - i / 100) for i in range(HOP_SOURCES - 1)]
    boosted = {h.symbol_ids[0]: h for h in ReferenceHop(retriever.store).rank(top + [hit(method.id, 0.5), hit(other.id, 0.5)])}
    assert boosted[method.id].score == pytest.approx(0.5 + MEMBER_BOOST) and "member" in boosted[method.id].reasons
    assert boosted[other.id].score == 0.5 and "member" not in boosted[other.id].reasons
    # the top hits themselves keep their scores
    assert boosted[encoder.id].score == 0.9


def test_keywords_join_the_search_only_for_code_or_a_quoted_phrase(retriever, monkeypatch):
    """A sentence that names a symbol in passing ranks by the dense vector (the docstring benchmark lost
    0.02 recall@10 to BM25 over such names); a bare identifier or a quoted message still gets BM25."""
    from codeqa.query.searcher import wants_keywords

    calls = []
    search = retriever.store.search
    monkeypatch.setattr(retriever.store, "search", lambda dense, sparse, *a, **k: calls.append(
        "dense_search" if sparse is None else "hybrid_search") or search(dense, sparse, *a, **k))

    def first_stage(query):
        calls.clear()
        hits = retriever.search(query, top_k=5)
        return calls[0], hits

    assert first_stage("Encode one text with the `EncoderClass` into a list of floats")[0] == "dense_search"
    assert first_stage("Split text into lowercase words")[0] == "dense_search"
    assert first_stage("EncoderClass.encode")[0] == "hybrid_search"
    kind, hits = first_stage('Where is "hello world" passed to run?')
    assert kind == "hybrid_search"
    assert any(h.path == "app/main.py" and h.start_line <= 13 <= h.end_line for h in hits)
    # quotes inside words are apostrophes, not a quoted phrase
    assert not wants_keywords("How does the bar's writer keep lines that don't fit?", ["writer"], 0.1)


def test_only_a_question_in_words_spreads_the_top_k_over_files(retriever, monkeypatch):
    """Identifiers and descriptions (the docstring benchmark's queries) keep the ranking as it was."""
    asked = []
    spread = retriever.searcher._spread_question
    monkeypatch.setattr(retriever.searcher, "_spread_question", lambda q, r, k: asked.append(q) or spread(q, r, k))
    for query in ("EncoderClass.encode", "Split text into lowercase words", "tokenize"):
        retriever.search(query, top_k=10)
    assert asked == []
    retriever.search("How does the encoder turn text into vectors?", top_k=10)
    assert asked == ["How does the encoder turn text into vectors?"]


def test_usage_answer_lists_every_reference_the_graph_has(retriever, indexed_repo):
    encoder_class = retriever.graph.find_symbols("EncoderClass")
    graph_refs = retriever.store.references_to([s.id for s in encoder_class])
    assert len(graph_refs) >= 4
    answer = Answerer(retriever, retriever.settings).answer(USAGE_Q)
    assert answer.mode == "extractive" and answer.route == "usage"
    assert answer.answer.startswith(EXTRACTIVE_NOTE)
    assert {(r.path, r.line) for r in answer.references} == {(r.path, r.line) for r in graph_refs}
    assert f"All {len(graph_refs)} reference sites in 2 files, by file:" in answer.answer
    verified = {(c.path, c.start_line) for c in answer.citations if c.verified}
    for r in graph_refs:  # every site is listed with a verified citation, grouped under its file
        assert f"{r.path}:L{r.line} {r.kind}" in answer.answer
        assert (r.path, r.line) in verified
    assert answer.answer.index("`app/cli.py` (") < answer.answer.index("`app/main.py` (")
    assert all(c.verified for c in answer.citations)
    assert ("encoders/encoder.py", 15) in verified  # the definition


def test_sites_beyond_those_shown_in_full_are_still_listed_and_cited(retriever, monkeypatch):
    monkeypatch.setattr("codeqa.query.evidence.USAGE_SITES_SHOWN", 1)
    result = retriever.retrieve(USAGE_Q)
    assert sum(h.reasons == ("instantiation site",) for h in result.hits) == 1
    answer = Answerer(retriever, retriever.settings).answer(USAGE_Q)
    verified = {(c.path, c.start_line) for c in answer.citations if c.verified}
    assert all((r.path, r.line) in verified for r in result.references) and len(result.references) == 5
    assert all(c.verified for c in answer.citations)


def test_names_in_questions(retriever):
    def names(question):
        return [(m.text, [s.qualified_name for s in m.symbols]) for m in retriever.match_question(question)]

    assert names("who calls EncoderClass.encode?") == [("EncoderClass.encode", ["EncoderClass.encode"])]
    assert names("how is the encoder class used") == [("encoderclass", ["EncoderClass"])]
    assert names("where is format_name in legacy.py called")[0][1] == ["format_name"]
    assert retriever.match_question("where is format_name in legacy.py called")[0].symbols[0].path == "app/legacy.py"
    assert retriever.retrieve("what is the connection between run and tokenize").route == "relationship"
    assert retriever.retrieve("How does tokenize work?").route == "search"
    assert retriever.retrieve("how is the encoder class used").route == "usage"
    # a usage verb without a symbol as its subject is not a usage question
    assert retriever.retrieve("How are texts encoded when an encoder is created?").route == "search"


def test_a_question_is_parsed_once_and_its_routed_value_travels(retriever, monkeypatch):
    """Issue 64: `route` parses the question (once) and matches its names; `retrieve` takes what it made and
    parses nothing again, with the same evidence as from the text. The stages run in order and none calls back
    into the retriever (bench/question_walk.py shows the walk)."""
    import codeqa.query.retrieve as retrieve_module

    parsed = []
    parse = retrieve_module.parse_question
    monkeypatch.setattr(retrieve_module, "parse_question", lambda *a, **k: parsed.append(a[0]) or parse(*a, **k))
    for question in (USAGE_Q, "what is the connection between run and tokenize", "what does cli.py do"):
        parsed.clear()
        asked = retriever.route(question)
        assert parsed == [question]
        assert [m.text for m in asked.names] == [m.text for m in retriever.match_question(question)]
        parsed.clear()
        assert retriever.retrieve(asked) == retriever.retrieve(question)
        assert parsed == [question]  # the text, not the routed value
    assert retriever.route(USAGE_Q).route == "usage" and retriever.route("what does cli.py do").files[0][0] == "app/cli.py"


def test_relationship_follows_graph_paths(retriever):
    result = retriever.retrieve("what is the connection between run and tokenize")
    assert result.paths and all(p[0].endswith("#tokenize@33") and p[-1] == "app/main.py#run@5" for p in result.paths)
    first = result.paths[0]
    steps = {(a, b) for a, b, _ in result.edges}
    assert all((a, b) in steps for a, b in zip(first, first[1:]))
    answer = Answerer(retriever, retriever.settings).answer("what is the connection between run and tokenize")
    assert "tokenize ←[call at encoders/encoder.py:L24]— EncoderClass.encode ←[call at app/main.py:L9]— run" in answer.answer
    assert answer.citations and all(c.verified for c in answer.citations)


def test_pack_merges_keeps_headers_and_respects_the_budget(retriever, indexed_repo):
    method = definition_hit(retriever.graph.find_symbols("EncoderClass.encode")[0], retriever.source)
    assert (method.start_line, method.end_line) == (21, 26)
    overlapping = replace(method, start_line=23, end_line=27)
    snippets = retriever.pack([method, overlapping])
    labels = [s.label for s in snippets]
    assert "encoders/encoder.py:L15-L15" in labels  # the class header line
    assert sum(s.path == "encoders/encoder.py" and s.start_line <= 21 <= s.end_line for s in snippets) == 1
    body = next(s for s in snippets if s.start_line <= 21 <= s.end_line)
    assert body.end_line >= 27  # the two spans became one
    lines = lines_of(indexed_repo, "encoders/encoder.py")
    for s in snippets:
        assert s.text.splitlines() == lines[s.start_line - 1:s.end_line]
    everything = retriever.retrieve(USAGE_Q)
    assert len(everything.snippets) >= 3
    small = retriever.pack(everything.hits, budget_tokens=200)
    assert small and sum(snippet_tokens(s.text) for s in small) <= 200
    tokenizer = _load_tokenizer()  # the bundled model's tokenizer counts, not the character estimate
    assert tokenizer and count_tokens(body.text) == len(tokenizer.encode(body.text, add_special_tokens=False).ids)


def test_a_usage_answer_leads_with_the_definition_and_an_account_of_the_uses(retriever):
    answer = Answerer(retriever, retriever.settings).answer(USAGE_Q)
    summary = answer.summary
    assert summary is not None and summary.symbol.qualified_name == "EncoderClass"
    assert summary.total == len(answer.references) and summary.files == 2
    assert dict(summary.by_kind)["instantiation"] >= 2 and dict(summary.by_area) == {"package": summary.total}
    assert ("dim", 1) in summary.keywords  # EncoderClass(dim=4) in app/main.py
    assert summary.sites and all(s.path.startswith("app/") for s in summary.sites)
    text = answer.answer
    order = [text.index("Definition: class `EncoderClass`"), text.index(f"Used {summary.total} times in 2 files"),
             text.index("Most informative sites"), text.index("All 5 reference sites in 2 files, by file:")]
    assert order == sorted(order)
    first = answer.citations[0]
    assert (first.path, first.start_line) == ("encoders/encoder.py", 15) and first.verified


def test_an_ambiguous_name_is_said_to_be_ambiguous(retriever):
    answer = Answerer(retriever, retriever.settings).answer("who calls format_name?")
    assert answer.route == "usage"
    assert {s.path for s in answer.definitions} == {"app/formatting.py", "app/legacy.py"}
    assert [s.path for s in answer.summary.others] == ["app/legacy.py"]
    assert "`format_name` is ambiguous: it names 2 definitions" in answer.answer
    assert {(r.path, r.line) for r in answer.references} >= {("app/main.py", 9), ("app/legacy.py", 7)}
    # a file named in the question settles it
    narrowed = Answerer(retriever, retriever.settings).answer("who calls format_name in legacy.py?")
    assert [s.path for s in narrowed.definitions] == ["app/legacy.py"] and "ambiguous" not in narrowed.answer


def test_one_retriever_serves_users_with_different_budgets(retriever):
    """The UI shares one Retriever between browser sessions: each session's budget shapes its own prompt."""
    before = retriever.settings
    small_chat, large_chat = FakeChat(), FakeChat()
    small = Answerer(retriever, before.with_(context_tokens=150), chat=small_chat)
    large = Answerer(retriever, before.with_(context_tokens=4000), chat=large_chat)
    q = "How does the encoder turn text into vectors?"
    for answerer in (small, large, small):
        answerer.answer(q)
    small_prompt, large_prompt, again_small = (chat.requests[i][-1]["content"]
                                               for chat, i in ((small_chat, 0), (large_chat, 0), (small_chat, 1)))
    assert count_tokens(small_prompt) < 400 < count_tokens(large_prompt)
    assert again_small == small_prompt and retriever.settings is before


def test_citations_in_quoted_code_and_urls_are_not_citations():
    from codeqa.answer import parse_citations

    text = ("Proxies are set as `proxies = {'http': 'foo.bar:3128'}` (see requests/sessions.py:L10-L12);\n"
            "```python\nproxies = {'https': 'foo.bar:4012'}  # app/x.py:L3\n```\n"
            "also http://foo.bar:3128 and foo.bar:L3128 and `app/main.py:L5`.")
    found = [(c.path, c.start_line) for c in parse_citations(text, {"requests/sessions.py", "app/main.py"})]
    assert found == [("requests/sessions.py", 10), ("app/main.py", 5)]


# ---- a name with more reference sites than an answer lists -----------------------------------------

class ConstantEmbedder:
    """Phase 1 embeds nothing and a usage question searches nothing: no model is needed here."""

    model_id, dimension = "constant", 8

    def encode(self, texts, batch_size=64):
        return np.full((len(texts), 8), 8 ** -0.5, dtype="float32")


@pytest.fixture(scope="module")
def common_name(tmp_path_factory):
    """`Widget` defined once in widgets/core.py and used twice (import + instantiation) in each of 6
    package files and 6 test files: 24 sites in 12 files. In path order tests/ comes before widgets/."""
    root = tmp_path_factory.mktemp("common")
    repo = root / "repo"
    (repo / "widgets").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "widgets" / "__init__.py").write_text("")
    (repo / "widgets" / "core.py").write_text('class Widget:\n    """A part."""\n\n    def __init__(self, size=1):\n'
                                              '        self.size = size\n')
    use = "from widgets.core import Widget\n\n\ndef make_{i}():\n    return Widget(size={i})\n"
    for i in range(6):
        (repo / "widgets" / f"user_{i}.py").write_text(use.format(i=i))
        (repo / "tests" / f"test_{i}.py").write_text(use.format(i=i))
    settings = Settings.load(env={}, index_dir=root / "index")
    index_repo(repo, settings, embedder=ConstantEmbedder(), embed=False)
    return repo, settings


def test_a_common_name_lists_the_most_relevant_sites_up_to_the_cap_and_says_how_to_get_the_rest(common_name, capsys):
    repo, settings = common_name
    capped = settings.with_(usage_sites_listed=5)
    with Retriever.open(repo, capped, embedder=ConstantEmbedder()) as retriever:
        retrieval = retriever.retrieve("How is Widget used?")
        answer = Answerer(retriever, capped).answer("How is Widget used?", no_llm=True)
        prompt = Answerer(retriever, capped, chat=(chat := FakeChat())).answer("How is Widget used?")
    assert retrieval.route == "usage" and len(retrieval.references) == 24
    # only the listed sites become one-line evidence (their files are read), not all 24
    assert sum(h.reasons == ("reference",) for h in retrieval.hits) == 5
    # the account still counts every site
    assert (answer.summary.total, answer.summary.files) == (24, 12)
    assert dict(answer.summary.by_area) == {"package": 12, "tests": 12}
    text = answer.answer
    head, listing = split_full_list(text)
    assert listing.startswith("5 of 24 reference sites, in 5 of 12 files, by file (package code first):")
    # package code of the definition's package first; a cap this small gives each file one site, its
    # most telling one (the instantiation on line 5, not the import)
    assert re.findall(r"^`(.+)` \((.+)\)$", listing, re.MULTILINE) == [(f"widgets/user_{i}.py", "1 of 2") for i in range(5)]
    assert re.findall(r"^- (\S+) (\w+)", listing, re.MULTILINE) == [(f"widgets/user_{i}.py:L5", "instantiation")
                                                                   for i in range(5)]
    assert "tests/" not in listing
    assert "Not listed: 19 more sites, in 7 more files and in 5 of the files above." in listing
    assert all(c.verified for c in answer.citations)
    listed = {(r.path, r.line) for r in answer.listed.references}
    assert listed <= {(c.path, c.start_line) for c in answer.citations} and len(listed) == 5
    body = answer_to_json(answer)
    assert len(body["references"]) == 5 and body["references_total"] == 24
    # the LLM's graph facts are bounded the same way
    facts = chat.requests[0][-1]["content"].partition("Reference graph (from the index):")[2].partition("Snippets:")[0]
    assert "24 reference site(s) in 12 file(s); 5 of them, in 5 of the files" in facts
    assert re.findall(r"^- (\S+) \((\d+)\): (.*)$", facts, re.MULTILINE) == [
        (f"widgets/user_{i}.py", "2", "L5 instantiation; 1 more not listed") for i in range(5)]
    assert prompt.listed.shown == 5

    # the command the answer names lists every site
    command = re.search(r"Every site: `(codeqa refs [^`]+)`", listing).group(1)
    assert main(shlex.split(command)[1:]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [d["qualified_name"] for d in result["definitions"]] == ["Widget"]
    assert len(result["references"]) == 24 and len({r["path"] for r in result["references"]}) == 12


def test_a_capped_list_spreads_over_files_and_fills_the_cap_when_there_are_few():
    def refs(path, kinds):
        return [Reference("W", path, line, 0, kind, None, ("w.py#W@1",), "exact", "") for line, kind in kinds]

    def lines(group):
        return [r.line for r in group.sites]

    big = refs("pkg/a.py", [(line, {20: "call", 25: "instantiation"}.get(line, "type")) for line in range(1, 31)])
    tests = refs("tests/t.py", [(line, "call") for line in range(1, 21)])
    singles = [r for i in range(50) for r in refs(f"pkg/f{i:02}.py", [(3, "call")])]

    many = list_sites(big + singles + tests, limit=40, home="pkg")  # 2 sites a file at most, first
    assert (many.shown, many.total, many.files, len(many.groups)) == (40, 100, 52, 39)
    assert many.groups[0].path == "pkg/a.py" and lines(many.groups[0]) == [20, 25]  # the call and the instantiation
    assert [g.path for g in many.groups[1:]] == [f"pkg/f{i:02}.py" for i in range(38)]  # tests/ comes after them
    few = list_sites(big + tests, limit=40, home="pkg")  # two files: the room left goes to them in order
    assert [(g.path, len(g.sites), g.total) for g in few.groups] == [("pkg/a.py", 30, 30), ("tests/t.py", 10, 20)]
    assert lines(few.groups[1]) == list(range(1, 11)) and not few.complete
    everything = list_sites(big + tests, limit=50)
    assert everything.complete and [g.path for g in everything.groups] == ["pkg/a.py", "tests/t.py"]


def test_a_name_within_the_cap_is_listed_whole_in_path_order(common_name):
    repo, settings = common_name
    with Retriever.open(repo, settings, embedder=ConstantEmbedder()) as retriever:
        answer = Answerer(retriever, settings.with_(usage_sites_listed=24)).answer("How is Widget used?", no_llm=True)
    _, listing = split_full_list(answer.answer)
    assert listing.startswith("All 24 reference sites in 12 files, by file:") and "Not listed" not in listing
    files = re.findall(r"^`(.+)` \(2\)$", listing, re.MULTILINE)
    assert files == sorted(files) and len(files) == 12 and files[0].startswith("tests/")
    assert {(c.path, c.start_line) for c in answer.citations if c.verified} >= {(r.path, r.line) for r in answer.references}
    assert answer_to_json(answer)["references_total"] == len(answer_to_json(answer)["references"]) == 24
