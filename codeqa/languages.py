"""The language registry: extension/shebang -> tree-sitter grammar -> queries/<language>/*.scm.

This is the one place that touches the tree-sitter API version and finds query files. Adding a
language = one row in LANGUAGES plus queries/<name>/definitions.scm and references.scm (and
optionally locals.scm); a language's query files are compiled into one QuerySet, each file with the
files it inherits (`; inherits: <language>`) first.
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
    # an import that names no symbol (`#include "x.h"`, `using Ns;`, `require_relative "x"`) makes every
    # top-level name of those files visible, instead of binding the module to a name
    bare_import_is_star: bool = False
    # ... and what those files include is visible too (C/C++ includes, Ruby/PHP requires; not C# using)
    imports_are_transitive: bool = False
    # `import X from "./m"` / `const X = require("./m")` bind m's default export, found by X's name
    default_import_by_name: bool = False
    # a module re-exports what it imports (`export { A } from "./a"`, `export * from "./a"`, barrels,
    # Python's `from .core import A` in a package's __init__)
    reexports: bool = False
    # a star import brings only some names (Python: those `__all__` lists, else the public ones), which
    # is not modelled: a name imported by name through a star re-export stays likely
    star_import_filters: bool = False
    # an import path names a package folder, not a file (Go: "example.com/app/server" -> server/*.go)
    import_is_folder: bool = False
    # where a plain import path is looked up before the rest of the project: "file" = next to the
    # importing file (C `#include "x.h"`, Ruby `require_relative`), "module" = in the importing
    # module's folder (Rust `mod x;`, `use x::y`)
    imports_relative_to: str | None = None
    # a declared type is the variable's type: `List<Item> items; items.add(x)` is not our `add`
    static_types: bool = False
    # methods every builtin collection/object has: `x.each`, `x.map()`, `x.toString()` on a receiver
    # of unknown type are never guessed to be ours by their name alone
    generic_methods: frozenset[str] = frozenset()
    # a file that does not parse cleanly is parsed again with this language's grammar and queries,
    # and the one with fewer syntax errors wins (C++ headers named .h; a tie keeps this row's language)
    retry_as: str | None = None
    # source where this pattern occurs is parsed with `retry_as` first, and with this row's grammar only
    # when that has syntax errors: C++ headers named .h (`namespace x {`, `template <`) took the C
    # grammar ~4x as long as the C++ one, all of it recovering from errors (site-packages: 9.5k headers)
    retry_first: re.Pattern[bytes] | None = None
    # languages whose code can call each other's definitions by name (C and C++; JS, TS and TSX): a
    # name-only guess never crosses into another family (a Python `x.run()` is not a Ruby `run`)
    family: str = ""
    # a module is the table its file builds and returns (Lua `local M = {}` ... `return M`): what a
    # require gives (`local u = require("a.u"); u.f()`) is a member of that file's top-level tables
    exports_table_members: bool = False
    # folders whose child folders are modules with no per-file imports inside them (SwiftPM
    # `Sources/<Target>/`, `Tests/<Target>/`): a file sees the top-level names of every file below its
    # module folder (likely), and `import Target` names those files; a file in no such folder sees
    # its own folder's names, as in the languages with packages
    module_roots: tuple[str, ...] = ()
    # (regex, replacement) rewrites of an import path before it is looked up: Dart's
    # `package:args/src/parser.dart` is args/lib/src/parser.dart (a package's own lib/ folder)
    import_rewrites: tuple[tuple[str, str], ...] = ()
    # a module is a symbol named by its full dotted name, in any file (Elixir `defmodule Shop.Cart`): an
    # import's module string names that symbol (`alias Shop.Cart` binds Cart; codeqa/indexing/graph/dotted.py), a
    # receiver written as a module name (`Shop.Cart.add()`) is that module, and one none of ours is not ours
    module_symbols: bool = False
    # languages a file of this row may be written in, each with a pattern only that language writes: where
    # it occurs, that grammar goes first and this row's is the retry (an Objective-C header named .h)
    written_as: tuple[tuple[str, re.Pattern[bytes]], ...] = ()
    # a markup file whose `<script>` blocks are the code (Vue, Svelte): this row's grammar finds them and
    # they are parsed as the language their lang attribute names, the rest blanked (embedded.py)
    script_regions: bool = False
    # an import names its module in full, which is its path below a source folder (Haskell `import
    # Data.Map` -> .../Data/Map.hs): no shorter suffix is tried, a module that names no file of ours is
    # another project's, and a receiver written as a module name (`Data.Map.insert`) is that module
    modules_in_full: bool = False
    # a type's members are names of the module too (Haskell data constructors, record fields and class
    # methods: `Circle 1.0`, `itemName item` and `cost x` name them bare, and imports name them)
    members_in_module_scope: bool = False
    # one definition may be written as consecutive equations of one name (Haskell `f :: Int -> Int`,
    # `f 0 = 1`, `f n = n * f (n - 1)`): one symbol from the first to the last
    equations: bool = False
    # syntax the grammar cannot read, hidden from it: the grammar parses a copy of the file of the same
    # length where this pattern's groups named `blank...` are spaces and those named `name...` read as one
    # name each (`_`s; over several lines only the first and last byte); names are still read from the file
    parse_mask: re.Pattern[bytes] | None = None
    # a file is a module that code imports as a whole and uses through its name (`from . import mod`,
    # `mod.f()`, `import * as mod from "./mod"`): it is a symbol of kind module (indexing/graph/modules.py)
    # named by its stem, or, for these stems, by its folder (a Python package's `__init__`, a JS folder's
    # `index`); empty: files are no symbols
    file_modules: tuple[str, ...] = ()

    @property
    def family_name(self) -> str:
        return self.family or self.name


_JS_METHODS = frozenset({
    "toString", "valueOf", "toJSON", "then", "catch", "finally", "map", "filter", "forEach", "reduce",
    "find", "some", "every", "includes", "indexOf", "join", "slice", "splice", "concat", "push", "pop",
    "shift", "unshift", "keys", "values", "entries", "get", "set", "has", "add", "delete", "clear",
    "split", "replace", "trim", "call", "apply", "bind", "on", "off", "emit"})
_RUBY_METHODS = frozenset({
    "each", "each_with_index", "map", "select", "reject", "find", "reduce", "sum", "count", "first", "last",
    "to_s", "to_str", "to_a", "to_h", "to_json", "inspect", "call", "hash", "eql?", "==", "<=>", "size",
    "length", "[]", "[]=", "<<", "include?", "empty?", "key?", "fetch", "merge", "push", "delete", "dup"})
_JVM_METHODS = frozenset({
    "toString", "equals", "hashCode", "compareTo", "iterator", "get", "set", "add", "put", "remove",
    "size", "isEmpty", "contains", "close", "run", "apply", "accept", "stream", "ToString", "Equals",
    "GetHashCode", "Add", "Remove", "Contains", "Dispose", "GetEnumerator"})
_RUST_METHODS = frozenset({
    "iter", "iter_mut", "into_iter", "len", "is_empty", "get", "get_mut", "insert", "remove", "push", "pop",
    "contains", "clone", "to_string", "to_owned", "as_ref", "as_str", "unwrap", "expect", "map", "and_then",
    "collect", "next", "fmt", "eq", "cmp", "partial_cmp", "hash", "from", "into", "try_from", "try_into",
    "default", "write", "read", "extend", "keys", "values", "drop", "deref"})
_GO_METHODS = frozenset({
    "String", "Error", "Close", "Read", "Write", "Len", "Less", "Swap", "Lock", "Unlock", "Wait", "Done",
    "Add", "Get", "Set", "Del"})
_CPP_METHODS = frozenset({
    "size", "empty", "begin", "end", "push_back", "emplace_back", "get", "reset", "find", "insert", "erase",
    "clear", "c_str", "data", "at", "front", "back", "count", "swap", "release"})
_LUA_METHODS = frozenset({
    "format", "sub", "gsub", "gmatch", "match", "find", "len", "upper", "lower", "rep", "byte", "insert",
    "remove", "concat", "sort", "unpack", "close", "read", "write", "lines", "flush", "seek", "setvbuf"})
_KOTLIN_METHODS = frozenset({
    "let", "also", "run", "apply", "takeIf", "use", "forEach", "map", "filter", "first", "firstOrNull", "orEmpty",
    "getOrNull", "getOrElse", "sumOf", "invoke", "copy", "component1", "component2", "plus", "minus"})
_SCALA_METHODS = frozenset({
    "map", "flatMap", "foreach", "filter", "foldLeft", "fold", "getOrElse", "head", "tail", "toList", "toSeq",
    "toMap", "mkString", "nonEmpty", "length", "sum", "exists", "forall", "collect", "unapply", "copy"})
_SWIFT_METHODS = frozenset({
    "append", "insert", "remove", "removeAll", "removeFirst", "removeLast", "contains", "first", "last", "map",
    "compactMap", "flatMap", "filter", "reduce", "forEach", "sorted", "sort", "joined", "split", "isEmpty", "count",
    "index", "firstIndex", "lastIndex", "enumerated", "reversed", "prefix", "suffix", "dropFirst", "dropLast",
    "hash", "encode", "description", "makeIterator", "next", "min", "max", "replacingOccurrences", "hasPrefix",
    "hasSuffix", "lowercased", "uppercased", "trimmingCharacters", "components", "updateValue", "removeValue"})
_DART_METHODS = frozenset({
    "add", "addAll", "remove", "removeWhere", "contains", "containsKey", "map", "where", "forEach", "fold", "reduce",
    "toList", "toSet", "join", "split", "first", "last", "isEmpty", "isNotEmpty", "length", "then", "catchError",
    "listen", "toString", "compareTo", "putIfAbsent", "cast", "expand", "any", "every", "sort", "insert", "clear",
    "substring", "startsWith", "endsWith", "trim", "replaceAll", "indexOf", "write", "writeln", "call"})
_OBJC_METHODS = frozenset({
    "alloc", "init", "new", "copy", "retain", "release", "autorelease", "description", "isEqual", "hash", "count",
    "objectAtIndex", "objectForKey", "setObject", "addObject", "removeObject", "length", "class", "respondsToSelector"})
_GROOVY_METHODS = frozenset({
    "each", "eachWithIndex", "collect", "collectEntries", "findAll", "find", "any", "every", "inject", "with",
    "sum", "join", "split", "trim", "times", "upto", "call", "getAt", "putAt", "leftShift", "withCloseable",
    "withReader", "withWriter", "eachLine", "sort", "unique", "groupBy", "first", "last", "println", "print"})
_PHP_METHODS = frozenset({
    "__toString", "count", "getIterator", "offsetGet", "offsetSet", "offsetExists", "jsonSerialize", "toArray"})


# what tree-sitter-groovy cannot read (it has no `*`, `?`, `%`, comparison or shift operators, and no
# string with a member, `'x'.bytes`, nor annotation arguments), hidden from it: comments and plain
# double-quoted strings (their `${x.m()}` parses) stay; other strings, Spock's `def "a feature"()` and the
# `*` of `import a.b.*` read as one name (the `*` still names a star import), and so do slashy strings
# (`=~ /^a.*'/`); the operators it lacks, the `:` of an empty map `[:]` and annotation arguments are blanks
_GROOVY_MASK = re.compile(
    rb"//[^\n]*|/\*[\s\S]*?\*/"
    rb"|(?P<name>\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|'(?:[^'\\\n]|\\.)*'"
    rb"|\"(?:[^\"\\\n]|\\.)*\"(?=[ \t]*[.(])|(?<=\.)\*)"
    rb"|(?<=[~=(,])[ \t]*(?P<name_slashy>/(?![/*])(?:[^/\\\n]|\\.)+/)"
    rb"|\"(?:[^\"\\\n]|\\.)*\""
    rb"|(?P<blank>(?<=\[):(?=\])|\?|%|\*|\.\.[.<]?|(?<=\.)&|(?<=\s)(?:<<|>>>?|<=>|[<>]=?|/=?)(?=\s))"
    rb"|@[\w.]+[ \t]*(?P<blank_arguments>\((?:[^()\n]|\([^()\n]*\))*\))")
# a line that only Objective-C writes: an interface, a protocol, an implementation, a forward class
_OBJC_SYNTAX = re.compile(rb"^[ \t]*@(?:interface|protocol|implementation|class)\b", re.MULTILINE)
# macros tree-sitter-objc misreads (it knows none of Apple's), blanked: a line that is only a macro
# (`NS_ASSUME_NONNULL_BEGIN`, `NS_EXTENSION_UNAVAILABLE_IOS("...")`) and macros after a declaration,
# before its `;` or `{` (`- (void)f API_AVAILABLE(ios(10), macosx(10.12));`, `NS_DESIGNATED_INITIALIZER`).
# A macro is an uppercase name with an underscore and arguments in balanced parentheses or none.
# Comments, strings, preprocessor lines, a typedef's first word (`typedef NS_ENUM(...) {` names the enum)
# and the rest of a statement after `=`, `return`, `if (...)` and the like (`if (x) FOO_BAR(y);`,
# `x = (double) DBL_MAX;`) are read past, unchanged
_OBJC_MACRO = rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*(?:[ \t]*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))?"
_OBJC_MASK = re.compile(
    rb"//[^\n]*|/\*[\s\S]*?\*/|\"(?:[^\"\\\n]|\\.)*\"|^[ \t]*#(?:[^\n\\]|\\[\s\S])*|\btypedef\s+\w+"
    rb"|(?:(?<!getter)(?<!setter)(?<![=!<>])=(?!=)|\b(?:return|else|do|case)\b"
    rb"|\b(?:if|while|for|switch)[ \t]*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))[^;{}\n]*"
    rb"|^(?P<blank_line>" + _OBJC_MACRO + rb")[ \t]*$"
    rb"|(?<=[\w)])[ \t]+(?P<blank_after>" + _OBJC_MACRO + rb"(?:[ \t]+" + _OBJC_MACRO + rb")*)(?=\s*[;{])",
    re.MULTILINE)
# a line that only C++ writes: a namespace, a template, a class with a body, an access specifier
_CPP_SYNTAX = re.compile(rb"^[ \t]*(?:namespace\b|template[ \t]*<|class[ \t]+\w+[^;{]*\{|using[ \t]+namespace\b"
                         rb"|(?:public|private|protected)[ \t]*:)", re.MULTILINE)
_JS = dict(family="ecmascript", self_names=("this", "super"), explicit_imports=True, default_import_by_name=True, reexports=True,
           generic_methods=_JS_METHODS)
_TS = dict(_JS, static_types=True)
LANGUAGES: tuple[Language, ...] = (
    Language("python", "python", (".py", ".pyi", ".pyw"), ("python",), docstring_in_body=True,
             self_names=("self", "cls", "super()"), explicit_imports=True, package_init="__init__",
             stub_extensions=(".pyi",), reexports=True, star_import_filters=True, file_modules=("__init__",)),
    Language("javascript", "javascript", (".js", ".mjs", ".cjs", ".jsx"), ("node",), file_modules=("index",), **_JS),
    Language("typescript", "typescript", (".ts", ".mts", ".cts"), file_modules=("index",), **_TS),
    Language("tsx", "tsx", (".tsx",), file_modules=("index",), **_TS),
    Language("java", "java", (".java",), self_names=("this", "super"), implicit_this=True, static_types=True,
             generic_methods=_JVM_METHODS),
    Language("go", "go", (".go",), self_names=(), import_is_folder=True, static_types=True, generic_methods=_GO_METHODS),
    Language("rust", "rust", (".rs",), self_names=("self", "Self"), imports_relative_to="module", static_types=True,
             reexports=True, generic_methods=_RUST_METHODS),
    Language("c", "c", (".c", ".h"), self_names=(), bare_import_is_star=True, imports_are_transitive=True,
             imports_relative_to="file",
             static_types=True, retry_as="cpp", retry_first=_CPP_SYNTAX, family="c", written_as=(("objc", _OBJC_SYNTAX),)),
    Language("cpp", "cpp", (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".h++", ".c++"), self_names=("this",),
             implicit_this=True, bare_import_is_star=True, imports_are_transitive=True, imports_relative_to="file",
             static_types=True, generic_methods=_CPP_METHODS, family="c"),
    Language("csharp", "csharp", (".cs",), self_names=("this", "base"), implicit_this=True, bare_import_is_star=True,
             static_types=True, generic_methods=_JVM_METHODS),
    Language("ruby", "ruby", (".rb", ".rake", ".gemspec"), ("ruby",), self_names=("self", "super"), implicit_this=True,
             bare_import_is_star=True, imports_are_transitive=True, imports_relative_to="file",
             generic_methods=_RUBY_METHODS),
    Language("php", "php", (".php",), ("php",), self_names=("$this", "this", "self", "static", "parent"),
             bare_import_is_star=True, imports_are_transitive=True, imports_relative_to="file", static_types=True,
             generic_methods=_PHP_METHODS),
    Language("lua", "lua", (".lua",), ("lua",), self_names=("self",), explicit_imports=True, exports_table_members=True,
             generic_methods=_LUA_METHODS),
    Language("bash", "bash", (".sh", ".bash"), ("bash", "/sh", " sh", "dash", "ksh", "zsh"), self_names=(),
             bare_import_is_star=True, imports_are_transitive=True, imports_relative_to="file"),
    Language("kotlin", "kotlin", (".kt", ".kts"), self_names=("this", "super"), implicit_this=True, static_types=True,
             generic_methods=_JVM_METHODS | _KOTLIN_METHODS, family="java"),
    Language("scala", "scala", (".scala", ".sc"), self_names=("this", "super"), implicit_this=True, static_types=True,
             generic_methods=_JVM_METHODS | _SCALA_METHODS, family="java"),
    Language("swift", "swift", (".swift",), self_names=("self", "super", "Self"), implicit_this=True,
             bare_import_is_star=True, static_types=True, generic_methods=_SWIFT_METHODS, module_roots=("Sources", "Tests")),
    Language("dart", "dart", (".dart",), self_names=("this", "super"), implicit_this=True, bare_import_is_star=True,
             reexports=True, star_import_filters=True, imports_relative_to="file", static_types=True,
             generic_methods=_DART_METHODS, import_rewrites=((r"^package:([^/]+)/", r"\1/lib/"),)),
    Language("solidity", "solidity", (".sol",), self_names=("this", "super"), implicit_this=True, bare_import_is_star=True,
             imports_are_transitive=True, static_types=True),
    Language("julia", "julia", (".jl",), ("julia",), self_names=(), implicit_this=True, bare_import_is_star=True,
             imports_are_transitive=True, imports_relative_to="file"),
    Language("r", "r", (".r",), ("Rscript",), self_names=(".self",), bare_import_is_star=True, imports_are_transitive=True,
             imports_relative_to="file"),
    # `import Shop.Util` (no alias) brings Util's functions (bare_import_is_star); local calls find the
    # enclosing module's functions (implicit_this); multi-clause functions (`def f(0)`, `def f(n)`) are
    # one definition, as overloads are (static_types: Elixir declares no variable types to misread)
    Language("elixir", "elixir", (".ex", ".exs"), ("elixir",), self_names=("__MODULE__",), implicit_this=True,
             bare_import_is_star=True, static_types=True, module_symbols=True),
    # `#import "x.h"` as C's #include; its headers named .h are C's row, parsed as Objective-C (written_as)
    Language("objc", "objc", (".m",), self_names=("self", "super"), bare_import_is_star=True, imports_are_transitive=True,
             imports_relative_to="file", static_types=True, generic_methods=_OBJC_METHODS, family="c",
             parse_mask=_OBJC_MASK),
    # Groovy beside Java and Kotlin: `def x = new Foo()` types x through the value; a bare `m()` in a class
    # may be the class's own; `.gradle` build scripts stay text documents (DSL calls, no definitions)
    Language("groovy", "groovy", (".groovy", ".gvy", ".gy", ".gsh"), ("groovy",), self_names=("this", "super"),
             implicit_this=True, static_types=True, generic_methods=_JVM_METHODS | _GROOVY_METHODS, family="java",
             parse_mask=_GROOVY_MASK),
    Language("vue", "vue", (".vue",), script_regions=True, **_TS),
    Language("svelte", "svelte", (".svelte",), script_regions=True, **_TS),
    # `import A.B` brings what A.B exports (a star import: likely), `import A.B (f)` names f, `import
    # qualified A.B as C` binds C; a name neither defined nor imported cannot be ours (the Prelude's names)
    Language("haskell", "haskell", (".hs",), ("runhaskell", "runghc"), self_names=(), explicit_imports=True,
             bare_import_is_star=True, reexports=True, star_import_filters=True, modules_in_full=True,
             members_in_module_scope=True, equations=True),
)
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


def queries_dir(query_dir: Path | None = None) -> Path:
    """queries/: `query_dir` when given (Settings.queries_dir, CODEQA_QUERIES_DIR), else the installed
    package data, else the source checkout."""
    if query_dir is not None:
        return Path(query_dir)
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


_INHERITS = re.compile(r"^;\s*inherits:\s*([\w, ]+?)\s*$", re.MULTILINE)


def query_text(name: str, kind: str, query_dir: Path | None = None) -> str | None:
    """The text of queries/<name>/<kind>.scm with the files it inherits first.

    A line `; inherits: typescript` pulls in queries/typescript/<kind>.scm, so a grammar that extends
    another (TSX over TypeScript) only adds its own patterns.
    """
    path = queries_dir(query_dir) / name / f"{kind}.scm"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    parents = [p.strip() for m in _INHERITS.finditer(text) for p in m.group(1).split(",") if p.strip()]
    return "\n".join([query_text(parent, kind, query_dir) or "" for parent in parents] + [text])


QUERY_KINDS = ("definitions", "references", "locals")  # queries/<language>/<kind>.scm


@dataclass(frozen=True)
class QuerySet:
    """A language's query files compiled as one query, so that a tree is walked once."""

    query: object
    ranges: dict[str, range]  # kind -> its patterns' indexes in the combined query
    captures: tuple[frozenset[str], ...]  # capture names of each pattern, by combined index
    # the patterns of references.scm and locals.scm with one capture, of a name that is no import
    # (`(identifier) @name.reference.attribute`, `(call function: (identifier) @name.reference.call)`,
    # `... @ignore`) or of a local scope or binding: disabled in `query` and run apart, as plain
    # captures. A match costs a dict, a list and a tuple; on Python files a third of the matches were
    # these (and `(identifier)` matches every name of a file)
    names: object | None = None

    def run(self, node) -> list[tuple[int, dict[str, list]]]:
        """Matches under `node` as (pattern index in the combined query, {capture name: [nodes]})."""
        return _matches(self.query, node)

    def run_names(self, node) -> dict[str, list]:
        """The captures of the patterns run apart (`names`) under `node`: {capture name: [nodes]};
        a node two of them capture under one name may be listed twice."""
        if self.names is None:
            return {}
        from tree_sitter import QueryCursor

        return QueryCursor(self.names).captures(node)

    def select(self, matches: list, kind: str) -> list[tuple[int, dict[str, list]]]:
        """The matches of one query file's patterns."""
        patterns = self.ranges.get(kind, range(0))
        return [m for m in matches if m[0] in patterns]

    def pattern_captures(self, kind: str) -> tuple[frozenset[str], ...]:
        """Capture names of every pattern of the combined query that belongs to `kind`; empty for the others."""
        patterns = self.ranges.get(kind, range(0))
        return tuple(names if i in patterns else frozenset() for i, names in enumerate(self.captures))


