"""The commands of `codeqa` (but ask, eval and ui: ask.py, evaluate.py, page.py): each parses nothing, calls the
library, prints the result; how `codeqa index` shows its progress is progress.py's."""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Callable

from ..config import Settings
from ..errors import UsageError
from .progress import index_progress, per_second
from .terminal import safe_markup, terminal_safe

if TYPE_CHECKING:
    from ..indexing.index import IndexReport


def _repo(path: Path) -> Path:
    if not path.exists():
        raise UsageError(f"Repository {path} does not exist; pass the folder of a code repository.")
    if not path.is_dir():
        raise UsageError(f"Repository {path} is not a directory; pass the folder of a code repository.")
    return path.resolve()


def cmd_index(args, settings: Settings) -> int:
    from ..indexing.index import index_repo

    repo = _repo(args.path)
    if getattr(args, "dry_run", False):
        return _index_dry_run(repo, settings, args.json)
    embed = not getattr(args, "defer_embeddings", False)
    if args.json:
        report = index_repo(repo, settings, full=args.full, embed=embed)
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    from rich.console import Console

    console = Console(stderr=True)
    with index_progress(console) as progress:
        report = index_repo(repo, settings, full=args.full, progress=progress, embed=embed)
    _print_index_summary(report, console)
    return 0


def embedded_words(d: dict) -> str:
    """What a run embedded, in the terms its progress used: phase 2 embeds the chunks announced when phase 1
    was done; the others had their vectors in the embedding cache when phase 1 stored them."""
    early = d["chunks_embedded"] - d["chunks_embedded_phase2"]
    if not early or not d["chunks_embedded_phase2"]:
        where = " from the embedding cache" if early else ""
        return f"{d['chunks_embedded']} embedded this run{where}"
    return (f"{d['chunks_embedded']} embedded this run: {early} from the embedding cache in phase 1, "
            f"{d['chunks_embedded_phase2']} in phase 2")


def _print_index_summary(report, console) -> None:
    from rich.table import Table

    d = report.to_dict()
    if report.nothing_to_do:
        console.print(f"[green]Index up to date[/] ({d['files']} files, {d['chunks']} chunks) in {d['elapsed_seconds']:.2f}s — nothing changed.")
    table = Table(title=f"codeqa index: {safe_markup(str(report.repo))}", show_header=False)
    table.add_row("files", f"{d['files']} ({', '.join(f'{k} {v}' for k, v in sorted(d['files_by_language'].items()))})")
    table.add_row("changed / deleted / unchanged", f"{d['files_changed']} / {d['files_deleted']} / {d['files_unchanged']}")
    table.add_row("symbols", str(d["symbols"]))
    table.add_row("references", f"{d['references']} ({', '.join(f'{k} {v}' for k, v in sorted(d['references_by_confidence'].items()))})")
    table.add_row("chunks", f"{d['chunks']} ({embedded_words(d)})")
    if d["searchable_seconds"] and not report.nothing_to_do:
        table.add_row("searchable after", f"{d['searchable_seconds']:.2f}s (phase 1: keywords and the graph)")
    if d["chunks_deferred"]:
        table.add_row("semantic search", f"{d['chunks'] - d['chunks_deferred']} of {d['chunks']} chunks embedded; "
                                         "run `codeqa index` again to embed the rest")
    if d["graph_seconds"]:
        table.add_row("graph stage", f"{d['graph_seconds']:.2f}s ({d['graph_files_per_second']:.0f} files/s)")
    if d["chunks_encoded"]:  # the model's speed, as the progress bar shows it
        table.add_row("embedding", f"{d['embedding_seconds']:.2f}s ({d['chunks_encoded']} chunks by the model, "
                                   f"{per_second(d['chunks_per_second'])} chunks/s)")
    table.add_row("skipped", ", ".join(f"{k} {v}" for k, v in sorted(d["skipped_by_reason"].items())) or "none")
    table.add_row("left out unread", _left_out_counts(d["pruned"], d["gitignored_files"]))
    table.add_row("index size", f"{d['index_bytes'] / 1e6:.1f} MB in {safe_markup(str(d['index_dir']))}")
    table.add_row("time", f"{d['elapsed_seconds']:.2f}s")
    console.print(table)
    for note in d["notes"]:
        console.print(f"[cyan]{safe_markup(note)}[/]")
    for item in d["partial"][:20]:
        console.print(f"[yellow]partially parsed[/] {safe_markup(item['path'])}: {safe_markup(item['reason'])}")
    # files of no source language are many and expected (data, configs): counted by extension;
    # the other reasons (secrets, binaries, unreadable...) are listed file by file
    listed = [item for item in d["skipped"] if item["reason"] != "not-source"]
    for item in listed[:20]:
        detail = f": {item['detail']}" if item.get("detail") else ""
        console.print(f"[dim]skipped {safe_markup(item['path'])} ({item['reason']}{safe_markup(detail)})[/]")
    if len(listed) > 20:
        console.print(f"[dim]... and {len(listed) - 20} more skipped files (see --json)[/]")
    _print_left_out(d["pruned"], console, LISTED_FOLDERS)
    kinds = Counter(PurePosixPath(item["path"]).suffix or PurePosixPath(item["path"]).name
                    for item in d["skipped"] if item["reason"] == "not-source")
    if kinds:
        shown = ", ".join(f"{safe_markup(kind)} {n}" for kind, n in kinds.most_common(8))
        more = ", ..." if len(kinds) > 8 else ""
        console.print(f"[dim]not indexed (no source language): {sum(kinds.values())} files ({shown}{more}; see --json)[/]")


