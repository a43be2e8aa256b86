"""How `codeqa index` shows its progress: bars on a terminal, plain lines anywhere else, and the rates beside them.

A terminal gets rich's live bars. A log or a pipe (`make run > log`) cannot show a bar redrawn in place: rich
holds it back until the run ends, so a long embedding looked stalled. There each stage gets a plain line when
it starts and ends, and a long stage one more every tenth of its work or every ten seconds, whichever comes
first, flushed as it is written: no carriage returns, no colour, and no flood on a big repository.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

ProgressCallback = Callable[[str, int, int], None]

STAGES = {"parse": "parsing files", "model": "loading the embedding model", "embed": "embedding chunks",
          "resolve": "resolving references", "store": "storing", "references": "storing references"}


SEARCHABLE = "Searchable now"


def searchable_words(chunks: int, to_embed: int) -> str:
    """What phase 1's end means, after the words SEARCHABLE (which a terminal shows in colour)."""
    return (f" (keywords and the graph, {chunks:,} chunks). Phase 2 embeds {to_embed:,} chunks for "
            "semantic search, package code first; search works meanwhile, and Ctrl-C loses nothing (the next "
            "`codeqa index` goes on).")


class StageRates:
    """The speed beside each progress bar: what was done per second since the stage's clock started. The
    embed stage's clock starts again once the model has loaded, counting from what was done by then (the
    embedding cache's vectors), so its chunks/s is the model's speed, as in the summary."""

    UNITS = {"parse": "files/s", "resolve": "files/s", "embed": "chunks/s", "store": "files/s"}

    def __init__(self, clock: Callable[[], float] | None = None):
        self.clock = clock or time.perf_counter
        self.started: dict[str, tuple[float, int]] = {}  # stage -> (clock, done) when its rate starts counting
        self.done: dict[str, int] = {}

    def update(self, stage: str, done: int, total: int) -> str:
        now = self.clock()
        if stage == "model" and done >= total and "embed" in self.started:
            self.started["embed"] = (now, self.done.get("embed", 0))
        self.started.setdefault(stage, (now, done))
        self.done[stage] = done
        since, base = self.started[stage]
        if stage == "model" or now - since <= 0.5:
            return ""
        return f"{per_second((done - base) / (now - since))} {self.UNITS.get(stage, '/s')}"


def per_second(rate: float) -> str:
    """A rate as people read it: `0.4`, `9.3`, `25`, `1,204` (below 10 a whole number would say 0 for 0.4)."""
    return f"{rate:.1f}" if rate < 10 else f"{rate:,.0f}"


class PlainProgress:
    """Progress as plain lines on `out` (see the module docstring): a line when a stage starts, when it
    finishes, and in between once `share` of its work or `seconds` have passed since its last line."""

    def __init__(self, out: TextIO, clock: Callable[[], float] = time.monotonic, seconds: float = 10.0,
                 share: float = 0.1):
        self.out, self.clock, self.seconds, self.share = out, clock, seconds, share
        self.rates = StageRates(clock)
        self.last: dict[str, tuple[float, int]] = {}  # stage -> (clock, done) at its last line
        self.finished: set[str] = set()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "searchable":
            self._line(SEARCHABLE + searchable_words(done, total))
            return
        rate = self.rates.update(stage, done, total)
        now = self.clock()
        ended = done >= total
        if stage in self.finished:
            if ended:
                return  # a stage may report its end twice (a last batch, then the stage's close)
            self.finished.discard(stage)  # a stage run again (phase 2 after phase 1's cached vectors): its start
        elif stage in self.last and not ended:
            at, before = self.last[stage]
            if now - at < self.seconds and done - before < max(1, total * self.share):
                return
        if ended:
            self.finished.add(stage)
        self.last[stage] = (now, done)
        name = STAGES.get(stage, stage)
        self._line(f"{name}: {done:,} of {total:,}" + (f" ({rate})" if rate else "") + (" done" if ended else ""))

    def _line(self, text: str) -> None:
        print(f"codeqa index: {text}", file=self.out, flush=True)


@contextmanager
def index_progress(console) -> Iterator[ProgressCallback]:
    """The progress callback for `codeqa index` writing to rich `console`: live bars when it is a terminal,
    PlainProgress lines when it is not."""
    if not console.is_terminal:
        yield PlainProgress(console.file)
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    with Progress(TextColumn("[bold]{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                  console=console, transient=False) as bar:
        tasks: dict[str, int] = {}
        rates = StageRates()

        def progress(stage: str, done: int, total: int) -> None:
            if stage == "searchable":
                bar.console.print(f"[green]{SEARCHABLE}[/]{searchable_words(done, total)}")
                return
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total, rate="")
            bar.update(tasks[stage], completed=done, total=total, rate=rates.update(stage, done, total))

        yield progress
