"""Modules that are symbols named by their full dotted name, not files (`module_symbols` languages:
Elixir `defmodule Shop.Cart`, in any file, whatever the file is called).

A module name written in full (`Shop.Cart`), through an alias (`alias Shop.Cart` binds `Cart`, `alias
Shop.{Cart, Item}`, `alias Shop.Tax, as: T`), or below one (`Cart.Line` after `alias Shop.Cart`) is
the class-like symbol with that qualified name: a top-level `defmodule Shop.Cart` or a `defmodule
Cart` nested in `defmodule Shop`. Its functions are its members, so `Cart.add()` is member `add` of
it; an `import Shop.Util` brings Shop.Util's members into scope by name. A module name that no
symbol of ours has is another project's (`Enum`, `GenServer`): OUTSIDE, never guessed by name.
Used by graph/resolve.py (names, imports, star imports) and graph/members.py (receivers).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ...types import CLASS_LIKE, Reference
from .index import GraphIndex
from .values import OUTSIDE, UNKNOWN, Memo, Value

MODULE_NAME = re.compile(r"[A-Z]\w*(?:\.[A-Z]\w*)*")  # `Cart`, `Shop.Cart`: how a module is written


def named_modules(index: GraphIndex, memo: Memo, dotted: str) -> list[str]:
    """Ids of the class-like symbols whose qualified name is `dotted`. A symbol's name is a suffix
    of its qualified name (`defmodule Cart.Line` inside `defmodule Shop` is `Shop.Cart.Line`), so
    each suffix is looked up by name."""
    parts = dotted.split(".")
    found: list[str] = []
    for i in range(len(parts)):
        name = ".".join(parts[i:])
        memo.note(("n", name))
        found.extend(s.id for s in index.by_name.get(name, ()) if s.kind in CLASS_LIKE and s.qualified_name == dotted)
    return list(dict.fromkeys(found))


def module_value(index: GraphIndex, memo: Memo, name: str, ref: Reference,
                 name_value: Callable[[str, Reference], Value]) -> Value:
    """What a module name written where `ref` stands means: below an alias or module its first
    segment names (`Cart.Line`), a module nested in an enclosing one (`Line` inside `Shop.Cart`),
    else the module of that full name; OUTSIDE for a module name that is none of ours."""
    if not MODULE_NAME.fullmatch(name):
        return UNKNOWN
    head, _, rest = name.partition(".")
    if rest:
        bound = name_value(head, ref)
        for prefix in _qualified_names(index, bound.ids):
            ids = named_modules(index, memo, f"{prefix}.{rest}")
            if ids:
                return Value(ids=tuple(ids), classes=tuple(ids))
    scope = index.enclosing_class(ref.enclosing_symbol_id)
    while scope is not None:
        memo.note(scope.path)
        ids = named_modules(index, memo, f"{scope.qualified_name}.{name}")
        if ids:
            return Value(ids=tuple(ids), classes=tuple(ids))
        scope = index.enclosing_class(scope.parent_id)
    ids = named_modules(index, memo, name)
    return Value(ids=tuple(ids), classes=tuple(ids)) if ids else OUTSIDE


def imported_module(index: GraphIndex, memo: Memo, ref: Reference) -> Value:
    """What `alias Shop.Cart` (module and name alike) or `alias Shop.{Cart}` (module Shop, name
    Cart) names: the module symbol of that full name, or OUTSIDE."""
    whole = ref.module is None or ref.module == ref.name
    ids = named_modules(index, memo, ref.name if whole else f"{ref.module}.{ref.name}")
    return Value(ids=tuple(ids), classes=tuple(ids)) if ids else OUTSIDE


def star_member(index: GraphIndex, memo: Memo, stars: Sequence[Reference], name: str,
                find: Callable[[str, str], list[str]]) -> list[str]:
    """`name` as the modules of `import Shop.Util` (`stars`) declare it: their members' ids."""
    return list(dict.fromkeys(m for star in stars for module in imported_module(index, memo, star).ids
                              for m in find(module, name)))


def _qualified_names(index: GraphIndex, ids: Sequence[str]) -> list[str]:
    return [index.by_id[i].qualified_name for i in ids if index.by_id[i].kind in CLASS_LIKE]