@lru_cache(maxsize=None)
def get_query_set(name: str, query_dir: Path | None = None) -> QuerySet | None:
    """queries/<name>/{definitions,references,locals}.scm as one QuerySet (from `query_dir`, see
    queries_dir); None without any of them."""
    from tree_sitter import Query

    texts = [(kind, text) for kind in QUERY_KINDS if (text := query_text(name, kind, query_dir)) is not None]
    if not texts:
        return None
    # one compile (the costly step): each pattern belongs to the file whose bytes it starts in
    bounds, offset = [], 0
    for kind, text in texts:
        size = len(text.encode("utf-8")) + 1  # + the joining newline
        bounds.append((kind, offset, offset + size))
        offset += size
    text = "\n".join(t for _, t in texts)
    combined = Query(get_ts_language(name), text)
    starts = [combined.start_byte_for_pattern(i) for i in range(combined.pattern_count)]
    ranges = {}
    for kind, lo, hi in bounds:
        inside = [i for i, b in enumerate(starts) if lo <= b < hi]
        if inside:
            ranges[kind] = range(inside[0], inside[-1] + 1)
    raw = text.encode("utf-8")
    patterns = [raw[starts[i]:combined.end_byte_for_pattern(i)].strip() for i in range(combined.pattern_count)]
    captures = tuple(frozenset(c.decode() for c in _CAPTURE.findall(pattern)) for pattern in patterns)
    single = []
    for i in (*ranges.get("references", ()), *ranges.get("locals", ())):
        pattern = patterns[i]
        if _captured_apart(pattern):
            single.append(pattern.decode("utf-8"))
            combined.disable_pattern(i)
    names = Query(get_ts_language(name), "\n".join(single)) if single else None
    return QuerySet(combined, ranges, captures, names)


_CAPTURE = re.compile(rb"@([\w.]+)")
_CAPTURED_APART = re.compile(rb"name\.reference\.(?!import$)\w+|ignore|local\.definition|local\.scope")


def _captured_apart(pattern: bytes) -> bool:
    """Whether a pattern runs apart as plain captures (QuerySet.names): one capture, of a name that is
    no import, or of a local scope or binding; no predicate, string or comment (kept in `query`,
    where they are read the way they always were)."""
    if any(c in pattern for c in (b'"', b"#", b";")):
        return False
    names = _CAPTURE.findall(pattern)
    return len(names) == 1 and _CAPTURED_APART.fullmatch(names[0]) is not None


def _matches(query, node) -> list[tuple[int, dict[str, list]]]:
    try:
        from tree_sitter import QueryCursor  # 0.24+: captures already map to lists

        return QueryCursor(query).matches(node)
    except ImportError:  # 0.23
        return [(i, {n: (v if isinstance(v, list) else [v]) for n, v in c.items()}) for i, c in query.matches(node)]
