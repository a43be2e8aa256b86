"""Resolve stage: references -> definitions across files.

Order of evidence, strongest first:
  1. imports and aliases (`from x import Y as Z`, JS import/require, Java/Go/Rust/C#/PHP imports,
     barrel re-exports) -> exact
  2. the enclosing scope: same-file definitions, `self.m()` / `this.m()` on the enclosing class
     (and its bases), `Alias.m()` on an imported class or module, members of enclosing classes
     and modules -> exact
  3. same folder/package (Go, Java, C#, PHP), star imports (`import a.*`, `#include`, `using Ns;`),
     scopes reopened in another file (Ruby modules, C# partial classes), typed variables -> likely
  4. a name defined exactly once in the project (languages without explicit imports) -> name-only
Calls whose target is a class become instantiations. Unresolved references are dropped.

How an import string becomes files is decided by the importing language's registry row
(`codeqa/languages.py`): relative paths (`./util` -> util.ts or util/index.ts), Rust module paths
(`crate::`, `self::`, `super::`, mod.rs), Go package folders, C/Ruby paths next to the importer,
otherwise the longest suffix of the dotted path that names files of ours (Java packages, C#/PHP
namespaces by folder).
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

from .languages import Language, language_by_name
from .parse import CLASS_LIKE
from .types import ParsedFile, Reference, Symbol

_MODULE_SEPARATORS = re.compile(r"::|/|\\|\.")  # PHP namespaces use one backslash
_STRIP_MODULE_PREFIXES = ("crate.", "self.", "super.", "@.", "~.")
_INDEX_NAMES = ("__init__", "index", "mod", "lib", "main")
_SOURCE_EXT = re.compile(r"\.(d\.ts|d\.mts|d\.cts|py|pyi|js|mjs|cjs|jsx|ts|tsx|mts|cts|java|go|rs|c|h|cc|cpp|cxx|hpp|hh|hxx|cs|rb|php)$")
_RUST_PATH_HEADS = ("crate", "self", "super")
_MAX_REEXPORT_DEPTH = 4


@dataclass
class _FileScope:
    """What one file can name: imported symbols, imported modules (alias -> files), star imports."""

    names: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)  # local name -> (ids, conf)
    modules: dict[str, tuple[str, ...]] = field(default_factory=dict)  # local name -> file paths
    star_files: list[str] = field(default_factory=list)
    variables: dict[tuple[str | None, str], tuple[str, ...]] = field(default_factory=dict)  # (scope, var) -> class ids
    foreign: set[tuple[str | None, str]] = field(default_factory=set)  # (scope, var) declared with a type not ours


@dataclass
class GraphIndex:
    """Lookup tables over all symbols of the project."""

    by_id: dict[str, Symbol]
    by_name: dict[str, list[Symbol]]
    top_level: dict[str, dict[str, list[Symbol]]]  # path -> name -> top-level symbols
    members: dict[str, dict[str, list[Symbol]]]  # class id -> member name -> symbols
    module_files: dict[str, set[str]]  # dotted module key (and its suffixes) -> paths
    dir_files: dict[str, list[str]]  # posix dir -> paths
    languages: dict[str, str]  # path -> language
    stem_files: dict[str, list[str]] = field(default_factory=dict)  # path without extension -> paths
    folder_files: dict[str, set[str]] = field(default_factory=dict)  # dotted folder key (and suffixes) -> paths

    @classmethod
    def build(cls, parsed: Iterable[ParsedFile]) -> "GraphIndex":
        by_id: dict[str, Symbol] = {}
        by_name: dict[str, list[Symbol]] = defaultdict(list)
        top_level: dict[str, dict[str, list[Symbol]]] = defaultdict(lambda: defaultdict(list))
        members: dict[str, dict[str, list[Symbol]]] = defaultdict(lambda: defaultdict(list))
        module_files: dict[str, set[str]] = defaultdict(set)
        dir_files: dict[str, list[str]] = defaultdict(list)
        stem_files: dict[str, list[str]] = defaultdict(list)
        folder_files: dict[str, set[str]] = defaultdict(set)
        languages: dict[str, str] = {}
        for pf in parsed:
            path = pf.file.path
            languages[path] = pf.file.language or ""
            dir_files[posixpath.dirname(path)].append(path)
            stem_files[_SOURCE_EXT.sub("", path)].append(path)
            for key in _module_keys(path):
                module_files[key].add(path)
            folder = posixpath.dirname(path).split("/") if "/" in path else []
            for i in range(len(folder)):
                folder_files[".".join(folder[i:])].add(path)
            for sym in pf.symbols:
                by_id[sym.id] = sym
                by_name[sym.name].append(sym)
                if sym.parent_id is None and sym.qualified_name == sym.name:
                    top_level[path][sym.name].append(sym)
        index = cls(dict(by_id), dict(by_name), top_level, members, module_files, dir_files, languages,
                     stem_files, folder_files)
        for sym in by_id.values():
            if sym.parent_id is not None:
                members[sym.parent_id][sym.name].append(sym)
            elif sym.qualified_name != sym.name:  # `func (s *T) M()` / `void T::m()` / `impl T` elsewhere
                owner = index._owner(sym)
                if owner is not None:
                    members[owner.id][sym.name].append(sym)
        return index

    def _owner(self, method: Symbol) -> Symbol | None:
        """The type a method defined outside it belongs to: same file, else same folder, else same
        file stem (shape.hpp / shape.cpp), else the only type of that name."""
        type_name = method.qualified_name.rsplit(".", 1)[0].rsplit(".", 1)[-1]
        candidates = [s for s in self.by_name.get(type_name, ()) if s.kind in CLASS_LIKE]
        folder, stem = posixpath.dirname(method.path), _SOURCE_EXT.sub("", posixpath.basename(method.path))
        for keep in (lambda s: s.path == method.path,
                     lambda s: posixpath.dirname(s.path) == folder,
                     lambda s: _SOURCE_EXT.sub("", posixpath.basename(s.path)) == stem,
                     lambda s: True):
            found = [s for s in candidates if keep(s)]
            if found:
                return found[0] if len(found) == 1 else None
        return None

    def files_for_module(self, module: str, importer: str) -> list[str]:
        """Files a module string names, seen from the importing file (relative imports included)."""
        module = module.strip().strip("\"'")
        if not module:
            return []
        lang = _language(self.languages.get(importer, ""))
        if lang is not None and lang.import_is_folder:
            return self._longest_suffix(self.folder_files, _dotted(module))
        if lang is not None and lang.imports_relative_to == "module" and module.split("::")[0] in _RUST_PATH_HEADS:
            found = self._rust_path(module, importer)
            if found:
                return found
        if module.startswith("."):  # relative: Python `.mod`, `..pkg`, JS `./x`, `../x`
            base = posixpath.dirname(importer)
            if "/" in module or module in (".", ".."):  # JS-style path
                target = posixpath.normpath(posixpath.join(base, module))
                if "/" in module:
                    found = self._files_at(target)
                    if found:
                        return found
                key = _dotted(_SOURCE_EXT.sub("", target))
                return sorted(self.module_files.get(key, ()))
            dots = len(module) - len(module.lstrip("."))
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            rest = module[dots:]
            key = _dotted(posixpath.join(base, rest.replace(".", "/")) if rest else base)
            return sorted(self.module_files.get(key, ()))
        if lang is not None and lang.imports_relative_to:
            base = posixpath.dirname(importer) if lang.imports_relative_to == "file" else _rust_module_dir(importer)
            found = self._files_at(posixpath.join(base, module.replace("::", "/")))
            if found:
                return found
        key = _dotted(_SOURCE_EXT.sub("", module))
        for prefix in _STRIP_MODULE_PREFIXES:
            if key.startswith(prefix):
                key = key[len(prefix):]
        return self._longest_suffix(self.module_files, key)

    @staticmethod
    def _longest_suffix(table: dict[str, set[str]], key: str) -> list[str]:
        parts = key.split(".")
        for start in range(len(parts)):  # longest suffix that names files of ours
            files = table.get(".".join(parts[start:]))
            if files:
                return sorted(files)
        return []

    def _files_at(self, target: str) -> list[str]:
        """Files for a path without guessing: `x.ts`/`x.h`+`x.c` (same stem), else `x/index.*`, `x/mod.rs`..."""
        stem = posixpath.normpath(_SOURCE_EXT.sub("", target))
        if stem in self.stem_files:
            return sorted(self.stem_files[stem])
        for index_name in _INDEX_NAMES:
            found = self.stem_files.get(posixpath.join(stem, index_name))
            if found:
                return sorted(found)
        return []

    def _rust_path(self, module: str, importer: str) -> list[str]:
        """`crate::a::b`, `self::a`, `super::super::a` -> the file of that module."""
        parts = module.split("::")
        base = _rust_module_dir(importer)
        if parts[0] == "crate":
            base = self._crate_root(importer)
            if base is None:
                return []
            parts = parts[1:]
        elif parts[0] == "self":
            parts = parts[1:]
        while parts and parts[0] == "super":
            base = posixpath.dirname(base)
            parts = parts[1:]
        return self._files_at(posixpath.join(base, *parts)) if parts else self._files_at(base)

    def _crate_root(self, importer: str) -> str | None:
        folder = posixpath.dirname(importer)
        while True:
            if posixpath.join(folder, "lib") in self.stem_files or posixpath.join(folder, "main") in self.stem_files:
                return folder
            if not folder:
                return None
            folder = posixpath.dirname(folder)


def _language(name: str) -> Language | None:
    try:
        return language_by_name(name) if name else None
    except KeyError:
        return None


def _rust_module_dir(path: str) -> str:
    """Where a Rust file's child modules live: src/a/mod.rs -> src/a, src/a/b.rs -> src/a/b."""
    stem = _SOURCE_EXT.sub("", path)
    return posixpath.dirname(path) if posixpath.basename(stem) in _INDEX_NAMES else stem


