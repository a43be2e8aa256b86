"""Index/store engine figures on a big repository, with embeddings from the local hashed-word stub
(bench/embed_stub.py) so that they are the store's and not the model's: full index (wall time, peak
RSS, index folder size), no-change re-index, one-changed-file re-index (a small function appended to
one .py file), cold search (process start + open + one query, median of 3) and warm search p50/p95.

Every step is `python -m codeqa ...` in a fresh child process that imports the `codeqa` of
--codeqa-root (default: this checkout), with CODEQA_EMBEDDINGS=openai:stub-hash, OPENAI_BASE_URL of
the stub and CODEQA_INDEX_DIR; only the CLI and environment are used, so any engine version can be
measured. The repository is copied to a temporary folder first; the input is never modified.

Warm latency: one `search --queries-file` run (~30 queries: identifiers found in the sources and
short natural-language phrases, after 2 discarded warm-up queries); the CLI prints and flushes one
JSON line per query, and a query's latency is the time between its line and the previous one
(query embedding through the stub included). As a cross-check, the mean is also taken as (that
run - the same run with an empty queries file) / queries.

    python bench/store_scale.py REPO [--index-dir DIR] [--json OUT] [--queries N] [--codeqa-root DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_stub import EmbedStub  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WRAPPER = ("import resource, runpy, sys; sys.argv = ['codeqa'] + sys.argv[1:];\n"
           "try:\n    runpy.run_module('codeqa', run_name='__main__')\n"
           "finally:\n    print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
           " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)")
PHRASES = ["open a database connection", "parse the configuration file", "retry after an error",
           "close the session and release resources", "compile a query to a string", "cache the result",
           "validate the arguments", "log a warning message", "convert a value to a string", "iterate over rows",
           "register an event listener", "create a table", "handle a timeout", "read the environment variables",
           "merge two dictionaries", "check whether a type is supported", "raise an error for an invalid name",
           "transaction commit and rollback", "load objects lazily", "format the error message"]
IDENT = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z][A-Za-z0-9_]{5,})", re.M)
TIMEOUT_S = 3600


class Codeqa:
    """Runs `python -m codeqa` children with one environment: stub embeddings, index folder, codeqa root."""

    def __init__(self, codeqa_root: Path, index_dir: Path, base_url: str) -> None:
        drop = {"QDRANT_URL", "QDRANT_API_KEY", "CODEQA_QDRANT_URL", "CODEQA_EMBEDDING_ADAPTER"}
        self.root = codeqa_root
        self.env = {k: v for k, v in os.environ.items() if k not in drop}
        self.env.update({"HF_HUB_OFFLINE": "1", "CODEQA_EMBEDDINGS": "openai:stub-hash", "OPENAI_BASE_URL": base_url,
                         "OPENAI_API_KEY": "x", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
                         "CODEQA_INDEX_DIR": str(index_dir), "PYTHONPATH": str(codeqa_root)})

    def run(self, *args: str) -> tuple[str, float, float, float]:
        """(stdout, wall s, peak RSS MB of the codeqa process, of its largest child process) of one command."""
        t0 = time.perf_counter()  # cwd = the codeqa root: `-c` puts the cwd first on sys.path
        proc = subprocess.run([sys.executable, "-c", WRAPPER, *args], capture_output=True, text=True,
                              env=self.env, cwd=self.root, timeout=TIMEOUT_S)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"codeqa {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        peaks = next((line.split()[1:] for line in proc.stderr.splitlines() if line.startswith("PEAK_RSS_KB")), ["0", "0"])
        return proc.stdout, wall, int(peaks[0]) / 1024, int(peaks[1]) / 1024

    def stream(self, *args: str) -> tuple[list[float], float]:
        """(arrival time of each stdout line, wall s) of one command; times are from the process start."""
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "codeqa", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=self.env, cwd=self.root)
        assert proc.stdout is not None and proc.stderr is not None
        stamps = [time.perf_counter() - t0 for line in proc.stdout if line.strip()]
        err = proc.stderr.read()
        if proc.wait(timeout=TIMEOUT_S) != 0:
            raise SystemExit(f"codeqa {' '.join(args)} failed:\n{err[-4000:]}")
        return stamps, time.perf_counter() - t0


def disk_usage(folder: Path) -> tuple[int, int]:
    """(bytes on disk as du counts them, apparent bytes) of everything under `folder`."""
    used = apparent = 0
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            used, apparent = used + st.st_blocks * 512, apparent + st.st_size
    return used, apparent


def summary_json(stdout: str) -> dict[str, Any]:
    """The JSON object `index --json` printed, from its first line opening with "{" (notes may come before)."""
    lines = stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("{")), None)
    try:
        return dict(json.loads("\n".join(lines[start:]))) if start is not None else {}
    except ValueError:
        return {}


def sources(repo: Path) -> list[Path]:
    return sorted(p for p in repo.rglob("*.py") if not {".codeqa", ".git", "node_modules"} & set(p.parts))


def typical_file(repo: Path) -> Path:
    """The median-sized .py file outside test folders (or of all, when every file is a test)."""
    files = sources(repo)
    files = [p for p in files if not any(part.startswith("test") for part in p.relative_to(repo).parts)] or files
    return sorted(files, key=lambda p: (p.stat().st_size, p))[len(files) // 2]


def make_queries(repo: Path, count: int) -> list[str]:
    """Half identifiers defined in the sources (a seeded sample), half phrases, interleaved."""
    names = sorted({m for p in sources(repo) for m in IDENT.findall(p.read_text(encoding="utf-8", errors="replace"))})
    names = [n for n in names if not n.lower().startswith("test")]  # library names, as a user asks about
    rng = random.Random(0)
    idents = rng.sample(names, min(len(names), (count + 1) // 2))
    phrases = (PHRASES * (count // len(PHRASES) + 1))[:count - len(idents)]
    mixed = [q for pair in zip(idents, phrases) for q in pair] + idents[len(phrases):] + phrases[len(idents):]
    return mixed[:count]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure(repo: Path, codeqa: Codeqa, index_dir: Path, work: Path, n_queries: int, touch: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    probe = subprocess.run([sys.executable, "-c", "import codeqa; print(codeqa.__file__)"], capture_output=True,
                           text=True, env=codeqa.env, cwd=codeqa.root)
    out["codeqa_module"] = probe.stdout.strip()
    print(f"codeqa imported from {out['codeqa_module']}; index in {index_dir}", file=sys.stderr)

    stdout, wall, peak, child = codeqa.run("index", str(repo), "--full", "--json")
    summary = summary_json(stdout)
    used, apparent = disk_usage(index_dir)
    out["full"] = {"wall_s": wall, "peak_rss_mb": peak, "child_peak_rss_mb": child, "index_du_bytes": used,
                   "index_apparent_bytes": apparent, "summary": summary}
    print(f"full index {wall:.1f}s, peak RSS {peak:.0f} MB", file=sys.stderr)
    _, wall, peak, _ = codeqa.run("index", str(repo), "--json")
    out["noop"] = {"wall_s": wall, "peak_rss_mb": peak}
    print(f"no-change re-index {wall:.2f}s", file=sys.stderr)

    queries = make_queries(repo, n_queries)
    cold_query = queries[0]
    colds = [codeqa.run("search", cold_query, "--repo", str(repo), "--json") for _ in range(3)]
    out["cold_search"] = {"query": cold_query, "walls_s": [c[1] for c in colds],
                          "median_s": statistics.median(c[1] for c in colds), "peak_rss_mb": max(c[2] for c in colds),
                          "hits": len(json.loads(colds[0][0]))}
    print(f"cold search median {out['cold_search']['median_s']:.2f}s", file=sys.stderr)

    warmups = ["session", "connection pool"]
    qfile, empty = work / "queries.jsonl", work / "empty.jsonl"
    qfile.write_text("".join(json.dumps({"query": q}) + "\n" for q in warmups + queries), encoding="utf-8")
    empty.write_text("", encoding="utf-8")
    stamps, whole = codeqa.stream("search", "--queries-file", str(qfile), "--repo", str(repo))
    _, bare = codeqa.stream("search", "--queries-file", str(empty), "--repo", str(repo))
    if len(stamps) != len(warmups) + len(queries):
        raise SystemExit(f"--queries-file printed {len(stamps)} lines for {len(warmups) + len(queries)} queries")
    lat = [b - a for a, b in zip(stamps[len(warmups) - 1:], stamps[len(warmups):])]
    out["warm_search"] = {"queries": len(lat), "p50_s": percentile(lat, 0.5), "p95_s": percentile(lat, 0.95),
                          "max_s": max(lat), "mean_s": statistics.fmean(lat), "first_line_s": stamps[0],
                          "whole_run_s": whole, "empty_run_s": bare,
                          "mean_by_subtraction_s": (whole - bare) / (len(warmups) + len(queries)), "latencies_s": lat}
    print(f"warm search p50 {out['warm_search']['p50_s'] * 1000:.0f} ms", file=sys.stderr)

    target = repo / touch if touch else typical_file(repo)
    original = target.read_bytes()
    try:
        target.write_bytes(original + b"\n\ndef added_by_store_scale_benchmark():\n    return 1\n")
        stdout, wall, peak, child = codeqa.run("index", str(repo), "--json")
    finally:
        target.write_bytes(original)
    one = summary_json(stdout)
    out["one_file"] = {"path": str(target.relative_to(repo)), "wall_s": wall, "peak_rss_mb": peak,
                       "child_peak_rss_mb": child, "files_changed": one.get("files_changed")}
    print(f"one-file re-index {wall:.1f}s", file=sys.stderr)
    return out


def table(r: dict[str, Any]) -> str:
    s, f, w = r["full"]["summary"], r["full"], r["warm_search"]
    rows = [("full index", f"{f['wall_s']:.1f} s wall, peak RSS {f['peak_rss_mb']:.0f} MB "
                           f"(largest worker {f['child_peak_rss_mb']:.0f} MB)"),
            ("index size", f"{f['index_du_bytes'] / 1e6:.1f} MB on disk ({f['index_apparent_bytes'] / 1e6:.1f} MB apparent)"),
            ("indexed", ", ".join(f"{s[k]} {k}" for k in ("files", "chunks", "symbols", "references") if k in s) or "?"),
            ("no-change re-index", f"{r['noop']['wall_s']:.2f} s"),
            ("one-file re-index", f"{r['one_file']['wall_s']:.1f} s, peak RSS {r['one_file']['peak_rss_mb']:.0f} MB "
                                  f"({r['one_file']['path']}, {r['one_file']['files_changed']} file(s) re-done)"),
            ("cold search", f"{r['cold_search']['median_s']:.2f} s median of 3 "
                            f"({', '.join(f'{x:.2f}' for x in r['cold_search']['walls_s'])}), "
                            f"peak RSS {r['cold_search']['peak_rss_mb']:.0f} MB"),
            ("warm search", f"p50 {w['p50_s'] * 1e3:.1f} ms, p95 {w['p95_s'] * 1e3:.1f} ms, max {w['max_s'] * 1e3:.1f} ms "
                            f"over {w['queries']} queries (mean {w['mean_s'] * 1e3:.1f} ms; by subtraction "
                            f"{w['mean_by_subtraction_s'] * 1e3:.1f} ms)")]
    rows.append(("load average", f"{r['loadavg_before'][0]:.1f} before, {r['loadavg_after'][0]:.1f} after "
                                 f"(1 min; {r['cpus']} CPUs)"))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--index-dir", type=Path, help="index folder (default: a temporary one; rebuilt with --full)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--queries", type=int, default=30, help="warm-search queries (default 30)")
    parser.add_argument("--codeqa-root", type=Path, default=ROOT, help="checkout whose `codeqa` the children import")
    parser.add_argument("--touch", help="repo-relative .py file the one-file re-index changes (default: a median-sized one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeqa-scale-") as tmp, EmbedStub() as stub:
        work = Path(tmp)
        repo = work / args.repo.resolve().name
        shutil.copytree(args.repo, repo, ignore=shutil.ignore_patterns(".codeqa"), symlinks=True)
        index_dir = (args.index_dir or work / "index").resolve()
        codeqa = Codeqa(args.codeqa_root.resolve(), index_dir, stub.base_url)
        load_before = os.getloadavg()  # other work on the machine inflates every figure
        result = {"repo": str(args.repo.resolve()), "codeqa_root": str(codeqa.root), "cpus": os.cpu_count(),
                  **measure(repo, codeqa, index_dir, work, args.queries, args.touch),
                  "loadavg_before": load_before, "loadavg_after": os.getloadavg()}
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
