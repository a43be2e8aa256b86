"""The lookup tables the resolve stage reads: symbols by name, by file and by class (methods
written outside their type included), the enclosing scopes of a reference, and the files a module
string names. resolve.py answers what each reference means with them.

How an import string becomes files is decided by the importing language's registry row
(`codeqa/languages.py`): Go package folders (`import_is_folder`), Rust module paths (`crate::`,
`self::`, `super::`, mod.rs), relative imports (Python `.mod`, `..pkg`; JS `./util` -> util.ts or
util/index.ts), C/Ruby paths next to the importer and Rust paths in the importer's module folder
(`imports_relative_to`), Python packages (`package_init`: a module named in full from the first
folder up that is no package, stubs beside code), otherwise the longest suffix of the dotted path
that names files of ours (Java packages, C#/PHP namespaces by folder).
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from ...languages import Language, language_by_name
from ...types import CLASS_LIKE, ParsedFile, Reference, Symbol, is_file_module, split_symbol_id

_MODULE_SEPARATORS = re.compile(r"::|/|\\|\.")  # PHP namespaces use one backslash
_STRIP_MODULE_PREFIXES = ("crate.", "self.", "super.", "@.", "~.")
_INDEX_NAMES = ("__init__", "index", "mod", "lib", "main")
_SOURCE_EXT = re.compile(r"\.(d\.ts|d\.mts|d\.cts|py|pyi|js|mjs|cjs|jsx|ts|tsx|mts|cts|java|go|rs|c|h|cc|cpp|cxx|hpp|hh|hxx|cs|rb|php"
                         r"|lua|sh|bash|kt|kts|scala|sc|swift|dart|sol|jl|r|R|ex|exs|m|hs|groovy|gvy|gy|gsh)$")
_RUST_PATH_HEADS = ("crate", "self", "super")
# What resolution reads besides files' own symbols and references (Memo.note): which files there
# are (module strings -> files, folders), and whether a type has members defined outside it.
FILE_SET = ("files",)
OUTSIDE_MEMBERS = ("members",)


def name_in_file(path: str, name: str) -> tuple[str, str, str]:
    """What reading the entries for `name` in file `path` notes (Memo.note): its top-level symbols of that
    name, its classes' members, the imports binding it, the evidence about a variable or attribute of
    that name (`x`, `.x`, `.$x` alike). graph/incremental.py resolves the reader again only when the
    file's entries for that name changed, or its shape did (file_shape): a new name moves no reader."""
    return ("f", path, name.lstrip(".$"))


def file_shape(path: str) -> tuple[str, str]:
    """What reading a file's shape notes: its symbols that exist (kinds, parents, signatures), which of
    them have members, its star imports and base classes; not the entries for any one name."""
    return ("s", path)


