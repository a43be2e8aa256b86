"""The graph stage alone on a big tree (issue 22: site-packages), with a parse cache that outlives the
run, so that resolution can be measured again without parsing again.

    python bench/graph_big.py TREE CACHE_DIR

The first run parses every file (in workers, as `codeqa index` does) into CACHE_DIR/parsed.sqlite;
later runs read the parses from there and only resolve. Prints progress (stage, done/total, RSS of
this process) every 30 s, then the stage's wall time, references and peak RSS. Nothing is stored.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.config import Settings  # noqa: E402
from codeqa.indexing.walk import walk_repository  # noqa: E402
from codeqa.indexing.graph.stage import graph_stage  # noqa: E402
from codeqa.indexing.parse_cache import ParseCache  # noqa: E402
from codeqa.indexing.parse_pool import parse_workers  # noqa: E402

FINGERPRINT = "bench-graph-big"


def _rss_mb() -> int:
    with open("/proc/self/status") as fh:
        return int(fh.read().split("VmRSS:")[1].split()[0]) // 1024


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tree, cache_dir = Path(sys.argv[1]), Path(sys.argv[2])
    cache_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    files = walk_repository(tree).files
    cache = ParseCache(cache_dir / "parsed.sqlite")
    cached = set(cache.get_many(files, FINGERPRINT, all_references=False))
    changed = [f for f in files if f.path not in cached]
    del cached
    print(f"walk: {len(files)} files, {len(changed)} to parse ({time.perf_counter() - started:.1f} s)", flush=True)
    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] > 30 or done == total:
            last[0] = now
            print(f"{now - started:7.1f} s  {stage} {done}/{total}  RSS {_rss_mb()} MB", flush=True)

    settings = Settings()
    t = time.perf_counter()
    with parse_workers(changed, settings) as pool:
        _, _, update = graph_stage(changed, files, settings, cache, FINGERPRINT, pool, progress,
                                   on_parsed=lambda batch: None)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"graph stage {time.perf_counter() - t:.1f} s; {len(update.references)} references; peak RSS {peak} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
