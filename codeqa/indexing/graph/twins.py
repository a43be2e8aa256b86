"""Stub/code twins (`m.pyi` next to `m.py`): a reference to either counts for both, anywhere.

The pairs are the top-level names of a stub as its code module exports them, and the members of
twin classes, worked out by the resolver (graph/resolve.py) that is resolving the project.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import Any, Iterable

from ...types import CLASS_LIKE


def stub_twins(resolver: Any) -> dict[str, tuple[str, ...]]:
    """Symbol id -> the ids declaring the same thing in the paired stub or code file (`m.pyi` / `m.py`):
    top-level names as the code module exports them, and the members of twin classes."""
    index = resolver.index
    pairs: list[tuple[str, str]] = []
    for key in list(resolver.index.top_level):
        lang = resolver.language(key)
        if lang is not None and key.endswith(lang.stub_extensions):
            stem = posixpath.splitext(key)[0]
            pairs.extend((key, stem + ext) for ext in lang.extensions if stem + ext in index.languages and ext not in lang.stub_extensions)
    twins: dict[str, set[str]] = defaultdict(set)

    def link(stub_ids: Iterable[str], code_ids: Iterable[str]) -> None:
        for a in stub_ids:
            for b in code_ids:
                twins[a].add(b)
                twins[b].add(a)

    for stub, code in pairs:
        for name, symbols in index.top_level.get(stub, {}).items():
            try:
                code_ids = resolver.export(code, name).ids
            except RecursionError:  # see resolve_by_file: a star-import web deeper than the stack
                continue
            link([s.id for s in symbols], code_ids)
            for symbol in symbols:
                if symbol.kind not in CLASS_LIKE:
                    continue
                for member, declared in index.members.get(symbol.id, {}).items():
                    link([d.id for d in declared], [m for c in code_ids for m in resolver.members.find(c, member)])
    return {k: tuple(sorted(v)) for k, v in twins.items()}
