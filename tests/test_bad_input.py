"""A messy repository indexes to completion: every bad file is reported with its reason, the good
code stays searchable, and no credential reaches the index. Built at test time (10 MB bundles,
FIFOs and symlink loops do not belong in git)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeqa.config import Settings
from codeqa.indexing.index import index_repo
from codeqa.query.retrieve import Retriever
from conftest import remove_deep_tree

GOOD = '''def compute_shipping_cost(weight_kg, distance_km):
    """Price of sending a parcel: a base fee plus weight and distance rates."""
    base = 4.5
    return base + weight_kg * 0.8 + distance_km * 0.02


class ParcelLabel:
    def render(self, address):
        return f"TO: {address}"
'''
SECRETS = {  # value -> where it is written
    "sk-live-9f8e7d6c5b4a39281706f5e4": "settings.py (OpenAI-style key in code)",
    "ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA": "settings.py (GitHub token in code)",
    "correct-horse-battery-staple-42": "settings.py (password assignment)",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC": "settings.py (private key block) and server.key",
    "dotenv-secret-0b1c2d3e4f": ".env",
    "npm-token-5a6b7c8d9e": ".npmrc",
}
DEEP_DIRS = 1200  # deeper than Python's recursion limit
NESTING = 400  # nested brackets/blocks, each level too big for one chunk: deeper than the chunker recurses


def _make_bad_repo(root: Path) -> Path:
    root.mkdir()
    (root / "shipping.py").write_text(GOOD)
    (root / "settings.py").write_text(
        'OPENAI_KEY = "sk-live-9f8e7d6c5b4a39281706f5e4"\n'
        'GITHUB_TOKEN = "ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA"\n'
        'db_password = "correct-horse-battery-staple-42"\n'
        'SIGNING_KEY = """-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"""\n\n\n'
        'def signing_headers():\n    return {"Authorization": GITHUB_TOKEN}\n')
    (root / ".env").write_text("API_SECRET=dotenv-secret-0b1c2d3e4f\n")
    (root / ".npmrc").write_text("//registry.npmjs.org/:_authToken=npm-token-5a6b7c8d9e\n")
    (root / "server.key").write_text("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n")
    (root / "compiled.py").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)  # binary behind .py
    (root / "noise.js").write_bytes(bytes(range(128, 256)) * 16)  # no NUL, not UTF-8
    (root / "latin1.py").write_bytes("name = 'Jos\xe9'\n".encode("latin-1"))
    (root / "vendor_bundle.js").write_text("var a=1;" * (10 * 1024 * 1024 // 8))  # 10 MB, one line
    (root / "inline_bundle.js").write_text("var b=2;" * 40_000)  # 320 kB on one line, under the size limit
    (root / "broken.py").write_text("def broken(:\n    return )\n\n\nclass StillFound:\n    def method(self):\n        return 1\n")
    (root / "empty.py").write_text("")
    os.symlink(root, root / "loop")  # a folder link back to the root
    os.symlink(root / "missing.py", root / "dangling.py")
    os.mkfifo(root / "pipe.py")  # opening it for reading would block forever
    os.symlink("/etc/hostname", root / "host.py")  # leaves the repository
    (root / os.fsdecode(b"r\xe9sum\xe9.py")).write_text("x = 1\n")  # a file name that is not UTF-8
    deep = str(root / "deep")
    os.mkdir(deep)
    for _ in range(DEEP_DIRS):
        deep += "/d"
        os.mkdir(deep)
    with open(deep + "/bottom.py", "w") as handle:
        handle.write("def reached_the_bottom_folder():\n    return 'deep folders are walked'\n")
    (root / "nested_lists.py").write_text("MATRIX = " + "[1, 2, 3,\n" * NESTING + "]\n" * NESTING)
    (root / "nested_blocks.js").write_text("function nested() {\n" + "{ step++;\n" * NESTING + "}\n" * (NESTING + 1))
    (root / "nested_ifs.py").write_text("def branches(x):\n" + "".join(" " * (i + 1) + f"if x > {i}:\n" for i in range(NESTING))
                                        + " " * (NESTING + 1) + "return x\n")
    return root


@pytest.fixture(scope="module")
def bad_repo(tmp_path_factory, embedder):
    repo = _make_bad_repo(tmp_path_factory.mktemp("bad") / "repo")
    report = index_repo(repo, Settings.load(env={}), embedder=embedder)
    yield repo, report
    remove_deep_tree(repo / "deep")


def test_every_bad_file_is_reported_with_its_reason(bad_repo):
    repo, report = bad_repo
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped == {
        ".env": "secret", ".npmrc": "secret", "server.key": "secret",
        "compiled.py": "binary", "noise.js": "undecodable", "latin1.py": "undecodable",
        "vendor_bundle.js": "too-large", "inline_bundle.js": "minified",
        "loop": "symlink-loop", "dangling.py": "broken-symlink", "pipe.py": "special-file",
        "host.py": "outside-repo", "r\ufffdsum\ufffd.py": "bad-name",
    }
    partial = dict(report.partial)
    assert set(partial) == {"broken.py", "nested_lists.py", "nested_blocks.js", "nested_ifs.py"}
    assert partial["broken.py"].startswith("syntax errors near line 1")
    for path in ("nested_lists.py", "nested_blocks.js", "nested_ifs.py"):
        assert "nested deeper than" in partial[path] and partial[path].endswith("used line windows"), partial[path]
    indexed = {"shipping.py", "settings.py", "broken.py", "empty.py", "nested_lists.py", "nested_blocks.js",
               "nested_ifs.py", "deep/" + "d/" * DEEP_DIRS + "bottom.py"}
    assert report.files_total == len(indexed)
    assert report.to_dict()["skipped_by_reason"]["secret"] == 3


def test_good_code_in_the_same_repo_is_searchable(bad_repo, embedder):
    repo, report = bad_repo
    settings = Settings.load(env={})
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        hits = retriever.search("what does it cost to ship a parcel by weight and distance", top_k=5)
        assert (hits[0].path, hits[0].start_line) == ("shipping.py", 1)
        assert any(h.path == "broken.py" for h in retriever.search("StillFound method", top_k=5))
        bottom = retriever.search("reached_the_bottom_folder", top_k=3)
        assert bottom[0].path.endswith("/bottom.py")
        # the deeply nested files are there too, as line windows covering every line
        windows = retriever.store.chunks_in_file("nested_ifs.py")
        assert windows and {h.kind for h in windows} == {"window"}
        assert max(h.end_line for h in windows) == NESTING + 2


def test_no_credential_reaches_the_index(bad_repo, embedder):
    repo, report = bad_repo
    index_dir = Settings.load(env={}).index_dir_for(repo)
    files = [p for p in index_dir.rglob("*") if p.is_file()]
    assert len(files) > 5
    for path in files:
        data = path.read_bytes()
        for value, where in SECRETS.items():
            assert value.encode() not in data, f"{value} from {where} found in {path}"
    # the code around the credentials is indexed, with the values blanked and the lines kept
    with Retriever.open(repo, Settings.load(env={}), embedder=embedder) as retriever:
        chunks = retriever.store.chunks_in_file("settings.py")
    text = "".join(h.text for h in sorted(chunks, key=lambda h: h.start_line))
    assert "def signing_headers" in text and text.count("[REDACTED") >= 4
    assert len(text.splitlines()) == len((repo / "settings.py").read_text().splitlines())


def test_reindex_of_the_bad_repo_has_nothing_to_do_and_keeps_the_report(bad_repo, embedder):
    repo, report = bad_repo
    again = index_repo(repo, Settings.load(env={}), embedder=embedder)
    assert again.nothing_to_do and again.chunks == report.chunks
    assert {s.path: s.reason for s in again.skipped} == {s.path: s.reason for s in report.skipped}
    assert dict(again.partial) == dict(report.partial)
