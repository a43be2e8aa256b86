"""The resolver's tables of a project's imports, star imports, type evidence and base classes, made
file by file: a long-lived process (resident.py) keeps each file's part and makes again only those
of the files whose parse changed.

Every key of a file's part is a scope of that file (its path or one of its symbols), so the project's
tables are the files' parts side by side, in the order of the parses: the same lists, in the same
order, as one pass over all references. The exception is evidence about `self.x` in a method written
outside its type (`void T::m()`, a Go method): it goes to the type, wherever GraphIndex.owner finds
it, so the part of a file with such a method depends on other files and is made again every time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import MutableMapping, Sequence

from ...types import ParsedFile, Reference
from .imports import binds_no_name, import_local
from .index import GraphIndex, language_of
from .members import fact_key


@dataclass(frozen=True)
class FileTables:
    """One file's part of the tables (see ProjectTables)."""

    imports: dict[tuple[str, str], list[Reference]]
    stars: dict[str, list[Reference]]
    facts: dict[tuple[str, str], list[Reference]]
    inherits: dict[str, list[Reference]]
    own: bool  # every key is the file's own: the part depends on the file's parse alone


@dataclass(frozen=True)
class ProjectTables:
    imports: dict[tuple[str, str], list[Reference]]  # (scope, local name) -> imports
    stars: dict[str, list[Reference]]  # scope -> star imports
    facts: dict[tuple[str, str], list[Reference]]  # (scope, variable) -> references carrying evidence
    inherits: dict[str, list[Reference]]  # class id -> base references


def file_tables(pf: ParsedFile, index: GraphIndex) -> FileTables:
    """`pf`'s part of the project's tables."""
    imports: dict[tuple[str, str], list[Reference]] = {}
    stars: dict[str, list[Reference]] = {}
    facts: dict[tuple[str, str], list[Reference]] = {}
    inherits: dict[str, list[Reference]] = {}
    lang = language_of(pf.file.language or "")
    for ref in pf.references:
        scope = ref.enclosing_symbol_id or ref.path
        if ref.kind == "import":
            if ref.name == "*" or binds_no_name(ref, lang):
                stars.setdefault(scope, []).append(ref)
            else:
                imports.setdefault((scope, import_local(ref, lang)), []).append(ref)
            continue
        if ref.kind == "inheritance" and ref.enclosing_symbol_id:
            inherits.setdefault(ref.enclosing_symbol_id, []).append(ref)
        if ref.assigned:
            key = fact_key(ref, lang, index)
            if key is not None:
                facts.setdefault(key, []).append(ref)
    # a method written outside its type sends `self.x` evidence to wherever GraphIndex.owner finds the type
    own = not any(s.parent_id is None and s.kind == "method" and s.qualified_name != s.name for s in pf.symbols)
    return FileTables(imports, stars, facts, inherits, own)


def project_tables(parsed: Sequence[ParsedFile], index: GraphIndex,
                   kept: MutableMapping[str, tuple[ParsedFile, FileTables]] | None = None) -> ProjectTables:
    """The tables of the whole project. With `kept` (path -> the parse a part was made of, and the part),
    a file's part is reused when it was made of this very parse object and depends on nothing else,
    and `kept` is left holding the parts of `parsed`."""
    imports: dict[tuple[str, str], list[Reference]] = {}
    stars: dict[str, list[Reference]] = {}
    facts: dict[tuple[str, str], list[Reference]] = {}
    inherits: dict[str, list[Reference]] = {}
    fresh: dict[str, tuple[ParsedFile, FileTables]] = {}
    for pf in parsed:
        found = kept.get(pf.file.path) if kept is not None else None
        part = found[1] if found is not None and found[0] is pf and found[1].own else file_tables(pf, index)
        if kept is not None:
            fresh[pf.file.path] = (pf, part)
        for table, add in ((imports, part.imports), (stars, part.stars), (facts, part.facts), (inherits, part.inherits)):
            for key, refs in add.items():
                have = table.get(key)
                if have is None:
                    table[key] = list(refs)  # a copy: the kept part stays as it was made
                else:
                    have.extend(refs)  # a type's evidence from methods written outside it, in other files
    if kept is not None:
        kept.clear()
        kept.update(fresh)
    return ProjectTables(imports, stars, facts, inherits)
