"""What an import binds: the name it makes visible in its scope, or none (it acts as a star import), and
what one whose module is none of ours stands for.

Shared by the resolver (graph/resolve.py) and the incremental bookkeeping (graph/incremental.py).
"""

from __future__ import annotations

from typing import Sequence

from ...languages import Language
from ...types import CLASS_LIKE, Reference
from .index import GraphIndex, last_component, name_in_file
from .values import OUTSIDE, UNKNOWN, Memo, Value


def binds_no_name(ref: Reference, lang: Language | None) -> bool:
    """An import of a whole module that makes its names visible instead of binding it to a name
    (`#include "x.h"`, `using Ns;`, `require_relative "x"`): it acts as a star import."""
    return (lang is not None and lang.bare_import_is_star and not ref.alias and ref.module is not None
            and ref.module == ref.name)


def skip_inline_modules(module: str, ref: Reference, index: GraphIndex) -> str:
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


def import_local(ref: Reference, lang: Language | None) -> str:
    """The name an import binds in its scope."""
    if ref.alias:  # `alias Shop.Cart` binds Cart where modules are symbols
        return last_component(ref.alias) if lang is not None and lang.module_symbols else ref.alias
    if lang is not None and lang.package_init and (ref.module is None or ref.module == ref.name):
        return ref.name.split(".")[0]  # Python `import a.b` binds `a`
    return last_component(ref.name)


def outside_if_explicit(lang: Language | None) -> Value:
    """What an import whose module names no file of ours binds: in Python (or Haskell) another project's
    module (the standard library, a dependency); elsewhere the module path may just be one we cannot map."""
    return OUTSIDE if lang is not None and (lang.package_init or lang.modules_in_full) else UNKNOWN


def static_import_members(index: GraphIndex, memo: Memo, files: Sequence[str], owner: str, name: str) -> tuple[str, ...]:
    """Java `import static a.b.C.m;`: the ids of members `name` of the classes `owner` in `files` (the module's).
    Worked out once per question and kept (it asks nothing that could cycle): an import asked again and
    again in an import cycle (primevue's 400 `*/style/index.mjs`) looked at every file of its module each time."""
    return memo.value(("static", tuple(files), owner, name), (), _static_import_members,
                      index, memo, files, owner, name)


def _static_import_members(index: GraphIndex, memo: Memo, files: Sequence[str], owner: str,
                           name: str) -> tuple[str, ...]:
    for f in files:
        memo.note(name_in_file(f, owner))
        memo.note(name_in_file(f, name))
    memo.note(("m", name))
    return tuple(m.id for f in files for c in index.top_level.get(f, {}).get(owner, ())
                 if c.kind in CLASS_LIKE for m in index.members.get(c.id, {}).get(name, ()))
