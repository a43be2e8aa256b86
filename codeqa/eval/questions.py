"""Question sets for `codeqa eval`: the JSON-lines format, and generators that build sets with known answers.

One question per line:

    {"question": "How is `Schema.load` used?",
     "gold": [{"path": "src/app/api.py", "start_line": 40, "end_line": 40}, ...],   # the code a correct answer rests on
     "answer_contains": ["load"],       # optional: strings a good answer contains (case-insensitive)
     "tags": ["usage", "python"],       # optional: for per-tag breakdowns
     "id": "usage:src/app/schema.py:120", "kind": "usage",          # optional (generated sets set them)
     "repo": "/abs/path"}               # optional: the repository the set was made for

Generators read an index (symbols and the reference graph) and sample a balanced, seeded set:
  docstring     the first paragraph of a Python function's docstring -> that function. The answer
                must not be in the index being scored: `strip_docstrings` writes a copy of the
                repository with every function docstring replaced by `pass` and blank lines (line
                numbers unchanged); the questions record that copy as their `repo`.
  usage         "How is `X` used?" -> every reference site of X in the graph (exact/likely, no imports)
  relationship  "What is the relationship between `A` and `B`?" for A calling, instantiating or
                inheriting from B (neither inside the other) -> both definitions
"""

from __future__ import annotations

import ast
import inspect
import json
import random
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from ..config import Settings
from ..errors import IndexMissingError, UsageError
from ..indexing.walk import is_secret_path
from ..roles import path_role
from ..languages import detect_language
from ..store import open_store
from ..types import Reference, Symbol, span_label

KINDS = ("docstring", "usage", "relationship")
MIN_DOCSTRING_WORDS = 6
USAGE_SITES = (2, 15)  # a usage question needs at least / at most this many reference sites
STRIPPED_MARKER = "stripped-from.json"  # in <copy>/.codeqa: the folder is a generated copy we may replace
USAGE_TEMPLATES = ("How is `{}` used?", "Where is `{}` used?", "Where is `{}` called?")
INSTANCE_TEMPLATES = ("How is `{}` used?", "Where is `{}` used?", "Where is `{}` instantiated?")
RELATION_TEMPLATES = ("What is the relationship between `{}` and `{}`?", "How does `{}` relate to `{}`?")
_CALLABLE = {"function", "method"}


@dataclass(frozen=True)
class Span:
    """A gold span: lines start_line..end_line (1-based, inclusive) of a file, path relative to the repo."""

    path: str
    start_line: int
    end_line: int

    def overlaps(self, path: str, start_line: int, end_line: int) -> bool:
        return path == self.path and start_line <= self.end_line and self.start_line <= end_line

    @property
    def label(self) -> str:
        return span_label(self.path, self.start_line, self.end_line)

    def to_json(self) -> dict:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line}


@dataclass(frozen=True)
class Question:
    question: str
    gold: tuple[Span, ...]
    answer_contains: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    id: str = ""
    kind: str = "hand"  # docstring | usage | relationship | hand (written by a person)
    repo: str | None = None  # the repository (or stripped copy) the set was made for

    def to_json(self) -> dict:
        out = {"id": self.id, "kind": self.kind, "question": self.question, "gold": [g.to_json() for g in self.gold]}
        if self.answer_contains:
            out["answer_contains"] = list(self.answer_contains)
        if self.tags:
            out["tags"] = list(self.tags)
        if self.repo:
            out["repo"] = self.repo
        return out


