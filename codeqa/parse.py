"""Parse stage: run queries/<language>/{definitions,references,locals}.scm over a file.

One generic function serves every language; what differs lives in the .scm files, compiled into
one query so a tree is walked once. Output: `Symbol`s with stable ids and qualified names, and
unresolved `Reference`s (codeqa/graph/ resolves them). The captures this module understands:

  definitions  @definition.<kind> (whole node), @name, @doc, @receiver (Go/C++ method owner)
  references   @name.reference.<kind>; @receiver (`obj` of obj.name), @module and @alias (imports);
               @ignore (a name that is no reference); type evidence for codeqa/graph/: @assigned (the
               variable a value goes to), @assigned + @assigned.type and @returns.type (annotation
               regions), @declares (the annotation a name is what it declares of), @returns
  locals       @local.scope, @local.definition (tree-sitter locals convention)

Where several patterns capture one name, the kind first in KIND_PRIORITY wins, then the capture
that knows more (a receiver, type evidence). A name bound in an enclosing local scope is a local
variable: dropped, or kept with confidence "local" when it carries type evidence. In languages
where every name is defined or imported in its file, a bare name that is neither is dropped too.
A file that does not parse cleanly is parsed again with its registry row's `retry_as` grammar (C++
headers named .h); the parse with fewer errors wins, and its language's queries run.
"""

from __future__ import annotations

import ast
import re
import time
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter

from .languages import get_parser, get_query_set, language_by_name
from .types import CLASS_LIKE, RETURNS, ParsedFile, Reference, SourceFile, Symbol, symbol_id

# When two patterns capture the same name node, the first kind in this order wins; "ignore" is no
# kind: it drops the name (keyword names, module paths), unless an import capture is at the same place.
KIND_PRIORITY = ("import", "ignore", "inheritance", "instantiation", "call", "type", "attribute")
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
        return ParsedFile(file, (), (), error=str(exc)), None
    except Exception as exc:  # a grammar crash must not end the index run
        return ParsedFile(file, (), (), error=f"parse failed: {exc}"), None
    lines = text.splitlines()
    try:
        queries = get_query_set(language)
        matches = queries.run(tree.root_node) if queries is not None else []
        defs = _collect_definitions(queries.select(matches, "definitions") if matches else [], source)
        symbols = _build_symbols(file, language, defs, source, lines)
        def_name_starts = {d.name_node.start_byte for d in defs if d.name_node is not None}
        scopes = _LocalScopes.collect(queries.select(matches, "locals") if matches else [], source)
        names = queries.run_names(tree.root_node) if queries is not None else {}
        references = _collect_references(file, language, matches, names, scopes, source, lines, defs, def_name_starts)
    except Exception as exc:  # a pathological tree (or a bug) in one file must not end the run
        return ParsedFile(file, (), (), error=f"symbol extraction failed ({type(exc).__name__}: {exc})"), None
    error = None
    if tree.root_node.has_error:
        error = f"syntax errors near line {_first_error_line(tree.root_node)}; parsed what was readable"
    return ParsedFile(file, tuple(symbols), tuple(references), error=error), tree


def prepare_language(language: str) -> None:
    """Build what parsing `language` needs (its parser, the compiled queries: ~0.1 s for a big query
    set) once, here: forked parse workers then inherit it instead of each compiling its own copy."""
    for name in filter(None, (language, language_by_name(language).retry_as)):
        get_parser(name)
        if get_query_set(name) is not None:
            _reference_patterns(name)


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


def _collect_definitions(matches, source: bytes) -> list[_Def]:
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


