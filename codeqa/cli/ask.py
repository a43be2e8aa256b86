"""`codeqa ask`: the answer streamed to stdout, what the model is doing on stderr while it reads, then the
citations (✓ verified and the lines mention what the sentence names, ! verified but they do not, · verified with nothing to check, ✗ unverified
or written by rote, ~ attributed), the one summary of them, and what made the answer incomplete or ungrounded.

With an LLM, the answer found in the code comes first, as soon as the search is done, under its own heading
and with its citations; the model's answer follows under another. Ctrl-C while the model reads or writes
keeps what was printed and exits 130."""

from __future__ import annotations

import json
import sys

from ..config import Settings
from .commands import _repo
from .terminal import safe_markup as escape  # every text printed as markup is a file's, a name's or a server's
from .terminal import terminal_safe


class _Waiting:
    """What the model is doing while `ask` waits for its first word, on stderr: one line rewritten in a
    terminal, a line per quarter of the prompt read otherwise; cleared when the answer starts."""

    def __init__(self, stream):
        self.stream = stream
        self.tty = stream.isatty()
        self.shown = False
        self.last_quarter = -1
        self.expected = ""  # how long the model should take ("about 40 s"), when this process has seen it answer

    def __call__(self, progress) -> None:
        if progress.stage == "reading":
            quarter = -1 if not progress.total else (4 * progress.done) // max(progress.total, 1)
            message = progress.message + (f" ({self.expected} in all)" if self.expected else "")
            if self.tty:
                self.stream.write("\r\033[K" + message)
            elif quarter != self.last_quarter:
                self.stream.write(message + "\n")
            self.last_quarter = quarter
            self.shown = True
            self.stream.flush()
        elif self.shown:
            self.done()

    def done(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()
        self.shown = False


def cmd_ask(args, settings: Settings) -> int:
    """`codeqa ask`: stream the answer to stdout, then the citations with ✓/✗. Exit 1 when the LLM failed
    (the evidence is still printed), 130 on Ctrl-C (what was printed stays), else 0. With an LLM, the answer
    found in the code is printed first; while the model reads the prompt, stderr says so."""
    from rich.console import Console

    from ..answer import Answerer, answer_to_json
    from ..answer.pace import about
    from ..query.retrieve import Retriever

    repo = _repo(args.repo)
    settings = settings.with_(model=args.model, top_k=args.top_k)
    waiting = _Waiting(sys.stderr)
    console = Console(highlight=False, soft_wrap=True)
    early = None
    try:
        with Retriever.open(repo, settings) as retriever:
            if note := retriever.loading_note(args.question):
                print(f"note: {terminal_safe(note)}", file=sys.stderr, flush=True)
            stream = Answerer(retriever, settings).stream(args.question, no_llm=args.no_llm, on_progress=waiting)
            if stream.prompt is not None:
                for note in stream.prompt.notes:
                    print(f"note: {terminal_safe(note)}", file=sys.stderr)
            if stream.estimate_seconds is not None:
                waiting.expected = about(stream.estimate_seconds)
            early = stream.early
            if args.json:
                answer = stream.result()
                waiting.done()
                print(json.dumps({**answer_to_json(answer), "early": answer_to_json(early) if early else None}, indent=2))
            else:
                if early is not None:
                    _print_early(console, early, stream.prompt.tokens, waiting.expected)
                    console.print(f"\n[bold]The model's answer[/] [dim]({escape(settings.model or '')})[/]")
                for piece in stream:
                    waiting.done()
                    if early is None or stream.mode == "llm":  # a model that failed: the answer found is above
                        console.print(terminal_safe(piece), end="", markup=False)  # model text, quoting files
                answer = stream.result()
                waiting.done()
                if early is not None and answer.mode != "llm":
                    console.print("[yellow]The model could not answer; the answer found in the code (above) is "
                                  "all there is.[/]")
                else:
                    if not answer.answer.endswith("\n"):
                        console.print()
                    _print_citations(console, answer)
    except KeyboardInterrupt:
        waiting.done()
        shown = ("the model's answer was not finished; the answer found in the code is above"
                 if early is not None and not args.json else "no answer was finished")
        print(f"\nStopped: {shown}.", file=sys.stderr)
        return 130
    if answer.error:
        print(f"error: {terminal_safe(answer.error)}", file=sys.stderr)
        return 1
    return 0


def _print_early(console, early, tokens: int, expected: str) -> None:
    """The answer found in the code, under a heading that says it is not the model's, with its citations."""
    from ..answer.extractive import EXTRACTIVE_NOTE

    wait = f", {expected}" if expected else ""
    console.print(f"[bold]Found in the code[/] [dim](not the model's answer; the model reads {tokens:,} tokens of "
                  f"context{wait}, and answers below)[/]\n")
    text = early.answer.removeprefix(EXTRACTIVE_NOTE).lstrip("\n")  # the heading says as much
    console.print(terminal_safe(text), end="" if text.endswith("\n") else "\n", markup=False)
    _print_citations(console, early, evidence=False)


def _print_citations(console, answer, evidence: bool = True) -> None:
    from ..answer.extractive import span_label
    from ..answer.streaming import describe_cut

    from ..answer.citation_report import citation_status, describe_citations

    colours = {"supported": "green", "unsupported": "yellow", "unchecked": "dim", "unverified": "red", "rote": "red",
               "attributed": "cyan"}
    cited = [c for c in answer.citations if not c.attributed]
    attributed = [c for c in answer.citations if c.attributed]
    for title, group in (("Citations", cited), ("Attributed [dim](not cited by the model)[/]", attributed)):
        if group:
            console.print(f"\n[bold]{title}[/]")
        for c in group:  # the marks and words of the page's chips and MCP's notes
            status = citation_status(c, answer.mode)
            label = c.path if c.start_line == 0 else span_label(c.path, c.start_line, c.end_line)
            colour = colours[status.kind]
            console.print(f" [{colour}]{status.mark}[/] {escape(label)} [{colour}]({escape(status.words)})[/]")
    report = describe_citations(answer)  # the same summary the page and MCP give
    console.print("\n" + escape(report.line))
    for warning in report.warnings:
        console.print(f"[yellow]{escape(warning)}[/]")
    if answer.unknown_names:
        console.print("\n[yellow]Names the index does not know:[/] " + escape(", ".join(answer.unknown_names)))
    if answer.cut:
        console.print(f"\n[yellow]The answer is incomplete: {escape(describe_cut(answer.cut))}.[/]")
    if answer.prompt is not None and answer.prompt.left_out:
        console.print("\n[dim]Left out to fit the model's window ("
                      f"{answer.prompt.tokens:,} of {answer.prompt.window:,} tokens): "
                      + escape("; ".join(answer.prompt.left_out)) + "[/]")
    if evidence and (answer.error or not answer.grounded):
        console.print("\n[bold]Evidence retrieved[/]")
        for i, s in enumerate(answer.snippets[:12], 1):
            console.print(f"  {escape(f'[{i}]')} {escape(s.label)} [dim]({escape(s.reason)})[/]")
    if answer.mode == "extractive" and evidence:
        console.print("\n[dim]Extractive answer: produced without an LLM.[/]")
