"""The embedded engine as users meet it: several processes on one index, and an index folder that a
repository ships (nothing in it may run). Real `codeqa` processes; embeddings from the local stub
server so that a child process starts in a second, not after loading the model."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from codeqa.config import Settings
from conftest import copy_fixture_repo

ROOT = Path(__file__).resolve().parent.parent

READER = r"""
import json, sys
from pathlib import Path
from codeqa.config import Settings
from codeqa.query.retrieve import Retriever

retriever = Retriever.open(Path(sys.argv[1]), Settings.load())
print("READY", flush=True)
for line in sys.stdin:
    query = line.strip()
    hits = retriever.search(query, top_k=3)
    print(json.dumps({"paths": [h.path for h in hits], "symbols": [s.id for s in retriever.graph.find_symbols(query)]}),
          flush=True)
"""


@pytest.fixture
def stub_env(llm_stub):
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "CODEQA_EMBEDDINGS": "openai:stub-embed",
            "OPENAI_BASE_URL": llm_stub.base_url, "OPENAI_API_KEY": "test-key", "NO_PROXY": "127.0.0.1,localhost"}


def codeqa(env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codeqa", *argv], env=env, capture_output=True, text=True, timeout=300)


def test_readers_and_a_writer_share_one_index(tmp_path, stub_env):
    """A long-lived reader (the UI) stays open while another process searches and a third re-indexes;
    none fails, and the long-lived reader sees the new run's symbols on its next question."""
    repo = copy_fixture_repo(tmp_path / "repo")
    assert codeqa(stub_env, "index", str(repo)).returncode == 0
    reader = subprocess.Popen([sys.executable, "-c", READER, str(repo)], env=stub_env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "READY", reader.stderr.read()
        reader.stdin.write("tokenize\n")
        reader.stdin.flush()
        first = json.loads(reader.stdout.readline())
        assert "encoders/encoder.py#tokenize@33" in first["symbols"]

        other = codeqa(stub_env, "search", "tokenize", "--repo", str(repo), "--json")  # a second reader, meanwhile
        assert other.returncode == 0, other.stderr
        assert json.loads(other.stdout)[0]["path"] == "encoders/encoder.py"

        (repo / "app" / "fresh.py").write_text("def brand_new_helper(value):\n    return value * 2\n")
        writer = codeqa(stub_env, "index", str(repo))  # a writer while both readers have the index open
        assert writer.returncode == 0, writer.stderr

        reader.stdin.write("brand_new_helper\n")
        reader.stdin.flush()
        after = json.loads(reader.stdout.readline())
        assert after["symbols"] == ["app/fresh.py#brand_new_helper@1"]
        assert after["paths"][0] == "app/fresh.py"
    finally:
        reader.stdin.close()
        reader.wait(timeout=60)
    assert reader.returncode == 0, reader.stderr.read()


class Payload:
    """What an attacker pickles: loading it creates the marker folder."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.mkdir, (str(self.marker),)


def plant_old_engine_index(folder: Path, marker: Path) -> None:
    """qdrant-client local mode's layout (meta.json + one SQLite file of pickled points per
    collection) and the old pickled parse cache, each holding the payload."""
    blob = pickle.dumps(Payload(marker))
    collection = folder / "qdrant" / "collection" / "codeqa_repo_0000_chunks"
    collection.mkdir(parents=True)
    (folder / "qdrant" / "meta.json").write_text(json.dumps({"collections": {"codeqa_repo_0000_chunks": {
        "vectors": {"dense": {"size": 8, "distance": "Cosine"}}}}, "aliases": {}}))
    with sqlite3.connect(collection / "storage.sqlite") as db:
        db.execute("CREATE TABLE points (id TEXT, point BLOB)")
        db.execute("INSERT INTO points VALUES (?, ?)", ("1", blob))
    (folder / "parsed").mkdir()
    (folder / "parsed" / ("0" * 64 + ".pkl")).write_bytes(blob)


def test_a_shipped_index_folder_runs_nothing(tmp_path, stub_env):
    """A repository ships `.codeqa/` (the old default index folder) and another folder a user might
    point --index-dir at, both full of pickles; neither `index` nor `search` nor `refs` runs them."""
    repo = copy_fixture_repo(tmp_path / "repo")
    marker = tmp_path / "pwned"
    plant_old_engine_index(repo / ".codeqa", marker)
    shipped = repo / "shipped-index"
    plant_old_engine_index(shipped, marker)
    with sqlite3.connect(shipped / "parsed.sqlite") as db:  # and the new parse cache's table, with a pickle in it
        db.execute("CREATE TABLE parsed (key TEXT PRIMARY KEY, data BLOB)")
        db.execute("INSERT INTO parsed VALUES (?, ?)", ("k", pickle.dumps(Payload(marker))))

    for env in (stub_env, {**stub_env, "CODEQA_INDEX_DIR": str(shipped)}):
        done = codeqa(env, "index", str(repo))
        assert done.returncode == 0, done.stderr
        for argv in (("search", "tokenize", "--repo", str(repo), "--json"), ("refs", "tokenize", "--repo", str(repo))):
            out = codeqa(env, *argv)
            assert out.returncode == 0 and "encoders/encoder.py" in out.stdout, out.stderr
        assert not marker.exists()
    # the default index lives outside the repository, and the shipped folder's dead parts are gone
    default = Settings.load(env={"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}).index_dir_for(repo)
    assert repo not in default.parents and (default / "graph.sqlite").is_file()
    assert not (shipped / "qdrant").exists() and not (shipped / "parsed").exists()


def test_an_index_from_before_float16_and_names_is_rebuilt_from_its_embedding_cache(tmp_path, stub_env, llm_stub):
    """An index written by the previous format (graph schema 3, float32 rows in the embedding cache):
    readers say what to run, and `codeqa index` rebuilds it without embedding anything again."""
    import numpy as np

    repo = copy_fixture_repo(tmp_path / "repo")
    env = {**stub_env, "CODEQA_INDEX_DIR": str(tmp_path / "index")}
    assert codeqa(env, "index", str(repo)).returncode == 0
    with sqlite3.connect(tmp_path / "index" / "graph.sqlite") as db:
        db.execute("PRAGMA user_version = 3")
    state = json.loads((tmp_path / "index" / "state.json").read_text())
    state.pop("index_format", None)  # state.json as the previous format's run wrote it
    (tmp_path / "index" / "state.json").write_text(json.dumps(state))
    with sqlite3.connect(tmp_path / "index" / "embeddings.sqlite") as db:  # the cache as float32 wrote it: no tag
        rows = db.execute("SELECT rowid, vector FROM vectors").fetchall()
        db.executemany("UPDATE vectors SET vector = ? WHERE rowid = ?",
                       [(np.frombuffer(v[4:], "<f2").astype("<f4").tobytes(), rowid) for rowid, v in rows])
    refused = codeqa(env, "search", "tokenize", "--repo", str(repo), "--json")
    assert refused.returncode != 0 and "run `codeqa index` to rebuild it" in refused.stderr
    embedded_before = len(llm_stub.embedding_requests)
    rebuilt = codeqa(env, "index", str(repo), "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    summary = json.loads(rebuilt.stdout[rebuilt.stdout.index("{"):])
    assert not summary["nothing_to_do"] and summary["chunks"] == len(rows)
    sent = [text for r in llm_stub.embedding_requests[embedded_before:] for text in r.body["input"]]
    assert sent in ([], ["dimension probe"])  # every chunk's vector came from the float32 rows
    found = codeqa(env, "search", "tokenize", "--repo", str(repo), "--json")
    assert found.returncode == 0 and json.loads(found.stdout)[0]["path"] == "encoders/encoder.py"
