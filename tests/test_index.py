"""index_repo end to end on a copy of the fixture repo: report, incremental runs, crash safety, lock."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeqa.config import Settings
from codeqa.embed import EmbeddingCache, SentenceTransformerEmbedder
from codeqa.errors import IndexLockedError, IndexMismatchError, IndexMissingError
from codeqa.indexing.index import index_lock, index_repo, index_status, open_store
from codeqa.query.retrieve import Retriever
from conftest import CountingEmbedder, copy_fixture_repo, index_snapshot

ROOT = Path(__file__).resolve().parent.parent


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


def test_files_are_counted_by_the_language_they_were_parsed_in(tmp_path, settings, embedder):
    """An Objective-C header is C's by its .h: the report counts it as Objective-C, on every kind of run."""
    repo = tmp_path / "objc"
    shutil.copytree(ROOT / "tests" / "fixtures" / "languages" / "objc", repo)
    (repo / "util.h").write_text("int util(void);\n", encoding="utf-8")  # a plain C header stays C
    parsed = {"objc": 5, "c": 1}
    assert index_repo(repo, settings, embedder=embedder, embed=False).files_by_language == parsed
    deferred = index_repo(repo, settings, embedder=embedder, embed=False)  # from the store's manifest
    assert deferred.nothing_to_do and deferred.files_by_language == parsed
    assert index_repo(repo, settings, embedder=embedder).files_by_language == parsed  # phase 2 only
    again = index_repo(repo, settings, embedder=embedder)  # from the state file, without opening the store
    assert again.nothing_to_do and again.files_by_language == parsed
    (repo / "main.m").write_text((repo / "main.m").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert index_repo(repo, settings, embedder=embedder).files_by_language == parsed  # the headers from the parse cache


def test_no_change_reindex_does_not_load_the_model(repo, settings, embedder):
    index_repo(repo, settings, embedder=embedder)
    before = index_snapshot(repo, settings)
    fresh = SentenceTransformerEmbedder()  # not loaded yet
    report = index_repo(repo, settings, embedder=fresh)
    assert report.nothing_to_do and not fresh.loaded and report.files_changed == 0
    assert index_snapshot(repo, settings) == before


def test_reindex_with_every_vector_cached_does_not_load_the_model(repo, settings, embedder):
    """A branch switched back and forth: the files change, their chunks were embedded before."""
    first = index_repo(repo, settings, embedder=embedder)
    before = index_snapshot(repo, settings)
    fresh = SentenceTransformerEmbedder()  # not loaded yet
    report = index_repo(repo, settings, full=True, embedder=fresh)
    assert not report.nothing_to_do and report.files_changed == first.files_changed > 0
    assert report.chunks_embedded == report.chunks == first.chunks and not fresh.loaded
    assert index_snapshot(repo, settings) == before


def test_embedding_cache_keeps_the_most_recently_used_vectors(tmp_path):
    import numpy as np

    ticks = iter(range(1, 100))
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite", clock=lambda: next(ticks))
    vec = np.ones((1, 3), dtype=np.float32)
    for text in ("a", "b", "c"):  # written at t = 1, 2, 3
        cache.put_many("m", [text], vec)
    assert set(cache.get_many("m", ["a"])) == {cache.key("a")}  # read at t = 4: a is now the newest
    assert cache.prune(keep=2) == 1 and len(cache) == 2
    assert set(cache.get_many("m", ["a", "b", "c"])) == {cache.key("a"), cache.key("c")}
    assert cache.prune(keep=5) == 0


def test_a_cache_from_before_pruning_is_upgraded_in_place(tmp_path):
    import sqlite3

    import numpy as np

    path = tmp_path / "embeddings.sqlite"
    db = sqlite3.connect(str(path))
    db.execute("CREATE TABLE vectors (model TEXT, hash TEXT, vector BLOB, PRIMARY KEY (model, hash))")
    db.execute("INSERT INTO vectors VALUES (?, ?, ?)", ("m", EmbeddingCache.key("old"), np.ones(3, np.float32).tobytes()))
    db.commit()
    db.close()
    cache = EmbeddingCache(path)
    cache.put_many("m", ["new"], np.zeros((1, 3), dtype=np.float32))
    assert cache.prune(keep=1) == 1  # the entry from the old cache had never been marked used: it goes first
    assert set(cache.get_many("m", ["old", "new"])) == {cache.key("new")}


def test_churn_does_not_grow_the_embedding_cache_past_its_cap(repo, settings, embedder, monkeypatch):
    """Every edit leaves the old chunks' vectors behind; after a run the cache holds at most the cap."""
    import codeqa.indexing.index as index_module

    monkeypatch.setattr(index_module, "EMBED_CACHE_MIN", 0)
    monkeypatch.setattr(index_module, "EMBED_CACHE_FACTOR", 1)
    index_repo(repo, settings, embedder=embedder)
    target = repo / "app" / "formatting.py"
    original = target.read_text()
    embedded = 0
    for i in range(3):
        target.write_text(f"# edit {i}\n" + original)  # every chunk of the file changes
        report = index_repo(repo, settings, embedder=embedder)
        embedded += report.chunks_embedded
    cache = EmbeddingCache(settings.index_dir_for(repo.resolve()) / "embeddings.sqlite")
    try:
        assert embedded >= 3 and len(cache) == report.chunks  # without pruning: report.chunks + the old versions
    finally:
        cache.close()


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
    symbols, chunks, refs, manifest = index_snapshot(repo, settings)
    assert "app/formatting.py#shout@5" in symbols
    assert not any(s.startswith("app/legacy.py") for s in symbols)
    assert not any(c[0] == "app/legacy.py" for c in chunks) and "app/legacy.py" not in manifest
    # the call inside the new function is resolved; references into the changed file still resolve
    assert ("app/formatting.py", 6, 11, ("app/formatting.py#format_name@1",)) in refs
    assert any(r[0] == "app/main.py" and r[3] == ("app/formatting.py#format_name@1",) for r in refs)
    # and the index equals a clean build of the same tree
    clean = Settings.load(env={}, index_dir=repo.parent / "clean-index")
    index_repo(repo, clean, embedder=embedder)
    assert index_snapshot(repo, clean) == index_snapshot(repo, settings)


def test_secrets_never_reach_the_index(repo, settings, embedder):
    index_repo(repo, settings, embedder=embedder)
    secret = (repo / ".env").read_text().split("=", 1)[1].strip().encode()
    for path in settings.index_dir_for(repo.resolve()).rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path


def test_concurrent_index_is_refused(repo, settings, embedder):
    with index_lock(settings.index_dir_for(repo.resolve())):
        with pytest.raises(IndexLockedError, match="Another `codeqa index` is running"):
            index_repo(repo, settings, embedder=embedder)


def test_every_module_imports_without_fcntl():
    """Windows has no fcntl: the writer lock is filelock's, and no module imports fcntl itself."""
    code = ("import importlib, pkgutil, sys\n"
            "import mcp.server.stdio  # imports fcntl itself, under `if sys.platform != 'win32'`\n"
            "sys.modules['fcntl'] = None  # from here on an import of it raises ImportError, as on Windows\n"
            "import codeqa\n"
            "for m in pkgutil.walk_packages(codeqa.__path__, 'codeqa.'):\n"
            "    if not m.name.endswith('__main__'):  # that one runs the CLI\n"
            "        importlib.import_module(m.name)\n")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]


