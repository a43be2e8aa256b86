"""A server index's identity and its writer: collections named by the git remote (or --index-name), not by
the checkout's path; one writer at a time across machines (the lease in the server); a server that fails
mid-run is a message and exit code 1, not a traceback. Runs talk HTTP to tests/qdrant_stub.py."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time

import numpy as np
import pytest

from codeqa import cli
from codeqa.indexing import index
from codeqa.config import Settings
from codeqa.errors import IndexLockedError, StoreError
from codeqa.indexing.index import index_repo
from codeqa.store.identity import collection_prefix, git_remote, index_identity, normalise_remote
from codeqa.store.lease import WriterLease
from codeqa.store.server import ServerStore
from conftest import copy_fixture_repo
from qdrant_stub import QdrantStub

KINDS = ("chunks", "symbols", "references", "files", "lease")


class HashEmbedder:
    """A unit vector per text, no model: these tests are about where the index goes, not what it finds."""

    model_id, dimension = "hash-8", 8

    def encode(self, texts, batch_size=64):
        rows = [np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).standard_normal(8)
                for t in texts]
        vectors = np.array(rows, dtype="float32").reshape(len(texts), 8)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def qdrant(monkeypatch):
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    with QdrantStub() as stub:
        yield stub


def with_remote(repo, url, name="origin"):
    """A checkout's .git as git writes it (tab-indented keys, a fetch line, another remote after it)."""
    (repo / ".git").mkdir(exist_ok=True)
    (repo / ".git" / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        f'[remote "{name}"]\n\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/{name}/*\n'
        '[remote "zz-mirror"]\n\turl = https://mirror.example/elsewhere.git\n[branch "main"]\n\tremote = origin\n')
    return repo


def prefixes(stub: QdrantStub) -> set[str]:
    return {name.rsplit("_", 1)[0] for name in stub.collections}


# ---- naming -----------------------------------------------------------------------------------------

def test_the_ways_of_writing_one_remote_are_one_name_and_credentials_never_show():
    same = ["git@github.com:acme/widgets.git", "https://github.com/acme/widgets", "ssh://git@github.com:22/acme/widgets.git",
            "https://user:s3cret-token@GitHub.com/acme/widgets.git/", "git+ssh://git@github.com/acme/widgets",
            "http://github.com//acme/widgets.git"]
    assert {normalise_remote(u) for u in same} == {"github.com/acme/widgets"}
    assert normalise_remote("git@github.com:acme/gadgets.git") != "github.com/acme/widgets"
    assert normalise_remote("/srv/git/widgets.git") == normalise_remote("file:///srv/git/widgets.git") == "/srv/git/widgets"
    assert normalise_remote("C:\\src\\widgets.git") == "C:/src/widgets"  # a drive letter is not an scp-like host


def test_same_path_two_remotes_two_names_and_same_remote_two_paths_one_name(tmp_path):
    repo = with_remote((tmp_path / "work").mkdir() or tmp_path / "work", "git@github.com:acme/widgets.git")
    first = index_identity(repo)
    with_remote(repo, "git@github.com:other/project.git")  # another repository checked out at the same path
    assert index_identity(repo).prefix != first.prefix
    elsewhere = with_remote((tmp_path / "ci" / "ws").mkdir(parents=True) or tmp_path / "ci" / "ws",
                            "https://ci-bot:tok@github.com/acme/widgets")
    assert index_identity(elsewhere).prefix == first.prefix and first.note == ""
    assert first.prefix.startswith("codeqa_widgets_") and "tok" not in index_identity(elsewhere).described
    # a sub-folder's index is another index, named by the remote and the folder inside it
    (repo / "pkg" / "core").mkdir(parents=True)
    with_remote(repo, "git@github.com:acme/widgets.git")
    sub = index_identity(repo / "pkg" / "core")
    assert git_remote(repo / "pkg" / "core") == ("github.com/acme/widgets", "pkg/core")
    assert sub.prefix != first.prefix and sub.prefix.startswith("codeqa_widgets_core_")
    # Qdrant's rules: short, and only [a-z0-9_]
    long = with_remote((tmp_path / "l").mkdir() or tmp_path / "l", "https://h.example/" + "Ünïcode Näme/" * 30 + "x")
    assert all(len(i.prefix) <= 60 and i.prefix.replace("_", "").isalnum() and i.prefix.isascii()
               for i in (first, sub, index_identity(long), index_identity(long, "名前 with spaces")))


