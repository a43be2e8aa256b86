"""The graph, manifest and meta of an embedded index, in SQLite (<index-dir>/graph.sqlite).

Symbols and references are looked up through B-tree indexes (by name key, id, path, parent, target,
enclosing symbol), so a command reads only the rows its question needs: opening the index costs the
same at 100 files as at 100,000. Rows hold plain values (text, integers), nothing that runs when read.
WAL mode: readers in other processes go on while a writer commits.

Symbol ids and paths are long (`lib/pkg/module.py#Class.method@120`) and each recurs in many rows
(a symbol's children, every reference made in or to it), so each is stored once, in `names`, and
rows hold its number: a big project's graph is less than half the size it is with the text in every
row. `names` keeps only what some row uses (pruned after each replace_references).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator, Sequence

from ..errors import IndexMismatchError, StoreError
from ..plain_sqlite import connect_untrusted
from ..types import Reference, Symbol, name_key
from .rows import INDEX_FORMAT, ManifestEntry, batches, reference_key

SCHEMA_VERSION = INDEX_FORMAT  # another version: rebuilt by an index run (create=True), refused by readers
_SYMBOL_PLAIN = ("name", "qualified_name", "kind", "language")  # stored as they are
_REF_PLAIN = ("name", "line", "column", "kind", "confidence", "line_text", "receiver", "module", "alias", "assigned")
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 0), data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS generation (id INTEGER PRIMARY KEY CHECK (id = 0), value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, sha256 TEXT, language TEXT, chunks INTEGER, symbols INTEGER,
                                  status TEXT, reason TEXT, embedded INTEGER);
CREATE TABLE IF NOT EXISTS names (n INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS symbols (n INTEGER PRIMARY KEY, {", ".join(_SYMBOL_PLAIN)}, path INTEGER, start_line INTEGER,
                                    end_line INTEGER, signature TEXT, docstring TEXT, parent INTEGER, name_key TEXT,
                                    qual_key TEXT);
CREATE INDEX IF NOT EXISTS symbols_name_key ON symbols (name_key);
CREATE INDEX IF NOT EXISTS symbols_qual_key ON symbols (qual_key);
CREATE INDEX IF NOT EXISTS symbols_path ON symbols (path);
CREATE INDEX IF NOT EXISTS symbols_parent ON symbols (parent);
CREATE TABLE IF NOT EXISTS refs (key INTEGER PRIMARY KEY, path INTEGER, enclosing INTEGER, targets TEXT,
                                 {", ".join(f'"{f}"' for f in _REF_PLAIN)});
CREATE INDEX IF NOT EXISTS refs_enclosing ON refs (enclosing);
CREATE TABLE IF NOT EXISTS ref_targets (target INTEGER NOT NULL, key INTEGER NOT NULL, PRIMARY KEY (target, key))
    WITHOUT ROWID;
PRAGMA user_version = {SCHEMA_VERSION};
"""
# stage_references' rows: temporary tables (SQLite's temp file, gone with the connection), so the
# index file never grows by what a big run staged (site-packages: ~420 MB of free pages otherwise)
_STAGED = f"""
CREATE TEMP TABLE IF NOT EXISTS refs_staged (key INTEGER NOT NULL, path INTEGER, enclosing INTEGER, targets TEXT,
                                             {", ".join(f'"{f}"' for f in _REF_PLAIN)});
CREATE TEMP TABLE IF NOT EXISTS ref_targets_staged (target INTEGER NOT NULL, key INTEGER NOT NULL);
"""
# A Symbol per row, its id, path and parent's id read from `names` (a row whose names are missing is left out)
_SYMBOL_READ = (f"SELECT i.text, {', '.join(f's.{f}' for f in _SYMBOL_PLAIN)}, p.text, s.start_line, s.end_line, "
                "s.signature, s.docstring, q.text FROM symbols s JOIN names i ON i.n = s.n JOIN names p ON p.n = s.path "
                "LEFT JOIN names q ON q.n = s.parent")