LISTED_FOLDERS = 20  # folders left out unread listed by a summary; --json has them all


def _left_out_counts(pruned: list[dict], gitignored: int) -> str:
    """"3 folders (ignored-dir 2, output 1), 12 files matched by a .gitignore", or "none"."""
    reasons = Counter(item["reason"] for item in pruned)
    parts = [f"{len(pruned):,} folder{'s' if len(pruned) != 1 else ''} ("
             + ", ".join(f"{k} {v:,}" for k, v in sorted(reasons.items())) + ")"] if pruned else []
    if gitignored:
        parts.append(f"{gitignored:,} file{'s' if gitignored != 1 else ''} matched by a .gitignore")
    return ", ".join(parts) or "none"


def _print_left_out(pruned: list[dict], console, limit: int) -> None:
    """Each folder left out unread as `path/ (reason: detail)`, once."""
    for item in pruned[:limit]:
        detail = f": {item['detail']}" if item.get("detail") else ""
        console.print(f"[dim]left out {safe_markup(item['path'])}/ ({item['reason']}{safe_markup(detail)})[/]")
    if len(pruned) > limit:
        console.print(f"[dim]... and {len(pruned) - limit} more folders left out (see --json)[/]")


def _index_dry_run(repo: Path, settings: Settings, as_json: bool) -> int:
    from ..indexing.plan import plan_index

    if as_json:
        print(json.dumps(plan_index(repo, settings).to_dict(), indent=2))
        return 0
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("Walking the repository and timing a sample (parse, chunk, embed, store)..."):
        plan = plan_index(repo, settings)
    _print_plan(plan, Console(highlight=False, soft_wrap=True))
    return 0


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 100_000 else f"{n / 1e3:,.0f} kB"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 600:
        return f"{int(seconds // 60)} min {round(seconds % 60):02d} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _print_plan(plan, console) -> None:
    console.print(f"[bold]codeqa index --dry-run[/] {safe_markup(plan.repo)}: nothing was indexed or written.")
    console.print(f"\n[bold]Would index[/] {plan.files:,} files ({_mb(plan.bytes)})")
    for lang in plan.by_language:
        console.print(f"  {lang.language:<12} {lang.files:>7,} files  {_mb(lang.bytes):>10}")
    reasons = ", ".join(f"{k} {v:,}" for k, v in sorted(plan.skipped_by_reason.items(), key=lambda kv: -kv[1]))
    console.print(f"[bold]Skipped[/] {reasons or 'nothing'}" + (" (each file: --dry-run --json)" if reasons else ""))
    pruned = [asdict(s) for s in plan.pruned]
    console.print(f"[bold]Left out unread[/] {_left_out_counts(pruned, plan.gitignored_files)}")
    _print_left_out(pruned, console, LISTED_FOLDERS)
    if plan.folders:
        console.print("\n[bold]Biggest folders[/] (indexed / left out)")
        for f in plan.folders:
            left = f"{'at least ' if f.at_least else ''}{f.left_out_files:,} files {_mb(f.left_out_bytes)}"
            why = f"all left out: {f.status}" if f.status != "indexed" else f"{f.files:,} files {_mb(f.bytes)} / {left}"
            console.print(f"  {safe_markup(f.path + '/'):<28} {why}" + (f" [dim]({f.kind})[/]" if f.kind else ""))
    if plan.suggestions:
        console.print("\n[bold]Suggested ignore lines[/] (big folders that look skippable)")
        for f in plan.suggestions:
            console.print(f"  {f.ignore_file:<14} {safe_markup(f.suggestion):<24} [dim]{f.kind}, {_mb(f.total_bytes)}[/]")
    console.print(f"\n[bold]Estimated chunks[/] ~{plan.chunks:,} ({plan.sample_chunks:,} in {plan.sample_files:,} sampled files)")
    console.print("[bold]Estimated time on this machine[/] (extrapolated from a measured sample: an estimate)")
    console.print(f"  phase 1  ~{_duration(plan.phase1_seconds):<9} walk {plan.walk_seconds:.1f} s, parse + chunk "
                  f"{plan.parse_seconds:.1f} s ({plan.parse_workers} process{'es' if plan.parse_workers > 1 else ''}), "
                  f"references {plan.resolve_seconds:.1f} s, store {plan.store_seconds:.1f} s"
                  f"{' (beside the references)' if plan.store_beside else ''}: keyword and graph search")
    console.print(f"  phase 2  ~{_duration(plan.phase2_seconds):<9} load {safe_markup(plan.model_id)} {plan.model_load_seconds:.1f} s, "
                  f"embed ~{plan.chunks:,} chunks at {plan.chunks_per_second:,.1f}/s: semantic search")
    console.print(f"  total    ~{_duration(plan.phase1_seconds + plan.phase2_seconds)}")
    for note in plan.notes:
        console.print(f"[dim]{safe_markup(note)}[/]")


