"""What a file is for, by its path (codeqa/roles.py): search ranks package code above the rest."""

from __future__ import annotations

import pytest

from codeqa.roles import path_role


@pytest.mark.parametrize("path, role", [
    ("tenacity/retry.py", "code"),
    ("src/pkg/changes.py", "code"),  # a module named for changes is code
    ("releasenotes/notes/add-stop-before-delay-a775f88ac872c923.yaml", "docs"),  # reno
    ("newsfragments/1234.feature", "docs"),  # towncrier
    ("changelog.d/20241105_fix.md", "docs"),
    ("docs/index.rst", "docs"),
    ("tests/test_retry.py", "test"),
    ("examples/basic.py", "example"),
    ("pkg/api.pyi", "stub"),
])
def test_path_roles(path, role):
    assert path_role(path) == role
