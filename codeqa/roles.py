"""What a file is for, by its path: package code, an example, docs, a test or a stub. Search, the dense stage
(what is embedded first) and lookups rank by it (`ROLE_ORDER`: package code first).
"""

from __future__ import annotations

import re

_TEST_PATH = re.compile(r"(^|/)(tests?|testing|__tests__|specs?)/|(^|/)(test_[^/]*|conftest\.py)$|_tests?\.\w+$"
                        r"|\.(spec|test)\.\w+$|Tests?\.(java|cs|kt)$")
_EXAMPLE_DIRS = re.compile(r"(^|/)(examples?|samples?|demos?)/")
# release notes kept as fragments (reno's releasenotes/notes/*.yaml, towncrier's newsfragments/, changelog.d/) are docs
_DOC_PATH = re.compile(r"(^|/)(docs?|docs?_src|docs?_source|documentation|releasenotes|newsfragments|changelog\.d)/"
                       r"|\.(md|markdown|mdx|rst|txt)$", re.IGNORECASE)


_STUB_PATH = re.compile(r"\.(pyi|d\.ts|d\.mts|d\.cts)$")


# the order same-named symbols and usage sites are ranked in: package code first
ROLE_ORDER = {"code": 0, "example": 1, "docs": 2, "test": 3, "stub": 4}


def top_folder(rel: str) -> str:
    """The first folder of a relative path ("" for a file at the root): a definition's package."""
    return rel.split("/", 1)[0] if "/" in rel else ""


def path_role(rel: str) -> str:
    """What a file is for: "test", "example", "docs", "stub" (type declarations) or "code" (everything else)."""
    if _STUB_PATH.search(rel):
        return "stub"
    if _TEST_PATH.search(rel):
        return "test"
    if _EXAMPLE_DIRS.search(rel):
        return "example"
    if _DOC_PATH.search(rel):
        return "docs"
    return "code"