def cmd_search(args, settings: Settings) -> int:
    from ..query.retrieve import Retriever, semantic_note

    repo = _repo(args.repo)
    if not args.query and not args.queries_file:
        raise UsageError("Give a QUERY or --queries-file FILE.")
    if args.top_k < 1:
        raise UsageError("--top-k must be at least 1.")
    with Retriever.open(repo, settings) as retriever:
        note = semantic_note(retriever.semantic_coverage())
        if note:
            print(terminal_safe(note), file=sys.stderr)
        if args.queries_file:
            for query in _read_queries(args.queries_file):
                hits = retriever.search(query, top_k=args.top_k)
                print(json.dumps({"query": query, "results": [_hit_json(h) for h in hits]}), flush=True)
            return 0
        hits = retriever.search(args.query, top_k=args.top_k)
    if args.json:
        print(json.dumps([_hit_json(h) for h in hits], indent=2))
        return 0
    print_hits(hits)
    return 0


def print_hits(hits, repositories=None) -> None:
    """`codeqa search`'s text: each hit's place, title, score and reasons, then its code; with `repositories`
    (a workspace's search), each place is prefixed by its repository's name."""
    from rich.console import Console
    from rich.syntax import Syntax

    console = Console()
    if not hits:
        console.print("No results.")
    for rank, h in enumerate(hits, 1):
        where = f"\\[{safe_markup(repositories[rank - 1])}] " if repositories else ""
        stale = "  [yellow](changed since indexed: run `codeqa index`)[/]" if h.stale else ""
        console.print(f"[bold]{rank}. {where}{safe_markup(h.path)}:L{h.start_line}-L{h.end_line}[/]  {safe_markup(h.title)}  "
                      f"[dim]score {h.score:.3f} ({safe_markup(', '.join(h.reasons))})[/]{stale}")
        console.print(Syntax(terminal_safe(h.text.rstrip("\n")[:1200]), h.language or "text", line_numbers=True, start_line=h.start_line))


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
    from ..query.retrieve import lookup_references

    repo = _repo(args.repo)
    result = lookup_references(repo, settings, args.symbol)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0 if result["definitions"] else 2
    if not result["definitions"]:
        close = result.get("suggestions") or []
        hint = f" Did you mean {terminal_safe(', '.join(close))}?" if close else " `codeqa search` finds code by description."
        print(f"error: no symbol named {args.symbol!r} in the index of {repo}.{hint}", file=sys.stderr)
        return 2
    for d in result["definitions"]:
        print(terminal_safe(f"definition  {d['path']}:L{d['start_line']}-L{d['end_line']}  {d['kind']} {d['qualified_name']}"))
    refs = result["references"]
    print(f"\n{len(refs)} references")
    current = None
    for r in refs:
        if r["path"] != current:
            current = r["path"]
            print(f"\n{terminal_safe(current)}")
        print(terminal_safe(f"  L{r['line']:<5} {r['kind']:<13} {r['confidence']:<9} {r['text']}"))
    return 0


