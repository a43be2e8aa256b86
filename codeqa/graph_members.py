"""Members and receivers for the resolve stage: what `x` stands for in `x.m()`, and so which `m`.

A value (`Value`) is what the evidence says a name or an expression is: symbols of ours, instances
or classes whose members it has, a module's files, or something that is not ours. Receivers are
chains of names and calls (`self.client.session().send`), worked out head first: `self`/`this`
and `super()`/`base`/`parent` are the enclosing class and its bases; a local variable, an instance
attribute or a declared field is what its evidence says (`x = Foo()`, `x: Foo`, `Foo x`,
`self.x = ...` in any method, a class-body annotation, a struct field); a function call gives what
it returns (annotation, `return Foo()`, or a declared result type in statically typed languages);
a path (`crate::geo::Point`, `\\App\\User`) is a module's files or the class its last segment
names. A declared type is the variable's type where the registry says types are static, and a
declared type that is not ours then means the variable is not ours either.

`MemberResolution` is the half of graph.py's resolver that answers these questions; the other half
(names, imports, re-exports) is in graph.py and supplies the methods listed on the class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable, Iterator, Sequence

from .graph_index import GraphIndex, last_component
from .languages import Language
from .parse import CLASS_LIKE, RETURNS
from .types import Reference, Symbol

FUNCTION_KINDS = frozenset({"function", "method"})
_BASE_NAMES = ("super", "base", "parent")  # receivers that mean "the enclosing class's bases"
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_LITERAL = re.compile(r"""^([rbfuRBFU]{0,2}["']|\d|\[|\{)""")  # `"".join`, `b"".decode`, `[].append`
_ATTRIBUTE_TARGET = re.compile(r"([\w$]+)\s*(?:\.|->)\s*([\w$]+)")  # `self.x`, `$this->x`
_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
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


class MemberResolution:
    """Classes, members, receivers and type evidence, lazily worked out and remembered in `memo`.
    Mixed into graph.py's resolver, which provides the tables and the name lookups below."""

    index: GraphIndex
    facts: dict[tuple[str, str], list[Reference]]  # (scope, variable) -> references carrying evidence
    inherits: dict[str, list[Reference]]  # class id -> base references
    memo: dict[tuple, object]

    def language(self, path: str) -> Language | None:
        raise NotImplementedError

    def name_value(self, name: str, ref: Reference) -> Value:
        """What a bare name stands for where `ref` stands."""
        raise NotImplementedError

    def export(self, path: str, name: str) -> Value:
        """What `from <module of path> import name` gets."""
        raise NotImplementedError

    def resolve_without_imports(self, ref: Reference) -> tuple[list[str], str]:
        """Same package, then a unique name, where a file may name what it never imported."""
        raise NotImplementedError

    def symbols(self, ids: Sequence[str]) -> Value:
        """Symbols of ours; the class-like among them also have their members."""
        classes = tuple(i for i in ids if self.index.by_id[i].kind in CLASS_LIKE)
        return Value(ids=tuple(dict.fromkeys(ids)), classes=classes)

    def unimported(self, ref: Reference) -> Value:
        """`ref`'s name by same package or unique name, where a file may name what it never imported
        (likely at best)."""
        ids, _ = self.resolve_without_imports(ref)
        return likely(self.symbols(ids))

    def scopes(self, ref: Reference) -> Iterator[str]:
        """The enclosing symbols of `ref`, innermost first, then its file."""
        scope = ref.enclosing_symbol_id
        while scope is not None:
            yield scope
            symbol = self.index.by_id.get(scope)
            scope = symbol.parent_id if symbol is not None else None
        yield ref.path

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

    def lexical_member(self, symbol_id: str | None, name: str) -> Value:
        """Where members are in scope without `this`: `name` as a member of the enclosing class (and its
        bases), then of the classes and modules around it; a module reopened in another file (Ruby
        `module Shop`, C# partial class) counts as likely."""
        scopes = []
        cls = self.enclosing_class(symbol_id)
        while cls is not None:
            scopes.append(cls)
            found = self.members(cls.id, name)
            if found:
                return self.symbols(found)
            cls = self.enclosing_class(cls.parent_id)
        for enclosing in scopes:
            reopened = [s for s in self.index.by_name.get(enclosing.name, ())
                        if s.id != enclosing.id and s.qualified_name == enclosing.qualified_name and s.kind in CLASS_LIKE]
            found = [m.id for s in reopened for m in self.index.members.get(s.id, {}).get(name, ())]
            if found:
                return likely(self.symbols(found))
        return UNKNOWN

    def attribute_types(self, class_id: str, name: str, depth: int = 0) -> Value:
        """What `self.name = ...` in any method, or `name: T` in the class body, says it holds (PHP
        declares `private Repo $repo` and reads `$this->repo`)."""
        for key in ("." + name, ".$" + name):
            if (class_id, key) in self.facts:
                return self.variable(class_id, key)
        if depth > 8:
            return UNKNOWN
        return union(self.attribute_types(b, name, depth + 1) for b in self.bases(class_id))

    def attribute(self, owner: Value, name: str) -> Value:
        """`owner.name`: a module's export, a class member, or what an instance attribute holds."""
        key = ("attribute", owner, name)
        if key not in self.memo:
            self.memo[key] = UNKNOWN
            self.memo[key] = self._attribute(owner, name)
        return self.memo[key]

    def _attribute(self, owner: Value, name: str) -> Value:
        parts = [self.export(f, name) for f in owner.files]
        for class_id in owner.classes:
            found = self.members(class_id, name)
            if found:
                found_value = self.symbols(found)
                parts.append(found_value if owner.confidence == "exact" else likely(found_value))
            typed = self.attribute_types(class_id, name)
            if typed.known():
                parts.append(typed)
        value = union(parts)
        if value.ours():
            return value
        return OUTSIDE if owner.known() else UNKNOWN  # a known owner without that member: not ours

    # ---- receivers and type evidence ------------------------------------------------------------
    def receiver_value(self, ref: Reference) -> Value:
        key = ("receiver", ref.enclosing_symbol_id or ref.path, ref.receiver)
        if key not in self.memo:
            self.memo[key] = UNKNOWN
            self.memo[key] = self._receiver_value(ref)
        return self.memo[key]

    def receiver_attribute(self, ref: Reference) -> Value:
        return self.attribute(self.receiver_value(ref), ref.name)

    def _receiver_value(self, ref: Reference) -> Value:
        text = (ref.receiver or "").strip()
        if _LITERAL.match(text):
            return OUTSIDE
        if "::" in text or "\\" in text:  # `crate::geo::Point::origin()`, PHP `\App\User::find()`
            value = self._path_value(text, ref)
            if value.known():
                return value
        chain = receiver_chain(text)
        if not chain:
            return UNKNOWN
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

    def _path_value(self, text: str, ref: Reference) -> Value:
        """A receiver written as a path: the module's files when it names one of ours that defines the
        member, else the class its last segment names (likely)."""
        files = self.index.files_for_module(text, ref.path)
        if files and self.attribute(Value(files=tuple(files)), ref.name).ours():
            return Value(files=tuple(files))
        last = last_component(text)
        value = self.name_value(last, ref)
        if not value.known():
            value = self.unimported(replace(ref, name=last, receiver=None))
        classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
        return Value(classes=classes, confidence="likely") if classes else UNKNOWN

    def _head_value(self, head: str, calls: int, ref: Reference) -> Value:
        lang = self.language(ref.path)
        self_names = lang.self_names if lang else ()
        if head in _BASE_NAMES and (calls or head in self_names):  # super().m(), base.m(), parent::m()
            cls = self.enclosing_class(ref.enclosing_symbol_id)
            if cls is None:
                return UNKNOWN
            bases = self.bases(cls.id)
            return Value(classes=bases) if bases else OUTSIDE  # no base of ours: another project's class
        if head in self_names or f"{head}()" in self_names:
            cls = self.enclosing_class(ref.enclosing_symbol_id)
            return Value(classes=(cls.id,)) if cls is not None and not calls else UNKNOWN
        value = self.local_value(head, ref)
        if not value.known() and lang is not None and lang.implicit_this:  # a field without `this.`
            cls = self.enclosing_class(ref.enclosing_symbol_id)
            if cls is not None:
                value = self.attribute_types(cls.id, head)
        if not value.known():
            value = self.name_value(head, ref)
        if not value.known() and lang is not None and not lang.explicit_imports:
            value = self.unimported(replace(ref, name=head, receiver=None))
        for _ in range(calls):
            value = self.call(value)
        return value

    def local_value(self, name: str, ref: Reference) -> Value:
        """A variable of the enclosing functions, typed by its evidence (`self` is the enclosing class)."""
        lang = self.language(ref.path)
        if lang is not None and name in lang.self_names:
            cls = self.enclosing_class(ref.enclosing_symbol_id)
            return Value(classes=(cls.id,)) if cls is not None else UNKNOWN
        for scope in self.scopes(ref):
            if scope == ref.path:
                break
            symbol = self.index.by_id.get(scope)
            if symbol is not None and symbol.kind in CLASS_LIKE:
                continue  # a class body's names are attributes, not variables of its methods
            if (scope, name) in self.facts:
                return self.variable(scope, name)
        return UNKNOWN

    def call(self, value: Value) -> Value:
        """What calling `value` gives: an instance of a class, or what a function returns."""
        classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
        functions = [i for i in value.ids if self.index.by_id[i].kind in FUNCTION_KINDS]
        parts = [Value(classes=classes, confidence=value.confidence)] if classes else []
        if value.makes:
            parts.append(Value(classes=value.makes, confidence="likely"))
        if functions:
            parts.append(self.returns(functions))
        result = union(parts)
        return result if result.known() else (OUTSIDE if value.outside else UNKNOWN)

    def returns(self, function_ids: Iterable[str]) -> Value:
        return union(self._returns(f) for f in function_ids)

    def _returns(self, function_id: str) -> Value:
        """What a function returns: its return evidence (annotations, `return Foo()`), else, where the
        signature declares it, the first type of ours named in the signature's return part."""
        value = self.variable(function_id, RETURNS)
        function = self.index.by_id[function_id]
        lang = self.language(function.path)
        if value.known() or lang is None or not lang.static_types:
            return value
        classes = self._returned_classes(function)
        return Value(classes=classes, confidence="likely") if classes else value

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
                value = self.unimported(replace(probe, name=word))
            classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
            if classes:
                return classes
        return ()

    def variable(self, scope: str, name: str) -> Value:
        """The type evidence about one variable (or a function's result, or an instance attribute):
        a declared type wins over assigned values."""
        key = ("variable", scope, name)
        if key not in self.memo:
            self.memo[key] = UNKNOWN
            refs = self.facts.get((scope, name), ())
            value = union(self.evidence(r) for r in refs if r.kind == "type")
            lang = self.language(refs[0].path) if refs else None
            static = lang is not None and lang.static_types and value.outside  # a declared type not ours decides
            if not (value.classes or value.files or static):  # no declared type of ours: what is assigned
                value = union(self.evidence(r) for r in refs if r.kind != "type")
            self.memo[key] = likely(replace(value, ids=()))  # a variable is no symbol of ours
        return self.memo[key]

    def evidence(self, ref: Reference) -> Value:
        """What a reference that carries type evidence gives to its variable."""
        if ref.confidence == "local":
            value = self.local_value(ref.name, ref)
        elif ref.receiver:
            value = self.receiver_attribute(ref)
        else:
            value = self.name_value(ref.name, ref)
            lang = self.language(ref.path)
            if not value.known() and lang is not None and not lang.explicit_imports:
                value = self.unimported(ref)  # same package, a unique name
            declared = ref.kind == "type" and lang is not None and lang.static_types
            if not value.known() and lang is not None and (lang.explicit_imports or declared):
                # no local, not defined, not imported: a builtin (`set()`, `[]`); a declared type
                # that is none of ours (`List<Item> items`: `items.add()` is not our add)
                value = OUTSIDE
        if ref.kind in ("call", "instantiation"):
            return self.call(value)
        if ref.kind == "type":  # an alias without members of its own (`type T = A | B`, a typedef) types nothing
            classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE) or value.classes
            classes = tuple(i for i in classes if self.index.by_id[i].kind != "type" or i in self.index.members)
            return Value(classes=classes, outside=value.outside)
        if value.ids and self._all_methods(value.ids):
            return self.returns(value.ids)  # `x = self.prop`
        classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
        return replace(value, ids=(), makes=value.makes + classes) if classes else value  # `URL = Url`

    def _all_methods(self, ids: Sequence[str]) -> bool:
        return bool(ids) and all(self.index.by_id[i].kind == "method" for i in ids)

    def fact_key(self, ref: Reference, lang: Language | None) -> tuple[str, str] | None:
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
