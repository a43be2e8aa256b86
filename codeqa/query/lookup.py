"""Graph lookups for the query side: symbols by name, id and file, references, and paths between symbols.

Every lookup is a store query (an index by name key, id, path or target), remembered until another index
run is committed (`clear`): no command loads the whole graph to answer one question.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Collection, Iterable, Sequence

from ..roles import ROLE_ORDER, path_role, top_folder
from ..store import GraphReader
from ..types import FileSites, Reference, SiteList, Symbol, is_file_module, name_key


# how telling a kind of use is, most first: what a usage answer shows and lists of a file first
USE_ORDER = {"instantiation": 0, "call": 1, "inheritance": 2, "type": 3, "attribute": 4, "import": 5}
FILES_LISTED = 20  # a capped list of sites spans at least this many files (each lists at most 1/20 of the cap)


@dataclass(frozen=True)
class ReferenceRecord:
    """One reference site as reported to a user or an agent. enclosing: the qualified name of the
    symbol the site is in (None at module level)."""

    path: str
    line: int
    column: int
    kind: str
    confidence: str
    text: str
    enclosing: str | None
    target_ids: tuple[str, ...]


class GraphQueries:
    """Symbol and reference lookups over one store, cached per index generation."""

    def __init__(self, store: GraphReader):
        self.store = store
        self._by_key: dict[str, list[Symbol]] = {}
        self._by_id: dict[str, Symbol | None] = {}
        self._by_path: dict[str, list[Symbol]] = {}

    def clear(self) -> None:
        self._by_key.clear()
        self._by_id.clear()
        self._by_path.clear()

    def symbols_by_key(self, keys: Iterable[str]) -> dict[str, list[Symbol]]:
        """Symbols whose name or qualified name has each lookup key (`name_key`), one store query for
        the keys not looked up before."""
        keys = list(dict.fromkeys(keys))
        missing = [k for k in keys if k not in self._by_key]
        if missing:
            found: dict[str, list[Symbol]] = {k: [] for k in missing}
            for s in self.store.symbols_by_key(missing):
                for k in dict.fromkeys((name_key(s.name), name_key(s.qualified_name))):
                    if k in found:
                        found[k].append(s)
            for k, symbols in found.items():
                self._by_key[k] = sorted(symbols, key=lambda s: (s.path, s.start_line, s.id))
                self._by_id.update((s.id, s) for s in symbols)
        return {k: self._by_key[k] for k in keys}

    def symbols_by_id(self, ids: Iterable[str | None]) -> dict[str, Symbol]:
        ids = [i for i in dict.fromkeys(ids) if i]
        missing = [i for i in ids if i not in self._by_id]
        if missing:
            found = {s.id: s for s in self.store.symbols_by_ids(missing)}
            self._by_id.update((i, found.get(i)) for i in missing)
        return {i: s for i in ids if (s := self._by_id.get(i)) is not None}

    def symbols_in_file(self, path: str) -> list[Symbol]:
        """A file's definitions; not its module symbol (types.is_file_module), which encloses every line of
        it: a hit's header, what a span defines or sits in are definitions written in the file."""
        if path not in self._by_path:
            self._by_path[path] = [s for s in self.store.symbols_in_files([path]) if not is_file_module(s)]
            self._by_id.update((s.id, s) for s in self._by_path[path])
        return self._by_path[path]

    def find_symbols(self, spec: str) -> list[Symbol]:
        """`Name`, `Class.method`, `path:Name` (path may be a suffix, at a folder boundary) -> matching symbols."""
        path_part, _, name_part = spec.rpartition(":") if ":" in spec and not spec.startswith("::") else ("", "", spec)
        name_part = name_part.replace("::", ".")
        candidates = self.symbols_by_key([name_key(name_part)])[name_key(name_part)]
        found = [s for s in candidates if s.name == name_part or s.qualified_name == name_part
                 or s.qualified_name.endswith("." + name_part)]
        if not found:
            found = list(candidates)
        if path_part:
            found = [s for s in found if s.path == path_part or s.path.endswith("/" + path_part)]
        return sorted(dict.fromkeys(found), key=lambda s: (s.path, s.start_line))

    def references_of(self, definitions: Sequence[Symbol], kinds: Collection[str] | None = None) -> list[Reference]:
        """Every reference site of `definitions` (only of `kinds` when given), in the store's order."""
        refs = self.store.references_to([s.id for s in definitions])
        return [r for r in refs if r.kind in kinds] if kinds else refs

    def records(self, references: Sequence[Reference]) -> list["ReferenceRecord"]:
        """`references` as the refs command and the MCP tools report them: each with the qualified name
        of the symbol it is in (looked up once for them all)."""
        by_id = self.symbols_by_id(r.enclosing_symbol_id for r in references if r.enclosing_symbol_id)
        return [ReferenceRecord(r.path, r.line, r.column, r.kind, r.confidence, r.line_text,
                                by_id[r.enclosing_symbol_id].qualified_name if r.enclosing_symbol_id in by_id else None,
                                r.target_ids) for r in references]

    def paths_between(self, sources: Sequence[Symbol], goals: Sequence[Symbol]
                      ) -> tuple[list[tuple[str, ...]], list[Reference], list[tuple[str, str, Reference | None]]]:
        """Up to three shortest paths (at most 4 hops) in the reference graph from any source to any goal.

        Edges: a reference from its enclosing symbol (and that symbol's class) to its targets, and a
        class to each of its members; followed in both directions. Returns the paths as symbol-id
        tuples, the references that make their edges, and every step as (from, to, reference or None
        for a class-member link).
        """
        if not sources or not goals:
            return [], [], []
        walk = _GraphWalk(self)
        paths = _bfs_paths(walk, [s.id for s in sources], {s.id for s in goals}, max_depth=4)
        steps = list(dict.fromkeys((p[i], p[i + 1]) for p in paths for i in range(len(p) - 1)))
        edges = [(a, b, walk.edge_refs.get((a, b))) for a, b in steps]
        return paths, list(dict.fromkeys(r for _, _, r in edges if r is not None)), edges


