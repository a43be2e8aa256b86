"""Repository text and model text reach the terminal without a control sequence (issue 63): a file whose line
holds `ESC[2J` (clear the screen), an OSC 8 hidden link or a bidi override, and a file whose very name holds
one, leave none of them in what `index`, `search`, `refs` and `ask` print."""

from __future__ import annotations

import pytest

from codeqa.cli import main
from codeqa.cli.terminal import terminal_safe

CLEAR = "\x1b[2J"
LINK = "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\"
BIDI = "\u202e"
HOSTILE = f"{CLEAR} {LINK} {BIDI}gnp.exe\u202c \x9b31m \x07\r"
CONTROLS = tuple(chr(c) for c in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))) + tuple(
    chr(c) for c in (*range(0x202a, 0x202f), *range(0x2066, 0x206a)))


def test_terminal_safe_leaves_no_control_and_keeps_the_text():
    assert terminal_safe(HOSTILE) == " click me gnp.exe 31m "
    assert terminal_safe("def f():\n\treturn 'é ✓ 日本'\n") == "def f():\n\treturn 'é ✓ 日本'\n"
    # sequences cut short, nested or split across streamed pieces: what is left acts on nothing
    for text in ("\x1b", "\x1b[", "\x1b]8;;https://x", "\x1b\x1b[2J", "\x1bP1$r\x1b\\", "\x9d8;;u\x9c", "\x1b[?1049h",
                 "".join(CONTROLS), "\x1b]0;title\x07rest", "a\x1b(Bb"):
        out = terminal_safe(text)
        assert not any(c in out for c in CONTROLS), (text, out)


@pytest.fixture
def hostile_repo(tmp_path, llm_stub, monkeypatch):
    """A repository whose reference line and search hit carry the escapes, indexed through the stub's embeddings."""
    for var, value in (("CODEQA_EMBEDDINGS", "openai:stub-embed"), ("OPENAI_BASE_URL", llm_stub.base_url),
                       ("OPENAI_API_KEY", "test-key"), ("CODEQA_MODEL", "stub-model")):
        monkeypatch.setenv(var, value)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "store.py").write_text("def save_record(record):\n    return record\n")
    (repo / "use.py").write_text(f"from store import save_record\n\n\ndef handle(x):\n"
                                 f"    return save_record(x)  # {HOSTILE}\n")
    (repo / f"named{CLEAR}{BIDI}.py").write_text("from store import save_record\n\nsave_record(1)\n")
    name_link = LINK.replace("https://evil.example/", "https:evil.example")  # a file name holds no slash
    (repo / f"blob{name_link}.py").write_bytes(b"\x00\x01binary")  # skipped, and listed by name
    monkeypatch.setenv("CODEQA_INDEX_DIR", str(tmp_path / "index"))
    assert main(["index", str(repo)]) == 0
    return repo


def printed(capsys) -> str:
    out, err = capsys.readouterr()
    return out + err


def assert_clean(text: str, *expected: str) -> None:
    found = sorted({f"U+{ord(c):04X}" for c in text if c in CONTROLS})
    assert not found, f"control characters reached the terminal: {found}"
    for part in expected:
        assert part in text


def test_index_refs_and_search_print_no_escape(capsys, hostile_repo):
    capsys.readouterr()
    assert main(["index", str(hostile_repo), "--full"]) == 0
    assert_clean(printed(capsys), "files", "blobclick me.py (binary)")
    assert main(["refs", "save_record", "--repo", str(hostile_repo)]) == 0
    assert_clean(printed(capsys), "return save_record(x)", "click me", "named.py")
    assert main(["search", "handle save_record", "--repo", str(hostile_repo)]) == 0
    assert_clean(printed(capsys), "use.py", "click me")


def test_ask_prints_no_escape_from_the_model_or_the_files(capsys, hostile_repo, llm_stub):
    llm_stub.reply(f"`handle` calls `save_record` [1]. {CLEAR}{LINK}{BIDI}done.")
    capsys.readouterr()
    main(["ask", "How is save_record used?", "--repo", str(hostile_repo)])
    assert_clean(printed(capsys), "click me", "done.")
    llm_stub.reply("broken", status=500, error=f"server says {CLEAR}{LINK}")
    main(["ask", "How is save_record used?", "--repo", str(hostile_repo)])
    assert_clean(printed(capsys), "error")


def test_eval_compare_prints_no_escape_from_a_results_file(capsys, tmp_path):
    from codeqa.eval.metrics import save_results
    from test_evaluate import hand_run, result

    hostile = f"q{CLEAR}{LINK}{BIDI}"
    save_results(tmp_path / "a.jsonl", hand_run([result(hostile, 5), result("q2", 1)], "a"))
    save_results(tmp_path / "b.jsonl", hand_run([result(hostile, 1), result("q2", 1)], "b"))
    capsys.readouterr()
    assert main(["eval", "compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 0
    assert_clean(printed(capsys), "Better in B", "click me")
