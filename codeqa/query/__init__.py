"""The query side: from a question to packed, labelled evidence, reading an index it never writes.

    question.py    what a question asks and the names it uses (no index needed)
    source.py      the repository's files as the index saw them (redacted, stale or not)
    lookup.py      symbol and reference lookups, paths between two symbols
    searcher.py    hybrid search: candidates, then the re-ranking steps of rankers.py in order
    retrieve.py    Retriever: routes a question to graph evidence or search, opens an index for reading
    pack.py        hits -> labelled snippets within a token budget
    shared_reader.py  one Retriever shared by the UI's sessions

Nothing here imports the indexer (tests/test_architecture.py checks it).
"""
