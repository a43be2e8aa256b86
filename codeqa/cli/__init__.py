"""Command line: thin shells over the library, and the only place that prints or exits. `main` turns
CodeQAError into a message and an exit code.

    __init__.py    the parser and main()
    commands.py    index, search, refs, export, mcp, watch
    progress.py    how index shows its progress: bars on a terminal, plain lines in a log
    page.py        ui: the page's child process and what it may be reached by
    ask.py         ask
    evaluate.py    eval, eval generate, eval compare
    workspace.py   workspace add/list/remove, and index/search/refs --workspace NAME
    mcp_workspace.py  mcp --workspace NAME

Exit codes: 0 ok, 1 runtime failure, 2 bad usage or input (missing repo, no index yet).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from ..config import Settings
from ..errors import CodeQAError
from .ask import cmd_ask
from .commands import cmd_export, cmd_index, cmd_mcp, cmd_refs, cmd_search, cmd_watch
from .evaluate import cmd_eval
from .mcp_workspace import workspace_mcp
from .page import cmd_ui
from .workspace import cmd_workspace, workspace_index, workspace_refs, workspace_search
from .terminal import terminal_safe

DESCRIPTION = """Answer questions about a codebase.

  codeqa index PATH                 build or update the index of a repository (incremental)
  codeqa index PATH --dry-run       what it would index and skip, and how long it would take here
  codeqa search QUERY --repo PATH   hybrid (semantic + keyword + symbol) search over the code
  codeqa refs SYMBOL --repo PATH    definitions and every reference site of a symbol
  codeqa ask QUESTION --repo PATH   an answer with verified path:Lstart-Lend citations
  codeqa export --repo PATH         the symbol graph as JSON lines
  codeqa eval Q.jsonl --repo PATH   retrieval and answer quality on a question set
  codeqa ui [--repo PATH]           the Streamlit chat
  codeqa mcp [--repo PATH]          an MCP server for coding agents (stdio; --http HOST:PORT; --workspace NAME)
  codeqa watch PATH                 keep the index fresh while you edit (also: ui/mcp --watch)
  codeqa workspace add NAME PATH... a named set of repositories: index, search and refs take --workspace NAME

