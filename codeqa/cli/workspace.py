"""`codeqa workspace add|list|remove`, and `index`, `search` and `refs` with `--workspace NAME`: the shell over
codeqa/workspace.py (the file) and codeqa/query/workspace.py (search and references across repositories).

Every result names its repository: `repository` beside `path` in --json, a `[name]` before the path in text.
"""

from __future__ import annotations

import json
import sys

from ..config import Settings
from ..errors import CodeQAError, UsageError
from ..workspace import (add_repositories, empty_workspace, load_workspace, remove_repository, save_workspace,
                         settings_for, workspace_file, workspace_names)
from .commands import _hit_json as _hit_json_of_one, _print_index_summary, _read_queries, print_hits
from .progress import index_progress
from .terminal import safe_markup, terminal_safe


def check_workspace_settings(args, settings: Settings) -> None:
    """A workspace has one index per repository: one --index-dir or --index-name cannot name them all."""
    if settings.index_dir:
        raise UsageError("--index-dir (or CODEQA_INDEX_DIR) names one index folder, and each repository of a "
                         "workspace has its own: leave it out, or set `index_dir` per repository in the workspace "
                         f"file ({workspace_file(args.workspace, settings)}).")
    if settings.index_name:
        raise UsageError("--index-name (or CODEQA_INDEX_NAME) names one index, and each repository of a workspace "
                         "has its own: leave it out with --workspace.")


# ---- codeqa workspace add | list | remove -----------------------------------------------------

def cmd_workspace(args, settings: Settings) -> int:
    if args.workspace_command == "add":
        return _add(args, settings)
    if args.workspace_command == "remove":
        workspace, gone = remove_repository(load_workspace(args.name, settings), args.path)
        save_workspace(workspace)
        print(terminal_safe(f"Removed {gone.name} ({gone.path}) from workspace {workspace.name} ({workspace.file}); "
                            "its index is kept."))
        return 0
    return _list(args, settings)


def _add(args, settings: Settings) -> int:
    new = not workspace_file(args.name, settings).exists()
    workspace = empty_workspace(args.name, settings) if new else load_workspace(args.name, settings)
    workspace, added = add_repositories(workspace, list(args.paths), args.repository_index_dir)
    save_workspace(workspace)
    if new:
        print(terminal_safe(f"Created workspace {workspace.name} ({workspace.file})."))
    for a in added:
        if a.already:
            line = f"{a.path} is already in workspace {workspace.name} as {a.name}."
        elif a.renamed:
            line = f"Added {a.path} as {a.name} (the name {a.path.name!r} was taken)."
        else:
            line = f"Added {a.path} as {a.name}."
        print(terminal_safe(line))
    print(terminal_safe(f"Workspace {workspace.name}: {_count(len(workspace.repositories))} in {workspace.file}. "
                        f"Index them with `codeqa index --workspace {workspace.name}`."))
    return 0


def _list(args, settings: Settings) -> int:
    names = [args.name] if args.name else workspace_names(settings)
    workspaces = [load_workspace(n, settings) for n in names]
    records = [{"name": w.name, "file": str(w.file), "repositories": [_repository_record(r, settings) for r in w.repositories]}
               for w in workspaces]
    if args.json:
        print(json.dumps(records[0] if args.name else records, indent=2))
        return 0
    if not records:
        print(terminal_safe(f"No workspaces yet (they live in {workspace_file('x', settings).parent}); create one with "
                            "`codeqa workspace add NAME PATH...`."))
    for w in records:
        print(terminal_safe(f"{w['name']}  {_count(len(w['repositories']))}  ({w['file']})"))
        width = max((len(r["name"]) for r in w["repositories"]), default=0)
        for r in w["repositories"]:
            missing = "" if r["exists"] else "  (missing: the folder is gone)"
            print(terminal_safe(f"  {r['name']:<{width}}  {_commit_words(r):<16}  {r['path']}{missing}"))
    return 0


