"""Resolve stage: references -> definitions across files.

Order of evidence, strongest first:
  1. imports and aliases (`from x import Y as Z`, JS import/require, Java/Go/Rust/C#/PHP imports),
     followed through re-exports (`from .core import Y` in a package's `__init__`, JS barrels
     `export { A } from "./a"` / `export * from "./a"`, Rust `pub use`) and Java static imports; an
     import inside a function binds there only -> exact (a name a Python star import passes on:
     likely, as `__all__` is not read)
  2. the enclosing scope: definitions nested in the enclosing function, a class body's own members,
     where members are in scope without `this` (Java, C#, C++, Ruby) the members of the enclosing
     classes and modules, same-file definitions -> exact; a module or partial class reopened in
     another file -> likely
  3. star imports: `from m import *`, `import a.*`, `use a::*`, and imports that make a whole file
     visible (`#include "x.h"`, `using Ns;`, `require_relative`; transitively in C, C++, Ruby, PHP)
     -> likely
  4. members of what the receiver is: `self.m()` / `cls.m()` / `super().m()` / `this.m()` /
     `$this->m()` / `parent::m()` on the enclosing class and its bases (in any file), `mod.f()` on an
     imported module, `Foo.m()` on a class, `crate::geo::Point::origin()` / `\\App\\User::find()` on a
     path -> exact; a receiver typed by evidence -> likely: `x = Foo()`, `x: Foo`, `Foo x`,
     `with Foo() as x`, `self.x = ...` in any method, `x: Foo` in the class body or a declared field
     (`private Repo repo`, a struct field) read through `this` or bare, a module-level `x: Foo`
     imported elsewhere, a function's return annotation, `return Foo()` or declared result type
     (`func New() *Server`, `fn new() -> Self`), a method read as a property, and chains of these
     (`self.client.session().send()`)
  5. same folder/package (Go, Java, C#, PHP) -> likely
  6. a name defined exactly once in the project (languages without explicit imports), or a method name
     defined exactly once when nothing at all is known about the receiver and the name is no method
     every builtin object has (`each`, `map`, `toString`) -> name-only
A receiver known to be something else (another project's module, a literal, a variable declared with
a type that is not ours in a statically typed language, a class of ours without that member) gets no
name-only guess. Overloads (one name defined several times in one file, statically typed languages)
count as one definition; a constructor never stands for its class. Calls whose target is a class
become instantiations. Unresolved references are dropped, and so are reads of local variables
(parse.py keeps those only as type evidence).

Which facts apply to a language is decided by its registry row (`codeqa/languages.py`); the files a
module string names are worked out in graph_index.py.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Iterable, Iterator, Sequence

from .graph_index import GraphIndex, file_stem, join_module, language_of, last_component
from .languages import Language
from .parse import CLASS_LIKE, RETURNS
from .types import ParsedFile, Reference, Symbol

FUNCTION_KINDS = frozenset({"function", "method"})
_BASE_NAMES = ("super", "base", "parent")  # receivers that mean "the enclosing class's bases"
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_LITERAL = re.compile(r"""^([rbfuRBFU]{0,2}["']|\d|\[|\{)""")  # `"".join`, `b"".decode`, `[].append`
_ATTRIBUTE_TARGET = re.compile(r"([\w$]+)\s*(?:\.|->)\s*([\w$]+)")  # `self.x`, `$this->x`
_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class _Value:
    """What a name or an expression stands for, as far as the evidence goes."""

    ids: tuple[str, ...] = ()  # the symbols it is bound to
    classes: tuple[str, ...] = ()  # classes whose members it has: an instance, or the class itself
    files: tuple[str, ...] = ()  # a module: its files
    outside: bool = False  # something that is not ours: another project's module, a literal, a missing member
    confidence: str = "exact"  # "likely" once typed by evidence or ambiguous
    makes: tuple[str, ...] = ()  # classes that calling it instantiates (`URL = Url` holds a class)

    def ours(self) -> bool:
        return bool(self.ids or self.classes or self.files or self.makes)

    def known(self) -> bool:
        return self.outside or self.ours()


_UNKNOWN = _Value()
_OUTSIDE = _Value(outside=True)


def _union(values: Iterable[_Value]) -> _Value:
    values = [v for v in values if v.known()]
    if len(values) < 2:
        return values[0] if values else _UNKNOWN
    ids: dict[str, None] = {}
    classes: dict[str, None] = {}
    files: dict[str, None] = {}
    makes: dict[str, None] = {}
    outside, confidence = False, "exact"
    for v in values:
        ids.update(dict.fromkeys(v.ids))
        classes.update(dict.fromkeys(v.classes))
        files.update(dict.fromkeys(v.files))
        makes.update(dict.fromkeys(v.makes))
        outside = outside or v.outside
        if v.confidence != "exact" and v.ours():  # what is not ours weighs nothing
            confidence = "likely"
    ours = bool(ids or classes or files or makes)
    return _Value(tuple(ids), tuple(classes), tuple(files), outside and not ours, confidence, tuple(makes))


def _likely(v: _Value) -> _Value:
    return replace(v, confidence="likely") if v.known() and v.confidence != "likely" else v


def resolve_references(parsed: Sequence[ParsedFile], index: GraphIndex | None = None) -> list[Reference]:
    """Every resolvable reference with target_ids and confidence set; the rest dropped."""
    index = index or GraphIndex.build(parsed)
    resolver = _Resolver(parsed, index)
    twins = resolver.stub_twins()
    resolved: list[Reference] = []
    for pf in parsed:
        for ref in pf.references:
            targets, confidence = resolver.resolve(ref)
            if not targets:
                continue
            if twins:  # a stub declares the same thing as its code: a reference counts for both
                targets = list(dict.fromkeys(t2 for t in targets for t2 in (t, *twins.get(t, ()))))
            kind = ref.kind
            if kind == "call" and all(index.by_id[t].kind in CLASS_LIKE for t in targets):
                kind = "instantiation"
            resolved.append(_resolved(ref, tuple(targets), confidence, kind))
    return resolved


def _resolved(ref: Reference, target_ids: tuple[str, ...], confidence: str, kind: str) -> Reference:
    # faster than dataclasses.replace(), which re-checks every field: this runs for every reference
    return Reference(**{**vars(ref), "target_ids": target_ids, "confidence": confidence, "kind": kind})


class _Resolver:
    """What names and receivers stand for: lazily worked out and remembered, since evidence chains
    across files (an import of a re-export of a class whose attribute is typed in another module)."""

    def __init__(self, parsed: Sequence[ParsedFile], index: GraphIndex):
        self.index = index
        self.imports: dict[tuple[str, str], list[Reference]] = defaultdict(list)  # (scope, local name) -> imports
        self.stars: dict[str, list[Reference]] = defaultdict(list)  # scope -> star imports
        self.facts: dict[tuple[str, str], list[Reference]] = defaultdict(list)  # (scope, variable) -> evidence
        self.inherits: dict[str, list[Reference]] = defaultdict(list)  # class id -> base references
        self.memo: dict[tuple, object] = {}
        self.languages: dict[str, Language | None] = {}
        for pf in parsed:
            lang = language_of(pf.file.language or "")
            for ref in pf.references:
                scope = ref.enclosing_symbol_id or ref.path
                if ref.kind == "import":
                    if ref.name == "*" or _binds_no_name(ref, lang):
                        self.stars[scope].append(ref)
                    else:
                        self.imports[(scope, _import_local(ref, lang))].append(ref)
                    continue
                if ref.kind == "inheritance" and ref.enclosing_symbol_id:
                    self.inherits[ref.enclosing_symbol_id].append(ref)
                if ref.assigned:
                    key = self._fact_key(ref, lang)
                    if key is not None:
                        self.facts[key].append(ref)
        self.imported_names = {name for _, name in self.imports}

    def language(self, path: str) -> Language | None:
        if path not in self.languages:
            self.languages[path] = language_of(self.index.languages.get(path, ""))
        return self.languages[path]

    # ---- the answer for one reference -------------------------------------------------------
    def resolve(self, ref: Reference) -> tuple[list[str], str]:
        if ref.confidence == "local" or (ref.name not in self.index.by_name and ref.name not in self.imported_names):
            return [], ""  # a local variable's read, or a name that no symbol of ours has nor an import gives
        if ref.kind == "import":
            value = self.import_value(ref) if ref.name != "*" else _UNKNOWN
            return self._targets(value, ref)
        if ref.receiver:
            return self._resolve_member(ref)
        value = self.name_value(ref.name, ref)
        if value.ids:
            return self._targets(value, ref)
        return self._resolve_without_imports(ref)

    def _targets(self, value: _Value, ref: Reference) -> tuple[list[str], str]:
        """The ids a value is bound to: exact for one definition; in languages with overloads, one name
        defined several times in one file (`f(int)`, `f(String)`, TS overload signatures) is one too."""
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
        owner = self.receiver_value(ref)
        if owner.known():
            return self._targets(self.attribute(owner, ref.name), ref)
        lang = self.language(ref.path)
        if ref.kind in ("type", "instantiation", "inheritance") and "::" in ref.line_text and _chain(ref.receiver or ""):
            # `geo::Point`, `new ns::Foo()`: a namespace we do not model; the name on its own, at most likely
            found, confidence = self._targets(self.name_value(ref.name, ref), ref)
            if not found:
                found, confidence = self._resolve_without_imports(ref)
            if found:
                return found, "likely" if confidence == "exact" else confidence
        generic = lang is not None and ref.name in lang.generic_methods
        if ref.kind in ("call", "instantiation") and not ref.name.startswith("__") and not generic and _chain(ref.receiver or ""):
            # nothing is known about a receiver of names and calls (an element of a container may be
            # anything): a method name defined once in the whole project, unless every builtin
            # object has one (`x.map()`, `x.toString()`)
            candidates = [s for s in self.index.by_name.get(ref.name, ()) if s.kind == "method"]
            if len(candidates) == 1:
                return [candidates[0].id], "name-only"
        return [], ""

    def _resolve_without_imports(self, ref: Reference) -> tuple[list[str], str]:
        """Languages where a file can name what it never imported: same package, then a unique name."""
        lang = self.language(ref.path)
        if lang is None or lang.explicit_imports:
            return [], ""
        folder = posixpath.dirname(ref.path)
        same_package = [s for f in self.index.dir_files.get(folder, ()) for s in self.index.top_level.get(f, {}).get(ref.name, ())]
        if same_package:
            return [s.id for s in same_package], "likely"
        candidates = [s for s in self.index.by_name.get(ref.name, ()) if s.parent_id is None and s.qualified_name == s.name]
        if len(candidates) == 1 and ref.kind != "attribute":
            return [candidates[0].id], "name-only"
        if len(candidates) > 1 and ref.kind != "attribute" and all(c.kind in CLASS_LIKE for c in candidates):
            return [c.id for c in candidates], "name-only"  # a partial class / reopened module: still one name
        return [], ""

    # ---- names ------------------------------------------------------------------------------
    def name_value(self, name: str, ref: Reference) -> _Value:
        """A bare name where `ref` stands: enclosing scopes (imports, nested definitions, the class body),
        then the file (imports, definitions, star imports, module-level variables)."""
        key = ("name", ref.enclosing_symbol_id or ref.path, name)
        if key not in self.memo:
            self.memo[key] = _UNKNOWN
            self.memo[key] = self._name_value(name, ref)
        return self.memo[key]

    def _name_value(self, name: str, ref: Reference) -> _Value:
        index, path = self.index, ref.path
        lang = self.language(path)
        if lang is not None and lang.implicit_this:
            found = self.lexical_member(ref.enclosing_symbol_id, name)
            if found.known():
                return found
        innermost = True
        for scope in self._scopes(ref):
            value = self._imported(scope, name)
            if value.known():
                return value
            symbol = index.by_id.get(scope)
            if symbol is not None and (symbol.kind in FUNCTION_KINDS or (innermost and symbol.kind in CLASS_LIKE)):
                nested = index.members.get(scope, {}).get(name)
                if nested:
                    return self._symbols([s.id for s in nested])
            innermost = False
        local = index.top_level.get(path, {}).get(name)
        if local:
            return self._defined(path, name, local)
        for scope in self._scopes(ref):  # `use super::*;` inside a Rust `mod tests`, then the file's
            found = self._from_stars(scope, name)
            if found.known():
                return found
        if (path, name) in self.facts:
            return self.variable(path, name)
        return _UNKNOWN

    def _scopes(self, ref: Reference) -> Iterator[str]:
        """The enclosing symbols of `ref`, innermost first, then its file."""
        scope = ref.enclosing_symbol_id
        while scope is not None:
            yield scope
            symbol = self.index.by_id.get(scope)
            scope = symbol.parent_id if symbol is not None else None
        yield ref.path

    def _imported(self, scope: str, name: str) -> _Value:
        if name not in self.imported_names:
            return _UNKNOWN
        refs = self.imports.get((scope, name))
        if not refs:
            return _UNKNOWN
        if len(refs) == 1:
            return self.import_value(refs[0])
        return _union(self.import_value(r) for r in refs)

    def _from_stars(self, scope: str, name: str, sure: bool = False) -> _Value:
        """`name` as the star imports of a scope bring it (`from m import *`, `import a.*`,
        `#include "x.h"`): likely, as several may bring one name and the other module may not export
        it; `sure` keeps the confidence (a name imported by name through a re-exporting module)."""
        for star in self.stars.get(scope, ()):
            files = self.index.files_for_module(self._module_path(star), star.path)
            found = _union(self.export(f, name) for f in files)
            if found.known():
                return found if sure else _likely(found)
        return _UNKNOWN

    def _defined(self, path: str, name: str, symbols: Sequence[Symbol]) -> _Value:
        """Top-level definitions, with what evidence says the name holds besides (a decorated function)."""
        value = self._symbols([s.id for s in symbols])
        if (path, name) not in self.facts:
            return value
        typed = self.variable(path, name)
        return _Value(value.ids, tuple(dict.fromkeys(value.classes + typed.classes)), typed.files, False, value.confidence,
                      typed.makes)

    def _symbols(self, ids: Sequence[str]) -> _Value:
        classes = tuple(i for i in ids if self.index.by_id[i].kind in CLASS_LIKE)
        return _Value(ids=tuple(dict.fromkeys(ids)), classes=classes)

    # ---- imports and what modules export -------------------------------------------------------
    def import_value(self, ref: Reference) -> _Value:
        key = ("import", ref.path, ref.line, ref.column)
        if key not in self.memo:
            self.memo[key] = _UNKNOWN  # an import cycle resolves to nothing
            self.memo[key] = self._import_value(ref)
        return self.memo[key]

    def _module_path(self, ref: Reference) -> str:
        """The module an import names; inside `mod tests { use super::*; }` the first `super` is the
        file's own module (languages whose imports are relative to the importing module)."""
        module = ref.module or ref.name
        lang = self.language(ref.path)
        if lang is not None and lang.imports_relative_to == "module" and module.startswith("super"):
            module = _skip_inline_modules(module, ref, self.index)
        return module

    def _import_value(self, ref: Reference) -> _Value:
        index, path = self.index, ref.path
        lang = self.language(path)
        module, name = self._module_path(ref), ref.name
        if ref.module is None and not (lang is not None and lang.package_init):
            return _UNKNOWN  # an import without a module path names nothing we can find
        whole_module = ref.module is None or ref.module == name
        if whole_module:  # `import a.b [as c]`: a module; in Python `import a.b` binds the package a
            if lang is not None and lang.package_init and not ref.alias:
                module = module.split(".")[0]
            files = index.files_for_module(module, path)
            return _Value(files=tuple(files)) if files else self._outside_if_explicit(lang)
        files = index.files_for_module(module, path)
        value = _union(self.export(f, name) for f in files)
        if ref.alias == name and files and lang is not None and lang.default_import_by_name:
            return _union([value, _Value(files=tuple(files))])  # a default export may be an object: `fmt.format()`
        if value.known():
            return value
        sub_files = index.files_for_module(join_module(module, name), path)  # `from pkg import mod`, Java `import a.b.C`
        value = _union(self.export(f, name) for f in sub_files)
        if value.ids:
            return value
        if sub_files:
            return _Value(files=tuple(sub_files))
        owner = last_component(module)  # Java `import static a.b.C.m;`: a member of the class the module names
        static = [m.id for f in files for c in index.top_level.get(f, {}).get(owner, ())
                  if c.kind in CLASS_LIKE for m in index.members.get(c.id, {}).get(name, ())]
        if static:
            return self._symbols(static)
        return _UNKNOWN if files else self._outside_if_explicit(lang)

    @staticmethod
    def _outside_if_explicit(lang: Language | None) -> _Value:
        # a Python import whose module names no file of ours is another project's (the standard
        # library, a dependency); elsewhere the module path may just be one we cannot map
        return _OUTSIDE if lang is not None and lang.package_init else _UNKNOWN

    def export(self, path: str, name: str) -> _Value:
        """What `from <module of path> import name` gets: a definition, a re-export, a star import's
        name, a module-level variable, or a submodule of a package."""
        key = ("export", path, name)
        if key not in self.memo:
            self.memo[key] = _UNKNOWN
            self.memo[key] = self._export(path, name)
        return self.memo[key]

    def _export(self, path: str, name: str) -> _Value:
        index = self.index
        defined = index.top_level.get(path, {}).get(name)
        if defined:
            return self._defined(path, name, defined)
        lang = self.language(path)
        if lang is not None and lang.reexports:
            value = self._imported(path, name)
            if value.known():
                return value
        if lang is not None and (lang.reexports or lang.imports_are_transitive):
            value = self._from_stars(path, name, sure=not lang.star_import_filters)
            if value.known():
                return value
        if (path, name) in self.facts:
            return self.variable(path, name)
        if lang is not None and lang.package_init and file_stem(path) == lang.package_init:
            sub = index.files_for_module("." + name, path)
            if sub:
                return _Value(files=tuple(sub))
        return _UNKNOWN

    def stub_twins(self) -> dict[str, tuple[str, ...]]:
        """Symbol id -> the ids declaring the same thing in the paired stub or code file (`m.pyi` / `m.py`):
        top-level names as the code module exports them, and the members of twin classes."""
        index = self.index
        pairs: list[tuple[str, str]] = []
        for key in list(self.index.top_level):
            lang = self.language(key)
            if lang is not None and key.endswith(lang.stub_extensions):
                stem = posixpath.splitext(key)[0]
                pairs.extend((key, stem + ext) for ext in lang.extensions if stem + ext in index.languages and ext not in lang.stub_extensions)
        twins: dict[str, set[str]] = defaultdict(set)

        def link(stub_ids: Iterable[str], code_ids: Iterable[str]) -> None:
            for a in stub_ids:
                for b in code_ids:
                    twins[a].add(b)
                    twins[b].add(a)

        for stub, code in pairs:
            for name, symbols in index.top_level.get(stub, {}).items():
                code_ids = self.export(code, name).ids
                link([s.id for s in symbols], code_ids)
                for symbol in symbols:
                    if symbol.kind not in CLASS_LIKE:
                        continue
                    for member, declared in index.members.get(symbol.id, {}).items():
                        link([d.id for d in declared], [m for c in code_ids for m in self.members(c, member)])
        return {k: tuple(sorted(v)) for k, v in twins.items()}

    # ---- classes ----------------------------------------------------------------------------
    def enclosing_class(self, symbol_id: str | None) -> Symbol | None:
        while symbol_id is not None:
            sym = self.index.by_id.get(symbol_id)
            if sym is None:
                return None
            if sym.kind in CLASS_LIKE:
                return sym
            symbol_id = sym.parent_id
        return None

    def bases(self, class_id: str) -> tuple[str, ...]:
        key = ("bases", class_id)
        if key not in self.memo:
            self.memo[key] = ()
            found: list[str] = []
            for ref in self.inherits.get(class_id, ()):
                value = self.receiver_attribute(ref) if ref.receiver else self.name_value(ref.name, ref)
                found.extend(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE and i != class_id)
            self.memo[key] = tuple(dict.fromkeys(found))
        return self.memo[key]

    def members(self, class_id: str, name: str, depth: int = 0) -> list[str]:
        """`name` on the class or, failing that, on its bases (depth first, as Python's MRO mostly is).
        A constructor named like its class is never what `Name` means inside that class (`class B : A`
        is the class A, not A's constructor)."""
        owner = self.index.by_id.get(class_id)
        found = [s.id for s in self.index.members.get(class_id, {}).get(name, ()) if owner is None or name != owner.name]
        if found or depth > 8:
            return found
        for base in self.bases(class_id):
            found = self.members(base, name, depth + 1)
            if found:
                return found
        return []

    def lexical_member(self, symbol_id: str | None, name: str) -> _Value:
        """Where members are in scope without `this`: `name` as a member of the enclosing class (and its
        bases), then of the classes and modules around it; a module reopened in another file (Ruby
        `module Shop`, C# partial class) counts as likely."""
        scopes = []
        cls = self.enclosing_class(symbol_id)
        while cls is not None:
            scopes.append(cls)
            found = self.members(cls.id, name)
            if found:
                return self._symbols(found)
            cls = self.enclosing_class(cls.parent_id)
        for enclosing in scopes:
            reopened = [s for s in self.index.by_name.get(enclosing.name, ())
                        if s.id != enclosing.id and s.qualified_name == enclosing.qualified_name and s.kind in CLASS_LIKE]
            found = [m.id for s in reopened for m in self.index.members.get(s.id, {}).get(name, ())]
            if found:
                return _likely(self._symbols(found))
        return _UNKNOWN

    def attribute_types(self, class_id: str, name: str, depth: int = 0) -> _Value:
        """What `self.name = ...` in any method, or `name: T` in the class body, says it holds (PHP
        declares `private Repo $repo` and reads `$this->repo`)."""
        for key in ("." + name, ".$" + name):
            if (class_id, key) in self.facts:
                return self.variable(class_id, key)
        if depth > 8:
            return _UNKNOWN
        return _union(self.attribute_types(b, name, depth + 1) for b in self.bases(class_id))

    def attribute(self, owner: _Value, name: str) -> _Value:
        """`owner.name`: a module's export, a class member, or what an instance attribute holds."""
        key = ("attribute", owner, name)
        if key not in self.memo:
            self.memo[key] = _UNKNOWN
            self.memo[key] = self._attribute(owner, name)
        return self.memo[key]

    def _attribute(self, owner: _Value, name: str) -> _Value:
        parts = [self.export(f, name) for f in owner.files]
        for class_id in owner.classes:
            found = self.members(class_id, name)
            if found:
                found_value = self._symbols(found)
                parts.append(found_value if owner.confidence == "exact" else _likely(found_value))
            typed = self.attribute_types(class_id, name)
            if typed.known():
                parts.append(typed)
        value = _union(parts)
        if value.ours():
            return value
        return _OUTSIDE if owner.known() else _UNKNOWN  # a known owner without that member: not ours

    # ---- receivers and type evidence ------------------------------------------------------------
    def receiver_value(self, ref: Reference) -> _Value:
        key = ("receiver", ref.enclosing_symbol_id or ref.path, ref.receiver)
        if key not in self.memo:
            self.memo[key] = _UNKNOWN
            self.memo[key] = self._receiver_value(ref)
        return self.memo[key]

    def receiver_attribute(self, ref: Reference) -> _Value:
        return self.attribute(self.receiver_value(ref), ref.name)

    def _receiver_value(self, ref: Reference) -> _Value:
        text = (ref.receiver or "").strip()
        if _LITERAL.match(text):
            return _OUTSIDE
        if "::" in text or "\\" in text:  # `crate::geo::Point::origin()`, PHP `\App\User::find()`
            value = self._path_value(text, ref)
            if value.known():
                return value
        chain = _chain(text)
        if not chain:
            return _UNKNOWN
        (head, calls), rest = chain[0], chain[1:]
        value = self._head_value(head, calls, ref)
        for name, calls in rest:
            if not value.known() or value.outside:
                return value
            value = self.attribute(value, name)
            if calls:
                value = self.call(value)
            elif self._all_methods(value.ids):
                value = self.returns(value.ids)  # a method read without a call, then used: a property
        return value

    def _path_value(self, text: str, ref: Reference) -> _Value:
        """A receiver written as a path: the module's files when it names one of ours that defines the
        member, else the class its last segment names (likely)."""
        files = self.index.files_for_module(text, ref.path)
        if files and self.attribute(_Value(files=tuple(files)), ref.name).ours():
            return _Value(files=tuple(files))
        last = last_component(text)
        value = self.name_value(last, ref)
        if not value.known():
            ids, _ = self._resolve_without_imports(replace(ref, name=last, receiver=None))
            value = self._symbols(ids)
        classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
        return _Value(classes=classes, confidence="likely") if classes else _UNKNOWN

    def _head_value(self, head: str, calls: int, ref: Reference) -> _Value:
        lang = self.language(ref.path)
        self_names = lang.self_names if lang else ()
        if head in _BASE_NAMES and (calls or head in self_names):  # super().m(), base.m(), parent::m()
            cls = self.enclosing_class(ref.enclosing_symbol_id)
            if cls is None:
                return _UNKNOWN
            bases = self.bases(cls.id)
            return _Value(classes=bases) if bases else _OUTSIDE  # no base of ours: another project's class
        if head in self_names or f"{head}()" in self_names:
            cls = self.enclosing_class(ref.enclosing_symbol_id)
            return _Value(classes=(cls.id,)) if cls is not None and not calls else _UNKNOWN
        value = self.local_value(head, ref)
        if not value.known() and lang is not None and lang.implicit_this:  # a field without `this.`
            cls = self.enclosing_class(ref.enclosing_symbol_id)
            if cls is not None:
                value = self.attribute_types(cls.id, head)
        if not value.known():
            value = self.name_value(head, ref)
        if not value.known() and lang is not None and not lang.explicit_imports:
            ids, confidence = self._resolve_without_imports(replace(ref, name=head, receiver=None))
            value = self._symbols(ids) if confidence == "exact" else _likely(self._symbols(ids))
        for _ in range(calls):
            value = self.call(value)
        return value

    def local_value(self, name: str, ref: Reference) -> _Value:
        """A variable of the enclosing functions, typed by its evidence (`self` is the enclosing class)."""
        lang = self.language(ref.path)
        if lang is not None and name in lang.self_names:
            cls = self.enclosing_class(ref.enclosing_symbol_id)
            return _Value(classes=(cls.id,)) if cls is not None else _UNKNOWN
        for scope in self._scopes(ref):
            if scope == ref.path:
                break
            symbol = self.index.by_id.get(scope)
            if symbol is not None and symbol.kind in CLASS_LIKE:
                continue  # a class body's names are attributes, not variables of its methods
            if (scope, name) in self.facts:
                return self.variable(scope, name)
        return _UNKNOWN

    def call(self, value: _Value) -> _Value:
        """What calling `value` gives: an instance of a class, or what a function returns."""
        classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
        functions = [i for i in value.ids if self.index.by_id[i].kind in FUNCTION_KINDS]
        parts = [_Value(classes=classes, confidence=value.confidence)] if classes else []
        if value.makes:
            parts.append(_Value(classes=value.makes, confidence="likely"))
        if functions:
            parts.append(self.returns(functions))
        result = _union(parts)
        return result if result.known() else (_OUTSIDE if value.outside else _UNKNOWN)

    def returns(self, function_ids: Iterable[str]) -> _Value:
        return _union(self._returns(f) for f in function_ids)

    def _returns(self, function_id: str) -> _Value:
        """What a function returns: its return evidence (annotations, `return Foo()`), else, where the
        signature declares it, the first type of ours named in the signature's return part."""
        value = self.variable(function_id, RETURNS)
        function = self.index.by_id[function_id]
        lang = self.language(function.path)
        if value.known() or lang is None or not lang.static_types:
            return value
        classes = self._returned_classes(function)
        return _Value(classes=classes, confidence="likely") if classes else value

    def _returned_classes(self, function: Symbol) -> tuple[str, ...]:
        """Our classes a function's signature says it returns: `func New() *Server`, `fn new() -> Self`,
        `f(): Foo`, `public Item add(...)`, `Vec2 vec_add(...)`. The first type name of ours wins."""
        signature = function.signature
        at = re.search(rf"\b{re.escape(function.name)}\b", signature)
        if at is None:
            return ()
        before = re.sub(r"[\w<>]*::\s*$", "", signature[:at.start()].rstrip())  # `double Circle::area()`
        after, depth, opened = "", 0, False
        for i, char in enumerate(signature[at.end():]):
            depth += char == "("
            opened = opened or char == "("
            depth -= char == ")"
            if opened and depth == 0:
                after = signature[at.end() + i + 1:]
                break
        probe = Reference(function.name, function.path, function.start_line, 0, "type", function.id, (), "unresolved", "")
        for word in _WORD.findall(after) + _WORD.findall(before)[-1:]:
            if word == "Self":
                owner = self.enclosing_class(function.parent_id) or self.index.owner(function)
                return (owner.id,) if owner is not None else ()
            value = self.name_value(word, probe)
            if not value.known():
                ids, _ = self._resolve_without_imports(replace(probe, name=word))
                value = self._symbols(ids)
            classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
            if classes:
                return classes
        return ()

    def variable(self, scope: str, name: str) -> _Value:
        """The type evidence about one variable (or a function's result, or an instance attribute):
        a declared type wins over assigned values."""
        key = ("variable", scope, name)
        if key not in self.memo:
            self.memo[key] = _UNKNOWN
            refs = self.facts.get((scope, name), ())
            value = _union(self.evidence(r) for r in refs if r.kind == "type")
            lang = self.language(refs[0].path) if refs else None
            static = lang is not None and lang.static_types and value.outside  # a declared type not ours decides
            if not (value.classes or value.files or static):  # no declared type of ours: what is assigned
                value = _union(self.evidence(r) for r in refs if r.kind != "type")
            self.memo[key] = _likely(replace(value, ids=()))  # a variable is no symbol of ours
        return self.memo[key]

    def evidence(self, ref: Reference) -> _Value:
        """What a reference that carries type evidence gives to its variable."""
        if ref.confidence == "local":
            value = self.local_value(ref.name, ref)
        elif ref.receiver:
            value = self.receiver_attribute(ref)
        else:
            value = self.name_value(ref.name, ref)
            lang = self.language(ref.path)
            if not value.known() and lang is not None and not lang.explicit_imports and ref.kind != "attribute":
                ids, confidence = self._resolve_without_imports(ref)  # same package, a unique name
                value = self._symbols(ids) if confidence == "exact" else _likely(self._symbols(ids))
            if not value.known() and lang is not None and (lang.explicit_imports or (lang.static_types and ref.kind == "type")):
                # no local, not defined, not imported: a builtin (`set()`, `[]`); a declared type
                # that is none of ours (`List<Item> items`: `items.add()` is not our add)
                value = _OUTSIDE
        if ref.kind in ("call", "instantiation"):
            return self.call(value)
        if ref.kind == "type":  # an alias without members of its own (`type T = A | B`, a typedef) types nothing
            classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE) or value.classes
            classes = tuple(i for i in classes if self.index.by_id[i].kind != "type" or i in self.index.members)
            return _Value(classes=classes, outside=value.outside)
        if value.ids and self._all_methods(value.ids):
            return self.returns(value.ids)  # `x = self.prop`
        classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
        return replace(value, ids=(), makes=value.makes + classes) if classes else value  # `URL = Url`

    def _all_methods(self, ids: Sequence[str]) -> bool:
        return bool(ids) and all(self.index.by_id[i].kind == "method" for i in ids)

    def _fact_key(self, ref: Reference, lang: Language | None) -> tuple[str, str] | None:
        """Where a reference's type evidence goes: a variable of its scope, the enclosing function's
        result, or an attribute of the enclosing class (`self.x = ...`, `x: T` in a class body)."""
        target = ref.assigned or ""
        scope = ref.enclosing_symbol_id or ref.path
        if target == RETURNS:
            return (scope, RETURNS)
        attribute = _ATTRIBUTE_TARGET.fullmatch(target)
        if attribute and lang is not None and attribute.group(1) in lang.self_names:
            cls = self.enclosing_class(ref.enclosing_symbol_id)
            return (cls.id, "." + attribute.group(2)) if cls is not None else None
        if not _IDENTIFIER.fullmatch(target):
            return None  # `a, b = ...`, `d[k] = ...`: no single variable to type
        symbol = self.index.by_id.get(scope)
        if symbol is not None and symbol.kind in CLASS_LIKE:
            return (scope, "." + target)
        return (scope, target)


