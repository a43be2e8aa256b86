"""The walker: ignore rules, secrets never read, skips with reasons, symlink loops."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codeqa.indexing.walk import walk_repository
from codeqa.indexing.prune import OUTPUT_NAMES
from conftest import FIXTURE_REPO, copy_fixture_repo, remove_deep_tree


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


def test_codeqaignore_like_gitignore(tmp_path: Path):
    """.codeqaignore at the root and nested, with .gitignore's syntax (negation, anchoring, folders);
    what it leaves out is reported as skipped with its own reason, a folder once."""
    repo = copy_fixture_repo(tmp_path / "repo")
    before = {f.path for f in walk_repository(repo).files}
    (repo / ".codeqaignore").write_text("# vendored, kept in git\nweb/\n*.java\n!Greeter.java\n/broken.py\n")
    (repo / "app" / ".codeqaignore").write_text("legacy.py\n")
    (repo / "encoders" / "broken.py").write_text("x = 1\n")  # /broken.py is anchored to the root
    result = walk_repository(repo)
    paths = {f.path for f in result.files}
    left_out = {"web/app.ts", "web/util.ts", "java/com/example/App.java", "broken.py", "app/legacy.py"}
    assert paths == (before - left_out) | {"encoders/broken.py"}
    skipped = {s.path: (s.reason, s.detail) for s in result.skipped}
    assert skipped["web"] == ("codeqaignore", "folder")
    for path in ("java/com/example/App.java", "broken.py", "app/legacy.py"):
        assert skipped[path] == ("codeqaignore", "")
    assert "java/com/example/Greeter.java" in paths  # negated
    # .gitignore still applies, silently (expected), and is recorded for the dry run to size
    assert "generated/out.py" not in paths and "generated" not in skipped
    assert {(p.path, p.reason) for p in result.pruned} >= {("generated", "gitignore")}


def test_codeqaignore_nested_applies_below_its_folder(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / ".codeqaignore").write_text("data/\nx.py\n")
    for folder in ("a", "b"):
        (tmp_path / folder / "x.py").write_text("x = 1\n")
        (tmp_path / folder / "data").mkdir()
        (tmp_path / folder / "data" / "y.py").write_text("y = 1\n")
    (tmp_path / "node_modules").mkdir()
    result = walk_repository(tmp_path)
    assert [f.path for f in result.files] == ["b/data/y.py", "b/x.py"]
    assert [(s.path, s.reason) for s in result.skipped] == [("a/.codeqaignore", "not-source"), ("a/data", "codeqaignore"),
                                                             ("a/x.py", "codeqaignore")]
    assert [(p.path, p.reason) for p in result.pruned] == [("node_modules", "ignored-dir")]


def test_secret_files_are_never_opened(tmp_path: Path, monkeypatch):
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "deploy.key").write_text("-----BEGIN PRIVATE KEY-----\n")
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("Host x\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    opened = []
    real = os.open

    def spy(path, *args, **kwargs):
        opened.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    result = walk_repository(tmp_path)
    assert [n for n in opened if n != ".gitignore"] == ["a.py"]
    assert {s.path: s.reason for s in result.skipped} == {".env": "secret", "deploy.key": "secret", ".ssh/config": "secret"}


def test_symlink_loop_terminates(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("def f(): pass\n")
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    os.symlink(tmp_path / "missing", tmp_path / "dangling.py")
    result = walk_repository(tmp_path)
    assert [f.path for f in result.files] == ["a/x.py"]
    assert {s.path: s.reason for s in result.skipped} == {"a/loop": "symlink-loop", "dangling.py": "broken-symlink"}


def test_special_files_outside_links_and_bad_names(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwords.py").write_text("PASSWORD = 'x'\n")
    (repo / "inner").mkdir()
    (repo / "inner" / "real.py").write_text("def real(): pass\n")
    os.symlink(outside / "passwords.py", repo / "linked.py")  # a file link leaving the repository
    os.symlink(outside, repo / "linked_dir")  # a folder link leaving it
    os.symlink(repo / "inner" / "real.py", repo / "alias.py")  # a link inside it is followed
    os.mkfifo(repo / "pipe.py")  # would block a reader forever
    (repo / os.fsdecode(b"caf\xe9.py")).write_text("x = 1\n")  # a name that is not UTF-8
    result = walk_repository(repo)
    assert [f.path for f in result.files] == ["alias.py", "inner/real.py"]
    skipped = {s.path: s.reason for s in result.skipped}
    assert skipped == {"linked.py": "outside-repo", "linked_dir": "outside-repo", "pipe.py": "special-file",
                       "caf\ufffd.py": "bad-name"}


def test_very_deep_folders(tmp_path: Path):
    """Deeper than Python's recursion limit: the walk is iterative."""
    path = str(tmp_path)
    for _ in range(1200):
        path += "/d"
        os.mkdir(path)
    with open(path + "/deepest.py", "w") as handle:
        handle.write("def deepest(): pass\n")
    try:
        result = walk_repository(tmp_path)
        assert [f.path for f in result.files] == ["d/" * 1200 + "deepest.py"]
    finally:
        remove_deep_tree(tmp_path / "d")


