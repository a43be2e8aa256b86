"""The command-line parser (every command's --help, bad usage exits 2 with a message), and every
command's --json shape and exit code as the README documents them.

Only `codeqa.cli.main` is imported (the console script's entry point), so these tests hold whether the
CLI is one module or a package.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codeqa.cli import main
from conftest import copy_fixture_repo

ROOT = Path(__file__).resolve().parent.parent
# The interface in DESIGN.md / the README: each command and the flags scripts and agents rely on.
FLAGS = {
    "index": ["--index-dir", "--qdrant-url", "--index-name", "--full", "--dry-run", "--json"],
    "search": ["--repo", "--top-k", "--json", "--queries-file", "--index-dir", "--qdrant-url", "--index-name"],
    "refs": ["--repo", "--json", "--index-dir", "--qdrant-url"],
    "ask": ["--repo", "--model", "--no-llm", "--top-k", "--json"],
    "export": ["--repo"],
    "eval": ["--repo", "--no-llm", "--report", "--results", "--out", "--kinds", "--count", "--seed", "--json"],
    "ui": ["--repo", "--port", "--watch"],
    "mcp": ["--repo", "--http", "--token", "--watch"],
    "watch": ["--debounce", "--index-dir"],
    "workspace": [],  # its actions (add, list, remove) and their flags: tests/test_workspace.py
}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def exits(capsys, *argv) -> tuple[int, str, str]:
    """argparse's own exits (--help, bad usage) raise SystemExit."""
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def parser_commands(capsys) -> list[str]:
    """The commands the parser knows, read from its own answer to an unknown one."""
    code, _, err = exits(capsys, "no-such-command")
    assert code == 2 and "invalid choice: 'no-such-command'" in err
    return re.findall(r"'([\w-]+)'", err.split("choose from", 1)[1])


def test_the_parser_has_exactly_the_documented_commands(capsys):
    assert sorted(parser_commands(capsys)) == sorted(FLAGS)


def test_top_level_help_lists_every_command(capsys):
    code, out, _ = exits(capsys, "--help")
    assert code == 0 and out.startswith("usage: codeqa")
    for command in FLAGS:
        assert re.search(rf"^\s+codeqa {command}\b", out, re.MULTILINE), command  # the one-line summary
        assert re.search(rf"^\s+{command}\s+\S", out, re.MULTILINE), command  # argparse's help line
    code, out, _ = run(capsys)  # no command: the help, and the exit code of bad usage
    assert code == 2 and "usage: codeqa" in out


@pytest.mark.parametrize("command", sorted(FLAGS))
def test_each_command_help_shows_its_usage_and_flags(capsys, command):
    code, out, err = exits(capsys, command, "--help")
    assert code == 0 and not err
    assert out.startswith(f"usage: codeqa {command} ")
    options = set(re.findall(r"(--[a-z][\w-]*)", out.split("options:", 1)[1]))
    assert set(FLAGS[command]) <= options, set(FLAGS[command]) - options


@pytest.mark.parametrize("argv, message", [
    (["index"], "the following arguments are required: path"),
    (["search", "encode"], "the following arguments are required: --repo"),
    (["refs", "--repo", "."], "the following arguments are required: symbol"),
    (["ask", "why?"], "the following arguments are required: --repo"),
    (["search", "encode", "--repo", ".", "--top-k", "many"], "argument --top-k: 'many' is not a whole number"),
    (["ui", "--port", "http"], "argument --port: invalid int value: 'http'"),
    (["watch", ".", "--debounce", "soon"], "argument --debounce: invalid float value: 'soon'"),
    (["eval"], "the following arguments are required: ARGS"),
])
def test_bad_usage_exits_2_with_the_usage_and_what_was_wrong(capsys, argv, message):
    code, out, err = exits(capsys, *argv)
    assert code == 2 and not out
    assert err.startswith(f"usage: codeqa {argv[0]}") and f"codeqa {argv[0]}: error: {message}" in err


def test_an_unknown_flag_exits_2_naming_it(capsys):
    code, out, err = exits(capsys, "index", ".", "--no-such-flag")  # argparse reports it from the top parser
    assert code == 2 and not out and "codeqa: error: unrecognized arguments: --no-such-flag" in err


def test_every_command_is_in_the_readme(capsys):
    readme = (ROOT / "README.md").read_text()
    for command in parser_commands(capsys):
        assert re.search(rf"^codeqa {command}\b", readme, re.MULTILINE), f"README lacks `codeqa {command}`"