class FakeEmbedder:
    model_id = "fake-model"
    dimension = 384

    def encode(self, texts, batch_size=64):
        import numpy as np

        return np.ones((len(texts), 384), dtype="float32") / np.sqrt(384)


def test_index_refuses_search_with_another_model(repo, settings, embedder):
    index_repo(repo, settings, embedder=embedder)
    with pytest.raises(IndexMismatchError, match="run `codeqa index|re-index with `codeqa index"):
        Retriever.open(repo, settings, embedder=FakeEmbedder())
    # indexing with the other model re-embeds everything instead of mixing vectors
    report = index_repo(repo, settings, embedder=FakeEmbedder())
    assert report.chunks_embedded == report.chunks
    Retriever.open(repo, settings, embedder=FakeEmbedder()).close()


def test_concurrent_index_from_the_command_line_is_refused(repo, settings):
    """A second `codeqa index` process on the same index exits 1 with a clear message and writes nothing."""
    index_dir = settings.index_dir_for(repo.resolve())
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    with index_lock(index_dir):
        out = subprocess.run([sys.executable, "-m", "codeqa", "index", str(repo)], env=env, capture_output=True, text=True)
    assert out.returncode == 1
    assert "Another `codeqa index` is running" in out.stderr and "Traceback" not in out.stderr
    assert f"(process {os.getpid()})" in out.stderr  # the holder, from the lock file
    assert not (index_dir / "graph.sqlite").exists()


