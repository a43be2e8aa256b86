"""What the resolve stage knows about a name or an expression (`Value`), and the memo it keeps them in.

A value is what the evidence says a name or an expression is: symbols of ours, instances or
classes whose members it has, a module's files, or something that is not ours. Receivers are
written as chains of names and calls (`self.client.session().send`); `receiver_chain` splits them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Iterable

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(frozen=True, slots=True)  # slots: a big tree's resolution keeps a million of them (336 -> 104 bytes)
class Value:
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


UNKNOWN = Value()
OUTSIDE = Value(outside=True)


def union(values: Iterable[Value]) -> Value:
    values = [v for v in values if v.known()]
    if len(values) < 2:
        return values[0] if values else UNKNOWN
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
    return Value(tuple(ids), tuple(classes), tuple(files), outside and not ours, confidence, tuple(makes))


def likely(v: Value) -> Value:
    return replace(v, confidence="likely") if v.known() and v.confidence != "likely" else v


_NEVER = 1 << 62  # no cycle reached back this far
FLAT_ATOMS = 8_000_000  # atoms a resolution run's Reads may keep flattened (~30 B each)
_MISSING = object()


class Reads:
    """What one answer read: its own notes (`atoms`) and the kept answers it used (`parts`, by identity).

    An answer is used by many others, and its reads were copied into each of them: on a big tree
    (site-packages: chains of imports across thousands of files) merging those copies was most of the
    resolution's time. A kept answer's Reads is shared instead, never changed after it is kept
    (`shared` freezes it into tuples: a set and a dict per kept answer were a third of the resolution's
    memory on SQLAlchemy), and `flatten` gathers a file's reads once, visiting each shared part once.

    Most files of a big tree reach the same few popular answers (a package's exports), each over a
    web of thousands of parts that hold few atoms between them: walking that web again for every
    file was 44 % of site-packages' resolution. So a kept part that flattens meet for the FLAT_AFTER-th
    time keeps its own flattened set (`flat`), and later flattens take that set instead of walking
    below it; a budget (`Flats`) bounds the atoms kept so."""

    __slots__ = ("atoms", "parts", "flat", "met", "wide")

    def __init__(self, atoms: Iterable[object] = ()) -> None:
        self.atoms: set | tuple = set(atoms)
        self.parts: dict[int, Reads] | tuple[Reads, ...] = {}
        self.flat: frozenset | None = None  # every atom read below and here, once kept (see flatten)
        self.met = 0  # flattens that reached this part
        self.wide: frozenset | None = None  # a set of files wider than Memo's `wide`, read here or below

    def add(self, other: "Reads") -> None:
        if other is not self:
            self.parts[id(other)] = other  # type: ignore[index]  (only a Reads under way is added to)
            if other.wide is not None and self.wide is None:
                self.wide = other.wide

    def shared(self) -> "Reads | None":
        """What to keep with an answer, frozen: None when it read nothing, its one part when that is all it read."""
        if not self.atoms and len(self.parts) <= 1:
            return next(iter(_parts(self)), None)
        if isinstance(self.parts, dict):
            self.atoms, self.parts = tuple(self.atoms), tuple(self.parts.values())
        return self

    def flatten(self, flats: "Flats | None" = None) -> frozenset:
        """Every atom read here and below. With `flats`, popular parts keep their flattened sets (see
        the class docstring); the result is the same."""
        out = set(self.atoms)
        _gather(self, out, flats)
        return frozenset(out)


FLAT_AFTER = 3  # a part's flattened set is kept from the flatten that meets it this many times
FLAT_MIN_PARTS = 16  # ... when that flatten walked at least this many parts below it


class Flats:
    """The budget of atoms that parts may keep in their flattened sets (Reads.flatten)."""

    __slots__ = ("left",)

    def __init__(self, atoms: int) -> None:
        self.left = atoms


def _gather(root: Reads, out: set, flats: Flats | None) -> int:
    """Add the atoms below `root` (not its own) to `out`; the number of parts walked."""
    seen = {id(root)}
    stack = list(_parts(root))
    walked = 0
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        walked += 1
        flat = node.flat
        if flat is not None:
            out.update(flat)
            continue
        if flats is not None and type(node.parts) is tuple:
            node.met += 1
            if node.met >= FLAT_AFTER and flats.left > 0:
                below: set = set(node.atoms)
                if _gather(node, below, None) >= FLAT_MIN_PARTS:  # None: no nesting, however deep the web
                    node.flat = frozenset(below)
                    flats.left -= len(below)
                else:
                    node.met = -(1 << 30)  # too little below it to be worth a set: never asked again
                out.update(below)
                continue
        out.update(node.atoms)
        stack.extend(_parts(node))
    return walked


def _parts(reads: Reads) -> Iterable[Reads]:
    return reads.parts.values() if isinstance(reads.parts, dict) else reads.parts


class Memo:
    """Answers worked out once per resolution run, by key (`("export", path, name)`, ...): evidence
    chains across files, and many references ask the same question.

    Every answer is what working it out from scratch gives, whichever question came first, so that
    resolving some files gives each reference the same targets as resolving all of them: while a key
    is being worked out it reads as its placeholder (a cycle, such as an import cycle or
    `x = x.next()`, ends in nothing there), and an answer that met the placeholder of itself or of a
    key further out is not kept, since asked first from elsewhere the cycle would be cut elsewhere.

    It also records what each answer read (`note`): files whose symbols or references it looked at,
    and names across the project: `("n", name)` the symbols of that name, `("e", name)` only whether
    any symbol or import has it, `("m", name)` methods of that name written outside their type. A
    kept answer carries its `Reads`, and using it adds them to the answer under way. resolve.py asks
    per file (`begin`, then `reads`) what the outermost questions read: that says when the file must
    be resolved again."""

    def __init__(self, local_kinds: Iterable[str] = (), wide: int | None = None) -> None:
        self.values: dict[tuple, tuple[object, Reads | None]] = {}  # key -> (answer, what it read: never changed after)
        self.deps = Reads()
        self.local_kinds = frozenset(local_kinds)  # keys (kind, scope, ...) that `forget` drops
        self.wide = wide  # see note_files
        self.flats = Flats(FLAT_ATOMS)
        self._atoms: dict[object, object] = {}  # see note
        self._local: list[tuple] = []  # such keys kept since the last forget()
        self._active: dict[tuple, int] = {}
        self._lowest = _NEVER

    def begin(self, *atoms: object) -> None:
        """Start gathering reads afresh (one file's resolution), with `atoms` read already."""
        self.deps = Reads(atoms)

    def reads(self) -> frozenset:
        """Everything read since `begin`; when that includes a set of files wider than `wide`
        (note_files), that set alone: whoever reads so much is looked at again after any change
        (incremental.WEB_FILES_KEPT), and 29,632 of site-packages' 36,528 files did, each flattening
        thousands of parts for nothing."""
        if self.deps.wide is not None:
            return frozenset((self.deps.wide,))
        return self.deps.flatten(self.flats)

    def forget(self, path: str) -> None:
        """Drop the answers of `local_kinds` kept since the last call whose scope lies in file `path`
        (a path, or a symbol id `path#...`): asked while resolving that file, they are rarely asked
        again, and keeping every one of them was most of the resolution's memory on a big tree. An
        answer asked again is worked out again, the same (see the class docstring)."""
        values = self.values
        for key in self._local:
            if key[1].partition("#")[0] == path:
                values.pop(key, None)
        self._local.clear()

    def note(self, atom: object) -> None:
        # one object per atom: a note is a fresh tuple (`("e", name)`) each time, and millions of kept
        # Reads held copies of the same few
        self.deps.atoms.add(self._atoms.setdefault(atom, atom))  # type: ignore[union-attr]

    def note_files(self, files: frozenset) -> None:
        """Note a set of files as one atom (a star web's, a folder's: graph/stars.py, resolve.py)."""
        self.note(files)
        if self.wide is not None and len(files) > self.wide and self.deps.wide is None:
            self.deps.wide = files

    def value(self, key: tuple, placeholder: object, compute: Callable[..., object], *args: object):
        found = self.values.get(key, _MISSING)
        if found is not _MISSING:
            value, deps = found
            if deps is not None:
                self.deps.add(deps)
            return value
        active = self._active
        depth = active.get(key)
        if depth is not None:  # a cycle back to a key under way
            if depth < self._lowest:
                self._lowest = depth
            return placeholder
        depth = active[key] = len(active)
        outer_deps, outer_lowest = self.deps, self._lowest
        self.deps, self._lowest = Reads(), _NEVER
        try:
            value = compute(*args)
        finally:
            del active[key]
            inner, lowest = self.deps, self._lowest
            self.deps, self._lowest = outer_deps, min(outer_lowest, lowest)
        if lowest > depth:
            deps = inner.shared()
            self.values[key] = (value, deps)
            if key[0] in self.local_kinds:
                self._local.append(key)
            if deps is not None:
                outer_deps.add(deps)
        else:  # not kept (it met a cycle): its reads are no one else's, so they join the answer under way
            # (as a part of their own, the answers worked out again and again in the import cycles
            # of site-packages left 7.2M parts for 1.1M kept answers)
            outer_deps.atoms.update(inner.atoms)  # type: ignore[union-attr]  (both under way: a set and a dict)
            outer_deps.parts.update(inner.parts)  # type: ignore[union-attr]
            if inner.wide is not None and outer_deps.wide is None:
                outer_deps.wide = inner.wide
        return value


def receiver_chain(text: str) -> list[tuple[str, int]] | None:
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
