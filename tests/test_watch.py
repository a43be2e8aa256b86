"""Live sync: a save is indexed within seconds, and until then results from the changed file say so."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from codeqa.answer import Answerer
from codeqa.indexing.index import index_lock, index_repo
from codeqa.query.retrieve import Retriever
from codeqa.indexing.watch import RepoWatcher
from conftest import copy_fixture_repo, wait_for

ROOT = Path(__file__).resolve().parent.parent


def test_a_save_is_indexed_within_seconds_and_ignored_folders_are_not(tmp_path, settings, embedder):
    repo = copy_fixture_repo(tmp_path / "repo")
    index_repo(repo, settings, embedder=embedder)
    reports = []
    done = threading.Event()
    with RepoWatcher(repo, settings, embedder=embedder, debounce=0.3,
                     on_report=lambda r: (reports.append(r), done.set())) as watcher:
        (repo / "node_modules" / "pkg").mkdir(parents=True)
        (repo / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1;\n")
        (repo / ".git").mkdir(exist_ok=True)
        (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        time.sleep(1.0)
        assert watcher.runs == 0  # changes where a walk never goes start no run
        saved = time.monotonic()
        with open(repo / "app" / "formatting.py", "a") as fh:  # a save in several writes: one run
            fh.write("\n\ndef freshly_saved(value):\n")
            fh.flush()
            fh.write("    return value\n")
        assert done.wait(30), "no re-index after a save"
        took = time.monotonic() - saved
    assert watcher.runs == 1 and reports[0].files_changed == 1 and took < 10
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        assert [s.id for s in retriever.graph.find_symbols("freshly_saved")] == ["app/formatting.py#freshly_saved@6"]


def test_a_save_while_another_writer_runs_waits_for_it_without_walking_again(tmp_path, settings, embedder,
                                                                            monkeypatch):
    """Another writer holds the index lock: the watcher's run finds it taken (one walk), then waits on the
    lock instead of walking and hashing the repository every debounce, and indexes the save once it is free."""
    from codeqa.indexing.resident import ResidentIndex

    repo = copy_fixture_repo(tmp_path / "repo")
    index_repo(repo, settings, embedder=embedder)
    walks = []
    real_walk = ResidentIndex.walk  # the watcher's runs walk through the ResidentIndex it keeps
    monkeypatch.setattr(ResidentIndex, "walk", lambda *a, **k: walks.append(1) or real_walk(*a, **k))
    reports = []
    done = threading.Event()
    with RepoWatcher(repo, settings, embedder=embedder, debounce=0.1,
                     on_report=lambda r: (reports.append(r), done.set())) as watcher:
        with index_lock(settings.index_dir_for(repo.resolve())):  # the other writer
            with open(repo / "app" / "formatting.py", "a") as fh:
                fh.write("\n\ndef saved_while_locked(value):\n    return value\n")
            assert wait_for(lambda: walks, 30), "the save started no run"
            time.sleep(2.0)  # twenty debounces
            assert len(walks) == 1 and watcher.runs == 0
        assert done.wait(30), "the save was not indexed once the lock was released"
    assert watcher.runs == 1 and reports[0].files_changed == 1 and len(walks) == 2
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        assert [s.id for s in retriever.graph.find_symbols("saved_while_locked")] == ["app/formatting.py#saved_while_locked@6"]


def test_saves_under_a_watcher_walk_only_the_paths_its_events_named(tmp_path, settings, embedder, monkeypatch):
    """The watcher's runs keep a ResidentIndex: after its first run, a save is walked as the one path the
    events named, and a folder created is walked in full; each save is indexed."""
    import codeqa.indexing.resident as resident_module

    repo = copy_fixture_repo(tmp_path / "repo")
    index_repo(repo, settings, embedder=embedder)
    whole = []
    real_walk = resident_module.walk_repository
    monkeypatch.setattr(resident_module, "walk_repository", lambda *a, **k: whole.append(1) or real_walk(*a, **k))
    reports = []
    with RepoWatcher(repo, settings, embedder=embedder, debounce=0.2, on_report=reports.append) as watcher:
        index_repo(repo, settings, embedder=embedder, resident=watcher.resident)  # as `codeqa watch` starts
        for name in ("first_save", "second_save"):
            seen = len(reports)
            with open(repo / "app" / "formatting.py", "a") as fh:
                fh.write(f"\n\ndef {name}(value):\n    return value\n")
            assert wait_for(lambda: any(r.files_changed == 1 for r in reports[seen:]), 30), f"{name} was not indexed"
            assert len(whole) == 1, (name, whole)  # the first run's walk only
        seen = len(reports)
        (repo / "newpkg").mkdir()
        (repo / "newpkg" / "mod.py").write_text("def in_a_new_folder():\n    return 1\n")
        assert wait_for(lambda: any(r.files_changed for r in reports[seen:]), 30), "the new folder was not indexed"
    assert len(whole) >= 2  # the folder's event asked for a whole walk
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        for name in ("first_save", "second_save", "in_a_new_folder"):
            assert retriever.graph.find_symbols(name), name


def test_results_from_a_file_changed_since_indexing_are_stale(tmp_path, settings, embedder):
    repo = copy_fixture_repo(tmp_path / "repo")
    index_repo(repo, settings, embedder=embedder)
    encoder = repo / "encoders" / "encoder.py"
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        before = retriever.search("tokenize text into words", top_k=5)
        assert before and not any(h.stale for h in before)
        encoder.write_text("# moved down a line\n" + encoder.read_text())
        after = retriever.search("tokenize text into words", top_k=5)
        assert any(h.path == "encoders/encoder.py" for h in after)
        assert all(h.stale == (h.path == "encoders/encoder.py") for h in after)
        answer = Answerer(retriever, settings).answer("how is EncoderClass used?", no_llm=True)
        cited = {c.path: c.stale for c in answer.citations}
        assert cited.get("encoders/encoder.py") is True and cited.get("app/main.py") is False
    index_repo(repo, settings, embedder=embedder)
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        assert not any(h.stale for h in retriever.search("tokenize text into words", top_k=5))


def line_reader(stream):
    """readline with a time limit: a child that says nothing fails the test instead of hanging it."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in iter(stream.readline, "")], daemon=True).start()
    return lambda seconds=60: lines.get(timeout=seconds)


