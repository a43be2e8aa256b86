"""The language registry: extension/shebang -> tree-sitter grammar -> queries/<language>/*.scm.

This is the one place that touches the tree-sitter API version and finds query files. Adding a
language = one row in LANGUAGES plus queries/<name>/definitions.scm and references.scm.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class Language:
    name: str  # our name; also the queries/ folder
    grammar: str  # tree-sitter-language-pack name
    extensions: tuple[str, ...]
    shebangs: tuple[str, ...] = ()
    docstring_in_body: bool = False
    # graph resolution facts
    self_names: tuple[str, ...] = ("this",)  # receivers that mean "the enclosing class"
    implicit_this: bool = False  # a bare `m()` inside a class may call the class's own member
    explicit_imports: bool = False  # a name neither defined nor imported in a file cannot be ours
    # Python-style packages: a folder is a package when it holds this file (`__init__`); a module's
    # dotted path runs from the nearest folder above that is no package; an import names its module
    # in full (folders are no modules, no prefix is dropped); `import a.b` binds `a`
    package_init: str = ""
    stub_extensions: tuple[str, ...] = ()  # declarations-only files beside the code (`.pyi`)


LANGUAGES: tuple[Language, ...] = (
    Language("python", "python", (".py", ".pyi", ".pyw"), ("python",), docstring_in_body=True,
             self_names=("self", "cls", "super()"), explicit_imports=True, package_init="__init__",
             stub_extensions=(".pyi",)),
    Language("javascript", "javascript", (".js", ".mjs", ".cjs", ".jsx"), ("node",),
             self_names=("this", "super"), explicit_imports=True),
    Language("typescript", "typescript", (".ts", ".mts", ".cts"), self_names=("this", "super"), explicit_imports=True),
    Language("tsx", "tsx", (".tsx",), self_names=("this", "super"), explicit_imports=True),
    Language("java", "java", (".java",), self_names=("this", "super"), implicit_this=True),
    Language("go", "go", (".go",), self_names=()),
    Language("rust", "rust", (".rs",), self_names=("self", "Self")),
    Language("c", "c", (".c", ".h"), self_names=()),
    Language("cpp", "cpp", (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".h++", ".c++"), self_names=("this",), implicit_this=True),
    Language("csharp", "csharp", (".cs",), self_names=("this", "base"), implicit_this=True),
    Language("ruby", "ruby", (".rb", ".rake", ".gemspec"), ("ruby",), self_names=("self", "super"), implicit_this=True),
    Language("php", "php", (".php",), ("php",), self_names=("$this", "this", "self", "static", "parent")),
)
MARKDOWN_EXTENSIONS = (".md", ".markdown")
_BY_NAME = {lang.name: lang for lang in LANGUAGES}
_BY_EXT = {ext: lang.name for lang in LANGUAGES for ext in lang.extensions}


def language_by_name(name: str) -> Language:
    return _BY_NAME[name]


def detect_language(path: str, first_line: str = "") -> str | None:
    """Registry name for a file, by extension then by shebang; None when we have no grammar."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in _BY_EXT:
        return _BY_EXT[suffix]
    if first_line.startswith("#!"):
        for lang in LANGUAGES:
            if any(s in first_line for s in lang.shebangs):
                return lang.name
    return None


def queries_dir() -> Path:
    """queries/ from CODEQA_QUERIES_DIR, else the installed package data, else the source checkout."""
    override = os.environ.get("CODEQA_QUERIES_DIR")
    if override:
        return Path(override)
    here = Path(__file__).resolve().parent
    installed = here / "queries"  # a wheel puts queries/ inside the package
    return installed if installed.is_dir() else here.parent / "queries"


@lru_cache(maxsize=None)
def get_parser(name: str):
    from tree_sitter_language_pack import get_parser as _get_parser

    return _get_parser(language_by_name(name).grammar)


@lru_cache(maxsize=None)
def get_ts_language(name: str):
    from tree_sitter_language_pack import get_language

    return get_language(language_by_name(name).grammar)


@lru_cache(maxsize=None)
def get_query(name: str, kind: str):
    """Compiled queries/<name>/<kind>.scm, or None when the file does not exist."""
    from tree_sitter import Query

    path = queries_dir() / name / f"{kind}.scm"
    if not path.is_file():
        return None
    return Query(get_ts_language(name), path.read_text(encoding="utf-8"))


QUERY_KINDS = ("definitions", "references", "locals")  # queries/<language>/<kind>.scm


@dataclass(frozen=True)
class QuerySet:
    """A language's query files compiled as one query, so that a tree is walked once."""

    query: object
    ranges: dict[str, range]  # kind -> its patterns' indexes in the combined query
    captures: tuple[frozenset[str], ...]  # capture names of each pattern, by combined index

    def run(self, node) -> list[tuple[int, dict[str, list]]]:
        """Matches under `node` as (pattern index in the combined query, {capture name: [nodes]})."""
        return _matches(self.query, node)

    def select(self, matches: list, kind: str) -> list[tuple[int, dict[str, list]]]:
        """The matches of one query file's patterns."""
        patterns = self.ranges.get(kind, range(0))
        return [m for m in matches if m[0] in patterns]

    def pattern_captures(self, kind: str) -> tuple[frozenset[str], ...]:
        """Capture names of every pattern of the combined query that belongs to `kind`; empty for the others."""
        patterns = self.ranges.get(kind, range(0))
        return tuple(names if i in patterns else frozenset() for i, names in enumerate(self.captures))


@lru_cache(maxsize=None)
def get_query_set(name: str) -> QuerySet | None:
    """queries/<name>/{definitions,references,locals}.scm as one QuerySet; None without any of them."""
    from tree_sitter import Query

    texts, ranges, count = [], {}, 0
    for kind in QUERY_KINDS:
        query = get_query(name, kind)
        if query is None:
            continue
        ranges[kind] = range(count, count + query.pattern_count)
        count += query.pattern_count
        texts.append((queries_dir() / name / f"{kind}.scm").read_text(encoding="utf-8"))
    if not texts:
        return None
    text = "\n".join(texts)
    combined = Query(get_ts_language(name), text)
    raw = text.encode("utf-8")
    captures = tuple(
        frozenset(c.decode() for c in re.findall(rb"@([\w.]+)", raw[combined.start_byte_for_pattern(i):combined.end_byte_for_pattern(i)]))
        for i in range(combined.pattern_count)
    )
    return QuerySet(combined, ranges, captures)


def _matches(query, node) -> list[tuple[int, dict[str, list]]]:
    try:
        from tree_sitter import QueryCursor  # 0.24+: captures already map to lists

        return QueryCursor(query).matches(node)
    except ImportError:  # 0.23
        return [(i, {n: (v if isinstance(v, list) else [v]) for n, v in c.items()}) for i, c in query.matches(node)]
