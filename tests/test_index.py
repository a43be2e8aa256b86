"""index_repo end to end on a copy of the fixture repo: report, incremental runs, crash safety, lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeqa.config import Settings
from codeqa.embed import SentenceTransformerEmbedder
from codeqa.errors import IndexLockedError, IndexMismatchError
from codeqa.index import index_lock, index_repo, index_status, open_store
from codeqa.retrieve import Retriever
from conftest import copy_fixture_repo

ROOT = Path(__file__).resolve().parent.parent


def _snapshot(repo: Path, settings: Settings):
    store = open_store(repo, settings)
    try:
        symbols = sorted(s.id for s in store.all_symbols())
        chunks = sorted((r.payload["path"], r.payload["start_line"], r.payload["end_line"]) for r in store._scroll(store.chunks))
        refs = sorted((r.path, r.line, r.column, r.target_ids) for r in store.all_references())
        manifest = {p: e.sha256 for p, e in store.manifest().items()}
        return symbols, chunks, refs, manifest
    finally:
        store.close()


@pytest.fixture
def repo(tmp_path):
    return copy_fixture_repo(tmp_path / "repo")


def test_report_of_a_full_index(repo, settings, embedder):
    report = index_repo(repo, settings, embedder=embedder)
    d = report.to_dict()
    assert d["files_by_language"]["python"] == 8 and d["files_by_language"]["typescript"] == 2
    assert d["files_by_language"]["java"] == 2 and d["files_by_language"]["text"] == 1
    assert d["skipped_by_reason"]["secret"] == 1 and d["skipped_by_reason"]["binary"] == 2
    assert [p["path"] for p in d["partial"]] == ["broken.py"]
    assert d["symbols"] > 15 and d["chunks"] >= d["files"] and d["references_by_confidence"]["exact"] >= 10
    assert d["graph_files_per_second"] > 0 and d["index_bytes"] > 0


def test_no_change_reindex_does_not_load_the_model(repo, settings, embedder):
    index_repo(repo, settings, embedder=embedder)
    before = _snapshot(repo, settings)
    fresh = SentenceTransformerEmbedder()  # not loaded yet
    report = index_repo(repo, settings, embedder=fresh)
    assert report.nothing_to_do and not fresh.loaded and report.files_changed == 0
    assert _snapshot(repo, settings) == before


def test_changed_and_deleted_files(repo, settings, embedder):
    index_repo(repo, settings, embedder=embedder)
    (repo / "app" / "formatting.py").write_text(
        "def format_name(name):\n    return name.strip().title()\n\n\ndef shout(name):\n    return format_name(name).upper()\n")
    (repo / "app" / "legacy.py").unlink()
    store = open_store(repo, settings)
    try:
        status = index_status(repo, settings, store)  # what the UI's sidebar shows before re-indexing
    finally:
        store.close()
    assert (status.changed, status.deleted, status.stale) == (("app/formatting.py",), ("app/legacy.py",), 2)
    assert status.files == 13 and status.symbols > 15 and status.chunks >= 13 and status.complete and status.last_indexed
    report = index_repo(repo, settings, embedder=embedder)
    assert (report.files_changed, report.files_deleted) == (1, 1)
    symbols, chunks, refs, manifest = _snapshot(repo, settings)
    assert "app/formatting.py#shout@5" in symbols
    assert not any(s.startswith("app/legacy.py") for s in symbols)
    assert not any(c[0] == "app/legacy.py" for c in chunks) and "app/legacy.py" not in manifest
    # the call inside the new function is resolved; references into the changed file still resolve
    assert ("app/formatting.py", 6, 11, ("app/formatting.py#format_name@1",)) in refs
    assert any(r[0] == "app/main.py" and r[3] == ("app/formatting.py#format_name@1",) for r in refs)
    # and the index equals a clean build of the same tree
    clean = Settings.load(env={}, index_dir=repo.parent / "clean-index")
    index_repo(repo, clean, embedder=embedder)
    assert _snapshot(repo, clean) == _snapshot(repo, settings)


def test_secrets_never_reach_the_index(repo, settings, embedder):
    index_repo(repo, settings, embedder=embedder)
    secret = (repo / ".env").read_text().split("=", 1)[1].strip().encode()
    for path in (repo / ".codeqa").rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path


def test_concurrent_index_is_refused(repo, settings, embedder):
    with index_lock(settings.index_dir_for(repo.resolve())):
        with pytest.raises(IndexLockedError, match="Another `codeqa index` is running"):
            index_repo(repo, settings, embedder=embedder)


class FakeEmbedder:
    model_id = "fake-model"
    dimension = 384

    def encode(self, texts, batch_size=64):
        import numpy as np

        return np.ones((len(texts), 384), dtype="float32") / np.sqrt(384)


def test_index_refuses_search_with_another_model(repo, settings, embedder):
    index_repo(repo, settings, embedder=embedder)
    with pytest.raises(IndexMismatchError, match="--full"):
        Retriever.open(repo, settings, embedder=FakeEmbedder())
    # indexing with the other model re-embeds everything instead of mixing vectors
    report = index_repo(repo, settings, embedder=FakeEmbedder())
    assert report.chunks_embedded == report.chunks
    Retriever.open(repo, settings, embedder=FakeEmbedder()).close()


@pytest.mark.slow
def test_sigkill_at_any_moment_then_rerun_equals_clean_index(repo, settings, embedder):
    clean = Settings.load(env={}, index_dir=repo.parent / "clean-index")
    index_repo(repo, clean, embedder=embedder)
    expected = _snapshot(repo, clean)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    for delay in (0.5, 2.0, 4.0, 6.0):
        proc = subprocess.Popen([sys.executable, "-m", "codeqa", "index", str(repo), "--json"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # touch one file so the killed run had work to do every time
        path = repo / "app" / "formatting.py"
        path.write_text(path.read_text() + "\n")
    index_repo(repo, settings, embedder=embedder)
    clean2 = Settings.load(env={}, index_dir=repo.parent / "clean-index-2")
    index_repo(repo, clean2, embedder=embedder)
    assert _snapshot(repo, settings) == _snapshot(repo, clean2)
    assert expected[0] == _snapshot(repo, clean2)[0]  # same symbols as before the edits