def _repository_record(repository, settings: Settings) -> dict:
    """One repository as `workspace list --json` shows it: where it and its index are, and the commit its index
    reflects (that of the last run that changed it; None where not known: not in git, or not indexed yet)."""
    from ..indexing.state import indexed_commit

    index_dir = settings_for(repository, settings).index_dir_for(repository.path)
    local = not settings.qdrant_url
    commit = indexed_commit(index_dir) if local else None
    return {"name": repository.name, "path": str(repository.path), "exists": repository.path.is_dir(),
            "index_dir": str(index_dir) if local else None, "indexed": index_dir.is_dir() if local else None,
            "commit": commit["commit"] if commit else None, "dirty": commit["dirty"] if commit else None}


def _commit_words(record: dict) -> str:
    """The commit column of `workspace list`: a short commit id (`+dirty` when the work tree differed from it)."""
    if record["indexed"] is False:
        return "not indexed"
    if record["commit"] is None:
        return "commit unknown"
    return record["commit"][:12] + ("+dirty" if record["dirty"] else "")


def _count(n: int) -> str:
    return f"{n} repositor{'y' if n == 1 else 'ies'}"


# ---- index, search, refs over a workspace -------------------------------------------------------

def workspace_index(args, settings: Settings) -> int:
    """Index each repository in turn, each in its own index; one that fails is reported and the rest go on."""
    from ..embed import embedder_from_settings
    from ..indexing.index import index_repo

    if args.path is not None:
        raise UsageError(f"Give PATH or --workspace NAME, not both ({args.path} and {args.workspace}).")
    if args.dry_run:
        raise UsageError("--dry-run plans one repository: run `codeqa index PATH --dry-run` for each.")
    check_workspace_settings(args, settings)
    workspace = load_workspace(args.workspace, settings)
    if not workspace.repositories:
        raise UsageError(f"Workspace {workspace.name!r} has no repositories yet; add one with "
                         f"`codeqa workspace add {workspace.name} PATH`.")
    embedder = embedder_from_settings(settings)  # loads its model at first use, once for every repository
    embed = not args.defer_embeddings
    records, failed = [], []
    console = None
    if not args.json:
        from rich.console import Console

        console = Console(stderr=True)
    for number, repository in enumerate(workspace.repositories, 1):
        if console is not None:
            console.print(f"[bold][{number}/{len(workspace.repositories)}] {safe_markup(repository.name)}[/] "
                          f"{safe_markup(str(repository.path))}")
        try:
            if not repository.path.is_dir():
                raise UsageError(f"{repository.path} is not a folder (any more); fix or remove it in {workspace.file}.")
            own = settings_for(repository, settings)
            if console is None:
                report = index_repo(repository.path, own, full=args.full, embedder=embedder, embed=embed)
            else:
                with index_progress(console) as progress:
                    report = index_repo(repository.path, own, full=args.full, progress=progress, embedder=embedder,
                                        embed=embed)
        except (CodeQAError, OSError) as exc:
            code = exc.exit_code if isinstance(exc, CodeQAError) else 1
            failed.append((repository.name, code, str(exc)))
            records.append({"repository": repository.name, "path": str(repository.path), "error": str(exc)})
            if console is not None:
                console.print(f"[red]error[/] {safe_markup(repository.name)}: {safe_markup(str(exc))}")
            continue
        records.append({"repository": repository.name, **report.to_dict()})
        if console is not None:
            _print_index_summary(report, console)
    if args.json:
        print(json.dumps(records, indent=2))
    elif failed:
        done = len(workspace.repositories) - len(failed)
        print(terminal_safe(f"Indexed {done} of {len(workspace.repositories)} repositories of {workspace.name}; "
                            f"failed: {', '.join(name for name, _, _ in failed)} (see above)."), file=sys.stderr)
    return max((code for _, code, _ in failed), default=0)


