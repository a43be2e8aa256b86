"""Workspaces (issue 66): the file a person edits (round-trip through the TOML writer, clear errors that name it),
`codeqa workspace add|list|remove`, and `index`, `search` and `refs` with --workspace over real fixture repos,
real indexes and the real CLI entry point."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from codeqa.cli import main
from codeqa.config import Settings
from codeqa.types import Hit
from codeqa.workspace import Repository, Workspace, dump_workspace, parse_workspace, workspaces_dir
from conftest import FIXTURES, copy_fixture_repo


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """Workspaces kept under the test's folder, never the user's ~/.config."""
    folder = tmp_path / "workspaces"
    monkeypatch.setenv("CODEQA_WORKSPACES_DIR", str(folder))
    return folder


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---- the file ---------------------------------------------------------------------------------

ODD = ["/src/with space", '/src/a"quote', "/src/back\\slash", "/src/ünïcödé/日本", "/src/tab\there", "/src/new\nline",
       "/src/del\x7fx", "/src/bell\x07", "/src/'single'", "/src/#hash = [x]"]


def _roundtrip(workspace: Workspace) -> Workspace:
    return parse_workspace(dump_workspace(workspace), workspace.name, workspace.file)


@pytest.mark.parametrize("odd", ODD)
def test_odd_paths_and_names_round_trip_through_the_file(tmp_path, odd):
    workspace = Workspace("w", (Repository(odd.rsplit("/", 1)[1], Path(odd), Path(odd + "-index")),), tmp_path / "w.toml")
    assert _roundtrip(workspace) == workspace


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30), min_size=1, max_size=4,
                unique=True))
def test_any_text_round_trips(names):
    repositories = tuple(Repository(n if n.strip() else "x" + n, Path("/r") / f"p{i}{n.replace('/', '')}")
                         for i, n in enumerate(names))
    if len({r.name for r in repositories}) < len(repositories):
        return
    workspace = Workspace("w", repositories, Path("/cfg/w.toml"))
    assert _roundtrip(workspace) == workspace


def test_workspaces_live_under_xdg_config_home_unless_set(tmp_path):
    assert workspaces_dir(Settings.load(env={"XDG_CONFIG_HOME": str(tmp_path)})) == tmp_path / "codeqa" / "workspaces"
    chosen = Settings.load(env={"XDG_CONFIG_HOME": str(tmp_path), "CODEQA_WORKSPACES_DIR": str(tmp_path / "w")})
    assert workspaces_dir(chosen) == tmp_path / "w"
    assert workspaces_dir(Settings.load(env={})) == Path.home() / ".config" / "codeqa" / "workspaces"


# ---- codeqa workspace add | list | remove -------------------------------------------------------

def test_add_list_remove(capsys, home, tmp_path):
    first = copy_fixture_repo(tmp_path / "a" / "shop")
    second = copy_fixture_repo(tmp_path / "b" / "shop")  # the same folder name: made unique, and said so
    spaced = copy_fixture_repo(tmp_path / "my 'odd' \"repo\"")
    code, out, _ = run(capsys, "workspace", "add", "team", first, second, spaced)
    assert code == 0 and f"Created workspace team ({home / 'team.toml'})" in out
    assert "as shop-2 (the name 'shop' was taken)" in out
    code, out, _ = run(capsys, "workspace", "add", "team", first)
    assert code == 0 and "is already in workspace team as shop" in out
    code, out, _ = run(capsys, "workspace", "list", "team", "--json")
    listed = json.loads(out)
    assert code == 0 and listed["name"] == "team" and listed["file"] == str(home / "team.toml")
    assert [(r["name"], r["path"], r["exists"]) for r in listed["repositories"]] == [
        ("shop", str(first), True), ("shop-2", str(second), True), ("my 'odd' \"repo\"", str(spaced), True)]
    code, out, _ = run(capsys, "workspace", "list")
    assert code == 0 and "team  3 repositories" in out and "shop-2" in out
    code, out, _ = run(capsys, "workspace", "list", "--json")
    assert [w["name"] for w in json.loads(out)] == ["team"]
    code, out, _ = run(capsys, "workspace", "remove", "team", second)
    assert code == 0 and "Removed shop-2" in out
    code, out, _ = run(capsys, "workspace", "remove", "team", "my 'odd' \"repo\"")  # by its name too
    assert code == 0
    code, out, _ = run(capsys, "workspace", "list", "team", "--json")
    assert [r["name"] for r in json.loads(out)["repositories"]] == ["shop"]
    shutil.rmtree(first)
    code, out, _ = run(capsys, "workspace", "list", "team")
    assert code == 0 and "(missing: the folder is gone)" in out
    code, _, err = run(capsys, "workspace", "add", "team", second, spaced, "--index-dir", tmp_path / "idx")
    assert code == 2 and "--index-dir names one index folder" in err
    code, _, _ = run(capsys, "workspace", "add", "team", second, "--index-dir", tmp_path / "idx")
    code, out, _ = run(capsys, "workspace", "list", "team", "--json")
    assert code == 0 and json.loads(out)["repositories"][-1]["index_dir"] == str(tmp_path / "idx")


def test_a_hand_edited_file_is_read(capsys, home, tmp_path):
    repo = copy_fixture_repo(tmp_path / "repo")
    home.mkdir()
    (home / "edited.toml").write_text('# mine\n[[repository]]\nname = "main"\npath = "../repo"\n'
                                      'index_dir = "~/idx"\n', encoding="utf-8")
    code, out, _ = run(capsys, "workspace", "list", "edited", "--json")
    assert code == 0
    (entry,) = json.loads(out)["repositories"]
    assert entry["path"] == str(repo) and entry["index_dir"] == str(Path.home() / "idx")


@pytest.mark.parametrize("text, message", [
    ("[[repository]\nname = 1", "is not valid TOML"),
    ('[[repository]]\nname = "a"\n', "repository 1: `path` must be a non-empty string"),
    ('[[repository]]\nname = "a"\npath = "/x"\n[[repository]]\nname = "a"\npath = "/y"\n', "the name 'a' is used twice"),
    ('[[repository]]\nname = "a"\npath = "/x"\nbranch = "main"\n', "unknown key 'branch'"),
    ('repositories = []\n', "unknown key 'repositories'"),
])
def test_a_malformed_file_is_refused_naming_it(capsys, home, text, message):
    home.mkdir()
    (home / "bad.toml").write_text(text, encoding="utf-8")
    for argv in (("workspace", "list", "bad"), ("search", "q", "--workspace", "bad"), ("refs", "X", "--workspace", "bad")):
        code, out, err = run(capsys, *argv)
        assert code == 2 and not out and str(home / "bad.toml") in err and message in err, (argv, err)
        assert "Traceback" not in err


def test_usage_errors_say_what_to_do(capsys, home, tmp_path):
    code, _, err = run(capsys, "search", "q", "--workspace", "nowhere")
    assert code == 2 and "No workspace named 'nowhere'" in err and str(home / "nowhere.toml") in err
    assert "codeqa workspace add nowhere PATH" in err
    code, _, err = run(capsys, "workspace", "add", "w", tmp_path / "missing")
    assert code == 2 and "does not exist" in err and not (home / "w.toml").exists()
    code, _, err = run(capsys, "workspace", "add", "../escape", tmp_path)
    assert code == 2 and "is not a workspace name" in err
    run(capsys, "workspace", "add", "w", tmp_path)
    code, _, err = run(capsys, "workspace", "remove", "w", tmp_path / "other")
    assert code == 2 and "is not in workspace 'w'" in err
    code, _, err = run(capsys, "search", "q", "--workspace", "w", "--index-dir", tmp_path / "idx")
    assert code == 2 and "--index-dir" in err and "index_dir" in err
    code, _, err = run(capsys, "search", "q", "--workspace", "w", "--repo", "nope")
    assert code == 2 and "has no repository named 'nope'" in err
    code, _, err = run(capsys, "index", tmp_path, "--workspace", "w")
    assert code == 2 and "not both" in err
    with pytest.raises(SystemExit) as exited:  # neither a repository nor a workspace
        main(["refs", "X"])
    assert exited.value.code == 2 and "required: --repo (or --workspace NAME)" in capsys.readouterr().err


# ---- one ranking -----------------------------------------------------------------------------------

def _hits(prefix: str, scores: list[float]) -> list[Hit]:
    return [Hit(f"{prefix}{i}.py", 1, 2, s, "function", None, "x\n") for i, s in enumerate(scores)]


def test_the_ranking_is_by_score_so_a_big_repository_does_not_drown_a_small_one_by_count():
    from codeqa.query.workspace import merge

    big = _hits("big", [0.5 - i * 0.01 for i in range(10)])  # many hits, none matching as well as the small one's first
    small = _hits("small", [0.7, 0.3])
    merged = merge([("big", big), ("small", small)], top_k=4)
    assert [(h.repository, h.hit.path) for h in merged] == [
        ("small", "small0.py"), ("big", "big0.py"), ("big", "big1.py"), ("big", "big2.py")]
    tied = merge([("small", _hits("small", [0.5])), ("big", big)], top_k=2)  # equal scores: the workspace's order
    assert [(h.repository, h.hit.path) for h in tied] == [("small", "small0.py"), ("big", "big0.py")]


# ---- the commit an index reflects ------------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def git_commit_all(repo: Path) -> Path:
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    return repo


def test_the_commit_and_whether_the_work_tree_differs(tmp_path):
    from codeqa.indexing.state import repository_commit

    assert repository_commit(copy_fixture_repo(tmp_path / "plain")) is None  # not in git
    repo = git_commit_all(copy_fixture_repo(tmp_path / "repo"))
    head = git(repo, "rev-parse", "HEAD").strip()
    assert repository_commit(repo) == {"commit": head, "dirty": False}
    (repo / "app" / "new.py").write_text("x = 1\n")  # a new file the index would hold
    assert repository_commit(repo) == {"commit": head, "dirty": True}
    (repo / "app" / "new.py").unlink()
    (repo / "app" / "main.py").write_text("changed = True\n")
    assert repository_commit(repo) == {"commit": head, "dirty": True}
    assert repository_commit(repo / "encoders") == {"commit": head, "dirty": False}  # a clean sub-folder of it


def test_reading_the_commit_runs_no_filter_the_repository_configures(tmp_path):
    from codeqa.indexing.state import repository_commit

    repo = copy_fixture_repo(tmp_path / "repo")
    (repo / ".gitattributes").write_text("* filter=evil\n")
    git_commit_all(repo)
    marker = tmp_path / "ran"
    for setting in ("clean", "process"):
        git(repo, "config", f"filter.evil.{setting}", f"touch {marker}; cat")
        os.utime(repo / "app" / "main.py", (1, 1))  # stat differs from git's index: git reads the file again
        assert repository_commit(repo)["dirty"] is False and not marker.exists(), setting
        if setting == "clean":  # plain git would run it (a `process` filter it may skip: its handshake fails)
            subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True)
            assert marker.exists(), setting
            marker.unlink()
        git(repo, "config", "--unset", f"filter.evil.{setting}")


# ---- across real indexes --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def indexed_workspace(tmp_path_factory, embedder):
    """Workspace `team`: the fixture repo and the pyrefs fixture, indexed by `codeqa index --workspace team`,
    plus `gone`, whose folder was removed after it was added (its index run fails; the others go on)."""
    root = tmp_path_factory.mktemp("ws")
    patch = pytest.MonkeyPatch()
    patch.setenv("CODEQA_WORKSPACES_DIR", str(root / "workspaces"))
    shop = git_commit_all(copy_fixture_repo(root / "shop"))
    cars = shutil.copytree(FIXTURES / "pyrefs", root / "cars")
    gone = copy_fixture_repo(root / "gone")
    assert main(["workspace", "add", "team", str(shop), str(cars), str(gone)]) == 0
    shutil.rmtree(gone)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["index", "--workspace", "team", "--json"])
    yield root, shop, cars, code, json.loads(out.getvalue())
    patch.undo()


def test_index_indexes_each_repository_and_reports_a_bad_one(capsys, indexed_workspace, monkeypatch):
    root, shop, cars, code, records = indexed_workspace
    assert code == 2  # the missing folder: bad input, said by name; the others were indexed
    assert [r["repository"] for r in records] == ["shop", "cars", "gone"]
    assert records[0]["files"] == 13 and records[1]["files"] > 3 and records[1]["repo"] == str(cars)
    assert "is not a folder" in records[2]["error"] and "team.toml" in records[2]["error"]
    settings = Settings.load()
    assert settings.index_dir_for(shop).is_dir() and settings.index_dir_for(cars).is_dir()
    monkeypatch.setenv("CODEQA_WORKSPACES_DIR", str(root / "workspaces"))
    code, out, err = run(capsys, "index", "--workspace", "team")  # again, as a person sees it: progress per repository
    text = " ".join(err.split())
    assert code == 2 and not out
    assert text.index("[1/3] shop") < text.index("Index up to date") < text.index("[2/3] cars") < text.index("[3/3] gone")
    assert "error gone:" in text and "Indexed 2 of 3 repositories of team; failed: gone" in text


def test_search_ranks_every_repository_as_one_and_names_each_hit(capsys, indexed_workspace, monkeypatch):
    """The workspace's list is each repository's own `search --repo` list, merged by score: the same records,
    with `repository` before `path`, and nothing of a repository that its own search would not have shown."""
    root, shop, cars, _, _ = indexed_workspace
    monkeypatch.setenv("CODEQA_WORKSPACES_DIR", str(root / "workspaces"))
    query = "what kind of vehicle is it"
    code, out, err = run(capsys, "search", query, "--workspace", "team", "--json", "--top-k", "20")
    assert code == 0 and "[gone] left out of the search" in err
    results = json.loads(out)
    alone = {}
    for name, folder in (("shop", shop), ("cars", cars)):
        code, own, _ = run(capsys, "search", query, "--repo", folder, "--json", "--top-k", "20")
        alone[name] = [{"repository": name, **r} for r in json.loads(own)]
    expected = sorted(alone["shop"] + alone["cars"], key=lambda r: -r["score"])[:20]  # a stable sort: shop first on a tie
    assert results == expected
    assert {r["repository"] for r in results} == {"shop", "cars"} and all(list(r)[:2] == ["repository", "path"] for r in results)
    code, out, _ = run(capsys, "search", query, "--workspace", "team", "--repo", "cars", "--json")
    assert code == 0 and json.loads(out) == alone["cars"][:10]
    code, out, _ = run(capsys, "search", "tokenize", "--workspace", "team", "--top-k", "3")
    assert code == 0 and "1. [shop] encoders/encoder.py" in out


def test_refs_lists_the_sites_of_every_repository_grouped_by_repository(capsys, indexed_workspace, monkeypatch):
    root, shop, cars, _, _ = indexed_workspace
    monkeypatch.setenv("CODEQA_WORKSPACES_DIR", str(root / "workspaces"))
    code, out, _ = run(capsys, "refs", "EncoderClass", "--workspace", "team", "--json")
    record = json.loads(out)
    assert code == 0
    assert [(r["repository"], r.get("definitions")) for r in record["repositories"]] == [
        ("shop", 1), ("cars", 0), ("gone", None)]
    assert "codeqa index" in record["repositories"][2]["error"]
    assert {d["repository"] for d in record["definitions"]} == {"shop"}
    assert record["references"] and all(list(r)[:2] == ["repository", "path"] and r["repository"] == "shop"
                                        for r in record["references"])
    code, out, _ = run(capsys, "refs", "EncoderClass", "--workspace", "team")
    assert code == 0 and out.index("[shop]") < out.index("definition  encoders/encoder.py") < out.index("Not defined in cars")
    assert "Not searched: [gone]" in out and "[cars]" not in out
    code, _, err = run(capsys, "refs", "NoSuchName", "--workspace", "team")
    assert code == 2 and "no symbol named 'NoSuchName' in workspace team" in err


class RecordingEmbedder:
    """The session's real model, recording every text it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.model_id, self.dimension, self.texts = inner, inner.model_id, inner.dimension, []

    def encode(self, texts, batch_size=64):
        self.texts.extend(texts)
        return self.inner.encode(texts, batch_size=batch_size)


