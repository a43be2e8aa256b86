"""An index folder is an index, or it is refused: codeqa writes into and deletes from a folder only when it
carries codeqa's marker (written first, when codeqa makes the folder) or is recognised, entry by entry, as an
index codeqa made before markers; and the repository the folder belongs to is checked by every reader and writer.

Real fixture repos, real Qdrant Edge (and the real qdrant-client for the previous engine's layout); the
embedder is a hash, no model: these tests are about folders, not about what a search finds."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from codeqa.config import Settings
from codeqa.errors import IndexFolderError, IndexMismatchError, IndexMissingError, IndexOwnedError
from codeqa.indexing.index import index_repo
from codeqa.query.retrieve import Retriever
from codeqa.store import open_store
from codeqa.store.identity import collection_prefix
from codeqa.store.index_folder import MARKER_FILE
from conftest import copy_fixture_repo
from test_server_identity import HashEmbedder  # a unit vector per text, no model

ROOT = Path(__file__).resolve().parent.parent
EMBEDDER = HashEmbedder()


def settings_for(index_dir: Path) -> Settings:
    return Settings.load(env={}, index_dir=index_dir)


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` with its bytes (None for a folder): what "nothing changed" compares."""
    return {p.relative_to(folder).as_posix(): (None if p.is_dir() else p.read_bytes()) for p in sorted(folder.rglob("*"))}


