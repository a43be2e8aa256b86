"""Evidence stage (graph side): what the index's graph shows for a routed question, before packing.

    RoutedQuestion (names.py)
      usage         the named definitions (every equally good reading) + the most informative reference
                    sites shown with context + the listed sites one line each (lookup.list_sites)
      relationship  graph paths between the two names (lookup.GraphQueries.paths_between): the definitions
                    on them and the reference sites that link them; no path leaves the rest to search
      search        the first chunks of every file the question names ("what does cli.py do")
    --> a Retrieval whose hits are in order and whose snippets are still empty (pack.py fills them)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..roles import ROLE_ORDER, path_role, top_folder
from ..store import StoreReader
from ..types import Hit, Reference, Retrieval, Symbol
from .lookup import USE_ORDER, GraphQueries, list_sites
from .names import RoutedQuestion
from .source import SourceFiles

USAGE_SITES_SHOWN = 8  # reference sites shown with context; the others are listed one line each
RELATIONSHIP_SITES_SHOWN = 6  # the reference sites on the paths between two symbols shown with context
FILE_CHUNKS = 4  # the first chunks of a file the question names


def usage_evidence(asked: RoutedQuestion, graph: GraphQueries, source: SourceFiles, sites_listed: int) -> Retrieval:
    """Every reading of the question's first name, its reference sites (the `sites_listed` first of them listed,
    Retrieval.listed) and the most informative of them shown with context."""
    first = asked.names[0]
    # an ambiguous name: every equally good reading, said so in the answer (Retrieval.ambiguous)
    targets = list(first.symbols[:10]) + list(first.others[:10])
    references = graph.references_of(targets)
    prefer = ("inheritance",) if asked.parsed.inheritance else ()
    home = top_folder(targets[0].path) if targets else None
    listed = list_sites(references, sites_listed, home)
    hits = [h for h in (definition_hit(s, source) for s in targets) if h]
    hits += usage_sites(references, graph, source, prefer=prefer, home=home)
    hits += reference_lines(listed.references, source)  # only the listed sites: their files are read
    return Retrieval(asked.parsed.text, "usage", tuple(hits), (), tuple(targets), tuple(references), ambiguous=tuple(first.others),
                     listed=listed, passed_over=first.passed_over)


def relationship_evidence(asked: RoutedQuestion, graph: GraphQueries, source: SourceFiles) -> Retrieval:
    """The definitions on the graph's paths between the question's two names (and the names' own), and the
    reference sites that link them. No path: `paths` is empty and search adds the rest (retrieve.py)."""
    first = asked.names[0]
    second = asked.other  # never None here: names.route_of takes the question to search otherwise
    paths, refs, edges = graph.paths_between(first.symbols, second.symbols)
    ends = [*first.symbols[:3], *second.symbols[:3]]
    ids = list(dict.fromkeys([*(i for p in paths for i in p), *(s.id for s in ends)]))
    by_id = graph.symbols_by_id(ids)
    hits = [h for h in (definition_hit(by_id[i], source) for i in ids if i in by_id) if h]
    hits += usage_sites(refs, graph, source, limit=RELATIONSHIP_SITES_SHOWN)
    return Retrieval(asked.parsed.text, "relationship", tuple(hits), (), tuple(ends), tuple(refs), tuple(paths), tuple(edges))


def named_files_evidence(asked: RoutedQuestion, store: StoreReader) -> Retrieval:
    """The search route's graph part: the first FILE_CHUNKS chunks of every file the question names, so "what
    does cli.py do" sees cli.py, and the symbols its names matched (Retrieval.definitions, five at most)."""
    hits = []
    for path in dict.fromkeys(p for p, _, _ in asked.files):
        chunks = sorted(store.chunks_in_file(path), key=lambda h: h.start_line)[:FILE_CHUNKS]
        hits.extend(replace(h, score=1.0, reasons=("file named",)) for h in chunks)
    matched = [s for m in asked.names for s in m.symbols]
    return Retrieval(asked.parsed.text, "search", tuple(hits), (), tuple(matched[:5]))


def definition_hit(sym: Symbol, source: SourceFiles) -> Hit | None:
    """A definition as a hit: the whole of it up to 80 lines, else its first 41; None when its file is unreadable."""
    end = sym.end_line if sym.end_line - sym.start_line <= 80 else sym.start_line + 40
    text = source.text(sym.path, sym.start_line, end)
    if text is None:
        return None
    return Hit(sym.path, sym.start_line, end, 1.0, sym.kind, sym.qualified_name, text, sym.language, (sym.id,), ("definition",))


def usage_sites(references: Sequence[Reference], graph: GraphQueries, source: SourceFiles, limit: int | None = None,
                prefer: Sequence[str] = (), home: str | None = None) -> list[Hit]:
    """The most informative reference sites, shown with context.

    Package code before tests, docs and examples, and the definition's own top folder (`home`: the
    package) before scripts beside it; calls and instantiations before type uses and
    imports (`prefer`red kinds first); at most one per enclosing function, first one per file so the
    sites spread over files. A site inside a
    short function shows the whole function; otherwise three lines either side.
    """
    limit = USAGE_SITES_SHOWN if limit is None else limit
    # a file's place once per file, not per site (path_role runs regexes; a common name has 56k sites)
    place = {p: (ROLE_ORDER.get(path_role(p), 0), home is not None and top_folder(p) != home)
             for p in {r.path for r in references}}

    def rank(r: Reference) -> tuple:
        return (*place[r.path], r.kind not in prefer, USE_ORDER.get(r.kind, 9), r.confidence != "exact", r.path, r.line)

    ranked = sorted(references, key=rank)
    picked: list[Reference] = []
    seen_enclosing: set = set()
    seen_files: set[str] = set()
    for one_per_file, imports in ((True, False), (False, False), (False, True)):
        for r in ranked:
            key = r.enclosing_symbol_id or (r.path, r.line)
            if len(picked) >= limit or key in seen_enclosing or (r.kind == "import") != imports:
                continue
            if one_per_file and r.path in seen_files:
                continue
            seen_enclosing.add(key)
            seen_files.add(r.path)
            picked.append(r)
    by_id = graph.symbols_by_id(r.enclosing_symbol_id for r in picked if r.enclosing_symbol_id)
    hits = []
    for rank, r in enumerate(picked):
        lines = source.lines(r.path)
        if lines is None:
            continue
        enclosing = by_id.get(r.enclosing_symbol_id) if r.enclosing_symbol_id else None
        if enclosing and enclosing.path == r.path and enclosing.end_line - enclosing.start_line <= 20:
            start, end = enclosing.start_line, enclosing.end_line
        else:
            start, end = max(1, r.line - 3), r.line + 3
        end = min(end, len(lines))
        hits.append(Hit(r.path, start, end, 0.5 - rank * 0.01, r.kind, r.name, "".join(lines[start - 1:end]), None,
                        (), (f"{r.kind} site",)))
    return hits


def reference_lines(references: Sequence[Reference], source: SourceFiles) -> list[Hit]:
    """Each of `references` (the listed sites, in listing order) as a one-line hit, after the sites
    shown in full."""
    hits = []
    for r in references:
        text = source.text(r.path, r.line, r.line)
        if text is not None:
            hits.append(Hit(r.path, r.line, r.line, 0.1, r.kind, r.name, text, None, (), ("reference",)))
    return hits


__all__ = ["usage_evidence", "relationship_evidence", "named_files_evidence", "definition_hit", "usage_sites",
           "reference_lines", "USAGE_SITES_SHOWN"]
