"""EmbeddingCache: vectors by (model id, text hash) in one SQLite file, so unchanged chunks are never re-embedded."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from ..plain_sqlite import connect_untrusted


# A cached vector is float16 (half the size of float32; the embedded index stores float16 too), after
# this tag: a float32 NaN, which no float32 row from before the tag can start with (an embedding is finite).
_FLOAT16_TAG = b"\x16\xf1\xff\x7f"


def encode_vector(vector: np.ndarray) -> bytes:
    return _FLOAT16_TAG + np.asarray(vector, dtype="<f2").tobytes()


def decode_vector(blob: object) -> np.ndarray | None:
    """A stored vector as float32: tagged float16, or an untagged float32 row; None when it is neither."""
    if not isinstance(blob, bytes):
        return None
    if blob.startswith(_FLOAT16_TAG):
        body, dtype = blob[len(_FLOAT16_TAG):], "<f2"
    else:
        body, dtype = blob, "<f4"
    if not body or len(body) % np.dtype(dtype).itemsize:
        return None
    return np.frombuffer(body, dtype=dtype).astype(np.float32)


class EmbeddingCache:
    """Vectors by (model id, text hash) in <index-dir>/embeddings.sqlite: unchanged chunks are never re-embedded.

    Each entry records when a run last wrote or read it, and `prune` keeps only the most recently used
    ones, so a repository that churns for months does not grow the cache without end while a switched
    branch or a `--full` rebuild still finds its vectors. Vectors are raw float32 bytes: plain data."""

    def __init__(self, path: Path, clock=time.time):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._db = connect_untrusted(str(path))
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash TEXT, vector BLOB, used INTEGER NOT NULL DEFAULT 0, "
                         "PRIMARY KEY (model, hash))")
        if "used" not in {row[1] for row in self._db.execute("PRAGMA table_info(vectors)")}:  # a cache from before pruning
            self._db.execute("ALTER TABLE vectors ADD COLUMN used INTEGER NOT NULL DEFAULT 0")
            self._db.commit()
    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_many(self, model_id: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        keys = list({self.key(t) for t in texts})
        found: dict[str, np.ndarray] = {}
        now = int(self._clock())
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(f"SELECT hash, vector FROM vectors WHERE model = ? AND hash IN ({marks})",
                                    [model_id, *part]).fetchall()
            found.update((h, vector) for h, v in rows if (vector := decode_vector(v)) is not None)
            if rows:
                self._db.execute(f"UPDATE vectors SET used = ? WHERE model = ? AND hash IN ({marks})", [now, model_id, *part])
        self._db.commit()
        return found

    def put_many(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        now = int(self._clock())
        self._db.executemany("INSERT OR REPLACE INTO vectors (model, hash, vector, used) VALUES (?, ?, ?, ?)",
                             [(model_id, self.key(t), encode_vector(v), now)
                              for t, v in zip(texts, vectors)])
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]

    def prune(self, keep: int) -> int:
        """Delete all but the `keep` most recently used entries; returns how many went."""
        extra = len(self) - keep
        if extra <= 0:
            return 0
        self._db.execute("DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY used, rowid LIMIT ?)", (extra,))
        self._db.commit()
        return extra

    def close(self) -> None:
        self._db.close()


__all__ = ["EmbeddingCache"]