CHILD = """
import sys
from pathlib import Path
import codeqa.indexing.dense
from codeqa.config import Settings
from codeqa.indexing.index import index_repo

codeqa.indexing.dense.BATCH_CHUNKS = 32  # phase 2 commits several batches here, so a kill can land between them
if sys.argv[2:] == ["writer"]:  # phase 1's chunks from a writer process, as a big run's (indexing/writer.py)
    import codeqa.indexing.writer
    codeqa.indexing.writer.WRITER_MIN_FILES = 1
    codeqa.indexing.writer.FILE_BATCH = 64  # several batches of GENERATED files, to be killed between

def progress(stage, done, total):
    print("STAGE", stage, done, total, flush=True)

index_repo(Path(sys.argv[1]), Settings.load(), progress=progress)
print("DONE", flush=True)
"""
GENERATED = 150  # > FILE_BATCH, so a run stores several batches and can be killed between them


def _write_generated(repo: Path, round_: int) -> None:
    """Many small modules whose content changes every round, so every run has real work in every stage."""
    gen = repo / "gen"
    gen.mkdir(exist_ok=True)
    for i in range(GENERATED):
        calls = f"return step_{i - 1}(x) + {round_}" if i else f"return x + {round_}"
        shift = f"# round {round_}\n" * (round_ % 3)  # moves the spans: stale points would not be overwritten
        (gen / f"mod_{i:03}.py").write_text(f"{shift}from gen.mod_{max(i - 1, 0):03} import step_{max(i - 1, 0)}\n\n\n"
                                            f"def step_{i}(x):\n    \"\"\"Step {i} of round {round_}.\"\"\"\n    {calls}\n")


def _kill_at(repo: Path, stage: str, min_done: int, delay: float, writer: bool = False) -> tuple[str, bool]:
    """Run `index` in a child and SIGKILL it `delay` s after it reports `stage` with done >= min_done.
    Returns the last progress line seen before the kill and whether the child was still running."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(repo), *(["writer"] if writer else [])], env=env,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    last = ""
    try:
        for line in proc.stdout:
            last = line.strip()
            parts = last.split()
            if parts[:2] == ["STAGE", stage] and int(parts[2]) >= min_done:
                time.sleep(delay)
                break
        alive = proc.poll() is None
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
        proc.stdout.close()
    return last, alive


def _no_duplicates(repo: Path, settings: Settings) -> None:
    store = open_store(repo, settings)
    try:
        manifest = store.manifest()
        spans = [(h.path, h.start_line, h.end_line) for p in manifest for h in store.chunks_in_file(p)]
        assert len(spans) == store.count_chunks()
        assert len(spans) == len(set(spans)) == sum(e.chunks for e in manifest.values())
        assert all(e.status != "pending" and e.embedded for e in manifest.values())
        assert len(store.search([1.0] + [0.0] * 383, None, len(spans) + 10)) == len(spans)  # each has its dense vector
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.parametrize("writer", [False, True], ids=["in-process", "writer-process"])
def test_sigkill_at_any_moment_then_rerun_equals_clean_index(repo, settings, embedder, writer):
    """Kill `codeqa index` in each stage (phase 1: deleting, parsing, writing a batch of points, resolving
    references; phase 2: loading the model, embedding the first batch, after some batches were committed),
    changing files between kills; the next run completes an index equal to a clean build of the same
    tree, without duplicates, every chunk with its dense vector. Phase 1's chunks are written in the
    run's process, or by a writer process as on a big tree (killed with the run)."""
    formatting = repo / "app" / "formatting.py"
    original = formatting.read_text()
    _write_generated(repo, 0)
    index_repo(repo, settings, embedder=embedder)  # a complete index to start from: the first kill is mid-update
    kills = [("delete", 0, 0.0), ("parse", 40, 0.0), ("store", 64, 0.05), ("references", 0, 0.0), ("model", 0, 0.2),
             ("embed", 1, 0.1), ("embed", 96, 0.0)]
    seen = []
    for round_, (stage, min_done, delay) in enumerate(kills, start=1):
        _write_generated(repo, round_)
        # edit, revert, add and delete files between kills: a reverted file must not keep a half-deleted index
        formatting.write_text(original + f"\n\ndef added_{round_}():\n    return {round_}\n" if round_ % 2 else original)
        (repo / "gen" / f"extra_{round_}.py").write_text(f"def extra_{round_}():\n    return {round_}\n")
        if round_ > 1:
            (repo / "gen" / f"extra_{round_ - 1}.py").unlink()
        for attempt in range(3):  # a fast stage can finish between the report and the kill: then try again
            last, alive = _kill_at(repo, stage, min_done, delay, writer)
            if alive and not (settings.index_dir_for(repo.resolve()) / "state.json").exists():
                break
            (repo / "gen" / f"extra_{round_}.py").write_text(f"def extra_{round_}():\n    return {round_ + attempt + 1}\n")
        seen.append(last.split()[1] if last.startswith("STAGE") else last)
        assert alive, f"the child finished before the kill in stage {stage}"
        assert not (settings.index_dir_for(repo.resolve()) / "state.json").exists()  # the killed run was really mid-update
    assert seen == [k[0] for k in kills], seen  # each kill landed in the stage it aimed at
    index_repo(repo, settings, embedder=embedder)
    clean = Settings.load(env={}, index_dir=repo.parent / "clean-index")
    index_repo(repo, clean, embedder=embedder)
    assert index_snapshot(repo, settings) == index_snapshot(repo, clean)
    _no_duplicates(repo, settings)
    assert index_repo(repo, settings, embedder=embedder).nothing_to_do


