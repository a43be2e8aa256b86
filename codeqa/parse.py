"""Parse stage: run queries/<language>/definitions.scm and references.scm over a file.

One generic function serves every language; what differs lives in the .scm files (see
queries/README.md for the capture names). Output: `Symbol`s with stable ids and qualified names,
and unresolved `Reference`s (graph.py resolves them).
"""

from __future__ import annotations

import ast
import re
import time
from dataclasses import dataclass, field

from .languages import get_parser, get_query, language_by_name, run_matches
from .types import ParsedFile, Reference, SourceFile, Symbol

CLASS_LIKE = frozenset({"class", "struct", "interface", "enum", "trait", "impl", "module", "type"})
# When two patterns capture the same name node, the first kind in this order wins.
KIND_PRIORITY = ("import", "inheritance", "instantiation", "call", "type", "attribute")
SIGNATURE_MAX_CHARS = 240
PARSE_TIMEOUT_SECONDS = 30.0
LINE_TEXT_MAX_CHARS = 240
_COMMENT_LINE = re.compile(r"^\s*(#|//|/\*|\*)")
_COMMENT_MARKERS = re.compile(r"^\s*(/\*\*?|\*/|\*|///?|//!|#+|--)\s?")
# Doc comments sit above these wrappers rather than above the definition inside them.
_DOC_WRAPPERS = ("decorated_definition", "export_statement", "template_declaration", "type_declaration")
# ... and above these only for the first definition in them (Ruby: `module M  # doc  class C`).
_DOC_FIRST_CHILD_WRAPPERS = ("body_statement",)
# `[DllImport("x")]`, `@Override`, `#[inline]` before a definition inside its node: not the signature
_LEADING_ATTRIBUTES = re.compile(r"^(?:(?:#?\[[^\]]*\]|@\w+(?:\([^)]*\))?)\s*)+")
# C# `/// <summary>...</summary>`: the words are the doc, the wrapping tags are not.
_XML_DOC_TAGS = re.compile(r"</?(summary|remarks|returns|value)>")
# Siblings between a doc comment and its definition (Rust `#[derive(..)]`).
_DOC_TRANSPARENT = ("attribute_item",)


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


def parse_source(file: SourceFile, text: str):
    """(ParsedFile, tree) for a file whose language has a grammar; tree is None without one."""
    if file.language is None:
        return ParsedFile(file, (), ()), None
    source = text.encode("utf-8")
    language = file.language
    try:
        tree = _parse_with_deadline(get_parser(language), source)
        retry_as = language_by_name(language).retry_as
        if tree.root_node.has_error and retry_as:  # a C++ header behind a .h extension
            other = _parse_with_deadline(get_parser(retry_as), source)
            if _error_count(other.root_node) < _error_count(tree.root_node):
                tree, language = other, retry_as
    except ParseTimeout as exc:
        return ParsedFile(file, (), (), error=str(exc), partial=True), None
    except Exception as exc:  # a grammar crash must not end the index run
        return ParsedFile(file, (), (), error=f"parse failed: {exc}", partial=True), None
    lines = text.splitlines()
    try:
        defs = _collect_definitions(language, tree.root_node, source)
        symbols = _build_symbols(file, language, defs, source, lines)
        def_name_positions = {(d.name_node.start_point, d.name_node.end_point) for d in defs if d.name_node is not None}
        references = _collect_references(file, language, tree.root_node, source, lines, defs, def_name_positions)
    except Exception as exc:  # a pathological tree (or a bug) in one file must not end the run
        return ParsedFile(file, (), (), error=f"symbol extraction failed ({type(exc).__name__}: {exc})", partial=True), None
    error = None
    if tree.root_node.has_error:
        error = f"syntax errors near line {_first_error_line(tree.root_node)}; parsed what was readable"
    return ParsedFile(file, tuple(symbols), tuple(references), error=error, partial=error is not None), tree


class ParseTimeout(Exception):
    pass


def _parse_with_deadline(parser, source: bytes, seconds: float = PARSE_TIMEOUT_SECONDS):
    """tree-sitter's parse, cancelled after `seconds` (a pathological file must not stall the index)."""
    deadline = time.monotonic() + seconds
    try:
        return parser.parse(lambda byte, _point: source[byte:byte + 65536],
                            progress_callback=lambda *_: time.monotonic() > deadline)
    except ValueError:  # "Parsing failed": cancelled by the callback
        parser.reset()
        if time.monotonic() > deadline:
            raise ParseTimeout(f"parse took over {seconds:.0f}s; used line windows") from None
        raise


def parse_file(file: SourceFile, text: str | None = None) -> ParsedFile:
    if text is None:
        text = file.abs_path.read_text(encoding="utf-8")
    return parse_source(file, text)[0]


