"""Resolve stage: references -> definitions across files.

Order of evidence, strongest first:
  1. imports and aliases (`from x import Y as Z`, JS import/require, Java/Go/Rust/C#/PHP imports),
     followed through re-exports (`from .core import Y` in a package's `__init__`, JS barrels
     `export { A } from "./a"` / `export * from "./a"`, Rust `pub use`) and Java static imports; an
     import inside a function binds there only -> exact (a name a Python star import passes on:
     likely, as `__all__` is not read); an import or a name that stands for a module of ours is its
     file's module symbol where files are modules (`from . import util`, `util.f()`: graph/modules.py)
  2. the enclosing scope: definitions nested in the enclosing function, a class body's own members,
     where members are in scope without `this` (Java, C#, C++, Ruby) the members of the enclosing
     classes and modules, same-file definitions -> exact; a module or partial class reopened in
     another file -> likely
  3. star imports: `from m import *`, `import a.*`, `use a::*`, and imports that make a whole file
     visible (`#include "x.h"`, `using Ns;`, `require_relative`; transitively in C, C++, Ruby, PHP)
     -> likely
  4. members of what the receiver is: `self.m()` / `cls.m()` / `super().m()` / `this.m()` /
     `$this->m()` / `parent::m()` on the enclosing class or object literal and its bases (in any file), `mod.f()` on an
     imported module, `Foo.m()` on a class, `crate::geo::Point::origin()` / `\\App\\User::find()` on a
     path -> exact; a receiver typed by evidence -> likely: `x = Foo()`, `x: Foo`, `Foo x`,
     `with Foo() as x`, `self.x = ...` in any method, `x: Foo` in the class body or a declared field
     (`private Repo repo`, a struct field) read through `this` or bare, a module-level `x: Foo`
     imported elsewhere, a function's return annotation, `return Foo()` or declared result type
     (`func New() *Server`, `fn new() -> Self`), a method read as a property, and chains of these
     (`self.client.session().send()`)
  5. same folder/package (Go, Java, C#, PHP) -> likely
  6. a name defined exactly once in the project (languages without explicit imports), or a method name
     defined exactly once (an object literal's methods aside) when nothing at all is known about the receiver
     and the name is no method every builtin object has (`each`, `map`, `toString`) -> name-only
A receiver known to be something else (another project's module, a literal, a variable declared with
a type that is not ours in a statically typed language, a class of ours without that member) gets no
name-only guess. Overloads (one name defined several times in one file, statically typed languages)
count as one definition; a constructor never stands for its class. Calls whose target is a class
become instantiations. Unresolved references are dropped, and so are reads of local variables
(parse.py keeps those only as type evidence).

Which facts apply to a language is decided by its registry row (`codeqa/languages.py`). The files a
module string names are worked out in index.py; what a receiver is (steps 2-4 for `x.m()`: classes,
bases, members, type evidence) by the MemberResolver of members.py, which the resolver here holds
and which asks it back about names; this module resolves names, imports and re-exports, and answers
for each reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Collection, Mapping, MutableMapping, Sequence

from ...languages import Language
from ...types import CLASS_LIKE, FUNCTION_KINDS, RETURNS, ParsedFile, Reference, Symbol
from .dotted import imported_module, module_value, star_member
from .imports import import_local, outside_if_explicit, skip_inline_modules, static_import_members
from .incremental import WEB_FILES_KEPT
from .index import FILE_SET, GraphIndex, file_shape, file_stem, join_module, language_of, last_component, name_in_file
from .members import MemberResolver
from .modules import file_module_value, imported_in_full, may_import_module
from .stars import StarWebs
from .tables import FileTables, project_tables
from .twins import stub_twins
from .values import UNKNOWN, Memo, Value, likely, receiver_chain, union


def resolve_references(parsed: Sequence[ParsedFile], index: GraphIndex | None = None) -> list[Reference]:
    """Every resolvable reference with target_ids and confidence set; the rest dropped."""
    return [r for refs in resolve_by_file(parsed, index).references.values() for r in refs]


@dataclass(frozen=True)
class Resolution:
    """The resolved references of the files resolved, by path (in `parsed` order), with what each
    file's resolution read (Memo.note: file paths, `(kind, name)`, FILE_SET, OUTSIDE_MEMBERS), and the
    stub/code twins of the whole project."""

    references: dict[str, list[Reference]]
    reads: dict[str, frozenset]
    twins: dict[str, tuple[str, ...]]
    complete: bool  # every file was resolved


WEB_PROVIDERS_MAX = 16  # a name more files of one star-import web provide is left unresolved there
PROGRESS_FILES = 64  # files resolved between two progress reports
COMPLETE_BATCH = 256  # files whose whole parses are read at once
# answers about a name or a receiver in one scope: dropped once their file is resolved (Memo.forget)
FILE_LOCAL_ANSWERS = ("name", "receiver")


def resolve_by_file(parsed: Sequence[ParsedFile], index: GraphIndex | None = None, only: Collection[str] | None = None,
                    twins_before: Mapping[str, tuple[str, ...]] | None = None,
                    complete: Callable[[list[str]], Mapping[str, ParsedFile]] | None = None,
                    progress: Callable[[int, int], None] = lambda done, total: None,
                    on_file: Callable[[str, list[Reference], frozenset], None] | None = None,
                    keep_references: bool = True,
                    tables: MutableMapping[str, tuple[ParsedFile, FileTables]] | None = None) -> Resolution:
    """Resolve the references of the files in `only` (default: all) against the whole project; all of
    them after all when the project's stub twins differ from `twins_before` (a reference to either
    twin counts for both, anywhere). A reference's targets do not depend on which other files were
    resolved in the same call.

    The parses in `parsed` need only the references that resolving other files reads (imports, base
    classes, type evidence: ParseCache's all_references=False) when `complete` gives the whole
    parses of the files to resolve, by path. `progress(done, total)` is told every PROGRESS_FILES files.
    `on_file(path, references, reads)` is given each file's reads as soon as it is resolved, and then
    the Resolution keeps none (`reads` empty): on site-packages they were 30M atoms, 1.1 GB. Without
    `keep_references` the Resolution keeps no references either (each file's list is empty): `on_file`
    has them (site-packages: 2.4M). `tables`: each file's part of the resolver's tables from an earlier
    call, reused for the same parse objects and left holding this call's (graph/tables.py)."""
    index = index or GraphIndex.build(parsed)
    resolver = _Resolver(parsed, index, tables)
    memo = resolver.memo
    twins = stub_twins(resolver)
    if twins_before is not None and twins != dict(twins_before):
        only = None
    todo = [pf.file.path for pf in parsed if only is None or pf.file.path in only]
    whole = {pf.file.path: pf for pf in parsed} if complete is None else {}
    by_file: dict[str, list[Reference]] = {}
    reads: dict[str, frozenset] = {}
    progress(0, len(todo))
    for n, path in enumerate(todo):
        if n and n % PROGRESS_FILES == 0:
            progress(n, len(todo))
        if complete is not None and n % COMPLETE_BATCH == 0:  # whole parses a batch at a time: a big tree's
            whole = complete(todo[n:n + COMPLETE_BATCH])  # references never all sit in memory twice
        pf = whole[path]
        memo.begin(path)
        resolved: list[Reference] = []
        for ref in pf.references:
            try:
                targets, confidence = resolver.resolve(ref)
            except RecursionError:  # evidence chained deeper than Python's stack (a web of star imports
                continue  # across hundreds of modules, as in site-packages): the reference stays unresolved
            if not targets:
                continue
            if twins:  # a stub declares the same thing as its code: a reference counts for both
                targets = list(dict.fromkeys(t2 for t in targets for t2 in (t, *twins.get(t, ()))))
            kind = ref.kind
            if kind == "call" and all(index.by_id[t].kind in CLASS_LIKE for t in targets):
                kind = "instantiation"
            resolved.append(_resolved(ref, tuple(targets), confidence, kind))
        by_file[path] = resolved if keep_references else []
        if on_file is None:
            reads[path] = memo.reads()
        else:
            on_file(path, resolved, memo.reads())
        memo.forget(path)
    memo.begin()
    resolver.close()
    progress(len(todo), len(todo))
    return Resolution(by_file, reads, twins, only is None)


def _resolved(ref: Reference, target_ids: tuple[str, ...], confidence: str, kind: str) -> Reference:
    # faster than dataclasses.replace(), which re-checks every field: this runs for every reference
    return Reference(ref.name, ref.path, ref.line, ref.column, kind, ref.enclosing_symbol_id, target_ids, confidence,
                     ref.line_text, ref.receiver, ref.module, ref.alias, ref.assigned)


class _Resolver:
    """What names and imports stand for: lazily worked out and remembered, since evidence chains
    across files (an import of a re-export of a class whose attribute is typed in another module).
    Names, imports and exports here; classes, receivers and type evidence in `self.members`, a
    MemberResolver that asks this resolver back about names."""

    def __init__(self, parsed: Sequence[ParsedFile], index: GraphIndex,
                 kept: MutableMapping[str, tuple[ParsedFile, FileTables]] | None = None):
        self.index = index
        tables = project_tables(parsed, index, kept)
        self.imports = tables.imports  # (scope, local name) -> imports
        self.stars = tables.stars  # scope -> star imports
        facts, inherits = tables.facts, tables.inherits  # (scope, variable) -> evidence; class id -> bases
        self.imported_names = {name for _, name in self.imports}
        self.facts = facts
        self.memo = Memo(local_kinds=FILE_LOCAL_ANSWERS, wide=WEB_FILES_KEPT)
        self._folders: dict[str, tuple[frozenset[str], dict[str, list[Symbol]]]] = {}  # see _folder
        self.webs = StarWebs(index, self.stars, self.imports, facts, self.language, self._module_path)
        self.members = MemberResolver(index, facts, inherits, self.memo, names=self)

    def language(self, path: str) -> Language | None:
        return self.index.language(path)

    def close(self) -> None:
        """Break the resolver's reference cycles (its MemberResolver and StarWebs point back at it), so
        that its answers go as soon as it does: left to the garbage collector, site-packages' 1.1M
        answers were freed by a collection of ~27 s after the graph stage, and held memory until then."""
        self.members = self.webs = None  # type: ignore[assignment]

    # ---- the answer for one reference -------------------------------------------------------
    def resolve(self, ref: Reference) -> tuple[list[str], str]:
        self.memo.note(("e", ref.name))
        if ref.confidence == "local" or (ref.name not in self.index.by_name and ref.name not in self.imported_names
                                         and not may_import_module(ref, self.language(ref.path))):
            return [], ""  # a local variable's read, or a name that no symbol of ours has nor an import gives
        if ref.kind == "import":
            value = self.import_value(ref) if ref.name != "*" else UNKNOWN
            return self._targets(imported_in_full(self, ref, value), ref)
        if ref.receiver:
            return self._resolve_member(ref)
        value = self.name_value(ref.name, ref)
        if value.ids or value.files:  # a module (its files): its module symbol, in languages whose files have one
            found = self._targets(value, ref)
            if found[0]:
                return found
        return self.resolve_without_imports(ref)

    def _targets(self, value: Value, ref: Reference) -> tuple[list[str], str]:
        """The ids a value is bound to: exact for one definition; in languages with overloads, one name
        defined several times in one file (`f(int)`, `f(String)`, TS overload signatures) is one too.
        A module (its files, no symbol) is its files' module symbols (graph/modules.py)."""
        if not value.ids and value.files:
            value = file_module_value(self.index, self.memo, value)
        if not value.ids:
            return [], ""
        if value.confidence != "exact":
            return list(value.ids), "likely"
        if len(value.ids) == 1:
            return list(value.ids), "exact"
        lang = self.language(ref.path)
        symbols = [self.index.by_id[i] for i in value.ids]
        one = lang is not None and lang.static_types and len({(s.path, s.qualified_name) for s in symbols}) == 1
        return list(value.ids), "exact" if one else "likely"

    def _resolve_member(self, ref: Reference) -> tuple[list[str], str]:
        owner = self.members.receiver_value(ref)
        if owner.known():
            return self._targets(self.members.attribute(owner, ref.name), ref)
        if not receiver_chain(ref.receiver or ""):
            return [], ""  # subscripts, operators: nothing to go on
        lang = self.language(ref.path)
        if ref.kind in ("type", "instantiation", "inheritance") and "::" in ref.line_text:
            # `geo::Point`, `new ns::Foo()`: a namespace we do not model; the name on its own, at most likely
            found, confidence = self._targets(self.name_value(ref.name, ref), ref)
            if not found:
                found, confidence = self.resolve_without_imports(ref)
            if found:
                return found, "likely" if confidence == "exact" else confidence
        generic = lang is not None and ref.name in lang.generic_methods
        if ref.kind in ("call", "instantiation") and not ref.name.startswith("__") and not generic:
            # nothing is known about a receiver of names and calls (an element of a container may be
            # anything): a method name defined once in the whole project, unless every builtin
            # object has one (`x.map()`, `x.toString()`)
            self.memo.note(("n", ref.name))
            # (an object literal's method, `export default { show() {} }`, is reached through its object only)
            candidates = self._same_family(ref, [s for s in self.index.by_name.get(ref.name, ()) if s.kind == "method"
                                                 and getattr(self.index.by_id.get(s.parent_id or ""), "kind", "") != "object"])
            if len(candidates) == 1:
                return [candidates[0].id], "name-only"
        return [], ""

    def resolve_without_imports(self, ref: Reference) -> tuple[list[str], str]:
        """Languages where a file can name what it never imported: same package, then a unique name."""
        lang = self.language(ref.path)
        if lang is None or lang.explicit_imports:
            return [], ""
        note = self.memo.note
        note(FILE_SET)
        note(("n", ref.name))
        files, names = self._folder(ref.path)
        self.memo.note_files(files)  # one atom for the folder's files, as a star web's (incremental.file_graph opens it)
        same_package = self._same_family(ref, names.get(ref.name, []))
        if same_package:
            return [s.id for s in same_package], "likely"
        candidates = self._same_family(ref, [s for s in self.index.by_name.get(ref.name, ())
                                             if s.parent_id is None and s.qualified_name == s.name])
        if len(candidates) == 1 and ref.kind != "attribute":
            return [candidates[0].id], "name-only"
        if len(candidates) > 1 and ref.kind != "attribute" and all(c.kind in CLASS_LIKE for c in candidates):
            return [c.id for c in candidates], "name-only"  # a partial class / reopened module: still one name
        return [], ""

    def _folder(self, path: str) -> tuple[frozenset[str], dict[str, list[Symbol]]]:
        """The files whose names `path` sees without an import (its folder, or its Swift module:
        GraphIndex.package_of), as one object noted by identity, and their top-level symbols by name,
        in file order. Made once per folder: looking a name up file by file, and noting each
        file, for every reference was 40% of site-packages' resolution (torch/include/ATen/ops: 7k
        headers in one folder)."""
        folder, files = self.index.package_of(path)
        found = self._folders.get(folder)
        if found is None:
            names: dict[str, list[Symbol]] = {}
            for f in files:
                for name, symbols in self.index.top_level.get(f, {}).items():
                    names.setdefault(name, []).extend(symbols)
            found = self._folders[folder] = (frozenset(files), names)
        return found

    def _same_family(self, ref: Reference, symbols: list[Symbol]) -> list[Symbol]:
        """The symbols a name-only guess may pick from: those of the referring file's language family."""
        lang = self.language(ref.path)
        if lang is None:
            return symbols
        return [s for s in symbols if (other := language_of(s.language)) is None or other.family_name == lang.family_name]

    # ---- names ------------------------------------------------------------------------------
    def name_value(self, name: str, ref: Reference) -> Value:
        """A bare name where `ref` stands: enclosing scopes (imports, nested definitions, the class body),
        then the file (imports, definitions, star imports, module-level variables)."""
        return self.memo.value(("name", ref.enclosing_symbol_id or ref.path, name), UNKNOWN, self._name_value, name, ref)

    def _name_value(self, name: str, ref: Reference) -> Value:
        index, path = self.index, ref.path
        self.memo.note(name_in_file(path, name))  # and the scopes around `ref`: the file's shape
        lang = self.language(path)
        if lang is not None and lang.implicit_this:
            found = self.members.lexical_member(ref.enclosing_symbol_id, name)
            if found.known():
                return found
        innermost = True
        for scope in self.index.scopes(ref):
            value = self._imported(scope, name)
            if value.known():
                return value
            symbol = index.by_id.get(scope)
            if symbol is not None and (symbol.kind in FUNCTION_KINDS or (innermost and symbol.kind in CLASS_LIKE)):
                self.members.note_member(scope, name)
                nested = index.members.get(scope, {}).get(name)
                if nested:
                    return self.members.symbols([s.id for s in nested])
            innermost = False
        local = index.top_level.get(path, {}).get(name)
        if local:
            return self._defined(path, name, local)
        for scope in self.index.scopes(ref):  # `use super::*;` inside a Rust `mod tests`, then the file's
            found = self._from_stars(scope, name)
            if found.known():
                return found
        if (path, name) in self.facts:
            return self.members.variable(path, name)
        if lang is not None and lang.module_symbols:  # `Shop.Cart`, `Cart` (nested): a module by its name
            return module_value(index, self.memo, name, ref, self.name_value)
        return UNKNOWN

    def _imported(self, scope: str, name: str) -> Value:
        self.memo.note(("e", name))
        if name not in self.imported_names:
            return UNKNOWN
        self.memo.note(name_in_file(self.index.file_of(scope), name))
        refs = self.imports.get((scope, name))
        if not refs:
            return UNKNOWN
        if len(refs) == 1:
            return self.import_value(refs[0])
        return union(self.import_value(r) for r in refs)

    def _from_stars(self, scope: str, name: str, sure: bool = False) -> Value:
        """`name` as the star imports of a scope bring it (`from m import *`, `import a.*`,
        `#include "x.h"`): likely, as several may bring one name and the other module may not export
        it; `sure` keeps the confidence (a name imported by name through a re-exporting module)."""
        self.memo.note(file_shape(self.index.file_of(scope)))  # its star imports
        if (lang := self.language(self.index.file_of(scope))) is not None and lang.module_symbols:  # `import A.B`
            return likely(self.members.symbols(star_member(self.index, self.memo, self.stars.get(scope, ()), name,
                                                           self.members.find)))
        webs = self.webs
        if scope in self.stars and webs.in_web(scope):  # every module the web reaches, each once
            self.memo.note_files(webs.closure(scope))  # one atom for the web's files (incremental.file_graph opens it)
            self.memo.note(FILE_SET)
            self.memo.note(("e", name))
            providers = webs.providers(scope, name)
            if len(providers) > WEB_PROVIDERS_MAX:  # declared all over a web (a C++ include web): ambiguous
                return UNKNOWN
            found = union(self._direct_export(f, name) for f in providers)
            return found if sure else likely(found)
        if scope in self.stars and not webs.may_bring(scope, name, self.memo):
            return UNKNOWN
        for star in self.stars.get(scope, ()):
            self.memo.note(FILE_SET)
            found = self.exports(self.index.files_for_module(self._module_path(star), star.path), name)
            if found.known():
                return found if sure else likely(found)
        return UNKNOWN

    def _direct_export(self, path: str, name: str) -> Value:
        """export() without following the file's star imports (the web's closure covers them)."""
        return self.memo.value(("direct", path, name), UNKNOWN, self._export, path, name, False)

    def _defined(self, path: str, name: str, symbols: Sequence[Symbol]) -> Value:
        """Top-level definitions, with what evidence says the name holds besides (a decorated function)."""
        value = self.members.symbols([s.id for s in symbols])
        if (path, name) not in self.facts:
            return value
        typed = self.members.variable(path, name)
        return Value(value.ids, tuple(dict.fromkeys(value.classes + typed.classes)), typed.files, False, value.confidence,
                      typed.makes)

    # ---- imports and what modules export -------------------------------------------------------
    def import_value(self, ref: Reference) -> Value:
        return self.memo.value(("import", ref.path, ref.line, ref.column), UNKNOWN, self._import_value, ref)

    def _module_path(self, ref: Reference) -> str:
        """The module an import names; inside `mod tests { use super::*; }` the first `super` is the
        file's own module (languages whose imports are relative to the importing module)."""
        module = ref.module or ref.name
        lang = self.language(ref.path)
        if lang is not None and lang.imports_relative_to == "module" and module.startswith("super"):
            module = skip_inline_modules(module, ref, self.index)
        return module

    def _import_value(self, ref: Reference) -> Value:
        index, path = self.index, ref.path
        lang = self.language(path)
        self.memo.note(name_in_file(path, import_local(ref, lang)))  # the import is one of the file's entries for that name
        if lang is not None and lang.module_symbols:  # `alias Shop.Cart`: a module symbol, not a file
            return imported_module(index, self.memo, ref)
        self.memo.note(FILE_SET)
        module, name = self._module_path(ref), ref.name
        if ref.module is None and not (lang is not None and lang.package_init):
            return UNKNOWN  # an import without a module path names nothing we can find
        whole_module = ref.module is None or ref.module == name
        if whole_module:  # `import a.b [as c]`: a module; in Python `import a.b` binds the package a
            if lang is not None and lang.package_init and not ref.alias:
                module = module.split(".")[0]
            files = index.files_for_module(module, path)
            return Value(files=tuple(files)) if files else outside_if_explicit(lang)
        files = index.files_for_module(module, path)
        # `export { default as X } from "pkg/x"`: one file's `export default {...}`, not each of a folder's
        value = self.exports(files, name) if name != "default" or len(files) == 1 else UNKNOWN
        if ref.alias == name and files and lang is not None and lang.default_import_by_name:
            # a default export may be an object: `fmt.format()`; a file's `export default {...}` (a component)
            # is what its default import is, whatever the names it defines
            default = self.export(files[0], "default") if len(files) == 1 else UNKNOWN
            return union([default if default.ids else value, Value(files=tuple(files))])
        if value.known():
            return value
        sub_files = index.files_for_module(join_module(module, name), path)  # `from pkg import mod`, Java `import a.b.C`
        value = self.exports(sub_files, name)
        if value.ids:
            return value
        if sub_files:
            return Value(files=tuple(sub_files))
        static = static_import_members(index, self.memo, files, last_component(module), name)  # Java `import static`
        if static:
            return self.members.symbols(static)
        return UNKNOWN if files else outside_if_explicit(lang)

    def export(self, path: str, name: str) -> Value:
        """What `from <module of path> import name` gets: a definition, a re-export, a star import's
        name, a module-level variable, or a submodule of a package."""
        return self.memo.value(("export", path, name), UNKNOWN, self._export, path, name)

    def exports(self, files: Sequence[str], name: str) -> Value:
        """`name` exported by `files` (one module), one question per set: where each of a module's many files imports
        it again (`@ui/base/style` -> each `*/style/index.mjs`), a question per path was asked (in a cycle: none kept)."""
        if len(files) < 2:
            return self.export(files[0], name) if files else UNKNOWN
        return self.memo.value(("exports", tuple(files), name), UNKNOWN, lambda: union(self.export(f, name) for f in files))

    def _export(self, path: str, name: str, stars: bool = True) -> Value:
        index = self.index
        self.memo.note(name_in_file(path, name))
        self.memo.note(FILE_SET)
        defined = index.top_level.get(path, {}).get(name)
        if defined:
            return self._defined(path, name, defined)
        lang = self.language(path)
        if lang is not None and lang.exports_table_members:  # Lua: `local M = {}` ... `return M`
            self.memo.note(path)  # every table of the file
            tables = [t for ts in index.top_level.get(path, {}).values() for t in ts if t.kind in CLASS_LIKE]
            returned = {r.name for r in self.facts.get((path, RETURNS), ())}
            members = [m.id for t in ([t for t in tables if t.name in returned] or tables)
                       for m in index.members.get(t.id, {}).get(name, ())]
            if members:
                return self.members.symbols(members)
        if lang is not None and lang.reexports:
            value = self._imported(path, name)
            if value.known():
                return value
        if stars and lang is not None and (lang.reexports or lang.imports_are_transitive):
            value = self._from_stars(path, name, sure=not lang.star_import_filters)
            if value.known():
                return value
        if (path, name) in self.facts:
            return self.members.variable(path, name)
        if lang is not None and lang.package_init and file_stem(path) == lang.package_init:
            sub = index.files_for_module("." + name, path)
            if sub:
                return Value(files=tuple(sub))
        return UNKNOWN
