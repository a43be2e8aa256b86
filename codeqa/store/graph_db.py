"""The graph, manifest and meta of an embedded index, in SQLite (<index-dir>/graph.sqlite).

Symbols and references are looked up through B-tree indexes (by name key, id, path, parent, target,
enclosing symbol), so a command reads only the rows its question needs: opening the index costs the
same at 100 files as at 100,000. Rows hold plain values (text, integers, JSON lists), nothing that
runs when read. WAL mode: readers in other processes go on while a writer commits.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator, Sequence

from ..errors import IndexMismatchError, StoreError
from ..types import Reference, Symbol, name_key
from . import ManifestEntry, batches, reference_key

SCHEMA_VERSION = 3
_SYMBOL_FIELDS = ("id", "name", "qualified_name", "kind", "language", "path", "start_line", "end_line", "signature",
                  "docstring", "parent_id")
_REF_FIELDS = ("name", "path", "line", "column", "kind", "enclosing_symbol_id", "target_ids", "confidence", "line_text",
               "receiver", "module", "alias", "assigned")
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 0), data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS generation (id INTEGER PRIMARY KEY CHECK (id = 0), value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, sha256 TEXT, language TEXT, chunks INTEGER, symbols INTEGER,
                                  status TEXT, reason TEXT);
CREATE TABLE IF NOT EXISTS symbols ({", ".join(f + (" TEXT PRIMARY KEY" if f == "id" else "") for f in _SYMBOL_FIELDS)},
                                    name_key TEXT, qual_key TEXT);
CREATE INDEX IF NOT EXISTS symbols_name_key ON symbols (name_key);
CREATE INDEX IF NOT EXISTS symbols_qual_key ON symbols (qual_key);
CREATE INDEX IF NOT EXISTS symbols_path ON symbols (path);
CREATE INDEX IF NOT EXISTS symbols_parent ON symbols (parent_id);
CREATE TABLE IF NOT EXISTS refs (key INTEGER PRIMARY KEY, {", ".join(f'"{f}"' for f in _REF_FIELDS)}, enclosing INTEGER);
CREATE INDEX IF NOT EXISTS refs_enclosing ON refs (enclosing);
CREATE TABLE IF NOT EXISTS ref_targets (target INTEGER NOT NULL, key INTEGER NOT NULL, PRIMARY KEY (target, key))
    WITHOUT ROWID;
PRAGMA user_version = {SCHEMA_VERSION};
"""


