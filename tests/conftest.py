"""Shared fixtures: the real embedding model (loaded once per session), an indexed copy of the
fixture repo, and a network guard — tests may reach localhost, nothing else."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Indexes default to the user's cache folder: the tests' go to a folder of their own (child processes
# read XDG_CACHE_HOME; in-process Settings.load(env={}) reaches default_cache_home, patched below).
TEST_CACHE_HOME = Path(tempfile.mkdtemp(prefix="codeqa-test-cache-"))
os.environ["XDG_CACHE_HOME"] = str(TEST_CACHE_HOME)
FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_REPO = FIXTURES / "repo"
_real_connect = socket.socket.connect


def _guarded_connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0") and not host.startswith("/"):
        raise RuntimeError(f"tests must not reach the network (tried {address!r})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True, scope="session")
def _no_network():
    socket.socket.connect = _guarded_connect
    yield
    socket.socket.connect = _real_connect


@pytest.fixture(autouse=True, scope="session")
def _test_cache_home():
    import codeqa.config

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codeqa.config, "default_cache_home", lambda: TEST_CACHE_HOME)
        yield


@pytest.fixture(autouse=True)
def _clean_llm_env(monkeypatch):
    """Tests decide themselves whether an LLM or Qdrant server is configured."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CODEQA_MODEL", "QDRANT_URL", "CODEQA_INDEX_DIR", "CODEQA_EMBEDDINGS"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session")
def embedder():
    """The real bundled model (with the packaged adapter when present), loaded once."""
    from codeqa.embed import SentenceTransformerEmbedder

    model = SentenceTransformerEmbedder()
    model.encode(["warm up"])
    return model


def copy_fixture_repo(dest: Path) -> Path:
    shutil.copytree(FIXTURE_REPO, dest, symlinks=True)
    return dest


def index_snapshot(repo: Path, settings):
    """What an index holds, comparable between runs: symbol ids, chunk spans, references with their
    targets, the manifest's hashes."""
    from codeqa.store import open_store

    store = open_store(repo, settings)
    try:
        symbols = sorted(s.id for s in store.all_symbols())
        manifest_paths = sorted(store.manifest())
        chunks = sorted((h.path, h.start_line, h.end_line) for p in manifest_paths for h in store.chunks_in_file(p))
        refs = sorted((r.path, r.line, r.column, r.target_ids) for r in store.all_references())
        manifest = {p: e.sha256 for p, e in store.manifest().items()}
        return symbols, chunks, refs, manifest
    finally:
        store.close()


@pytest.fixture(scope="session")
def indexed_repo(tmp_path_factory, embedder):
    """A copy of tests/fixtures/repo with a complete index (read-only for tests: copy it to modify)."""
    from codeqa.config import Settings
    from codeqa.index import index_repo

    repo = copy_fixture_repo(tmp_path_factory.mktemp("indexed") / "repo")
    settings = Settings.load(env={})
    report = index_repo(repo, settings, embedder=embedder)
    assert report.files_total > 5
    return repo


@pytest.fixture
def settings():
    from codeqa.config import Settings

    return Settings.load(env={})


@pytest.fixture
def llm_stub(monkeypatch):
    """A started local OpenAI-compatible server (tests/llm_stub.py); proxies bypassed for it."""
    from llm_stub import LLMStub

    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    with LLMStub() as stub:
        yield stub


@pytest.fixture
def llm_settings(llm_stub):
    """Settings that point the chat model at the stub (short timeout, so slow replies fail fast)."""
    from codeqa.config import Settings

    return Settings.load(env={}, openai_base_url=llm_stub.base_url, openai_api_key="test-key", model="stub-model",
                         llm_timeout=5.0)


def remove_deep_tree(top: Path) -> None:
    """Delete a folder nested deeper than shutil.rmtree's recursion can go (pytest cleans tmp dirs with it)."""
    path = str(top)
    chain = [path]
    while True:
        subdirs = [e.path for e in os.scandir(chain[-1]) if e.is_dir(follow_symlinks=False)]
        if not subdirs:
            break
        chain.append(subdirs[0])
    for folder in reversed(chain):
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                if entry.path not in chain:
                    shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        os.rmdir(folder)
