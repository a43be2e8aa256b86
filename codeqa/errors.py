"""Errors raised by codeqa. The CLI and the UI turn them into one clear message.

    CodeQAError                  base; `exit_code` is what the CLI exits with
    ├── UsageError               bad input from the user (exit 2)
    │   ├── RepoNotFoundError    the repository path is missing or not a directory
    │   ├── IndexMissingError    a command that reads an index ran before `codeqa index`
    │   ├── IndexMismatchError   the index was built with another model/adapter/chunker: re-index with --full
    │   ├── IndexFolderError     the index folder is not codeqa's (other files in it): nothing is written or deleted
    │   │   └── IndexOwnedError  the index folder holds another repository's index
    │   └── QuestionTooLongError a question past CODEQA_MAX_QUESTION_CHARS: shorten it or raise the setting
    ├── IndexLockedError         another `codeqa index` holds the index lock (exit 1)
    ├── StoreError               the Qdrant server cannot be reached, refuses the API key, or is too old to write to (exit 1)
    ├── EmbeddingError           the embedding model could not be loaded or called (exit 1)
    └── LLMError                 the chat endpoint failed or timed out (exit 1)
"""

from __future__ import annotations


class CodeQAError(Exception):
    exit_code = 1


class UsageError(CodeQAError):
    exit_code = 2


class RepoNotFoundError(UsageError):
    pass


class IndexMissingError(UsageError):
    @classmethod
    def for_repo(cls, repo: object) -> "IndexMissingError":
        """The one wording of "this repository has no index yet": it names the command that makes one."""
        return cls(f"No codeqa index for {repo} yet; run `codeqa index {repo}` first.")


class IndexMismatchError(UsageError):
    pass


class IndexFolderError(UsageError):
    pass


class IndexOwnedError(IndexFolderError):
    pass


class QuestionTooLongError(UsageError):
    pass


class IndexLockedError(CodeQAError):
    pass


class StoreError(CodeQAError):
    pass


class EmbeddingError(CodeQAError):
    pass


class LLMError(CodeQAError):
    pass
