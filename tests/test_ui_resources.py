"""The page's shared resources across repositories (issue 63): re-indexing one repository retires its own open
index only, and `--any-repo --watch` watches a bounded number of repositories, the least recently used
stopping (with a word on the page) when another is opened."""

from __future__ import annotations

from pathlib import Path

import pytest

import codeqa.ui.resources as resources
from codeqa.config import Settings
from codeqa.indexing.index import index_repo
from codeqa.ui.resources import Watchers
from test_ui import calls, page, texts  # noqa: F401  (calls is a fixture)


class FakeWatcher:
    def __init__(self, repo: str):
        self.repo, self.stopped = repo, None

    def stop(self, wait: float = 60.0) -> bool:
        self.stopped = wait
        return True


def test_watchers_are_bounded_and_the_least_recently_used_stops():
    started: list[FakeWatcher] = []
    watchers = Watchers(lambda repo: started.append(FakeWatcher(repo)) or started[-1], limit=2)
    assert watchers.watch("/a") is None and watchers.watch("/b") is None
    assert watchers.watch("/a") is None  # in use again: /b is now the least recently used
    assert [w.repo for w in started] == ["/a", "/b"]  # nothing started twice
    assert watchers.watch("/c") == "/b"
    assert started[1].stopped == 0  # stopped without waiting for a run: the page's rerun goes on
    assert watchers.watched() == ["/a", "/c"] and started[0].stopped is None
    assert watchers.watch("/b") == "/a"  # watched again once opened again
    watchers.stop()
    assert all(w.stopped is not None for w in started) and watchers.watched() == []


@pytest.fixture(scope="module")
def two_repos(tmp_path_factory, embedder):
    repos = []
    for name in ("alpha", "beta"):
        repo = tmp_path_factory.mktemp("repos") / name
        repo.mkdir()
        (repo / f"{name}.py").write_text(f"def {name}_helper(x):\n    return x + 1\n\n\ndef use():\n"
                                         f"    return {name}_helper(2)\n")
        index_repo(repo, Settings.load(env={}), embedder=embedder)
        repos.append(repo)
    return repos


def session_on(monkeypatch, repo: Path, **env):
    at = page(monkeypatch, None, CODEQA_UI_ANY_REPO="1", **env)
    at.text_input(key="repo").set_value(str(repo)).run()
    assert not at.exception and not texts(at.error), texts(at.error)
    return at


def test_reindexing_one_repository_leaves_the_others_open(monkeypatch, calls, two_repos):  # noqa: F811
    alpha, beta = two_repos
    on_beta = session_on(monkeypatch, beta)
    on_alpha = session_on(monkeypatch, alpha)
    assert calls["open"] == 2
    on_alpha.button(key="index").click().run()
    assert not on_alpha.exception and "Nothing changed" in texts(on_alpha.sidebar.success)
    assert calls["open"] == 3  # alpha's index was retired and reopened
    on_beta.run()
    assert not on_beta.exception and calls["open"] == 3  # beta's stayed open for its session
    assert not resources.index_of(beta, Settings.load()).closed and calls["open"] == 3


def test_a_watcher_stops_when_the_bound_is_reached_and_the_page_says_so(monkeypatch, calls, two_repos):  # noqa: F811
    alpha, beta = two_repos
    monkeypatch.setattr(resources, "WATCHED_AT_ONCE", 1, raising=False)
    session_on(monkeypatch, alpha, CODEQA_UI_WATCH="1")
    on_beta = session_on(monkeypatch, beta, CODEQA_UI_WATCH="1")
    assert "Live sync of" in texts(on_beta.sidebar.info) and str(alpha) in texts(on_beta.sidebar.info)
    assert resources._watchers(Settings.load()).watched() == [str(beta)]
