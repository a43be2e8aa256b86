"""The graph, manifest and meta of an embedded index, in SQLite (<index-dir>/graph.sqlite).

Symbols and references are looked up through B-tree indexes (by name key, id, path, parent, target,
enclosing symbol), so a command reads only the rows its question needs: opening the index costs the
same at 100 files as at 100,000. Rows hold plain values (text, integers, JSON lists), nothing that
runs when read. WAL mode: readers in other processes go on while a writer commits.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ..errors import StoreError
from ..types import Reference, Symbol, name_key
from . import ManifestEntry, batches, reference_key

SCHEMA_VERSION = 1
_SYMBOL_FIELDS = ("id", "name", "qualified_name", "kind", "language", "path", "start_line", "end_line", "signature",
                  "docstring", "parent_id")
_REF_FIELDS = ("name", "path", "line", "column", "kind", "enclosing_symbol_id", "target_ids", "confidence", "line_text",
               "receiver", "module", "alias", "assigned")
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 0), generation INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, sha256 TEXT, language TEXT, chunks INTEGER, symbols INTEGER,
                                  status TEXT, reason TEXT);
CREATE TABLE IF NOT EXISTS symbols ({", ".join(f + (" TEXT PRIMARY KEY" if f == "id" else "") for f in _SYMBOL_FIELDS)},
                                    name_key TEXT, qual_key TEXT);
CREATE INDEX IF NOT EXISTS symbols_name_key ON symbols (name_key);
CREATE INDEX IF NOT EXISTS symbols_qual_key ON symbols (qual_key);
CREATE INDEX IF NOT EXISTS symbols_path ON symbols (path);
CREATE INDEX IF NOT EXISTS symbols_parent ON symbols (parent_id);
CREATE TABLE IF NOT EXISTS refs (key INTEGER PRIMARY KEY, {", ".join(f'"{f}"' for f in _REF_FIELDS)});
CREATE INDEX IF NOT EXISTS refs_enclosing ON refs (enclosing_symbol_id);
CREATE TABLE IF NOT EXISTS ref_targets (target TEXT NOT NULL, key INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS ref_targets_target ON ref_targets (target);
CREATE INDEX IF NOT EXISTS ref_targets_key ON ref_targets (key);
PRAGMA user_version = {SCHEMA_VERSION};
"""