def test_python_dash_m_codeqa_runs_the_same_parser(tmp_path):
    def codeqa(*argv):
        return subprocess.run([sys.executable, "-m", "codeqa", *argv], capture_output=True, text=True, cwd=tmp_path,
                              timeout=120)

    helped = codeqa("search", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: codeqa search ")
    wrong = codeqa("search", "encode")
    assert wrong.returncode == 2 and "the following arguments are required: --repo" in wrong.stderr


def test_bad_input_exits_2_with_one_clear_sentence(capsys, tmp_path):
    code, _, err = run(capsys, "index", str(tmp_path / "missing"))
    assert code == 2 and "does not exist" in err
    (tmp_path / "f.txt").write_text("x")
    code, _, err = run(capsys, "index", str(tmp_path / "f.txt"))
    assert code == 2 and "not a directory" in err
    repo = copy_fixture_repo(tmp_path / "repo")
    for argv in (("refs", "EncoderClass", "--repo", str(repo)), ("search", "encode", "--repo", str(repo)),
                 ("export", "--repo", str(repo)), ("ask", "what?", "--repo", str(repo), "--no-llm")):
        code, _, err = run(capsys, *argv)
        assert code == 2, argv
        assert f"codeqa index {repo}" in err and "Traceback" not in err
    from codeqa.config import Settings

    assert not Settings.load(env={}).index_dir_for(repo).exists()  # reading commands create nothing
    assert not (repo / ".codeqa").exists()


def test_export_has_no_json_flag_its_output_is_always_json_lines(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["export", "--repo", ".", "--json"])
    assert exited.value.code == 2 and "--json" in capsys.readouterr().err


@pytest.mark.slow  # `codeqa index` loads the embedding model
def test_index_json_summary(capsys, tmp_path):
    repo = copy_fixture_repo(tmp_path / "repo")
    code, out, _ = run(capsys, "index", str(repo), "--json")
    assert code == 0
    summary = json.loads(out)
    assert summary["files"] == 13 and summary["symbols"] > 15
    assert {"path": ".env", "reason": "secret"} in summary["skipped"]
    assert summary["graph_files_per_second"] > 0 and summary["chunks"] > 0


@pytest.mark.slow
def test_index_summary_lists_problem_skips_and_counts_files_of_no_language(capsys, tmp_path):
    repo = copy_fixture_repo(tmp_path / "repo")
    for name in ("a.csv", "b.csv", "c.dat"):
        (repo / name).write_text("1,2\n")
    code, _, err = run(capsys, "index", str(repo))  # the summary goes to stderr, with the progress
    out = " ".join(err.split())  # the console wraps long lines
    assert code == 0
    assert "skipped .env (secret)" in out and "skipped weird.py (binary)" in out
    assert "(not-source)" not in out
    assert "not indexed (no source language): 4 files (.csv 2, .gitignore 1, .dat 1; see --json)" in out


def test_index_dry_run_estimates_and_writes_nothing(capsys, tmp_path, llm_stub, monkeypatch):
    """The configured embedder is timed (here an OpenAI-compatible stub server, not the model)."""
    repo = copy_fixture_repo(tmp_path / "repo")
    for var, value in (("CODEQA_EMBEDDINGS", "openai:stub-embed"), ("OPENAI_BASE_URL", llm_stub.base_url),
                       ("OPENAI_API_KEY", "test-key")):
        monkeypatch.setenv(var, value)
    index_dir = tmp_path / "index"
    code, out, _ = run(capsys, "index", str(repo), "--dry-run", "--json", "--index-dir", str(index_dir))
    assert code == 0 and not index_dir.exists()
    plan = json.loads(out)
    assert plan["files"] == 13 and plan["chunks"] > 0 and plan["model_id"].endswith("stub-embed")
    assert {"path": ".env", "reason": "secret"} in plan["skipped"]
    assert set(plan["estimates"]) >= {"phase1_seconds", "phase2_seconds", "total_seconds", "chunks_per_second", "chunks"}
    assert {lang["language"] for lang in plan["by_language"]} >= {"python", "typescript", "java"}
    assert len(llm_stub.embedding_requests) >= 2  # the warm-up, then the timed sample
    code, out, err = run(capsys, "index", str(repo), "--dry-run", "--index-dir", str(index_dir))
    assert code == 0 and not index_dir.exists()
    text = " ".join(out.split())
    assert "nothing was indexed or written" in text and "Would index 13 files" in text
    assert "Skipped" in text and "secret 1" in text
    assert "Estimated chunks ~" in text and "phase 1" in text and "phase 2" in text
    assert "from a measured sample: an estimate" in text


def test_search_json_shape_and_exact_text(capsys, indexed_repo):
    code, out, _ = run(capsys, "search", "split text into lowercase words", "--repo", str(indexed_repo), "--json", "--top-k", "5")
    assert code == 0
    results = json.loads(out)
    assert 1 <= len(results) <= 5
    for r in results:
        assert set(r) == {"path", "start_line", "end_line", "score", "kind", "symbol", "text", "stale"} and r["stale"] is False
        lines = (indexed_repo / r["path"]).read_text().splitlines(keepends=True)
        assert r["text"] == "".join(lines[r["start_line"] - 1:r["end_line"]])
    assert any(r["path"] == "encoders/encoder.py" and r["symbol"] == "tokenize" for r in results[:3])


def test_search_queries_file(capsys, indexed_repo, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": "greet a person by name"}\n\n{"query": "EncoderClass"}\n')
    code, out, _ = run(capsys, "search", "--queries-file", str(queries), "--repo", str(indexed_repo), "--json", "--top-k", "3")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["query"] for line in lines] == ["greet a person by name", "EncoderClass"]
    assert lines[1]["results"][0]["symbol"] == "EncoderClass"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    code, _, err = run(capsys, "search", "--queries-file", str(bad), "--repo", str(indexed_repo), "--json")
    assert code == 2 and "bad.jsonl:1" in err


def test_refs_json(capsys, indexed_repo):
    code, out, _ = run(capsys, "refs", "EncoderClass", "--repo", str(indexed_repo), "--json")
    assert code == 0
    result = json.loads(out)
    assert [d["path"] for d in result["definitions"]] == ["encoders/encoder.py"]
    sites = {(r["path"], r["line"], r["kind"]) for r in result["references"]}
    assert ("app/main.py", 1, "import") in sites and ("app/main.py", 7, "instantiation") in sites
    assert ("app/cli.py", 9, "instantiation") in sites and ("app/cli.py", 14, "instantiation") in sites
    assert all({"path", "line", "column", "kind", "confidence", "text", "enclosing"} <= set(r) for r in result["references"])
    code, out, _ = run(capsys, "refs", "format_name", "--repo", str(indexed_repo), "--json")
    assert sorted(d["path"] for d in json.loads(out)["definitions"]) == ["app/formatting.py", "app/legacy.py"]
    code, out, _ = run(capsys, "refs", "legacy.py:format_name", "--repo", str(indexed_repo), "--json")
    result = json.loads(out)
    assert [d["path"] for d in result["definitions"]] == ["app/legacy.py"]
    assert [(r["path"], r["line"]) for r in result["references"]] == [("app/legacy.py", 7)]
    code, out, _ = run(capsys, "refs", "EncoderClass.encode", "--repo", str(indexed_repo), "--json")
    assert [d["qualified_name"] for d in json.loads(out)["definitions"]] == ["EncoderClass.encode"]


def test_export_is_the_whole_graph(capsys, indexed_repo):
    code, out, _ = run(capsys, "export", "--repo", str(indexed_repo))
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    symbols = {r["id"] for r in rows if r["type"] == "symbol"}
    refs = [r for r in rows if r["type"] == "reference"]
    assert "encoders/encoder.py#EncoderClass@15" in symbols and refs
    assert all(t in symbols for r in refs for t in r["target_ids"])


def test_index_and_its_dry_run_list_each_folder_left_out_once_with_its_reason(capsys, tmp_path, llm_stub, monkeypatch):
    """Folders named like output: the one holding source is indexed, the ones that show they are output are
    listed as `path/ (reason: evidence)`, once each, in the summary, the dry run and both --json shapes."""
    repo = tmp_path / "repo"
    for rel, text in {"pkg/build/wheel.py": "def build_wheel(): pass\n", "coverage/control.py": "class Coverage: pass\n",
                      "app.py": "from pkg.build.wheel import build_wheel\n", "venv/pyvenv.cfg": "home = /usr\n",
                      "venv/lib/six.py": "x = 1\n", "build/lib.linux-x86_64-3.11/app.py": "x = 1\n",
                      ".gitignore": "*.log\n", "a.log": "log\n", "b.log": "log\n"}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    for var, value in (("CODEQA_EMBEDDINGS", "openai:stub-embed"), ("OPENAI_BASE_URL", llm_stub.base_url),
                       ("OPENAI_API_KEY", "test-key")):
        monkeypatch.setenv(var, value)
    index = ["--index-dir", str(tmp_path / "index")]
    lines = ["left out build/ (output: setuptools build, lib.linux-x86_64-3.11/)",
             "left out venv/ (output: virtualenv, pyvenv.cfg)"]
    pruned = [{"path": "build", "reason": "output", "detail": "setuptools build, lib.linux-x86_64-3.11/"},
              {"path": "venv", "reason": "output", "detail": "virtualenv, pyvenv.cfg"}]

    code, out, _ = run(capsys, "index", str(repo), "--dry-run", *index)
    assert code == 0 and "Would index 3 files" in out
    assert "Left out unread 2 folders (output 2), 2 files matched by a .gitignore" in out
    assert [line for line in out.splitlines() if line.startswith("left out ")] == lines
    code, out, _ = run(capsys, "index", str(repo), "--dry-run", "--json", *index)
    plan = json.loads(out)
    assert plan["files"] == 3 and plan["pruned"] == pruned and plan["gitignored_files"] == 2

    code, _, err = run(capsys, "index", str(repo), "--defer-embeddings", *index)
    assert code == 0
    assert [line for line in err.splitlines() if line.startswith("left out ")] == lines
    assert "left out unread 2 folders (output 2), 2 files matched by a .gitignore" in " ".join(err.replace("│", " ").split())
    code, out, _ = run(capsys, "index", str(repo), "--defer-embeddings", "--json", *index)
    report = json.loads(out)
    assert report["files"] == 3 and report["pruned"] == pruned and report["gitignored_files"] == 2
