"""The peers of bench/peers.py that live outside codeqa's environment: aider's repo map and BM25 (bm25s).

Run by bench/peers.py with another interpreter (a venv holding `aider-chat` and `bm25s`, never codeqa's:
    python3.11 -m venv /tmp/aider-venv && /tmp/aider-venv/bin/pip install aider-chat bm25s
); it imports nothing of codeqa. Reads one job as JSON on stdin, writes the ranked spans as JSON on stdout:

    {"peer": "aider" | "bm25", "repo": DIR, "files": [PATH, ...], "questions": [TEXT, ...], "top_k": 10,
     "windows": [[PATH, START, END], ...], "texts": [TEXT, ...]}          (windows and texts: bm25 only)
    -> {"ranked": [[[PATH, START, END], ...] per question], "seconds": per question}

aider: RepoMap.get_ranked_tags as aider calls it before any file is added to the chat (no chat files, every
file an "other" file), with the question's words as the mentioned identifiers and the files it names as the
mentioned files (aider's own get_ident_mentions / get_file_mentions: split on non-word characters). Its
ranked definitions become spans from the definition's line to its end (Python's parser; one line elsewhere).
The tags cache is kept in memory, so nothing is written into the project.

bm25: Okapi BM25 (bm25s defaults) over the same 40-line windows as the naive RAG, words and identifier
parts (`access_token` -> access_token, access, token; `getToken` -> gettoken, get, token), lower case.
"""

from __future__ import annotations

import ast
import io
import json
import re
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STOP = frozenset("a an and are as at be by do does for from how in is it of on or the this that to what when where "
                  "which who why with".split())


def tokens(text: str) -> list[str]:
    out = []
    for word in _WORD.findall(text):
        low = word.lower()
        if low in _STOP:
            continue
        out.append(low)
        parts = [p.lower() for p in _PART.findall(word)]
        if len(parts) > 1:
            out.extend(p for p in parts if p not in _STOP)
    return out


def bm25(job: dict) -> list[list[list]]:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index([tokens(t) for t in job["texts"]], show_progress=False)
    ranked = []
    k = min(job["top_k"], len(job["texts"]))
    for question in job["questions"]:
        query = tokens(question) or ["_"]
        docs, _ = retriever.retrieve([query], k=k, show_progress=False)
        ranked.append([job["windows"][int(i)] for i in docs[0]])
    return ranked


def aider(job: dict) -> list[list[list]]:
    from aider.io import InputOutput
    from aider.repomap import RepoMap

    class MemoryRepoMap(RepoMap):  # aider keeps its tags cache in the project's folder: not here
        def load_tags_cache(self):
            self.TAGS_CACHE = {}

        def save_tags_cache(self):
            pass

    root = Path(job["repo"])
    files = [str(root / f) for f in job["files"]]
    with redirect_stdout(io.StringIO()):  # aider's progress and notes: stdout carries the result
        quiet = InputOutput(pretty=False, yes=True, input_history_file=None, chat_history_file=None, fancy_input=False)
        repo_map = MemoryRepoMap(map_tokens=1024, root=str(root), main_model=None, io=quiet, verbose=False)
        ranked = []
        for question in job["questions"]:
            idents = set(re.split(r"\W+", question))  # aider's Coder.get_ident_mentions
            named = {f for f in job["files"] if Path(f).name in question or f in question}  # get_file_mentions, roughly
            tags = repo_map.get_ranked_tags([], files, named, idents)
            ranked.append(_spans(tags, root, job["top_k"]))
    return ranked


_extents: dict[str, dict[tuple[int, str], int]] = {}


def _spans(tags, root: Path, top_k: int) -> list[list]:
    out: list[list] = []
    for tag in tags:
        if len(out) >= top_k:
            break
        if not hasattr(tag, "name"):  # a ranked file without definitions: the file from its top
            span = [tag[0], 1, 1]
        else:
            start = tag.line + 1  # tree-sitter rows are 0-based
            span = [tag.rel_fname, start, _extent(root / tag.rel_fname, tag.rel_fname).get((start, tag.name), start)]
        if span not in out:
            out.append(span)
    return out


def _extent(path: Path, rel: str) -> dict[tuple[int, str], int]:
    """(first line, name) -> last line of each Python function and class of a file (none for other files)."""
    if rel not in _extents:
        found: dict[tuple[int, str], int] = {}
        if rel.endswith(".py"):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError, ValueError):
                tree = None
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found[(node.lineno, node.name)] = node.end_lineno or node.lineno
        _extents[rel] = found
    return _extents[rel]


def main() -> int:
    job = json.load(sys.stdin)
    started = time.perf_counter()
    ranked = {"aider": aider, "bm25": bm25}[job["peer"]](job)
    seconds = (time.perf_counter() - started) / max(1, len(job["questions"]))
    json.dump({"ranked": ranked, "seconds": seconds}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
