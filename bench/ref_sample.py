"""A seeded sample of one language's resolved reference sites in a project, printed for checking by hand.

Walks the project with codeqa, parses every file that may be in the language(s) given, keeps those
whose parse is in one of them (a header named .h with `@interface` is C by its extension, parsed as
Objective-C: the C row's `written_as`), resolves references over those files (as `codeqa index` does), prints the counts (files, symbols, references by confidence)
and then `--sample` references drawn with `--seed`: each with its source line and the first line of
every target it resolved to. Reading each one against the source gives the precision of a language's
references on a project nobody here wrote (queries/README.md: adding a language).

    python bench/ref_sample.py PROJECT_DIR --language lua [--language ...] [--sample 50] [--seed 0]

The script prints figures and sites; it asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.indexing.walk import walk_repository  # noqa: E402
from codeqa.indexing.graph import resolve_references  # noqa: E402
from codeqa.languages import language_by_name  # noqa: E402
from codeqa.indexing.parse import parse_source  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--language", action="append", required=True)
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    root = args.project.resolve()
    parsed, errors = [], 0
    wanted = set(args.language)
    for file in walk_repository(root).files:
        # the walker's language is the extension's; the parse may find another (written_as)
        row = language_by_name(file.language) if file.language else None
        if row is None or (row.name not in wanted and not wanted & {other for other, _ in row.written_as}):
            continue
        pf = parse_source(file, file.abs_path.read_text(encoding="utf-8", errors="replace"))[0]
        if pf.file.language in wanted:
            errors += pf.error is not None
            parsed.append(pf)
    resolved = resolve_references(parsed)
    symbols = {s.id: s for pf in parsed for s in pf.symbols}
    kinds = Counter(s.kind for s in symbols.values())
    print(f"{root.name}: {len(parsed)} files ({errors} with parse errors), {len(symbols)} symbols "
          f"{dict(kinds)}, {len(resolved)} references {dict(Counter(r.confidence for r in resolved))}")
    lines = {pf.file.path: pf.file.abs_path.read_text(encoding="utf-8", errors="replace").splitlines() for pf in parsed}
    sites = sorted(resolved, key=lambda r: (r.path, r.line, r.name))
    for n, ref in enumerate(random.Random(args.seed).sample(sites, min(args.sample, len(sites))), 1):
        print(f"\n{n}. {ref.path}:{ref.line} {ref.name} {ref.kind} {ref.confidence} receiver={ref.receiver}")
        print(f"   | {lines[ref.path][ref.line - 1].strip()[:160]}")
        for target in ref.target_ids:
            sym = symbols.get(target)
            if sym is not None:
                print(f"   -> {sym.path}:{sym.start_line} {sym.qualified_name}: "
                      f"{lines[sym.path][sym.start_line - 1].strip()[:120]}")


if __name__ == "__main__":
    main()