def _text(node, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _error_count(root) -> int:
    """ERROR and missing nodes in a tree, visiting only the subtrees that contain one."""
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        count += node.type == "ERROR" or node.is_missing
        stack.extend(child for child in node.children if child.has_error or child.is_missing)
    return count


def _first_error_line(node) -> int:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            return current.start_point[0] + 1
        stack.extend(reversed([c for c in current.children if c.has_error or c.is_missing or c.type == "ERROR"]))
    return node.start_point[0] + 1


def _collect_definitions(language: str, root, source: bytes) -> list[_Def]:
    query = get_query(language, "definitions")
    if query is None:
        return []
    by_node: dict[tuple[int, int], _Def] = {}
    for captures in run_matches(query, root):
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
        if captures.get("doc") and existing.doc_node is None:
            existing.doc_node = captures["doc"][0]
        if captures.get("receiver") and existing.receiver is None:
            existing.receiver = _strip_receiver(_text(captures["receiver"][0], source))
    defs = sorted(by_node.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte))
    stack: list[_Def] = []
    for d in defs:  # nesting by byte containment
        while stack and not (d.node.start_byte >= stack[-1].node.start_byte and d.node.end_byte <= stack[-1].node.end_byte):
            stack.pop()
        if stack:
            d.parent = stack[-1]
            stack[-1].children.append(d)
        stack.append(d)
    return defs


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
        end_line = max(start_line, d.node.end_point[0] + (0 if d.node.end_point[1] == 0 and d.node.end_point[0] > d.node.start_point[0] else 1))
        symbol = Symbol(
            id=f"{file.path}#{qualified}@{start_line}",
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


def _docstring(d: _Def, source: bytes) -> str:
    if d.doc_node is not None:
        raw = _text(d.doc_node, source)
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
    while sibling is not None and sibling.type in _DOC_TRANSPARENT:
        expected_row = sibling.start_point[0]
        sibling = sibling.prev_sibling
    while sibling is not None and "comment" in sibling.type and sibling.end_point[0] >= expected_row - 1:
        comments.append(_text(sibling, source))
        expected_row = sibling.start_point[0]
        sibling = sibling.prev_sibling
    return comments


def _clean_doc(text: str) -> str:
    import inspect

    return inspect.cleandoc(text).strip()[:2000]


def _collect_references(file: SourceFile, language: str, root, source: bytes, lines: list[str], defs: list[_Def],
                        def_name_positions: set) -> list[Reference]:
    query = get_query(language, "references")
    if query is None:
        return []
    found: dict[tuple[int, int], tuple[int, Reference]] = {}
    for captures in run_matches(query, root):
        ref_key = next((k for k in captures if k.startswith("name.reference.")), None)
        if ref_key is None:
            continue
        kind = ref_key.rsplit(".", 1)[1]
        node = captures[ref_key][0]
        if (node.start_point, node.end_point) in def_name_positions:
            continue
        name = _unquote(_text(node, source))
        if not name:
            continue
        line, column = node.start_point[0] + 1, node.start_point[1]
        priority = KIND_PRIORITY.index(kind) if kind in KIND_PRIORITY else len(KIND_PRIORITY)
        previous = found.get((line, column))
        assigned = captures.get("assigned")
        receiver = captures.get("receiver")
        # the same name captured twice: the stronger kind wins, then the capture that knows more
        if previous is not None and (previous[0] < priority or (
                previous[0] == priority and not assigned and (previous[1].receiver is not None or not receiver))):
            continue
        module = captures.get("module")
        alias = captures.get("alias")
        enclosing = _innermost(defs, node.start_byte)
        line_text = lines[line - 1].strip()[:LINE_TEXT_MAX_CHARS] if line - 1 < len(lines) else ""
        found[(line, column)] = (priority, Reference(
            name=name,
            path=file.path,
            line=line,
            column=column,
            kind=kind,
            enclosing_symbol_id=enclosing.symbol.id if enclosing and enclosing.symbol else None,
            target_ids=(),
            confidence="unresolved",
            line_text=line_text,
            receiver=_text(receiver[0], source) if receiver else None,
            module=_unquote(_text(module[0], source)) if module else None,
            alias=_text(alias[0], source) if alias else None,
            assigned=_text(assigned[0], source) if assigned else None,
        ))
    return [ref for _, ref in sorted(found.values(), key=lambda item: (item[1].line, item[1].column))]


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] in "\"'`<" and text[-1] in "\"'`>":
        return text[1:-1]
    return text


def _innermost(defs: list[_Def], byte: int) -> _Def | None:
    best = None
    for d in defs:
        if d.node.start_byte <= byte < d.node.end_byte and d.symbol is not None:
            if best is None or d.node.start_byte >= best.node.start_byte:
                best = d
    return best


def is_class_like(symbol: Symbol) -> bool:
    return symbol.kind in CLASS_LIKE


__all__ = ["parse_source", "parse_file", "is_class_like", "CLASS_LIKE", "language_by_name"]