def workspace_search(args, settings: Settings) -> int:
    check_workspace_settings(args, settings)
    workspace = load_workspace(args.workspace, settings).only(_repo_name(args))
    if not args.query and not args.queries_file:
        raise UsageError("Give a QUERY or --queries-file FILE.")
    from ..query.retrieve import semantic_note
    from ..query.workspace import WorkspaceSearcher

    with WorkspaceSearcher.open(workspace, settings) as searcher:
        for u in searcher.unavailable:
            print(terminal_safe(f"warning: [{u.repository}] left out of the search: {u.reason}"), file=sys.stderr)
        for name, coverage in searcher.semantic_coverage().items():
            note = semantic_note(coverage)
            if note:
                print(terminal_safe(f"[{name}] {note}"), file=sys.stderr)
        if args.queries_file:
            for query in _read_queries(args.queries_file):
                hits = searcher.search(query, top_k=args.top_k)
                print(json.dumps({"query": query, "results": [_hit_json(h) for h in hits]}), flush=True)
            return 0
        hits = searcher.search(args.query, top_k=args.top_k)
    if args.json:
        print(json.dumps([_hit_json(h) for h in hits], indent=2))
        return 0
    print_hits([found.hit for found in hits], [found.repository for found in hits])
    return 0


def _repo_name(args) -> str | None:
    """`--repo NAME` beside --workspace: the name of one of its repositories (argparse made it a Path)."""
    return None if args.repo is None else str(args.repo)


def _hit_json(found) -> dict:
    """`search --json`'s record of one repository, with `repository` before `path`."""
    return {"repository": found.repository, **_hit_json_of_one(found.hit)}


def workspace_refs(args, settings: Settings) -> int:
    check_workspace_settings(args, settings)
    workspace = load_workspace(args.workspace, settings).only(_repo_name(args))
    if not workspace.repositories:
        raise UsageError(f"Workspace {workspace.name!r} has no repositories yet; add one with "
                         f"`codeqa workspace add {workspace.name} PATH`.")
    from ..query.workspace import references_json, workspace_references

    results = workspace_references(workspace, settings, args.symbol)
    record = references_json(args.symbol, results)
    if args.json:
        print(json.dumps(record, indent=2))
        return 0 if record["definitions"] else 2
    if not record["definitions"]:
        for r in results:
            if r.unavailable:
                print(terminal_safe(f"[{r.repository}] {r.unavailable}"), file=sys.stderr)
        close = record.get("suggestions") or []
        hint = f" Did you mean {', '.join(close)}?" if close else " `codeqa search` finds code by description."
        print(terminal_safe(f"error: no symbol named {args.symbol!r} in workspace {workspace.name}.{hint}"), file=sys.stderr)
        return 2
    for r in (r for r in results if r.found and r.found["definitions"]):
        print(terminal_safe(f"[{r.repository}] {r.path}"))
        for d in r.found["definitions"]:
            print(terminal_safe(f"  definition  {d['path']}:L{d['start_line']}-L{d['end_line']}  {d['kind']} "
                                f"{d['qualified_name']}"))
        refs = r.found["references"]
        print(f"  {len(refs)} references")
        current = None
        for site in refs:
            if site["path"] != current:
                current = site["path"]
                print(terminal_safe(f"  {current}"))
            print(terminal_safe(f"    L{site['line']:<5} {site['kind']:<13} {site['confidence']:<9} {site['text']}"))
    # a repository that only imports the name from another has no sites here yet: references resolve within one
    elsewhere = [r.repository for r in results if r.found and not r.found["definitions"]]
    if elsewhere:
        print(terminal_safe(f"\nNot defined in {', '.join(elsewhere)} (sites there that use it from another "
                            "repository are not followed yet)."))
    for r in (r for r in results if r.found is None):
        print(terminal_safe(f"Not searched: [{r.repository}] {r.unavailable}"))
    return 0
