"""Members and receivers for the resolve stage: what `x` stands for in `x.m()`, and so which `m`.

Receivers are chains of names and calls (`self.client.session().send`), worked out head first:
`self`/`this` and `super()`/`base`/`parent` are the enclosing class and its bases; a local
variable, an instance attribute or a declared field is what its evidence says (`x = Foo()`,
`x: Foo`, `Foo x`, `self.x = ...` in any method, a class-body annotation, a struct field); a
function call gives what it returns (annotation, `return Foo()`, or a declared result type in
statically typed languages); a path (`crate::geo::Point`, `\\App\\User`) is a module's files or the
class its last segment names. A declared type is the variable's type where the registry says types
are static, and a declared type that is not ours then means the variable is not ours either.

`MemberResolver` answers these questions. What a bare name or a module's export is comes from the
`Names` it is given (resolve.py's resolver, which in turn holds a MemberResolver for receivers).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, Protocol, Sequence

from ...languages import Language
from ...types import CLASS_LIKE, FUNCTION_KINDS, RETURNS, Reference, Symbol
from .dotted import MODULE_NAME
from .index import FILE_SET, OUTSIDE_MEMBERS, GraphIndex, file_shape, last_component, name_in_file
from .values import OUTSIDE, UNKNOWN, Memo, Value, likely, receiver_chain, union

_BASE_NAMES = ("super", "base", "parent")  # receivers that mean "the enclosing class's bases"
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_LITERAL = re.compile(r"""^([rbfuRBFU]{0,2}["']|\d|\[|\{)""")  # `"".join`, `b"".decode`, `[].append`
_ATTRIBUTE_TARGET = re.compile(r"([\w$]+)\s*(?:\.|->)\s*([\w$]+)")  # `self.x`, `$this->x`
_WORD = re.compile(r"[A-Za-z_]\w*")


class Names(Protocol):
    """What a MemberResolver asks about names: resolve.py's resolver answers."""

    def name_value(self, name: str, ref: Reference) -> Value:
        """What a bare name stands for where `ref` stands."""

    def export(self, path: str, name: str) -> Value:
        """What `from <module of path> import name` gets."""

    def resolve_without_imports(self, ref: Reference) -> tuple[list[str], str]:
        """Same package, then a unique name, where a file may name what it never imported."""


def symbols_value(index: GraphIndex, ids: Sequence[str]) -> Value:
    """Symbols of ours; the class-like among them also have their members."""
    classes = tuple(i for i in ids if index.by_id[i].kind in CLASS_LIKE)
    return Value(ids=tuple(dict.fromkeys(ids)), classes=classes)


def fact_key(ref: Reference, lang: Language | None, index: GraphIndex) -> tuple[str, str] | None:
    """Where a reference's type evidence goes: a variable of its scope, the enclosing function's
    result, or an attribute of the enclosing class (`self.x = ...`, `x: T` in a class body)."""
    target = ref.assigned or ""
    scope = ref.enclosing_symbol_id or ref.path
    if target == RETURNS:
        return (scope, RETURNS)
    attribute = _ATTRIBUTE_TARGET.fullmatch(target)
    if attribute and lang is not None and attribute.group(1) in lang.self_names:
        cls = index.enclosing_class(ref.enclosing_symbol_id)
        return (cls.id, "." + attribute.group(2)) if cls is not None else None
    if not _IDENTIFIER.fullmatch(target):
        return None  # `a, b = ...`, `d[k] = ...`: no single variable to type
    symbol = index.by_id.get(scope)
    if symbol is not None and symbol.kind in CLASS_LIKE:
        return (scope, "." + target)
    return (scope, target)


def fact_name(scope: str, name: str, index: GraphIndex) -> str:
    """The name under which a file's evidence about (scope, name) changes (incremental.py): a function's
    result under the function's name, so that a new function's `return` moves only its own readers."""
    if name == RETURNS and scope in index.by_id:
        return index.by_id[scope].name
    return name


class MemberResolver:
    """Classes, members, receivers and type evidence, worked out lazily and remembered in `memo`
    (shared with the resolver that holds this object: evidence chains run through both)."""

    def __init__(self, index: GraphIndex, facts: dict[tuple[str, str], list[Reference]],
                 inherits: dict[str, list[Reference]], memo: Memo, names: Names):
        self.index = index
        self.facts = facts  # (scope, variable) -> references carrying evidence
        self.inherits = inherits  # class id -> base references
        self.memo = memo
        self.names = names

    def symbols(self, ids: Sequence[str]) -> Value:
        return symbols_value(self.index, ids)

    def note_member(self, class_id: str, name: str) -> None:
        """Note a read of `index.members[class_id][name]`: the class's file, and the name as that of a
        method written outside its type (in another file: GraphIndex.owner)."""
        self.memo.note(name_in_file(self.index.file_of(class_id), name))
        self.memo.note(("m", name))

    def unimported(self, ref: Reference) -> Value:
        """`ref`'s name by same package or unique name, where a file may name what it never imported
        (likely at best)."""
        ids, _ = self.names.resolve_without_imports(ref)
        return likely(self.symbols(ids))

    def bases(self, class_id: str) -> tuple[str, ...]:
        return self.memo.value(("bases", class_id), (), self._bases, class_id)

    def _bases(self, class_id: str) -> tuple[str, ...]:
        found: list[str] = []
        self.memo.note(file_shape(self.index.file_of(class_id)))  # its base classes
        for ref in self.inherits.get(class_id, ()):
            value = self.receiver_attribute(ref) if ref.receiver else self.names.name_value(ref.name, ref)
            found.extend(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE and i != class_id)
        return tuple(dict.fromkeys(found))

    def find(self, class_id: str, name: str, depth: int = 0) -> list[str]:
        """`name` on the class or, failing that, on its bases (depth first, as Python's MRO mostly is).
        A constructor named like its class is never what `Name` means inside that class (`class B : A`
        is the class A, not A's constructor)."""
        owner = self.index.by_id.get(class_id)
        self.note_member(class_id, name)
        found = [s.id for s in self.index.members.get(class_id, {}).get(name, ()) if owner is None or name != owner.name]
        if found or depth > 8:
            return found
        for base in self.bases(class_id):
            found = self.find(base, name, depth + 1)
            if found:
                return found
        return []

    def lexical_member(self, symbol_id: str | None, name: str) -> Value:
        """Where members are in scope without `this`: `name` as a member of the enclosing class (and its
        bases), then of the classes and modules around it; a module reopened in another file (Ruby
        `module Shop`, C# partial class) counts as likely."""
        scopes = []
        cls = self.index.enclosing_class(symbol_id)
        while cls is not None:
            scopes.append(cls)
            found = self.find(cls.id, name)
            if found:
                return self.symbols(found)
            cls = self.index.enclosing_class(cls.parent_id)
        for enclosing in scopes:
            self.memo.note(("n", enclosing.name))
            reopened = [s for s in self.index.by_name.get(enclosing.name, ())
                        if s.id != enclosing.id and s.qualified_name == enclosing.qualified_name and s.kind in CLASS_LIKE]
            for s in reopened:
                self.note_member(s.id, name)
            found = [m.id for s in reopened for m in self.index.members.get(s.id, {}).get(name, ())]
            if found:
                return likely(self.symbols(found))
        return UNKNOWN

    def attribute_types(self, class_id: str, name: str, depth: int = 0) -> Value:
        """What `self.name = ...` in any method, or `name: T` in the class body, says it holds (PHP
        declares `private Repo $repo` and reads `$this->repo`)."""
        self.memo.note(name_in_file(self.index.file_of(class_id), name))
        for key in ("." + name, ".$" + name):
            if (class_id, key) in self.facts:
                return self.variable(class_id, key)
        if depth > 8:
            return UNKNOWN
        return union(self.attribute_types(b, name, depth + 1) for b in self.bases(class_id))

    def attribute(self, owner: Value, name: str) -> Value:
        """`owner.name`: a module's export, a class member, or what an instance attribute holds."""
        return self.memo.value(("attribute", owner, name), UNKNOWN, self._attribute, owner, name)

    def _attribute(self, owner: Value, name: str) -> Value:
        parts = [self.names.export(f, name) for f in owner.files]
        for class_id in owner.classes:
            found = self.find(class_id, name)
            if found:
                found_value = self.symbols(found)
                parts.append(found_value if owner.confidence == "exact" else likely(found_value))
            typed = self.attribute_types(class_id, name)
            if typed.known():
                parts.append(typed)
        value = union(parts)
        if value.ours():
            return value
        if owner.classes and not owner.files and all(self.index.by_id[c].kind == "object" for c in owner.classes):
            return UNKNOWN  # an object literal's fields (a component's data and props) are no symbols of ours
        return OUTSIDE if owner.known() else UNKNOWN  # a known owner without that member: not ours

    # ---- receivers and type evidence ------------------------------------------------------------
    def receiver_value(self, ref: Reference) -> Value:
        return self.memo.value(("receiver", ref.enclosing_symbol_id or ref.path, ref.receiver), UNKNOWN,
                               self._receiver_value, ref)

    def receiver_attribute(self, ref: Reference) -> Value:
        return self.attribute(self.receiver_value(ref), ref.name)

    def _receiver_value(self, ref: Reference) -> Value:
        self.memo.note(file_shape(ref.path))  # the scopes around `ref`
        text = (ref.receiver or "").strip()
        if _LITERAL.match(text):
            return OUTSIDE
        lang = self.index.language(ref.path)
        if lang is not None and lang.module_symbols and MODULE_NAME.fullmatch(text):  # `Shop.Cart.add()`
            return self.names.name_value(text, ref)
        if lang is not None and lang.modules_in_full and MODULE_NAME.fullmatch(text):  # `M.insert`, `Data.Map.insert`
            return self._module_named(text, ref)
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

    def _module_named(self, text: str, ref: Reference) -> Value:
        """A receiver written as a module name where imports name modules in full: what an import binds
        to that name (`M` of `import qualified Data.Map as M`), else the module of that full name, ours or
        OUTSIDE (a type named like it is no receiver)."""
        value = self.names.name_value(text, ref)
        if value.files or value.outside:
            return value
        self.memo.note(FILE_SET)
        files = self.index.files_for_module(text, ref.path)
        return Value(files=tuple(files)) if files else OUTSIDE

    def _path_value(self, text: str, ref: Reference) -> Value:
        """A receiver written as a path: the module's files when it names one of ours that defines the
        member, else the class its last segment names (likely)."""
        self.memo.note(FILE_SET)
        files = self.index.files_for_module(text, ref.path)
        if files and self.attribute(Value(files=tuple(files)), ref.name).ours():
            return Value(files=tuple(files))
        last = last_component(text)
        value = self.names.name_value(last, ref)
        if not value.known():
            value = self.unimported(replace(ref, name=last, receiver=None))
        classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
        return Value(classes=classes, confidence="likely") if classes else UNKNOWN

    def _head_value(self, head: str, calls: int, ref: Reference) -> Value:
        lang = self.index.language(ref.path)
        self_names = lang.self_names if lang else ()
        if head in _BASE_NAMES and (calls or head in self_names):  # super().m(), base.m(), parent::m()
            cls = self.index.enclosing_class(ref.enclosing_symbol_id)
            if cls is None:
                return UNKNOWN
            bases = self.bases(cls.id)
            return Value(classes=bases) if bases else OUTSIDE  # no base of ours: another project's class
        if head in self_names or f"{head}()" in self_names:
            cls = self.index.enclosing_class(ref.enclosing_symbol_id)
            return Value(classes=(cls.id,)) if cls is not None and not calls else UNKNOWN
        value = self.local_value(head, ref)
        if not value.known() and lang is not None and lang.implicit_this:  # a field without `this.`
            cls = self.index.enclosing_class(ref.enclosing_symbol_id)
            if cls is not None:
                value = self.attribute_types(cls.id, head)
        if not value.known():
            value = self.names.name_value(head, ref)
        if not value.known() and lang is not None and not lang.explicit_imports:
            value = self.unimported(replace(ref, name=head, receiver=None))
        for _ in range(calls):
            value = self.call(value)
        return value

    def local_value(self, name: str, ref: Reference) -> Value:
        """A variable of the enclosing functions, typed by its evidence (`self` is the enclosing class)."""
        lang = self.index.language(ref.path)
        if lang is not None and name in lang.self_names:
            cls = self.index.enclosing_class(ref.enclosing_symbol_id)
            return Value(classes=(cls.id,)) if cls is not None else UNKNOWN
        for scope in self.index.scopes(ref):
            if scope == ref.path:
                break
            symbol = self.index.by_id.get(scope)
            if symbol is not None and symbol.kind in CLASS_LIKE:
                continue  # a class body's names are attributes, not variables of its methods
            self.memo.note(name_in_file(self.index.file_of(scope), name))
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
        lang = self.index.language(function.path)
        if value.known() or lang is None or not lang.static_types:
            return value
        classes = self._returned_classes(function)
        return Value(classes=classes, confidence="likely") if classes else value

    def _returned_classes(self, function: Symbol) -> tuple[str, ...]:
        """Our classes a function's signature says it returns: `func New() *Server`, `fn new() -> Self`,
        `f(): Foo`, `public Item add(...)`, `Vec2 vec_add(...)`. The first type name of ours wins."""
        signature = function.signature
        self.memo.note(file_shape(function.path))
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
                self.memo.note(("n", function.qualified_name.rsplit(".", 1)[0].rsplit(".", 1)[-1]))
                owner = self.index.enclosing_class(function.parent_id) or self.index.owner(function)
                return (owner.id,) if owner is not None else ()
            value = self.names.name_value(word, probe)
            if not value.known():
                value = self.unimported(replace(probe, name=word))
            classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
            if classes:
                return classes
        return ()

    def variable(self, scope: str, name: str) -> Value:
        """The type evidence about one variable (or a function's result, or an instance attribute):
        a declared type wins over assigned values."""
        return self.memo.value(("variable", scope, name), UNKNOWN, self._variable, scope, name)

    def _variable(self, scope: str, name: str) -> Value:
        self.memo.note(name_in_file(self.index.file_of(scope), fact_name(scope, name, self.index)))
        refs = self.facts.get((scope, name), ())
        value = union(self.evidence(r) for r in refs if r.kind == "type")
        lang = self.index.language(refs[0].path) if refs else None
        static = lang is not None and lang.static_types and value.outside  # a declared type not ours decides
        if not (value.classes or value.files or static):  # no declared type of ours: what is assigned
            value = union(self.evidence(r) for r in refs if r.kind != "type")
        return likely(replace(value, ids=()))  # a variable is no symbol of ours

    def evidence(self, ref: Reference) -> Value:
        """What a reference that carries type evidence gives to its variable."""
        if ref.confidence == "local":
            value = self.local_value(ref.name, ref)
        elif ref.receiver:
            value = self.receiver_attribute(ref)
        else:
            value = self.names.name_value(ref.name, ref)
            lang = self.index.language(ref.path)
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
            for i in classes:
                self.memo.note(file_shape(self.index.file_of(i)))  # whether it has members
            if classes:
                self.memo.note(OUTSIDE_MEMBERS)
            classes = tuple(i for i in classes if self.index.by_id[i].kind != "type" or i in self.index.members)
            return Value(classes=classes, outside=value.outside)
        if value.ids and self._all_methods(value.ids):
            return self.returns(value.ids)  # `x = self.prop`
        classes = tuple(i for i in value.ids if self.index.by_id[i].kind in CLASS_LIKE)
        return replace(value, ids=(), makes=value.makes + classes) if classes else value  # `URL = Url`

    def _all_methods(self, ids: Sequence[str]) -> bool:
        return bool(ids) and all(self.index.by_id[i].kind == "method" for i in ids)
