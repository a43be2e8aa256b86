"""The dry run (plan_index): what it counts matches what an index run does, it writes nothing, its
estimates are the sample's measurements scaled up, and big skippable folders get ignore lines.

An embedder that sleeps a known time per text stands in for the model: the arithmetic is checked
against it, and no test here loads the model (the CLI's dry run is in test_cli.py, over a stub server)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import codeqa.indexing.plan
from codeqa.config import Settings
from codeqa.indexing.walk import walk_repository
from codeqa.indexing.index import index_repo
from codeqa.indexing.plan import plan_index
from conftest import copy_fixture_repo


class TimedEmbedder:
    """Unit vectors after `per_char` seconds per character it reads of a text; `load` takes `load_seconds`."""

    model_id = "timed-stub"
    dimension = 8

    def __init__(self, per_char: float = 0.0, load_seconds: float = 0.0):
        self.per_char, self.load_seconds = per_char, load_seconds
        self.loaded = False
        self.texts: list[str] = []

    def load(self) -> None:
        time.sleep(self.load_seconds)
        self.loaded = True

    def encode(self, texts, batch_size: int = 64) -> np.ndarray:
        time.sleep(self.per_char * sum(min(len(t), codeqa.indexing.plan.EMBED_CHARS_READ) for t in texts))
        self.texts.extend(texts)
        vectors = np.ones((len(texts), self.dimension), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class PaddingEmbedder(TimedEmbedder):
    """Sleeps as a local model computes: each batch of `batch_size` costs its texts padded to the
    longest one's word pieces (sentence-transformers pads a batch to its longest text)."""

    pads_batches = True

    def __init__(self, per_piece: float = 0.0):
        super().__init__()
        self.per_piece = per_piece

    def encode(self, texts, batch_size: int = 64) -> np.ndarray:
        from codeqa.embed.tokenizer import word_pieces

        pieces = word_pieces(texts)
        time.sleep(sum(self.per_piece * len(b) * max(b) for b in (pieces[i:i + batch_size]
                                                                  for i in range(0, len(pieces), batch_size))))
        return super().encode(texts, batch_size)


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def test_dry_run_writes_nothing_and_counts_what_an_index_run_does(tmp_path, monkeypatch):
    repo = copy_fixture_repo(tmp_path / "repo")
    scratch_home = tmp_path / "tmp"
    scratch_home.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_home))  # where the scratch store goes
    settings = Settings.load(env={})
    before = _tree(repo)
    embedder = TimedEmbedder()
    plan = plan_index(repo, settings, embedder=embedder)
    assert not settings.index_dir_for(repo).exists()  # no index folder
    assert _tree(repo) == before and list(scratch_home.iterdir()) == []  # nothing in the repo, scratch removed
    walked = walk_repository(repo)
    assert plan.files == len(walked.files) == 13 and plan.bytes == sum(f.size for f in walked.files)
    assert sum(lang.files for lang in plan.by_language) == plan.files
    assert {lang.language for lang in plan.by_language} >= {"python", "typescript", "java", "text"}
    assert plan.skipped_by_reason["secret"] == 1 and ("weird.py", "binary") in {(s.path, s.reason) for s in plan.skipped}
    assert plan.sample_files == plan.files  # a small repository is parsed whole
    assert len(embedder.texts) == 4 + min(64, plan.chunks)  # the warm-up, then the timed sample
    # the same files and chunker as the run: the chunk count is exact here
    report = index_repo(repo, Settings.load(env={}, index_dir=tmp_path / "real"), embedder=TimedEmbedder())
    assert plan.chunks == plan.sample_chunks == report.chunks > 0
    assert plan.index_exists is False and plan.model_id == "timed-stub"
    assert plan.phase1_seconds == pytest.approx(plan.walk_seconds + plan.parse_seconds + plan.resolve_seconds
                                                + plan.store_seconds)
    assert plan.store_seconds > 0 and plan.parse_seconds > 0
    d = plan.to_dict()
    assert d["estimates"]["chunks"] == report.chunks and d["skipped_by_reason"] == plan.skipped_by_reason
    assert any("estimate" in note.lower() for note in plan.notes)