The index is embedded (Qdrant Edge, in-process) in your cache folder, never inside the repository:
$XDG_CACHE_HOME/codeqa/<repo>-<hash> (~/.cache/..., ~/Library/Caches/... on macOS). --index-dir or
CODEQA_INDEX_DIR chooses another folder; --qdrant-url or QDRANT_URL keeps it on a Qdrant server or cluster.
Several processes may read one index while one `codeqa index` writes it.
Set OPENAI_BASE_URL / OPENAI_API_KEY / CODEQA_MODEL for LLM answers; without them answers are extractive.
"""


INDEX_NAME_HELP = ("with --qdrant-url: the index's name on the server, the same for every checkout of the repository "
                   "(default: its git remote and the folder's path inside it, else the folder's path; env CODEQA_INDEX_NAME)")


def _common(p: argparse.ArgumentParser, repo_required: bool = True) -> None:
    if repo_required:
        p.add_argument("--repo", required=True, type=Path, help="the repository whose index to use")
    p.add_argument("--index-dir", type=Path, help="index folder (default: the user's cache, ~/.cache/codeqa/<repo>-<hash>; env CODEQA_INDEX_DIR)")
    p.add_argument("--qdrant-url", help="Qdrant server or cluster URL instead of the local index (env QDRANT_URL)")
    _index_name(p)


def _index_name(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index-name", help=INDEX_NAME_HELP)


def _target(p: argparse.ArgumentParser, needs: str) -> None:
    """--workspace NAME beside the one repository `needs` names (`--repo` or `path`): main() asks for one of them."""
    p.add_argument("--workspace", metavar="NAME", help="every repository of workspace NAME, each in its own index "
                                                       "(see `codeqa workspace`)")
    p.set_defaults(needs=needs, usage_error=p.error)


def _repo_or_workspace(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", type=Path, help="the repository whose index to use; with --workspace, the NAME of one of "
                                             "its repositories")
    _target(p, "--repo")
    _common(p, repo_required=False)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="codeqa", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("index", help="build or update the index of a repository",
                       description="Walk the repository (honouring .gitignore and .codeqaignore, never reading secret "
                                   "files), parse it with tree-sitter, chunk, embed and store it, in two phases: phase 1 "
                                   "(parse, graph, keyword vectors) makes search, refs, ask, the UI and MCP work; phase 2 "
                                   "embeds the chunks (package code first) for semantic search, in committed batches: "
                                   "stopping it loses nothing and the next run goes on from there. Re-runs only touch "
                                   "changed files. --dry-run says what a run would index and about how long it would take.")
    p.add_argument("path", type=Path, nargs="?", help="repository folder")
    _target(p, "path")
    _common(p, repo_required=False)
    p.add_argument("--full", action="store_true", help="drop the existing index and rebuild it from scratch")
    p.add_argument("--dry-run", action="store_true",
                   help="index nothing and write nothing: list the files by language, what is skipped and why, the "
                        "biggest folders with suggested .codeqaignore/.gitignore lines, and estimate the chunks and the "
                        "time of each phase on this machine (parse+graph+store, then embedding), measured on a "
                        "sample of files and chunks (about 10-20 s, most of it loading the model)")
    p.add_argument("--defer-embeddings", action="store_true",
                   help="stop after phase 1: keyword and graph search work in minutes even on a big project; a later "
                        "`codeqa index` (without this flag) embeds the chunks")
    p.add_argument("--json", action="store_true", help="print the summary (or the --dry-run plan) as JSON")

    p = sub.add_parser("search", help="search the code", description="Hybrid search: dense + BM25 fused in Qdrant, "
                       "boosted by symbol-name matches and one reference hop. Prints results best first.")
    p.add_argument("query", nargs="?", help="what to look for (natural language or identifiers)")
    p.add_argument("--queries-file", type=Path, help="JSON lines with a \"query\" field: one JSON line of results per query")
    _repo_or_workspace(p)
    p.add_argument("--top-k", type=_positive, default=10, help="results per query (default 10)")
    p.add_argument("--json", action="store_true", help="JSON output (see README for the shape)")

    p = sub.add_parser("refs", help="definitions and references of a symbol",
                       description="SYMBOL is a name (`EncoderClass`), `Class.method`, or `path:Name` to narrow it.")
    p.add_argument("symbol")
    _repo_or_workspace(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("ask", help="answer a question with cited code")
    p.add_argument("question")
    _common(p)
    p.add_argument("--model", help="chat model (env CODEQA_MODEL)")
    p.add_argument("--no-llm", action="store_true", help="answer extractively from retrieval alone")
    p.add_argument("--top-k", type=_positive, help="retrieved chunks (default 10)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("export", help="the symbol graph as JSON lines",
                       description="Every symbol, then every reference, one JSON object a line (\"type\": symbol | reference).")
    _common(p)

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
    _index_name(p)
    p.add_argument("--no-llm", action="store_true", help="extractive answers and no judge, even with an LLM configured")
    p.add_argument("--report", type=Path, help="write a markdown report and its plot (OUT.png) beside it; compare: the markdown")
    p.add_argument("--results", type=Path, help="per-question results as JSON lines (default with --report: OUT.results.jsonl)")
    p.add_argument("--out", type=Path, help="generate: output question file")
    p.add_argument("--kinds", help="generate: comma-separated kinds (default docstring,usage,relationship)")
    p.add_argument("--stripped-dir", type=Path, help="generate: where the docstring-free copy goes (default <out stem>-stripped beside --out)")
    p.add_argument("--count", type=int, default=60, help="generate: number of questions (default 60)")
    p.add_argument("--seed", type=int, default=0, help="generate: sampling seed (default 0)")
    p.add_argument("--top-k", type=_positive, default=10, help="ranked results scored per question (default 10, at least 10)")
    p.add_argument("--json", action="store_true", help="print the metrics (or generate/compare results) as JSON")

    p = sub.add_parser("ui", help="serve the Streamlit chat and open it in a browser")
    p.add_argument("--repo", type=Path, help="the repository the page serves (with --any-repo, others can be typed into it)")
    p.add_argument("--index-dir", type=Path, help="where its index lives (default: the user's cache, ~/.cache/codeqa/<repo>-<hash>)")
    p.add_argument("--qdrant-url", help="a Qdrant server instead of the local index folder")
    _index_name(p)
    p.add_argument("--port", type=int, default=8501, help="port to serve the page on (default 8501)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to serve the page on (default 127.0.0.1: this machine only); another needs --token")
    p.add_argument("--token", help="a token the page asks for (?token=...) before it shows anything (env CODEQA_UI_TOKEN)")
    p.add_argument("--any-repo", action="store_true",
                   help="let the page open any folder typed into it (by default it serves only --repo)")
    p.add_argument("--watch", action="store_true", help="re-index changed files within seconds of a save (see `codeqa watch`)")
    p.add_argument("--no-browser", action="store_true",
                   help="only print the page's address (by default a browser opens it when run from a terminal on a desktop)")

    p = sub.add_parser("mcp", help="serve the index to coding agents over MCP",
                       description="An MCP server with the tools search_code, find_symbol, find_references, read_code, ask, "
                                   "index_status, reindex (it returns once the index is searchable and embeds the "
                                   "rest in a background thread) and list_repositories. Over stdio by default (the agent "
                                   "starts it); --http serves Streamable HTTP at http://HOST:PORT/mcp. With --workspace "
                                   "NAME it serves every repository of the workspace in one process, and each tool "
                                   "takes a `repository` argument.")
    p.add_argument("--repo", type=Path, default=Path("."), help="the repository whose index to serve (default: the current folder)")
    p.add_argument("--workspace", metavar="NAME", help="serve every repository of workspace NAME, each from its own "
                                                       "index (see `codeqa workspace`)")
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
    p.add_argument("--debounce", type=float, default=0.3, help="seconds of quiet after a change before re-indexing (default 0.3)")
    p.add_argument("--index-dir", type=Path, help="index folder (default: the user's cache, ~/.cache/codeqa/<repo>-<hash>; env CODEQA_INDEX_DIR)")
    p.add_argument("--qdrant-url", help="Qdrant server or cluster URL instead of the local index (env QDRANT_URL)")
    _index_name(p)

    p = sub.add_parser("workspace", help="named sets of repositories, searched as one",
                       description="A workspace is a named set of repositories, each with its own index, kept in "
                                   "<config>/codeqa/workspaces/NAME.toml (env CODEQA_WORKSPACES_DIR; else "
                                   "$XDG_CONFIG_HOME or ~/.config), a file you may edit. `index`, `search` and `refs` "
                                   "take --workspace NAME; search fuses the repositories' results into one ranking "
                                   "and names each hit's repository.")
    actions = p.add_subparsers(dest="workspace_command", metavar="ACTION", required=True)
    a = actions.add_parser("add", help="add repositories to a workspace (created if needed)",
                           description="Add each PATH (a folder) to workspace NAME, creating it if needed. A "
                                       "repository is named after its folder; a name already taken gets -2, -3...")
    a.add_argument("name", metavar="NAME")
    a.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    a.add_argument("--index-dir", dest="repository_index_dir", type=Path,
                   help="the index folder of the one PATH given (default: the user's cache, as for `codeqa index`)")
    a = actions.add_parser("list", help="the workspaces, or the repositories of one")
    a.add_argument("name", metavar="NAME", nargs="?")
    a.add_argument("--json", action="store_true")
    a = actions.add_parser("remove", help="take a repository out of a workspace (its index stays)")
    a.add_argument("name", metavar="NAME")
    a.add_argument("path", metavar="PATH", help="the repository's folder, or its name in the workspace")
    return parser


def _positive(text: str) -> int:
    """A count of at least 1 (argparse type): `--top-k -3` is bad usage (exit 2), not an empty answer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number; give 1 or more")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    needs = getattr(args, "needs", None)
    if needs and args.workspace is None and getattr(args, needs.lstrip("-")) is None:
        args.usage_error(f"the following arguments are required: {needs} (or --workspace NAME)")
    try:
        settings = Settings.load(index_dir=getattr(args, "index_dir", None), qdrant_url=getattr(args, "qdrant_url", None),
                                 index_name=getattr(args, "index_name", None))
        if getattr(args, "workspace", None):
            return WORKSPACE_COMMANDS[args.command](args, settings)
        return COMMANDS[args.command](args, settings)
    except CodeQAError as exc:  # a message may quote a file's path or text, or a server's words
        print(f"error: {terminal_safe(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        resume = " (what was committed stays: run `codeqa index` again to go on from there)" if args.command == "index" else ""
        print(f"interrupted{resume}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `codeqa refs X --json | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes stdout
        return 141


COMMANDS = {"index": cmd_index, "search": cmd_search, "refs": cmd_refs, "ask": cmd_ask, "export": cmd_export,
            "eval": cmd_eval, "ui": cmd_ui, "mcp": cmd_mcp, "watch": cmd_watch, "workspace": cmd_workspace}
WORKSPACE_COMMANDS = {"index": workspace_index, "search": workspace_search, "refs": workspace_refs,  # --workspace NAME
                      "mcp": workspace_mcp}
