"""The examples of issue 20's "Why", each a pass/fail check on `codeqa ask QUESTION --no-llm --json`.

click 8.1.7
  echo-output   "How is the echo function used to print output?" leads with click.echo: the first
                citation covers `def echo` in src/click/utils.py.
  echo-public   "How is echo used?" leads with the public click.echo, not testing.EchoingStdin._echo.
  invoke-of     "Who calls the invoke method of Command?": the first citation covers Command.invoke,
                and no citation covers a Context.invoke definition (its overloads included).
  options-words "How are options parsed from the command line?": no citation covers the definition of
                class Command or Group.command (plain words are not symbols here), the route is not
                "usage", and some citation lies in src/click/parser.py (where options are parsed).
  options-lead  The same question, stricter (the "answers correctly" of issue 20's Done-when): the
                first citation is option-parsing code: src/click/parser.py, or Command.parse_args,
                Command.make_parser or Parameter.handle_parse_result.
typer 0.12.5
  typer-summary "How is the Typer class used?" is not a dump. Checked on the `summary` field of the
                JSON, which issue 20 adds:
                  - present and non-empty;
                  - counts by area: a dict `summary["by_area"]` (or "counts", "areas") of area -> number with at
                    least two areas, one of them package; or, in a string summary, at least two
                    "<number> ... package/tests/docs/examples" mentions;
                  - 3-5 cited sites from package code (`typer/`): `summary["sites"]` entries with a
                    path, or `path:Lx` citations in a string summary;
                  - before the full list: in the answer text the first of those sites comes before
                    the first citation into docs_src/.
requests 2.32.3
  proxy-parse   codeqa.answer.parse_citations finds no citation in `proxies = {"http":
                "http://foo.bar:3128"}` nor in requests' own comment "{'http': 'foo.bar:3128',
                'http://host.name': 'foo.bar:4012'}" (URLs and host:port are never citations).
  proxy-ask     An extractive answer that quotes that comment (the first of a few proxy questions
                whose answer does) reports no citation whose path is not a file of the repository.
                When none of the questions' answers quotes it, the check is NOT EXERCISED (and fails).

    python bench/why_examples.py [--no-index] [--cli] [--json OUT.json]

Projects: unpacked sdists under /tmp/data (env CODEQA_BENCH_DATA): click-8.1.7, typer-0.12.5,
requests-2.32.3 (`pip download --no-deps --no-binary :all: click==8.1.7 typer==0.12.5 requests==2.32.3`),
indexed with the real bundled model into /tmp/bench-idx/<project> by `python -m codeqa index`
(incremental; --no-index skips it). Exit status 1 when any example fails.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qa_harness import Session, covers, ensure_index, project_paths, span  # noqa: E402

PROXY_QUESTIONS = ["How are proxies configured on a Session?", "Where does the session keep its proxies?",
                   "How do I set a proxy for all requests made by a session?"]
PROXY_TEXTS = ['proxies = {"http": "http://foo.bar:3128"}',
               "#: (e.g. {'http': 'foo.bar:3128', 'http://host.name': 'foo.bar:4012'}) to"]
PARSING_CODE = [("src/click/core.py", "Command.parse_args"), ("src/click/core.py", "Command.make_parser"),
                ("src/click/core.py", "Parameter.handle_parse_result")]
AREA_WORDS = r"(package|library|source|tests?|docs?|documentation|examples?|tutorials?)"


def def_lines(repo: Path, rel: str, qualified: str) -> list[int]:
    """Lines of every `def`/`class` statement named `qualified` (Class.method) in a file: overloads too."""
    tree = ast.parse((repo / rel).read_text(encoding="utf-8"))
    found = []

    def walk(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if name == qualified:
                    found.append(child.lineno)
                walk(child, name + ".")
    walk(tree, "")
    if not found:
        raise SystemExit(f"{rel}: no definition {qualified}; is {repo.name} the pinned version?")
    return found


class Check:
    def __init__(self, name: str, question: str):
        self.name, self.question, self.problems, self.got = name, question, [], ""

    def require(self, ok: bool, problem: str) -> None:
        if not ok:
            self.problems.append(problem)

    @property
    def passed(self) -> bool:
        return not self.problems


def first(result: dict) -> str:
    cites = result.get("citations") or []
    return f"first citation {span(cites[0])}, route {result.get('route')}" if cites else f"no citation, route {result.get('route')}"


def click_checks(session: Session, repo: Path) -> list[Check]:
    checks = []
    echo = def_lines(repo, "src/click/utils.py", "echo")[0]
    for name, question in (("echo-output", "How is the echo function used to print output?"), ("echo-public", "How is echo used?")):
        c, r = Check(name, question), session.ask(question)
        cites = r.get("citations") or []
        c.got = first(r)
        c.require(bool(cites) and covers(cites[0], "src/click/utils.py", echo),
                  f"must lead with click.echo (src/click/utils.py:L{echo})")
        private = def_lines(repo, "src/click/testing.py", "EchoingStdin._echo")[0]
        c.require(not (cites and covers(cites[0], "src/click/testing.py", private)), "leads with EchoingStdin._echo")
        checks.append(c)

    c = Check("invoke-of", "Who calls the invoke method of Command?")
    r = session.ask(c.question)
    cites = r.get("citations") or []
    c.got = first(r)
    command_invoke = def_lines(repo, "src/click/core.py", "Command.invoke")[0]
    c.require(bool(cites) and covers(cites[0], "src/click/core.py", command_invoke),
              f"first citation must be Command.invoke (src/click/core.py:L{command_invoke})")
    wrong = [line for line in def_lines(repo, "src/click/core.py", "Context.invoke")
             if any(covers(x, "src/click/core.py", line) for x in cites)]
    c.require(not wrong, f"cites Context.invoke definitions at lines {wrong}")
    checks.append(c)

    c = Check("options-words", "How are options parsed from the command line?")
    r = session.ask(c.question)
    cites = r.get("citations") or []
    c.got = first(r)
    named = {"class Command": def_lines(repo, "src/click/core.py", "Command"),
             "Group.command": def_lines(repo, "src/click/core.py", "Group.command")}
    for label, lines in named.items():
        hit = [line for line in lines if any(covers(x, "src/click/core.py", line) for x in cites)]
        c.require(not hit, f"cites the definition of {label} (line {hit[0] if hit else ''})")
    c.require(r.get("route") != "usage", "routed as a usage question about a symbol named by a plain word")
    c.require(any(x["path"] == "src/click/parser.py" for x in cites), "no citation in src/click/parser.py")
    checks.append(c)

    c = Check("options-lead", "How are options parsed from the command line?")
    c.got = first(r)
    parsing = {(rel, line) for rel, name in PARSING_CODE for line in def_lines(repo, rel, name)}
    c.require(bool(cites) and (cites[0]["path"] == "src/click/parser.py"
                               or any(covers(cites[0], rel, line) for rel, line in parsing)),
              "the first citation is not option-parsing code (src/click/parser.py, Command.parse_args, "
              "Command.make_parser, Parameter.handle_parse_result)")
    checks.append(c)
    return checks


def typer_check(session: Session) -> Check:
    c = Check("typer-summary", "How is the Typer class used?")
    r = session.ask(c.question)
    summary = r.get("summary")
    cites = r.get("citations") or []
    c.got = (f"{len(cites)} citations from {len({x['path'] for x in cites})} files, "
             f"{sum(x['path'].startswith('docs_src/') for x in cites)} in docs_src/; summary: "
             f"{'absent' if summary is None else type(summary).__name__}")
    c.require(bool(summary), "no `summary` field in ask --json")
    if not summary:
        return c
    if isinstance(summary, dict):
        counts = summary.get("by_area") or summary.get("counts") or summary.get("areas") or {}
        c.require(isinstance(counts, dict) and len(counts) >= 2 and any("pack" in str(k) or "lib" in str(k) for k in counts),
                  "summary has no counts by area (a dict with package and another area)")
        sites = [s.get("path", "") for s in summary.get("sites") or [] if isinstance(s, dict)]
        site_labels = [f"{s.get('path')}:L{s.get('start_line', s.get('line'))}" for s in summary.get("sites") or []
                       if isinstance(s, dict)]
    else:
        text = str(summary)
        c.require(len(re.findall(rf"\b\d+\b[^.;,\n]{{0,40}}?\b{AREA_WORDS}\b", text, re.I)) >= 2,
                  "summary text has no counts by area")
        site_labels = re.findall(r"([\w./-]+\.py):L?(\d+)", text)
        sites = [p for p, _ in site_labels]
        site_labels = [f"{p}:L{n}" for p, n in site_labels]
    package = [p for p in sites if p.startswith("typer/")]
    c.require(3 <= len(package) <= 5 and len(package) == len(sites),
              f"summary must cite 3-5 sites, all in package code (typer/): got {len(package)} of {len(sites)}")
    answer = r.get("answer") or ""
    docs_at = answer.find("docs_src/")
    first_site = min((answer.find(p) for p in package if p in answer), default=-1)
    c.require(first_site >= 0 and (docs_at < 0 or first_site < docs_at),
              "in the answer text the summary's sites do not come before the full list (docs_src/)")
    return c


def proxy_checks(session: Session, repo: Path) -> list[Check]:
    from codeqa.answer import parse_citations

    indexed = list(session.retriever.indexed_paths) if session.retriever else []
    c = Check("proxy-parse", "parse_citations on the quoted proxy dicts")
    bad = [x.text for t in PROXY_TEXTS for x in parse_citations(t, indexed)]
    c.got = f"citations found: {bad or 'none'}"
    c.require(not bad, f"host:port read as citations: {bad}")
    checks = [c]

    c = Check("proxy-ask", " | ".join(PROXY_QUESTIONS))
    files = {p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()}
    for question in PROXY_QUESTIONS:
        r = session.ask(question)
        if "foo.bar:3128" not in (r.get("answer") or ""):
            continue
        c.question = question
        stray = [span(x) for x in r.get("citations") or [] if x["path"] not in files]
        c.got = f"answer quotes foo.bar:3128; citations outside the repository: {stray or 'none'}"
        c.require(not stray, f"citations that are not files of the repository: {stray}")
        break
    else:
        c.got = "NOT EXERCISED: no answer quoted foo.bar:3128"
        c.require(False, "no question's answer quoted the proxies comment; add a question that does")
    checks.append(c)
    return checks


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-index", action="store_true", help="use the indexes as they are (skip `codeqa index`)")
    ap.add_argument("--cli", action="store_true", help="run `python -m codeqa ask` per question instead of in-process")
    ap.add_argument("--json", type=Path, help="write the checks here")
    args = ap.parse_args(argv)
    checks: list[Check] = []
    for project, run in (("click-8.1.7", lambda s, repo: click_checks(s, repo)),
                         ("typer-0.12.5", lambda s, repo: [typer_check(s)]),
                         ("requests-2.32.3", lambda s, repo: proxy_checks(s, repo))):
        repo, index_dir = project_paths(project)
        if not args.no_index:
            ensure_index(repo, index_dir)
        with Session(repo, index_dir, cli=args.cli) as session:
            checks += run(session, repo)
    for c in checks:
        print(f"{'PASS' if c.passed else 'FAIL'}  {c.name:<14} {c.question}")
        print(f"      got: {c.got}")
        for p in c.problems:
            print(f"      - {p}")
    passed = sum(c.passed for c in checks)
    print(f"\n{passed}/{len(checks)} examples pass")
    if args.json:
        args.json.write_text(json.dumps([{"name": c.name, "question": c.question, "passed": c.passed, "got": c.got,
                                          "problems": c.problems} for c in checks], indent=2), encoding="utf-8")
    return 0 if passed == len(checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