def cmd_export(args, settings: Settings) -> int:
    from ..query.retrieve import open_index

    repo = _repo(args.repo)
    store, _ = open_index(repo, settings)
    try:
        for sym in sorted(store.all_symbols(), key=lambda s: (s.path, s.start_line, s.id)):
            print(json.dumps({"type": "symbol", **asdict(sym)}))
        for ref in sorted(store.all_references(), key=lambda r: (r.path, r.line, r.column)):
            print(json.dumps({"type": "reference", **{**asdict(ref), "target_ids": list(ref.target_ids)}}))
    finally:
        store.close()
    return 0


def cmd_mcp(args, settings: Settings) -> int:
    from ..mcp import http_address, serve_http, serve_stdio

    repo = _repo(args.repo)
    token = args.token or settings.mcp_token
    address = http_address(args.http, token) if args.http else None
    # the watcher re-indexes through the server's own runs, which take turns with its reindex tool
    watch = (lambda indexer: _watcher(repo, settings, index=indexer.update, resident=indexer.watched())) if args.watch else None
    if address is None:
        serve_stdio(repo, settings, watch)  # stdout is the protocol: nothing else may print to it
        return 0

    def listening(url: str) -> None:
        print(f"codeqa MCP on {url} for {repo}" + (" (bearer token required)" if token else ""), file=sys.stderr,
              flush=True)

    serve_http(repo, settings, *address, token, listening, watch)
    return 0


def _watcher(repo: Path, settings: Settings, debounce: float | None = None, quiet: bool = True,
             index: Callable[[], IndexReport] | None = None, resident=None):
    """Live sync beside another command; what it does goes to stderr (stdout may be a protocol). `index`: how
    a run indexes (the MCP server's own runs, with their `resident`), by default both phases."""
    from ..indexing.watch import RepoWatcher

    def report(r) -> None:
        if not quiet or not r.nothing_to_do:
            state = "up to date" if r.nothing_to_do else (f"re-indexed {r.files_changed} changed, {r.files_deleted} deleted "
                                                          f"file(s)")
            print(f"codeqa watch: {state} in {r.elapsed_seconds:.1f}s", file=sys.stderr, flush=True)

    def error(exc: Exception) -> None:
        print(f"codeqa watch: {terminal_safe(str(exc))}", file=sys.stderr, flush=True)

    return RepoWatcher(repo, settings, on_report=report, on_error=error, index=index, resident=resident,
                       **({} if debounce is None else {"debounce": debounce}))  # else watch.DEBOUNCE_SECONDS


def cmd_watch(args, settings: Settings) -> int:
    import time

    from ..indexing.index import index_repo

    import signal

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    repo = _repo(args.path)
    # Ctrl-C and SIGTERM stop watching, even when this process was started with SIGINT ignored (as a child
    # of a process that ignores it): Python then leaves SIGINT ignored and Ctrl-C would do nothing
    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    watcher = _watcher(repo, settings, debounce=args.debounce, quiet=False).start()  # watching before the first run
    try:
        report = index_repo(repo, settings, embedder=watcher.embedder, resident=watcher.resident)
        print(f"codeqa watch: {repo} indexed ({report.files_total} files, {report.chunks} chunks); watching for changes, "
              "Ctrl-C stops.", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        if not watcher.stop(wait=5):  # Ctrl-C means now: a run cut off here is completed by the next one
            print("codeqa watch: stopped during an index run; the next `codeqa index` or watch completes it.",
                  file=sys.stderr, flush=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
