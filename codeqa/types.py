"""Frozen dataclasses that cross pipeline stages. Lines are 1-based and inclusive everywhere."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .languages import language_by_name

_NOT_KEY = re.compile(r"[^a-z0-9.]")

# Symbol kinds that hold members (methods, fields, nested types): classes and their kin.
# "object": a JavaScript object literal that holds methods (queries/ecmascript/definitions.scm)
CLASS_LIKE = frozenset({"class", "struct", "interface", "enum", "trait", "impl", "module", "type", "object"})
FUNCTION_KINDS = frozenset({"function", "method"})  # symbol kinds that can be called and return
RETURNS = "return"  # Reference.assigned of a value or type the enclosing function returns


@dataclass(frozen=True)
class SourceFile:
    """A file the walker accepted. `path` is relative to the repo root, posix style."""

    path: str
    abs_path: Path
    language: str | None  # registry name, None when no grammar (chunked by line windows)
    size: int
    sha256: str


@dataclass(frozen=True)
class SkippedFile:
    """A file or folder the walk left out. reason: secret, generated, minified, binary, undecodable,
    too-large, not-source, unreadable, broken-symlink, special-file (FIFO, socket, device),
    outside-repo (a symlink leaving the repository), bad-name (not UTF-8), symlink-loop, codeqaignore (left out by a
    .codeqaignore file; a folder once, with detail "folder")."""

    path: str
    reason: str
    detail: str = ""  # e.g. the OS error ("EACCES") or the size


@dataclass(frozen=True, slots=True)
class Symbol:
    id: str  # path + "#" + qualified_name + "@" + start_line: unique and stable
    name: str
    qualified_name: str
    kind: str  # class, struct, interface, enum, trait, function, method, module...
    language: str
    path: str
    start_line: int
    end_line: int
    signature: str
    docstring: str
    parent_id: str | None


def symbol_id(path: str, qualified_name: str, start_line: int) -> str:
    """Symbol.id: `path#Qualified.name@line`."""
    return f"{path}#{qualified_name}@{start_line}"


def name_key(name: str) -> str:
    """How a name is looked up: lowercased, without `_` and other punctuation but the dots
    (`EncoderClass`, `encoder_class` and "encoder class" all give `encoderclass`)."""
    return _NOT_KEY.sub("", name.lower())


def one_line(text: str, limit: int = 200, *, drop_period: bool = False) -> str:
    """`text` on one line (whitespace runs collapsed), cut to `limit` characters with "…". With
    `drop_period`, a trailing "." goes first, so the text can sit inside a sentence of the caller's."""
    text = " ".join(str(text).split())
    if drop_period:
        text = text.rstrip(".")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def is_file_module(symbol: Symbol) -> bool:
    """Whether `symbol` is a file's module symbol (codeqa/indexing/graph/modules.py: a file of a language
    whose files are modules, lines 1 to its end), not a module written in the code (Ruby's `module Shop`
    on line 1, Rust's `mod x {}`, a TypeScript namespace, a Haskell module header)."""
    if symbol.kind != "module" or symbol.start_line != 1 or symbol.parent_id is not None:
        return False
    try:
        files_are_modules = bool(language_by_name(symbol.language).file_modules)
    except KeyError:
        return False
    return files_are_modules and symbol.signature in (f"module {symbol.qualified_name}", f"package {symbol.qualified_name}")


def split_symbol_id(symbol_id: str) -> tuple[str, str]:
    """(path, qualified name) of a Symbol.id."""
    path, _, rest = symbol_id.partition("#")
    return path, rest.rsplit("@", 1)[0]


@dataclass(frozen=True, slots=True)
class Reference:
    name: str
    path: str
    line: int
    column: int  # 0-based, as tree-sitter reports it
    kind: str  # call, instantiation, type, import, inheritance, attribute
    enclosing_symbol_id: str | None
    target_ids: tuple[str, ...]
    confidence: str  # exact | likely | name-only; from parse: unresolved, or local (a local variable's read, kept as type evidence only)
    line_text: str
    # qualifier the reference was written with: "self", "this", an import alias, a module...
    receiver: str | None = None
    # for imports: the module path the name was imported from ("pkg.mod", "./util")
    module: str | None = None
    # for imports bound to another local name ("from x import Y as Z" -> alias "Z")
    alias: str | None = None
    # the variable this call/type was assigned or declared to (`x = Foo()`, `Foo x`, `x: Foo`,
    # `self.x = ...`), or "return" for what the enclosing function returns:
    # lets codeqa/indexing/graph/ resolve a later `x.method()` to Foo.method
    assigned: str | None = None


@dataclass(frozen=True)
class Chunk:
    id: str
    path: str
    start_line: int
    end_line: int
    language: str | None
    kind: str  # symbol kind, "module", "window", "section"
    symbol_ids: tuple[str, ...]
    text: str
    # the symbols' qualified names; a document section's heading path (`README.md › Install › From source`)
    symbol_names: tuple[str, ...] = ()
    code_languages: tuple[str, ...] = ()  # a document section's code blocks: the languages they are in