def _dotted(path: str) -> str:
    return ".".join(p for p in _MODULE_SEPARATORS.split(path.strip("/")) if p and p != ".")


def _module_keys(path: str) -> list[str]:
    """`src/pkg/mod.py` -> src.pkg.mod, pkg.mod, mod; `pkg/__init__.py` -> pkg too; plus the folder keys."""
    stem = _SOURCE_EXT.sub("", path)
    parts = [p for p in stem.split("/") if p]
    keys = []
    if parts and parts[-1] in _INDEX_NAMES and len(parts) > 1:
        pkg = parts[:-1]
        keys.extend(".".join(pkg[i:]) for i in range(len(pkg)))
    keys.extend(".".join(parts[i:]) for i in range(len(parts)))
    folder = parts[:-1]
    keys.extend(".".join(folder[i:]) for i in range(len(folder)))  # Go/Java packages: the folder
    return keys


def _join_module(module: str, name: str) -> str:
    """`pkg.mod` + `x` -> `pkg.mod.x`; `crate::a` + `x` -> `crate::a::x`; `App\\Models` + `x` likewise."""
    for separator in ("::", "\\"):
        if separator in module:
            return f"{module}{separator}{name}"
    return f"{module}.{name}"


def resolve_references(parsed: Sequence[ParsedFile], index: GraphIndex | None = None) -> list[Reference]:
    """Every resolvable reference with target_ids and confidence set; the rest dropped."""
    index = index or GraphIndex.build(parsed)
    scopes = _Scopes({pf.file.path: pf for pf in parsed}, index)
    for pf in parsed:
        scopes.get(pf.file.path)
    direct = {path: list(scope.star_files) for path, scope in scopes.built.items()}
    for pf in parsed:
        lang = _language(pf.file.language or "")
        if lang is not None and lang.imports_are_transitive:
            scopes.built[pf.file.path].star_files = scopes.included(pf.file.path, direct)
    bases = _class_bases(parsed, index, scopes)
    resolved: list[Reference] = []
    for pf in parsed:
        scope = scopes.get(pf.file.path)
        lang = _language(pf.file.language or "")
        for ref in pf.references:  # `x = Foo()` / `x: Foo`: remember x's class in its scope
            if ref.assigned and ref.kind in ("call", "instantiation", "type"):
                targets, _ = _resolve(ref, pf, scope, index, bases)
                classes = tuple(t for t in targets if index.by_id[t].kind in CLASS_LIKE)
                if not classes and targets and lang is not None and lang.static_types:
                    classes = tuple(c for t in targets for c in _returned_classes(index.by_id[t], index, scopes))
                if classes:
                    scope.variables[(ref.enclosing_symbol_id, ref.assigned)] = classes
                elif not targets and ref.kind == "type" and lang is not None and lang.static_types:
                    scope.foreign.add((ref.enclosing_symbol_id, ref.assigned))
        for ref in pf.references:
            targets, confidence = _resolve(ref, pf, scope, index, bases)
            if not targets:
                continue
            kind = ref.kind
            if kind == "call" and all(index.by_id[t].kind in CLASS_LIKE for t in targets):
                kind = "instantiation"
            resolved.append(replace(ref, target_ids=tuple(targets), confidence=confidence, kind=kind))
    return resolved


