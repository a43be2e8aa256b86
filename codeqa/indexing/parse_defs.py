"""Definitions for the parse stage: the symbols a file defines, with their signatures and docstrings.

    definition captures (@definition.<kind>, @name, @doc, @receiver, @body) --> _Def tree --> Symbols with ids,
    qualified names, signatures (up to SIGNATURE_MAX_CHARS) and doc comments or docstrings
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ..types import CLASS_LIKE, SourceFile, Symbol, symbol_id

SIGNATURE_MAX_CHARS = 240
_COMMENT_LINE = re.compile(r"^\s*(#|//|/\*|\*)")
_COMMENT_MARKERS = re.compile(r"^\s*(/\*\*?|\*/|\*|///?|//!|#+'?|--+\s?[|^]?)\s?")  # Haddock: `-- |`
# Doc comments sit above these wrappers rather than above the definition inside them.
_DOC_WRAPPERS = ("decorated_definition", "export_statement", "template_declaration", "type_declaration")
# ... and above these only for the first definition in them (Ruby: `module M  # doc  class C`).
# Haskell: a file's first declaration, whose Haddock comment the grammar puts before `declarations`
# (or at the end of `imports`), and a class's first method.
_DOC_FIRST_CHILD_WRAPPERS = ("body_statement", "declarations", "class_declarations")
_COMMENT_TYPES = ("haddock",)  # comment nodes not named "...comment..."
# `[DllImport("x")]`, `@Override`, `#[inline]` before a definition inside its node: not the signature
_LEADING_ATTRIBUTES = re.compile(r"^(?:(?:#?\[[^\]]*\]|@\w+(?:\([^)]*\))?)\s*)+")
# C# `/// <summary>...</summary>`: the words are the doc, the wrapping tags are not.
_XML_DOC_TAGS = re.compile(r"</?(summary|remarks|returns|value)>")
# Siblings between a doc comment and its definition (Rust `#[derive(..)]`).
# nodes between a doc comment and its definition: Rust's #[attributes], Groovy's annotations (each a
# command of its own, `@CompileStatic` on the line above `class`)
_DOC_TRANSPARENT = ("attribute_item", "decorate")



@dataclass
class _Def:
    node: object
    kind: str
    name: str
    name_node: object | None
    doc_node: object | None = None
    receiver: str | None = None
    children: list["_Def"] = field(default_factory=list)
    parent: "_Def | None" = None
    symbol: Symbol | None = None


class _Through:
    """A definition node that ends where its body does, where the grammar puts the body beside it
    (Dart: `int f()` then `{ ... }` as siblings): the symbol's lines, and the references it encloses,
    run to the body's end."""

    def __init__(self, node, body):
        self._node = node
        self.end_byte, self.end_point = body.end_byte, body.end_point

    def __getattr__(self, name: str):
        return getattr(self._node, name)


def _text(node, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _collect_definitions(matches, source: bytes, equations: bool = False) -> list[_Def]:
    """The definitions the captures name, nested by byte range. With `equations`, definitions of one
    kind and name written as consecutive siblings (a Haskell signature and its equations) are one,
    running from the first to the last."""
    by_node: dict[tuple[int, int], _Def] = {}
    for _, captures in matches:
        def_key = next((k for k in captures if k.startswith("definition.")), None)
        if def_key is None:
            continue
        node = captures[def_key][0]
        name_nodes = captures.get("name")
        name = _text(name_nodes[0], source) if name_nodes else ""
        if not name:
            continue
        key = (node.start_byte, node.end_byte)
        existing = by_node.get(key)
        if existing is None:
            existing = by_node[key] = _Def(node, def_key.split(".", 1)[1], name, name_nodes[0])
        if captures.get("body") and not isinstance(existing.node, _Through):
            existing.node = _Through(node, captures["body"][0])
        if captures.get("doc") and existing.doc_node is None:
            existing.doc_node = captures["doc"][0]
        if captures.get("receiver") and existing.receiver is None:
            existing.receiver = _strip_receiver(_text(captures["receiver"][0], source))
    defs = sorted(by_node.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte))
    if equations:
        defs = _merge_equations(defs)
    stack: list[_Def] = []
    for d in defs:  # nesting by byte containment
        while stack and not (d.node.start_byte >= stack[-1].node.start_byte and d.node.end_byte <= stack[-1].node.end_byte):
            stack.pop()
        if stack:
            d.parent = stack[-1]
            stack[-1].children.append(d)
        stack.append(d)
    return defs


def _merge_equations(defs: list[_Def]) -> list[_Def]:
    kept: list[_Def] = []
    last = None  # the node the last kept definition's last equation is
    for d in defs:
        previous = kept[-1] if kept else None
        if (previous is not None and last is not None and (previous.kind, previous.name) == (d.kind, d.name)
                and _next_code_sibling(last) == d.node):
            previous.node = _Through(getattr(previous.node, "_node", previous.node), d.node)
            last = d.node
            continue
        kept.append(d)
        last = d.node
    return kept


def _next_code_sibling(node):
    sibling = node.next_named_sibling
    while sibling is not None and _is_comment(sibling):
        sibling = sibling.next_named_sibling
    return sibling


def _is_comment(node) -> bool:
    return "comment" in node.type or node.type in _COMMENT_TYPES


def _strip_receiver(text: str) -> str:
    """`*Server`, `s *Server`, `Foo<T>`, `ns::Foo` -> the bare type name."""
    text = text.strip("()&* \t")
    text = text.split()[-1] if text.split() else text
    text = re.split(r"[<\[(]", text.lstrip("*&"))[0]
    return re.split(r"::|\.", text)[-1]