@dataclass
class GraphIndex:
    """Lookup tables over all symbols of the project."""

    by_id: dict[str, Symbol]
    by_name: dict[str, list[Symbol]]
    top_level: dict[str, dict[str, list[Symbol]]]  # path -> name -> top-level symbols
    members: dict[str, dict[str, list[Symbol]]]  # class (or function) id -> member name -> symbols
    module_files: dict[str, set[str]]  # dotted module key (and its suffixes) -> paths
    dir_files: dict[str, list[str]]  # posix dir -> paths
    languages: dict[str, str]  # path -> language
    stem_files: dict[str, list[str]] = field(default_factory=dict)  # path without extension -> paths
    folder_files: dict[str, set[str]] = field(default_factory=dict)  # dotted folder key (and suffixes) -> paths
    module_trees: dict[str, list[str]] = field(default_factory=dict)  # module folder (`module_roots`) -> paths below it
    # path -> the id of the file's module symbol (graph/modules.py): in by_id, in no table of names,
    # as no name resolves to a file's module; a module an import or a name stands for is its files
    modules: dict[str, str] = field(default_factory=dict)
    _module_cache: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (module, importer) -> files
    _language_cache: dict[str, Language | None] = field(default_factory=dict)  # path -> registry row

    @classmethod
    def build(cls, parsed: Iterable[ParsedFile]) -> "GraphIndex":
        parsed = list(parsed)
        by_id: dict[str, Symbol] = {}
        by_name: dict[str, list[Symbol]] = defaultdict(list)
        top_level: dict[str, dict[str, list[Symbol]]] = defaultdict(lambda: defaultdict(list))
        members: dict[str, dict[str, list[Symbol]]] = defaultdict(lambda: defaultdict(list))
        module_files: dict[str, set[str]] = defaultdict(set)
        dir_files: dict[str, list[str]] = defaultdict(list)
        stem_files: dict[str, list[str]] = defaultdict(list)
        folder_files: dict[str, set[str]] = defaultdict(set)
        module_trees: dict[str, list[str]] = defaultdict(list)
        modules: dict[str, str] = {}
        languages: dict[str, str] = {pf.file.path: pf.file.language or "" for pf in parsed}
        packages = _package_dirs(languages)
        for pf in parsed:
            path = pf.file.path
            dir_files[posixpath.dirname(path)].append(path)
            stem_files[_SOURCE_EXT.sub("", path)].append(path)
            folder = posixpath.dirname(path).split("/") if "/" in path else []
            for i in range(len(folder)):
                folder_files[".".join(folder[i:])].add(path)
            lang = language_of(languages[path])
            keys = _package_module_keys(path, packages, lang.package_init) if lang and lang.package_init else _module_keys(path)
            for key in keys:
                module_files[key].add(path)
            tree = module_folder(path, lang.module_roots) if lang else None
            if tree is not None:  # Swift `import Splash` names Sources/Splash/**
                module_trees[tree].append(path)
                module_files[posixpath.basename(tree)].add(path)
            for sym in pf.symbols:
                by_id[sym.id] = sym
                if is_file_module(sym):
                    modules[path] = sym.id
                    continue
                by_name[sym.name].append(sym)
                if lang is not None and lang.module_symbols and sym.qualified_name != sym.name and sym.kind in CLASS_LIKE:
                    by_name[sym.qualified_name].append(sym)  # a nested module is also named in full: `Shop.Cart`
                if (sym.parent_id is None and sym.qualified_name == sym.name) or (
                        sym.parent_id is not None and lang is not None and lang.members_in_module_scope):
                    top_level[path][sym.name].append(sym)  # Haskell: a constructor, a field, a class method
        index = cls(dict(by_id), dict(by_name), top_level, members, module_files, dir_files, languages,
                    stem_files, folder_files, module_trees=dict(module_trees), modules=modules)
        for sym in by_id.values():
            if modules.get(sym.path) == sym.id:
                continue
            if sym.parent_id is not None:
                members[sym.parent_id][sym.name].append(sym)
            elif sym.qualified_name != sym.name:  # `func (s *T) M()` / `void T::m()` / `impl T` elsewhere
                owner = index.owner(sym)
                if owner is not None:
                    members[owner.id][sym.name].append(sym)
        return index

    def language(self, path: str) -> Language | None:
        """The registry row of a file's language (None: no grammar, or a path we do not know)."""
        found = self._language_cache.get(path, False)
        if found is False:
            found = self._language_cache[path] = language_of(self.languages.get(path, ""))
        return found

    def package_of(self, path: str) -> tuple[str, list[str]]:
        """The files whose top-level names `path` sees without an import, with a key for them: its module
        tree (`module_roots`: key ends in "/"), else its folder."""
        lang = self.language(path)
        tree = module_folder(path, lang.module_roots) if lang is not None else None
        if tree is not None:
            return tree + "/", self.module_trees.get(tree, [])
        folder = posixpath.dirname(path)
        return folder, self.dir_files.get(folder, [])

    def file_of(self, scope: str) -> str:
        """The file a scope (a symbol id, or a path) belongs to."""
        symbol = self.by_id.get(scope)
        if symbol is not None:
            return symbol.path
        return split_symbol_id(scope)[0] if "#" in scope else scope

    def enclosing_class(self, symbol_id: str | None) -> Symbol | None:
        """The innermost class-like symbol at or around `symbol_id`."""
        while symbol_id is not None:
            sym = self.by_id.get(symbol_id)
            if sym is None:
                return None
            holder = self.by_id.get(sym.parent_id) if sym.kind == "object" and sym.parent_id else None
            if holder is not None and holder.kind == "object":
                symbol_id = holder.id  # a component's `watch: {...}`: `this` in its methods is the component
                continue
            if sym.kind in CLASS_LIKE:
                return sym
            if sym.parent_id is None and sym.kind == "method" and sym.qualified_name != sym.name:
                return self.owner(sym)  # written outside its type (`void T::m()`, an Objective-C @implementation)
            symbol_id = sym.parent_id
        return None

    def scopes(self, ref: Reference) -> Iterator[str]:
        """The enclosing symbols of `ref`, innermost first, then its file."""
        scope = ref.enclosing_symbol_id
        while scope is not None:
            yield scope
            symbol = self.by_id.get(scope)
            scope = symbol.parent_id if symbol is not None else None
        yield ref.path

    def owner(self, method: Symbol) -> Symbol | None:
        """The type a method defined outside it belongs to: same file, else same folder, else same
        file stem (shape.hpp / shape.cpp), else the only type of that name (in its language family)."""
        type_name = method.qualified_name.rsplit(".", 1)[0].rsplit(".", 1)[-1]
        family = _family(method.language)
        candidates = [s for s in self.by_name.get(type_name, ()) if s.kind in CLASS_LIKE and _family(s.language) == family]
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
        """Files a module string names, seen from the importing file (relative imports included): only
        files of the importer's language family, as no module system crosses into another (a Python
        `import torch` is no folder of C++ headers named torch/, nor `#include <torch/types.h>` torch/types.py)."""
        key = (module, importer)
        found = self._module_cache.get(key)
        if found is None:
            lang = self.language(importer)
            family = lang.family_name if lang is not None else None
            found = self._module_cache[key] = _prefer_stubs_or_code(self._files_for_module(module, importer, family),
                                                                    importer, lang)
        return found

    def _files_for_module(self, module: str, importer: str, family: str | None) -> list[str]:
        module = module.strip().strip("\"'")
        if not module:
            return []
        lang = self.language(importer)
        for pattern, replacement in lang.import_rewrites if lang is not None else ():
            module = re.sub(pattern, replacement, module)
        if lang is not None and lang.import_is_folder:
            return self._longest_suffix(self.folder_files, _dotted(module), family)
        if lang is not None and lang.imports_relative_to == "module" and module.split("::")[0] in _RUST_PATH_HEADS:
            found = self._rust_path(module, importer, family)
            if found:
                return found
        if module.startswith("."):  # relative: Python `.mod`, `..pkg`, JS `./x`, `../x`
            base = posixpath.dirname(importer)
            if "/" in module or module in (".", ".."):  # JS-style path
                target = posixpath.normpath(posixpath.join(base, module))
                if "/" in module:
                    found = self._files_at(target, family)
                    if found:
                        return found
                key = _dotted(_SOURCE_EXT.sub("", target))
                return self._kin(self.module_files.get(key, ()), family)
            dots = len(module) - len(module.lstrip("."))
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            rest = module[dots:]
            key = _dotted(posixpath.join(base, rest.replace(".", "/")) if rest else base)
            return self._kin(self.module_files.get(key, ()), family)
        if lang is not None and lang.imports_relative_to:
            base = posixpath.dirname(importer) if lang.imports_relative_to == "file" else _rust_module_dir(importer)
            found = self._files_at(posixpath.join(base, module.replace("::", "/")), family)
            if found:
                return found
        if lang is not None and lang.package_init:  # the import names the module in full: `web.c` is no file `web` + ".c"
            return self._kin(self.module_files.get(_dotted(module), ()), family)
        if lang is not None and lang.modules_in_full:  # `Shop.Item` is a file .../Shop/Item.hs, no folder Shop/Item/
            tail = "/" + _dotted(module).replace(".", "/")
            return [f for f in self._kin(self.module_files.get(_dotted(module), ()), family)
                    if ("/" + _SOURCE_EXT.sub("", f)).endswith(tail)]
        key = _dotted(_SOURCE_EXT.sub("", module))
        for prefix in _STRIP_MODULE_PREFIXES:
            if key.startswith(prefix):
                key = key[len(prefix):]
        return self._longest_suffix(self.module_files, key, family)

    def _kin(self, files: Iterable[str], family: str | None) -> list[str]:
        """The files of language family `family` among `files`, sorted (all of them for None: an importer
        of no language)."""
        if family is None:
            return sorted(files)
        language = self.language
        return sorted(f for f in files if (lang := language(f)) is not None and lang.family_name == family)

    def _longest_suffix(self, table: dict[str, set[str]], key: str, family: str | None) -> list[str]:
        parts = key.split(".")
        for start in range(len(parts)):  # longest suffix that names files of ours (of the importer's family)
            files = self._kin(table.get(".".join(parts[start:]), ()), family)
            if files:
                return files
        return []

    def _files_at(self, target: str, family: str | None) -> list[str]:
        """Files for a path without guessing: `x.ts`/`x.h`+`x.c` (same stem), else `x/index.*`, `x/mod.rs`..."""
        stem = posixpath.normpath(_SOURCE_EXT.sub("", target))
        found = self._kin(self.stem_files.get(stem, ()), family)
        if found:
            return found
        for index_name in _INDEX_NAMES:
            found = self._kin(self.stem_files.get(posixpath.join(stem, index_name), ()), family)
            if found:
                return found
        return []

    def _rust_path(self, module: str, importer: str, family: str | None) -> list[str]:
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
        return self._files_at(posixpath.join(base, *parts), family) if parts else self._files_at(base, family)

    def _crate_root(self, importer: str) -> str | None:
        folder = posixpath.dirname(importer)
        while True:
            if posixpath.join(folder, "lib") in self.stem_files or posixpath.join(folder, "main") in self.stem_files:
                return folder
            if not folder:
                return None
            folder = posixpath.dirname(folder)


