"""Answers sized for an agent's context: every tool's text is at most TEXT_BUDGET bytes, and its
structured content holds the same page, itself at most TEXT_BUDGET bytes as JSON. (One item past the
budget, such as a single minified line, is still a page of one.)

A list (search hits, definitions, reference sites) is cut at `limit` items or at the budget, whichever
comes first; `offset` starts the next page where this one stopped (`next_offset`), so paging from 0 until
`next_offset` is null returns every item once. A long text (ask's answer) is cut at a line boundary and
paged by character offset the same way. The first page puts what an agent acts on first: counts, the
definition and the best items; the paging line says how to get the rest.

    text, result = fit_page(page_of, limit)           # page_of(n): the first n items; the longest that fits
    part, after = text_page(answer, offset, room)     # answer[offset:after], cut at a line; after None at its end
"""

from __future__ import annotations

import json
from typing import Callable, TypeVar

from pydantic import BaseModel, Field

TEXT_BUDGET = 4000  # bytes of a page's text, and of its structured content as JSON: under 4 KB (4096)
LINE_WIDTH = 200  # characters of one listed line (a reference's source line, a preview, a path)
Result = TypeVar("Result", bound=BaseModel)


class PageInfo(BaseModel):
    offset: int = Field(description="the first item of this page (0-based)")
    shown: int = Field(description="items on this page")
    total: int | None = Field(description="items in all (null for a search: its ranking has no end)")
    next_offset: int | None = Field(description="pass as `offset` for the next page; null on the last page")


def clip(text: str, width: int = LINE_WIDTH) -> str:
    """One line of at most `width` characters (an ellipsis says it was cut)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 1] + "…"


def size(text: str) -> int:
    return len(text.encode())


def fits(text: str, result: BaseModel, room: int = TEXT_BUDGET) -> bool:
    """Both the text and the structured content (as JSON, the way clients print it) within `room` bytes."""
    return size(text) <= room and size(json.dumps(result.model_dump(mode="json"), ensure_ascii=False)) <= room


def fit_page(page_of: Callable[[int], tuple[str, Result]], most: int, room: int = TEXT_BUDGET) -> tuple[str, Result]:
    """`page_of(n)` (a page of the first n items: its text and its structured content) for the largest n up
    to `most` that fits in `room`; n = 1 when none does (an item is a few clipped lines, so one fits beside
    a head of counts), n = 0 when there is none. A page grows with n, so a binary search finds it."""
    low, high = min(1, most), most
    while low < high:
        mid = (low + high + 1) // 2
        if fits(*page_of(mid), room):
            low = mid
        else:
            high = mid - 1
    return page_of(low)


def page_info(offset: int, shown: int, total: int | None, more: bool | None = None) -> PageInfo:
    """The page's place in the list; `more` says whether items follow when `total` is unknown."""
    has_more = more if total is None else offset + shown < total
    return PageInfo(offset=offset, shown=shown, total=total, next_offset=offset + shown if has_more else None)


def paging_line(page: PageInfo, what: str, call: str) -> str:
    """'Showing 1-30 of 120 reference sites; next page: find_references(..., offset=30).' (empty on a one-page list)."""
    if page.next_offset is None and page.offset == 0:
        return ""
    of = f" of {page.total}" if page.total is not None else ""
    shown = f"Showing {page.offset + 1}-{page.offset + page.shown}{of} {what}" if page.shown else f"No {what} at offset {page.offset}{of}"
    return f"{shown}; next page: {call}offset={page.next_offset})." if page.next_offset is not None else f"{shown} (the last page)."


def text_page(text: str, offset: int, room: int) -> tuple[str, int | None]:
    """`text[offset:end]` of at most `room` bytes, `end` at a line's end when one falls in the page (a single
    longer line is cut inside), and `end` (None when the page reaches the text's end)."""
    rest = text[offset:]
    if size(rest) <= room:
        return rest, None
    window = rest.encode()[:room].decode(errors="ignore")
    cut = window.rfind("\n") + 1 or len(window) or 1  # at least a character: a page always moves on
    return rest[:cut], offset + cut
