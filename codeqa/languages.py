"""The language registry: extension/shebang -> tree-sitter grammar -> queries/<language>/*.scm.

This is the one place that touches the tree-sitter API version and finds query files. Adding a
language = one row in LANGUAGES plus queries/<name>/definitions.scm and references.scm.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator


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


def run_matches(query, node) -> Iterator[dict[str, list]]:
    """Matches of `query` under `node` as {capture name: [nodes]} (tree-sitter 0.23-0.26 shim)."""
    try:
        from tree_sitter import QueryCursor  # 0.24+

        matches = QueryCursor(query).matches(node)
    except ImportError:  # 0.23
        matches = query.matches(node)
    for _pattern, captures in matches:
        yield {name: (nodes if isinstance(nodes, list) else [nodes]) for name, nodes in captures.items()}