class GraphDB:
    """One SQLite file; every method commits what it writes before returning."""

    def __init__(self, path: Path, create: bool):
        self.path = Path(path)
        try:
            self.db = self._connect()
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                if not create:
                    raise IndexMismatchError(f"The index in {self.path.parent} was written by another codeqa version; "
                                             "run `codeqa index` to rebuild it (vectors come from the embedding cache).")
                self.db.close()  # an index run rebuilds what the graph held: the fingerprint in it is gone too
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
                self.db = self._connect()
            if create:
                self.ensure_schema()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a readable codeqa graph ({exc}); delete the index folder "
                             f"{self.path.parent} and run `codeqa index` again.") from None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction (the connection is in autocommit mode, where each statement would be its own)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA cache_size=-65536")  # 64 MB: a big project's reference writes stay in memory
        return db

    def close(self) -> None:
        self.db.close()

    def ensure_schema(self) -> None:
        self.db.executescript(_SCHEMA)

    def _tables(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def has_schema(self) -> bool:
        return "meta" in self._tables()

    def drop_all(self) -> None:
        with self._transaction():
            for table in ("meta", "files", "symbols", "refs", "ref_targets"):
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
        self.db.executescript(_SCHEMA)

    # ---- meta -----------------------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        if not self.has_schema():
            return {}
        row = self.db.execute("SELECT data FROM meta WHERE id = 0").fetchone()
        try:
            meta = json.loads(row[0]) if row else {}
        except ValueError:
            return {}
        return meta if isinstance(meta, dict) else {}

    def write_meta(self, meta: dict[str, Any], publish: bool = True) -> None:
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO meta (id, data) VALUES (0, ?)", (json.dumps(meta),))
            if publish:  # the counter outlives drop_all: a reader never sees an old number again after a rebuild
                self.db.execute("INSERT INTO generation (id, value) VALUES (0, 1) ON CONFLICT (id) DO UPDATE "
                                "SET value = value + 1")

    def generation(self) -> int:
        """One indexed read: a reader asks before each use of its shard."""
        try:
            row = self.db.execute("SELECT value FROM generation WHERE id = 0").fetchone()
        except sqlite3.OperationalError:  # no such table: no index written yet
            return 0
        return int(row[0]) if row else 0

    # ---- manifest -------------------------------------------------------------------------------
    def manifest(self) -> dict[str, ManifestEntry]:
        if not self.has_schema():
            return {}
        return {row[0]: ManifestEntry(*row) for row in self.db.execute(
            "SELECT path, sha256, language, chunks, symbols, status, reason FROM files")}

    def put_manifest(self, entries: Sequence[ManifestEntry]) -> None:
        with self._transaction():
            self.db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
                                [(e.path, e.sha256, e.language, e.chunks, e.symbols, e.status, e.reason) for e in entries])

    def delete_manifest(self, paths: Sequence[str]) -> None:
        with self._transaction():
            self.db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in paths])

    # ---- symbols --------------------------------------------------------------------------------
    def upsert_symbols(self, symbols: Sequence[Symbol]) -> None:
        with self._transaction():
            self.db.executemany(f"INSERT OR REPLACE INTO symbols VALUES ({', '.join('?' * (len(_SYMBOL_FIELDS) + 2))})",
                                [(*(getattr(s, f) for f in _SYMBOL_FIELDS), name_key(s.name), name_key(s.qualified_name))
                                 for s in symbols])

    def delete_symbols_in(self, paths: Sequence[str]) -> None:
        with self._transaction():
            self.db.executemany("DELETE FROM symbols WHERE path = ?", [(p,) for p in paths])

    def _symbols(self, where: str, values: Sequence[Any]) -> list[Symbol]:
        out: list[Symbol] = []
        for part in batches(list(values), 500):
            marks = ",".join("?" * len(part))
            out.extend(Symbol(*row) for row in self.db.execute(
                f"SELECT {', '.join(_SYMBOL_FIELDS)} FROM symbols WHERE {where.format(marks=marks)}",
                [*part] * where.count("{marks}")))
        return list({s.id: s for s in out}.values())

    def symbols_by_key(self, keys: Iterable[str]) -> list[Symbol]:
        return self._symbols("name_key IN ({marks}) OR qual_key IN ({marks})", list(dict.fromkeys(keys)))

    def symbols_by_ids(self, ids: Iterable[str]) -> list[Symbol]:
        return self._symbols("id IN ({marks})", list(dict.fromkeys(ids)))

    def symbols_in_files(self, paths: Iterable[str]) -> list[Symbol]:
        found = self._symbols("path IN ({marks})", list(dict.fromkeys(paths)))
        return sorted(found, key=lambda s: (s.path, s.start_line, s.id))

    def children_of(self, ids: Iterable[str]) -> list[Symbol]:
        return self._symbols("parent_id IN ({marks})", list(dict.fromkeys(ids)))

    def all_symbols(self) -> Iterator[Symbol]:
        for row in self.db.execute(f"SELECT {', '.join(_SYMBOL_FIELDS)} FROM symbols ORDER BY path, start_line, id"):
            yield Symbol(*row)

    # ---- references -----------------------------------------------------------------------------
    def replace_references(self, references: Sequence[Reference], paths: Collection[str] | None = None) -> tuple[int, int]:
        wanted = {reference_key(r): r for r in references}
        if paths is None:
            existing = {row[0] for row in self.db.execute("SELECT key FROM refs")}
        else:  # only these files' references are replaced
            existing = set()
            for part in batches(sorted(paths), 500):
                existing.update(row[0] for row in self.db.execute(
                    f"SELECT key FROM refs WHERE path IN ({','.join('?' * len(part))})", part))
        stale = sorted(k for k in existing if k not in wanted)
        new = sorted((k, r) for k, r in wanted.items() if k not in existing)
        stale_targets = []
        for part in batches(stale, 500):
            rows = self.db.execute(f"SELECT key, target_ids FROM refs WHERE key IN ({','.join('?' * len(part))})", part)
            stale_targets.extend((id_hash(t), key) for key, targets in rows for t in _targets(targets))
        with self._transaction():  # sorted by key: b-tree inserts in order are several times faster on a big graph
            self.db.executemany("DELETE FROM refs WHERE key = ?", [(k,) for k in stale])
            self.db.executemany("DELETE FROM ref_targets WHERE target = ? AND key = ?", stale_targets)
            self.db.executemany(f"INSERT INTO refs VALUES ({', '.join('?' * (len(_REF_FIELDS) + 2))})",
                                [(k, *(_ref_value(r, f) for f in _REF_FIELDS), id_hash(r.enclosing_symbol_id))
                                 for k, r in new])
            self.db.executemany("INSERT OR IGNORE INTO ref_targets VALUES (?, ?)",
                                sorted((id_hash(t), k) for k, r in new for t in r.target_ids))
        return len(new), len(stale)

    def _references(self, sql: str, ids: Sequence[str], keep) -> list[Reference]:
        out: dict[int, Reference] = {}
        wanted = set(ids)
        for part in batches(sorted({id_hash(i) for i in ids}), 500):
            marks = ",".join("?" * len(part))
            for row in self.db.execute(sql.format(marks=marks), list(part)):
                r = _reference(row[1:])
                if keep(r, wanted):  # the hash found it; the id itself decides
                    out[row[0]] = r
        return sorted(out.values(), key=lambda r: (r.path, r.line, r.column))

    def references_to(self, symbol_ids: Sequence[str]) -> list[Reference]:
        cols = ", ".join(f'r."{f}"' for f in _REF_FIELDS)
        return self._references(f"SELECT r.key, {cols} FROM ref_targets t JOIN refs r ON r.key = t.key "
                                "WHERE t.target IN ({marks})", symbol_ids,
                                lambda r, wanted: not wanted.isdisjoint(r.target_ids))

    def references_from(self, symbol_ids: Sequence[str]) -> list[Reference]:
        cols = ", ".join(f'"{f}"' for f in _REF_FIELDS)
        return self._references(f"SELECT key, {cols} FROM refs WHERE enclosing IN ({{marks}})", symbol_ids,
                                lambda r, wanted: r.enclosing_symbol_id in wanted)

    def all_references(self) -> Iterator[Reference]:
        cols = ", ".join(f'"{f}"' for f in _REF_FIELDS)
        for row in self.db.execute(f"SELECT {cols} FROM refs ORDER BY path, line, \"column\""):
            yield _reference(row)


def id_hash(symbol_id: str | None) -> int | None:
    """A symbol id as a signed 64-bit integer: the graph's indexes hold these, a fraction of the ids' size."""
    if symbol_id is None:
        return None
    return int.from_bytes(hashlib.blake2b(symbol_id.encode("utf-8", "surrogateescape"), digest_size=8).digest(),
                          "little", signed=True)


def _targets(raw: str | None) -> list[str]:
    try:
        targets = json.loads(raw or "[]")
    except ValueError:
        return []
    return [str(t) for t in targets] if isinstance(targets, list) else []


def _ref_value(r: Reference, field: str) -> Any:
    return json.dumps(list(r.target_ids)) if field == "target_ids" else getattr(r, field)


def _reference(row: Sequence[Any]) -> Reference:
    values = dict(zip(_REF_FIELDS, row))
    values["target_ids"] = tuple(_targets(values["target_ids"]))
    return Reference(**values)

