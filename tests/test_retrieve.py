"""Retrieval on the fixture repo with the real model and a real index: search boosts, names in
questions, usage evidence and its summary, relationship paths, packing, and one retriever shared by
users with different settings."""

from __future__ import annotations

from dataclasses import replace

import pytest

from codeqa.answer import EXTRACTIVE_NOTE, Answerer, FakeChat
from codeqa.pack import _load_tokenizer, count_tokens, snippet_tokens
from codeqa.retrieve import Retriever
from codeqa.types import Hit

USAGE_Q = "Where is EncoderClass used?"


@pytest.fixture
def retriever(indexed_repo, embedder, settings):
    with Retriever.open(indexed_repo, settings, embedder) as r:
        yield r


def lines_of(repo, path):
    return (repo / path).read_text().splitlines()


def test_methods_of_a_class_among_the_top_hits_move_up(retriever):
    from codeqa.searcher import HOP_SOURCES, MEMBER_BOOST

    def hit(symbol_id, score):
        path, _, rest = symbol_id.partition("#")
        return Hit(path, 1, 2, score, "function", rest.split("@")[0], "", "python", (symbol_id,), ("dense",))

    encoder = next(s for s in retriever.find_symbols("EncoderClass") if s.kind == "class")
    method = next(s for s in retriever.find_symbols("EncoderClass.encode"))
    other = next(s for s in retriever.find_symbols("tokenize"))
    top = [hit(encoder.id, 0.9)] + [hit(f"x.py#f{i}@1", 0.8 - i / 100) for i in range(HOP_SOURCES - 1)]
    boosted = {h.symbol_ids[0]: h for h in retriever.searcher._boost_reference_hop(top + [hit(method.id, 0.5), hit(other.id, 0.5)])}
    assert boosted[method.id].score == pytest.approx(0.5 + MEMBER_BOOST) and "member" in boosted[method.id].reasons
    assert boosted[other.id].score == 0.5 and "member" not in boosted[other.id].reasons
    # the top hits themselves keep their scores
    assert boosted[encoder.id].score == 0.9


def test_keywords_join_the_search_only_for_code_or_a_quoted_phrase(retriever, monkeypatch):
    """A sentence that names a symbol in passing ranks by the dense vector (the docstring benchmark lost
    0.02 recall@10 to BM25 over such names); a bare identifier or a quoted message still gets BM25."""
    from codeqa.searcher import wants_keywords

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
    encoder_class = retriever.find_symbols("EncoderClass")
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
    monkeypatch.setattr("codeqa.retrieve.USAGE_SITES_SHOWN", 1)
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
    method = retriever._definition_hit(retriever.find_symbols("EncoderClass.encode")[0])
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
