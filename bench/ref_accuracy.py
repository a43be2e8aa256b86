"""Python reference accuracy of the graph stage, measured against Jedi, plus the graph-stage speed.

For each project (in a fresh process): walk it with codeqa, parse every Python file and resolve
references (timed: files/s of parse + resolve by wall clock and by CPU time, best of --repeat runs
after a warm-up), sample top-level classes, top-level functions and public methods (name not
starting with `_`), seeded, and compare per symbol the (file, line) pairs where codeqa says the
symbol is referenced (a reference counts for every id in its target_ids) with Jedi's
`Script(code, path, project=jedi.Project(root)).get_references(line, column, scope="project")`
called at the definition's name.

How the two sides are made comparable (one rule each, the same for every project):
  - import lines count on both sides (`from .core import Foo` is a reference of Foo: Jedi reports
    the imported name, codeqa records an import reference);
  - a definition is no reference: Jedi's results that are definitions (not imports) are the
    symbol's identity, left out on both sides: its own site, and what Jedi merges with it
    (overloads, a property's setter, a stub and its code);
  - only files codeqa walks are compared (Jedi also reads files codeqa's walker skips).
Jedi is the truth only where it is sure; disagreements are settled with Jedi's own
`goto(follow_imports=True)` at the name:
  - a pair both report is a true reference;
  - a pair only codeqa reports: goto lands on the identity only -> true (Jedi's search gives up
    after 30 files holding the name, and never looks for names of <= 2 characters in other files);
    only elsewhere -> false positive; nowhere, both there and elsewhere, in an installed copy of one
    of the project's own modules (site-packages shadowing a src/ layout), or on `self.name = ...`
    assignments where the symbol is a property (Jedi reads those as instance attributes, not as the
    property's setter) -> unsure, left out;
  - a pair only Jedi reports: goto lands on the identity only -> false negative; otherwise Jedi
    contradicts itself (its search merges anything a union-typed call may reach) -> unsure.
The raw figures (get_references as is, no goto) are printed too. `--own-code-first` gives Jedi the
project's import roots and the standard library as sys.path, so that an installed copy of the
project (a src/ layout in this venv) does not take the project's own references away.

    python bench/ref_accuracy.py PROJECT_DIR [PROJECT_DIR ...] [--max-symbols 150] [--seed 0]
        [--repeat 3] [--own-code-first] [--show-errors [K]] [--json OUT.json]

Get projects as sdists, e.g. `pip download --no-binary :all: --no-deps click==8.1.7 -d /tmp/sdists`.
The script prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.indexing.walk import walk_repository  # noqa: E402
from codeqa.indexing.graph import resolve_references  # noqa: E402
from codeqa.indexing.parse import parse_source  # noqa: E402
from codeqa.types import ParsedFile, Reference, Symbol  # noqa: E402

Pair = tuple[str, int]  # (path relative to the project, 1-based line)


@dataclass
class Outcome:
    """Per-project tallies over (symbol, file, line) pairs."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    unsure: int = 0
    confirmed_by_goto: int = 0
    raw_both: int = 0
    raw_codeqa: int = 0
    raw_jedi: int = 0
    jedi_definitions_dropped: int = 0
    jedi_unsure: int = 0  # pairs Jedi reports but its own goto does not land on the symbol alone
    unsure_reasons: Counter = field(default_factory=Counter)  # codeqa-only pairs left out, by why
    unsure_examples: list[dict] = field(default_factory=list)
    by_confidence: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))  # -> [tp, fp]
    false_positives: list[dict] = field(default_factory=list)
    false_negatives: list[dict] = field(default_factory=list)

    def figures(self) -> dict:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        raw_p = self.raw_both / self.raw_codeqa if self.raw_codeqa else 1.0
        raw_r = self.raw_both / self.raw_jedi if self.raw_jedi else 1.0
        return {"precision": precision, "recall": recall, "f1": f1, "raw_precision": raw_p, "raw_recall": raw_r}


