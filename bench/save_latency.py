"""Save-to-searchable: how long after a file is saved an incremental index run has committed it.

    python bench/save_latency.py REPO --touch lib/sqlalchemy/sql/elements.py --touch lib/... \
        [--codeqa-root DIR ...] [--trials 3] [--work /tmp/save-latency]

For each `--codeqa-root` (a checkout of codeqa: give the *before* and *after* worktrees to compare them
in one run), in a child process importing that checkout: REPO is copied to a work folder and indexed
in full with phase 1 only (as `codeqa index --defer-embeddings`: keywords and the graph, no dense
vectors); then, `--trials` times per touched file, an unused function is appended to it and the
incremental run that `codeqa watch` starts after a save (`index_repo`, phase 1) is timed from the
write to its return, when the run has committed the chunks, symbols and references; the file is
restored and indexed again (not timed). `codeqa watch` waits its debounce (1 s) before that run.

With `--watcher`, each root is then timed the way `codeqa watch` runs: one process across the saves,
a RepoWatcher (file-system events, `--debounce` seconds of quiet) whose runs are phase 1 (as `codeqa mcp
--watch` runs them; phase 2 goes on in the background there), timed from the write to the run's report
(`watch_s`, debounce included) and the run alone (`run_s`, its elapsed_seconds). A checkout whose
RepoWatcher keeps a ResidentIndex (resident.py) passes it to its runs: the parses and tables stay in
memory between saves. The first save after the watcher starts is left out of the figures (`first_s`).

It prints one JSON line per root (walls in seconds, the median, the files resolved again per run,
the load average before and after) and then, once, the phase-2 cost of the new chunk: the default
embedder's model load and one warm encode of the appended function's chunk (median of `--trials`).
Whether the new function is findable by keywords at commit is checked with a `codeqa search` of its
name on the phase-1 index.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ADDED = "\n\ndef added_by_save_latency_benchmark(value):\n    return value\n"


def child(repo: Path, index_dir: Path, touches: list[str], trials: int) -> dict:
    from codeqa.config import Settings
    from codeqa.indexing.index import index_repo
    import codeqa.indexing.graph.stage as graph_stage

    resolved: list = []
    original = graph_stage.resolve_by_file

    def spy(*args, **kwargs):
        result = original(*args, **kwargs)
        resolved.append(None if result.complete else len(result.references))
        return result

    graph_stage.resolve_by_file = spy
    settings = Settings.load(index_dir=index_dir)
    started = time.perf_counter()
    full = index_repo(repo, settings, full=True, embed=False)
    out: dict = {"codeqa": graph_stage.__file__, "full_s": time.perf_counter() - started,
                 "files": full.files_total, "references": full.references, "touched": {}}
    index_repo(repo, settings, embed=False)  # a no-change run: the state is written
    for rel in touches:
        target = repo / rel
        text = target.read_bytes()
        walls, counts, loads = [], [], []
        for _ in range(trials):
            loads.append(os.getloadavg()[0])
            target.write_bytes(text + ADDED.encode())
            t0 = time.perf_counter()
            index_repo(repo, settings, embed=False)
            walls.append(time.perf_counter() - t0)
            counts.append(resolved[-1])
            target.write_bytes(text)
            index_repo(repo, settings, embed=False)
        out["touched"][rel] = {"walls_s": walls, "median_s": statistics.median(walls), "resolved_files": counts,
                               "load1": loads}
    target = repo / touches[0]
    text = target.read_bytes()
    target.write_bytes(text + ADDED.encode())
    index_repo(repo, settings, embed=False)
    search = subprocess.run([sys.executable, "-m", "codeqa", "search", "added_by_save_latency_benchmark",
                             "--repo", str(repo), "--index-dir", str(index_dir), "--json"],
                            capture_output=True, text=True)
    target.write_bytes(text)
    try:
        hits = json.loads(search.stdout)
    except ValueError:
        hits = [search.stderr[-300:]]
    out["keyword_search_top"] = hits[0] if hits else None
    return out


def watched(repo: Path, index_dir: Path, touches: list[str], trials: int, debounce: float) -> dict:
    """Saves under a RepoWatcher in this process, as `codeqa watch` runs them (see the module docstring)."""
    import threading

    from codeqa.config import Settings
    from codeqa.indexing.index import index_repo
    from codeqa.indexing.watch import RepoWatcher

    settings = Settings.load(index_dir=index_dir)
    index_repo(repo, settings, full=True, embed=False)
    reports: list = []
    arrived = threading.Condition()
    holder: dict = {}

    def run():
        resident = getattr(holder["watcher"], "resident", None)
        return index_repo(repo, settings, embed=False, **({"resident": resident} if resident is not None else {}))

    def on_report(report) -> None:
        with arrived:
            reports.append((time.perf_counter(), report))
            arrived.notify_all()

    def save(target: Path, data: bytes) -> tuple[float, object]:
        with arrived:
            seen = len(reports)
        t0 = time.perf_counter()
        target.write_bytes(data)
        with arrived:
            if not arrived.wait_for(lambda: len(reports) > seen, timeout=300):
                raise SystemExit("no run after a save")
            done, report = reports[-1]
        time.sleep(debounce * 2)  # no second run of the same save is under way
        return done - t0, report

    watcher = holder["watcher"] = RepoWatcher(repo, settings, debounce=debounce, index=run, on_report=on_report)
    out: dict = {"resident": hasattr(watcher, "resident"), "debounce_s": debounce, "touched": {}}
    with watcher:
        holder["watcher"] = watcher
        if hasattr(watcher, "resident"):  # as cmd_watch: the first run, after the watcher started
            index_repo(repo, settings, embed=False, resident=watcher.resident)
        for rel in touches:
            target = repo / rel
            text = target.read_bytes()
            first, _ = save(target, text + ADDED.encode())
            save(target, text)
            walls, runs, loads = [], [], []
            for _ in range(trials):
                loads.append(os.getloadavg()[0])
                took, report = save(target, text + ADDED.encode())
                walls.append(took)
                runs.append(report.elapsed_seconds)
                save(target, text)
            out["touched"][rel] = {"first_s": first, "watch_s": walls, "watch_median_s": statistics.median(walls),
                                   "run_s": runs, "run_median_s": statistics.median(runs), "load1": loads}
    return out


def phase2(trials: int) -> dict:
    """The default embedder: model load, then one warm encode of the appended function's chunk."""
    from codeqa.config import Settings
    from codeqa.embed import embedder_from_settings

    embedder = embedder_from_settings(Settings.load())
    t0 = time.perf_counter()
    embedder.encode(["warm up"])
    load = time.perf_counter() - t0
    walls = []
    for _ in range(trials):
        t0 = time.perf_counter()
        embedder.encode([ADDED.strip()])
        walls.append(time.perf_counter() - t0)
    return {"model_id": embedder.model_id, "load_s": load, "encode_walls_s": walls, "encode_median_s": statistics.median(walls)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--touch", action="append", required=True, help="a file to append to, relative to REPO")
    ap.add_argument("--codeqa-root", action="append", type=Path, help="checkouts to compare (default: this one)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/save-latency"))
    ap.add_argument("--watcher", action="store_true", help="also time saves under a RepoWatcher (one process)")
    ap.add_argument("--debounce", type=float, default=0.2, help="the watcher's debounce, seconds (codeqa watch: 1.0)")
    ap.add_argument("--no-cold", action="store_true", help="skip the one-run-per-save figures")
    ap.add_argument("--no-phase2", action="store_true", help="skip the embedder's figures")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--index-dir", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--phase2", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--watched", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.phase2:
            result = phase2(args.trials)
        elif args.watched:
            result = watched(args.repo, args.index_dir, args.touch, args.trials, args.debounce)
        else:
            result = child(args.repo, args.index_dir, args.touch, args.trials)
        print(json.dumps(result))
        return
    roots = args.codeqa_root or [Path(__file__).resolve().parent.parent]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    modes = ([[]] if not args.no_cold else []) + ([["--watched", "--debounce", str(args.debounce)]] if args.watcher else [])
    for mode in modes:
        for n, root in enumerate(roots):
            work = args.work / f"root{n}"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(args.repo, work / "repo")
            cmd = [sys.executable, str(Path(__file__).resolve()), str(work / "repo"), "--child", "--index-dir",
                   str(work / "index"), "--trials", str(args.trials), *mode] + [x for t in args.touch for x in ("--touch", t)]
            before = os.getloadavg()
            done = subprocess.run(cmd, cwd=root, env=dict(env, PYTHONPATH=str(root)), capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{root}: {done.stderr[-2000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            result.update(root=str(root), mode="watcher" if mode else "one run per save", loadavg_before=before,
                          loadavg_after=os.getloadavg())
            print(json.dumps(result), flush=True)
    if args.no_phase2:
        return
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), ".", "--child", "--phase2", "--touch", "-",
                           "--trials", str(args.trials)], cwd=roots[-1], env=dict(env, PYTHONPATH=str(roots[-1])),
                          capture_output=True, text=True)
    print(done.stdout.strip() or done.stderr[-2000:], flush=True)


if __name__ == "__main__":
    main()