def _build_symbols(file: SourceFile, language: str, defs: list[_Def], source: bytes, lines: list[str]) -> list[Symbol]:
    symbols: list[Symbol] = []
    by_type_name: dict[str, Symbol] = {}
    for d in defs:
        parent = d.parent
        kind = d.kind
        qualifier: str | None = None
        parent_symbol: Symbol | None = None
        if parent is not None:
            qualifier = parent.symbol.qualified_name if parent.symbol else parent.name
            parent_symbol = parent.symbol
            if parent.kind == "impl":
                parent_symbol = by_type_name.get(parent.name)
            if kind == "function" and parent.kind in CLASS_LIKE and parent.kind != "module":
                kind = "method"  # a function in a namespace or Rust `mod` stays a function
        if d.receiver:  # Go `func (s *T) M()`, C++ `void T::m()`
            qualifier = d.receiver
            parent_symbol = by_type_name.get(d.receiver, parent_symbol)
            if kind == "function":
                kind = "method"
        if d.kind == "impl":
            # a qualifying scope, not a symbol of its own; references inside it (`impl Trait for X`)
            # belong to X when X is defined in this file
            d.symbol = by_type_name.get(d.name)
            continue
        qualified = f"{qualifier}.{d.name}" if qualifier else d.name
        start_line = d.node.start_point[0] + 1
        end_line = max(start_line, _last_row(d.node, source) + 1)
        symbol = Symbol(
            id=symbol_id(file.path, qualified, start_line),
            name=d.name,
            qualified_name=qualified,
            kind=kind,
            language=language,
            path=file.path,
            start_line=start_line,
            end_line=end_line,
            signature=_signature(d.node, source),
            docstring=_docstring(d, source),
            parent_id=parent_symbol.id if parent_symbol else None,
        )
        d.symbol = symbol
        if kind in CLASS_LIKE and d.name not in by_type_name:
            by_type_name[d.name] = symbol
        symbols.append(symbol)
    return symbols


def _signature(node, source: bytes) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
    text = source[node.start_byte:end].decode("utf-8", errors="replace")
    if body is None:
        text = text.split("\n", 1)[0]
    # comments between the header and the body are not part of the signature
    kept = [line for i, line in enumerate(text.splitlines()) if i == 0 or not _COMMENT_LINE.match(line)]
    signature = " ".join(" ".join(kept).split())
    return _LEADING_ATTRIBUTES.sub("", signature).rstrip(" {:")[:SIGNATURE_MAX_CHARS]


def _last_row(node, source: bytes) -> int:
    """The row of a node's last character that is no white space: a grammar may end a definition with
    the line breaks after it (tree-sitter-groovy's commands), which are not its lines."""
    row, end, start = node.end_point[0], node.end_byte, node.start_byte
    while end > start and source[end - 1:end] in _SPACE:
        end -= 1
        row -= source[end:end + 1] == b"\n"
    return row


_SPACE = (b" ", b"\t", b"\r", b"\n")


def _docstring(d: _Def, source: bytes) -> str:
    if d.doc_node is not None:
        raw = _text(d.doc_node, source)
        if raw[:3] in ('"""', "'''") and raw[-3:] == raw[:3] and "\\" not in raw and len(raw) >= 6:
            return _clean_doc(raw[3:-3])  # the common docstring: nothing to unescape, no need to compile it
        try:
            value = ast.literal_eval(raw)
            if isinstance(value, str):
                return _clean_doc(value)
        except (ValueError, SyntaxError):
            pass
        return _clean_doc(raw.strip("\"'"))
    # doc comments directly above the definition, else above its decorator/export wrapper
    anchor = d.node
    comments = _comments_above(anchor, source)
    while not comments and anchor.parent is not None and (
            anchor.parent.type in _DOC_WRAPPERS
            or (anchor.parent.type in _DOC_FIRST_CHILD_WRAPPERS and anchor.prev_named_sibling is None)):
        anchor = anchor.parent
        comments = _comments_above(anchor, source)
    if not comments:
        return ""
    lines = []
    for comment in reversed(comments):
        for line in comment.splitlines():
            cleaned = _COMMENT_MARKERS.sub("", line).rstrip("*/ ").strip()
            lines.append(cleaned)
    return _clean_doc(_XML_DOC_TAGS.sub("", "\n".join(lines)))


def _comments_above(anchor, source: bytes) -> list[str]:
    """Comments ending on the line above `anchor` (and those stacked above them), nearest first."""
    comments = []
    expected_row = anchor.start_point[0]
    sibling = anchor.prev_sibling
    while sibling is not None and (sibling.type in _DOC_TRANSPARENT or (sibling.named_child_count and all(
            child.type in _DOC_TRANSPARENT for child in sibling.named_children))):
        expected_row = sibling.start_point[0]
        sibling = sibling.prev_sibling
    if sibling is not None and not _is_comment(sibling):
        sibling = _folded_comment(sibling, anchor) or sibling
    while sibling is not None and _is_comment(sibling) and sibling.end_point[0] >= expected_row - 1:
        comments.append(_text(sibling, source))
        expected_row = sibling.start_point[0]
        sibling = sibling.prev_sibling
    return comments


def _folded_comment(node, anchor):
    """A comment that a grammar folds into the end of the node before the definition (Kotlin's package
    header and imports), indented like the definition (a comment that closes an indented body is not
    its doc); None without one."""
    while node.named_child_count:
        node = node.named_children[-1]
        if _is_comment(node):
            return node if node.start_point[1] == anchor.start_point[1] else None
    return None


def _clean_doc(text: str) -> str:
    import inspect

    return inspect.cleandoc(text).strip()[:2000]
