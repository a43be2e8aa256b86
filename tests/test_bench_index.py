"""bench/README.md indexes every script in bench/ (issue 64): a new script without a line there fails here."""

from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def test_every_bench_script_is_in_the_index():
    index = (BENCH / "README.md").read_text(encoding="utf-8")
    missing = sorted(p.name for p in BENCH.glob("*.py") if f"`{p.name}`" not in index)
    assert not missing, f"bench/README.md has no line for: {', '.join(missing)}"


def test_the_index_names_no_script_that_is_gone():
    index = (BENCH / "README.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1].strip().strip("`") for line in index.splitlines() if line.startswith("| `")]
    scripts = [name for name in rows if name.endswith(".py")]
    gone = sorted(name for name in scripts if not (BENCH / name).is_file())
    assert not gone, f"bench/README.md lists scripts that are not in bench/: {', '.join(gone)}"
