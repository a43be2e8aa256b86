"""Opening an SQLite file that holds plain data only (the parse cache, the graph state): a file that is not a
database, is damaged, or holds anything besides the expected tables (a trigger, a view, another layout) is
not ours, and is started over. Nothing in it runs: `trusted_schema` is off."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Sequence

# (type, name, sql) rows of sqlite_master, in creation order; sql is None for automatic indexes
Schema = Sequence[tuple[str, str, str | None]]


def open_plain_sqlite(path: Path, schema: Schema) -> sqlite3.Connection:
    """A connection to `path` holding exactly `schema` (created when missing). A file that cannot be made
    so is removed and created again; when even that fails (the name is a folder), the data lives in memory
    for this process only."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _open(str(path), schema)
    except sqlite3.DatabaseError:  # not a database, a damaged one or another layout: start over
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            except OSError:
                pass
        try:
            return _open(str(path), schema)
        except sqlite3.DatabaseError:
            return _open(":memory:", schema)


def connect_untrusted(name: str, **options) -> sqlite3.Connection:
    """sqlite3.connect for a file codeqa did not necessarily write itself (an index folder can be copied or
    planted): `trusted_schema` is off, so a trigger or a view the file holds cannot call the functions an
    application registers. Every SQLite file codeqa opens goes through here (tests/test_architecture.py)."""
    db = sqlite3.connect(name, **options)
    db.execute("PRAGMA trusted_schema=OFF")
    return db


def _open(name: str, schema: Schema) -> sqlite3.Connection:
    db = connect_untrusted(name, timeout=30.0)
    try:
        db.execute("PRAGMA journal_mode=WAL")  # readers in other processes go on while a run writes
        db.execute("PRAGMA synchronous=NORMAL")
        for _, _, sql in schema:
            if sql:
                db.execute(sql.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
        db.commit()
        if db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY rowid").fetchall() != list(schema):
            raise sqlite3.DatabaseError("unexpected schema")
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


__all__ = ["open_plain_sqlite", "connect_untrusted", "Schema"]
