"""Browser sessions share one open index (codeqa/shared_reader.py): retrieval takes turns, an index run
committed meanwhile is seen without pulling the shard from under a search, and a re-index from one session
never closes the reader another session is answering from (issue 37)."""

from __future__ import annotations

import threading

import pytest

from codeqa.answer import Answerer
from codeqa.config import Settings
from codeqa.indexing.index import index_repo
from codeqa.query.retrieve import Retriever
from codeqa.query.shared_reader import IndexReopenedError, SharedRetriever
from conftest import copy_fixture_repo

QUESTIONS = ("How does tokenize work?", "How is EncoderClass used?", "Where are formatting helpers defined?")


@pytest.fixture
def repo(tmp_path, embedder):
    repo = copy_fixture_repo(tmp_path / "repo")
    index_repo(repo, Settings.load(env={}), embedder=embedder)
    return repo


def test_a_reindex_never_closes_a_reader_mid_question(repo, embedder):
    settings = Settings.load(env={})
    shared = SharedRetriever(Retriever.open(repo, settings, embedder))
    inside, retired, results = threading.Event(), threading.Event(), []

    def session() -> None:
        with shared.held():
            with shared.turn() as retriever:
                results.append(retriever.search("tokenize"))
            inside.set()
            retired.wait(30)
            with shared.turn() as retriever:  # the same question goes on after another session re-indexed
                results.append(retriever.search("tokenize"))

    worker = threading.Thread(target=session)
    worker.start()
    assert inside.wait(60)
    shared.retire()  # what the page's re-index does to the index every session opened
    assert not shared.closed
    retired.set()
    worker.join(60)
    assert len(results) == 2 and results[0] and [h.path for h in results[1]] == [h.path for h in results[0]]
    assert shared.closed  # closed by the last holder leaving
    with pytest.raises(IndexReopenedError, match="ask again"), shared.held():
        pass


def test_retiring_an_unused_reader_closes_it_at_once(repo, embedder):
    shared = SharedRetriever(Retriever.open(repo, Settings.load(env={}), embedder))
    shared.retire()
    assert shared.closed


def test_two_sessions_ask_at_once_while_runs_commit(repo, embedder):
    """Two sessions answer question after question while index runs commit (each one a new generation,
    which makes the shared store reload its shard inside a turn)."""
    settings = Settings.load(env={})
    shared = SharedRetriever(Retriever.open(repo, settings, embedder))
    stop, failures, answered = threading.Event(), [], []

    def session(offset: int) -> None:
        try:
            while not stop.is_set():
                for question in QUESTIONS[offset:] + QUESTIONS[:offset]:
                    with shared.held():
                        with shared.turn() as retriever:
                            stream = Answerer(retriever, settings).stream(question, no_llm=True)
                        answer = stream.result()
                    assert answer.citations and all(c.verified for c in answer.citations), answer.answer
                    answered.append(question)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failures.append(exc)

    sessions = [threading.Thread(target=session, args=(i,)) for i in range(2)]
    for thread in sessions:
        thread.start()
    # a file none of the questions cites: a cited file edited between an answer's retrieval and its check would
    # rightly make that citation stale, which is not what this test is about
    source = repo / "app" / "scratch.py"
    try:
        for run in range(4):
            source.write_text(f"def scratch_{run}(value):\n    return value * {run}\n")
            report = index_repo(repo, settings, embedder=embedder)
            assert report.files_changed == 1
    finally:
        stop.set()
        for thread in sessions:
            thread.join(120)
    shared.retire()
    assert not failures, failures[0]
    assert len(answered) >= 6