def user_files(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# What the issue reproduced: a repository (or any folder) whose own folders share an index's names.
LOOKALIKES = {"qdrant/client.py": "class Client: ...\n", "chunks/split.py": "def split(): ...\n",
              "parsed/ast.py": "def parse(): ...\n", "main.py": "print('hi')\n"}


@pytest.fixture
def repo(tmp_path):
    return copy_fixture_repo(tmp_path / "repo")


def test_index_dir_on_the_repository_itself_deletes_nothing_and_refuses(repo):
    """`codeqa index . --index-dir .`: the old engine's migration removed qdrant/ and parsed/, the store
    removed chunks/, and only main.py was left."""
    user_files(repo, LOOKALIKES)
    before = snapshot(repo)
    with pytest.raises(IndexFolderError) as refused:
        index_repo(repo, settings_for(repo), embedder=EMBEDDER)
    assert snapshot(repo) == before  # nothing deleted, nothing created (not even the lock file)
    message = str(refused.value)
    assert str(repo) in message and "--index-dir" in message and "not a codeqa index folder" in message


@pytest.mark.parametrize("shape", [
    {"qdrant/client.py": "x = 1\n"},  # a folder of one's own named qdrant: the old code took it for the old engine's
    {"chunks/split.py": "x = 1\n"},  # named chunks: the old store removed it as points left without a meta
    {"parsed/ast.py": "x = 1\n", "qdrant/meta.json": '{"collections": {}}'},
    {"chunks/edge_config.json": "{}", "chunks/split.py": "x = 1\n"},  # a shard's config beside a user's file
    {"notes.txt": "mine\n"},
], ids=["qdrant", "chunks", "parsed-and-qdrant", "chunks-with-a-config", "any-file"])
def test_a_folder_that_is_not_an_index_is_refused_by_writers_and_left_as_it_was(repo, tmp_path, shape):
    folder = user_files(tmp_path / "mine", shape)
    before = snapshot(folder)
    with pytest.raises(IndexFolderError):
        index_repo(repo, settings_for(folder), embedder=EMBEDDER)
    with pytest.raises(IndexFolderError):  # the store's own open for writing (a plan's scratch store, a writer)
        open_store(repo, settings_for(folder), create=True).close()
    assert snapshot(folder) == before


def test_a_new_or_empty_folder_is_made_an_index_with_its_marker_first(repo, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder in (tmp_path / "new" / "deeper", empty):
        report = index_repo(repo, settings_for(folder), embedder=EMBEDDER)
        assert report.chunks > 10
        marker = json.loads((folder / MARKER_FILE).read_text(encoding="utf-8"))
        assert marker["repo"] == str(repo.resolve()) and isinstance(marker["format"], int)
        with Retriever.open(repo, settings_for(folder), embedder=EMBEDDER) as retriever:
            assert retriever.search("tokenize", top_k=5)
    assert index_repo(repo, settings_for(empty), embedder=EMBEDDER).nothing_to_do  # its own folder: used again


def test_one_folder_two_repositories_the_second_is_refused_by_readers_and_writers(repo, tmp_path):
    """A shared CODEQA_INDEX_DIR: `codeqa search --repo B` answered from A's index, and `codeqa index B`
    replaced A's index with B's."""
    other = copy_fixture_repo(tmp_path / "other")
    folder = tmp_path / "shared"
    index_repo(repo, settings_for(folder), embedder=EMBEDDER)
    before = snapshot(folder)
    for attempt in (lambda: Retriever.open(other, settings_for(folder), embedder=EMBEDDER),
                    lambda: index_repo(other, settings_for(folder), embedder=EMBEDDER)):
        with pytest.raises(IndexOwnedError) as refused:
            attempt()
        message = str(refused.value)
        assert str(repo.resolve()) in message and str(other.resolve()) in message and str(folder) in message
        assert "--index-dir" in message
    assert {k: v for k, v in snapshot(folder).items() if k != "index.lock"} == \
        {k: v for k, v in before.items() if k != "index.lock"}
    with Retriever.open(repo, settings_for(folder), embedder=EMBEDDER) as retriever:  # A's index is whole
        assert retriever.search("tokenize", top_k=5)


def test_an_index_made_before_markers_is_adopted_by_its_own_repository_only(repo, tmp_path):
    """An index from before this change has the repository in its meta but no marker: it keeps working for its
    repository (a run writes the marker), and another repository is refused by the meta."""
    other = copy_fixture_repo(tmp_path / "other")
    folder = tmp_path / "index"
    index_repo(repo, settings_for(folder), embedder=EMBEDDER)
    (folder / MARKER_FILE).unlink()
    with Retriever.open(repo, settings_for(folder), embedder=EMBEDDER) as retriever:  # a reader writes nothing
        assert retriever.search("tokenize", top_k=5)
    assert not (folder / MARKER_FILE).exists()
    with pytest.raises(IndexOwnedError):
        Retriever.open(other, settings_for(folder), embedder=EMBEDDER)
    with pytest.raises(IndexOwnedError):
        index_repo(other, settings_for(folder), embedder=EMBEDDER)
    assert not (folder / MARKER_FILE).exists()
    assert index_repo(repo, settings_for(folder), embedder=EMBEDDER).nothing_to_do
    assert json.loads((folder / MARKER_FILE).read_text(encoding="utf-8"))["repo"] == str(repo.resolve())


def test_an_index_made_before_markers_whose_shard_holds_temp_segments_is_adopted(repo, tmp_path):
    """Qdrant Edge's optimizer leaves `temp_segments/` in the shard: a real index built before markers (a
    benchmark's streamlink index) was refused as "not a codeqa index folder" for it."""
    folder = tmp_path / "index"
    index_repo(repo, settings_for(folder), embedder=EMBEDDER)
    (folder / MARKER_FILE).unlink()
    (folder / "chunks" / "temp_segments").mkdir(exist_ok=True)
    assert index_repo(repo, settings_for(folder), embedder=EMBEDDER).nothing_to_do
    assert (folder / MARKER_FILE).exists()


def test_a_damaged_or_foreign_marker_is_refused(repo, tmp_path):
    folder = tmp_path / "index"
    index_repo(repo, settings_for(folder), embedder=EMBEDDER)
    for text in ("not json", json.dumps({"format": 999, "repo": str(repo.resolve())}), json.dumps([1, 2])):
        (folder / MARKER_FILE).write_text(text, encoding="utf-8")
        before = snapshot(folder)
        with pytest.raises(IndexFolderError) as refused:
            index_repo(repo, settings_for(folder), embedder=EMBEDDER)
        assert MARKER_FILE in str(refused.value)
        with pytest.raises(IndexFolderError):
            Retriever.open(repo, settings_for(folder), embedder=EMBEDDER)
        assert snapshot(folder) == before


def test_a_fifo_in_place_of_the_marker_is_refused_without_hanging(repo, tmp_path):
    """A plain read of a FIFO waits for a writer forever: the marker is read as a regular file or not at all."""
    folder = tmp_path / "index"
    index_repo(repo, settings_for(folder), embedder=EMBEDDER)
    (folder / MARKER_FILE).unlink()
    os.mkfifo(folder / MARKER_FILE)
    with pytest.raises(IndexFolderError) as refused:
        Retriever.open(repo, settings_for(folder), embedder=EMBEDDER)
    assert MARKER_FILE in str(refused.value)


def test_a_link_in_place_of_the_chunks_is_not_followed_by_a_rebuild(repo, tmp_path):
    """A marked folder whose chunks/ became a link: a full rebuild removes the chunks it made, never what the
    link leads to, and says so."""
    folder = tmp_path / "index"
    index_repo(repo, settings_for(folder), embedder=EMBEDDER)
    elsewhere = user_files(tmp_path / "elsewhere", {"edge_config.json": "{}", "mine.py": "x = 1\n"})
    before = snapshot(elsewhere)
    os.rename(folder / "chunks", tmp_path / "moved-chunks")
    (folder / "chunks").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(IndexFolderError) as refused:
        index_repo(repo, settings_for(folder), embedder=EMBEDDER, full=True)
    assert "link" in str(refused.value) and snapshot(elsewhere) == before


def plant_previous_engine(folder: Path, repo: Path, embeddings_from: Path) -> None:
    """The previous engine's index as it wrote it: qdrant-client's local mode in `qdrant/` (collections
    named by collection_prefix), the pickled parse cache in `parsed/`, the plain SQLite embedding cache."""
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(folder / "qdrant"))
    prefix = collection_prefix(repo)
    client.create_collection(f"{prefix}_chunks", vectors_config={"dense": models.VectorParams(
        size=8, distance=models.Distance.COSINE)})
    for kind in ("symbols", "references", "files"):
        client.create_collection(f"{prefix}_{kind}", vectors_config={})
    client.close()
    (folder / "parsed").mkdir()
    (folder / "parsed" / (hashlib.sha256(b"x").hexdigest() + ".pkl")).write_bytes(b"\x80\x04N.")
    (folder / "embeddings.sqlite").write_bytes((embeddings_from / "embeddings.sqlite").read_bytes())
    (folder / "state.json").write_text(json.dumps({"version": 1, "files": {}}), encoding="utf-8")


def test_the_previous_engines_index_is_still_rebuilt_in_place(repo, tmp_path):
    index_repo(repo, settings_for(tmp_path / "first"), embedder=EMBEDDER)
    folder = tmp_path / "old"
    folder.mkdir()
    plant_previous_engine(folder, repo, tmp_path / "first")
    with pytest.raises(IndexMismatchError):  # readers say what to run
        Retriever.open(repo, settings_for(folder), embedder=EMBEDDER)
    report = index_repo(repo, settings_for(folder), embedder=EMBEDDER)
    assert any("previous engine" in note for note in report.notes)
    assert not (folder / "qdrant").exists() and not (folder / "parsed").exists()
    assert json.loads((folder / MARKER_FILE).read_text(encoding="utf-8"))["repo"] == str(repo.resolve())
    with Retriever.open(repo, settings_for(folder), embedder=EMBEDDER) as retriever:
        assert retriever.search("tokenize", top_k=5)


@pytest.mark.parametrize("extra", [
    {"qdrant/client.py": "x = 1\n"},  # a user's file among the old engine's
    {"parsed/ast.py": "x = 1\n"},
    {"notes.md": "mine\n"},  # the old engine's index inside a folder of other things
], ids=["in-qdrant", "in-parsed", "beside"])
def test_the_previous_engines_layout_with_anything_else_in_it_is_refused(repo, tmp_path, extra):
    index_repo(repo, settings_for(tmp_path / "first"), embedder=EMBEDDER)
    folder = tmp_path / "old"
    folder.mkdir()
    plant_previous_engine(folder, repo, tmp_path / "first")
    user_files(folder, extra)
    before = snapshot(folder)
    with pytest.raises(IndexFolderError):
        index_repo(repo, settings_for(folder), embedder=EMBEDDER)
    assert snapshot(folder) == before


@pytest.fixture
def stub_env(llm_stub):
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "CODEQA_EMBEDDINGS": "openai:stub-embed",
            "OPENAI_BASE_URL": llm_stub.base_url, "OPENAI_API_KEY": "test-key", "NO_PROXY": "127.0.0.1,localhost"}


def test_cli_index_dot_with_index_dir_dot_exits_2_and_says_why(repo, tmp_path, stub_env):
    user_files(repo, LOOKALIKES)
    before = snapshot(repo)
    done = subprocess.run([sys.executable, "-m", "codeqa", "index", ".", "--index-dir", "."], cwd=repo, env=stub_env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "not a codeqa index folder" in done.stderr and "--index-dir" in done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(repo) == before
    # a shared CODEQA_INDEX_DIR: the second repository's search is refused with exit 2, naming both
    other = copy_fixture_repo(tmp_path / "other")
    env = {**stub_env, "CODEQA_INDEX_DIR": str(tmp_path / "shared")}
    first = copy_fixture_repo(tmp_path / "first")
    assert subprocess.run([sys.executable, "-m", "codeqa", "index", str(first)], env=env, capture_output=True,
                          text=True, timeout=300).returncode == 0
    search = subprocess.run([sys.executable, "-m", "codeqa", "search", "tokenize", "--repo", str(other)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert search.returncode == 2 and str(first.resolve()) in search.stderr and str(other.resolve()) in search.stderr
