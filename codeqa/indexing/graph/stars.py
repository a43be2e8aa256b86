"""Where star imports lead (`from m import *`, `import a.*`, `#include "x.h"`), worked out once per scope.

Following star imports star by star is what `from m import *` means, but in a web of modules that
star-import each other (site-packages: torch, numpy, sympy) it walks every path of the web: answers
met in a cycle are not kept (values.Memo), so each lookup starts over. So the resolver
(graph/resolve.py) asks here first:

- `may_bring(scope, name)`: whether any file the stars reach has the name at all; when none does,
  following them finds nothing, and the resolver stops at once;
- `in_web(scope)`: stars that lead back to their own file, or reach more than STAR_WEB files; there
  the name is looked up in each file that has it (`providers`), once, and the answers are joined.

Both read what following the stars would read (every file reached, the set of files, whether the
name exists), so an incremental run resolves again exactly when a clean one could differ.
"""

from __future__ import annotations

from typing import Callable, Mapping

from ...languages import Language
from ...types import Reference
from .index import FILE_SET, GraphIndex, file_stem, name_in_file

STAR_WEB = 64  # star imports reaching more files than this are looked up file by file


class StarWebs:
    def __init__(self, index: GraphIndex, stars: Mapping[str, list[Reference]],
                 imports: Mapping[tuple[str, str], list[Reference]], facts: Mapping[tuple[str, str], list[Reference]],
                 language: Callable[[str], Language | None], module_path: Callable[[Reference], str]):
        self.index, self.stars, self.imports, self.facts = index, stars, imports, facts
        self.language, self.module_path = language, module_path
        # scope -> the files its star imports reach: one frozenset per distinct set of files (sorted tuples
        # beside them were ~0.2 GB of site-packages' resolution, at the top of its memory)
        self._closures: dict[str, frozenset[str]] = {}
        self._webs: dict[frozenset, frozenset] = {}  # the files of a web -> the one object standing for them
        self._by_name: dict[str, list[str]] | None = None  # name -> the files that provide it (`providers`)
        self._provided: dict[tuple[frozenset, str], tuple[str, ...]] = {}  # (web, name) -> providers there

    def closure(self, scope: str) -> frozenset[str]:
        """The files the star imports of `scope` reach, and theirs where their language passes them on:
        also what a lookup through the web of `scope` reads. The resolver notes it as one atom (a
        frozenset, its hash computed once), since merging thousands of files into the reads of every
        answer that used it was most of the time on site-packages; incremental.file_graph opens it.
        One object for every scope with the same files: a set holding it finds it by identity, where
        equal copies compare file by file (most of site-packages' time)."""
        closure = self._closures.get(scope)
        if closure is None:
            self._reach(scope)
            closure = self._closures[scope]
        return closure

    def _targets(self, node: str) -> list[str]:
        return [f for star in self.stars.get(node, ()) for f in self.index.files_for_module(self.module_path(star), star.path)]

    def _passes_on(self, f: str) -> bool:
        lang = self.language(f)
        return lang is not None and (lang.reexports or lang.imports_are_transitive)

    def _reach(self, start: str) -> None:
        """closure() of `start` and of every file that passes stars on that it reaches, in one walk.

        Walking each scope's stars on its own walked a whole web once per file of it (site-packages: the
        C++ headers of torch/include, thousands of files that include each other transitively): two
        thirds of the resolution's time. Files that reach each other (a strongly connected component,
        Tarjan's algorithm, without recursion) have one closure; a component's closure is its files'
        direct targets and the closures of the components those lead to, which are finished first."""
        closures = self._closures
        order: dict[str, int] = {}
        low: dict[str, int] = {}
        targets: dict[str, list[str]] = {}
        stack: list[str] = []
        on_stack: set[str] = set()

        def push(node: str) -> None:
            order[node] = low[node] = len(order)
            stack.append(node)
            on_stack.add(node)
            targets[node] = self._targets(node)
            work.append((node, iter(targets[node])))

        work: list = []
        push(start)
        while work:
            node, pending = work[-1]
            deeper = False
            for t in pending:
                if t in closures or not self._passes_on(t):
                    continue  # its closure is known, or its stars are not followed
                if t not in order:
                    push(t)
                    deeper = True
                    break
                if t in on_stack:
                    low[node] = min(low[node], order[t])
            if deeper:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] != order[node]:
                continue
            members = set()
            while True:
                m = stack.pop()
                on_stack.discard(m)
                members.add(m)
                if m == node:
                    break
            reach: set[str] = set()
            for m in members:
                for t in targets[m]:
                    reach.add(t)  # a member reached from a member: the component is a cycle, and in its closure
                    if t not in members and t in closures and self._passes_on(t):
                        reach.update(closures[t])
            found = frozenset(reach)
            found = self._webs.setdefault(found, found)
            for m in members:
                closures[m] = found

    def provides(self, f: str, name: str) -> bool:
        """Whether file `f` itself defines, imports, assigns or has as a submodule `name` (not through stars)."""
        lang = self.language(f)
        return (name in self.index.top_level.get(f, {}) or (f, name) in self.imports or (f, name) in self.facts
                or bool(lang is not None and lang.package_init and file_stem(f) == lang.package_init
                        and self.index.files_for_module("." + name, f)))

    def may_bring(self, scope: str, name: str, memo) -> bool:
        """Whether any file the star imports of `scope` reach has `name`; notes what that reads in `memo`."""
        memo.note(FILE_SET)
        memo.note(("e", name))
        found = False
        for f in self.closure(scope):
            memo.note(name_in_file(f, name))  # and its star imports (its shape)
            found = found or self.provides(f, name)
        return found

    def in_web(self, scope: str) -> bool:
        closure = self.closure(scope)
        return len(closure) > STAR_WEB or self.index.file_of(scope) in closure

    def providers(self, scope: str, name: str) -> tuple[str, ...]:
        """The files of the web of `scope` that define, import or assign `name` (a package's submodules
        are not looked up through a web), sorted.

        From one project-wide table name -> files, cut to the web, and kept per (web, name) asked: a
        table per web (name -> every file) was the biggest part of the resolution's memory on
        site-packages, where every header of a C++ include web has a closure of its own (12M lists).
        The shorter side is walked: the files that have the name, or the web's files."""
        files = self.closure(scope)
        found = self._provided.get((files, name))
        if found is not None:
            return found
        if self._by_name is None:  # (file or scope, name) pairs sorted: each name's files sorted
            by_name: dict[str, list[str]] = {}
            top_level = self.index.top_level
            for f, n in sorted({(f, n) for f in top_level for n in top_level[f]} | self.imports.keys() | self.facts.keys()):
                by_name.setdefault(n, []).append(f)
            self._by_name = by_name
        having = self._by_name.get(name, ())
        if len(having) <= len(files):
            found = tuple(f for f in having if f in files)
        else:
            top_level, imports, facts = self.index.top_level, self.imports, self.facts
            found = tuple(sorted(f for f in files if name in top_level.get(f, ()) or (f, name) in imports or (f, name) in facts))
        self._provided[(files, name)] = found
        return found