def test_one_search_embeds_its_query_once_for_every_repository(indexed_workspace, embedder, monkeypatch):
    from codeqa.query.workspace import WorkspaceSearcher
    from codeqa.workspace import load_workspace

    root, *_ = indexed_workspace
    monkeypatch.setenv("CODEQA_WORKSPACES_DIR", str(root / "workspaces"))
    settings = Settings.load()
    workspace = load_workspace("team", settings)
    recording = RecordingEmbedder(embedder)
    with WorkspaceSearcher.open(workspace, settings, recording) as searcher:
        assert [name for name, _ in searcher.retrievers] == ["shop", "cars"]
        hits = searcher.search("split text into lowercase words", top_k=5)
    assert hits and {h.repository for h in hits} <= {"shop", "cars"}
    assert recording.texts.count("split text into lowercase words") == 1


def test_list_shows_the_commit_each_index_reflects(capsys, indexed_workspace, monkeypatch):
    root, shop, cars, _, _ = indexed_workspace
    monkeypatch.setenv("CODEQA_WORKSPACES_DIR", str(root / "workspaces"))
    code, out, _ = run(capsys, "workspace", "list", "team", "--json")
    listed = {r["name"]: r for r in json.loads(out)["repositories"]}
    assert code == 0
    assert (listed["shop"]["indexed"], listed["shop"]["commit"], listed["shop"]["dirty"]) == (
        True, git(shop, "rev-parse", "HEAD").strip(), False)
    assert (listed["cars"]["indexed"], listed["cars"]["commit"]) == (True, None)  # not in git
    assert (listed["gone"]["exists"], listed["gone"]["indexed"]) == (False, False)
    code, out, _ = run(capsys, "workspace", "list", "team")
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert git(shop, "rev-parse", "HEAD").strip()[:12] in lines["shop"] and "+dirty" not in lines["shop"]
    assert "commit unknown" in lines["cars"] and "not indexed" in lines["gone"]