def _collect_references(file: SourceFile, language: str, matches: list, names: dict[str, list], scopes: "_LocalScopes",
                        source: bytes, lines: list[str], defs: list[_Def], def_name_starts: set[int]) -> list[Reference]:
    if not matches and not names:
        return []
    best: dict[int, tuple[int, str, dict]] = {}  # name start byte -> (rank, capture key, captures) that wins
    regions: list[tuple[int, int, str]] = []  # annotations: (start byte, end byte, what they type)
    declared: set[tuple[int, int]] = set()  # (name start byte, start byte of the annotation it declares)
    patterns = _reference_patterns(language)
    nameable = _nameable(language, defs, [c for i, c in matches if patterns[i][0] == _IMPORT_KEY], source)
    nameable_bytes = {n.encode("utf-8") for n in nameable} if nameable is not None else None
    skip = scopes.binding_starts | def_name_starts  # where a name is bound or defined: no reference
    for pattern, captures in matches:  # all query files' matches: patterns of the others have no entry
        key, rank, per_match = patterns[pattern]
        if per_match:  # an alternation: which kind matched, and whether it came with a receiver
            if key is None:
                key = next(k for k in captures if k in _REFERENCE_KEYS)
            rank = _rank(key, captures)
        elif not key:
            if key == "":
                _add_region(captures, source, regions)
            continue
        start = captures[key][0].start_byte
        if "declares" in captures:
            declared.add((start, captures["declares"][0].start_byte))
        previous = best.get(start)
        if previous is None or rank < previous[0]:
            best[start] = (rank, key, captures)
    for key, nodes in names.items():  # one-node patterns: every name of the file, most of them no reference
        rank = _rank(key, ())
        for node in nodes:
            start = node.start_byte
            if start in skip or (start in best and best[start][0] <= rank):
                continue
            if rank == _BARE_NAME_RANK:  # a name and nothing else: filtered right away
                raw = source[start:node.end_byte]
                if (nameable_bytes is not None and raw not in nameable_bytes) or scopes.binds(start, raw):
                    continue  # a local variable, a builtin, another program's global
            best[start] = (rank, key, {key: [node]})
    regions.sort()
    region_starts = [r[0] for r in regions]
    def_starts = [d.node.start_byte for d in defs]
    line_texts: dict[int, str] = {}
    references = []
    for start, (_, key, captures) in best.items():
        if key == "ignore" or start in skip:
            continue
        node = captures[key][0]
        raw = source[start:node.end_byte]
        name = _unquote(raw.decode("utf-8", errors="replace"))
        if not name:
            continue
        receiver = captures.get("receiver")
        carries_type = "assigned" in captures or "returns" in captures or "declares" in captures
        confidence = "unresolved"
        if receiver is None and key != _IMPORT_KEY:
            if scopes.binds(start, raw):
                if not carries_type:
                    continue  # a local variable: no symbol of ours, and no type evidence either
                confidence = "local"
            elif nameable is not None and name not in nameable and not carries_type:
                continue  # neither defined nor imported here: a builtin or a global of another program
        kind = key.rsplit(".", 1)[1]
        assigned = RETURNS if "returns" in captures else (_text(captures["assigned"][0], source) if "assigned" in captures else None)
        region = _region_at(regions, region_starts, start)
        if region is not None:  # a name inside an annotation is a type; it may be the one declared
            kind = "type" if kind == "attribute" else kind
            if assigned is None and (start, region[0]) in declared:
                assigned = region[2]
        if confidence == "local" and assigned is None:
            continue
        line, column = node.start_point[0] + 1, node.start_point[1]
        module = captures.get("module")
        alias = captures.get("alias")
        enclosing = _innermost(defs, def_starts, start)
        references.append(Reference(
            name=name,
            path=file.path,
            line=line,
            column=column,
            kind=kind,
            enclosing_symbol_id=enclosing.symbol.id if enclosing and enclosing.symbol else None,
            target_ids=(),
            confidence=confidence,
            line_text=line_texts.get(line) or line_texts.setdefault(line, _line_text(lines, line)),
            receiver=_text(receiver[0], source) if receiver else None,
            module=_unquote(_text(module[0], source)) if module else None,
            alias=_text(alias[0], source) if alias else None,
            assigned=assigned,
        ))
    references.sort(key=attrgetter("line", "column"))
    return references


def _nameable(language: str, defs: list[_Def], imports: list[dict], source: bytes) -> set[str] | None:
    """Where every name is defined or imported in its file (`explicit_imports`), the bare names that
    can mean a symbol of ours: the file's definitions and what its imports bind; None without that
    rule or with a star import."""
    if not language_by_name(language).explicit_imports:
        return None
    names = {d.name for d in defs}
    for captures in imports:
        imported = _unquote(_text(captures[_IMPORT_KEY][0], source))
        if imported == "*":
            return None
        if "alias" in captures:
            names.add(_text(captures["alias"][0], source))
        parts = re.split(r"[./\\:]+", imported)
        names.update((imported, parts[0], parts[-1]))
    return names


_IMPORT_KEY = "name.reference.import"
_REFERENCE_KEYS = {f"name.reference.{k}" if k != "ignore" else k: i for i, k in enumerate(KIND_PRIORITY)}
_BARE_NAME_RANK = 4 * _REFERENCE_KEYS["name.reference.attribute"]  # the lowest rank: a name, no receiver, no flow


def _line_text(lines: list[str], line: int) -> str:
    return lines[line - 1].strip()[:LINE_TEXT_MAX_CHARS] if line - 1 < len(lines) else ""


def _rank(key: str, captures) -> int:
    """Lower wins at one name: the kind's priority, then the capture that knows more (a receiver,
    where the value goes)."""
    priority = _REFERENCE_KEYS.get(key, len(KIND_PRIORITY))
    knows_flow = "assigned" in captures or "returns" in captures or "declares" in captures
    return 4 * priority - ("receiver" in captures) - knows_flow


