"""The index side: everything that builds and keeps an index, and nothing a reader needs.

    walk.py prune.py                  which files to read (and the folders left out unread, with why)
    parse.py parse_defs.py            tree-sitter with queries/<language>/*.scm -> symbols and references
    parse_cache.py parse_pool.py      each file's parse as checked JSON rows · parsing in worker processes
    embedded.py doc_sections.py       <script> blocks of Vue/Svelte files · Markdown/reST sections
    graph/                            references resolved across files, and the graph stage (graph/stage.py)
    chunk.py                          syntax chunks with exact line spans
    index.py                          index_repo(): the one place the stages are wired · state.py (state.json)
    writer.py writer_lock.py          phase 1's chunk writes (in the run or a writer process) · one writer per index
    dense.py background.py            phase 2: dense vectors by priority · phase 2 in a thread (MCP)
    plan.py watch.py                  `index --dry-run` · live re-indexing

The query side (`codeqa/query/`, `codeqa/answer/`) never imports this package (tests/test_architecture.py);
what both sides share sits at the top of `codeqa/`: types, errors, config, the language registry
(languages.py), roles, redact, source_text, fingerprint, plain_sqlite, and the `store/` and `embed/` packages.
Importing this package imports none of its modules: each stage is imported by name.
"""
