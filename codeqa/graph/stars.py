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

from ..languages import Language
from ..types import Reference
from .index import FILE_SET, GraphIndex, file_stem

STAR_WEB = 64  # star imports reaching more files than this are looked up file by file


class StarWebs:
    def __init__(self, index: GraphIndex, stars: Mapping[str, list[Reference]],
                 imports: Mapping[tuple[str, str], list[Reference]], facts: Mapping[tuple[str, str], list[Reference]],
                 language: Callable[[str], Language | None], module_path: Callable[[Reference], str]):
        self.index, self.stars, self.imports, self.facts = index, stars, imports, facts
        self.language, self.module_path = language, module_path
        self._closures: dict[str, tuple[str, ...]] = {}  # scope -> the files its star imports reach
        self._reads: dict[str, frozenset] = {}
        self._webs: dict[frozenset, frozenset] = {}  # the files of a web -> the one object standing for them
        self._providers: dict[object, dict[str, list[str]]] = {}  # scope, and the web's files -> name -> files
        self._bound: dict[str, set[str]] = {}  # scope -> names its imports or assignments bind

    def closure(self, scope: str) -> tuple[str, ...]:
        """The files the star imports of `scope` reach, and theirs where their language passes them on."""
        closure = self._closures.get(scope)
        if closure is None:
            seen: dict[str, None] = {}
            todo = [scope]
            while todo:
                current = todo.pop()
                for star in self.stars.get(current, ()):
                    for f in self.index.files_for_module(self.module_path(star), star.path):
                        if f in seen:
                            continue
                        seen[f] = None
                        lang = self.language(f)
                        if lang is not None and (lang.reexports or lang.imports_are_transitive):
                            todo.append(f)
            closure = self._closures[scope] = tuple(seen)
        return closure

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
            memo.note(f)
            found = found or self.provides(f, name)
        return found

    def in_web(self, scope: str) -> bool:
        closure = self.closure(scope)
        return len(closure) > STAR_WEB or self.index.file_of(scope) in closure

    def reads(self, scope: str) -> frozenset[str]:
        """The files a lookup through the web of `scope` reads: every file it reaches. Noted as one atom
        (a frozenset, its hash computed once), since merging thousands of files into the reads of every
        answer that used it was most of the time on site-packages; incremental.file_graph opens it."""
        reads = self._reads.get(scope)
        if reads is None:  # one object for every scope of a web: a set holding it finds it by identity, where
            files = frozenset(self.closure(scope))  # equal copies compare file by file (most of site-packages' time)
            reads = self._reads[scope] = self._webs.setdefault(files, files)
        return reads

    def providers(self, scope: str) -> dict[str, list[str]]:
        """Name -> the files of the web that define, import or assign it (a package's submodules are not
        looked up through a web), shared by every scope of the same web."""
        providers = self._providers.get(scope)
        if providers is None:
            files = self.reads(scope)
            providers = self._providers.get(files)
            if providers is None:
                if not self._bound:
                    for scope_, bound in (*self.imports, *self.facts):
                        self._bound.setdefault(scope_, set()).add(bound)
                providers = {}
                for f in self.closure(scope):
                    for n in {*self.index.top_level.get(f, {}), *self._bound.get(f, ())}:
                        providers.setdefault(n, []).append(f)
                self._providers[files] = providers
            self._providers[scope] = providers
        return providers
