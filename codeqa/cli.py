"""Command line: thin shells over the library. The one place that turns CodeQAError into a message and an exit code.

Exit codes: 0 ok, 1 runtime failure, 2 bad usage or input (missing repo, no index yet).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path, PurePosixPath
from typing import Sequence

from .config import Settings
from .errors import CodeQAError, UsageError

DESCRIPTION = """Answer questions about a codebase.

  codeqa index PATH                 build or update the index of a repository (incremental)
  codeqa search QUERY --repo PATH   hybrid (semantic + keyword + symbol) search over the code
  codeqa refs SYMBOL --repo PATH    definitions and every reference site of a symbol
  codeqa ask QUESTION --repo PATH   an answer with verified path:Lstart-Lend citations
  codeqa export --repo PATH         the symbol graph as JSON lines
  codeqa eval Q.jsonl --repo PATH   retrieval and answer quality on a question set
  codeqa ui [--repo PATH]           the Streamlit chat
  codeqa mcp [--repo PATH]          an MCP server for coding agents (stdio; --http HOST:PORT)
  codeqa watch PATH                 keep the index fresh while you edit (also: ui/mcp --watch)

The index is embedded (Qdrant Edge, in-process) in your cache folder, never inside the repository:
$XDG_CACHE_HOME/codeqa/<repo>-<hash> (~/.cache/..., ~/Library/Caches/... on macOS). --index-dir or
CODEQA_INDEX_DIR chooses another folder; --qdrant-url or QDRANT_URL keeps it on a Qdrant server or cluster.
Several processes may read one index while one `codeqa index` writes it.
Set OPENAI_BASE_URL / OPENAI_API_KEY / CODEQA_MODEL for LLM answers; without them answers are extractive.
"""


def _common(p: argparse.ArgumentParser, repo_required: bool = True) -> None:
    if repo_required:
        p.add_argument("--repo", required=True, type=Path, help="the repository whose index to use")
    p.add_argument("--index-dir", type=Path, help="index folder (default: the user's cache, ~/.cache/codeqa/<repo>-<hash>; env CODEQA_INDEX_DIR)")
    p.add_argument("--qdrant-url", help="Qdrant server or cluster URL instead of the local index (env QDRANT_URL)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="codeqa", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("index", help="build or update the index of a repository",
                       description="Walk the repository (honouring .gitignore, never reading secret files), parse it with "
                                   "tree-sitter, chunk, embed and store it. Re-runs only touch changed files.")
    p.add_argument("path", type=Path, help="repository folder")
    _common(p, repo_required=False)
    p.add_argument("--full", action="store_true", help="drop the existing index and rebuild it from scratch")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")

    p = sub.add_parser("search", help="search the code", description="Hybrid search: dense + BM25 fused in Qdrant, "
                       "boosted by symbol-name matches and one reference hop. Prints results best first.")
    p.add_argument("query", nargs="?", help="what to look for (natural language or identifiers)")
    p.add_argument("--queries-file", type=Path, help="JSON lines with a \"query\" field: one JSON line of results per query")
    _common(p)
    p.add_argument("--top-k", type=int, default=10, help="results per query (default 10)")
    p.add_argument("--json", action="store_true", help="JSON output (see README for the shape)")

    p = sub.add_parser("refs", help="definitions and references of a symbol",
                       description="SYMBOL is a name (`EncoderClass`), `Class.method`, or `path:Name` to narrow it.")
    p.add_argument("symbol")
    _common(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("ask", help="answer a question with cited code")
    p.add_argument("question")
    _common(p)
    p.add_argument("--model", help="chat model (env CODEQA_MODEL)")
    p.add_argument("--no-llm", action="store_true", help="answer extractively from retrieval alone")
    p.add_argument("--top-k", type=int, help="retrieved chunks (default 10)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("export", help="the symbol graph as JSON lines")
    _common(p)
    p.add_argument("--json", action="store_true", help="accepted for symmetry; output is always JSON lines")

    p = sub.add_parser("eval", help="evaluate retrieval and answers on a question set",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="""Score a question set, build one, or compare two runs:

  codeqa eval Q.jsonl --repo PATH [--no-llm] [--report OUT.md] [--results R.jsonl] [--json]
  codeqa eval generate --repo PATH --out Q.jsonl [--kinds docstring,usage,relationship] [--count 60] [--seed 0]
  codeqa eval compare A.results.jsonl B.results.jsonl [--json]

