"""The question map (codeqa/embed/question_map.py): read, applied only to the model it was trained for and
only to questions about how code behaves, and a bad file is a clear error."""

from __future__ import annotations

import numpy as np
import pytest

from codeqa.embed.question_map import QuestionMap, load_question_map, read_question_map, write_question_map
from codeqa.errors import UsageError


def _map(model_id: str = "m+lora:1") -> QuestionMap:
    a = np.zeros((4, 1), np.float32)
    b = np.zeros((4, 1), np.float32)
    a[1, 0], b[0, 0] = 1.0, 1.0  # adds the first coordinate to the second
    return QuestionMap(a, b, model_id)


def test_apply_moves_and_normalises():
    moved = _map().apply([1.0, 0.0, 0.0, 0.0])
    assert moved == pytest.approx([2 ** -0.5, 2 ** -0.5, 0, 0], abs=1e-6)
    assert _map().apply([0.0, 0.0, 1.0, 0.0]) == pytest.approx([0, 0, 1, 0])  # what B does not see stays


def test_round_trip_and_the_model_it_is_for(tmp_path):
    path = tmp_path / "q.safetensors"
    write_question_map(path, _map(), {"seed": 0})
    back = read_question_map(path)
    assert back.model_id == "m+lora:1" and back.apply([1, 0, 0, 0]) == pytest.approx(_map().apply([1, 0, 0, 0]), abs=1e-3)
    assert load_question_map(str(path), "m+lora:1") is not None
    assert load_question_map(str(path), "other-model") is None  # trained for another model: not applied
    assert load_question_map(str(path), None) is None
    assert load_question_map("none", "m+lora:1") is None


def test_the_model_id_is_read_only_when_a_map_file_is(tmp_path):
    """The retriever passes a function that reads the index meta: with no map set (the default), it is not called."""
    path = tmp_path / "q.safetensors"
    write_question_map(path, _map(), {"seed": 0})
    reads = []

    def model_id():
        reads.append(1)
        return "m+lora:1"

    assert load_question_map("none", model_id) is None and load_question_map("", model_id) is None
    assert reads == []
    assert load_question_map(str(path), model_id) is not None and reads == [1]


def test_a_missing_or_foreign_file_says_what_to_do(tmp_path):
    with pytest.raises(UsageError, match="CODEQA_QUESTION_MAP"):
        load_question_map(str(tmp_path / "nope.safetensors"), "m")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a safetensors file")
    with pytest.raises(UsageError, match="question map"):
        load_question_map(str(bad), "m")


FILES = {
    "pkg/parse.py": "def parse_args(argv):\n    \"\"\"Read options from the command line.\"\"\"\n    return [a for a in argv if a.startswith('-')]\n",
    "pkg/colors.py": "def blend(a, b):\n    \"\"\"Mix two colours half and half.\"\"\"\n    return tuple((x + y) // 2 for x, y in zip(a, b))\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder):
    from conftest import index_package

    return index_package(tmp_path_factory.mktemp("qmap") / "repo", FILES, embedder)


def test_only_a_question_about_behaviour_is_moved(repo, embedder, settings, tmp_path):
    """A map that sends this question's vector to the colour code: the question's search follows it, a
    search for an identifier does not (real model, real index)."""
    from codeqa.embed import query_embedder
    from codeqa.query.retrieve import Retriever
    from codeqa.store import open_store

    question = "How are options read from the command line?"
    q = np.asarray(query_embedder(embedder).encode([question])[0], np.float32)
    colours = np.asarray(embedder.encode(["Mix two colours half and half."])[0], np.float32)
    store = open_store(repo, settings)
    model_id = store.read_meta()["model_id"]
    store.close()
    path = tmp_path / "q.safetensors"  # v + (v . q) * 20 * colours ~ colours for this question
    write_question_map(path, QuestionMap((20 * colours)[:, None], q[:, None], model_id))
    with Retriever.open(repo, settings.with_(question_map="none"), embedder) as plain:
        assert plain.search(question, top_k=1)[0].path == "pkg/parse.py"
    with Retriever.open(repo, settings.with_(question_map=str(path)), embedder) as mapped:
        assert mapped.searcher.question_map is not None
        assert mapped.search(question, top_k=1)[0].path == "pkg/colors.py"
        assert mapped.search("parse_args", top_k=1)[0].path == "pkg/parse.py"  # not a question: not moved
        # a question that does not ask how code behaves is not moved either
        assert mapped.search("What reads options from the command line?", top_k=1)[0].path == "pkg/parse.py"
    write_question_map(path, QuestionMap((20 * colours)[:, None], q[:, None], "another-model"))
    with Retriever.open(repo, settings.with_(question_map=str(path)), embedder) as other:
        assert other.searcher.question_map is None