class _Scopes:
    """File scopes, built on first use: a barrel file's scope is needed while building its importers'."""

    def __init__(self, files: dict[str, ParsedFile], index: GraphIndex):
        self.files = files
        self.index = index
        self.built: dict[str, _FileScope] = {}
        self.building: set[str] = set()

    def get(self, path: str) -> _FileScope:
        if path not in self.built:
            self.building.add(path)
            self.built[path] = _file_scope(self.files[path], self.index, self)
            self.building.discard(path)
        return self.built[path]

    def included(self, path: str, direct: dict[str, list[str]]) -> list[str]:
        """Files a file includes: directly first, then what those include (breadth first)."""
        seen = dict.fromkeys(direct.get(path, ()))
        queue = list(seen)
        while queue:
            for other in direct.get(queue.pop(0), ()):
                if other not in seen and other != path:
                    seen[other] = None
                    queue.append(other)
        return list(seen)

    def exported(self, files: Iterable[str], name: str, depth: int = 0) -> list[str]:
        """Ids `name` has when imported from `files`: defined there, or imported/re-exported by them."""
        found: list[str] = []
        for path in files:
            defined = self.index.top_level.get(path, {}).get(name)
            if defined:
                found.extend(s.id for s in defined)
                continue
            if path in self.building or path not in self.files or depth >= _MAX_REEXPORT_DEPTH:
                continue
            scope = self.get(path)
            if name in scope.names:
                found.extend(scope.names[name][0])
            else:
                found.extend(self.exported(scope.star_files, name, depth + 1))
        return list(dict.fromkeys(found))


