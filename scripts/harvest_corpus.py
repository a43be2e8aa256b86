"""Harvest the adapter's training pairs: (first docstring paragraph -> the function's code without it).

Sources, exactly this list (never a project we evaluate on; `codeqa eval` warns about these names):
the standard library of the running interpreter (without test/, idlelib/, lib2to3/ and any tests/
folder) plus the sdists of codeqa.embed.adapter.TRAINING_PROJECTS, downloaded from PyPI at the pinned versions.

A pair: query = the first docstring paragraph (>= 6 words, whitespace collapsed); text = the same
embedded text the index builds for a chunk (codeqa.embed.text.embedding_text: path, qualified name,
signature, then the code) where the code is the function with its docstring removed, decorators
kept, cut at 80 lines, and no docstring in the header. Pairs are deduplicated and shuffled with a
fixed seed. Output: JSON lines {"query", "text", "source"}; the sha256 of the file is printed.

    python scripts/harvest_corpus.py --out ~/.cache/codeqa/corpus.jsonl [--sdist-dir DIR]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import inspect
import json
import random
import sys
import sysconfig
import tarfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.embed.adapter import TRAINING_PROJECTS  # noqa: E402  (the one list; `codeqa eval` reads it too)
from codeqa.embed.text import embedding_text  # noqa: E402
from codeqa.indexing.parse import parse_source  # noqa: E402
from codeqa.types import SourceFile  # noqa: E402

STDLIB_SKIP = {"test", "tests", "idlelib", "lib2to3", "site-packages", "__pycache__"}
PROJECT_SKIP = {"test", "tests", "testing", "__pycache__"}
MIN_QUERY_WORDS = 6
MAX_CODE_LINES = 80
SEED = 0


def download_sdist(name: str, version: str, dest: Path) -> Path:
    """The project's .tar.gz from PyPI's simple JSON API (pip download would try to build it)."""
    dest.mkdir(parents=True, exist_ok=True)
    request = urllib.request.Request(f"https://pypi.org/simple/{name}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    files = json.load(urllib.request.urlopen(request, timeout=60))["files"]
    wanted = [f for f in files if f["filename"].lower() in (f"{name}-{version}.tar.gz".lower(),
                                                            f"{name.replace('-', '_')}-{version}.tar.gz".lower())]
    if not wanted:
        raise SystemExit(f"no sdist of {name}=={version} on PyPI")
    target = dest / wanted[0]["filename"]
    if not target.is_file():
        data = urllib.request.urlopen(wanted[0]["url"], timeout=300).read()
        if hashlib.sha256(data).hexdigest() != wanted[0]["hashes"]["sha256"]:
            raise SystemExit(f"sha256 mismatch for {target.name}")
        target.write_bytes(data)
    return target


def project_files(sdist: Path, package: str, workdir: Path) -> tuple[Path, list[Path]]:
    root = workdir / sdist.name.removesuffix(".tar.gz")
    if not root.is_dir():
        with tarfile.open(sdist) as tar:
            tar.extractall(workdir, filter="data")
    base = root / package
    files = [p for p in sorted(base.rglob("*.py")) if not PROJECT_SKIP.intersection(p.relative_to(base).parts)]
    return base.parent, files


def stdlib_files() -> tuple[Path, list[Path]]:
    base = Path(sysconfig.get_paths()["stdlib"])
    files = [p for p in sorted(base.rglob("*.py")) if not STDLIB_SKIP.intersection(p.relative_to(base).parts)]
    return base, files


def docstring_rest(rest: str, indent: str) -> str:
    """The docstring's paragraphs after the first (cleaned), as source lines at `indent` ("" when none)."""
    if not rest.strip():
        return ""
    body = "\n".join(indent + line if line.strip() else "" for line in rest.strip("\n").splitlines())
    return f'{indent}"""\n{body}\n{indent}"""\n'


def pairs_from_file(path: Path, rel: str, rest_share: float = 0.0, rng: random.Random | None = None) -> list[dict]:
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError):
        return []
    lines = text.splitlines(keepends=True)
    parsed, _ = parse_source(SourceFile(rel, path, "python", len(text), ""), text)
    by_line = {s.start_line: s for s in parsed.symbols if s.kind in ("function", "method")}
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or len(node.body) < 2:
            continue  # no docstring, or nothing but the docstring
        doc = node.body[0]
        if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)):
            continue
        if doc.lineno == node.lineno or node.lineno not in by_line:
            continue
        first, _, rest_paragraphs = inspect.cleandoc(doc.value.value).partition("\n\n")
        query = " ".join(first.split())
        if len(query.split()) < MIN_QUERY_WORDS:
            continue
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        end = node.end_lineno or node.lineno
        kept = [line for number, line in enumerate(lines[start - 1:end], start)
                if not doc.lineno <= number <= (doc.end_lineno or doc.lineno)]
        if rest_share and rng is not None and rng.random() < rest_share:
            # the code as the index sees it in a real project: a docstring, less the paragraph asked with
            line = lines[doc.lineno - 1]
            rest = docstring_rest(rest_paragraphs, line[:len(line) - len(line.lstrip())])
            if rest:
                kept.insert(doc.lineno - start, rest)
        code = "".join(kept[:MAX_CODE_LINES])
        symbol = by_line[node.lineno]
        out.append({"query": query, "text": embedding_text(rel, symbol.qualified_name, symbol.signature, "", code),
                    "source": f"{rel}:{node.lineno}"})
    return out


def harvest(sdist_dir: Path, rest_share: float = 0.0) -> list[dict]:
    sources = [("stdlib", *stdlib_files())]
    for name, (version, package) in TRAINING_PROJECTS.items():
        sdist = download_sdist(name, version, sdist_dir)
        sources.append((name, *project_files(sdist, package, sdist_dir)))
    pairs: list[dict] = []
    rest_rng = random.Random(SEED + 1)
    for label, base, files in sources:
        before = len(pairs)
        for path in files:
            pairs.extend(pairs_from_file(path, path.relative_to(base).as_posix(), rest_share, rest_rng))
        print(f"{label:12s} {len(files):5d} files -> {len(pairs) - before:6d} pairs", file=sys.stderr)
    seen_queries: set[str] = set()
    seen_texts: set[str] = set()
    unique = []
    for pair in pairs:
        if pair["query"] in seen_queries or pair["text"] in seen_texts:
            continue
        seen_queries.add(pair["query"])
        seen_texts.add(pair["text"])
        unique.append(pair)
    random.Random(SEED).shuffle(unique)
    return unique


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "codeqa" / "corpus.jsonl")
    parser.add_argument("--sdist-dir", type=Path, default=Path.home() / ".cache" / "codeqa" / "sdists")
    parser.add_argument("--docstring-rest", type=float, default=0.0, metavar="SHARE",
                        help="experiment: in this share of the pairs (seeded) the code keeps its docstring less the "
                             "first paragraph (the query), as real indexed code has it. Default 0: no docstring")
    args = parser.parse_args()
    pairs = harvest(args.sdist_dir, args.docstring_rest)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs)
    args.out.write_text(data, encoding="utf-8")
    print(json.dumps({"pairs": len(pairs), "out": str(args.out),
                      "sha256": hashlib.sha256(data.encode("utf-8")).hexdigest()}))


if __name__ == "__main__":
    main()