# refs' columns in Reference's field order (after the key), so that a row builds one directly
_REF_COLS = ", ".join(("key", '"name"', "path", '"line"', '"column"', '"kind"', "enclosing", "targets", '"confidence"',
                       '"line_text"', '"receiver"', '"module"', '"alias"', '"assigned"'))
_SYMBOL_ROW = ", ".join("?" * (len(_SYMBOL_PLAIN) + 9))  # symbols' placeholders
_REF_ROW = ", ".join("?" * (len(_REF_PLAIN) + 4))
# What `names` must keep: every number some row holds (ref_targets lists each number in refs.targets).
_PRUNE_NAMES = """DELETE FROM names WHERE n NOT IN (SELECT n FROM symbols) AND n NOT IN (SELECT path FROM symbols)
    AND n NOT IN (SELECT parent FROM symbols WHERE parent IS NOT NULL) AND n NOT IN (SELECT path FROM refs)
    AND n NOT IN (SELECT enclosing FROM refs WHERE enclosing IS NOT NULL) AND n NOT IN (SELECT target FROM ref_targets)"""


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
        db = connect_untrusted(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA cache_size=-65536")  # 64 MB: a big project's reference writes stay in memory
        return db

    def close(self) -> None:
        self.db.close()

    def ensure_schema(self) -> None:
        """The tables, and none of the references staged so far."""
        self.db.executescript(_SCHEMA)
        self.db.executescript(_STAGED)
        with self._transaction():
            self.db.execute("DELETE FROM refs_staged")
            self.db.execute("DELETE FROM ref_targets_staged")

    def _tables(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def has_schema(self) -> bool:
        return "meta" in self._tables()

    def drop_all(self) -> None:
        with self._transaction():
            for table in ("meta", "files", "symbols", "refs", "ref_targets", "names"):
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
        return {row[0]: ManifestEntry(*row[:-1], embedded=bool(row[-1])) for row in self.db.execute(
            "SELECT path, sha256, language, chunks, symbols, status, reason, embedded FROM files")}

    def put_manifest(self, entries: Sequence[ManifestEntry]) -> None:
        with self._transaction():
            self.db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                [(e.path, e.sha256, e.language, e.chunks, e.symbols, e.status, e.reason, int(e.embedded))
                                 for e in entries])

    def delete_manifest(self, paths: Sequence[str]) -> None:
        with self._transaction():
            self.db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in paths])

    # ---- names: each symbol id and path once ----------------------------------------------------
    def _intern(self, texts: Iterable[str | None]) -> dict[str, int]:
        """The number of each text, adding the new ones (inside the caller's transaction)."""
        wanted = sorted({t for t in texts if t is not None})
        self.db.executemany("INSERT OR IGNORE INTO names (text) VALUES (?)", [(t,) for t in wanted])
        return self._numbers(wanted)

    def _numbers(self, texts: Iterable[str]) -> dict[str, int]:
        """The number of each text that has one (unknown texts are left out)."""
        out: dict[str, int] = {}
        for part in batches(list(dict.fromkeys(texts)), 500):
            out.update(self.db.execute(f"SELECT text, n FROM names WHERE text IN ({','.join('?' * len(part))})", part))
        return out

    def _texts(self, numbers: Iterable[int | None]) -> dict[int, str]:
        out: dict[int, str] = {}
        for part in batches(sorted({n for n in numbers if isinstance(n, int)}), 500):
            out.update(self.db.execute(f"SELECT n, text FROM names WHERE n IN ({','.join('?' * len(part))})", part))
        return out

    def _all_texts(self) -> dict[int, str]:
        return dict(self.db.execute("SELECT n, text FROM names"))

    # ---- symbols --------------------------------------------------------------------------------
    def upsert_symbols(self, symbols: Sequence[Symbol]) -> None:
        with self._transaction():
            num = self._intern(t for s in symbols for t in (s.id, s.path, s.parent_id))
            self.db.executemany(f"INSERT OR REPLACE INTO symbols VALUES ({_SYMBOL_ROW})",
                                [(num[s.id], *(getattr(s, f) for f in _SYMBOL_PLAIN), num[s.path], s.start_line,
                                  s.end_line, s.signature, s.docstring, num[s.parent_id] if s.parent_id is not None else None,
                                  name_key(s.name), name_key(s.qualified_name)) for s in symbols])

    def delete_symbols_in(self, paths: Sequence[str]) -> None:
        with self._transaction():
            self.db.executemany("DELETE FROM symbols WHERE path = ?", [(n,) for n in self._numbers(paths).values()])

    def _symbols(self, where: str, values: Sequence[Any]) -> list[Symbol]:
        rows: list[tuple] = []
        for part in batches(list(values), 500):
            marks = ",".join("?" * len(part))
            rows.extend(self.db.execute(f"{_SYMBOL_READ} WHERE {where.format(marks=marks)}",
                                        [*part] * where.count("{marks}")))
        return list({s.id: s for s in (Symbol(*row) for row in rows)}.values())

    def symbols_by_key(self, keys: Iterable[str]) -> list[Symbol]:
        return self._symbols("s.name_key IN ({marks}) OR s.qual_key IN ({marks})", list(dict.fromkeys(keys)))

    def symbols_by_ids(self, ids: Iterable[str]) -> list[Symbol]:
        return self._symbols("s.n IN ({marks})", list(self._numbers(ids).values()))

    def symbols_in_files(self, paths: Iterable[str]) -> list[Symbol]:
        found = self._symbols("s.path IN ({marks})", list(self._numbers(paths).values()))
        return sorted(found, key=lambda s: (s.path, s.start_line, s.id))

    def children_of(self, ids: Iterable[str]) -> list[Symbol]:
        return self._symbols("s.parent IN ({marks})", list(self._numbers(ids).values()))

    def all_symbols(self) -> Iterator[Symbol]:
        yield from sorted((Symbol(*row) for row in self.db.execute(_SYMBOL_READ)), key=lambda s: (s.path, s.start_line, s.id))

    # ---- references -----------------------------------------------------------------------------
    def stage_references(self, references: Iterable[Reference]) -> None:
        """Rows of the next replace_references, written now: a big project's references are staged file by
        file as they are resolved and never sit in memory all together (site-packages: 2.4M, ~1 GB).
        Staged rows live in this connection's temporary tables: no reader sees them, and a killed run's
        are gone with it."""
        refs = list(references)
        if not refs:
            return
        self.db.executescript(_STAGED)
        with self._transaction():
            num = self._intern(t for r in refs for t in (r.path, r.enclosing_symbol_id, *r.target_ids))
            keys = [reference_key(r) for r in refs]
            self.db.executemany(f"INSERT INTO refs_staged VALUES ({_REF_ROW})",
                                ((k, num[r.path], num[r.enclosing_symbol_id] if r.enclosing_symbol_id is not None else None,
                                  ",".join(str(num[t]) for t in r.target_ids), *(getattr(r, f) for f in _REF_PLAIN))
                                 for k, r in zip(keys, refs)))
            self.db.executemany("INSERT INTO ref_targets_staged VALUES (?, ?)",
                                ((num[t], k) for k, r in zip(keys, refs) for t in r.target_ids))

    def replace_references(self, references: Iterable[Reference], paths: Collection[str] | None = None) -> tuple[int, int]:
        """The stored references (of `paths`, or all) become the staged ones plus `references`; only the
        difference is written, in key order (b-tree inserts in order are several times faster on a big
        graph), sorted by SQLite, not in memory."""
        for part in batches(list(references), 10_000):
            self.stage_references(part)
        db = self.db
        db.executescript(_STAGED)
        if paths is None:
            existing = "SELECT key FROM refs"
        else:  # only these files' references are replaced (rows hold a path's number in `names`)
            db.execute("CREATE TEMP TABLE IF NOT EXISTS replaced_paths (n INTEGER PRIMARY KEY)")
            db.execute("DELETE FROM replaced_paths")
            db.executemany("INSERT OR IGNORE INTO replaced_paths VALUES (?)", [(n,) for n in self._numbers(paths).values()])
            existing = "SELECT key FROM refs WHERE path IN (SELECT n FROM replaced_paths)"
        stale = sorted(row[0] for row in db.execute(f"{existing} EXCEPT SELECT key FROM refs_staged"))
        stale_targets = []
        for part in batches(stale, 500):
            rows = db.execute(f"SELECT key, targets FROM refs WHERE key IN ({','.join('?' * len(part))})", part)
            stale_targets.extend((t, key) for key, targets in rows for t in _numbers_of(targets))
        with self._transaction():
            db.executemany("DELETE FROM refs WHERE key = ?", [(k,) for k in stale])
            db.executemany("DELETE FROM ref_targets WHERE target = ? AND key = ?", stale_targets)
            db.execute("INSERT OR IGNORE INTO ref_targets SELECT target, key FROM ref_targets_staged "
                       "WHERE key NOT IN (SELECT key FROM refs) ORDER BY target, key")
            # the rows inserted are the references added (a key staged twice is inserted once): counting
            # them apart took up to 15 s of a big run's end (site-packages, 2.2M)
            added = db.execute("INSERT OR IGNORE INTO refs SELECT * FROM refs_staged WHERE key NOT IN "
                               "(SELECT key FROM refs) ORDER BY key").rowcount
            db.execute("DELETE FROM refs_staged")
            db.execute("DELETE FROM ref_targets_staged")
            if stale or added:  # ~0.2 s on 180k references; a run that changed nothing skips it
                db.execute(_PRUNE_NAMES)
        return added, len(stale)

    def _references(self, sql: str, ids: Sequence[str]) -> list[Reference]:
        rows: list[tuple] = []
        for part in batches(sorted(self._numbers(ids).values()), 500):
            rows.extend(self.db.execute(sql.format(marks=",".join("?" * len(part))), part))
        # each distinct target list decoded once: the sites of a common name share theirs (Tensor: 56k sites)
        numbers = {raw: _numbers_of(raw) for raw in {row[7] for row in rows}}
        texts = self._texts([*(n for row in rows for n in (row[2], row[6])), *(n for ns in numbers.values() for n in ns)])
        targets = {raw: tuple(texts[t] for t in ns if t in texts) for raw, ns in numbers.items()}
        found = {row[0]: _reference(row, texts, targets[row[7]]) for row in rows}
        return sorted((r for r in found.values() if r is not None), key=lambda r: (r.path, r.line, r.column))

    def references_to(self, symbol_ids: Sequence[str]) -> list[Reference]:
        # a subquery, not a join: a join gives one row per matched target, and a call of an overloaded
        # name targets every overload (SQLAlchemy's `select`: 12 rows a site, read and decoded 12 times)
        return self._references(f"SELECT {_REF_COLS} FROM refs WHERE key IN "
                                "(SELECT key FROM ref_targets WHERE target IN ({marks}))", symbol_ids)

    def references_from(self, symbol_ids: Sequence[str]) -> list[Reference]:
        return self._references(f"SELECT {_REF_COLS} FROM refs WHERE enclosing IN ({{marks}})", symbol_ids)

    def all_references(self) -> Iterator[Reference]:
        texts = self._all_texts()
        found = (_reference(row, texts, tuple(texts[t] for t in _numbers_of(row[7]) if t in texts))
                 for row in self.db.execute(f"SELECT {_REF_COLS} FROM refs"))
        yield from sorted((r for r in found if r is not None), key=lambda r: (r.path, r.line, r.column))


def _numbers_of(raw: Any) -> list[int]:
    """refs.targets ("12,345") as numbers; anything else as none."""
    if not isinstance(raw, str) or not raw:
        return []
    try:
        return [int(n) for n in raw.split(",")]
    except ValueError:
        return []


def _reference(row: Sequence[Any], texts: dict[int, str], target_ids: tuple[str, ...]) -> Reference | None:
    """A refs row (_REF_COLS) with its targets' ids as a Reference; None when its path has no name (a damaged file)."""
    _, name, path, line, column, kind, enclosing, _, *rest = row
    path_text = texts.get(path)
    if path_text is None:
        return None
    return Reference(name, path_text, line, column, kind, texts.get(enclosing) if enclosing is not None else None,
                     target_ids, *rest)