def _file_scope(pf: ParsedFile, index: GraphIndex, scopes: _Scopes) -> _FileScope:
    scope = _FileScope()
    path = pf.file.path
    lang = _language(pf.file.language or "")
    for ref in pf.references:
        if ref.kind != "import":
            continue
        module = ref.module or ref.name
        if lang is not None and lang.imports_relative_to == "module" and module.startswith("super"):
            module = _skip_inline_modules(module, ref, index)
        name = ref.name
        local = ref.alias or _last_component(name)
        if name == "*":
            scope.star_files.extend(index.files_for_module(module, path))
            continue
        files = index.files_for_module(module, path) if ref.module else []
        whole_module = ref.module is not None and module == name  # `import m`, `#include "x.h"`, `require("./m")`
        if whole_module and lang is not None and lang.bare_import_is_star and not ref.alias:
            scope.star_files.extend(files)
            continue
        if ref.alias == name and lang is not None and lang.default_import_by_name:
            scope.modules[local] = tuple(files)  # a default export may be an object: `fmt.format()`
        # `from pkg import mod` / Java `import a.b.C` / `import pkg.mod`: the name may itself be a module
        sub_files = index.files_for_module(_join_module(module, name), path) if ref.module and module != name else []
        targets = [s.id for f in files for s in index.top_level.get(f, {}).get(name, ())]
        if not targets and sub_files:
            targets = [s.id for f in sub_files for s in index.top_level.get(f, {}).get(name, ())]
        if not targets and files and not whole_module and lang is not None:
            if lang.reexports:  # `export { A } from "./a"` / `export * from "./a"` in the imported file
                targets = scopes.exported(files, name)
            if not targets:  # Java `import static a.b.C.m;`: a member of the class the module names
                owner = _last_component(module)
                targets = [m.id for f in files for c in index.top_level.get(f, {}).get(owner, ())
                           if c.kind in CLASS_LIKE for m in index.members.get(c.id, {}).get(name, ())]
        if targets:
            scope.names[local] = (tuple(dict.fromkeys(targets)), _confidence(targets, index, lang))
            continue
        module_files = sub_files or (files if module == name or not ref.module else [])
        if module_files:
            scope.modules[local] = tuple(module_files)
            if module == name and "." in name and not ref.alias:  # `import a.b` binds `a`; keep full name too
                scope.modules[name] = tuple(module_files)
    return scope


