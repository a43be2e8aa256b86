"""What the walk must never read, whatever a path is called: secret and ignore rules on what a link points
to, git's own excludes (`.git/info/exclude`, `core.excludesFile`), and credentials without digits blanked.

git runs with HOME and XDG_CONFIG_HOME pointed at the test's folders: the user's own git config is never read."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from codeqa.indexing.walk import walk_repository
from codeqa.redact import redact, redact_source

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _indexed(root: Path) -> set[str]:
    return {f.path for f in walk_repository(root).files}


# ---- links: the rules look at the target too ------------------------------------------------------------


def test_a_link_with_an_innocent_name_to_a_secret_file_is_not_read(tmp_path: Path, monkeypatch):
    _write(tmp_path, {"id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
                      ".env": "DB_PASSWORD=supersecretvalue\n", "app.py": "x = 1\n"})
    os.symlink("id_rsa", tmp_path / "notes.txt")
    os.symlink(".env", tmp_path / "config.md")
    os.symlink(tmp_path / "id_rsa", tmp_path / "key_copy.txt")  # an absolute link to the same file
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(os.fspath(path)) or real_open(path, *a, **k))
    result = walk_repository(tmp_path)
    assert {f.path for f in result.files} == {"app.py"}
    skipped = {s.path: s.reason for s in result.skipped}
    assert {k: skipped[k] for k in ("notes.txt", "config.md", "key_copy.txt")} == dict.fromkeys(
        ("notes.txt", "config.md", "key_copy.txt"), "secret")
    assert not any(os.path.basename(p) in ("notes.txt", "config.md", "key_copy.txt", "id_rsa", ".env") for p in opened)


def test_a_link_into_a_secret_folder_is_not_read(tmp_path: Path):
    _write(tmp_path, {".ssh/config": "Host prod\n  IdentityFile ~/.ssh/deploy\n", ".aws/config.md": "[default]\n",
                      "app.py": "x = 1\n"})
    os.symlink(".ssh", tmp_path / "sshconf")  # a folder link: its files are .ssh's
    os.symlink(".aws/config.md", tmp_path / "aws.md")
    assert _indexed(tmp_path) == {"app.py"}


def test_a_link_to_an_ignored_file_is_left_out_like_the_file(tmp_path: Path):
    _write(tmp_path, {".gitignore": "private/\n*.local.md\n", "private/notes.md": "# mine\n",
                      "draft.local.md": "# draft\n", ".codeqaignore": "vendored/\n", "vendored/lib.py": "x = 1\n",
                      "sub/.gitignore": "hidden.py\n", "sub/hidden.py": "y = 2\n", "app.py": "x = 1\n"})
    os.symlink("private/notes.md", tmp_path / "public.md")
    os.symlink("draft.local.md", tmp_path / "draft.md")
    os.symlink("vendored/lib.py", tmp_path / "lib.py")
    os.symlink("sub/hidden.py", tmp_path / "shown.py")  # ignored by the .gitignore of the target's folder
    os.symlink("private", tmp_path / "open")  # a folder link to an ignored folder
    os.symlink("app.py", tmp_path / "alias.py")  # a link to a file that is read is still followed
    assert _indexed(tmp_path) == {"app.py", "alias.py"}


def test_a_link_out_of_the_repository_is_still_refused(tmp_path: Path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    _write(outside, {"notes.py": "TOKEN = 1\n"})
    _write(repo, {"app.py": "x = 1\n"})
    os.symlink(outside / "notes.py", repo / "notes.py")
    result = walk_repository(repo)
    assert {f.path for f in result.files} == {"app.py"}
    assert {s.path: s.reason for s in result.skipped} == {"notes.py": "outside-repo"}


# ---- git's excludes ---------------------------------------------------------------------------------------


@pytest.fixture
def git_home(tmp_path: Path, monkeypatch) -> Path:
    """A HOME and XDG_CONFIG_HOME of the test's own, for git and for the walk's fallback."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    for name in [n for n in os.environ if n.startswith("GIT_")]:  # GIT_CONFIG_GLOBAL would name the user's file
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    return home


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@needs_git
def test_git_info_exclude_is_honoured(tmp_path: Path, git_home: Path):
    repo = tmp_path / "repo"
    _write(repo, {"app.py": "x = 1\n", "scratch/try.py": "y = 2\n", "notes.md": "# todo\n", "kept.md": "# kept\n"})
    _git(repo, "init", "-q")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("scratch/\n*.md\n")
    (repo / ".gitignore").write_text("!kept.md\n")  # a .gitignore outranks info/exclude, as in git
    assert _indexed(repo) == {"app.py", "kept.md"}


