"""Bad input to `ask` is bad usage (exit 2 and a message), never an answer: empty questions, a top-k below
one; and a key never shows in a Settings repr (issue 37's small items)."""

from __future__ import annotations

import pytest

from codeqa.answer import Answerer
from codeqa.cli import main
from codeqa.config import Settings
from codeqa.errors import UsageError
from codeqa.query.retrieve import Retriever


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_is_bad_usage(capsys, indexed_repo, embedder, settings, question):
    assert main(["ask", question, "--repo", str(indexed_repo), "--no-llm"]) == 2
    err = capsys.readouterr().err
    assert "The question is empty" in err and "Traceback" not in err
    with Retriever.open(indexed_repo, settings, embedder) as retriever, pytest.raises(UsageError, match="empty"):
        Answerer(retriever, settings).stream(question, no_llm=True)


@pytest.mark.parametrize("value", ["-3", "0", "ten"])
def test_top_k_must_be_a_positive_number(capsys, indexed_repo, value):
    with pytest.raises(SystemExit) as exit_:
        main(["ask", "How does tokenize work?", "--repo", str(indexed_repo), "--no-llm", "--top-k", value])
    assert exit_.value.code == 2 and "--top-k" in capsys.readouterr().err


def test_keys_never_show_in_a_settings_repr():
    settings = Settings.load(env={"OPENAI_API_KEY": "sk-secret-1", "QDRANT_API_KEY": "qd-secret-2"})
    assert settings.openai_api_key == "sk-secret-1" and settings.qdrant_api_key == "qd-secret-2"
    assert "sk-secret-1" not in repr(settings) and "qd-secret-2" not in repr(settings)


def test_paths_with_brackets_print_as_they_are(capsys, tmp_path, embedder):
    from codeqa.indexing.index import index_repo

    repo = tmp_path / "site"
    (repo / "app" / "[slug]").mkdir(parents=True)
    (repo / "app" / "[slug]" / "page.ts").write_text("export function renderSlugPage(slug: string) {\n  return slug;\n}\n")
    index_repo(repo, Settings.load(env={}), embedder=embedder)
    assert main(["search", "renderSlugPage", "--repo", str(repo)]) == 0
    assert "app/[slug]/page.ts:L1-L3" in capsys.readouterr().out


def test_refs_of_an_unknown_name_is_bad_input_with_the_closest_names(capsys, indexed_repo):
    assert main(["refs", "EncoderKlass", "--repo", str(indexed_repo)]) == 2
    err = capsys.readouterr().err
    assert "no symbol named 'EncoderKlass'" in err and "Did you mean EncoderClass" in err
    assert main(["refs", "EncoderKlass", "--repo", str(indexed_repo), "--json"]) == 2
    assert '"suggestions": [\n    "EncoderClass"' in capsys.readouterr().out