def _confidence(targets: Sequence[str], index: GraphIndex, lang: Language | None) -> str:
    """exact for one definition; in languages with overloads, one name defined several times in one
    file (`f(int)`, `f(String)`, TS overload signatures) still counts as one definition."""
    if len(set(targets)) == 1:
        return "exact"
    if lang is not None and lang.static_types:
        if len({(index.by_id[t].path, index.by_id[t].qualified_name) for t in targets}) == 1:
            return "exact"
    return "likely"


def _skip_inline_modules(module: str, ref: Reference, index: GraphIndex) -> str:
    """Inside `mod tests { use super::*; }` the first `super` is the file's own module."""
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


def _last_component(name: str) -> str:
    return _MODULE_SEPARATORS.split(name.rstrip("/"))[-1] if name else name


def _class_bases(parsed: Sequence[ParsedFile], index: GraphIndex, scopes: _Scopes) -> dict[str, list[str]]:
    bases: dict[str, list[str]] = defaultdict(list)
    for pf in parsed:
        for ref in pf.references:
            if ref.kind != "inheritance" or ref.enclosing_symbol_id is None:
                continue
            targets, _ = _resolve_plain(ref, pf, scopes.get(pf.file.path), index)
            bases[ref.enclosing_symbol_id].extend(t for t in targets if index.by_id[t].kind in CLASS_LIKE)
    return bases


def _resolve(ref: Reference, pf: ParsedFile, scope: _FileScope, index: GraphIndex,
             bases: dict[str, list[str]]) -> tuple[list[str], str]:
    if ref.kind == "import":
        local = ref.alias or _last_component(ref.name)
        if local in scope.names and ref.name != "*":
            return list(scope.names[local][0]), scope.names[local][1]
        return [], ""
    if ref.receiver:
        return _resolve_member(ref, pf, scope, index, bases)
    return _resolve_plain(ref, pf, scope, index, bases)


def _resolve_plain(ref: Reference, pf: ParsedFile, scope: _FileScope, index: GraphIndex,
                   bases: dict[str, list[str]] | None = None) -> tuple[list[str], str]:
    name, path = ref.name, pf.file.path
    lang = _language(pf.file.language or "")
    if lang is not None and lang.implicit_this and bases is not None:
        found, confidence = _lexical_member(ref.enclosing_symbol_id, name, index, bases)
        if found:
            return found, confidence
    if name in scope.names:
        ids, confidence = scope.names[name]
        return list(ids), confidence
    local = index.top_level.get(path, {}).get(name)
    if local:
        return [s.id for s in local], _confidence([s.id for s in local], index, lang)
    for star in scope.star_files:
        found = index.top_level.get(star, {}).get(name)
        if found:
            return [s.id for s in found], "likely"
    if lang is not None and not lang.explicit_imports:
        folder = posixpath.dirname(path)
        same_package = [s for f in index.dir_files.get(folder, ()) for s in index.top_level.get(f, {}).get(name, ())]
        if same_package:
            return [s.id for s in same_package], "likely"
        candidates = [s for s in index.by_name.get(name, ()) if s.parent_id is None and s.qualified_name == s.name]
        if len(candidates) == 1 and ref.kind != "attribute":
            return [candidates[0].id], "name-only"
        if len(candidates) > 1 and ref.kind != "attribute" and all(c.kind in CLASS_LIKE for c in candidates):
            return [c.id for c in candidates], "name-only"  # a partial class / reopened module: still one name
    return [], ""


