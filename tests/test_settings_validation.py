"""Every number a setting holds is checked where Settings is built: finite, in range, and a bad one is a usage
error (exit 2) that names the variable. Before, CODEQA_LLM_TIMEOUT=-5 cut every answer after its first piece,
nan turned the watchdog off, and CODEQA_CONTEXT_WINDOW=-100 was taken."""

from __future__ import annotations

from dataclasses import fields

import pytest

from codeqa.cli import main
from codeqa.config import COUNTS, SECONDS, Settings
from codeqa.errors import UsageError

NUMERIC = [f.name for f in fields(Settings) if str(f.type).split(" ")[0] in ("int", "float")]


def refused(env: dict[str, str]) -> str:
    with pytest.raises(UsageError) as caught:
        Settings.load(env=env)
    assert caught.value.exit_code == 2
    return str(caught.value)


@pytest.mark.parametrize("variable, raw", [
    ("CODEQA_LLM_TIMEOUT", "-5"), ("CODEQA_LLM_TIMEOUT", "nan"), ("CODEQA_LLM_TIMEOUT", "0"),
    ("CODEQA_CONTEXT_WINDOW", "-100"), ("CODEQA_CONTEXT_WINDOW", "0"),
    ("CODEQA_EMBEDDING_TIMEOUT", "0"), ("CODEQA_RERANK_TIMEOUT", "inf"),
])
def test_the_issues_settings_are_refused_naming_the_variable_and_what_to_do(variable, raw):
    message = refused({variable: raw})
    assert message.startswith(f"{variable}=") and "fix or unset it" in message


def test_the_messages_say_what_a_value_must_be():
    assert "must be a number of seconds above 0 and at most 86,400" in refused({"CODEQA_LLM_TIMEOUT": "nan"})
    assert "must be at least 1 (a whole number of tokens" in refused({"CODEQA_CONTEXT_WINDOW": "-100"})
    assert "must be at least 0" in refused({"CODEQA_PARSE_WORKERS": "-2"})


def test_every_numeric_setting_has_a_rule():
    # a number added to Settings without one would take nan, inf or a negative value unchecked
    assert NUMERIC and set(NUMERIC) == set(COUNTS) | set(SECONDS)


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "-1", "1e400"])
def test_no_numeric_setting_takes_nan_inf_or_a_negative_value(name, raw):
    message = refused({f"CODEQA_{name.upper()}": raw})
    assert f"CODEQA_{name.upper()}=" in message


@pytest.mark.parametrize("name", NUMERIC)
def test_zero_is_refused_where_it_means_nothing_and_taken_where_it_means_something(name):
    env = {f"CODEQA_{name.upper()}": "0"}
    if name in SECONDS or COUNTS[name][0] == 1:
        refused(env)
    else:  # parse_workers 0: automatic; cite_grammar 0: off; chunk_min_chars 0: no minimum
        assert getattr(Settings.load(env=env), name) == 0


@pytest.mark.parametrize("name", NUMERIC)
def test_flags_and_code_are_checked_as_the_environment_is(name):
    bad = float("nan") if name in SECONDS else -1
    with pytest.raises(UsageError, match=f"CODEQA_{name.upper()}="):
        Settings(**{name: bad})
    with pytest.raises(UsageError, match=f"CODEQA_{name.upper()}="):
        Settings().with_(**{name: bad})


def test_the_range_of_a_timeout_is_above_zero_and_at_most_a_day():
    assert Settings.load(env={"CODEQA_LLM_TIMEOUT": "86400"}).llm_timeout == 86400
    assert Settings.load(env={"CODEQA_LLM_TIMEOUT": "0.5"}).llm_timeout == 0.5
    refused({"CODEQA_LLM_TIMEOUT": "86401"})
    assert Settings.load(env={"CODEQA_CONTEXT_WINDOW": "4096"}).context_window == 4096
    assert Settings.load(env={}).context_window is None and Settings.load(env={}).qdrant_shards is None


@pytest.mark.parametrize("variable, raw", [("CODEQA_LLM_TIMEOUT", "-5"), ("CODEQA_RERANK_TIMEOUT", "inf"),
                                           ("CODEQA_CONTEXT_WINDOW", "-100")])
def test_the_cli_exits_2_with_one_line_and_no_traceback(capsys, monkeypatch, tmp_path, variable, raw):
    monkeypatch.setenv(variable, raw)
    code = main(["search", "anything", "--repo", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: {variable}=") and err.count("\n") == 1 and "Traceback" not in err
