"""Resolve again only what a change can move: the files whose resolution read something that changed.

A change in one file can retarget references anywhere (an import, a re-export, a receiver's type, a
name defined once), so which files to resolve again is decided from what each file's resolution
read last time (Memo.note): the files whose symbols or references it looked at, the names it looked
up across the project, whether it mapped module strings to files (FILE_SET) or asked whether a type
has members written outside it (OUTSIDE_MEMBERS). A run compares the files with the last run's and
resolves again the changed files and every file that read

- a changed or deleted file as a whole (a path noted);
- the entries for a name in a changed file (index.name_in_file: its top-level symbols, class
  members, imports and evidence of that name), where they differ before and after, or any of them
  where the file's shape changed (incremental.changed_entries: a symbol that was there changed or
  went, or a star import or base class did); its shape (index.file_shape), where that changed. So a
  new function in a file that hundreds of files import moves only the files that looked its name
  up (SQLAlchemy's `sql/elements.py`: 276 files read it);
- the symbols of a name (`n:`) whose symbols in a changed file differ before and after the change;
- whether a name exists (`e:`, a symbol or an import binding), where a changed file defined or bound
  it before and not after, or the other way round;
- methods of a name written outside their type (`m:`), where a changed file has one, or where one's
  type name is among the names whose symbols changed (its owner may have moved);
- the set of files (paths and languages), when it changed;
- types' outside members, when a method written outside its type changed or may have moved.

References do not depend on which files are resolved together (values.Memo), so the result equals a
clean resolution of the whole project; tests/test_incremental_graph.py checks that edit by edit.
When the stub/code twins of the project change, everything is resolved again.

What a run keeps per file (`FileGraph`) lives in <index-dir>/resolved.sqlite as plain JSON, checked
when read like the parse cache: a folder shipped in a repository must not run code, and an entry
that does not fit is a reason to resolve everything, never an error.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ...plain_sqlite import open_plain_sqlite
from ...types import RETURNS, ParsedFile, Reference, Symbol, is_file_module
from .index import FILE_SET, OUTSIDE_MEMBERS, GraphIndex
from .index import language_of
from .imports import binds_no_name, import_local

STATE_VERSION = 3
# A file that read a star web (or a folder, for a name it never imported) of more files than this keeps
# "any file" instead of the files: the C++ include web of site-packages' torch/include gave every
# header its own closure of thousands (and torch/include/ATen/ops holds 7k headers), and listing them
# in every FileGraph made an 11 GB state file (15.5 GB RSS while writing it). Such a file
# is resolved again whenever any file changes: more work on those runs, never a stale reference.
WEB_FILES_KEPT = 256
_BATCH = 500
_SCHEMA = [("table", "files", "CREATE TABLE files (path TEXT PRIMARY KEY, data TEXT NOT NULL)"),
           ("index", "sqlite_autoindex_files_1", None),
           ("table", "meta", "CREATE TABLE meta (key TEXT PRIMARY KEY, data TEXT NOT NULL)"),
           ("index", "sqlite_autoindex_meta_1", None)]


@dataclass(frozen=True)
class FileGraph:
    """One file's resolution as kept between runs: what it read, and what it gave (counts only; the
    references themselves are in the store)."""

    sha256: str
    language: str
    read_files: tuple[str, ...]
    read_names: tuple[str, ...]
    read_file_set: bool
    read_outside_members: bool
    references: int
    by_confidence: tuple[tuple[str, int], ...]
    used: tuple[tuple[str, int], ...]  # names of other files' symbols this file calls, instantiates or inherits
    read_every_file: bool = False  # it read a web or folder bigger than WEB_FILES_KEPT: any changed file may move it
    # (path, names): the entries for those names in that file (index.name_in_file), and its shape
    read_entries: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def to_json(self) -> list:
        return [self.sha256, self.language, list(self.read_files), list(self.read_names), self.read_file_set,
                self.read_outside_members, self.references, [list(x) for x in self.by_confidence],
                [list(x) for x in self.used], self.read_every_file, [[p, list(n)] for p, n in self.read_entries]]

    @classmethod
    def from_json(cls, data: object) -> "FileGraph | None":
        if type(data) is not list or len(data) != 11:
            return None
        sha, language, files, names, file_set, members, count, confidence, used, every, entries = data
        if not (type(sha) is str and type(language) is str and type(files) is list and type(names) is list
                and type(file_set) is bool and type(members) is bool and type(count) is int and type(every) is bool
                and type(confidence) is list and type(used) is list and type(entries) is list
                and set(map(type, files)) <= {str} and set(map(type, names)) <= {str}
                and all(_pair(x) for x in confidence) and all(_pair(x) for x in used)
                and all(_entries(x) for x in entries)):
            return None
        return cls(sha, language, tuple(files), tuple(names), file_set, members, count,
                   tuple(map(tuple, confidence)), tuple(map(tuple, used)), every,
                   tuple((p, tuple(n)) for p, n in entries))


def _pair(x: object) -> bool:
    return type(x) is list and len(x) == 2 and type(x[0]) is str and type(x[1]) is int


def _entries(x: object) -> bool:
    return type(x) is list and len(x) == 2 and type(x[0]) is str and type(x[1]) is list and set(map(type, x[1])) <= {str}


def file_graph(pf: ParsedFile, references: Sequence[Reference], reads: Iterable, by_id: Mapping[str, Symbol],
               shared: dict | None = None) -> FileGraph:
    """A file's FileGraph from its resolution. `shared` (kept across the files of a run) gives equal names
    and equal lists of files one object each: most files of a project read the same names."""
    files, names = [], []
    entries: dict[str, set[str]] = {}
    file_set = members = every = False
    for atom in reads:
        if type(atom) is str:
            files.append(atom)
        elif type(atom) is frozenset:  # the files of a star web (graph/stars.py) or a folder, noted as one
            if len(atom) > WEB_FILES_KEPT:
                every = True
            else:
                files.extend(atom)
        elif atom == FILE_SET:
            file_set = True
        elif atom == OUTSIDE_MEMBERS:
            members = True
        elif len(atom) == 3:  # ("f", path, name): index.name_in_file
            entries.setdefault(atom[1], set()).add(atom[2])
        else:  # ("n" | "e" | "m", name), ("s", path): index.file_shape
            names.append(f"{atom[0]}:{atom[1]}")
    read_files, read_names = tuple(sorted(set(files))), tuple(sorted(names))
    read_entries = tuple((p, tuple(sorted(entries[p]))) for p in sorted(entries) if p not in read_files)
    if shared is not None:
        read_names = tuple(map(shared.setdefault, read_names, read_names))
        read_files = shared.setdefault(read_files, read_files)
        read_entries = tuple((shared.setdefault(p, p), shared.setdefault(n, n)) for p, n in read_entries)
    return FileGraph(pf.file.sha256, pf.file.language or "", read_files, read_names, file_set,
                     members, len(references), tuple(sorted(Counter(r.confidence for r in references).items())),
                     tuple(sorted(used_names(references, by_id).items())), every, read_entries)


def used_names(references: Iterable[Reference], by_id: Mapping[str, Symbol]) -> Counter[str]:
    """The public classes and functions that `references` call, instantiate or inherit from other
    files, counted (summed over files: the most used names of the project)."""
    used: Counter[str] = Counter()
    for r in references:
        if r.kind in ("call", "instantiation", "inheritance") and r.confidence in ("exact", "likely"):
            for t in r.target_ids:
                s = by_id.get(t)
                if s is not None and s.path != r.path and not s.name.startswith("_") and len(s.name) > 3:
                    used[s.name] += 1
    return used


def files_to_resolve(previous: Mapping[str, FileGraph], parsed: Sequence[ParsedFile],
                     old_parsed: Mapping[str, ParsedFile], index: GraphIndex) -> set[str] | None:
    """The paths of `parsed` whose references may differ from the last run's (`previous`), or None
    when that cannot be told (a changed or deleted file's last parse is missing from `old_parsed`)."""
    now = {pf.file.path: pf for pf in parsed}
    changed = {p for p, pf in now.items() if p not in previous or previous[p].sha256 != pf.file.sha256}
    deleted = set(previous) - set(now)
    if any(p not in old_parsed for p in (changed & set(previous)) | deleted):
        return None
    touched = changed | deleted
    if not touched:
        return set()
    file_set_changed = ({p: pf.file.language or "" for p, pf in now.items()}
                        != {p: g.language for p, g in previous.items()})
    before = [old_parsed[p] for p in touched if p in old_parsed]
    after = [now[p] for p in changed]
    symbols_before, symbols_after = _symbols_by_name(before), _symbols_by_name(after)
    changed_symbols = {n for n in symbols_before.keys() | symbols_after.keys()
                       if symbols_before.get(n) != symbols_after.get(n)}
    names = {"n:" + n for n in changed_symbols}
    names.update("e:" + n for n in _bound(before) ^ _bound(after))
    outside: list[Symbol] = [s for s in index.by_id.values() if _outside_its_type(s)]
    for pf in before:
        outside.extend(s for s in pf.symbols if _outside_its_type(s))
    members_changed = False
    for s in outside:  # changed, or a type of that name changed: the method may belong to another type now
        if s.path in touched or _type_name(s) in changed_symbols:
            names.add("m:" + s.name)
            members_changed = True
    entries: dict[str, set[str] | None] = {p: None for p in touched}
    for p in changed & set(old_parsed):
        entries[p] = changed_entries(old_parsed[p], now[p])
    names.update("s:" + p for p, moved in entries.items() if moved is None)
    # a file read as a whole (a path noted) moves its reader on any change; one read name by name
    # (index.name_in_file) only where those names' entries changed, or its shape did
    return {p for p in now if p in changed
            or _read_any(previous[p], touched, names, file_set_changed, members_changed, entries)}


def changed_entries(before: ParsedFile, after: ParsedFile) -> set[str] | None:
    """The names whose entries in one file (index.name_in_file) differ between two parses of it, or
    None when its shape changed: a symbol that was there changed or went (a line moved: ids hold
    lines), the set of symbols that have members changed, or a star import or base class of a scope
    that was there changed. Reading a symbol that is new needs its name first, so a new function,
    method or class (and whatever is written inside it) changes only the entries of names: its own,
    and those of the imports and evidence it adds (a new `self.x = ...` is evidence about `x`)."""
    if before.file.language != after.file.language:
        return None
    old = {_symbol_key(s) for s in before.symbols}
    new = {_symbol_key(s) for s in after.symbols}
    if not old <= new or {s.parent_id for s in before.symbols} != {s.parent_id for s in after.symbols}:
        return None
    old_ids = {s.id for s in before.symbols}
    by_id = {s.id: s for s in (*before.symbols, *after.symbols)}
    names = {by_id[key[0]].name for key in new - old} | {by_id[key[0]].qualified_name for key in new - old}
    lang = language_of(after.file.language or "")
    refs_before, refs_after = Counter(filter(_in_tables, before.references)), Counter(filter(_in_tables, after.references))
    for ref in (refs_before - refs_after) + (refs_after - refs_before):
        old_scope = ref.enclosing_symbol_id is None or ref.enclosing_symbol_id in old_ids
        if old_scope and (ref.kind == "inheritance" or (ref.kind == "import" and (ref.name == "*" or binds_no_name(ref, lang)))):
            return None
        if ref.kind == "import":  # imports are looked up by the name they bind
            names.add(import_local(ref, lang))
        if ref.assigned == RETURNS:  # evidence by the variable it is about, not by what it names
            scope = by_id.get(ref.enclosing_symbol_id or "")
            names.add(scope.name if scope is not None else RETURNS)
        elif ref.assigned:
            names.update(_WORDS.findall(ref.assigned))
    return {n.lstrip(".$") for n in names}


_WORDS = re.compile(r"[\w$]+")


def _symbol_key(s: Symbol) -> tuple:
    """What resolution reads of a symbol (neither its end line nor its docstring)."""
    return (s.id, s.name, s.qualified_name, s.kind, s.language, s.path, s.start_line, s.signature, s.parent_id)


def _in_tables(ref: Reference) -> bool:
    """Whether resolving other files can read `ref` (resolve.py's imports, stars, bases, evidence)."""
    return ref.kind in ("import", "inheritance") or bool(ref.assigned)


def _symbols_by_name(parsed: Iterable[ParsedFile]) -> dict[str, list[Symbol]]:
    out: dict[str, list[Symbol]] = {}
    for pf in parsed:
        for s in pf.symbols:
            out.setdefault(s.name, []).append(s)
    return {n: sorted(v, key=lambda s: s.id) for n, v in out.items()}


def _bound(parsed: Iterable[ParsedFile]) -> set[str]:
    """Names files define or bind by import (resolve.py's `imported_names`)."""
    names: set[str] = set()
    for pf in parsed:
        lang = language_of(pf.file.language or "")
        names.update(s.name for s in pf.symbols)
        names.update(import_local(r, lang) for r in pf.references
                     if r.kind == "import" and r.name != "*" and not binds_no_name(r, lang))
    return names


def _read_any(g: FileGraph, files: set[str], names: set[str], file_set: bool, members: bool,
              entries: Mapping[str, set[str] | None] | None = None) -> bool:
    """Whether `g` read something that changed: one of `files`, `names`, the file set, outside members,
    or (`entries`, by file: the names whose entries changed, None: its shape changed) an entry."""
    if ((file_set and g.read_file_set) or (members and g.read_outside_members) or (g.read_every_file and bool(files))
            or not files.isdisjoint(g.read_files) or not names.isdisjoint(g.read_names)):
        return True
    for path, read in g.read_entries if entries else ():
        if path in entries:
            moved = entries[path]
            if moved is None or not moved.isdisjoint(read):
                return True
    return False


def _outside_its_type(s: Symbol) -> bool:  # `func (s *T) M()`, `void T::m()`; a file's module `pkg.mod` is none
    return s.parent_id is None and s.qualified_name != s.name and not is_file_module(s)


def _type_name(s: Symbol) -> str:
    return s.qualified_name.rsplit(".", 1)[0].rsplit(".", 1)[-1]


def summarize(parsed: Sequence[ParsedFile], made: Mapping[str, FileGraph],
              previous: Mapping[str, FileGraph]) -> dict[str, FileGraph]:
    """Every file's FileGraph, in `parsed` order: `made` in this run (file_graph, as each file was
    resolved), else the last run's."""
    return {pf.file.path: made[pf.file.path] if pf.file.path in made else previous[pf.file.path] for pf in parsed}


class GraphState:
    """The FileGraphs of the last complete run, and the project's stub twins, in one SQLite file.
    `load()` gives None unless the last run that began an update also finished it."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._db = open_plain_sqlite(self.path, _SCHEMA)

    def _meta(self, key: str) -> object:
        row = self._db.execute("SELECT data FROM meta WHERE key = ?", (key,)).fetchone()
        try:
            return json.loads(row[0]) if row and type(row[0]) is str else None
        except ValueError:
            return None

    def load(self, fingerprint: str) -> tuple[dict[str, FileGraph], dict[str, tuple[str, ...]]] | None:
        """(FileGraph by path, twins) of the last complete run with parses of this `fingerprint`
        (index.parse_fingerprint); None when there is none usable."""
        try:
            if self._meta("complete") != [STATE_VERSION, fingerprint]:
                return None
            twins = self._meta("twins")
            if type(twins) is not dict or not all(type(v) is list and set(map(type, v)) <= {str} for v in twins.values()):
                return None
            graphs: dict[str, FileGraph] = {}
            for path, data in self._db.execute("SELECT path, data FROM files"):
                try:
                    graph = FileGraph.from_json(json.loads(data)) if type(path) is str and type(data) is str else None
                except ValueError:
                    graph = None
                if graph is None:
                    return None
                graphs[path] = graph
        except sqlite3.DatabaseError:
            return None
        return graphs, {k: tuple(v) for k, v in twins.items()}

    def begin(self) -> None:
        """From here until `finish`, the stored references may match neither run: load() gives None."""
        self._db.execute("DELETE FROM meta WHERE key = 'complete'")
        self._db.commit()

    def finish(self, graphs: Mapping[str, FileGraph], changed: Iterable[str] | None,
               twins: Mapping[str, tuple[str, ...]], fingerprint: str) -> None:
        """Keep `graphs` (every current file's): rewrite the entries of `changed` (None: all) and drop
        those of files that are gone."""
        db = self._db
        if changed is None:
            db.execute("DELETE FROM files")
            changed = list(graphs)
        else:
            gone = [p for (p,) in db.execute("SELECT path FROM files") if p not in graphs]
            for start in range(0, len(gone), _BATCH):
                part = gone[start:start + _BATCH]
                db.execute(f"DELETE FROM files WHERE path IN ({','.join('?' * len(part))})", part)
        # encoded row by row as SQLite takes them: all at once, site-packages' rows took 6 GB
        db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?)",
                       ((p, json.dumps(graphs[p].to_json(), separators=(",", ":"))) for p in changed))
        db.execute("INSERT OR REPLACE INTO meta VALUES ('twins', ?)", (json.dumps({k: list(v) for k, v in twins.items()}),))
        db.execute("INSERT OR REPLACE INTO meta VALUES ('complete', ?)", (json.dumps([STATE_VERSION, fingerprint]),))
        db.commit()

    def close(self) -> None:
        self._db.close()
