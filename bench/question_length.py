"""How long parsing a question takes as the question grows (query/question.py), for the shapes that cost it most.

Each question repeats one shape up to the length: identifiers, names before kind words, "where ..." with no verb
after it, possessives, a dotted chain, one long word, and a real question about the fixture repository. A linear
parser takes about ten times as long for ten times the text; the parser before issue 63 compared every pair of
names and searched the whole text before each one (quadratic: 37,318 characters took 67.7 s on a three-file
repository). Lengths past CODEQA_MAX_QUESTION_CHARS (4,000 by default) are refused before parsing; they are
timed here to show the growth.

    python bench/question_length.py [--lengths 1000,4000,16000,40000] [--repeat 3]

Prints one row per shape: the best of --repeat runs at each length, in milliseconds, and the ratio of the time
at the longest to the time at the shortest: about the ratio of the lengths for a linear parser (40 by default),
its square (1,600) for a quadratic one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.query.question import parse_question  # noqa: E402

SHAPES = {
    "identifiers": "a_b ",
    "camel case": "FooBar ",
    "kind words": "the x function of Foo ",
    "subject slots": "who calls x_y ",
    "where, no verb": "where x ",
    "how is, no participle": "how is ",
    "possessives": "Foo's bar method ",
    "dotted chain": "a.",
    "one long word": "a",
    "backticks": "`a ",
    "a real question": "How is the `encode` function of EncoderClass used by make_encoder in app/cli.py? ",
}


def best_seconds(question: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        parse_question(question)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="1000,4000,16000,40000", help="question lengths in characters")
    parser.add_argument("--repeat", type=int, default=3, help="runs per length (the best is shown)")
    args = parser.parse_args()
    lengths = [int(n) for n in args.lengths.split(",")]
    print(f"{'shape':<24}" + "".join(f"{n:>10,}" for n in lengths) + f"{'ratio':>9}   (ms, best of {args.repeat})")
    for name, shape in SHAPES.items():
        times = [best_seconds((shape * (n // len(shape) + 1))[:n], args.repeat) for n in lengths]
        ratio = times[-1] / max(times[0], 1e-9)
        print(f"{name:<24}" + "".join(f"{t * 1000:>10.1f}" for t in times) + f"{ratio:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
