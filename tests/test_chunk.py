"""The syntax chunker: chunks tile the file exactly, one chunk per symbol that fits, big symbols split
along their children with the header first, windows and markdown sections for files without a grammar."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings as hsettings, strategies as st

from codeqa.indexing.chunk import chunk_embedding_text, chunk_file, line_windows, nonws_len, reassemble
from codeqa.indexing.walk import walk_repository
from codeqa.languages import detect_language
from codeqa.indexing.parse import parse_source
from codeqa.types import SourceFile
from conftest import FIXTURES

ROOT = Path(__file__).resolve().parent.parent


def chunks_of(path: str, text: str, max_chars: int = 1500, min_chars: int = 100):
    file = SourceFile(path, Path(path), detect_language(path, text.split("\n", 1)[0]), len(text), "")
    parsed, tree = parse_source(file, text)
    return parsed, chunk_file(file, text, tree, parsed.symbols, max_chars, min_chars)


def assert_tiles(text: str, chunks) -> None:
    """No line lost, none twice, and every chunk's text is exactly its lines of the file."""
    lines = text.splitlines(keepends=True)
    assert reassemble(chunks) == text
    for c in chunks:
        assert c.text == "".join(lines[c.start_line - 1:c.end_line])
    if chunks and chunks[0].kind not in ("window",):
        assert [c.start_line for c in chunks[1:]] == [c.end_line + 1 for c in chunks[:-1]]


def test_every_source_file_of_this_project_and_the_fixtures_is_tiled_exactly():
    checked = 0
    for root in (ROOT / "codeqa", FIXTURES):
        for f in walk_repository(root).files:
            text = f.abs_path.read_text(encoding="utf-8")
            _, chunks = chunks_of(f.path, text)
            assert_tiles(text, chunks)
            checked += 1
    assert checked > 20


def test_one_chunk_per_symbol_that_fits():
    text = (FIXTURES / "repo" / "app" / "main.py").read_text()
    parsed, chunks = chunks_of("app/main.py", text)
    run = next(c for c in chunks if "run" in c.symbol_names)
    assert (run.start_line, run.end_line, run.kind) == (5, 11, "function")  # + its trailing blank line
    assert run.symbol_names == ("run",) and run.text.rstrip().endswith("encoder.encode(text))")
    # the module code around it (imports, the __main__ block) is chunked too, not dropped
    assert chunks[0].start_line == 1 and chunks[-1].end_line == len(text.splitlines())


BIG_CLASS = '''import os


class Store:
    """Keeps records in memory."""

    limit = 10

{methods}

def helper():
    return Store()
'''


def test_a_class_too_big_is_split_by_method_and_keeps_its_header_first():
    methods = "\n".join(
        f"    def method_{i}(self, value):\n        total = value * {i}\n        return self.combine(total, '{'x' * 60}')\n"
        for i in range(12))
    text = BIG_CLASS.format(methods=methods)
    parsed, chunks = chunks_of("store.py", text, max_chars=400, min_chars=50)
    assert_tiles(text, chunks)
    head = next(c for c in chunks if c.start_line <= 4 <= c.end_line)
    assert head.text.splitlines()[4 - head.start_line].startswith("class Store")
    assert head.symbol_names[0] == "Store"
    for i in range(12):
        owners = [c for c in chunks if f"Store.method_{i}" in c.symbol_names
                  and c.start_line <= next(s.start_line for s in parsed.symbols if s.name == f"method_{i}") <= c.end_line]
        assert len(owners) == 1
        assert "Store" in owners[0].symbol_names  # knows its class
        assert owners[0].kind == ("class" if owners[0] is head else "method")
    helper = next(c for c in chunks if "helper" in c.symbol_names)
    assert helper.text.lstrip().startswith("def helper")
    assert all(nonws_len(c.text) <= 400 * 1.2 for c in chunks)
    # the embedded text of a method piece names the class: the header survives the split
    by_id = {s.id: s for s in parsed.symbols}
    method_chunk = next(c for c in chunks if c.symbol_names[:1] == ("Store.method_5",))
    assert "Store.method_5" in chunk_embedding_text(method_chunk, by_id).splitlines()[0]


