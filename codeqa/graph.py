"""Resolve stage: references -> definitions across files.

Order of evidence, strongest first:
  1. imports and aliases (`from x import Y as Z`, JS import/require, Java/Go/Rust/C# imports) -> exact
  2. the enclosing scope: same-file definitions, `self.m()` / `this.m()` on the enclosing class
     (and its bases), `Alias.m()` on an imported class or module -> exact
  3. same folder/package (Go, Java, C#) or star imports -> likely
  4. a name defined exactly once in the project (languages without explicit imports) -> name-only
Calls whose target is a class become instantiations. Unresolved references are dropped.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

from .languages import language_by_name
from .parse import CLASS_LIKE
from .types import ParsedFile, Reference, Symbol

_MODULE_SEPARATORS = re.compile(r"::|/|\\\\|\.")
_STRIP_MODULE_PREFIXES = ("crate.", "self.", "super.", "@.", "~.")
_INDEX_NAMES = ("__init__", "index", "mod", "lib", "main")
_SOURCE_EXT = re.compile(r"\.(py|pyi|js|mjs|cjs|jsx|ts|tsx|mts|cts|java|go|rs|c|h|cc|cpp|hpp|cs|rb|php)$")


@dataclass
class _FileScope:
    """What one file can name: imported symbols, imported modules (alias -> files), star imports."""

    names: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)  # local name -> (ids, conf)
    modules: dict[str, tuple[str, ...]] = field(default_factory=dict)  # local name -> file paths
    star_files: list[str] = field(default_factory=list)
    variables: dict[tuple[str | None, str], tuple[str, ...]] = field(default_factory=dict)  # (scope, var) -> class ids


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

    @classmethod
    def build(cls, parsed: Iterable[ParsedFile]) -> "GraphIndex":
        by_id: dict[str, Symbol] = {}
        by_name: dict[str, list[Symbol]] = defaultdict(list)
        top_level: dict[str, dict[str, list[Symbol]]] = defaultdict(lambda: defaultdict(list))
        members: dict[str, dict[str, list[Symbol]]] = defaultdict(lambda: defaultdict(list))
        module_files: dict[str, set[str]] = defaultdict(set)
        dir_files: dict[str, list[str]] = defaultdict(list)
        languages: dict[str, str] = {}
        for pf in parsed:
            path = pf.file.path
            languages[path] = pf.file.language or ""
            dir_files[posixpath.dirname(path)].append(path)
            for key in _module_keys(path):
                module_files[key].add(path)
            for sym in pf.symbols:
                by_id[sym.id] = sym
                by_name[sym.name].append(sym)
                if sym.parent_id is None:
                    top_level[path][sym.name].append(sym)
        for sym in by_id.values():
            if sym.parent_id is not None:
                members[sym.parent_id][sym.name].append(sym)
        return cls(dict(by_id), dict(by_name), top_level, members, module_files, dir_files, languages)

    def files_for_module(self, module: str, importer: str) -> list[str]:
        """Files a module string names, seen from the importing file (relative imports included)."""
        module = module.strip().strip("\"'")
        if not module:
            return []
        if module.startswith("."):  # relative: Python `.mod`, `..pkg`, JS `./x`, `../x`
            base = posixpath.dirname(importer)
            if "/" in module or module in (".", ".."):  # JS-style path
                target = posixpath.normpath(posixpath.join(base, module))
                key = _dotted(_SOURCE_EXT.sub("", target))
                return sorted(self.module_files.get(key, ()))
            dots = len(module) - len(module.lstrip("."))
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            rest = module[dots:]
            key = _dotted(posixpath.join(base, rest.replace(".", "/")) if rest else base)
            return sorted(self.module_files.get(key, ()))
        key = _dotted(_SOURCE_EXT.sub("", module))
        for prefix in _STRIP_MODULE_PREFIXES:
            if key.startswith(prefix):
                key = key[len(prefix):]
        parts = key.split(".")
        for start in range(len(parts)):  # longest suffix that names files of ours
            files = self.module_files.get(".".join(parts[start:]))
            if files:
                return sorted(files)
        return []


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


def resolve_references(parsed: Sequence[ParsedFile], index: GraphIndex | None = None) -> list[Reference]:
    """Every resolvable reference with target_ids and confidence set; the rest dropped."""
    index = index or GraphIndex.build(parsed)
    scopes = {pf.file.path: _file_scope(pf, index) for pf in parsed}
    bases = _class_bases(parsed, index, scopes)
    resolved: list[Reference] = []
    for pf in parsed:
        scope = scopes[pf.file.path]
        for ref in pf.references:  # `x = Foo()` / `x: Foo`: remember x's class in its scope
            if ref.assigned and ref.kind in ("call", "instantiation", "type"):
                targets, _ = _resolve(ref, pf, scope, index, bases)
                classes = tuple(t for t in targets if index.by_id[t].kind in CLASS_LIKE)
                if classes:
                    scope.variables[(ref.enclosing_symbol_id, ref.assigned)] = classes
        for ref in pf.references:
            targets, confidence = _resolve(ref, pf, scope, index, bases)
            if not targets:
                continue
            kind = ref.kind
            if kind == "call" and all(index.by_id[t].kind in CLASS_LIKE for t in targets):
                kind = "instantiation"
            resolved.append(replace(ref, target_ids=tuple(targets), confidence=confidence, kind=kind))
    return resolved


def _file_scope(pf: ParsedFile, index: GraphIndex) -> _FileScope:
    scope = _FileScope()
    path = pf.file.path
    for ref in pf.references:
        if ref.kind != "import":
            continue
        module = ref.module or ref.name
        name = ref.name
        local = ref.alias or _last_component(name)
        if name == "*":
            scope.star_files.extend(index.files_for_module(module, path))
            continue
        files = index.files_for_module(module, path) if ref.module else []
        # `from pkg import mod` / Java `import a.b.C` / `import pkg.mod`: the name may itself be a module
        sub_files = index.files_for_module(f"{module}.{name}", path) if ref.module and module != name else []
        targets = [s.id for f in files for s in index.top_level.get(f, {}).get(name, ())]
        if not targets and sub_files:
            targets = [s.id for f in sub_files for s in index.top_level.get(f, {}).get(name, ())]
        if targets:
            scope.names[local] = (tuple(dict.fromkeys(targets)), "exact" if len(set(targets)) == 1 else "likely")
            continue
        module_files = sub_files or (files if module == name or not ref.module else [])
        if module_files:
            scope.modules[local] = tuple(module_files)
            if module == name and "." in name and not ref.alias:  # `import a.b` binds `a`; keep full name too
                scope.modules[name] = tuple(module_files)
    return scope


def _last_component(name: str) -> str:
    return _MODULE_SEPARATORS.split(name.rstrip("/"))[-1] if name else name


def _class_bases(parsed: Sequence[ParsedFile], index: GraphIndex, scopes: dict[str, _FileScope]) -> dict[str, list[str]]:
    bases: dict[str, list[str]] = defaultdict(list)
    for pf in parsed:
        for ref in pf.references:
            if ref.kind != "inheritance" or ref.enclosing_symbol_id is None:
                continue
            targets, _ = _resolve_plain(ref, pf, scopes[pf.file.path], index)
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
    lang = language_by_name(pf.file.language) if pf.file.language else None
    if lang is not None and lang.implicit_this and bases is not None:
        cls = _enclosing_class(ref.enclosing_symbol_id, index)
        if cls is not None:
            found = _member(cls.id, name, index, bases)
            if found:
                return found, "exact"
    if name in scope.names:
        ids, confidence = scope.names[name]
        return list(ids), confidence
    local = index.top_level.get(path, {}).get(name)
    if local:
        return [s.id for s in local], "exact" if len(local) == 1 else "likely"
    for star in scope.star_files:
        found = index.top_level.get(star, {}).get(name)
        if found:
            return [s.id for s in found], "likely"
    if lang is not None and not lang.explicit_imports:
        folder = posixpath.dirname(path)
        same_package = [s for f in index.dir_files.get(folder, ()) for s in index.top_level.get(f, {}).get(name, ())]
        if same_package:
            return [s.id for s in same_package], "likely"
        candidates = [s for s in index.by_name.get(name, ()) if s.parent_id is None]
        if len(candidates) == 1 and ref.kind != "attribute":
            return [candidates[0].id], "name-only"
    return [], ""


def _resolve_member(ref: Reference, pf: ParsedFile, scope: _FileScope, index: GraphIndex,
                    bases: dict[str, list[str]]) -> tuple[list[str], str]:
    receiver = ref.receiver.strip()
    lang = language_by_name(pf.file.language) if pf.file.language else None
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
    typed = scope.variables.get((ref.enclosing_symbol_id, receiver))
    if typed:
        found = [t for cls_id in typed for t in _member(cls_id, ref.name, index, bases)]
        if found:
            return found, "likely"
    head = re.split(r"[.(\[]|::|->", receiver, maxsplit=1)[0]
    if head in scope.modules and head == receiver:
        found = [s.id for f in scope.modules[head] for s in index.top_level.get(f, {}).get(ref.name, ())]
        return found, "exact" if len(found) == 1 else ("likely" if found else "")
    if receiver in scope.modules:
        found = [s.id for f in scope.modules[receiver] for s in index.top_level.get(f, {}).get(ref.name, ())]
        if found:
            return found, "exact" if len(found) == 1 else "likely"
    if head == receiver and receiver[:1].isalpha():
        owner_ids, confidence = _resolve_plain(replace(ref, name=receiver, receiver=None), pf, scope, index, bases)
        owners = [index.by_id[o] for o in owner_ids if index.by_id[o].kind in CLASS_LIKE]
        found = [t for o in owners for t in _member(o.id, ref.name, index, bases)]
        if found:
            return found, confidence if confidence != "name-only" else "likely"
        if owner_ids and not owners:
            return [], ""  # receiver is a known function/variable: nothing to say about its attribute
    if ref.kind in ("call", "instantiation"):
        # an object of unknown type: a method name defined once in the whole project
        candidates = [s for s in index.by_name.get(ref.name, ()) if s.kind == "method"]
        if len(candidates) == 1 and not ref.name.startswith("__"):
            return [candidates[0].id], "name-only"
    return [], ""


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
    found = [s.id for s in index.members.get(class_id, {}).get(name, ())]
    if found or depth > 5:
        return found
    for base in bases.get(class_id, ()):
        found = _member(base, name, index, bases, depth + 1)
        if found:
            return found
    return []