class _GraphWalk:
    """The reference graph around some symbols, read from the store as a walk reaches them.

    Edges: a reference from its enclosing symbol (and that symbol's class) to its targets, and a
    class to each of its members; followed in both directions. `edge_refs` keeps the reference
    behind each edge met so far.
    """

    def __init__(self, graph: GraphQueries):
        self.graph = graph
        self.store = graph.store
        self.edge_refs: dict[tuple[str, str], Reference] = {}
        self._neighbours: dict[str, set[str]] = {}

    def get(self, node: str, default=()) -> set[str]:
        if node not in self._neighbours:
            self.expand([node])
        return self._neighbours.get(node, set(default))

    def expand(self, nodes: Sequence[str]) -> None:
        nodes = [n for n in dict.fromkeys(nodes) if n not in self._neighbours]
        if not nodes:
            return
        out: dict[str, set[str]] = {n: set() for n in nodes}
        wanted = set(nodes)
        children = self.store.children_of(nodes)
        for child in children:  # a class and its members are connected, and a member's references are the class's too
            out[child.parent_id].add(child.id)  # type: ignore[index]
        for n, s in self.graph.symbols_by_id(nodes).items():
            if s.parent_id:
                out[n].add(s.parent_id)
        sources = {c.id: c.parent_id for c in children}
        sources.update((n, None) for n in nodes)
        for r in self.store.references_from(list(sources)):
            for t in r.target_ids:
                for a in {r.enclosing_symbol_id, sources.get(r.enclosing_symbol_id)} & wanted:
                    out[a].add(t)
                    self.edge_refs.setdefault((a, t), r)
                    self.edge_refs.setdefault((t, a), r)
        incoming = self.store.references_to(nodes)
        parents = self.graph.symbols_by_id(r.enclosing_symbol_id for r in incoming if r.enclosing_symbol_id)
        for r in incoming:
            src = r.enclosing_symbol_id
            if src is None:
                continue
            parent = parents[src].parent_id if src in parents else None
            for t in set(r.target_ids) & wanted:
                for a in {src, parent} - {None}:
                    out[t].add(a)
                    self.edge_refs.setdefault((a, t), r)
                    self.edge_refs.setdefault((t, a), r)
        self._neighbours.update(out)


