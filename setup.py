"""Which packages the wheel holds; the rest of the metadata lives in pyproject.toml.

codeqa's own packages are discovered, so a new sub-package (codeqa/indexing/graph/, codeqa/embed/, ...) ships
without an edit here. queries/ and ui/ sit beside codeqa/ in the checkout and ship inside it, as
codeqa.queries and codeqa.ui, where `languages.queries_dir()` and `codeqa ui` look for them. Folders
that hold only data (queries/<language>/, codeqa/adapters/) are listed as namespace packages, which is
how setuptools expects data folders to be declared; their files are package data (pyproject.toml).
"""

from setuptools import find_namespace_packages, setup


def _packages(folder: str, name: str) -> list[str]:
    found = find_namespace_packages(include=[folder, folder + ".*"], exclude=["*.__pycache__"])
    return [name + p[len(folder):] for p in found]


setup(
    packages=_packages("codeqa", "codeqa") + _packages("queries", "codeqa.queries") + _packages("ui", "codeqa.ui"),
    package_dir={"codeqa.queries": "queries", "codeqa.ui": "ui"},
)