def test_a_changed_fingerprint_is_refused_then_rederived_from_the_cache(repo, settings, embedder, tmp_path):
    counting = CountingEmbedder(embedder)
    index_repo(repo, settings, embedder=counting)
    assert counting.texts > 10
    # another chunk size: searching is refused with what to run
    bigger = settings.with_(chunk_max_chars=1200)
    with pytest.raises(IndexMismatchError, match="CODEQA_CHUNK_MAX_CHARS.*run `codeqa index"):
        Retriever.open(repo, bigger, embedder=embedder)
    # edited tree-sitter queries (an upgrade): refused too, then the next run re-derives every file
    # and takes every vector from the embedding cache, since the chunks did not change
    queries = tmp_path / "queries"
    shutil.copytree(ROOT / "queries", queries)
    with open(queries / "python" / "references.scm", "a") as fh:
        fh.write("\n; an edit\n")
    edited = settings.with_(queries_dir=queries)  # CODEQA_QUERIES_DIR
    with pytest.raises(IndexMismatchError, match="other tree-sitter queries"):
        Retriever.open(repo, edited, embedder=embedder)
    counting.texts = 0
    report = index_repo(repo, edited, embedder=counting)
    assert report.files_changed == report.files_total and counting.texts == 0
    assert any("other tree-sitter queries" in note for note in report.notes)
    with Retriever.open(repo, edited, embedder=embedder) as retriever:
        assert retriever.search("tokenize", top_k=3)[0].path == "encoders/encoder.py"


def test_an_index_of_the_previous_engine_is_rebuilt_from_its_embedding_cache(repo, embedder, tmp_path):
    """The old default was <repo>/.codeqa with qdrant-client's local mode: its embedding cache (plain
    SQLite) rebuilds the new index without embedding anything; its pickles are never opened."""
    first = Settings.load(env={}, index_dir=tmp_path / "first")
    index_repo(repo, first, embedder=embedder)
    old = repo / ".codeqa"
    (old / "qdrant" / "collection").mkdir(parents=True)
    shutil.copyfile(tmp_path / "first" / "embeddings.sqlite", old / "embeddings.sqlite")
    settings = Settings.load(env={})
    with pytest.raises(IndexMissingError):  # before the rebuild: the new location has no index yet
        Retriever.open(repo, settings, embedder=embedder)
    counting = CountingEmbedder(embedder)
    report = index_repo(repo, settings, embedder=counting)
    assert counting.texts == 0 and report.chunks > 10
    assert len(report.notes) == 1 and "previous engine" in report.notes[0] and str(old) in report.notes[0]
    assert index_repo(repo, settings, embedder=counting).notes == []  # said once
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        assert retriever.search("tokenize", top_k=3)[0].path == "encoders/encoder.py"


def test_a_lost_parse_cache_is_parsed_again_and_the_index_stays_right(repo, settings, embedder, tmp_path):
    """The parse cache gone (or of another format) while state says little changed: every other file's
    parse is made again (in workers when there are many), and the result equals a clean build."""
    index_repo(repo, settings, embedder=embedder)
    index_dir = settings.index_dir_for(repo.resolve())
    for suffix in ("", "-wal", "-shm"):
        (index_dir / f"parsed.sqlite{suffix}").unlink(missing_ok=True)
    (repo / "app" / "formatting.py").write_text((repo / "app" / "formatting.py").read_text() + "\n\ndef extra():\n    return 1\n")
    report = index_repo(repo, settings, embedder=embedder)
    assert report.files_changed == 1
    clean = Settings.load(env={}, index_dir=tmp_path / "clean-index")
    index_repo(repo, clean, embedder=embedder)
    assert index_snapshot(repo, settings) == index_snapshot(repo, clean)