def _lexical_member(symbol_id: str | None, name: str, index: GraphIndex,
                    bases: dict[str, list[str]]) -> tuple[list[str], str]:
    """`name` as a member of the enclosing class (and its bases), then of the classes and modules
    around it; a module reopened in another file (Ruby `module Shop`, C# partial class) counts as
    likely."""
    scopes = []
    cls = _enclosing_class(symbol_id, index)
    while cls is not None:
        scopes.append(cls)
        found = _member(cls.id, name, index, bases)
        if found:
            return found, "exact"
        cls = _enclosing_class(cls.parent_id, index)
    for enclosing in scopes:
        reopened = [s for s in index.by_name.get(enclosing.name, ())
                    if s.id != enclosing.id and s.qualified_name == enclosing.qualified_name and s.kind in CLASS_LIKE]
        found = [m.id for s in reopened for m in index.members.get(s.id, {}).get(name, ())]
        if found:
            return found, "likely"
    return [], ""


def _resolve_member(ref: Reference, pf: ParsedFile, scope: _FileScope, index: GraphIndex,
                    bases: dict[str, list[str]]) -> tuple[list[str], str]:
    receiver = ref.receiver.strip()
    lang = _language(pf.file.language or "")
    self_names = lang.self_names if lang else ()
    if receiver in self_names or receiver.startswith("super("):
        cls = _enclosing_class(ref.enclosing_symbol_id, index)
        if cls is not None:
            if receiver.startswith("super") or receiver in ("base", "parent"):
                found = [t for b in bases.get(cls.id, ()) for t in _member(b, ref.name, index, bases)]
            else:
                found = _member(cls.id, ref.name, index, bases)
            if found:
                return found, "exact"
        return [], ""
    typed, variable = _variable_classes(ref, receiver, scope, index, self_names, lang)
    if typed:
        found = [t for cls_id in typed for t in _member(cls_id, ref.name, index, bases)]
        if found:
            return found, "likely"
    if variable in scope.foreign:
        return [], ""  # declared with a library type: `items.add()` on a List is not ours
    head = re.split(r"[.(\[]|::|->", receiver, maxsplit=1)[0]
    if head in scope.modules and head == receiver:
        found = [s.id for f in scope.modules[head] for s in index.top_level.get(f, {}).get(ref.name, ())]
        return found, _confidence(found, index, lang) if found else ""
    if receiver in scope.modules:
        found = [s.id for f in scope.modules[receiver] for s in index.top_level.get(f, {}).get(ref.name, ())]
        if found:
            return found, _confidence(found, index, lang)
    if "::" in receiver or "\\" in receiver:  # `crate::geo::Point::origin()`, PHP `\App\User::find()`
        found = [s.id for f in index.files_for_module(receiver, pf.file.path)
                 for s in index.top_level.get(f, {}).get(ref.name, ())]
        if found:
            return found, _confidence(found, index, lang)
        owner_ids, confidence = _resolve_plain(replace(ref, name=_last_component(receiver), receiver=None),
                                               pf, scope, index, bases)
        found = [t for o in owner_ids if index.by_id[o].kind in CLASS_LIKE for t in _member(o, ref.name, index, bases)]
        if found:
            return found, "likely"
    if head == receiver and receiver[:1].isalpha():
        owner_ids, confidence = _resolve_plain(replace(ref, name=receiver, receiver=None), pf, scope, index, bases)
        owners = [index.by_id[o] for o in owner_ids if index.by_id[o].kind in CLASS_LIKE]
        found = [t for o in owners for t in _member(o.id, ref.name, index, bases)]
        if found:
            return found, confidence if confidence != "name-only" else "likely"
        if owner_ids and not owners:
            return [], ""  # receiver is a known function/variable: nothing to say about its attribute
        if ref.kind in ("type", "instantiation", "inheritance") and not owner_ids and "::" in ref.line_text:
            # `geo::Point`, `new ns::Foo()`: a namespace we do not model; the name on its own, at most likely
            found, confidence = _resolve_plain(replace(ref, receiver=None), pf, scope, index, bases)
            if found:
                return found, "likely" if confidence == "exact" else confidence
    if ref.kind in ("call", "instantiation"):
        # an object of unknown type: a method name defined once in the whole project
        candidates = [s for s in index.by_name.get(ref.name, ()) if s.kind == "method"]
        generic = lang is not None and ref.name in lang.generic_methods
        if len(candidates) == 1 and not ref.name.startswith("__") and not generic:
            return [candidates[0].id], "name-only"
    return [], ""