class GraphDB:
    """One SQLite file; every method commits what it writes before returning."""

    def __init__(self, path: Path, create: bool):
        self.path = Path(path)
        try:
            self.db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise StoreError(f"{self.path} was written by another codeqa version (graph schema {version}); "
                                 f"run `codeqa index` with --full to rebuild it.")
            if create:
                self.ensure_schema()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a readable codeqa graph ({exc}); delete the index folder "
                             f"{self.path.parent} and run `codeqa index` again.") from None

    def close(self) -> None:
        self.db.close()

    def ensure_schema(self) -> None:
        self.db.executescript(_SCHEMA)

    def _tables(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def has_schema(self) -> bool:
        return "meta" in self._tables()

    def drop_all(self) -> None:
        with self.db:
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

    def write_meta(self, meta: dict[str, Any]) -> None:
        with self.db:
            self.db.execute("INSERT INTO meta (id, generation, data) VALUES (0, 1, ?) ON CONFLICT (id) DO UPDATE "
                            "SET generation = generation + 1, data = excluded.data", (json.dumps(meta),))

    def generation(self) -> int:
        if not self.has_schema():
            return 0
        row = self.db.execute("SELECT generation FROM meta WHERE id = 0").fetchone()
        return int(row[0]) if row else 0

    # ---- manifest -------------------------------------------------------------------------------
    def manifest(self) -> dict[str, ManifestEntry]:
        if not self.has_schema():
            return {}
        return {row[0]: ManifestEntry(*row) for row in self.db.execute(
            "SELECT path, sha256, language, chunks, symbols, status, reason FROM files")}

    def put_manifest(self, entries: Sequence[ManifestEntry]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
                                [(e.path, e.sha256, e.language, e.chunks, e.symbols, e.status, e.reason) for e in entries])

    def delete_manifest(self, paths: Sequence[str]) -> None:
        with self.db:
            self.db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in paths])

    # ---- symbols --------------------------------------------------------------------------------
    def upsert_symbols(self, symbols: Sequence[Symbol]) -> None:
        with self.db:
            self.db.executemany(f"INSERT OR REPLACE INTO symbols VALUES ({', '.join('?' * (len(_SYMBOL_FIELDS) + 2))})",
                                [(*(getattr(s, f) for f in _SYMBOL_FIELDS), name_key(s.name), name_key(s.qualified_name))
                                 for s in symbols])

    def delete_symbols_in(self, paths: Sequence[str]) -> None:
        with self.db:
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

    def count(self, table: str) -> int:
        return self.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] if self.has_schema() else 0

    # ---- references -----------------------------------------------------------------------------
    def replace_references(self, references: Sequence[Reference]) -> tuple[int, int]:
        wanted = {reference_key(r): r for r in references}
        existing = {row[0] for row in self.db.execute("SELECT key FROM refs")}
        stale = [k for k in existing if k not in wanted]
        new = [(k, r) for k, r in wanted.items() if k not in existing]
        with self.db:
            self.db.executemany("DELETE FROM refs WHERE key = ?", [(k,) for k in stale])
            self.db.executemany("DELETE FROM ref_targets WHERE key = ?", [(k,) for k in stale])
            self.db.executemany(f"INSERT INTO refs VALUES ({', '.join('?' * (len(_REF_FIELDS) + 1))})",
                                [(k, *(_ref_value(r, f) for f in _REF_FIELDS)) for k, r in new])
            self.db.executemany("INSERT INTO ref_targets VALUES (?, ?)", [(t, k) for k, r in new for t in r.target_ids])
        return len(new), len(stale)

    def _references(self, sql: str, values: Sequence[Any]) -> list[Reference]:
        out: dict[int, Reference] = {}
        for part in batches(list(values), 500):
            marks = ",".join("?" * len(part))
            for row in self.db.execute(sql.format(marks=marks), list(part)):
                out[row[0]] = _reference(row[1:])
        return sorted(out.values(), key=lambda r: (r.path, r.line, r.column))

    def references_to(self, symbol_ids: Sequence[str]) -> list[Reference]:
        cols = ", ".join(f'r."{f}"' for f in _REF_FIELDS)
        return self._references(f"SELECT r.key, {cols} FROM ref_targets t JOIN refs r ON r.key = t.key "
                                "WHERE t.target IN ({marks})", list(dict.fromkeys(symbol_ids)))

    def references_from(self, symbol_ids: Sequence[str]) -> list[Reference]:
        cols = ", ".join(f'"{f}"' for f in _REF_FIELDS)
        return self._references(f"SELECT key, {cols} FROM refs WHERE enclosing_symbol_id IN ({{marks}})",
                                list(dict.fromkeys(symbol_ids)))

    def all_references(self) -> Iterator[Reference]:
        cols = ", ".join(f'"{f}"' for f in _REF_FIELDS)
        for row in self.db.execute(f"SELECT {cols} FROM refs ORDER BY path, line, \"column\""):
            yield _reference(row)


def _ref_value(r: Reference, field: str) -> Any:
    return json.dumps(list(r.target_ids)) if field == "target_ids" else getattr(r, field)


def _reference(row: Sequence[Any]) -> Reference:
    values = dict(zip(_REF_FIELDS, row))
    try:
        targets = json.loads(values["target_ids"] or "[]")
    except ValueError:
        targets = []
    values["target_ids"] = tuple(str(t) for t in targets) if isinstance(targets, list) else ()
    return Reference(**values)

