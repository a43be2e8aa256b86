"""Shared fixtures: the real embedding model (loaded once per session), an indexed copy of the
fixture repo, and a network guard — tests may reach localhost, nothing else.

Two lanes: `make test` runs everything; `make test-fast` (`pytest --fast`) leaves out the tests marked
`slow`. The mark is applied here, not by hand: a test is slow when it uses a fixture that loads the
embedding model or builds an index with it (SLOW_FIXTURES, directly or through another fixture), or
when its code or its fixtures' code starts a Python process or a browser (SLOW_CODE). In the fast lane
a guard catches the rest: a test that imports the model's libraries or starts a Python process
anyway is skipped at that point, with a reason saying so.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
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

SLOW_FIXTURES = {"embedder", "indexed_repo"}
SLOW_CODE = re.compile(r"\bsys\.executable\b|\bsubprocess\.|\bPopen\(|\bchromium\b|\bplaywright\b"  # processes
                       r"|SentenceTransformer|\bmake_embedder\(")  # the model, built without the shared fixture
# Importing one of these means loading the embedding model (or driving a browser): not the fast lane's work.
HEAVY_LIBRARIES = ("torch", "sentence_transformers", "transformers", "onnxruntime", "playwright")


def pytest_addoption(parser):
    parser.addoption("--fast", action="store_true",
                     help="the fast lane: leave out tests marked slow (model, index with the model, subprocesses)")
    parser.addoption("--llm", action="store_true",
                     help="the real-model lane (`make test-llm`): run only the tests marked llm, against a real "
                          "llama.cpp server with Qwen2.5-Coder-0.5B (scripts/local_llm.sh builds and caches both)")


def _sources(item) -> str:
    """The code of the test, of the fixtures it uses, and of the module's functions they call (two calls deep)."""
    funcs = [getattr(item, "function", None)]
    fixture_info = getattr(item, "_fixtureinfo", None)
    for defs in fixture_info.name2fixturedefs.values() if fixture_info else ():
        funcs += [d.func for d in defs]
    module = getattr(item, "module", None)
    texts, seen = [], set()
    for _ in range(3):
        found = []
        for func in funcs:
            if func in seen:
                continue
            seen.add(func)
            try:
                text = inspect.getsource(func)
            except (OSError, TypeError):
                continue
            texts.append(text)
            for name in set(re.findall(r"\b(\w+)\(", text)):
                helper = getattr(module, name, None)
                if inspect.isfunction(helper) and helper.__module__ == getattr(module, "__name__", None):
                    found.append(helper)
        funcs = found
    return "\n".join(texts)


def pytest_collection_modifyitems(config, items):
    # the real-model lane and the rest never mix: `make test` leaves the llm tests out, `make test-llm` runs only them
    real = config.getoption("--llm")
    chosen = [i for i in items if (i.get_closest_marker("llm") is not None) == real]
    config.hook.pytest_deselected(items=[i for i in items if i not in chosen])
    items[:] = chosen
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or SLOW_CODE.search(_sources(item)):
            item.add_marker("slow")
    if config.getoption("--fast"):
        fast = [i for i in items if i.get_closest_marker("slow") is None]
        config.hook.pytest_deselected(items=[i for i in items if i.get_closest_marker("slow") is not None])
        items[:] = fast


class _HeavyImportGuard:
    """A meta-path finder that turns a first import of a heavy library into a skip."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HEAVY_LIBRARIES and name not in sys.modules:
            pytest.skip(f"imports {name} (the embedding model or a browser): runs in `make test`, not the fast lane")
        return None


def _guarded_popen_init(real_init):
    def init(self, args, *rest, **kwargs):
        first = args if isinstance(args, (str, bytes, os.PathLike)) else args[0]
        first = os.fsdecode(first)
        program = first.split()[0] if isinstance(args, str) else first
        name = Path(program).name
        if program == sys.executable or name.startswith("python") or "chrom" in name:
            pytest.skip(f"starts {name}: runs in `make test`, not the fast lane")
        return real_init(self, args, *rest, **kwargs)

    return init


@contextmanager
def _fast_lane_guard(config):
    """In the fast lane, a test that loads the model or starts a Python process or browser is skipped there."""
    if not config.getoption("--fast"):
        yield
        return
    finder, real_init = _HeavyImportGuard(), subprocess.Popen.__init__
    sys.meta_path.insert(0, finder)
    subprocess.Popen.__init__ = _guarded_popen_init(real_init)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        subprocess.Popen.__init__ = real_init


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    with _fast_lane_guard(item.config):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with _fast_lane_guard(item.config):
        yield


def _guarded_connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    # the loopback range (127.0.0.0/8: a second address of this machine tests a loopback-only bind) and nothing else
    if isinstance(host, str) and host not in ("localhost", "::1", "0.0.0.0") and not host.startswith(("/", "127.")):
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
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CODEQA_MODEL", "QDRANT_URL", "CODEQA_INDEX_DIR", "CODEQA_EMBEDDINGS",
                "CODEQA_EMBEDDINGS_BASE_URL", "CODEQA_EMBEDDINGS_API_KEY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session")
def embedder():
    """The real bundled model (with the packaged adapter when present), loaded once."""
    from codeqa.embed import SentenceTransformerEmbedder

    model = SentenceTransformerEmbedder()
    model.encode(["warm up"])
    return model


class CountingEmbedder:
    """The session's real model, counting the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.model_id, self.dimension, self.texts = inner, inner.model_id, inner.dimension, 0

    def encode(self, texts, batch_size=64):
        self.texts += len(texts)
        return self.inner.encode(texts, batch_size=batch_size)


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


def index_package(repo: Path, files: dict[str, str], embedder) -> Path:
    """Write `files` (relative path -> text) under `repo` and index it with the real model and settings."""
    from codeqa.config import Settings
    from codeqa.indexing.index import index_repo

    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    index_repo(repo, Settings.load(env={}), embedder=embedder)
    return repo


@pytest.fixture(scope="session")
def indexed_repo(tmp_path_factory, embedder):
    """A copy of tests/fixtures/repo with a complete index (read-only for tests: copy it to modify)."""
    from codeqa.config import Settings
    from codeqa.indexing.index import index_repo

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


def wait_for(condition, seconds: float = 30.0) -> bool:
    """Polls `condition` until it holds (True) or `seconds` pass (False)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False