def load_questions(path: Path) -> list[Question]:
    """Read and check a question file; any problem is a UsageError naming `file:line`."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"Question file {path} does not exist.")
    questions: list[Question] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = question_from_json(json.loads(line), default_id=f"q{number}")
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise UsageError(f"{path}:{number}: {exc}") from None
        if q.id in seen:
            raise UsageError(f"{path}:{number}: duplicate id {q.id!r}.")
        seen.add(q.id)
        questions.append(q)
    if not questions:
        raise UsageError(f"Question file {path} holds no questions.")
    return questions


def question_from_json(obj: object, default_id: str = "") -> Question:
    """A Question from its JSON object; ValueError says what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object per line")
    text = obj.get("question")
    if not isinstance(text, str) or not text.strip():
        raise ValueError('"question" must be a non-empty string')
    gold = obj.get("gold")
    if not isinstance(gold, list) or not gold:
        raise ValueError('"gold" must be a non-empty list of {"path", "start_line", "end_line"}')
    spans = []
    for g in gold:
        if not (isinstance(g, dict) and isinstance(g.get("path"), str) and _is_int(g.get("start_line"))
                and _is_int(g.get("end_line")) and 1 <= g["start_line"] <= g["end_line"]):
            raise ValueError(f'bad gold span {json.dumps(g)}: needs "path" and 1 <= "start_line" <= "end_line"')
        spans.append(Span(g["path"].removeprefix("./"), g["start_line"], g["end_line"]))
    lists = {}
    for key in ("answer_contains", "tags"):
        value = obj.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f'"{key}" must be a list of strings')
        lists[key] = tuple(value)
    for key in ("id", "kind", "repo"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ValueError(f'"{key}" must be a string')
    return Question(text.strip(), tuple(spans), lists["answer_contains"], lists["tags"], obj.get("id") or default_id,
                    obj.get("kind") or "hand", obj.get("repo"))


def save_questions(path: Path, questions: Iterable[Question]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(q.to_json(), ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ---- docstrings -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class DocumentedFunction:
    """A function whose docstring `strip_docstrings` removed. Lines are those of the copy (= the original)."""

    path: str
    name: str
    def_line: int
    end_line: int
    paragraph: str  # the docstring's first paragraph, whitespace collapsed
    is_test: bool


def strip_docstrings(src: Path, dest: Path) -> list[DocumentedFunction]:
    """Copy `src` to `dest` with every Python function docstring replaced by `pass` and blank lines.

    Line numbers stay those of the original, so spans found in one hold in the other. Class and
    module docstrings stay; secret files (.env, keys) are not copied. Files that do not parse are copied unchanged. Returns every function
    whose docstring was removed, files in path order (functions in `ast.walk` order, which the
    retrieval benchmark's seeded sample depends on).
    """
    shutil.copytree(src, dest, symlinks=False, ignore=_copy_ignore)
    found = []
    for path in sorted(dest.rglob("*.py")):
        rel = path.relative_to(dest).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        lines = text.splitlines(keepends=True)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.body:
                continue
            first = node.body[0]
            if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)):
                continue
            if first.lineno == node.lineno:  # `def f(): "doc"` on one line: blanking it would cut the def
                continue
            start, end = first.lineno, first.end_lineno or first.lineno
            indent = lines[start - 1][: len(lines[start - 1]) - len(lines[start - 1].lstrip())]
            lines[start - 1] = f"{indent}pass\n"
            for i in range(start, end):
                lines[i] = "\n"
            paragraph = " ".join(inspect.cleandoc(first.value.value).split("\n\n", 1)[0].split())
            found.append(DocumentedFunction(rel, node.name, node.lineno, node.end_lineno or node.lineno, paragraph,
                                            path_role(rel) == "test"))
        path.write_text("".join(lines), encoding="utf-8")
    return found


def _copy_ignore(folder: str, names: list[str]) -> set[str]:
    """Leave out VCS data, caches, an existing index, and secret files (which codeqa never reads)."""
    return {n for n in names if n in (".git", "__pycache__", ".codeqa") or is_secret_path(n)}


def docstring_questions(functions: Sequence[DocumentedFunction], repo: str) -> list[Question]:
    """One question per documented non-test function whose first paragraph has at least
    MIN_DOCSTRING_WORDS words; a paragraph that two functions share says nothing about which one."""
    counts: dict[str, int] = defaultdict(int)
    for f in functions:
        counts[f.paragraph.lower()] += 1
    out = []
    for f in functions:
        if f.is_test or len(f.paragraph.split()) < MIN_DOCSTRING_WORDS or counts[f.paragraph.lower()] > 1:
            continue
        out.append(Question(f.paragraph, (Span(f.path, f.def_line, f.end_line),), (f.name,),
                            ("docstring", _language_tag(f.path)), f"docstring:{f.path}:{f.def_line}", "docstring", repo))
    return out


def docstring_leaks(questions: Sequence[Question], repo: Path) -> list[Question]:
    """Docstring questions whose text is still in their gold code in `repo`: the index would hold the answer."""
    leaks = []
    for q in questions:
        if q.kind != "docstring":
            continue
        words = q.question.split()[:8]
        for g in q.gold:
            try:
                lines = (Path(repo) / g.path).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            if " ".join(words) in " ".join(" ".join(lines[g.start_line - 1:g.end_line]).split()):
                leaks.append(q)
                break
    return leaks


# ---- graph questions --------------------------------------------------------------------------------

def usage_questions(symbols: Sequence[Symbol], references: Sequence[Reference], repo: str, rng: random.Random) -> list[Question]:
    """"How is `X` used?" for symbols with USAGE_SITES reference sites; gold = those sites (imports left out)."""
    names = _unambiguous_names(symbols)
    sites: dict[str, list[Reference]] = defaultdict(list)
    for r in references:
        if r.kind != "import" and r.confidence in ("exact", "likely"):
            for t in r.target_ids:
                sites[t].append(r)
    out = []
    for s in symbols:
        name = names.get(s.id)
        refs = sorted({(r.path, r.line): r for r in sites.get(s.id, ())}.values(), key=lambda r: (r.path, r.line))
        if not name or not USAGE_SITES[0] <= len(refs) <= USAGE_SITES[1]:
            continue
        templates = INSTANCE_TEMPLATES if s.kind not in _CALLABLE else USAGE_TEMPLATES
        gold = tuple(Span(r.path, r.line, r.line) for r in refs)
        out.append(Question(rng.choice(templates).format(name), gold, (), ("usage", _language_tag(s.path)),
                            f"usage:{s.path}:{s.start_line}", "usage", repo))
    return out


def relationship_questions(symbols: Sequence[Symbol], references: Sequence[Reference], repo: str,
                           rng: random.Random) -> list[Question]:
    """"What is the relationship between `A` and `B`?" where A calls, instantiates or inherits from B by
    an exact edge and neither contains the other (a method calling its own class says little);
    gold = both definitions. Tagged cross-file or same-file."""
    names = _unambiguous_names(symbols)
    by_id = {s.id: s for s in symbols}
    pairs: dict[tuple[str, str], Question] = {}
    for r in references:
        if r.kind not in ("call", "instantiation", "inheritance") or r.confidence != "exact" or len(r.target_ids) != 1:
            continue
        a, b = by_id.get(r.enclosing_symbol_id or ""), by_id.get(r.target_ids[0])
        if a is None or b is None or not (names.get(a.id) and names.get(b.id)) or {(a.id, b.id), (b.id, a.id)} & pairs.keys():
            continue
        if _definition_span(a).overlaps(b.path, b.start_line, b.end_line):
            continue
        first, second = (names[a.id], names[b.id]) if rng.random() < 0.5 else (names[b.id], names[a.id])
        gold = (_definition_span(a), _definition_span(b))
        where = "cross-file" if a.path != b.path else "same-file"
        pairs[(a.id, b.id)] = Question(rng.choice(RELATION_TEMPLATES).format(first, second), gold, (),
                                       ("relationship", r.kind, where, _language_tag(a.path)),
                                       f"relationship:{a.path}:{a.start_line}:{b.path}:{b.start_line}", "relationship", repo)
    return list(pairs.values())


def _definition_span(s: Symbol) -> Span:
    return Span(s.path, s.start_line, s.end_line)


def _unambiguous_names(symbols: Sequence[Symbol]) -> dict[str, str]:
    """symbol id -> how a question names it (`name`, else `Class.name`), for symbols worth asking about:
    not in tests, not private or dunder, at least 4 characters, and the name points at this symbol only."""
    count_name: dict[str, int] = defaultdict(int)
    count_qualified: dict[str, int] = defaultdict(int)
    for s in symbols:
        count_name[s.name] += 1
        count_qualified[s.qualified_name] += 1
    out = {}
    for s in symbols:
        if path_role(s.path) == "test" or s.name.startswith("_") or len(s.name) < 4 or s.kind in ("module", "variable", "constant"):
            continue
        if count_name[s.name] == 1:
            out[s.id] = s.name
        elif count_qualified[s.qualified_name] == 1 and s.qualified_name != s.name:
            out[s.id] = s.qualified_name
    return out


def _language_tag(path: str) -> str:
    return detect_language(path) or Path(path).suffix.lstrip(".") or "text"


# ---- sampling and the generate command --------------------------------------------------------------

@dataclass
class GeneratedSet:
    """What `generate_questions` made: the questions (already saved), where to evaluate them, and how
    many candidates each kind had."""

    questions: list[Question]
    out: Path
    eval_repo: Path  # the repository to index and evaluate: the stripped copy when docstring questions are in
    stripped_copy: Path | None
    candidates: dict[str, int] = field(default_factory=dict)

    @property
    def by_kind(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for q in self.questions:
            counts[q.kind] += 1
        return dict(counts)


def generate_questions(repo: Path, out: Path, settings: Settings, kinds: Sequence[str] = KINDS, count: int = 60,
                       seed: int = 0, stripped_dir: Path | None = None) -> GeneratedSet:
    """Build a question set for `repo` and save it to `out`.

    Docstring questions need no index, but they write the stripped copy (default: `<out stem>-stripped`
    beside `out`); usage and relationship questions read `repo`'s index (the copy has the same
    symbols, references and line numbers). Sampling: each kind's candidates are shuffled with `seed`
    and dealt round-robin over their files, then kinds take turns until `count` (a kind that runs out
    leaves its turns to the others).
    """
    repo = Path(repo).resolve()
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise UsageError(f"Unknown question kind(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(KINDS)}.")
    if count < 1:
        raise UsageError("--count must be at least 1.")
    if not repo.is_dir():
        raise UsageError(f"Repository {repo} does not exist or is not a directory.")
    rng = random.Random(seed)
    symbols: list[Symbol] = []
    references: list[Reference] = []
    if any(k in kinds for k in ("usage", "relationship")):
        symbols, references = _read_graph(repo, settings, kinds)
    stripped = None
    if "docstring" in kinds:
        stripped = Path(stripped_dir).resolve() if stripped_dir else Path(out).resolve().parent / f"{Path(out).stem}-stripped"
        _prepare_copy_folder(stripped, repo)
    eval_repo = stripped or repo
    pools: dict[str, list[Question]] = {}
    for kind in kinds:
        if kind == "docstring":
            functions = strip_docstrings(repo, stripped)
            (stripped / ".codeqa").mkdir(exist_ok=True)
            (stripped / ".codeqa" / STRIPPED_MARKER).write_text(json.dumps({"source": str(repo)}) + "\n")
            pools[kind] = docstring_questions(functions, str(eval_repo))
        elif kind == "usage":
            pools[kind] = usage_questions(symbols, references, str(eval_repo), rng)
        else:
            pools[kind] = relationship_questions(symbols, references, str(eval_repo), rng)
    questions = sample_balanced(pools, count, rng)
    if not questions:
        raise UsageError(f"No questions could be generated from {repo} for kinds {', '.join(kinds)} "
                         "(docstring questions need Python functions with docstrings of 6+ words).")
    save_questions(out, questions)
    return GeneratedSet(questions, Path(out), eval_repo, stripped, {k: len(v) for k, v in pools.items()})


def sample_balanced(pools: dict[str, list[Question]], count: int, rng: random.Random) -> list[Question]:
    """Up to `count` questions, kinds taking turns, each kind spread over its files."""
    queues = {kind: _spread_over_files(pool, rng) for kind, pool in pools.items()}
    picked: list[Question] = []
    while len(picked) < count and any(queues.values()):
        for kind in pools:
            if queues[kind] and len(picked) < count:
                picked.append(queues[kind].pop(0))
    return picked


def _spread_over_files(pool: Sequence[Question], rng: random.Random) -> list[Question]:
    by_file: dict[str, list[Question]] = defaultdict(list)
    for q in sorted(pool, key=lambda q: q.id):
        by_file[q.gold[0].path].append(q)
    files = sorted(by_file)
    rng.shuffle(files)
    for f in files:
        rng.shuffle(by_file[f])
    dealt = []
    while any(by_file[f] for f in files):
        dealt.extend(by_file[f].pop(0) for f in files if by_file[f])
    return dealt


def _read_graph(repo: Path, settings: Settings, kinds: Sequence[str]) -> tuple[list[Symbol], list[Reference]]:
    store = open_store(repo, settings)
    try:
        if not store.exists() or not store.read_meta():
            other = [k for k in kinds if k == "docstring"]
            hint = " or ask for docstring questions only (--kinds docstring)" if not other else ""
            raise IndexMissingError(f"Usage and relationship questions come from the index of {repo}, which does not "
                                    f"exist yet; run `codeqa index {repo}` first{hint}.")
        return list(store.all_symbols()), list(store.all_references())
    finally:
        store.close()


def _prepare_copy_folder(dest: Path, repo: Path) -> None:
    """The stripped copy goes to an empty or missing folder, or replaces a copy we made before."""
    if dest == repo or repo in dest.parents:
        raise UsageError(f"The stripped copy {dest} must lie outside the repository {repo}; pass --stripped-dir.")
    if dest.exists():
        if (dest / ".codeqa" / STRIPPED_MARKER).is_file():
            shutil.rmtree(dest)
        elif any(dest.iterdir()):
            raise UsageError(f"{dest} exists and is not a stripped copy made by codeqa; remove it or pass another "
                             "--stripped-dir.")
        else:
            dest.rmdir()


__all__ = ["KINDS", "Span", "Question", "load_questions", "save_questions", "question_from_json", "strip_docstrings",
           "DocumentedFunction", "docstring_questions", "docstring_leaks", "usage_questions", "relationship_questions",
           "generate_questions", "GeneratedSet", "sample_balanced"]
