"""A scripted coding-agent session against `codeqa mcp --watch`, as an agent meets it: the server is a
real child process over stdio, driven by the MCP SDK's own client, with the bundled embedding model
(HF_HUB_OFFLINE=1), while a second process holds the same index open as a reader (the UI's situation).

Steps, on a copy of REPO in a temporary folder (the input is never modified; CODEQA_INDEX_DIR is a
temporary folder too):
  1. `python -m codeqa index COPY` (wall time, model load included).
  2. A reader process (`Retriever.open` + one search, then idle) starts; then the session: list the
     tools, a first search_code (opens the index and loads the model: reported apart), then N rounds
     of each read tool with arguments taken from the repository: identifiers and docstring lines of
     its sources for search_code, names its sources define for find_symbol / find_references, paths
     and line ranges of earlier hits for read_code, three kinds of question for ask (extractive: no
     LLM is configured). Per tool: p50/p95 latency (ms, client-side round trip) and the size of a
     result: UTF-8 bytes of the text content (median, max, calls over 4 KB), ~tokens (= chars / 4, a
     rough rule, not a tokenizer: tiktoken downloads its encodings at run time, which this machine
     cannot), bytes of the structured content as JSON (median, max).
  3. Live sync: a uniquely named function is appended to one .py file, and search_code is polled
     every 0.25 s until a hit names it: seconds from save to findable, 3 times on different files
     (then one find_symbol for it: whether the symbol graph agrees, reported apart).
  4. With a server that pages (find_references has `offset`): find_references of the most used name,
     paged from offset 0 until next_offset is null, must list every site once, as many as its total.
  5. Every call must succeed (isError false) and the reader must still be alive at the end.

--sizes-only skips the reader process and step 3 (what the answers' sizes need: no --watch);
--defer-embeddings indexes phase 1 only (keywords and the graph; no full embed of a big project);
--codeqa DIR runs another checkout's codeqa (a worktree of main as "before"), with this script's calls.

    python bench/mcp_session.py REPO [--json OUT] [--rounds N] [--sizes-only] [--defer-embeddings] [--codeqa DIR]
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
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
READER = ("import sys, time\nfrom pathlib import Path\nfrom codeqa.config import Settings\nfrom codeqa.query.retrieve import Retriever\n"
          "r = Retriever.open(Path(sys.argv[1]), Settings.load())\nr.search('how is the configuration read')\n"
          "print('READY', flush=True)\nwhile True:\n    time.sleep(60)\n")
DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z]\w{3,})", re.M)
TOP_CLASS = re.compile(r"^class[ \t]+([A-Za-z]\w{3,})", re.M)
DOC_LINE = re.compile(r'^[ \t]+(?:r|u)?"""([A-Z][^"\n]{20,90}?)\.?\s*$', re.M)
PHRASES = ["how are errors handled", "where is the configuration loaded", "read a file from disk",
           "validate the input arguments", "format a message for the user", "close open resources on exit"]
QUESTIONS = ["How is {} used?", "What does {} do?", "Where is {} defined and what calls it?"]
POLL_S, WATCH_LIMIT_S = 0.25, 120.0


class Session:
    """The client plus every call's figures; a failed call is recorded, never raised."""

    def __init__(self, client: Client):
        self.client = client
        self.calls: dict[str, list[dict[str, float]]] = {}
        self.failures: list[str] = []

    async def call(self, tool: str, record: str | None = None, **arguments: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        result = await self.client.call_tool(tool, arguments)
        ms = (time.perf_counter() - t0) * 1000
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            self.failures.append(f"{tool}({arguments}): {text[:200]}")
        structured = result.structured_content or {}
        self.calls.setdefault(record or tool, []).append(
            {"ms": ms, "chars": len(text), "bytes": len(text.encode()),
             "json_bytes": len(json.dumps(structured, ensure_ascii=False).encode())})
        return structured


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def figures(calls: list[dict[str, float]]) -> dict[str, float]:
    ms = [c["ms"] for c in calls]
    return {"calls": len(calls), "p50_ms": pct(ms, 0.5), "p95_ms": pct(ms, 0.95),
            "median_chars": statistics.median(c["chars"] for c in calls), "max_chars": max(c["chars"] for c in calls),
            "median_bytes": statistics.median(c["bytes"] for c in calls), "max_bytes": max(c["bytes"] for c in calls),
            "over_4k": sum(c["bytes"] > 4096 for c in calls),
            "median_json_bytes": statistics.median(c["json_bytes"] for c in calls),
            "max_json_bytes": max(c["json_bytes"] for c in calls)}


def codeqa_env(index_dir: Path, checkout: Path = ROOT) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CODEQA_EMBEDDINGS", "QDRANT_URL", "CODEQA_MODEL")}
    return {**env, "HF_HUB_OFFLINE": "1", "CODEQA_INDEX_DIR": str(index_dir),
            "PYTHONPATH": os.pathsep.join(p for p in (str(checkout), os.environ.get("PYTHONPATH")) if p)}


def sources(repo: Path) -> dict[str, str]:
    return {p.relative_to(repo).as_posix(): p.read_text(errors="replace") for p in sorted(repo.rglob("*.py"))
            if not any(part.startswith(".") for part in p.relative_to(repo).parts)}


def pick_arguments(texts: dict[str, str], rng: random.Random, n: int) -> tuple[list[str], list[str]]:
    """(symbol names, search queries): public names defined in the sources and used at least 3 times, the
    most used top-level class first (the central class an agent asks about: the biggest answers); half the queries
    are identifiers, half natural language (docstring first lines and common phrases)."""
    words = Counter(re.findall(r"\w+", "\n".join(texts.values())))
    defined = sorted({m for t in texts.values() for m in DEFINED.findall(t) if not m.startswith("_") and words[m] >= 3})
    classes = {m for t in texts.values() for m in TOP_CLASS.findall(t) if words[m] >= 3}
    busiest = max(classes or defined, key=lambda m: (words[m], m)) if defined else None
    symbols = [busiest, *(m for m in rng.sample(defined, min(len(defined), max(n, 3))) if m != busiest)][:max(n, 3)]
    docs = sorted({m.strip() for t in texts.values() for m in DOC_LINE.findall(t)})
    half = max(n // 2, 2)
    prose = rng.sample(docs, min(len(docs), half - half // 2)) + rng.sample(PHRASES, min(len(PHRASES), half // 2))
    rng.shuffle(prose)
    if not defined or not prose:
        raise SystemExit("no Python definitions or docstrings found to take arguments from")
    queries = [q for pair in zip(rng.sample(defined, min(len(defined), n)), prose) for q in pair]
    return symbols, queries[:n]


async def session(args: argparse.Namespace, copy: Path, env: dict[str, str], errlog: Any, out: dict[str, Any]) -> Session:
    rng = random.Random(7)
    texts = sources(copy)
    symbols, queries = pick_arguments(texts, rng, args.rounds)
    out["arguments"] = {"symbols": symbols, "queries": queries}
    watching = [] if args.sizes_only else ["--watch"]
    params = StdioServerParameters(command=sys.executable, args=["-m", "codeqa", "mcp", "--repo", str(copy), *watching],
                                   env=env, cwd=str(args.codeqa))
    t0 = time.perf_counter()
    async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=300) as client:
        out["connect_ms"] = (time.perf_counter() - t0) * 1000
        s = Session(client)
        t0 = time.perf_counter()
        listed = (await client.list_tools()).tools
        out["tools"] = sorted(t.name for t in listed)
        tool_schema = {t.name: t.input_schema.get("properties", {}) for t in listed}
        out["list_tools_ms"] = (time.perf_counter() - t0) * 1000
        first = await s.call("search_code", record="search_code (first: opens index, loads model)", query=queries[0])
        spans = [(h["path"], h["start_line"], h["end_line"]) for h in first.get("hits", [])]
        for i in range(args.rounds):
            found = await s.call("search_code", query=queries[i % len(queries)], limit=rng.choice([5, 10, 10, 20]))
            spans += [(h["path"], h["start_line"], h["end_line"]) for h in found.get("hits", [])]
            await s.call("find_symbol", name=symbols[i % len(symbols)])
            await s.call("find_references", symbol=symbols[i % len(symbols)])
            path, start, end = rng.choice(spans)
            ranges = [(start, end), (max(1, start - 20), end + 20), (1, None)]  # the hit, with context, the file's head
            lo, hi = ranges[i % 3]
            await s.call("read_code", path=path, start_line=lo, **({"end_line": hi} if hi else {}))
            await s.call("index_status")
            await s.call("ask", question=QUESTIONS[i % 3].format(symbols[i % len(symbols)]))
        if "offset" in tool_schema["find_references"]:
            out["paging"] = await page_through(s, symbols[0])
        out["watch"] = [] if args.sizes_only else await watch(s, copy, sorted({p for p, _, _ in spans if p.endswith(".py")}), rng)
    return s


async def page_through(s: Session, symbol: str) -> dict[str, Any]:
    """find_references of `symbol` from offset 0 until next_offset is null: every site once, as many as total?"""
    sites: list[tuple[str, int, int]] = []
    offset: int | None = 0
    pages = total = 0
    while offset is not None:
        page = await s.call("find_references", record="find_references (paging)", symbol=symbol, offset=offset)
        total, pages, offset = page["total"], pages + 1, page["page"]["next_offset"]
        sites += [(path, r["line"], r["column"]) for path, found in page["files"].items() for r in found]
    return {"symbol": symbol, "total": total, "pages": pages, "sites": len(sites), "distinct": len(set(sites))}


async def watch(s: Session, copy: Path, indexed: list[str], rng: random.Random) -> list[dict[str, Any]]:
    """Append a new function to 3 indexed .py files in turn; poll search_code until a hit names it."""
    runs: list[dict[str, Any]] = []
    for i, rel in enumerate(rng.sample(indexed, min(3, len(indexed)))):
        name = f"bench_probe_{i}_{rng.randrange(16 ** 6):06x}"
        code = f'\n\ndef {name}(value):\n    """Bench probe {i}: the value, doubled."""\n    return value * 2\n'
        with open(copy / rel, "a") as f:
            f.write(code)
        saved, polls, seconds = time.perf_counter(), 0, None
        while time.perf_counter() - saved < WATCH_LIMIT_S:
            polls += 1
            found = await s.call("search_code", record="search_code (watch polls)", query=name, limit=5)
            if any(h["symbol"] == name for h in found.get("hits", [])):
                seconds = time.perf_counter() - saved
                break
            await anyio.sleep(POLL_S)
        graph_ok = None
        if seconds is not None:  # the symbol graph right after: a probe, reported, not counted as a failed call
            probe = await s.client.call_tool("find_symbol", {"name": name})
            graph_ok = not probe.is_error
        runs.append({"file": rel, "function": name, "seconds_to_findable": seconds, "polls": polls,
                     "find_symbol_right_after": graph_ok})
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--sizes-only", action="store_true", help="no reader process, no --watch and no live-sync step")
    parser.add_argument("--defer-embeddings", action="store_true", help="index phase 1 only (keywords and the graph)")
    parser.add_argument("--codeqa", type=Path, default=ROOT, help="the checkout whose codeqa runs (default: this one)")
    args = parser.parse_args()
    args.codeqa = args.codeqa.resolve()
    out: dict[str, Any] = {"repo": str(args.repo.resolve()), "rounds": args.rounds, "codeqa": str(args.codeqa),
                           "loadavg_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="codeqa-mcpbench-") as tmp:
        copy = Path(tmp) / args.repo.resolve().name
        shutil.copytree(args.repo, copy, ignore=shutil.ignore_patterns(".codeqa", ".git"))
        env = codeqa_env(Path(tmp) / "index", args.codeqa)
        t0 = time.perf_counter()
        deferred = ["--defer-embeddings"] if args.defer_embeddings else []
        done = subprocess.run([sys.executable, "-m", "codeqa", "index", str(copy), "--json", *deferred], env=env,
                              capture_output=True, text=True, cwd=args.codeqa)
        out["index_seconds"] = time.perf_counter() - t0
        if done.returncode:
            raise SystemExit(done.stderr)
        out["index"] = {k: v for k, v in json.loads(done.stdout).items() if isinstance(v, (int, float, str, bool))}
        reader = None if args.sizes_only else subprocess.Popen(
            [sys.executable, "-c", READER, str(copy)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=args.codeqa)
        try:
            t0 = time.perf_counter()
            if reader and (not reader.stdout or reader.stdout.readline().strip() != "READY"):
                raise SystemExit(f"the reader process did not start: {reader.stderr and reader.stderr.read()}")
            out["reader_ready_seconds"] = time.perf_counter() - t0 if reader else None
            with open(Path(tmp) / "server.log", "w+") as errlog:
                s = anyio.run(session, args, copy, env, errlog, out)
                errlog.seek(0)
                out["server_stderr"] = errlog.read().splitlines()[-20:]
            out["reader_alive"] = reader is None or reader.poll() is None
        finally:
            if reader:
                reader.kill()
                reader.wait()
    out["loadavg_after"] = os.getloadavg()
    pg = out.get("paging")
    if pg and not pg["sites"] == pg["distinct"] == pg["total"]:
        s.failures.append(f"paging through find_references({pg['symbol']!r}) did not return every site once: {pg}")
    out["failures"] = s.failures
    out["tools_figures"] = {tool: figures(calls) for tool, calls in s.calls.items()}
    report(out)
    if args.json:
        args.json.write_text(json.dumps({**out, "calls": s.calls}, indent=2))
    watch_ok = all(w["seconds_to_findable"] is not None for w in out["watch"])

    if s.failures or not out["reader_alive"] or not watch_ok:
        raise SystemExit(f"FAILED: {len(s.failures)} failed call(s), reader alive {out['reader_alive']}, watch ok {watch_ok}")


def report(out: dict[str, Any]) -> None:
    ix = out["index"]
    ready = f"{out['reader_ready_seconds']:.1f}s" if out["reader_ready_seconds"] is not None else "- (--sizes-only)"
    print(f"{out['repo']} with {out['codeqa']}: index {out['index_seconds']:.1f}s wall ({ix.get('files')} files, "
          f"{ix.get('chunks')} chunks, {ix.get('symbols')} symbols); reader ready in {ready}; "
          f"server connect {out['connect_ms']:.0f} ms, list_tools {out['list_tools_ms']:.0f} ms ({len(out['tools'])} tools)")
    print(f"{'tool':<46}{'calls':>6}{'p50 ms':>9}{'p95 ms':>9}{'bytes':>8}{'~tokens':>8}{'max B':>8}{'>4KB':>5}"
          f"{'json B':>8}{'max json':>9}")
    for tool, f in out["tools_figures"].items():
        print(f"{tool:<46}{f['calls']:>6}{f['p50_ms']:>9.0f}{f['p95_ms']:>9.0f}{f['median_bytes']:>8.0f}"
              f"{f['median_chars'] / 4:>8.0f}{f['max_bytes']:>8}{f['over_4k']:>5}{f['median_json_bytes']:>8.0f}"
              f"{f['max_json_bytes']:>9}")
    print("(bytes of the text content (UTF-8), ~tokens = its chars/4, json B = the structured content as JSON: medians "
          "per call; max B / max json: the largest call; >4KB: calls whose text is over 4096 bytes)")
    for w in out["watch"]:
        took = f"{w['seconds_to_findable']:.2f}s" if w["seconds_to_findable"] is not None else "NOT FOUND"
        graph = {True: "ok", False: "NOT FOUND (stale symbol cache?)", None: "-"}[w["find_symbol_right_after"]]
        print(f"watch: {w['function']} appended to {w['file']}: search_code finds it after {took} ({w['polls']} polls); "
              f"find_symbol right after: {graph}")
    if "paging" in out:
        pg = out["paging"]
        print(f"paging: find_references({pg['symbol']!r}) in {pg['pages']} pages: {pg['sites']} sites, {pg['distinct']} "
              f"distinct, total {pg['total']}: {'every site once' if pg['sites'] == pg['distinct'] == pg['total'] else 'MISMATCH'}")
    print("server:", "; ".join(line for line in out["server_stderr"] if line.startswith("codeqa watch")) or "-")
    print(f"failures: {len(out['failures'])}; reader alive at the end: {out['reader_alive']}; "
          f"load {out['loadavg_before'][0]:.2f} before, {out['loadavg_after'][0]:.2f} after")
    for failure in out["failures"]:
        print("  FAILED", failure)


if __name__ == "__main__":
    main()