def test_index_name_wins_and_without_remote_or_name_the_path_names_it_with_a_note(tmp_path):
    repo = with_remote((tmp_path / "a").mkdir() or tmp_path / "a", "git@github.com:acme/widgets.git")
    other = (tmp_path / "b").mkdir() or tmp_path / "b"
    named = index_identity(repo, "team-widgets")
    assert named.prefix == index_identity(other, "team-widgets").prefix != index_identity(repo).prefix
    assert named.prefix.startswith("codeqa_team_widgets_")
    assert Settings.load(env={"CODEQA_INDEX_NAME": "from-env"}).index_name == "from-env"
    assert Settings.load(env={"CODEQA_INDEX_NAME": "from-env"}, index_name="flag").index_name == "flag"
    bare = index_identity(other)
    assert bare.prefix == collection_prefix(other)  # the name indexes had before: they are still found
    assert "--index-name" in bare.note and str(other.resolve()) in bare.note


def test_a_git_worktree_and_a_real_git_config_give_the_remote(tmp_path):
    main = tmp_path / "main"
    main.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    subprocess.run([*git, "-C", str(main), "remote", "add", "origin", "git@gitlab.example.com:group/sub/app.git"], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature"], check=True)
    assert (tmp_path / "feature" / ".git").is_file()  # `gitdir: ...`, the config in the common dir
    assert git_remote(main) == git_remote(tmp_path / "feature") == ("gitlab.example.com/group/sub/app", "")
    assert index_identity(main).prefix == index_identity(tmp_path / "feature").prefix


def test_index_runs_share_a_remote_s_index_and_keep_apart_what_only_shares_a_path(tmp_path, qdrant):
    settings = Settings.load(env={"QDRANT_URL": qdrant.url, "CODEQA_INDEX_DIR": str(tmp_path / "index")})
    laptop = with_remote(copy_fixture_repo(tmp_path / "laptop" / "widgets"), "git@github.com:acme/widgets.git")
    first = index_repo(laptop, settings, embedder=HashEmbedder(), embed=False)
    assert first.chunks > 10 and first.notes == []
    assert len(prefixes(qdrant)) == 1 and len(qdrant.collections) == len(KINDS)

    # the same repository checked out at another path (a CI workspace): the same index, already up to date
    ci = with_remote(copy_fixture_repo(tmp_path / "ci" / "workspace"), "https://ci-token@github.com/acme/widgets")
    again = index_repo(ci, settings, embedder=HashEmbedder(), embed=False)
    assert again.nothing_to_do and again.chunks == first.chunks and len(qdrant.collections) == len(KINDS)

    # another repository checked out at that same path: its own index
    with_remote(ci, "git@github.com:other/widgets-fork.git")
    fork = index_repo(ci, settings, embedder=HashEmbedder(), embed=False)
    assert not fork.nothing_to_do and len(prefixes(qdrant)) == 2

    # --index-name wins over the remote; with neither, the path names it and the run says how to fix that
    named = index_repo(ci, Settings.load(env={"QDRANT_URL": qdrant.url, "CODEQA_INDEX_DIR": str(tmp_path / "index")},
                                         index_name="shared widgets"), embedder=HashEmbedder(), embed=False)
    assert not named.nothing_to_do and any(p.startswith("codeqa_shared_widgets_") for p in prefixes(qdrant))
    shutil.rmtree(ci / ".git")
    bare = index_repo(ci, settings, embedder=HashEmbedder(), embed=False)
    assert collection_prefix(ci) in prefixes(qdrant) and len(prefixes(qdrant)) == 4
    assert len(bare.notes) == 1 and "--index-name" in bare.notes[0]


# ---- the writer lease -------------------------------------------------------------------------------

def _store(qdrant, **lease):
    """A writer on a machine of its own: its own client to the server."""
    from qdrant_client import QdrantClient

    store = ServerStore(QdrantClient(url=qdrant.url, check_compatibility=False), "codeqa_widgets_0123456789", url=qdrant.url)
    store.hold_lease("git remote github.com/acme/widgets", **lease)
    return store


def test_a_second_writer_gets_a_clear_error_naming_the_host_and_until_when(qdrant):
    first = _store(qdrant, settle=0)
    first.lease.host = "ci-runner-7"  # the holder is another machine: its renewals carry its name
    first.lease.renew()
    with pytest.raises(IndexLockedError) as refused:
        _store(qdrant, settle=0)
    message = str(refused.value)
    assert "host ci-runner-7" in message and f"process {first.lease.read().pid}" in message
    assert first.lease.read().until in message and "Wait for it to finish" in message and "--index-name" in message
    assert "github.com/acme/widgets" in message
    first.close()  # released: the next writer gets it at once
    second = _store(qdrant, settle=0)
    assert second.lease.read().owner == second.lease.owner
    second.close()
    assert qdrant.engine.count("codeqa_widgets_0123456789_lease").count == 0


def test_an_expired_lease_is_taken_over_and_its_old_holder_writes_nothing_more(qdrant):
    from store_contract import fill

    hour_ago = [time.time() - 3600]
    stuck = _store(qdrant, settle=0, seconds=60, clock=lambda: hour_ago[0])  # took it an hour ago, then was suspended
    newcomer = _store(qdrant, settle=0)
    assert newcomer.lease.read().owner == newcomer.lease.owner
    fill(newcomer)  # the new holder writes as usual
    hour_ago[0] = time.time()  # the old holder wakes up
    with pytest.raises(StoreError, match="lost the writer lease.*run `codeqa index` again"):
        stuck.write_meta({"written": "by the old holder"})  # refused, not interleaved with the new run
    assert newcomer.lease.read().owner == newcomer.lease.owner and "written" not in newcomer.read_meta()
    lease = newcomer.lease
    stuck.close()  # and its release leaves the new holder's lease alone
    assert lease.read().owner == lease.owner
    newcomer.close()


def test_the_server_checks_the_conditions_so_two_writers_that_both_read_a_free_lease_do_not_both_win(qdrant):
    """Through HTTP, so update_mode and update_filter travel to the server, which applies them as it writes."""
    from qdrant_client import QdrantClient

    client = QdrantClient(url=qdrant.url, check_compatibility=False)
    winner = _store(qdrant, settle=0)
    # a writer that read "no lease" just before the winner wrote its own: its insert leaves the winner's alone
    late = WriterLease(client, winner.lease.collection, "the index", settle=0)
    reads = iter([None])
    late._payload = lambda real=late._payload: next(reads, None) or real()
    with pytest.raises(IndexLockedError, match="is writing the index"):
        late.acquire()
    assert winner.lease.read().owner == winner.lease.owner
    # a lease read as expired but renewed before the taker writes: the taker's conditional write misses it
    winner.lease.clock = lambda: time.time() - 3600
    winner.lease.renew()
    winner.lease.clock = time.time
    taker = WriterLease(client, winner.lease.collection, "the index", settle=0)
    taker._write = lambda holder, real=taker._write, **condition: [winner.lease.renew(), real(holder, **condition)]
    with pytest.raises(IndexLockedError, match="is writing the index"):
        taker.acquire()
    assert winner.lease.read().owner == winner.lease.owner
    assert any(r.body and r.body.get("update_mode") == "insert_only" for r in qdrant.requests)
    assert any(r.body and r.body.get("update_filter") for r in qdrant.requests)
    winner.close()
    client.close()


def test_codeqa_index_is_refused_while_another_machine_writes_the_same_remote_s_index(tmp_path, qdrant, monkeypatch,
                                                                                     capsys):
    monkeypatch.setattr(index, "embedder_from_settings", lambda settings: HashEmbedder())
    elsewhere = with_remote(copy_fixture_repo(tmp_path / "runner" / "widgets"), "git@github.com:acme/widgets.git")
    other_machine = ServerStore.connect(elsewhere, qdrant.url, writer=True)
    other_machine.lease.host = "ci-runner-7"
    other_machine.lease.renew()
    here = with_remote(copy_fixture_repo(tmp_path / "laptop" / "widgets"), "https://github.com/acme/widgets")
    argv = ["index", str(here), "--qdrant-url", qdrant.url, "--index-dir", str(tmp_path / "i"), "--json"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "host ci-runner-7" in err and "git remote github.com/acme/widgets" in err and "Traceback" not in err
    assert qdrant.collections == {f"{other_machine.prefix}_lease"}  # refused before it wrote anything
    other_machine.close()
    assert cli.main([*argv, "--defer-embeddings"]) == 0


# ---- a server that fails mid-run ------------------------------------------------------------------

@pytest.mark.parametrize("status", [503, 0], ids=["5xx", "connection-lost"])
def test_a_server_failing_mid_run_is_a_message_and_exit_code_1(tmp_path, qdrant, monkeypatch, capsys, status):
    repo = copy_fixture_repo(tmp_path / "repo")
    monkeypatch.setattr(index, "embedder_from_settings", lambda settings: HashEmbedder())
    real_graph_stage = index.graph_stage

    def fail_from_here(*args, **kwargs):  # connected, lease taken, schema written: now the server goes
        qdrant.fail_from, qdrant.fail_status = len(qdrant.requests), status
        return real_graph_stage(*args, **kwargs)

    monkeypatch.setattr(index, "graph_stage", fail_from_here)
    code = cli.main(["index", str(repo), "--qdrant-url", qdrant.url, "--index-dir", str(tmp_path / "i"),
                     "--defer-embeddings", "--json"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err.startswith("error: ") and qdrant.url in err and "QDRANT_URL" in err
    assert ("answered 503" in err) if status else ("Cannot reach the Qdrant server" in err)
    assert "`codeqa index` goes on from what it committed" in err
