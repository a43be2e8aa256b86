"""The walker: ignore rules, secrets never read, skips with reasons, symlink loops."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeqa.errors import RepoNotFoundError
from codeqa.files import walk_repository
from conftest import FIXTURE_REPO


def test_fixture_repo_files_and_skips():
    result = walk_repository(FIXTURE_REPO)
    paths = [f.path for f in result.files]
    assert "encoders/encoder.py" in paths and "web/app.ts" in paths and "java/com/example/Greeter.java" in paths
    assert "docs/guide.md" in paths
    assert "generated/out.py" not in paths  # .gitignore
    skipped = {s.path: s.reason for s in result.skipped}
    assert skipped[".env"] == "secret"
    assert skipped["weird.py"] == "binary"  # NUL bytes behind a source extension
    assert skipped["docs/logo.png"] == "binary"
    langs = {f.path: f.language for f in result.files}
    assert langs["web/app.ts"] == "typescript" and langs["encoders/encoder.py"] == "python" and langs["docs/guide.md"] is None
    assert paths == sorted(paths)


def test_rules(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("*.log\n/top_only.py\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("local.py\n")
    (tmp_path / "sub" / "local.py").write_text("x = 1\n")
    (tmp_path / "sub" / "kept.py").write_text("x = 1\n")
    (tmp_path / "sub" / "top_only.py").write_text("x = 1\n")  # anchored pattern applies at the root only
    (tmp_path / "top_only.py").write_text("x = 1\n")
    (tmp_path / "debug.log").write_text("log\n")
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")
    (tmp_path / "package-lock.json").write_text("{}\n")
    (tmp_path / "app.min.js").write_text("var a=1;\n")
    (tmp_path / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (tmp_path / "server.pem").write_text("secret\n")
    (tmp_path / "aws_credentials.json").write_text("{}\n")
    (tmp_path / ".env.local").write_text("TOKEN=1\n")
    (tmp_path / "big.py").write_text("x = 1\n" * 200)
    (tmp_path / "latin1.py").write_bytes("s = 'caf\xe9'\n".encode("latin-1"))
    (tmp_path / "bundle.js").write_text("var a=1;" * 3000)  # one long generated line
    (tmp_path / "empty.py").write_text("")
    result = walk_repository(tmp_path, max_bytes=1000)
    paths = {f.path for f in result.files}
    assert paths == {"sub/kept.py", "sub/top_only.py", "empty.py"}
    skipped = {s.path: s.reason for s in result.skipped}
    for secret in ("id_rsa", "server.pem", "aws_credentials.json", ".env.local"):
        assert skipped[secret] == "secret"
    assert skipped["big.py"] == "too-large"
    assert skipped["latin1.py"] == "undecodable"
    assert skipped["package-lock.json"] == "generated" and skipped["app.min.js"] == "generated"
    assert skipped["bundle.js"] in ("minified", "too-large")


def test_secret_files_are_never_opened(tmp_path: Path, monkeypatch):
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    opened = []
    real = Path.read_bytes

    def spy(self):
        opened.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    walk_repository(tmp_path)
    assert opened == ["a.py"]


def test_symlink_loop_terminates(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("def f(): pass\n")
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    os.symlink(tmp_path / "missing", tmp_path / "dangling.py")
    result = walk_repository(tmp_path)
    assert [f.path for f in result.files] == ["a/x.py"]
    assert any(s.reason == "symlink-loop" for s in result.skipped)


def test_missing_repo_errors(tmp_path: Path):
    with pytest.raises(RepoNotFoundError, match="does not exist"):
        walk_repository(tmp_path / "nope")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(RepoNotFoundError, match="not a directory"):
        walk_repository(tmp_path / "file.txt")