def graph_stage(root: Path, repeat: int) -> tuple[list[ParsedFile], list[Reference], int, float, float, int]:
    """(parsed files, resolved references, python file count, files/s by wall clock, files/s by CPU time,
    lines of Python):
    parse + resolve in this process, after one untimed run (grammar load, query compilation), the best
    of `repeat` runs. CPU time is what the stage costs; wall clock also shows how busy the machine is."""
    files = [f for f in walk_repository(root).files if f.language == "python"]
    texts = [f.abs_path.read_text(encoding="utf-8") for f in files]
    parsed = [parse_source(f, t)[0] for f, t in zip(files, texts)]
    references = resolve_references(parsed)
    wall = cpu = float("inf")
    for _ in range(max(1, repeat)):
        started, started_cpu = time.perf_counter(), time.process_time()
        parsed = [parse_source(f, t)[0] for f, t in zip(files, texts)]
        references = resolve_references(parsed)
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    return parsed, references, len(files), len(files) / wall, len(files) / cpu, sum(t.count("\n") for t in texts)


def sample_symbols(parsed: list[ParsedFile], max_symbols: int, seed: int) -> list[Symbol]:
    """Top-level classes and functions, and methods whose name does not start with `_`."""
    candidates = [
        s for pf in parsed for s in pf.symbols
        if (s.parent_id is None and s.kind in ("class", "function")) or (s.kind == "method" and not s.name.startswith("_"))
    ]
    candidates.sort(key=lambda s: s.id)
    if len(candidates) > max_symbols:
        candidates = random.Random(seed).sample(candidates, max_symbols)
    return sorted(candidates, key=lambda s: s.id)


