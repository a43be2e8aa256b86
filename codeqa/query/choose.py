"""Which definitions a name in a question means, among the symbols an index holds under it.

    mention (question.py) + symbols --choose_symbols--> Choice(symbols, others, passed_over)

Ranking over given Symbols, no index: the retriever (retrieve.py) looks each mention up and asks here.
- A qualifier narrows: "the invoke method of Command" keeps members of Command; "in core" keeps
  symbols whose path or parent has that word; "function"/"class"/"method" keeps that kind.
- When a name is still shared, package code beats tests, docs, examples and type stubs; public beats
  private (`_echo`); the exact spelling beats a case-insensitive match; a bare name prefers top-level
  definitions to members; a public module beats a private one (`pkg/_compat.py`). Symbols that still
  differ in qualified name after all that are ambiguous: the answer names the one it chose and lists
  the others (`Choice.others`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..roles import ROLE_ORDER, path_role
from ..types import Symbol, name_key


@dataclass(frozen=True)
class Mention:
    """A name the question uses.

    strength: 4 written as code (`x`, a.b, path:Name), 3 identifier-shaped (CamelCase, snake_case) or
    standing in a subject slot, 2 spelled over several words ("encoder class"), 1 one plain word.
    kinds: symbol kinds a kind word next to it allows ("the echo function" -> function).
    container: the qualifier that narrows it ("of Command", "in core"), as written.
    subject: it is what a usage question asks about.
    """

    text: str
    strength: int
    start: int
    end: int
    kinds: tuple[str, ...] = ()
    container: str | None = None
    subject: bool = False


@dataclass(frozen=True)
class Choice:
    """The symbols a mention is taken to mean (one qualified name: its overloads, stubs and
    re-definitions together) and the other definitions that still matched (`others`: non-empty when the
    name stayed ambiguous). `passed_over`: package definitions of the same name that the rules set
    aside (a method when the bare name meant a function, a helper in a private module), one each; the
    answer names them, so no reading is dropped in silence."""

    symbols: tuple[Symbol, ...]
    others: tuple[Symbol, ...] = ()
    passed_over: tuple[Symbol, ...] = ()

    @property
    def ambiguous(self) -> bool:
        return bool(self.others)


def matching_symbols(mention: Mention, symbols: Sequence[Symbol]) -> list[Symbol]:
    """`symbols` (all found under the mention's lookup key) narrowed by its spelling, kind word and container."""
    text = mention.text.replace("::", ".")
    name = text.rpartition(".")[2]
    out = list(symbols)
    if "." in text:
        qualified = [s for s in out if s.qualified_name == text or s.qualified_name.endswith("." + text)
                     or _module_qualified(s, text)]
        out = qualified or out
    if mention.strength >= 3:
        exact = [s for s in out if s.name == name or s.qualified_name == text]
        out = exact or out
    if mention.kinds:
        out = [s for s in out if s.kind in mention.kinds] or out
    if mention.container:
        out = [s for s in out if _in_container(s, mention.container)] or out
    return out


def _module_qualified(sym: Symbol, text: str) -> bool:
    """`click.echo` / `utils.echo`: the module path (package or file stem) and the name."""
    module, _, name = text.rpartition(".")
    if sym.name != name and not sym.qualified_name.endswith("." + name):
        return False
    parts = [p.removesuffix(".py") for p in sym.path.replace("\\", "/").split("/")]
    return module.split(".")[-1] in parts or module.split(".")[0] in parts


def _in_container(sym: Symbol, container: str) -> bool:
    key = name_key(container)
    parent = sym.qualified_name.rpartition(".")[0]
    if parent and (name_key(parent.rpartition(".")[2]) == key or name_key(parent) == key):
        return True
    stems = [name_key(p.rsplit(".", 1)[0]) for p in sym.path.split("/")]
    return key in stems


def rank_key(sym: Symbol, mention: Mention | None = None) -> tuple:
    """Sort key: package code before tests/docs/examples/stubs, public before private, top-level before members
    (unless a kind word or container asks for a member), a public module before a private one (`pkg/_utils.py`:
    a helper beside the API), classes before other kinds, then place. The first six decide between readings."""
    role = path_role(sym.path)
    private = sym.name.startswith("_") and not (sym.name.startswith("__") and sym.name.endswith("__"))
    private_parent = any(map(_private_part, sym.qualified_name.split(".")[:-1]))
    wants_member = bool(mention and (mention.container or "method" in mention.kinds))
    member = sym.parent_id is not None
    spelled = mention is not None and sym.name != mention.text.replace("::", ".").rpartition(".")[2]
    private_module = any(map(_private_part, sym.path.split("/")))
    return (ROLE_ORDER.get(role, 0), private, spelled, private_parent,
            member != wants_member, private_module, sym.kind not in ("class", "struct", "interface", "trait", "enum"),
            sym.kind == "module",  # `rebuild` in rebuild.py: the function, unless "the rebuild module" is asked
            sym.path.count("/"), sym.path, sym.start_line)


def _private_part(part: str) -> bool:
    """`_compat` in a qualified name or a path is private; `__init__` is not."""
    return part.startswith("_") and not part.startswith("__")


def choose_symbols(mention: Mention, symbols: Sequence[Symbol]) -> Choice:
    """What the mention means among `symbols` (all found under its lookup key): the best-ranked qualified
    name with all its definitions (in a file, the last first: the implementation after its overloads),
    and the other package-code definitions that are as good a reading."""
    narrowed = matching_symbols(mention, symbols)
    if not narrowed:
        return Choice(())
    keyed = sorted(((rank_key(s, mention), s) for s in narrowed), key=lambda ks: ks[0])  # each key made once
    best_key, best = keyed[0]
    # overloads are written before their implementation (Python's @overload, TypeScript's signatures):
    # the last definition in a file comes first, so the answer's first citation is the implementation
    chosen = tuple(s for _, s in sorted(((k, s) for k, s in keyed if _identity(s) == _identity(best)),
                                        key=lambda ks: (ks[0][:-1], -ks[1].start_line)))
    others = tuple(s for k, s in keyed if _identity(s) != _identity(best) and k[:6] == best_key[:6])
    taken = {_identity(s) for s in chosen + others}
    passed = {_identity(s): (k, s) for k, s in reversed(keyed) if _identity(s) not in taken and s.name == best.name
              and k[0] == best_key[0]}  # same role: a test's helper is not a reading
    return Choice(chosen, others, tuple(s for _, s in sorted(passed.values(), key=lambda ks: ks[0])))


def _identity(sym: Symbol) -> tuple[str, str]:
    """One definition however often it is written: overloads and re-definitions in one file, and a type
    stub beside its module (`m.pyi` / `m.py`, `x.d.ts` / `x.ts`), share it."""
    stem = re.sub(r"\.(pyi|py|d\.ts|ts|d\.mts|mts|d\.cts|cts|js)$", "", sym.path)
    return sym.qualified_name, stem


def container_ends(mentions: Sequence[Mention]) -> dict[str, int]:
    """Each container word the mentions name ("Command" in "invoke method of Command"), with the earliest end
    of a mention it qualifies."""
    ends: dict[str, int] = {}
    for m in mentions:
        if m.container is not None:
            ends[m.container] = min(ends.get(m.container, m.end), m.end)
    return ends


def is_container(m: Mention, ends: dict[str, int]) -> bool:
    """Whether `m` is the container word of a mention before it (`ends`: container_ends)."""
    return m.start > ends.get(m.text, m.start)


__all__ = ["Mention", "Choice", "choose_symbols", "matching_symbols", "rank_key", "container_ends", "is_container"]