def _without_file_capabilities():  # runs in the child before exec
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH: what lets root read a chmod 000 file
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="drops Linux capabilities when run as root")
def test_unreadable_file_and_folder_are_reported(tmp_path: Path):
    """chmod 000 does not stop root, so as root the walk runs in a child without the capabilities that let it read anyway."""
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "locked.py").write_text("x = 2\n")
    (tmp_path / "locked.py").chmod(0)
    (tmp_path / "closed").mkdir()
    (tmp_path / "closed" / "inside.py").write_text("x = 3\n")
    (tmp_path / "closed").chmod(0)
    code = ("import json, sys; from codeqa.indexing.walk import walk_repository; r = walk_repository(sys.argv[1]);"
            "print(json.dumps([[f.path for f in r.files], {s.path: [s.reason, s.detail] for s in r.skipped}]))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    preexec = _without_file_capabilities if os.geteuid() == 0 else None
    try:
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env,
                             preexec_fn=preexec)
    finally:
        (tmp_path / "closed").chmod(0o755)  # so pytest can clean up
    assert out.returncode == 0, out.stderr
    files, skipped = json.loads(out.stdout)
    assert files == ["ok.py"]
    assert skipped == {"locked.py": ["unreadable", "EACCES"], "closed": ["unreadable", "EACCES"]}


# ---- folders named like output (prune.py) -----------------------------------------------------