def test_a_function_too_big_is_split_along_its_statements():
    body = "".join(f"    step_{i} = compute({i}, '{'y' * 80}')\n" for i in range(40))
    text = f"def long_function(a, b):\n{body}    return a\n"
    _, chunks = chunks_of("long.py", text, max_chars=600, min_chars=50)
    assert len(chunks) > 3
    assert_tiles(text, chunks)
    assert chunks[0].start_line == 1 and all(c.symbol_names[0] == "long_function" for c in chunks)


def test_files_without_a_grammar_get_overlapping_windows():
    text = "".join(f"line {i}\n" for i in range(1, 101))
    file = SourceFile("notes.txt", Path("notes.txt"), None, len(text), "")
    chunks = chunk_file(file, text, None, ())
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 40), (26, 65), (51, 90), (76, 100)]
    assert {c.kind for c in chunks} == {"window"}
    assert reassemble(chunks) == text
    assert line_windows(10) == [(1, 10)]


def test_markdown_is_chunked_by_heading_section():
    text = (FIXTURES / "repo" / "docs" / "guide.md").read_text()
    text = text + "\n## Another section\n\n" + "More words about the encoder and its options. " * 5 + "\n"
    file = SourceFile("docs/guide.md", Path("guide.md"), None, len(text), "")
    chunks = chunk_file(file, text, None, (), min_chars=20)
    assert {c.kind for c in chunks} == {"section"}
    assert_tiles(text, chunks)
    assert chunks[-1].text.startswith("## Another section")


def test_a_file_of_syntax_errors_falls_back_to_windows_and_loses_nothing():
    text = "def broken(:\n    ))) (((\n" * 40
    _, chunks = chunks_of("bad.py", text)
    assert reassemble(chunks) == text


# ---- property: any program, any sizes -> the chunks are the file -------------------------------

_statement = st.sampled_from([
    "x = 1", "call(a, b)", "return value", "# a comment", "", "if flag:\n{i}    pass", "for i in range(3):\n{i}    total += i",
    "items = [\n{i}    1,\n{i}    2,\n{i}]", "text = '''multi\nline'''", "y = 'long string " + "z" * 120 + "'",
])


@st.composite
def python_program(draw, depth=0):
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        choice = draw(st.integers(0, 9 if depth < 2 else 5))
        indent = "    " * depth
        if choice >= 8:
            lines.append(f"{indent}class C{draw(st.integers(0, 99))}:")
            lines.append(draw(python_program(depth + 1)))
        elif choice >= 6:
            decorator = draw(st.booleans())
            if decorator:
                lines.append(f"{indent}@decorate")
            lines.append(f"{indent}def f{draw(st.integers(0, 99))}(a, b=2):")
            lines.append(draw(python_program(depth + 1)))
        else:
            lines.append(indent + draw(_statement).replace("{i}", indent))
    return "\n".join(lines)


@hsettings(max_examples=150, deadline=None)
@given(python_program(), st.integers(20, 600), st.integers(0, 120), st.booleans())
def test_chunks_reassemble_any_python_program(program, max_chars, min_chars, trailing_newline):
    text = program + ("\n" if trailing_newline else "")
    _, chunks = chunks_of("gen.py", text, max_chars=max_chars, min_chars=min_chars)
    assert_tiles(text, chunks)
    ids = [c.id for c in chunks]
    assert len(ids) == len(set(ids))


def test_chunk_ids_are_stable():
    text = (FIXTURES / "repo" / "encoders" / "encoder.py").read_text()
    first = [c.id for c in chunks_of("encoders/encoder.py", text)[1]]
    assert first == [c.id for c in chunks_of("encoders/encoder.py", text)[1]]
    assert len(set(first)) == len(first)


def test_row_sizes_count_characters_not_bytes_and_follow_splitlines():
    """Chunk sizes come from every line's non-whitespace characters, worked out over the file's UTF-8
    bytes: a character of several bytes counts once, a lone surrogate too, and a file with line breaks
    other than \\n (which splitlines sees) is counted line by line."""
    from codeqa.indexing.chunk import _row_sizes

    for text in ("é é\n\tü\n", "€\n€€ \n😀x\n", "x\ud800y\n  z", "\r\n\r\n", "a\x0cb\nc\n", "a\u2028b\n",
                 "def f():\n    return 'ß'\n", "  \t\n"):
        lines = text.splitlines(keepends=True)
        assert _row_sizes(text, lines) == [nonws_len(line) for line in lines], text
    assert _row_sizes("€€ \n", ["€€ \n"]) == [2]  # 6 bytes, 2 characters