def test_estimates_scale_the_measured_sample(tmp_path):
    repo = copy_fixture_repo(tmp_path / "repo")
    plan = plan_index(repo, Settings.load(env={}), embedder=TimedEmbedder(load_seconds=0.2), sample_seconds=0.0)
    assert plan.sample_files == 1  # the time budget ends the sample after its first file
    assert plan.chunks == round(plan.sample_chunks * plan.bytes / plan.sample_bytes)
    assert plan.model_load_seconds >= 0.2  # the load is timed apart from the embedding speed
    assert plan.phase2_seconds == pytest.approx(plan.model_load_seconds + plan.embed_seconds)
    assert any("sample of 1 of 13 files" in note for note in plan.notes)
    assert not plan.store_beside  # a small tree: the run stores its chunks itself, after resolving
    assert plan.phase1_seconds == pytest.approx(plan.walk_seconds + plan.parse_seconds + plan.resolve_seconds
                                                + plan.store_seconds)


def test_a_big_trees_estimate_counts_the_store_writes_beside_the_references(tmp_path, monkeypatch):
    """From WRITER_MIN_FILES changed files a writer process stores the chunks while references are
    resolved (indexing/writer.py): phase 1 is the parse, then the longer of the two."""
    import dataclasses
    import sys

    import codeqa.indexing.writer as store_writer

    repo = copy_fixture_repo(tmp_path / "repo")
    monkeypatch.setattr(store_writer, "WRITER_MIN_FILES", 1)
    plan = plan_index(repo, Settings.load(env={}), embedder=TimedEmbedder(), sample_seconds=0.0)
    if sys.platform.startswith("linux") and (__import__("os").cpu_count() or 1) >= 2:
        assert plan.store_beside and any("second process" in note for note in plan.notes)
    slow_store = dataclasses.replace(plan, store_beside=True, resolve_seconds=2.0, store_seconds=5.0)
    assert slow_store.phase1_seconds == pytest.approx(plan.walk_seconds + plan.parse_seconds + 5.0)
    assert dataclasses.replace(slow_store, store_beside=False).phase1_seconds == pytest.approx(
        plan.walk_seconds + plan.parse_seconds + 7.0)


def test_embedding_time_follows_the_length_of_every_chunk(tmp_path):
    """64 chunk texts are timed; the estimate weighs that speed by the lengths of all the chunks."""
    repo = copy_fixture_repo(tmp_path / "repo")
    per_char = 2e-5
    plan = plan_index(repo, Settings.load(env={}), embedder=TimedEmbedder(per_char))
    assert plan.sample_files == plan.files and plan.embed_sample_chunks == min(64, plan.chunks)
    everything = TimedEmbedder()
    index_repo(repo, Settings.load(env={}, index_dir=tmp_path / "real"), embedder=everything)
    expected = per_char * sum(min(len(t), codeqa.indexing.plan.EMBED_CHARS_READ) for t in everything.texts)
    assert expected * 0.95 <= plan.embed_seconds <= expected * 3  # sleeps: never shorter, longer on a busy machine
    assert plan.chunks_per_second == pytest.approx(plan.chunks / plan.embed_seconds)


