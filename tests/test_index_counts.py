"""The counts a run reports agree with themselves: the chunks phase 2 announces are the chunks it says it
embedded, a chunk is counted once however it got its vector, and the progress bar's chunks/s is the
model's speed, as in the summary (not the model's load)."""

from __future__ import annotations

from codeqa.cli.commands import embedded_words
from codeqa.cli.progress import StageRates, per_second
from codeqa.indexing.index import index_repo
from conftest import CountingEmbedder, copy_fixture_repo

NEW_FUNCTION = '''

def freshly_added_encoder(value):
    """A function no earlier run has embedded: its chunk is phase 2's work."""
    return {"encoded": value, "by": "freshly_added_encoder"}
'''


def test_a_chunk_is_counted_once_and_phase_2_embeds_what_it_announced(tmp_path, settings, embedder):
    repo = copy_fixture_repo(tmp_path / "repo")
    index_repo(repo, settings, embedder=embedder)
    edited = repo / "encoders" / "encoder.py"
    edited.write_text(edited.read_text(encoding="utf-8") + NEW_FUNCTION, encoding="utf-8")
    announced = []
    counting = CountingEmbedder(embedder)

    def progress(stage, done, total):
        if stage == "searchable":
            announced.append(total)

    # every file is stored again: all but the edited one have every vector cached and are done in phase 1;
    # the edited one waits for phase 2 with all its chunks, the cached ones included
    report = index_repo(repo, settings, full=True, embedder=counting, progress=progress)
    assert len(announced) == 1 and 0 < announced[0] < report.chunks
    assert report.chunks_embedded_phase2 == announced[0] and report.chunks_deferred == 0
    assert report.chunks_embedded == report.chunks  # each chunk once, not its cached vector twice
    assert 0 < report.chunks_encoded == counting.texts < announced[0]  # the edited file's other chunks: cached
    words = embedded_words(report.to_dict())
    assert f"{report.chunks} embedded this run" in words and f"{announced[0]} in phase 2" in words
    assert f"{report.chunks - announced[0]} from the embedding cache in phase 1" in words


def test_the_embed_rate_starts_when_the_model_has_loaded():
    now = [0.0]
    rates = StageRates(clock=lambda: now[0])
    rates.update("embed", 0, 10)
    rates.update("model", 0, 1)
    now[0] = 6.0  # the model took 6 s to load
    rates.update("model", 1, 1)
    now[0] = 7.0
    assert rates.update("embed", 8, 10) == "8.0 chunks/s"  # 8 in the second after the load, not 8 in 7 s


def test_the_embed_rate_leaves_out_what_the_cache_gave_before_the_load():
    now = [0.0]
    rates = StageRates(clock=lambda: now[0])
    rates.update("embed", 0, 100)
    rates.update("embed", 90, 100)  # cached vectors, at once
    rates.update("model", 0, 1)
    now[0] = 5.0
    rates.update("model", 1, 1)
    now[0] = 7.0
    assert rates.update("embed", 100, 100) == "5.0 chunks/s"


def test_slow_rates_are_not_rounded_to_zero():
    assert per_second(0.4) == "0.4" and per_second(9.25) == "9.2" and per_second(25.4) == "25"
    assert per_second(1204.2) == "1,204"


def test_a_run_whose_every_vector_came_from_the_cache_says_so():
    d = {"chunks_embedded": 7, "chunks_embedded_phase2": 0}
    assert embedded_words(d) == "7 embedded this run from the embedding cache"
    assert embedded_words({"chunks_embedded": 4, "chunks_embedded_phase2": 4}) == "4 embedded this run"