@dataclass(frozen=True)
class ParsedFile:
    """What the parse stage returns for one file."""

    file: SourceFile
    symbols: tuple[Symbol, ...]
    references: tuple[Reference, ...]
    error: str | None = None  # set when the parse had syntax errors or failed: the file is partially parsed


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk. `reasons` says why it is there (dense, keyword, symbol, ref-hop)."""

    path: str
    start_line: int
    end_line: int
    score: float
    kind: str
    symbol: str | None
    text: str
    language: str | None = None
    symbol_ids: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    stale: bool = False  # the file changed since it was indexed: its lines may have moved
    code_languages: tuple[str, ...] = ()  # Chunk.code_languages
    lift: float = 0.0  # what the question's words added to the score (query/searcher.py, Searcher._lift_by_words)
    boost: float = 0.0  # what the rankers added to it (query/rankers.py: named symbols, hops, deeds, less role penalties)

    @property
    def title(self) -> str:
        """What a result is called: its symbol (a document section's heading path, and the languages
        of the code it shows), else its kind."""
        code = f" ({', '.join(self.code_languages)} code)" if self.code_languages else ""
        return f"{self.symbol or self.kind}{code}"


@dataclass(frozen=True)
class Citation:
    """A `path:Lstart-Lend` found in an answer. `verified`: the file is indexed, the lines exist and lie
    inside the snippets the answer was built from (it says nothing of what they say). `reason` says why not
    (or notes a completed path). `supported`: the lines mention what the sentences citing them name
    (answer/support.py); None when that was not checked (its sentence names nothing, or the lines are not
    verified). `counted`: the citation counts as support of the answer (verified and supported; an attributed
    one only where attribution's measured precision allows)."""

    path: str
    start_line: int
    end_line: int
    verified: bool
    reason: str = ""
    stale: bool = False  # the file changed since it was indexed: the cited lines may say something else now
    # not cited by the model: codeqa found an uncited sentence's names and words in these lines (support.attribute)
    attributed: bool = False
    supported: bool | None = None
    support_reason: str = ""  # "cited, but these lines do not mention `rich_utils`"
    counted: bool = False
    # snippet numbers the model wrote by rote (a run longer than a sentence can use, a number past the last
    # snippet): `path` is the run as written, no lines; never verified, never counted
    rote: bool = False


@dataclass(frozen=True)
class Claim:
    """A sentence of an LLM answer that names code (identifiers, files, literals), and whether counted
    evidence supports it (answer/support.py)."""

    sentence: str
    supported: bool


def span_label(path: str, start: int, end: int, *, full: bool = False) -> str:
    """The one spelling of a place in the code: `path:Lstart-Lend`, or `path:Lline` for one line unless
    `full` (a snippet's label and an MCP location keep both ends even then)."""
    return f"{path}:L{start}" if start == end and not full else f"{path}:L{start}-L{end}"


@dataclass(frozen=True)
class Snippet:
    """A packed piece of context given to the model, labelled path:Lstart-Lend."""

    path: str
    start_line: int
    end_line: int
    text: str
    reason: str = ""
    score: float = 0.0

    @property
    def label(self) -> str:
        return span_label(self.path, self.start_line, self.end_line, full=True)


@dataclass(frozen=True)
class Answer:
    """A finished answer. `snippets` are exactly what the model saw (or what an extractive answer was
    built from); `references` the complete reference list of a usage question; `error` is set when the
    LLM failed (the answer then falls back to extractive, or is cut off where the stream broke)."""

    answer: str
    citations: tuple[Citation, ...]
    snippets: tuple[Snippet, ...]
    mode: str  # "llm" | "extractive"
    route: str = "search"
    references: tuple[Reference, ...] = ()
    error: str | None = None
    hits: tuple[Hit, ...] = field(default=())
    question: str = ""
    query: str = ""  # what retrieval used: the question, or its history-aware rewrite
    model: str | None = None  # the chat model, when mode is "llm"
    definitions: tuple[Symbol, ...] = ()
    summary: "UsageSummary | None" = None  # usage questions: the account of the uses (summary.py)
    listed: "SiteList | None" = None  # usage questions: the reference sites the answer lists
    # how the answer ended early (None: whole): "length", "content_filter", "stopped" (another finish reason),
    # "closed" (no finish reason, or the connection dropped), "timeout", "error", "repeating" (streaming.CUT_REASONS)
    cut: str | None = None
    reasoning: str = ""  # the model's thinking (<think> or reasoning_content): never answer text, never cited
    prompt: "PromptInfo | None" = None  # the LLM request: tokens against the window, what was left out
    unknown_names: tuple[str, ...] = ()  # names the answer uses that the index does not know ("X (did you mean Y?)")
    first_token_seconds: float | None = None
    seconds: float | None = None
    claims: "tuple[Claim, ...]" = ()  # LLM answers: the sentences that name code, each supported or not
    # set when the answer is too short for its question: one sentence answering a "how" question
    shallow: str | None = None
    # sentences that pass the prompt's own wording off as an answer (prompt.prompt_echoes): no support, whatever they cite
    echoes: tuple[str, ...] = ()
    served: "ServerUsage | None" = None  # LLM answers: what the server said it read, reused from its cache and wrote

    @property
    def grounded(self) -> bool:
        """An LLM answer: some citation counts as support, and every sentence that names code is supported (by a
        verified citation whose lines mention what it names, or a counted attribution). An extractive answer is
        built from the lines themselves: some verified citation."""
        if self.mode != "llm":
            return any(c.verified for c in self.citations)
        return (any(c.counted for c in self.citations) and all(c.supported for c in self.claims)
                and not self.echoes)


@dataclass(frozen=True)
class ServerUsage:
    """What a chat server said it did with one request (None where it did not say): prompt tokens it read and
    those it reused from its prompt cache, tokens it wrote, and its reading and writing speeds (tokens/s)."""

    read_tokens: int | None = None
    cached_tokens: int | None = None
    written_tokens: int | None = None
    read_per_second: float | None = None
    write_per_second: float | None = None


@dataclass(frozen=True)
class PromptInfo:
    """What one LLM request held: `tokens` of prompt (counted by the server's tokenizer, or estimated:
    `counted`) in a `window` (from `window_source`), `max_tokens` kept for the answer, and what was left
    out to fit, one line each."""

    tokens: int
    window: int
    window_source: str
    max_tokens: int
    counted: str  # "tokenizer" | "estimate"
    left_out: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Retrieval:
    """What retrieve() hands to answer(): the route taken and the evidence, packed for a prompt.

    route: "usage" (graph: definitions + every reference site), "relationship" (graph paths
    between two symbols) or "search" (hybrid search + one reference hop).
    `snippets` are already merged, deduplicated, redacted and cut to the token budget, best first.
    `references` is the complete list of reference sites for usage questions (may be longer than
    what fits into snippets); `listed` those an answer lists, with a line each (all of them unless
    there are more than the cap); `definitions` the symbols the question named.
    """

    query: str
    route: str
    hits: tuple[Hit, ...]
    snippets: tuple[Snippet, ...]
    definitions: tuple[Symbol, ...] = ()
    references: tuple[Reference, ...] = ()
    paths: tuple[tuple[str, ...], ...] = ()  # relationship route: symbol-id paths between A and B
    # relationship route: each step of those paths, (from id, to id, the reference that links them
    # or None when one symbol is a member of the other)
    edges: tuple[tuple[str, str, Reference | None], ...] = ()
    # usage route: definitions that matched the name as well as `definitions` (the name was ambiguous)
    ambiguous: tuple[Symbol, ...] = ()
    listed: "SiteList | None" = None  # usage route: the reference sites an answer lists
    # usage route: same-named definitions the question was not taken to mean (its words or the public
    # API decided); the answer names them and how to ask about them
    passed_over: tuple[Symbol, ...] = ()


@dataclass(frozen=True)
class FileSites:
    """The sites of one file a listing shows: `sites` in line order, `total` the sites the file has
    (more than `sites` in the last file of a listing cut at its cap)."""

    path: str
    sites: tuple[Reference, ...]
    total: int


@dataclass(frozen=True)
class SiteList:
    """The reference sites a usage answer lists one line each, grouped by file (lookup.list_sites).

    Every site when they fit the cap, files in path order; past the cap the most relevant files
    first, up to the cap. `total` and `files` count every site and file, listed or not: the rest
    is for `codeqa refs NAME --json`, which lists them all.
    """

    groups: tuple[FileSites, ...]
    total: int
    files: int

    @property
    def shown(self) -> int:
        return sum(len(g.sites) for g in self.groups)

    @property
    def complete(self) -> bool:
        return self.shown == self.total

    @property
    def references(self) -> tuple[Reference, ...]:
        """The listed sites in listing order."""
        return tuple(r for g in self.groups for r in g.sites)


@dataclass(frozen=True)
class UsageSite:
    """One reference site worth showing: where (the lines shown around it), what kind, from which symbol."""

    path: str
    line: int
    start_line: int
    end_line: int
    kind: str
    enclosing: str | None  # qualified name of the symbol the site is in
    code: str  # the site's own line, stripped


@dataclass(frozen=True)
class UsageSummary:
    """The account of a usage answer: the definition, counts by area and by kind of use, keyword
    arguments seen at call sites, the most informative sites from package code, and the other
    definitions the name could have meant."""

    symbol: Symbol
    doc: str  # first sentence of the docstring
    total: int
    files: int
    by_area: tuple[tuple[str, int], ...]  # ("package", 12), ("tests", 30), ("docs", 5), ("examples", 2), ("stubs", 1)
    by_kind: tuple[tuple[str, int], ...]  # ("call", 40), ("instantiation", 3), ...
    keywords: tuple[tuple[str, int], ...]  # keyword arguments at call sites, most used first
    sites: tuple[UsageSite, ...]
    others: tuple[Symbol, ...] = ()

