"""Modules as symbols: a file of a language whose files are modules (the registry's `file_modules`:
Python, JavaScript, TypeScript) is a symbol of kind "module", so that "how is the rich_utils module
used?" and `codeqa refs rich_utils` find it, and its references are its imports and the names used
through it (`from . import rich_utils`, `import pkg.mod`, `rich_utils.f()`, `import * as m from './m'`).

    pkg/mod.py        -> module `mod` (qualified `pkg.mod`), lines 1..last, the module's docstring
    pkg/__init__.py   -> module `pkg` (a package: signature "package pkg")
    web/index.ts      -> module `web`

The symbol is made once the file is chunked (parse_pool), so chunks and their embedded text are those
of the file's other symbols; resolution (resolve.py) binds an import or a name whose value is a module
(its files, no symbol) to these symbols. Its id is `path#qualified@1`; where a definition of the file
already has that id (`def main():` on line 1 of main.py) the file gets no module symbol.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace
from typing import Any

from ...languages import Language
from ...types import ParsedFile, Reference, Symbol, symbol_id
from ..parse_defs import _Def, _docstring
from .index import _SOURCE_EXT, FILE_SET, GraphIndex, language_of, name_in_file
from .values import Memo, Value

MODULE_KIND = "module"


def with_module_symbol(parsed: ParsedFile, text: str, tree) -> ParsedFile:
    """`parsed` with its file's module symbol last (unchanged where its language's files are no modules)."""
    lang = language_of(parsed.file.language or "")
    if lang is None or not lang.file_modules:
        return parsed
    symbol = module_symbol(parsed.file.path, lang, text, tree)
    if symbol is None or any(s.id == symbol.id for s in parsed.symbols):
        return parsed
    return ParsedFile(parsed.file, (*parsed.symbols, symbol), parsed.references, parsed.error)


def module_symbol(path: str, lang: Language, text: str, tree) -> Symbol | None:
    """The module symbol of the file at `path` (None for a folder's index file at the project's root)."""
    dotted = module_dotted_name(path, lang)
    if not dotted:
        return None
    name = dotted.rsplit(".", 1)[-1]
    lines = max(1, text.count("\n") + (0 if text.endswith("\n") or not text else 1))
    package = _stem(path) in lang.file_modules
    signature = f"{'package' if package else 'module'} {dotted}"
    return Symbol(symbol_id(path, dotted, 1), name, dotted, MODULE_KIND, lang.name, path, 1, lines, signature,
                  _module_docstring(tree, text, lang), None)


def module_dotted_name(path: str, lang: Language) -> str:
    """`pkg/mod.py` -> pkg.mod; `pkg/__init__.py`, `web/index.ts` -> pkg, web (the folder they stand for);
    "" for an index file with no folder. The path is the project's: a src/ layout keeps `src.`."""
    parts = [p for p in _SOURCE_EXT.sub("", path).split("/") if p]
    if parts and parts[-1] in lang.file_modules:
        parts = parts[:-1]
    return ".".join(parts)


def file_module_value(index: GraphIndex, memo: Memo, value: Value) -> Value:
    """A module's value (its files, no symbol) bound to its files' module symbols. Whether a file has one
    depends on its definitions too (an id taken on line 1): its entries for the module's name are noted."""
    ids = []
    for path in value.files:
        found = index.modules.get(path)
        lang = index.language(path)
        if lang is not None and lang.file_modules:
            memo.note(name_in_file(path, index.by_id[found].name if found else module_dotted_name(path, lang).rsplit(".", 1)[-1]))
        if found:
            ids.append(found)
    return replace(value, ids=tuple(ids)) if ids else value


def may_import_module(ref: Reference, lang: Language | None) -> bool:
    """Whether `ref` is an import that may name a module symbol (`from . import util`, `import pkg.mod`),
    whose name no table of names holds."""
    return ref.kind == "import" and ref.name != "*" and lang is not None and bool(lang.file_modules)


def imported_in_full(resolver: Any, ref: Reference, value: Value) -> Value:
    """What an import refers to, where that is not what it binds: Python's `import pkg.mod` binds the
    package `pkg`, and refers to the module `pkg.mod`."""
    lang = resolver.language(ref.path)
    if (lang is None or not lang.package_init or ref.alias or "." not in ref.name
            or ref.module not in (None, ref.name)):
        return value
    resolver.memo.note(FILE_SET)
    files = resolver.index.files_for_module(ref.name, ref.path)
    return Value(files=tuple(files)) if files else value


def _stem(path: str) -> str:
    return _SOURCE_EXT.sub("", posixpath.basename(path))


def _module_docstring(tree, text: str, lang: Language) -> str:
    """A Python module's docstring (its first statement, a string); "" elsewhere or without one."""
    if tree is None or not lang.docstring_in_body:
        return ""
    first = next(iter(tree.root_node.named_children), None)
    if first is not None and first.type == "expression_statement" and first.named_children:
        first = first.named_children[0]  # grammars before 0.23 wrap it; later ones put the string at the top
    if first is None or first.type != "string":
        return ""
    return _docstring(_Def(tree.root_node, MODULE_KIND, "", None, first), text.encode("utf-8"))
