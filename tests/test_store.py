"""Both engines pass the Store contract: EdgeStore (embedded Qdrant Edge + SQLite) and ServerStore
(qdrant-client; here its in-memory engine stands in for a server)."""

from __future__ import annotations

import itertools

import pytest

from store_contract import StoreContract


class TestEdgeStore(StoreContract):
    @pytest.fixture
    def make_store(self, tmp_path):
        from codeqa.store.edge import EdgeStore

        return lambda: EdgeStore.open(tmp_path / "repo", tmp_path / "index", create=True)


class TestServerStore(StoreContract):
    @pytest.fixture
    def make_store(self):
        from qdrant_client import QdrantClient

        from codeqa.store.server import ServerStore

        client = QdrantClient(":memory:")
        counter = itertools.count()
        return lambda: ServerStore(client, f"codeqa_test_{next(counter)}")