@needs_git
def test_the_global_excludes_file_is_honoured(tmp_path: Path, git_home: Path):
    repo = tmp_path / "repo"
    _write(repo, {"app.py": "x = 1\n", "mine.py": "y = 2\n", "notes.org.md": "# x\n", "tracked.py": "z = 3\n"})
    _git(repo, "init", "-q")
    _git(repo, "add", "tracked.py")
    (git_home / ".config" / "git").mkdir()
    (git_home / ".config" / "git" / "ignore").write_text("mine.py\n")  # git's default place for it
    assert _indexed(repo) == {"app.py", "notes.org.md", "tracked.py"}
    (git_home / "my-excludes").write_text("*.org.md\ntracked.py\n")
    _git(repo, "config", "--global", "core.excludesFile", "~/my-excludes")  # written to $HOME/.gitconfig
    assert (git_home / ".gitconfig").is_file()
    # the configured file replaces the default one; a file git tracks is read whatever it matches
    assert _indexed(repo) == {"app.py", "mine.py", "tracked.py"}


def test_excludes_are_read_without_the_git_command(tmp_path: Path, git_home: Path, monkeypatch):
    """No git on PATH: .git/info/exclude and the XDG default are still read as files."""
    repo = tmp_path / "repo"
    _write(repo, {"app.py": "x = 1\n", "local.py": "y = 2\n", "mine.py": "z = 3\n",
                  ".git/info/exclude": "local.py\n", ".git/HEAD": "ref: refs/heads/main\n"})
    _write(git_home, {".config/git/ignore": "mine.py\n"})
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert _indexed(repo) == {"app.py"}


# ---- redaction of values that have no digit ---------------------------------------------------------------


@pytest.mark.parametrize("line, secret", [
    ("DB_PASSWORD=supersecretvalue", "supersecretvalue"),
    ("export API_TOKEN=correcthorsebattery", "correcthorsebattery"),
    ("ENV DB_PASSWORD=supersecretvalue", "supersecretvalue"),
    ("  - POSTGRES_PASSWORD=supersecretvalue", "supersecretvalue"),
    ("db.password=supersecretvalue", "supersecretvalue"),
    ("password: supersecretvalue", "supersecretvalue"),
    ("  client_secret: correct-horse-battery", "correct-horse-battery"),
    ("SECRET_KEY = hunter!!again", "hunter!!again"),
    ("DB_PASSWORD=hunter22  # rotated monthly", "hunter22"),
])
def test_a_credential_value_without_digits_is_blanked(line, secret):
    redacted = redact_source(f"# settings\n{line}\nDEBUG=1\n")
    assert secret not in redacted and "[REDACTED]" in redacted
    assert redacted.count("\n") == 3 and redacted.endswith("DEBUG=1\n")
    assert secret not in redact_source(f"# settings\r\n{line}\r\nDEBUG=1\r\n")  # Windows line ends


@pytest.mark.parametrize("line", [
    "password = get_password()", "token = None", "password: str", "secret_key: SecretStr",
    "password = user_password", "token: Optional[str] = None", "    password=password,", "api_key = settings.api_key",
    "TOKEN = DEFAULT_TOKEN", "password: string;", "secret: bytes", "token = undefined", "PASSWORD=${DB_PASSWORD}",
    "if token == expected_token:", "    return token", "password_hash = hash_password(password)",
    # seen in site-packages: a JS object's last property, a keyword argument, an annotation, a tokenizer
    "refresh_token: refreshToken", "next_offset_token=response.next_offset_token",
    "access_token_expires_at: datetime.datetime", "onresumptiontoken: options2?.onresumptiontoken",
    "tokenizer: bert-base-uncased", "max_tokens: unlimited",
])
def test_ordinary_code_about_credentials_is_kept(line):
    assert redact(line + "\n") == line + "\n"


def test_a_file_read_through_a_link_is_read_at_its_target_afterwards(tmp_path: Path):
    """The parse reads what the walk judged: a link pointed at a secret after the walk cannot redirect it."""
    _write(tmp_path, {"real.md": "# notes\n", "id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n"})
    os.symlink("real.md", tmp_path / "notes.md")
    files = {f.path: f for f in walk_repository(tmp_path).files}
    os.unlink(tmp_path / "notes.md")
    os.symlink("id_rsa", tmp_path / "notes.md")
    assert files["notes.md"].abs_path.read_text() == "# notes\n"


def test_a_watcher_walking_a_link_again_judges_its_new_target(tmp_path: Path):
    from codeqa.indexing.walk import walk_again

    _write(tmp_path, {"real.md": "# notes\n", ".env": "DB_PASSWORD=supersecretvalue\n"})
    os.symlink("real.md", tmp_path / "notes.md")
    first = walk_repository(tmp_path)
    assert {f.path for f in first.files} == {"notes.md", "real.md"}
    os.unlink(tmp_path / "notes.md")
    os.symlink(".env", tmp_path / "notes.md")  # the event names the link
    again = walk_again(tmp_path, first, ["notes.md"], 1_000_000)
    assert again is not None and {f.path for f in again.files} == {"real.md"}
    assert [(s.path, s.reason, s.detail) for s in again.skipped] == [(".env", "secret", ""),
                                                                     ("notes.md", "secret", "links to .env")]