def test_big_skippable_folders_get_ignore_lines(tmp_path, monkeypatch):
    repo = copy_fixture_repo(tmp_path / "repo")
    (repo / "third_party" / "lib").mkdir(parents=True)
    (repo / "third_party" / "gen").mkdir()
    for n in range(3):  # vendored code: most of what would be indexed
        (repo / "third_party" / "lib" / f"mod{n}.py").write_text("def f(x):\n    return x\n" * 2000)
    (repo / "third_party" / "gen" / "g.py").write_text("x = 1\n" * 4000)  # generated: a line of its own, but inside
    (repo / "data").mkdir()
    for n in range(5):  # not indexed at all, but the walk reads every file
        (repo / "data" / f"rows{n}.csv").write_text("1,2,3\n" * 5000)
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "tiny.json").write_text("{}\n")
    (repo / ".venv" / "lib").mkdir(parents=True)
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (repo / ".venv" / "lib" / "big.py").write_text("y = 2\n" * 10000)
    (repo / "docs_vendor").mkdir()
    (repo / "docs_vendor" / "x.md").write_text("words\n")
    (repo / ".codeqaignore").write_text("docs_vendor/\n")
    (repo / "manual" / "_static").mkdir(parents=True)  # a built documentation site: HTML beside a little else
    for n in range(4):
        (repo / "manual" / f"page{n}.html").write_text("<p>text</p>\n" * 3000)
    (repo / "manual" / "_static" / "search.js").write_text("var x = 1;\n" * 100)
    monkeypatch.setattr(codeqa.indexing.plan, "SUGGEST_BYTES", 100_000)
    monkeypatch.setattr(codeqa.indexing.plan, "TOP_FOLDERS", 20)  # list the small ones too
    plan = plan_index(repo, Settings.load(env={}), embedder=TimedEmbedder())
    lines = {(f.ignore_file, f.suggestion, f.kind) for f in plan.suggestions}  # not fixtures/: skippable by name, but small
    assert lines == {(".codeqaignore", "/third_party/", "vendored"), (".codeqaignore", "/data/", "data"),
                     (".codeqaignore", "/manual/**/*.html", "rendered HTML")}
    folders = {f.path: f for f in plan.folders}
    assert folders["third_party"].status == "indexed" and folders["third_party"].files == 4
    assert folders["data"].status == "skipped" and folders["data"].left_out_files == 5
    assert folders["data"].left_out_bytes == 5 * 6 * 5000
    venv = folders[".venv"]  # already left out: sized, listed, no line needed
    assert (venv.status, venv.kind, venv.suggestion) == ("ignored-dir", "virtualenv", "")
    assert venv.left_out_files == 2 and venv.left_out_bytes == os.path.getsize(repo / ".venv" / "lib" / "big.py") + 16
    assert folders["docs_vendor"].status == "codeqaignore" and folders["generated"].status == "gitignore"
    # third_party/gen/ is generated and big enough for a line of its own, but inside a suggested folder
    assert (repo / "third_party" / "gen" / "g.py").stat().st_size >= codeqa.indexing.plan.SUGGEST_SHARE * plan.bytes
    assert "third_party/gen" not in {f.path for f in plan.folders}
    assert plan.to_dict()["suggestions"][0]["line"] in ("/third_party/", "/data/", "/manual/**/*.html")


def test_a_local_models_estimate_counts_word_pieces_not_the_samples_padding(tmp_path):
    """The sample goes as one batch padded to its longest text; a run's batches hold texts of about
    one length (embed.longest_first): the estimate is the run's, not the padded sample's."""
    from codeqa.embed.tokenizer import word_pieces

    repo = copy_fixture_repo(tmp_path / "repo")
    per_piece = 4e-5
    plan = plan_index(repo, Settings.load(env={}), embedder=PaddingEmbedder(per_piece))
    everything = PaddingEmbedder()
    index_repo(repo, Settings.load(env={}, index_dir=tmp_path / "real"), embedder=everything)
    pieces = word_pieces(everything.texts)
    expected = per_piece * sum(pieces)  # every text at its own length
    padded = per_piece * len(pieces) * max(pieces)  # what scaling the padded sample by chunk count gives
    assert expected * 3 < padded  # the fixture's chunks differ in length enough to tell the two apart
    assert expected * 0.95 <= plan.embed_seconds <= expected * codeqa.indexing.plan.RUN_PADDING * 2  # longer on a busy machine