def _bfs_paths(graph: _GraphWalk, starts: Sequence[str], goals: set[str], max_depth: int) -> list[tuple[str, ...]]:
    queue = deque((s,) for s in dict.fromkeys(starts) if s not in goals)
    found: list[tuple[str, ...]] = []
    seen_depth: dict[str, int] = {s: 0 for s in starts}
    while queue and len(found) < 3:
        path = queue.popleft()
        if len(path) > max_depth:
            break
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt in goals:
                found.append(path + (nxt,))
                continue
            if nxt not in path and seen_depth.get(nxt, 99) >= len(path):
                seen_depth[nxt] = len(path)
                queue.append(path + (nxt,))
    return found


def group_references(references: Iterable[Reference]) -> list[tuple[str, list[Reference]]]:
    """References grouped by file (files in path order, lines in order)."""
    groups: dict[str, list[Reference]] = defaultdict(list)
    for r in sorted(references, key=lambda r: (r.path, r.line, r.column)):
        groups[r.path].append(r)
    return list(groups.items())


def list_sites(references: Sequence[Reference], limit: int | None = None, home: str | None = None) -> SiteList:
    """The sites a usage answer lists, grouped by file: all of them when there are at most `limit`
    (None: no cap), files in path order.

    Past `limit`, files most relevant first until `limit` sites are listed: package code before
    examples, docs, tests and stubs, as the sites shown in full are ranked, and the definition's own
    top folder (`home`) first; path order within each. A file first gets at most 1/FILES_LISTED of
    the cap (`Tensor` has 564 sites in one file of torch/_decomp, nearly all annotations, which
    would otherwise fill the list); room left when there are few files goes to them in the same
    order. A file that is cut lists its most telling uses (USE_ORDER: instantiations and calls
    before type annotations and imports), in line order. `Tensor` (56k sites in 2,392 files) is so
    listed in a few hundred lines from at least FILES_LISTED files, not tens of thousands.
    """
    groups = group_references(references)
    if limit is None or len(references) <= limit:
        return SiteList(tuple(FileSites(path, tuple(refs), len(refs)) for path, refs in groups), len(references), len(groups))
    groups.sort(key=lambda g: (ROLE_ORDER.get(path_role(g[0]), 0), home is not None and top_folder(g[0]) != home, g[0]))
    per_file = max(1, limit // FILES_LISTED)
    room = max(0, limit)
    shares: dict[str, int] = {}
    for path, refs in groups:
        if room == 0:
            break
        shares[path] = min(room, per_file, len(refs))
        room -= shares[path]
    for path, refs in groups:
        if room == 0 or path not in shares:
            break
        more = min(room, len(refs) - shares[path])
        shares[path] += more
        room -= more
    listed = []
    for path, refs in groups[:len(shares)]:
        best = refs if shares[path] == len(refs) else sorted(
            refs, key=lambda r: (USE_ORDER.get(r.kind, 9), r.line, r.column))[:shares[path]]
        listed.append(FileSites(path, tuple(sorted(best, key=lambda r: (r.line, r.column))), len(refs)))
    return SiteList(tuple(listed), len(references), len(groups))


__all__ = ["GraphQueries", "ReferenceRecord", "group_references", "list_sites", "USE_ORDER", "FILES_LISTED"]