def _variable_classes(ref: Reference, receiver: str, scope: _FileScope, index: GraphIndex,
                      self_names: tuple[str, ...], lang: Language | None) -> tuple[tuple[str, ...], tuple]:
    """Classes a receiver variable was assigned or declared with, and the (scope, name) key it was
    found under: a local (`x = Foo()`, `Foo x`), a field through `this.x` / `$this->x`, or (where
    members are in scope without `this`) a bare field."""
    key = (ref.enclosing_symbol_id, receiver)
    if key in scope.variables or key in scope.foreign:
        return scope.variables.get(key, ()), key
    for self_name in self_names:
        for separator in (".", "->"):
            prefix = self_name + separator
            if receiver.startswith(prefix) and re.fullmatch(r"\$?\w+", receiver[len(prefix):]):
                cls = _enclosing_class(ref.enclosing_symbol_id, index)
                if cls is None:
                    return (), key
                field_name = receiver[len(prefix):].lstrip("$")
                key = (cls.id, field_name)
                if key not in scope.variables and key not in scope.foreign:
                    key = (cls.id, "$" + field_name)  # PHP declares `private Repo $repo`, reads `$this->repo`
                return scope.variables.get(key, ()), key
    if lang is not None and lang.implicit_this:
        cls = _enclosing_class(ref.enclosing_symbol_id, index)
        if cls is not None:
            key = (cls.id, receiver)
            return scope.variables.get(key, ()), key
    return (), key


def _returned_classes(function: Symbol, index: GraphIndex, scopes: _Scopes) -> tuple[str, ...]:
    """Our classes a function's signature says it returns: `func New() *Server`, `fn new() -> Self`,
    `f(): Foo`, `public Item add(...)`, `Vec2 vec_add(...)`. The first type name of ours wins."""
    signature = function.signature
    at = re.search(rf"\b{re.escape(function.name)}\b", signature)
    if at is None or function.path not in scopes.files:
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
    words = re.findall(r"[A-Za-z_]\w*", after) + re.findall(r"[A-Za-z_]\w*", before)[-1:]
    pf = scopes.files[function.path]
    for word in words:
        if word == "Self":
            owner = _enclosing_class(function.parent_id, index) or index._owner(function)
            return (owner.id,) if owner is not None else ()
        probe = Reference(word, function.path, function.start_line, 0, "type", function.id, (), "unresolved", "")
        targets, _ = _resolve_plain(probe, pf, scopes.get(function.path), index)
        classes = tuple(t for t in targets if index.by_id[t].kind in CLASS_LIKE)
        if classes:
            return classes
    return ()


def _enclosing_class(symbol_id: str | None, index: GraphIndex) -> Symbol | None:
    while symbol_id is not None:
        sym = index.by_id.get(symbol_id)
        if sym is None:
            return None
        if sym.kind in CLASS_LIKE:
            return sym
        symbol_id = sym.parent_id
    return None


def _member(class_id: str, name: str, index: GraphIndex, bases: dict[str, list[str]], depth: int = 0) -> list[str]:
    """Members called `name` of a class or its bases; a constructor named like its class is never
    what `Name` means inside that class (`class B : A` is the class A, not A's constructor)."""
    owner = index.by_id.get(class_id)
    found = [s.id for s in index.members.get(class_id, {}).get(name, ()) if owner is None or name != owner.name]
    if found or depth > 5:
        return found
    for base in bases.get(class_id, ()):
        found = _member(base, name, index, bases, depth + 1)
        if found:
            return found
    return []
