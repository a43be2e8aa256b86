"""Parse stage: run queries/<language>/{definitions,references,locals}.scm over a file.

One generic function serves every language; what differs lives in the .scm files, compiled into
one query so a tree is walked once. Output: `Symbol`s with stable ids and qualified names, and
unresolved `Reference`s (codeqa/indexing/graph/ resolves them). The captures this module understands:

  definitions  @definition.<kind> (whole node), @name, @doc, @receiver (Go/C++ method owner)
  references   @name.reference.<kind>; @receiver (`obj` of obj.name), @module and @alias (imports);
               @ignore (a name that is no reference); type evidence for indexing/graph/: @assigned (the
               variable a value goes to), @assigned + @assigned.type and @returns.type (annotation
               regions), @declares (the annotation a name is what it declares of), @returns
  locals       @local.scope, @local.definition (tree-sitter locals convention)

Where several patterns capture one name, the kind first in KIND_PRIORITY wins, then the capture
that knows more (a receiver, type evidence). A name bound in an enclosing local scope is a local
variable: dropped, or kept with confidence "local" when it carries type evidence. In languages
where every name is defined or imported in its file, a bare name that is neither is dropped too.
A file that does not parse cleanly is parsed again with its registry row's `retry_as` grammar (C++
headers named .h); the parse with fewer errors wins, and its language's queries run. Where the row's
`retry_first` pattern occurs (C++ syntax in a .h), the `retry_as` grammar goes first instead.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_right
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from functools import lru_cache
from operator import attrgetter
from pathlib import Path

from .embedded import script_regions
from ..languages import get_parser, get_query_set, language_by_name
from .parse_defs import _build_symbols, _collect_definitions, _Def, _text
from ..types import CLASS_LIKE, RETURNS, ParsedFile, Reference, SourceFile

# When two patterns capture the same name node, the first kind in this order wins; "ignore" is no
# kind: it drops the name (keyword names, module paths), unless an import capture is at the same place.
KIND_PRIORITY = ("import", "ignore", "inheritance", "instantiation", "call", "type", "attribute")
PARSE_TIMEOUT_SECONDS = 30.0
LINE_TEXT_MAX_CHARS = 240
def parse_source(file: SourceFile, text: str, query_dir: Path | None = None):
    """(ParsedFile, tree) for a file whose language has a grammar; tree is None without one. The
    queries come from `query_dir` (Settings.queries_dir), else the installed queries/."""
    if file.language is None:
        return ParsedFile(file, (), ()), None
    language = file.language
    row = language_by_name(language)
    if row.script_regions:  # a single-file component: its scripts are parsed, in their own language
        try:
            regions = script_regions(row.grammar, text)
        except Exception as exc:  # a grammar crash must not end the index run
            return ParsedFile(file, (), (), error=f"parse failed: {exc}"), None
        if regions is None:
            return ParsedFile(file, (), ()), None
        text, language = regions.masked, regions.language
        row = language_by_name(language)
    source = text.encode("utf-8")
    try:
        first, retry_as = language, row.retry_as
        written = next((other for other, pattern in row.written_as if pattern.search(source)), None)
        if written is not None:  # an Objective-C header behind a .h extension: an Objective-C file
            first, retry_as, file = written, language, replace(file, language=written)
        elif retry_as and row.retry_first is not None and row.retry_first.search(source):
            first, retry_as = retry_as, language  # a C++ header behind a .h extension: C++ first
        tree = _parse_with_deadline(get_parser(first), _masked(first, source))
        if tree.root_node.has_error and retry_as:
            other = _parse_with_deadline(get_parser(retry_as), _masked(retry_as, source))
            fewer = _error_count(other.root_node) - _error_count(tree.root_node)
            if fewer < 0 or (fewer == 0 and retry_as == language):  # a tie keeps the file's own language
                tree, first = other, retry_as
        language = first
    except ParseTimeout as exc:
        return ParsedFile(file, (), (), error=str(exc)), None
    except Exception as exc:  # a grammar crash must not end the index run
        return ParsedFile(file, (), (), error=f"parse failed: {exc}"), None
    lines = text.splitlines()
    try:
        queries = get_query_set(language, query_dir)
        matches = queries.run(tree.root_node) if queries is not None else []
        defs = _collect_definitions(queries.select(matches, "definitions") if matches else [], source,
                                    language_by_name(language).equations)
        symbols = _build_symbols(file, language, defs, source, lines)
        def_name_starts = {d.name_node.start_byte for d in defs if d.name_node is not None}
        names = queries.run_names(tree.root_node) if queries is not None else {}
        scopes = _LocalScopes.collect(queries.select(matches, "locals") if matches else [], names, source,
                                      def_name_starts)
        references = _collect_references(file, language, matches, names, scopes, source, lines, defs, def_name_starts,
                                         query_dir)
    except Exception as exc:  # a pathological tree (or a bug) in one file must not end the run
        return ParsedFile(file, (), (), error=f"symbol extraction failed ({type(exc).__name__}: {exc})"), None
    error = None
    if tree.root_node.has_error:
        error = f"syntax errors near line {_first_error_line(tree.root_node)}; parsed what was readable"
    return ParsedFile(file, tuple(symbols), tuple(references), error=error), tree


def prepare_language(language: str, query_dir: Path | None = None) -> None:
    """Build what parsing `language` needs (its parser, the compiled queries: ~0.1 s for a big query
    set) once, here: forked parse workers then inherit it instead of each compiling its own copy."""
    row = language_by_name(language)
    scripts = ("javascript", "typescript", "tsx") if row.script_regions else ()
    for name in filter(None, (language, row.retry_as, *(other for other, _ in row.written_as), *scripts)):
        get_parser(name)
        if get_query_set(name, query_dir) is not None:
            _reference_patterns(name, query_dir)


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


def _masked(language: str, source: bytes) -> bytes:
    """What the grammar of `language` parses: `source`, or a copy of equal length and line breaks where
    its `parse_mask` hides what the grammar cannot read (tree-sitter-groovy has no `*`, `?` or `%`)."""
    mask = language_by_name(language).parse_mask
    if mask is None:
        return source
    out = bytearray(source)
    groups = [(group, 0x20 if group.startswith("blank") else 0x5F) for group in mask.groupindex
              if group.startswith(("blank", "name"))]
    for match in mask.finditer(source):
        for group, fill in groups:
            start, end = match.span(group)
            if start < end:
                span = source[start:end]
                if fill == 0x5F and b"\n" in span:  # a name over lines: its first and last byte, blanks between
                    out[start:end] = re.sub(rb"[^\n]", b" ", span)
                    out[start] = out[end - 1] = fill
                else:
                    out[start:end] = re.sub(rb"[^\n]", bytes([fill]), span)
    return bytes(out)


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


def _collect_references(file: SourceFile, language: str, matches: list, names: dict[str, list], scopes: "_LocalScopes",
                        source: bytes, lines: list[str], defs: list[_Def], def_name_starts: set[int],
                        query_dir: Path | None = None) -> list[Reference]:
    if not matches and not names:
        return []
    best: dict[int, tuple[int, str, dict]] = {}  # name start byte -> (rank, capture key, captures) that wins
    regions: list[tuple[int, int, str]] = []  # annotations: (start byte, end byte, what they type)
    declared: set[tuple[int, int]] = set()  # (name start byte, start byte of the annotation it declares)
    patterns = _reference_patterns(language, query_dir)
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
    for key, nodes in names.items():  # one-capture patterns: every name of the file, most of them no reference
        if key.startswith("local."):
            continue
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
        if raw[:1] in b"\"'`<" and name != raw.decode("utf-8", errors="replace"):
            column += 1  # a quoted string with no node for its inside (Dart's URIs, Solidity's): the name starts after the quote
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
            receiver=_receiver_text(receiver, source) if receiver else None,
            module=_module_text(module, source) if module else None,
            alias=_text(alias[0], source) if alias else None,
            assigned=assigned,
        ))
    references.sort(key=attrgetter("line", "column"))
    return references


def _nameable(language: str, defs: list[_Def], imports: list[dict], source: bytes) -> set[str] | None:
    """Where every name is defined or imported in its file (`explicit_imports`), the bare names that
    can mean a symbol of ours: the file's definitions and what its imports bind; None without that
    rule or with a star import."""
    row = language_by_name(language)
    if not row.explicit_imports:
        return None
    names = {d.name for d in defs}
    for captures in imports:
        imported = _unquote(_text(captures[_IMPORT_KEY][0], source))
        whole = "module" in captures and _module_text(captures["module"], source) == imported
        if imported == "*" or (row.bare_import_is_star and whole and "alias" not in captures):
            return None  # `import *`, Haskell's `import A.B`: any name may come from it
        if "alias" in captures:
            names.add(_text(captures["alias"][0], source))
        parts = re.split(r"[./\\:]+", imported)
        names.update((imported, parts[0], parts[-1]))
    return names


_IMPORT_KEY = "name.reference.import"
_REFERENCE_KEYS = {f"name.reference.{k}" if k != "ignore" else k: i for i, k in enumerate(KIND_PRIORITY)}
_BARE_NAME_RANK = 4 * _REFERENCE_KEYS["name.reference.attribute"]  # the lowest rank: a name, no receiver, no flow


def _module_text(nodes: list, source: bytes) -> str:
    """An import's module: its one node, or the text from the first node to the last where the grammar
    has no node for it (Kotlin `import a.b.C`: one flat path, @module on `a` and `b`)."""
    start, end = min(n.start_byte for n in nodes), max(n.end_byte for n in nodes)
    return _unquote(source[start:end].decode("utf-8", errors="replace"))


def _receiver_text(nodes: list, source: bytes) -> str:
    """A receiver's text from its first node to its last (Groovy's `a.b` in `a.b.c()` is flat names in one unit,
    captured as its first and last name), without the dot a grammar may keep in it (Haskell's qualifier
    `Data.Map.`)."""
    text = source[min(n.start_byte for n in nodes):max(n.end_byte for n in nodes)].decode("utf-8", errors="replace")
    return text[:-1] if text.endswith(".") and len(text) > 1 else text


def _line_text(lines: list[str], line: int) -> str:
    return lines[line - 1].strip()[:LINE_TEXT_MAX_CHARS] if line - 1 < len(lines) else ""


def _rank(key: str, captures) -> int:
    """Lower wins at one name: the kind's priority, then the capture that knows more (a receiver,
    where the value goes)."""
    priority = _REFERENCE_KEYS.get(key, len(KIND_PRIORITY))
    knows_flow = "assigned" in captures or "returns" in captures or "declares" in captures
    return 4 * priority - ("receiver" in captures) - knows_flow


@lru_cache(maxsize=None)
def _reference_patterns(language: str, query_dir: Path | None = None) -> tuple[tuple[str | bool | None, int, bool], ...]:
    """Per pattern of the language's combined query: (its reference capture, its rank, whether the rank
    is worked out per match). The capture is "" for a references.scm pattern without one (an annotation
    region), None for an alternation of kinds (ranked per match, as its receiver may be missing too),
    and False for the patterns of the other query files."""
    table = []
    for names in get_query_set(language, query_dir).pattern_captures("references"):
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
    def collect(cls, matches, captured: dict[str, list], source: bytes,
                definitions: Collection[int] = ()) -> "_LocalScopes":
        """From locals.scm's matches, and the captures of its patterns that run apart (QuerySet.names).
        A binding that names a definition (`const f = () => {}` inside a function: a nested symbol,
        found through the scopes of codeqa/indexing/graph/) is that definition, not a local variable."""
        scopes = cls()
        scope_nodes = list(captured.get("local.scope", ()))
        binding_nodes = list(captured.get("local.definition", ()))
        for _, captures in matches:
            if "local.scope" in captures:
                scope_nodes.append(captures["local.scope"][0])
            elif "local.definition" in captures:
                binding_nodes.append(captures["local.definition"][0])
        spans = [(node.start_byte, -node.end_byte) for node in scope_nodes]
        bindings: list[tuple[int, bytes]] = []
        for node in binding_nodes:
            if node.start_byte in definitions:
                continue
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
