"""What the terminal receives of text codeqa did not write: repository text (code, paths, names) and model text.

A terminal acts on control characters, so a file (or an answer quoting it) holding `ESC[2J` clears the
screen, an OSC 8 sequence hides a link behind innocent words, and a bidi override (Trojan Source) shows code
in an order other than the one it runs in. `terminal_safe` removes every such code point: C0 controls but
newline and tab, DEL, the C1 controls (U+0080-U+009F, among them the one-byte CSI and OSC) and the bidi
embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069). That set is the guarantee, and it needs
no parser: what is left cannot start a sequence. Whole ESC sequences (CSI, OSC and its kin up to BEL or ST,
two-byte escapes) are dropped first, so that their parameters do not litter the line.

Every command prints such text through this one function; `--json` output needs none (json.dumps writes
every non-ASCII character and control as a \\u escape).
"""

from __future__ import annotations

import re

_SEQUENCE = re.compile(r"""
      \x1b\[ [0-?]* [ -/]* [@-~]?               # CSI: parameters, intermediates, final byte
    | \x1b[\]PX^_] [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?   # OSC, DCS, SOS, PM, APC, to BEL or ST
    | \x1b [ -/]* [0-~]?                        # any other escape (two bytes, or nF with intermediates)
""", re.VERBOSE)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` with no control sequence or control character a terminal would act on (newline and tab stay)."""
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def safe_markup(text: str) -> str:
    """`text` for rich's console markup: terminal_safe, and its square brackets taken as text, not styles."""
    from rich.markup import escape

    return escape(terminal_safe(text))