class JediOracle:
    """Jedi Scripts over one project, one per file, reused across questions."""

    def __init__(self, root: Path, walked: set[str], module_names: set[str], own_code_first: bool = False):
        import jedi

        self.root = root.resolve()
        if own_code_first:  # the project's folders ahead of installed copies; the standard library only
            outside = [p for p in jedi.get_default_environment().get_sys_path() if "-packages" not in p]
            self.project = jedi.Project(self.root, sys_path=_import_roots(self.root, walked) + outside)
        else:
            self.project = jedi.Project(self.root)
        self.walked = walked
        self.module_names = module_names
        self._scripts: dict[str, object] = {}
        self._lines: dict[str, list[str]] = {}

    def script(self, rel: str):
        import jedi

        if rel not in self._scripts:
            path = self.root / rel
            code = path.read_text(encoding="utf-8")
            self._lines[rel] = code.splitlines()
            self._scripts[rel] = jedi.Script(code, path=path, project=self.project)
        return self._scripts[rel]

    def line_text(self, rel: str, line: int) -> str:
        self.script(rel)
        lines = self._lines[rel]
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    def name_position(self, symbol: Symbol) -> tuple[int, int] | None:
        self.script(symbol.path)
        pattern = re.compile(r"\b(?:class|def)\s+(" + re.escape(symbol.name) + r")\b")
        lines = self._lines[symbol.path]
        for line in range(symbol.start_line, min(symbol.start_line + 3, len(lines) + 1)):
            found = pattern.search(lines[line - 1])
            if found:
                return line, found.start(1)
        return None

    def relative(self, module_path) -> str | None:
        if module_path is None:
            return None
        try:
            return Path(module_path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def references(self, symbol: Symbol, position: tuple[int, int], outcome: Outcome):
        """(Jedi's reference pairs -> a name position, the symbol's identity) or None when Jedi fails.
        The identity is the definition site plus the other definitions Jedi counts as the same thing
        (overloads, a property's setter, a stub and its code): they are no references."""
        pairs: dict[Pair, tuple[int, int]] = {}
        identity: set[Pair] = {(symbol.path, position[0])}
        try:
            names = self.script(symbol.path).get_references(*position, scope="project")
        except Exception:  # Jedi gives up on some code (recursion): no truth for this symbol
            return None
        for name in names:
            rel = self.relative(name.module_path)
            if rel is None or rel not in self.walked:
                continue
            if name.is_definition() and not _is_import(name):
                identity.add((rel, name.line))
                outcome.jedi_definitions_dropped += (rel, name.line) != (symbol.path, position[0])
                continue
            pairs.setdefault((rel, name.line), (name.line, name.column))
        for pair in identity:
            pairs.pop(pair, None)
        return pairs, identity

    def _assigns_attribute(self, name, attribute: str) -> bool:
        rel = self.relative(name.module_path)
        if rel is None or rel not in self.walked or not name.is_definition():
            return False
        pattern = r"\.\s*" + re.escape(attribute) + r"\s*(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)"
        return re.search(pattern, self.line_text(rel, name.line)) is not None

    def verdict(self, identity: set[Pair], path: str, line: int, column: int, name: str = "") -> str:
        """Jedi's goto at one name: "same" (lands on the symbol's identity only), "mixed" (there and
        elsewhere), "other" (elsewhere only) or "unsure: <why>" (nowhere, in an installed copy of the
        project, on instance-attribute assignments where the symbol is a property)."""
        try:
            names = self.script(path).goto(line, column, follow_imports=True)
        except Exception:  # Jedi fails on some code (recursion): then it is not sure
            return "unsure: goto failed"
        if not names:
            return "unsure: no answer"
        inside = [self.relative(n.module_path) is not None for n in names]
        hits = [(self.relative(n.module_path), n.line) in identity for n in names]
        if all(hits):
            return "same"
        if any(hits):
            return "mixed"
        if name and all(self._assigns_attribute(n, name) for n in names):
            return "unsure: property read as instance attribute"  # `self.name = ...` taken for the attribute

        outside = [n for n, ours in zip(names, inside) if not ours]
        if outside and len(outside) == len(names) and any(n.module_name in self.module_names for n in outside):
            return "unsure: installed copy"  # an installed copy of the project's own module shadows it
        return "other"


def _is_import(name) -> bool:
    tree_name = getattr(name, "_name", None)
    tree_name = getattr(tree_name, "tree_name", None)
    if tree_name is None:
        return False
    definition = tree_name.get_definition(import_name_always=True)
    return definition is not None and definition.type in ("import_from", "import_name")


def _import_roots(root: Path, walked: set[str]) -> list[str]:
    """Folders a project's top-level packages and modules are imported from (root, src/, ...)."""
    packages = {str(Path(p).parent) for p in walked if Path(p).stem == "__init__"}
    roots = {"."}
    for package in packages:
        parent = str(Path(package).parent)
        if parent not in packages:
            roots.add(parent)
    return [str((root / r).resolve()) for r in sorted(roots)]


def project_module_names(paths: list[str]) -> set[str]:
    """Dotted names a project's files could be imported as (`src/pkg/mod.py` -> pkg.mod, mod, ...)."""
    names = set()
    for path in paths:
        parts = re.sub(r"\.pyi?$", "", path).split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.update(".".join(parts[i:]) for i in range(len(parts)))
    return names


def measure(root: Path, max_symbols: int, seed: int, repeat: int, own_code_first: bool = False) -> dict:
    parsed, references, n_files, files_per_second, files_per_cpu_second, n_lines = graph_stage(root, repeat)
    symbols = sample_symbols(parsed, max_symbols, seed)
    by_target: dict[str, dict[Pair, list[Reference]]] = defaultdict(lambda: defaultdict(list))
    for ref in references:
        for target in ref.target_ids:
            by_target[target][(ref.path, ref.line)].append(ref)
    walked = {pf.file.path for pf in parsed}
    oracle = JediOracle(root, walked, project_module_names(sorted(walked)), own_code_first)
    outcome = Outcome()
    started = time.perf_counter()
    skipped = jedi_failed = 0
    for symbol in symbols:
        position = oracle.name_position(symbol)
        if position is None:
            skipped += 1
            continue
        answer = oracle.references(symbol, position, outcome)
        if answer is None:
            jedi_failed += 1
            continue
        jedi_pairs, identity = answer
        codeqa_pairs = {p: refs for p, refs in by_target.get(symbol.id, {}).items() if p not in identity}
        agreed = jedi_pairs.keys() & codeqa_pairs.keys()
        outcome.raw_codeqa += len(codeqa_pairs)
        outcome.raw_jedi += len(jedi_pairs)
        outcome.raw_both += len(agreed)
        outcome.tp += len(agreed)
        for pair in sorted(codeqa_pairs.keys() - jedi_pairs.keys()):
            refs = codeqa_pairs[pair]
            verdicts = {oracle.verdict(identity, ref.path, ref.line, ref.column, symbol.name) for ref in refs}
            if "same" in verdicts:
                outcome.tp += 1
                outcome.confirmed_by_goto += 1
                outcome.by_confidence[refs[0].confidence][0] += 1
            elif verdicts == {"other"}:
                outcome.fp += 1
                outcome.by_confidence[refs[0].confidence][1] += 1
                outcome.false_positives.append(_example(symbol, pair, oracle, refs[0].confidence, refs[0].kind))
            else:
                outcome.unsure += 1
                why = "mixed" if "mixed" in verdicts else sorted(verdicts)[0]
                outcome.unsure_reasons[why] += 1
                if len(outcome.unsure_examples) < 200:
                    outcome.unsure_examples.append({**_example(symbol, pair, oracle, refs[0].confidence, refs[0].kind), "why": why})
        for pair in agreed:
            outcome.by_confidence[codeqa_pairs[pair][0].confidence][0] += 1
        for pair in sorted(jedi_pairs.keys() - codeqa_pairs.keys()):
            if oracle.verdict(identity, pair[0], *jedi_pairs[pair], symbol.name) == "same":
                outcome.fn += 1
                outcome.false_negatives.append(_example(symbol, pair, oracle))
            else:
                outcome.unsure += 1
                outcome.jedi_unsure += 1
    return {
        "project": root.name, "files": n_files, "graph_files_per_second": round(files_per_second, 1),
        "graph_files_per_cpu_second": round(files_per_cpu_second, 1), "lines": n_lines,
        "symbols_sampled": len(symbols) - skipped - jedi_failed, "jedi_failed": jedi_failed, "jedi_seconds": round(time.perf_counter() - started, 1),
        "tp": outcome.tp, "fp": outcome.fp, "fn": outcome.fn, "unsure": outcome.unsure,
        "confirmed_by_goto": outcome.confirmed_by_goto, "jedi_definitions_dropped": outcome.jedi_definitions_dropped,
        "jedi_unsure": outcome.jedi_unsure, "unsure_reasons": dict(outcome.unsure_reasons),
        "unsure_examples": outcome.unsure_examples, "by_confidence": {k: {"tp": v[0], "fp": v[1]} for k, v in sorted(outcome.by_confidence.items())},
        **{k: round(v, 4) for k, v in outcome.figures().items()},
        "false_positives": outcome.false_positives, "false_negatives": outcome.false_negatives,
    }


def _example(symbol: Symbol, pair: Pair, oracle: JediOracle, confidence: str = "", kind: str = "") -> dict:
    return {"symbol": symbol.qualified_name, "definition": f"{symbol.path}:{symbol.start_line}",
            "at": f"{pair[0]}:{pair[1]}", "text": oracle.line_text(*pair), "confidence": confidence, "kind": kind}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("projects", nargs="+", type=Path)
    parser.add_argument("--max-symbols", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="graph-stage runs; the best one is reported")
    parser.add_argument("--show-errors", type=int, nargs="?", const=10, default=0, metavar="K")
    parser.add_argument("--own-code-first", action="store_true",
                        help="give Jedi a sys.path of the project's import roots and the standard library only, "
                             "so installed copies of the project do not shadow it")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    for project in args.projects:
        # a fresh process per project: Jedi's caches from one project make it fail on the next
        with context.Pool(1) as pool:
            r = pool.apply(measure, (project, args.max_symbols, args.seed, args.repeat, args.own_code_first))
        results.append(r)
        print(f"{r['project']}: {r['files']} files ({r['lines'] / 1000:.1f}k lines), {r['symbols_sampled']} symbols | precision {r['precision']:.3f} "
              f"recall {r['recall']:.3f} F1 {r['f1']:.3f} | tp {r['tp']} fp {r['fp']} fn {r['fn']} unsure {r['unsure']} "
              f"jedi-failed {r['jedi_failed']} "
              f"(goto-confirmed {r['confirmed_by_goto']}) | raw precision {r['raw_precision']:.3f} recall "
              f"{r['raw_recall']:.3f} | graph {r['graph_files_per_second']:.0f} files/s wall, "
              f"{r['graph_files_per_cpu_second']:.0f} files/s CPU | jedi {r['jedi_seconds']:.0f}s",
              flush=True)
        print("  by confidence (tp/fp): " + ", ".join(f"{k} {v['tp']}/{v['fp']}" for k, v in r["by_confidence"].items())
              + f" | codeqa pairs left out: {r['unsure_reasons']} | jedi pairs left out {r['jedi_unsure']}")
        if args.show_errors:
            for label, key in (("false positives", "false_positives"), ("false negatives", "false_negatives")):
                examples = r[key][: args.show_errors]
                if examples:
                    print(f"  {label} ({len(r[key])}):")
                for e in examples:
                    print(f"    {e['symbol']} ({e['definition']}) at {e['at']} {e['kind']} {e['confidence']}: {e['text']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