def _binds_no_name(ref: Reference, lang: Language | None) -> bool:
    """An import of a whole module that makes its names visible instead of binding it to a name
    (`#include "x.h"`, `using Ns;`, `require_relative "x"`): it acts as a star import."""
    return (lang is not None and lang.bare_import_is_star and not ref.alias and ref.module is not None
            and ref.module == ref.name)


def _skip_inline_modules(module: str, ref: Reference, index: GraphIndex) -> str:
    """`super::x` as written inside `mod tests { ... }` of the same file: one `super` per inline module
    is that file's own module."""
    depth, symbol_id = 0, ref.enclosing_symbol_id
    while symbol_id is not None and symbol_id in index.by_id:
        symbol = index.by_id[symbol_id]
        depth += symbol.kind == "module" and symbol.path == ref.path
        symbol_id = symbol.parent_id
    parts = module.split("::")
    skipped = 0
    while skipped < depth and skipped < len(parts) and parts[skipped] == "super":
        skipped += 1
    return "::".join(["self"] + parts[skipped:]) if skipped else module


def _import_local(ref: Reference, lang: Language | None) -> str:
    """The name an import binds in its scope."""
    if ref.alias:
        return ref.alias
    if lang is not None and lang.package_init and (ref.module is None or ref.module == ref.name):
        return ref.name.split(".")[0]  # Python `import a.b` binds `a`
    return last_component(ref.name)


def _chain(text: str) -> list[tuple[str, int]] | None:
    """`self.client.session().send` -> [(self, 0), (client, 0), (session, 1), (send, 0)];
    None when the receiver is no plain chain of names and calls (subscripts, operators, literals)."""
    parts: list[tuple[str, int]] = []
    i, n = 0, len(text)
    while i < n:
        match = _IDENTIFIER.match(text, i)
        if match is None:
            return None
        name, calls, i = match.group(), 0, match.end()
        while i < n and text[i] == "(":
            i = _skip_group(text, i)
            if i < 0:
                return None
            calls += 1
        parts.append((name, calls))
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        if text[i] == ".":
            i += 1
        elif text.startswith(("::", "->"), i):
            i += 2
        else:
            return None
        while i < n and text[i].isspace():
            i += 1
    return parts or None


def _skip_group(text: str, i: int) -> int:
    """Index after the parenthesised group starting at text[i] == "(", or -1 when it never closes."""
    depth = 0
    quote = ""
    for j in range(i, len(text)):
        c = text[j]
        if quote:
            if c == quote and text[j - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
    return -1