def _sources_in_output_named_folders(root: Path) -> set[str]:
    """Every name of prune.OUTPUT_NAMES used as a source folder: a Python package at the top (as coverage.py's
    coverage/), a package deeper down (as pip's operations/build/), and Go files in a folder without a
    package marker. Returns the paths the walk must read."""
    paths = {"main.py": "from build import control\n"}
    for name in sorted(OUTPUT_NAMES):
        paths[f"{name}/__init__.py"] = ""
        paths[f"{name}/control.py"] = f"def {name}_control(): pass\n"
        paths[f"pkg/{name}/__init__.py"] = ""
        paths[f"pkg/{name}/wheel.py"] = f"from pkg.{name} import x\n"
        paths[f"cmd/{name}/main.go"] = f"package {name}\n"
    for rel, text in paths.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return set(paths)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_folders_named_like_output_that_hold_source_are_read(tmp_path: Path):
    """Outside git (an sdist, a copied folder): nothing in these folders shows it is output."""
    expected = _sources_in_output_named_folders(tmp_path)
    result = walk_repository(tmp_path)
    assert {f.path for f in result.files} == expected
    assert result.pruned == [] and result.skipped == []


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")
def test_in_a_git_work_tree_what_git_lists_is_read_whatever_its_folder_is_called(tmp_path: Path):
    """A .gitignore of GitHub's Python template (`build/`, `dist/` at any depth) over folders git tracks (added
    before the rule, or with -f): git's listing wins, as in git itself. Untracked files that are not ignored
    are read too; what the .gitignore matches and git does not track is counted, not read."""
    expected = _sources_in_output_named_folders(tmp_path)
    (tmp_path / "tools" / "target" / "debug").mkdir(parents=True)  # Cargo's layout outside git, but git tracks it
    (tmp_path / "tools" / "target" / "debug" / "probe.rs").write_text("fn probe() {}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    (tmp_path / ".gitignore").write_text("build/\ndist/\n*.log\n")
    (tmp_path / "pkg" / "build" / "debug.log").write_text("log\n")  # ignored, untracked
    (tmp_path / "new.py").write_text("x = 1\n")  # untracked, not ignored
    result = walk_repository(tmp_path)
    assert {f.path for f in result.files} == expected | {"tools/target/debug/probe.rs", "new.py"}
    assert [(p.path, p.reason) for p in result.pruned] == [(".git", "ignored-dir")]
    assert result.gitignored == ["pkg/build/debug.log"]


def test_output_folders_are_pruned_once_each_with_their_evidence(tmp_path: Path):
    made = {
        "venv/pyvenv.cfg": "home = /usr/bin\n", "venv/lib/python3.11/site-packages/six.py": "x = 1\n",
        "build/lib.linux-x86_64-3.11/pkg/__init__.py": "", "build/lib.linux-x86_64-3.11/pkg/core.py": "x = 1\n",
        "target/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n", "target/debug/main.rs": "fn main() {}\n",
        "pkg/target/release/lib.rs": "fn f() {}\n", "dist/pkg-1.0-py3-none-any.whl": "PK", "dist/pkg-1.0.tar.gz": "gz",
        "coverage/lcov.info": "TN:\n", "coverage/lcov-report/index.html": "<html></html>\n",
        "web/out/App.class": "\xca\xfe", "env/.gitignore": "# created by uv\n*\n", "env/x.py": "x = 1\n",
        "vendor/modules.txt": "# example.com/m v1.0.0\n", "vendor/example.com/m/m.go": "package m\n",
        "node_modules/left-pad/index.js": "module.exports = 1\n", ".tox/py311/x.py": "x = 1\n",
        "src/app.py": "import six\n",
        "web/package.json": '{"name": "web", "main": "./lib/index.js", "exports": {".": {"import": "./build/esm/index.js"}}}',
        "web/build/esm/index.js": "export const x = 1;\n", "web/lib/index.js": "module.exports = 1;\n",
    }
    for rel, text in made.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = walk_repository(tmp_path)
    assert [f.path for f in result.files] == ["src/app.py", "web/lib/index.js", "web/package.json"]
    assert result.skipped == []  # nothing inside a pruned folder is listed file by file
    assert [(p.path, p.reason, p.detail) for p in result.pruned] == [
        (".tox", "ignored-dir", ""),
        ("build", "output", "setuptools build, lib.linux-x86_64-3.11/"),
        ("coverage", "output", "coverage report, lcov.info"),
        ("dist", "output", "only packages and bundles"),
        ("env", "output", "its own .gitignore ignores everything in it"),
        ("node_modules", "ignored-dir", ""),
        ("pkg/target", "output", "Cargo or Maven build, release/"),
        ("target", "output", "cache, CACHEDIR.TAG"),
        ("vendor", "output", "Go vendored modules, modules.txt"),
        ("venv", "output", "virtualenv, pyvenv.cfg"),
        ("web/build", "output", "npm package build, package.json's exports points into it"),
        ("web/out", "output", "no source files"),
    ]


def test_walking_again_the_paths_a_watcher_named_equals_a_whole_walk(tmp_path: Path):
    """files.walk_again (a watcher's runs): a file saved, one deleted, one made minified and an editor's
    temporary file gone give what a whole walk gives; a new file, a renamed one and an ignore file
    need a whole walk (None)."""
    from codeqa.indexing.walk import walk_again

    repo = copy_fixture_repo(tmp_path / "repo")
    first = walk_repository(repo)
    paths = [f.path for f in first.files if f.path.endswith(".py")]
    saved, deleted, bundled = paths[0], paths[1], paths[2]
    (repo / saved).write_text((repo / saved).read_text() + "\n\ndef added():\n    return 1\n")
    (repo / deleted).unlink()
    (repo / bundled).write_text("x = 1;" * 2000)
    again = walk_again(repo, first, {saved, deleted, bundled, "app/.formatting.py.swp"}, 1_000_000)
    whole = walk_repository(repo)
    assert again is not None and again.files == whole.files and again.skipped == whole.skipped
    assert next(f for f in again.files if f.path == saved).sha256 != next(f for f in first.files if f.path == saved).sha256
    (repo / "app" / "new.py").write_text("def new():\n    return 2\n")
    assert walk_again(repo, whole, {"app/new.py"}, 1_000_000) is None
    (repo / saved).rename(repo / "app" / "renamed.py")
    assert walk_again(repo, whole, {saved, "app/renamed.py"}, 1_000_000) is None
    (repo / ".gitignore").write_text("*.log\n")
    assert walk_again(repo, whole, {".gitignore"}, 1_000_000) is None
