"""What the page may show of a repository: the access policy, apart from how an answer is rendered.

    path_refusal        only indexed files inside the repository are ever shown

Every snippet, cited line and context the page draws from a file goes through `path_refusal` first
(chat.py passes it to answer_view.code_views): a path an answer or a model names is data, not a permission.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Collection

from codeqa.query.source import inside_repository


def path_refusal(repo: Path, path: str, indexed: Collection[str]) -> str:
    """Why `path` must not be shown ("" when it may): it has to be a relative path inside the
    repository (symlinks resolved) and a file of the index, which never holds secret files."""
    if not path or path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", path):
        return f"{path or 'an empty path'} is not a path inside the repository"
    if inside_repository(Path(repo).resolve(), path) is None:
        return f"{path} is outside the indexed repository"
    if path not in indexed:
        return f"{path} is not in the index"
    return ""