Questions are JSON lines: {"question", "gold": [{"path", "start_line", "end_line"}], "answer_contains"?, "tags"?}.
Retrieval: recall@1/5/10 and MRR@10 of `codeqa search` (a hit: a retrieved span overlapping gold). Answers (the
`ask` path, extractive without an LLM): citation validity and precision, reference completeness for usage
questions, answer_contains; with an LLM configured, a judge (CODEQA_JUDGE_MODEL) scores faithfulness and
correctness 1-5. Docstring questions are scored on the stripped copy `generate` writes (it prints the commands).""")
    p.add_argument("args", nargs="+", metavar="ARGS", help="Q.jsonl, or `generate`, or `compare A B`")
    p.add_argument("--repo", type=Path, help="repository to evaluate (default: the one the question set names) or to generate from")
    p.add_argument("--index-dir", type=Path, help="index folder (default: the user's cache, ~/.cache/codeqa/<repo>-<hash>; env CODEQA_INDEX_DIR)")
    p.add_argument("--qdrant-url", help="Qdrant server or cluster URL instead of the local index (env QDRANT_URL)")
    p.add_argument("--no-llm", action="store_true", help="extractive answers and no judge, even with an LLM configured")
    p.add_argument("--report", type=Path, help="write a markdown report and its plot (OUT.png) beside it; compare: the markdown")
    p.add_argument("--results", type=Path, help="per-question results as JSON lines (default with --report: OUT.results.jsonl)")
    p.add_argument("--out", type=Path, help="generate: output question file")
    p.add_argument("--kinds", help="generate: comma-separated kinds (default docstring,usage,relationship)")
    p.add_argument("--stripped-dir", type=Path, help="generate: where the docstring-free copy goes (default <out stem>-stripped beside --out)")
    p.add_argument("--count", type=int, default=60, help="generate: number of questions (default 60)")
    p.add_argument("--seed", type=int, default=0, help="generate: sampling seed (default 0)")
    p.add_argument("--top-k", type=int, default=10, help="ranked results scored per question (default 10, at least 10)")
    p.add_argument("--json", action="store_true", help="print the metrics (or generate/compare results) as JSON")

    p = sub.add_parser("ui", help="open the Streamlit chat")
    p.add_argument("--repo", type=Path, help="the repository to open (it can also be typed into the page)")
    p.add_argument("--index-dir", type=Path, help="where its index lives (default: the user's cache, ~/.cache/codeqa/<repo>-<hash>)")
    p.add_argument("--qdrant-url", help="a Qdrant server instead of the local index folder")
    p.add_argument("--port", type=int, default=8501, help="port to serve the page on (default 8501)")
    p.add_argument("--watch", action="store_true", help="re-index changed files within seconds of a save (see `codeqa watch`)")

    p = sub.add_parser("mcp", help="serve the index to coding agents over MCP",
                       description="An MCP server with the tools search_code, find_symbol, find_references, read_code, ask, "
                                   "index_status and reindex. Over stdio by default (the agent starts it); --http serves "
                                   "Streamable HTTP at http://HOST:PORT/mcp.")
    p.add_argument("--repo", type=Path, default=Path("."), help="the repository whose index to serve (default: the current folder)")
    _common(p, repo_required=False)
    p.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP instead of stdio, e.g. 127.0.0.1:8765")
    p.add_argument("--token", help="require `Authorization: Bearer TOKEN` over HTTP (env CODEQA_MCP_TOKEN); "
                                   "needed to bind anything but localhost")
    p.add_argument("--watch", action="store_true", help="re-index changed files within seconds of a save (see `codeqa watch`)")

    p = sub.add_parser("watch", help="keep an index fresh while you edit",
                       description="Index PATH (incrementally), then watch it: a save re-indexes the changed files within "
                                   "a few seconds (debounced; .gitignore and .codeqaignore respected). Searches of files "
                                   "changed since their last index are flagged stale until then. Ctrl-C stops.")
    p.add_argument("path", type=Path)
    p.add_argument("--debounce", type=float, default=1.0, help="seconds of quiet after a change before re-indexing (default 1)")
    p.add_argument("--index-dir", type=Path, help="index folder (default: the user's cache, ~/.cache/codeqa/<repo>-<hash>; env CODEQA_INDEX_DIR)")
    p.add_argument("--qdrant-url", help="Qdrant server or cluster URL instead of the local index (env QDRANT_URL)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        settings = Settings.load(index_dir=getattr(args, "index_dir", None), qdrant_url=getattr(args, "qdrant_url", None))
        return COMMANDS[args.command](args, settings)
    except CodeQAError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _repo(path: Path) -> Path:
    if not path.exists():
        raise UsageError(f"Repository {path} does not exist; pass the folder of a code repository.")
    if not path.is_dir():
        raise UsageError(f"Repository {path} is not a directory; pass the folder of a code repository.")
    return path.resolve()


def cmd_index(args, settings: Settings) -> int:
    from .index import index_repo

    repo = _repo(args.path)
    if args.json:
        report = index_repo(repo, settings, full=args.full)
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(TextColumn("[bold]{task.description:<6}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), console=console, transient=False) as bar:
        tasks: dict[str, int] = {}
        started: dict[str, float] = {}

        def progress(stage: str, done: int, total: int) -> None:
            import time

            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total, rate="")
                started[stage] = time.perf_counter()
            elapsed = max(time.perf_counter() - started[stage], 1e-6)
            unit = {"parse": "files/s", "embed": "chunks/s", "store": "files/s"}.get(stage, "/s")
            rate = f"{done / elapsed:,.0f} {unit}" if elapsed > 0.5 and stage != "model" else ""
            bar.update(tasks[stage], completed=done, total=total, rate=rate)

        report = index_repo(repo, settings, full=args.full, progress=progress)
    _print_index_summary(report, console)
    return 0


def _print_index_summary(report, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    d = report.to_dict()
    if report.nothing_to_do:
        console.print(f"[green]Index up to date[/] ({d['files']} files, {d['chunks']} chunks) in {d['elapsed_seconds']:.2f}s — nothing changed.")
    table = Table(title=f"codeqa index: {report.repo}", show_header=False)
    table.add_row("files", f"{d['files']} ({', '.join(f'{k} {v}' for k, v in sorted(d['files_by_language'].items()))})")
    table.add_row("changed / deleted / unchanged", f"{d['files_changed']} / {d['files_deleted']} / {d['files_unchanged']}")
    table.add_row("symbols", str(d["symbols"]))
    table.add_row("references", f"{d['references']} ({', '.join(f'{k} {v}' for k, v in sorted(d['references_by_confidence'].items()))})")
    table.add_row("chunks", f"{d['chunks']} ({d['chunks_embedded']} embedded this run)")
    if d["graph_seconds"]:
        table.add_row("graph stage", f"{d['graph_seconds']:.2f}s ({d['graph_files_per_second']:.0f} files/s)")
    if d["embedding_seconds"]:
        table.add_row("embedding", f"{d['embedding_seconds']:.2f}s ({d['chunks_per_second']:.0f} chunks/s)")
    table.add_row("skipped", ", ".join(f"{k} {v}" for k, v in sorted(d["skipped_by_reason"].items())) or "none")
    table.add_row("index size", f"{d['index_bytes'] / 1e6:.1f} MB in {d['index_dir']}")
    table.add_row("time", f"{d['elapsed_seconds']:.2f}s")
    console.print(table)
    for note in d["notes"]:
        console.print(f"[cyan]{escape(note)}[/]")
    for item in d["partial"][:20]:
        console.print(f"[yellow]partially parsed[/] {escape(item['path'])}: {escape(item['reason'])}")
    # files of no source language are many and expected (data, configs): counted by extension;
    # the other reasons (secrets, binaries, unreadable...) are listed file by file
    listed = [item for item in d["skipped"] if item["reason"] != "not-source"]
    for item in listed[:20]:
        detail = f": {item['detail']}" if item.get("detail") else ""
        console.print(f"[dim]skipped {escape(item['path'])} ({item['reason']}{escape(detail)})[/]")
    if len(listed) > 20:
        console.print(f"[dim]... and {len(listed) - 20} more skipped files (see --json)[/]")
    kinds = Counter(PurePosixPath(item["path"]).suffix or PurePosixPath(item["path"]).name
                    for item in d["skipped"] if item["reason"] == "not-source")
    if kinds:
        shown = ", ".join(f"{escape(kind)} {n}" for kind, n in kinds.most_common(8))
        more = ", ..." if len(kinds) > 8 else ""
        console.print(f"[dim]not indexed (no source language): {sum(kinds.values())} files ({shown}{more}; see --json)[/]")


def cmd_search(args, settings: Settings) -> int:
    from .retrieve import Retriever

    repo = _repo(args.repo)
    if not args.query and not args.queries_file:
        raise UsageError("Give a QUERY or --queries-file FILE.")
    if args.top_k < 1:
        raise UsageError("--top-k must be at least 1.")
    with Retriever.open(repo, settings) as retriever:
        if args.queries_file:
            for query in _read_queries(args.queries_file):
                hits = retriever.search(query, top_k=args.top_k)
                print(json.dumps({"query": query, "results": [_hit_json(h) for h in hits]}), flush=True)
            return 0
        hits = retriever.search(args.query, top_k=args.top_k)
    if args.json:
        print(json.dumps([_hit_json(h) for h in hits], indent=2))
        return 0
    from rich.console import Console
    from rich.syntax import Syntax

    console = Console()
    if not hits:
        console.print("No results.")
    for rank, h in enumerate(hits, 1):
        stale = "  [yellow](changed since indexed: run `codeqa index`)[/]" if h.stale else ""
        console.print(f"[bold]{rank}. {h.path}:L{h.start_line}-L{h.end_line}[/]  {h.symbol or h.kind}  "
                      f"[dim]score {h.score:.3f} ({', '.join(h.reasons)})[/]{stale}")
        console.print(Syntax(h.text.rstrip("\n")[:1200], h.language or "text", line_numbers=True, start_line=h.start_line))
    return 0


def _read_queries(path: Path) -> list[str]:
    if not path.is_file():
        raise UsageError(f"Queries file {path} does not exist.")
    queries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            queries.append(str(json.loads(line)["query"]))
        except (ValueError, KeyError, TypeError):
            raise UsageError(f"{path}:{number}: expected a JSON object with a \"query\" field.")
    return queries


def _hit_json(h) -> dict:
    return {"path": h.path, "start_line": h.start_line, "end_line": h.end_line, "score": round(h.score, 6),
            "kind": h.kind, "symbol": h.symbol, "text": h.text, "stale": h.stale}


def cmd_refs(args, settings: Settings) -> int:
    from .retrieve import lookup_references

    repo = _repo(args.repo)
    result = lookup_references(repo, settings, args.symbol)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0 if result["definitions"] else 1
    if not result["definitions"]:
        print(f"No symbol named {args.symbol!r} in the index of {repo}.")
        return 1
    for d in result["definitions"]:
        print(f"definition  {d['path']}:L{d['start_line']}-L{d['end_line']}  {d['kind']} {d['qualified_name']}")
    refs = result["references"]
    print(f"\n{len(refs)} references")
    current = None
    for r in refs:
        if r["path"] != current:
            current = r["path"]
            print(f"\n{current}")
        print(f"  L{r['line']:<5} {r['kind']:<13} {r['confidence']:<9} {r['text']}")
    return 0


def cmd_export(args, settings: Settings) -> int:
    from .store import open_store

    repo = _repo(args.repo)
    store = open_store(repo, settings)
    try:
        if not store.exists():
            from .errors import IndexMissingError

            raise IndexMissingError(f"No codeqa index for {repo} yet; run `codeqa index {repo}` first.")
        for sym in sorted(store.all_symbols(), key=lambda s: (s.path, s.start_line, s.id)):
            print(json.dumps({"type": "symbol", **asdict(sym)}))
        for ref in sorted(store.all_references(), key=lambda r: (r.path, r.line, r.column)):
            print(json.dumps({"type": "reference", **{**asdict(ref), "target_ids": list(ref.target_ids)}}))
    finally:
        store.close()
    return 0


def cmd_ask(args, settings: Settings) -> int:
    from .answer import ask_cli

    repo = _repo(args.repo)
    settings = settings.with_(model=args.model, top_k=args.top_k)
    return ask_cli(repo, settings, args.question, no_llm=args.no_llm, as_json=args.json)


def cmd_eval(args, settings: Settings) -> int:
    from .evaluate import eval_cli

    return eval_cli(args, settings)


def cmd_ui(args, settings: Settings) -> int:
    import subprocess

    app = Path(__file__).resolve().parent.parent / "ui" / "app.py"
    if not app.is_file():
        import codeqa.ui

        app = Path(codeqa.ui.__path__[0]) / "app.py"
    env = dict(os.environ)
    if args.repo:
        env["CODEQA_UI_REPO"] = str(_repo(args.repo))
    if args.index_dir:
        env["CODEQA_INDEX_DIR"] = str(args.index_dir)
    if args.qdrant_url:
        env["QDRANT_URL"] = args.qdrant_url
    if args.watch:
        env["CODEQA_UI_WATCH"] = "1"
    env.setdefault("HF_HUB_OFFLINE", "1")
    # the page must import this very codeqa (a source checkout is not necessarily the installed one)
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(args.port),
               "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
               "--client.toolbarMode", "minimal"]
    print(f"codeqa UI on http://localhost:{args.port}", file=sys.stderr)
    return subprocess.call(command, env=env)


def cmd_mcp(args, settings: Settings) -> int:
    from contextlib import nullcontext

    from .mcp import http_address, serve_http, serve_stdio

    repo = _repo(args.repo)
    token = args.token or os.environ.get("CODEQA_MCP_TOKEN")
    address = http_address(args.http, token) if args.http else None
    with _watcher(repo, settings) if args.watch else nullcontext():
        if address is None:
            serve_stdio(repo, settings)  # stdout is the protocol: nothing else may print to it
            return 0

        def listening(url: str) -> None:
            print(f"codeqa MCP on {url} for {repo}" + (" (bearer token required)" if token else ""), file=sys.stderr,
                  flush=True)

        serve_http(repo, settings, *address, token, listening)
    return 0


def _watcher(repo: Path, settings: Settings, debounce: float = 1.0, quiet: bool = True):
    """Live sync beside another command; what it does goes to stderr (stdout may be a protocol)."""
    from .watch import RepoWatcher

    def report(r) -> None:
        if not quiet or not r.nothing_to_do:
            state = "up to date" if r.nothing_to_do else (f"re-indexed {r.files_changed} changed, {r.files_deleted} deleted "
                                                          f"file(s)")
            print(f"codeqa watch: {state} in {r.elapsed_seconds:.1f}s", file=sys.stderr, flush=True)

    def error(exc: Exception) -> None:
        print(f"codeqa watch: {exc}", file=sys.stderr, flush=True)

    return RepoWatcher(repo, settings, on_report=report, on_error=error, debounce=debounce)


def cmd_watch(args, settings: Settings) -> int:
    import time

    from .index import index_repo

    repo = _repo(args.path)
    with _watcher(repo, settings, debounce=args.debounce, quiet=False) as watcher:  # watching before the first run
        report = index_repo(repo, settings, embedder=watcher.embedder)
        print(f"codeqa watch: {repo} indexed ({report.files_total} files, {report.chunks} chunks); watching for changes, "
              "Ctrl-C stops.", file=sys.stderr, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


COMMANDS = {"index": cmd_index, "search": cmd_search, "refs": cmd_refs, "ask": cmd_ask, "export": cmd_export,
            "eval": cmd_eval, "ui": cmd_ui, "mcp": cmd_mcp, "watch": cmd_watch}
