"""`codeqa ask`: the answer streamed to stdout, what the model is doing on stderr while it reads, then the
citations (✓ verified and the lines mention what the sentence names, ! verified but they do not, · verified with nothing to check, ✗ unverified
or written by rote, ~ attributed), the one summary of them, and what made the answer incomplete or ungrounded."""

from __future__ import annotations

import json
import sys

from ..config import Settings
from .commands import _repo
from .terminal import terminal_safe


class _Waiting:
    """What the model is doing while `ask` waits for its first word, on stderr: one line rewritten in a
    terminal, a line per quarter of the prompt read otherwise; cleared when the answer starts."""

    def __init__(self, stream):
        self.stream = stream
        self.tty = stream.isatty()
        self.shown = False
        self.last_quarter = -1

    def __call__(self, progress) -> None:
        if progress.stage == "reading":
            quarter = -1 if not progress.total else (4 * progress.done) // max(progress.total, 1)
            if self.tty:
                self.stream.write("\r\033[K" + progress.message)
            elif quarter != self.last_quarter:
                self.stream.write(progress.message + "\n")
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
    (the evidence is still printed), else 0. While the model reads the prompt, stderr says so."""
    from rich.console import Console

    from ..answer import Answerer, answer_to_json
    from ..query.retrieve import Retriever

    repo = _repo(args.repo)
    settings = settings.with_(model=args.model, top_k=args.top_k)
    waiting = _Waiting(sys.stderr)
    with Retriever.open(repo, settings) as retriever:
        if note := retriever.loading_note(args.question):
            print(f"note: {terminal_safe(note)}", file=sys.stderr, flush=True)
        stream = Answerer(retriever, settings).stream(args.question, no_llm=args.no_llm, on_progress=waiting)
        if stream.prompt is not None:
            for note in stream.prompt.notes:
                print(f"note: {terminal_safe(note)}", file=sys.stderr)
        if args.json:
            answer = stream.result()
            waiting.done()
            print(json.dumps(answer_to_json(answer), indent=2))
        else:
            console = Console(highlight=False, soft_wrap=True)
            for piece in stream:
                waiting.done()
                console.print(terminal_safe(piece), end="", markup=False)  # model text, quoting files
            answer = stream.result()
            waiting.done()
            if not answer.answer.endswith("\n"):
                console.print()
            _print_citations(console, answer)
    if answer.error:
        print(f"error: {terminal_safe(answer.error)}", file=sys.stderr)
        return 1
    return 0


def _print_citations(console, answer) -> None:
    from .terminal import safe_markup as escape  # every text below is a file's, a name's or a server's

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
    if answer.error or not answer.grounded:
        console.print("\n[bold]Evidence retrieved[/]")
        for i, s in enumerate(answer.snippets[:12], 1):
            console.print(f"  {escape(f'[{i}]')} {escape(s.label)} [dim]({escape(s.reason)})[/]")
    if answer.mode == "extractive":
        console.print("\n[dim]Extractive answer: produced without an LLM.[/]")
