"""The parse cache: each file's ParsedFile as plain JSON in <index-dir>/parsed.sqlite.

An index folder may come from elsewhere (a repository can ship a crafted one), so nothing read from
it may run code when loaded: no pickle, no eval. An entry is JSON, read with json.loads only, and
checked field by field against the dataclasses before anything is built from it. An entry that does
not fit exactly (another format version, a changed field list, a wrong type, a corrupt database)
is a miss, never an error: the file is parsed again.

Symbols and references are stored field by field, one list of values per dataclass field in field
order, under a header naming those fields, so that a field added or renamed in types.py invalidates
old entries instead of shifting values. Their `path` is no column: it is the file's, stored once.
The file's absolute path is not stored: the caller passes the SourceFile it has. The language the
file was parsed in is: a parse may find another than the extension's (an Objective-C header named .h
is C's by its extension: languages.py `written_as`), and resolution reads the parse's.

An entry is two parts in two columns: `data` (the header, the symbols and the references that
resolving other files reads) and `rest` (the other references, where the first ones go among them,
and a header of its own). An incremental run reads every file's `data` and the `rest` of the few
files it resolves again: on SQLAlchemy (939 files, 178k references) that is a third of the bytes to
inflate and parse. A run that holds a file's `data` decoded already reads only its `rest`, which
names the file, its format and its fields too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zlib
import sqlite3
from collections.abc import Mapping, Sequence
from itertools import chain, repeat
from operator import attrgetter
from pathlib import Path

from ..languages import language_by_name
from ..plain_sqlite import open_plain_sqlite
from ..types import ParsedFile, Reference, SourceFile, Symbol

# 2: no "partial" flag (a ParsedFile with an error is partial); 3: two parts (data, rest); 4: no path
# column, the positions of the first part's references in the `rest` part, which has a header of its own;
# 5: the language the file was parsed in
FORMAT_VERSION = 5
_BATCH = 500  # keys per SELECT/DELETE: well under SQLite's bound-parameter limit
_NONE = type(None)
# What each annotation in Symbol/Reference may hold in JSON. A field of a type not listed here fails
# at import, so that adding one means deciding how it is checked.
_ALLOWED = {"str": {str}, "int": {int}, "str | None": {str, _NONE}, "tuple[str, ...]": {list}}


@dataclasses.dataclass(frozen=True)
class _Spec:
    """How instances of `cls` are stored: a column per field but `path` (the file's, at `path_at`
    among the constructor's arguments), the JSON types each column may hold, and which columns hold
    tuple[str, ...] values (JSON lists)."""

    cls: type
    fields: list[str]
    allowed: list[set[type]]
    tuples: list[int]
    path_at: int


def _spec(cls: type) -> _Spec:
    fields = dataclasses.fields(cls)
    path_at = [f.name for f in fields].index("path")
    stored = [f for f in fields if f.name != "path"]
    return _Spec(cls, [f.name for f in stored], [_ALLOWED[str(f.type)] for f in stored],
                 [i for i, f in enumerate(stored) if f.type == "tuple[str, ...]"], path_at)


_SYMBOLS = _spec(Symbol)
_REFERENCES = _spec(Reference)
_SCHEMA = [("table", "parsed", "CREATE TABLE parsed (key TEXT PRIMARY KEY, data BLOB, rest BLOB)"),
           ("index", "sqlite_autoindex_parsed_1", None)]
_KEYS = {"v", "symbol_fields", "reference_fields", "path", "sha256", "language", "error", "symbols",
         "table_references"}
_REST_KEYS = {"v", "reference_fields", "path", "sha256", "table_positions", "references", "rest"}
_SEPARATOR = b"\n"  # between the two parts of an encoded entry (compact JSON escapes every newline)


MAX_ENTRY_BYTES = 256 * 1024 * 1024
# References of these kinds are read by the resolution of other files (graph/resolve.py's tables:
# imports, base classes); so are references carrying type evidence (Reference.assigned).
TABLE_REFERENCE_KINDS = frozenset({"import", "inheritance"})


def _read_by_others(r: Reference) -> bool:
    return bool(r.assigned) or r.kind in TABLE_REFERENCE_KINDS


def table_only(pf: ParsedFile) -> ParsedFile:
    """A parse cut to what resolving other files reads: its symbols, and the references that
    get_many(all_references=False) keeps (TABLE_REFERENCE_KINDS, type evidence)."""
    return ParsedFile(pf.file, pf.symbols, tuple(filter(_read_by_others, pf.references)), pf.error)


def encode_parsed(parsed: ParsedFile) -> bytes:
    """`parsed` as compact JSON (without the file's absolute path): the `data` part, a newline, the `rest`
    part. Its symbols and references are the file's (their `path` is `parsed.file.path`)."""
    table = [i for i, r in enumerate(parsed.references) if _read_by_others(r)]
    chosen = set(table)
    head = json.dumps({
        "v": FORMAT_VERSION, "symbol_fields": _SYMBOLS.fields, "reference_fields": _REFERENCES.fields,
        "path": parsed.file.path, "sha256": parsed.file.sha256, "language": parsed.file.language, "error": parsed.error,
        "symbols": _columns(parsed.symbols, _SYMBOLS.fields),
        "table_references": _columns([parsed.references[i] for i in table], _REFERENCES.fields),
    }, separators=(",", ":")).encode("ascii")  # escaped: a lone surrogate in a string round-trips too
    rest = json.dumps({
        "v": FORMAT_VERSION, "reference_fields": _REFERENCES.fields, "path": parsed.file.path,
        "sha256": parsed.file.sha256, "table_positions": table, "references": len(parsed.references),
        "rest": _columns([r for i, r in enumerate(parsed.references) if i not in chosen], _REFERENCES.fields),
    }, separators=(",", ":")).encode("ascii")
    return head + _SEPARATOR + rest


def _columns(objs: Sequence[object], names: list[str]) -> list[list]:
    # one list per field rather than one per object: reading then checks each field's values in one
    # C loop and builds the objects without transposing (a third of the time for a big project)
    return [list(map(attrgetter(name), objs)) for name in names]


def _inflate(data: object) -> bytes | None:
    """A row's bytes as stored (zlib: a big project's parses take a fifth of the space), None when they
    are not that, or would inflate past MAX_ENTRY_BYTES (a crafted row cannot exhaust memory)."""
    if not isinstance(data, (bytes, bytearray)):
        return None
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, MAX_ENTRY_BYTES)
    except zlib.error:
        return None
    return out if inflater.eof and not inflater.unconsumed_tail else None


def decode_parsed(blob: bytes, file: SourceFile, all_references: bool = True,
                  strings: dict | None = None, known: ParsedFile | None = None) -> ParsedFile | None:
    """The ParsedFile encoded in `blob` (encode_parsed's bytes, or only its `data` part when
    `all_references` is False), for `file`; None when `blob` is anything but an entry of this format
    for this file. Never raises. With `all_references` False, its references are only those that
    resolving other files reads (TABLE_REFERENCE_KINDS, and those carrying type evidence): a file
    whose own references are not resolved again costs a third of the objects. `strings`: equal strings
    decoded before (str -> itself), so that equal values share one object (JSON makes a new string per
    value: the kind of every reference, its scope, its name); filled as it goes. `known`: this entry's
    `data` part decoded before (all_references=False), whose symbols and references are taken as they
    are, so that only the `rest` is read (resolution completes the parses it holds cut: on site-packages
    that left 0.5M symbols and 2.4M references it decoded a second time); `blob` may then be the
    `rest` part alone, after an empty `data` part. The ParsedFile's file is `file`, in the language it
    was parsed in: `file`'s own, or one its registry row's `written_as` names (any other is a miss)."""
    if not isinstance(blob, (bytes, bytearray)):  # SQLite hands back whatever type a crafted row holds
        return None
    head, _, rest = bytes(blob).partition(_SEPARATOR)
    strings = {} if strings is None else strings
    path = strings.setdefault(file.path, file.path)
    if all_references and _same_file(known, file):
        symbols, table, error = known.symbols, known.references, known.error  # _merge checks that they fit the positions
        language = known.file.language
    else:
        data = _loads(head)
        if (type(data) is not dict or data.keys() != _KEYS or type(data["v"]) is not int or data["v"] != FORMAT_VERSION
                or data["symbol_fields"] != _SYMBOLS.fields or data["reference_fields"] != _REFERENCES.fields
                or data["path"] != file.path or data["sha256"] != file.sha256 or type(data["error"]) not in (str, _NONE)
                or not _parsed_as(file, data["language"])):
            return None
        language = data["language"]
        symbols = _build(_SYMBOLS, data["symbols"], strings, path)
        table = _build(_REFERENCES, data["table_references"], strings, path)
        error = data["error"]
        if symbols is None or table is None:
            return None
    if all_references:
        others = _loads(rest)
        if (type(others) is not dict or others.keys() != _REST_KEYS or type(others["v"]) is not int
                or others["v"] != FORMAT_VERSION or others["reference_fields"] != _REFERENCES.fields
                or others["path"] != file.path or others["sha256"] != file.sha256 or type(others["references"]) is not int):
            return None
        references = _merge(table, others["table_positions"], others["rest"], others["references"], strings, path)
        if references is None:
            return None
    else:
        references = table
    if language != file.language:
        file = dataclasses.replace(file, language=language)
    return ParsedFile(file, symbols, references, error=error)


def _parsed_as(file: SourceFile, language: object) -> bool:
    """Whether a parse of `file` may be in `language`: its own, or one its row is also written in."""
    return language == file.language or (
        file.language is not None and any(language == other for other, _ in language_by_name(file.language).written_as))


def _same_file(parsed: ParsedFile | None, file: SourceFile) -> bool:
    """Whether `parsed` is a parse of `file` as it is now (its path and content)."""
    return parsed is not None and (parsed.file.path, parsed.file.sha256) == (file.path, file.sha256)


def _loads(text: bytes) -> object:
    """JSON, or None where it is not (not UTF-8, malformed, or nested too deep)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _merge(table: tuple, positions: object, rest_columns: object, count: int, strings: dict, path: str) -> tuple | None:
    """The references in their parse order again: `table` at `positions`, the `rest` in the other places."""
    rest = _build(_REFERENCES, rest_columns, strings, path)
    if (rest is None or type(positions) is not list or not set(map(type, positions)) <= {int}
            or len(positions) != len(table) or len(table) + len(rest) != count
            or positions != sorted(set(positions)) or (positions and not 0 <= positions[0] <= positions[-1] < count)):
        return None
    out: list = [None] * count
    for i, r in zip(positions, table):
        out[i] = r
    others = iter(rest)
    return tuple(r if r is not None else next(others) for r in out)


def _build(spec: _Spec, columns: object, strings: dict, path: str) -> tuple | None:
    """Instances of `spec.cls` from one column per stored field and the file's `path`, or None when a
    value does not fit. The checks run over sets of types (C loops, no Python code per value): the
    cache of a big project holds hundreds of thousands of references and is read on every run."""
    allowed = spec.allowed
    if type(columns) is not list or len(columns) != len(allowed) or not set(map(type, columns)) <= {list}:
        return None
    if len(set(map(len, columns))) != 1:  # every column as long as the others
        return None
    if not all(set(map(type, column)) <= types for column, types in zip(columns, allowed)):
        return None
    columns = [list(map(strings.setdefault, column, column)) if str in types else column  # one object per value
               for column, types in zip(columns, allowed)]
    for i in spec.tuples:
        if not set(map(type, chain.from_iterable(columns[i]))) <= {str}:
            return None
        columns[i] = map(tuple, columns[i])
    columns.insert(spec.path_at, repeat(path))
    return tuple(map(spec.cls, *columns))


class ParseCache:
    """Encoded ParsedFiles by key in one SQLite file. Workers in other processes encode; the process
    that owns the cache writes. Any database trouble at opening empties the cache: it is only a cache."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._db = open_plain_sqlite(self.path, _SCHEMA)

    @staticmethod
    def key(file: SourceFile, fingerprint: str) -> str:
        """The entry's key: changes with the file's content, its path, and `fingerprint` (what else
        the parse depends on: codeqa version, queries, settings)."""
        return hashlib.sha256(f"{fingerprint}\0{file.path}\0{file.sha256}".encode()).hexdigest()

    def get(self, file: SourceFile, fingerprint: str) -> ParsedFile | None:
        return self.get_many([file], fingerprint).get(file.path)

    def get_many(self, files: Sequence[SourceFile], fingerprint: str, all_references: bool = True,
                 known: Mapping[str, ParsedFile] | None = None) -> dict[str, ParsedFile]:
        """The cached ParsedFiles of `files` by path; files without a usable entry are left out.
        `all_references` False, and `known` (the parses cut by all_references=False, by path, or those
        table_only cut the same way): see decode_parsed."""
        known = known or {}
        by_key = {self.key(f, fingerprint): f for f in files}
        # the files whose `data` part is known are read without it
        rest_only = [k for k, f in by_key.items() if all_references and _same_file(known.get(f.path), f)]
        known_keys = set(rest_only)
        whole = [k for k in by_key if k not in known_keys]
        found: dict[str, ParsedFile] = {}
        strings: dict = {}  # shared by the files read: names, kinds and scopes recur across them
        for keys, with_data in ((whole, True), (rest_only, False)):
            columns = f"key, {'data' if with_data else 'NULL'}, {'rest' if all_references else 'NULL'}"
            for start in range(0, len(keys), _BATCH):
                part = keys[start:start + _BATCH]
                try:
                    rows = self._db.execute(f"SELECT {columns} FROM parsed WHERE key IN ({','.join('?' * len(part))})",
                                            part).fetchall()
                except sqlite3.DatabaseError:  # damaged after opening: what it cannot read is a miss
                    continue
                for key, data, rest in rows:
                    file = by_key.get(key)
                    if file is None:
                        continue
                    head = _inflate(data) if with_data else b""
                    if all_references:
                        tail = _inflate(rest)
                        head = head + _SEPARATOR + tail if head is not None and tail is not None else None
                    parsed = decode_parsed(head, file, all_references, strings, known.get(file.path)) if head is not None else None
                    if parsed is not None:
                        found[file.path] = parsed
        return found

    def put_many(self, items: Sequence[tuple[SourceFile, bytes]], fingerprint: str) -> None:
        """Store entries made by encode_parsed, replacing older ones under the same key."""
        try:
            parts = [(self.key(f, fingerprint), *blob.partition(_SEPARATOR)[::2]) for f, blob in items]
            self._db.executemany("INSERT OR REPLACE INTO parsed (key, data, rest) VALUES (?, ?, ?)",
                                 [(key, zlib.compress(head, 1), zlib.compress(rest, 1)) for key, head, rest in parts])
            self._db.commit()
        except sqlite3.DatabaseError:  # a cache that cannot be written (disk full, damaged) costs reparsing only
            self._db.rollback()

    def prune(self, keep_keys: set[str]) -> int:
        """Delete every entry whose key is not in `keep_keys`; returns how many went (0 when it failed)."""
        try:
            gone = [key for (key,) in self._db.execute("SELECT key FROM parsed") if key not in keep_keys]
            for start in range(0, len(gone), _BATCH):
                part = gone[start:start + _BATCH]
                self._db.execute(f"DELETE FROM parsed WHERE key IN ({','.join('?' * len(part))})", part)
            self._db.commit()
        except sqlite3.DatabaseError:
            self._db.rollback()
            return 0
        return len(gone)

    def close(self) -> None:
        self._db.close()
