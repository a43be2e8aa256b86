"""What the question benchmarks of issue 20 share: a project's index, and `ask`/`search` results in
the exact JSON shape the CLI prints.

    ensure_index(repo, index_dir)       `python -m codeqa index REPO --index-dir DIR` (incremental)
    with Session(repo, index_dir) as s: one Retriever per project, opened once
        s.ask(question)                 == `codeqa ask QUESTION --repo R --no-llm --json`
        s.search(query, top_k)          == `codeqa search QUERY --repo R --json --top-k K`

Session(..., cli=True) runs the real CLI in a process per question instead (slower, same shape);
use it to check that the in-process path measures what users get.

Not a script of its own: bench/usage_questions.py, bench/multifile.py and bench/why_examples.py use it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# the bundled model loads offline; nothing here may reach a model hub
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = Path(os.environ.get("CODEQA_BENCH_DATA", "/tmp/data"))
INDEX_ROOT = Path(os.environ.get("CODEQA_BENCH_INDEX_ROOT", "/tmp/bench-idx"))


def child_env() -> dict:
    """The environment of a `python -m codeqa` child: this checkout's codeqa first, offline, no LLM."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_") and k != "CODEQA_MODEL"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def project_paths(name: str) -> tuple[Path, Path]:
    """(repo, index dir) of an unpacked sdist named like `rich-13.9.4`."""
    return DATA / name, INDEX_ROOT / name


def ensure_index(repo: Path, index_dir: Path, log=print) -> None:
    """Index `repo` into `index_dir` with the real bundled model (an up-to-date index takes seconds)."""
    if not repo.is_dir():
        raise SystemExit(f"{repo} is missing: unpack the sdist there (pip download --no-deps --no-binary :all: "
                         f"{repo.name.rsplit('-', 1)[0]}=={repo.name.rsplit('-', 1)[-1]} -d DIR; tar xzf ...)")
    started = time.perf_counter()
    cmd = [sys.executable, "-m", "codeqa", "index", str(repo), "--index-dir", str(index_dir), "--json"]
    done = subprocess.run(cmd, env=child_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"indexing {repo} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    log(f"indexed {repo.name} into {index_dir} in {time.perf_counter() - started:.0f} s")


class Session:
    """ask/search against one indexed project, in-process (default) or through the CLI."""

    def __init__(self, repo: Path, index_dir: Path, cli: bool = False, models_of: "Session | None" = None):
        """`models_of`: an earlier in-process session whose embedding model and likelihood lead model
        (CODEQA_RERANK=likelihood) this one reuses, so a set of projects loads each once, as one process would."""
        self.repo, self.index_dir, self.cli = Path(repo).resolve(), Path(index_dir), cli
        self.retriever = self.answerer = None
        if not cli:
            from codeqa.answer import Answerer
            from codeqa.config import Settings
            from codeqa.query.retrieve import Retriever

            settings = Settings.load(env={k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")},
                                     index_dir=self.index_dir)
            earlier = models_of.retriever if models_of is not None else None
            self.retriever = Retriever.open(self.repo, settings, earlier.embedder if earlier is not None else None)
            if earlier is not None and earlier.searcher is not None and self.retriever.searcher is not None:
                self.retriever.searcher.lead_reranker = earlier.searcher.lead_reranker
            self.answerer = Answerer(self.retriever, settings, chat=None)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        if self.retriever is not None:
            self.retriever.close()

    def ask(self, question: str) -> dict:
        """The `ask --no-llm --json` object: answer, citations, snippets, mode, route, ... (and `summary`
        when the build has one)."""
        if self.cli:
            return self._run_cli("ask", question, "--no-llm")
        from codeqa.answer import answer_to_json

        return answer_to_json(self.answerer.answer(question, no_llm=True))

    def search(self, query: str, top_k: int = 10) -> list[dict]:
        """The `search --json` list: path, start_line, end_line, score, kind, symbol, text, stale."""
        if self.cli:
            return self._run_cli("search", query, "--top-k", str(top_k))
        from codeqa.cli.commands import _hit_json

        return [_hit_json(h) for h in self.retriever.search(query, top_k=top_k)]

    def _run_cli(self, command: str, text: str, *extra: str):
        cmd = [sys.executable, "-m", "codeqa", command, text, "--repo", str(self.repo), "--index-dir",
               str(self.index_dir), "--json", *extra]
        done = subprocess.run(cmd, env=child_env(), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"`codeqa {command}` failed ({done.returncode}): {done.stderr[-1000:]}")
        return json.loads(done.stdout)


def covers(citation: dict, path: str, line: int) -> bool:
    return citation["path"] == path and citation["start_line"] <= line <= citation["end_line"]


def span(c: dict) -> str:
    return f"{c['path']}:L{c['start_line']}-L{c['end_line']}"
