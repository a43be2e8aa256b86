"""The writer lease asks the Qdrant server its version first: a server older than 1.17 ignores the conditional
writes the lease rests on (update_filter from 1.16, update_mode=insert_only from 1.17), so it is refused before
anything is written. Through the HTTP stub (tests/qdrant_stub.py), which reports the version it is given."""

from __future__ import annotations

import pytest
from qdrant_client import QdrantClient

from codeqa.cli import main
from codeqa.errors import StoreError
from codeqa.store.lease import MIN_SERVER_VERSION, WriterLease
from codeqa.store.server import ServerStore
from conftest import copy_fixture_repo
from qdrant_stub import QdrantStub

PREFIX = "codeqa_widgets_0123456789"


@pytest.fixture
def no_proxy(monkeypatch):
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")


def writer(stub: QdrantStub) -> ServerStore:
    store = ServerStore(QdrantClient(url=stub.url, check_compatibility=False), PREFIX, url=stub.url)
    try:
        store.hold_lease("git remote github.com/acme/widgets", settle=0)
    except BaseException:
        store.close()
        raise
    return store


def lease_writes(stub: QdrantStub) -> list:
    return [r for r in stub.writes() if "_lease/points" in r.path]


@pytest.mark.parametrize("version", ["1.15.2", "1.16.3", "v1.16.0", "0.11.7", "dev", ""])
def test_a_server_too_old_for_the_conditional_writes_is_refused_before_the_lease_is_written(no_proxy, version):
    with QdrantStub(version=version) as stub:
        with pytest.raises(StoreError) as refused:
            writer(stub)
        message = str(refused.value)
        assert repr(version) in message and "needs Qdrant 1.17 or later" in message
        assert "Upgrade the server" in message and "update_filter" in message and PREFIX in message
        assert lease_writes(stub) == []  # nothing of a lease went to a server that would not check it


@pytest.mark.parametrize("version", ["1.17.0", "1.20.0", "v1.18.1", "2.0.0", "1.17.0-rc1"])
def test_a_server_that_applies_them_gives_the_lease(no_proxy, version):
    with QdrantStub(version=version) as stub:
        store = writer(stub)
        try:
            assert store.lease.read().owner == store.lease.owner
            assert any(r.method == "GET" and r.path == "/" for r in stub.requests)
        finally:
            store.close()


def test_the_version_is_the_one_the_docstring_names():
    assert MIN_SERVER_VERSION == (1, 17)


def test_qdrant_clients_in_process_mode_has_no_server_and_passes_with_the_librarys_version():
    # `:memory:` reports the qdrant-client version (required at 1.20+), whose engine applies both conditions
    client = QdrantClient(":memory:")
    store = ServerStore(client, PREFIX)
    try:
        store.hold_lease("in process", settle=0)
        assert store.lease.read().owner == store.lease.owner
        late = WriterLease(client, store.lease.collection, "the index", settle=0)
        with pytest.raises(Exception, match="is writing the index"):
            late.acquire()
    finally:
        store.close()


def test_codeqa_index_against_an_old_server_exits_1_with_the_message_and_no_traceback(no_proxy, tmp_path, capsys,
                                                                                        monkeypatch):
    repo = copy_fixture_repo(tmp_path / "widgets")
    with QdrantStub(version="1.15.0") as stub:
        monkeypatch.setenv("QDRANT_URL", stub.url)
        monkeypatch.setenv("CODEQA_INDEX_DIR", str(tmp_path / "index"))
        code = main(["index", str(repo)])
        err = capsys.readouterr().err
        assert code == 1
        assert "needs Qdrant 1.17 or later" in err and "Traceback" not in err
        assert lease_writes(stub) == [] and not any("_chunks/points" in r.path for r in stub.writes())