def test_codeqa_watch_from_the_command_line(tmp_path, llm_stub):
    repo = copy_fixture_repo(tmp_path / "repo")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "CODEQA_EMBEDDINGS": "openai:stub-embed",
           "OPENAI_BASE_URL": llm_stub.base_url, "OPENAI_API_KEY": "test-key", "NO_PROXY": "127.0.0.1,localhost"}
    # started with SIGINT ignored, as a child of a process that ignores it: Ctrl-C must still stop it
    proc = subprocess.Popen([sys.executable, "-X", "faulthandler", "-m", "codeqa", "watch", str(repo), "--debounce", "0.3"],
                            env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    read = line_reader(proc.stderr)
    try:
        first = read(120)
        assert "watching for changes" in first, first
        (repo / "app" / "added.py").write_text("def added_while_watching():\n    return 1\n")
        line = read()
        assert "re-indexed 1 changed, 0 deleted" in line, line
        search = subprocess.run([sys.executable, "-m", "codeqa", "search", "added_while_watching", "--repo", str(repo),
                                 "--json"], env=env, capture_output=True, text=True, timeout=120)
        assert json.loads(search.stdout)[0]["path"] == "app/added.py"
    finally:
        proc.send_signal(signal.SIGINT)
        try:  # Ctrl-C gives a run in progress 5 s, then leaves it to the next run
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack: where it hangs
            time.sleep(2)
            proc.kill()
            stacks = []
            while True:
                try:
                    stacks.append(read(1))
                except queue.Empty:
                    break
            pytest.fail("codeqa watch did not stop within 60 s of SIGINT:\n" + "".join(stacks))
    assert proc.returncode == 0