def module_folder(path: str, roots: tuple[str, ...]) -> str | None:
    """`Sources/Splash/Grammar/X.swift` with roots ("Sources",) -> `Sources/Splash`: the innermost root
    folder's child that holds the file; None when no root folder holds it."""
    parts = path.split("/")[:-1]
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] in roots:
            return "/".join(parts[:i + 2])
    return None


def _family(language: str) -> str | None:
    lang = language_of(language)
    return lang.family_name if lang is not None else None


def language_of(name: str) -> Language | None:
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


def _package_dirs(languages: dict[str, str]) -> set[str]:
    """Folders that are packages: they hold the language's package file (`__init__.py`)."""
    dirs = set()
    for path, name in languages.items():
        lang = language_of(name)
        if lang is not None and lang.package_init and file_stem(path) == lang.package_init:
            dirs.add(posixpath.dirname(path))
    return dirs


def _package_module_keys(path: str, packages: set[str], package_init: str) -> list[str]:
    """`src/pkg/sub/mod.py` in packages pkg and pkg/sub -> pkg.sub.mod (from the first folder up that is
    no package, as on sys.path) and src.pkg.sub.mod (from the project root); `pkg/__init__.py` -> pkg."""
    parts = [p for p in _SOURCE_EXT.sub("", path).split("/") if p]
    folder = posixpath.dirname(path)
    if file_stem(path) == package_init:
        parts = parts[:-1]
        folder = posixpath.dirname(folder)
    depth = 0
    while folder and folder in packages:
        depth += 1
        folder = posixpath.dirname(folder)
    top = len(parts) - depth - 1
    return [".".join(parts)] + ([".".join(parts[top:])] if top > 0 else [])


def file_stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0]


def _prefer_stubs_or_code(files: list[str], importer: str, lang: Language | None) -> list[str]:
    """A stub (`.pyi`) beside its module: stubs see the stub, everyone else the code."""
    if lang is None or not lang.stub_extensions or len(files) < 2:
        return files
    stubs = {posixpath.splitext(f)[0] for f in files if f.endswith(lang.stub_extensions)}
    code = {posixpath.splitext(f)[0] for f in files if not f.endswith(lang.stub_extensions)}
    paired = stubs & code
    if not paired:
        return files
    want_stub = importer.endswith(lang.stub_extensions)
    return [f for f in files if posixpath.splitext(f)[0] not in paired or f.endswith(lang.stub_extensions) == want_stub]


def last_component(name: str) -> str:
    return _MODULE_SEPARATORS.split(name.rstrip("/"))[-1] if name else name


def join_module(module: str, name: str) -> str:
    """`pkg.mod` + `x` -> `pkg.mod.x`; `crate::a` + `x` -> `crate::a::x`; `App\\Models` + `x` likewise."""
    for separator in ("::", "\\"):
        if separator in module:
            return f"{module}{separator}{name}"
    return f"{module}.{name}"
