"""Settings: flags over the environment over defaults; a bad value is a UsageError naming the variable."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from codeqa.config import Settings
from codeqa.errors import UsageError


def test_defaults_when_the_environment_is_empty():
    settings = Settings.load(env={})
    assert settings == Settings()
    assert (settings.top_k, settings.context_tokens, settings.chunk_max_chars, settings.chunk_min_chars) == (10, 1500, 1500, 100)
    assert settings.embeddings == "local" and settings.embedding_adapter == "default"
    assert settings.index_dir is None and settings.qdrant_url is None and settings.model is None
    assert not settings.llm_configured


def test_each_setting_comes_from_its_codeqa_variable_with_its_type():
    samples = {int: ("7", 7), float: ("2.5", 2.5), str: ("some-value", "some-value"), bool: ("1", True)}
    for field in fields(Settings):
        typ = str(field.type)
        kind = (int if typ.startswith("int") else float if typ.startswith("float") else bool if typ == "bool"
                else Path if "Path" in typ else str)
        raw, expected = ("/tmp/somewhere", Path("/tmp/somewhere")) if kind is Path else samples[kind]
        value = getattr(Settings.load(env={f"CODEQA_{field.name.upper()}": raw}), field.name)
        assert value == expected and type(value) is type(expected), field.name


def test_environment_overrides_defaults_and_flags_override_the_environment():
    env = {"CODEQA_TOP_K": "5", "CODEQA_INDEX_DIR": "/tmp/from-env", "QDRANT_URL": "http://env:6333",
           "CODEQA_LLM_TIMEOUT": "9"}
    from_env = Settings.load(env=env)
    assert (from_env.top_k, from_env.index_dir, from_env.qdrant_url, from_env.llm_timeout) == (
        5, Path("/tmp/from-env"), "http://env:6333", 9.0)
    flagged = Settings.load(env=env, top_k=3, index_dir="/tmp/from-flag", qdrant_url="http://flag:6333")
    assert (flagged.top_k, flagged.index_dir, flagged.qdrant_url) == (3, Path("/tmp/from-flag"), "http://flag:6333")
    assert flagged.llm_timeout == 9.0  # a setting no flag names keeps the environment's value
    # a flag the user did not give arrives as None and leaves the environment's value alone
    assert Settings.load(env=env, index_dir=None, qdrant_url=None).index_dir == Path("/tmp/from-env")
    assert from_env.with_(top_k=None, context_tokens=100).top_k == 5
    assert from_env.with_(context_tokens=100).context_tokens == 100


def test_os_environ_is_read_when_no_env_is_given(monkeypatch):
    monkeypatch.setenv("CODEQA_CONTEXT_TOKENS", "1234")
    monkeypatch.setenv("CODEQA_MODEL", "qwen2.5-coder")
    settings = Settings.load()
    assert settings.context_tokens == 1234 and settings.model == "qwen2.5-coder"


def test_openai_qdrant_and_xdg_variables():
    settings = Settings.load(env={"OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_API_KEY": "k",
                                  "QDRANT_URL": "https://q:6333", "QDRANT_API_KEY": "qk", "XDG_CACHE_HOME": "/tmp/xdg"})
    assert settings.openai_base_url == "http://localhost:11434/v1" and settings.openai_api_key == "k"
    assert settings.llm_configured
    assert settings.qdrant_url == "https://q:6333" and settings.qdrant_api_key == "qk"
    assert settings.cache_home == Path("/tmp/xdg")
    # the CODEQA_ spelling wins over the plain one
    both = Settings.load(env={"QDRANT_URL": "http://plain:6333", "CODEQA_QDRANT_URL": "http://codeqa:6333"})
    assert both.qdrant_url == "http://codeqa:6333"


def test_the_shells_settings_come_from_their_variables_and_tokens_stay_out_of_repr():
    env = {"CODEQA_MCP_TOKEN": "mcp-s3cret", "CODEQA_UI_TOKEN": "ui-s3cret", "CODEQA_UI_REPO": "/srv/repo",
           "CODEQA_UI_WATCH": "1", "CODEQA_UI_ANY_REPO": "yes", "CODEQA_ONNX_CACHE": "~/onnx-here"}
    settings = Settings.load(env=env)
    assert (settings.mcp_token, settings.ui_token, settings.ui_repo) == ("mcp-s3cret", "ui-s3cret", "/srv/repo")
    assert settings.ui_watch is True and settings.ui_any_repo is True
    assert settings.onnx_cache == Path.home() / "onnx-here"
    assert "s3cret" not in repr(settings)
    default = Settings.load(env={})
    assert (default.mcp_token, default.ui_token, default.ui_repo, default.onnx_cache) == (None, None, None, None)
    assert default.ui_watch is False and default.ui_any_repo is False
    for off in ("0", "false", "No", "OFF"):
        assert Settings.load(env={"CODEQA_UI_WATCH": off}).ui_watch is False


def test_an_empty_variable_counts_as_unset():
    assert Settings.load(env={"CODEQA_TOP_K": "", "QDRANT_URL": "", "CODEQA_MODEL": ""}) == Settings()


def test_paths_expand_the_home_folder():
    settings = Settings.load(env={"CODEQA_INDEX_DIR": "~/codeqa-index"})
    assert settings.index_dir == Path.home() / "codeqa-index"


@pytest.mark.parametrize("variable, raw", [
    ("CODEQA_TOP_K", "ten"),
    ("CODEQA_CONTEXT_TOKENS", "6k"),
    ("CODEQA_LLM_TIMEOUT", "soon"),
    ("CODEQA_QDRANT_SHARDS", "2.5"),
    ("CODEQA_PARSE_WORKERS", "all"),
    ("CODEQA_FILES_MAX_BYTES", "1MB"),
    ("CODEQA_UI_WATCH", "maybe"),
])
def test_a_bad_value_is_a_usage_error_naming_the_variable(variable, raw):
    with pytest.raises(UsageError) as exc:
        Settings.load(env={variable: raw})
    message = str(exc.value)
    assert variable in message and repr(raw) in message and exc.value.exit_code == 2


def test_the_default_index_folder_is_in_the_cache_and_names_the_repository(tmp_path):
    cache = tmp_path / "cache"
    settings = Settings.load(env={"XDG_CACHE_HOME": str(cache)})
    first, second = tmp_path / "a" / "my project", tmp_path / "b" / "my project"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    folder = settings.index_dir_for(first)
    assert folder.parent == cache / "codeqa" and folder.name.startswith("my_project-")
    assert settings.index_dir_for(first) == folder  # stable
    assert settings.index_dir_for(second) != folder  # same name, another path: another index
    assert first not in folder.parents
    chosen = Settings.load(env={"XDG_CACHE_HOME": str(cache)}, index_dir=str(tmp_path / "idx"))
    assert chosen.index_dir_for(first) == tmp_path / "idx"


@pytest.mark.parametrize("name, value", [("CODEQA_TOP_K", "-3"), ("CODEQA_TOP_K", "0"), ("CODEQA_CONTEXT_TOKENS", "0"),
                                         ("CODEQA_EMBEDDING_BATCH_SIZE", "-1"), ("CODEQA_ANSWER_TOKENS", "0")])
def test_a_count_below_one_is_refused_with_its_variable(name, value):
    with pytest.raises(UsageError, match=f"{name}={int(value)} must be at least 1"):
        Settings.load(env={name: value})