@lru_cache(maxsize=None)
def _reference_patterns(language: str) -> tuple[tuple[str | bool | None, int, bool], ...]:
    """Per pattern of the language's combined query: (its reference capture, its rank, whether the rank
    is worked out per match). The capture is "" for a references.scm pattern without one (an annotation
    region), None for an alternation of kinds (ranked per match, as its receiver may be missing too),
    and False for the patterns of the other query files."""
    table = []
    for names in get_query_set(language).pattern_captures("references"):
        if not names:  # a pattern of another query file
            table.append((False, 0, False))
            continue
        keys = [k for k in names if k in _REFERENCE_KEYS or k.startswith("name.reference.")]
        alternation = len(keys) > 1 or ("receiver" in names and any(k in names for k in ("declares", "assigned", "returns")))
        key = keys[0] if len(keys) == 1 else ("" if not keys else None)
        table.append((key, _rank(key, names) if key else 0, alternation))
    return tuple(table)


def _add_region(captures: dict, source: bytes, regions: list[tuple[int, int, str]]) -> None:
    """`@assigned` + `@assigned.type`, or `@returns.type`: the names inside the type node declare a type."""
    if "returns.type" in captures:
        node, target = captures["returns.type"][0], RETURNS
    elif "assigned.type" in captures and "assigned" in captures:
        node, target = captures["assigned.type"][0], _text(captures["assigned"][0], source)
    else:
        return
    regions.append((node.start_byte, node.end_byte, target))


def _region_at(regions: list[tuple[int, int, str]], starts: list[int], byte: int) -> tuple[int, int, str] | None:
    i = bisect_right(starts, byte) - 1
    if i >= 0 and byte < regions[i][1]:
        return regions[i]
    return None


@dataclass
class _LocalScopes:
    """locals.scm over one file: scopes (functions, lambdas, comprehensions) and the names each binds."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)  # index of the enclosing scope, -1 at the top
    names: list[set[bytes]] = field(default_factory=list)
    binding_starts: set[int] = field(default_factory=set)  # where a bound name stands (never a reference)

    @classmethod
    def collect(cls, matches, source: bytes) -> "_LocalScopes":
        scopes = cls()
        spans: list[tuple[int, int]] = []
        bindings: list[tuple[int, bytes]] = []
        for _, captures in matches:
            if "local.scope" in captures:
                node = captures["local.scope"][0]
                spans.append((node.start_byte, -node.end_byte))
            elif "local.definition" in captures:
                node = captures["local.definition"][0]
                bindings.append((node.start_byte, source[node.start_byte:node.end_byte]))
                scopes.binding_starts.add(node.start_byte)
        stack: list[int] = []
        for start, neg_end in sorted(set(spans)):  # nesting by byte containment
            while stack and start >= scopes.ends[stack[-1]]:
                stack.pop()
            scopes.starts.append(start)
            scopes.ends.append(-neg_end)
            scopes.parents.append(stack[-1] if stack else -1)
            scopes.names.append(set())
            stack.append(len(scopes.starts) - 1)
        for start, name in bindings:
            index = scopes._innermost(start)
            if index >= 0:
                scopes.names[index].add(name)
        return scopes

    def _innermost(self, byte: int) -> int:
        i = bisect_right(self.starts, byte) - 1
        while i >= 0 and byte >= self.ends[i]:
            i = self.parents[i]
        return i

    def binds(self, byte: int, name: bytes) -> bool:
        """Is `name`, read at `byte`, bound by an enclosing local scope?"""
        i = self._innermost(byte)
        while i >= 0:
            if name in self.names[i]:
                return True
            i = self.parents[i]
        return False


_QUOTES = "\"'`<> \t\r\n"


def _unquote(text: str) -> str:
    if text and text[0] not in _QUOTES and text[-1] not in _QUOTES:
        return text
    text = text.strip()
    if len(text) >= 2 and text[0] in "\"'`<" and text[-1] in "\"'`>":
        return text[1:-1]
    return text


def _innermost(defs: list[_Def], starts: list[int], byte: int) -> _Def | None:
    """The innermost definition with a symbol around `byte`. `defs` are sorted by start and nested,
    so every definition around `byte` is an ancestor of the last one starting at or before it."""
    d = defs[bisect_right(starts, byte) - 1] if starts and starts[0] <= byte else None
    while d is not None and not (byte < d.node.end_byte and d.symbol is not None):
        d = d.parent
    return d


__all__ = ["parse_source", "CLASS_LIKE", "RETURNS", "language_by_name"]
