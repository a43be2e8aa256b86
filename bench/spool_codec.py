"""The store writer's spool codec (indexing/writer.py: pack / unpack) on a real tree: time and size.

    python bench/spool_codec.py REPO [--files 400] [--rounds 5] [--codeqa PATH]

Parses and chunks up to --files source files of REPO in this process (as a parse worker does), then
packs every file's record (what a worker does before handing it over) and unpacks it (what the writer
process does before storing it), best of --rounds. Prints chunks, symbols, packed bytes, and the
milliseconds per 1,000 chunks for each side. --codeqa runs another checkout's codec on the same
files (e.g. an export of the commit before a codec change: `git archive COMMIT | tar -x -C DIR`),
for a before/after on one machine and one sample.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--codeqa", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    sys.path.insert(0, str(args.codeqa))

    from codeqa.indexing import writer as store_writer
    from codeqa.config import Settings
    from codeqa.indexing.walk import walk_repository
    from codeqa.indexing.parse_pool import _parse_and_chunk

    unpack = getattr(store_writer, "unpack", None) or store_writer._unpack  # the name before the JSON codec
    settings = Settings.load(env={})
    files = [f for f in walk_repository(args.repo, settings.files_max_bytes).files if f.language][:args.files]
    parsed = [_parse_and_chunk((f, settings.chunk_max_chars, settings.chunk_min_chars)) for f in files]
    chunks = sum(len(cs) for _, cs in parsed)
    symbols = sum(len(pf.symbols) for pf, _ in parsed)
    pack_s = unpack_s = float("inf")
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        packed = [store_writer.pack(pf, cs) for pf, cs in parsed]
        t1 = time.perf_counter()
        back = [unpack(p) for p in packed]
        t2 = time.perf_counter()
        pack_s, unpack_s = min(pack_s, t1 - t0), min(unpack_s, t2 - t1)
    assert [cs for _, cs in back] == [cs for _, cs in parsed], "the codec does not give the chunks back"
    assert [pf.symbols for pf, _ in back] == [pf.symbols for pf, _ in parsed], "nor the symbols"
    size = sum(len(p) for p in packed)
    text = sum(len(c.text.encode("utf-8")) for _, cs in parsed for c in cs)
    print(f"codec: {store_writer.__file__}")
    print(f"{len(files)} files, {chunks} chunks, {symbols} symbols, chunk text {text / 1e6:.2f} MB")
    print(f"packed: {size / 1e6:.2f} MB ({size / chunks:.0f} B/chunk)")
    print(f"pack:   {pack_s * 1000:.1f} ms ({pack_s * 1e6 / chunks:.1f} ms per 1,000 chunks)")
    print(f"unpack: {unpack_s * 1000:.1f} ms ({unpack_s * 1e6 / chunks:.1f} ms per 1,000 chunks)")


if __name__ == "__main__":
    main()
