"""WriterLease: one writer at a time for an index on a Qdrant server, across machines.

index.py's lock file serialises the runs of one machine; runs on several machines that write one server
index are serialised by a lease kept in the server: one point in the collection `<prefix>_lease`, whose
payload names its holder (host, process, a random token) and when the lease expires (seconds since the
epoch, by the holder's clock).

    acquire   refuse a server too old for the conditional writes below (StoreError); write the point if there
              is none, or take it over if its lease has expired; else IndexLockedError: which host holds it,
              until when, and what to do
    renew     move the expiry on: a heartbeat thread, every `seconds / 4`, for as long as the run writes
    check     before each write of the store: StoreError once the lease went to another writer
    release   delete the point, if it is still this writer's

Races, honestly. Qdrant has no compare-and-swap, but two conditional writes come close: an upsert with
`update_mode=insert_only` leaves an existing point alone (Qdrant >= 1.17), and one with `update_filter`
changes a point only while it still matches the filter (>= 1.16): "no lease yet" and "still the expired
lease I read" are checked by the server as it writes, with strong write ordering (through the shard's
leader in a cluster). Every acquiring write is read back after SETTLE_SECONDS, and only the writer whose
owner is read back goes on; the other gets the error. A server older than 1.17 ignores one field or both and
writes anyway: two writers that each read "no lease" could both go on, and a stale holder's renewal would
overwrite its successor's lease and read itself back. So acquire first asks the server its version (GET /,
`info()`) and refuses one older than MIN_SERVER_VERSION, or one whose version it cannot read. qdrant-client's
in-process mode (`:memory:`, `path=`) has no server: `info()` reports the client library's version, and its own
engine applies both conditions (the library is required at 1.20 or later), so it passes the same check.

Expiry is wall-clock time, so the machines' clocks must agree to well within `seconds` (NTP does). A
holder that stops renewing (killed, suspended, cut off) loses the lease `seconds` after its last renewal;
should it come back, its store refuses every write from then on (the lease lapsed by its own clock, or
its renewal read another owner back), so it cannot write into the next holder's run, except for writes
already sent.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Callable

from ..errors import IndexLockedError, StoreError

LEASE_SECONDS = 120.0  # how long a writer that stopped renewing keeps others out
SETTLE_SECONDS = 0.2  # between an acquiring write and its read-back (see the module docstring)
LEASE_POINT = str(uuid.UUID(int=1))
# update_filter came in Qdrant 1.16, update_mode=insert_only in 1.17 (qdrant/qdrant#7963)
MIN_SERVER_VERSION = (1, 17)


@dataclass(frozen=True)
class LeaseHolder:
    owner: str  # host:pid:token, unique to one WriterLease
    host: str
    pid: int
    expires: float  # seconds since the epoch, by the holder's clock

    @property
    def until(self) -> str:
        return datetime.fromtimestamp(self.expires).astimezone().isoformat(timespec="seconds")


class WriterLease:
    """The writer lease of one server index (see the module docstring). `index` describes the index for
    messages; `clock` and `settle` are there for tests."""

    def __init__(self, client: Any, collection: str, index: str, seconds: float = LEASE_SECONDS,
                 clock: Callable[[], float] = time.time, settle: float = SETTLE_SECONDS):
        self.client, self.collection, self.index = client, collection, index
        self.seconds, self.clock, self.settle = seconds, clock, settle
        host = socket.gethostname() or "unknown host"
        self.owner = f"{host}:{os.getpid()}:{secrets.token_hex(6)}"
        self.host = host
        self.expires = 0.0  # of the lease as this writer last wrote it; 0: not held
        self.lost = ""  # why this writer may write no more (empty while it holds the lease)
        self._lock = threading.Lock()  # the heartbeat and check() renew from two threads
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None

    # ---- the lifecycle ----------------------------------------------------------------------------
    def acquire(self) -> None:
        from qdrant_client import models

        self._check_server()
        payload = self._payload()
        held = _holder(payload)
        now = self.clock()
        if held is not None and held.expires > now:
            raise IndexLockedError(self._held_by(held))
        mine = self._stamp()
        if payload is None:
            self._write(mine, update_mode=models.UpdateMode.INSERT_ONLY)
        elif held is None:  # a point no version of this code wrote a lease into: nobody holds it
            self._write(mine)
        else:  # expired: taken over only while it is still that holder's expired lease
            self._write(mine, update_filter=models.Filter(must=[_is(held.owner), models.FieldCondition(
                key="expires", range=models.Range(lt=now))]))
        time.sleep(self.settle)
        got = self.read()
        if got is None or got.owner != self.owner:
            raise IndexLockedError(self._held_by(got) if got is not None else
                                   f"Another `codeqa index` took and gave back the writer lease of the index "
                                   f"{self.index} on the Qdrant server as this one asked for it; run again.")
        self.expires = mine.expires
        self._heartbeat = threading.Thread(target=self._beat, name="codeqa-lease", daemon=True)
        self._heartbeat.start()

    def renew(self) -> None:
        """Moves the expiry on; sets `lost` (and raises StoreError) when another writer holds the lease now."""
        from qdrant_client import models

        with self._lock:
            if self.lost:
                raise StoreError(self.lost)
            mine = self._stamp()
            self._write(mine, update_filter=models.Filter(must=[_is(self.owner)]))  # also writes it again if the point went
            got = self.read()
            if got is None or got.owner != self.owner:
                self.lost = (f"This `codeqa index` lost the writer lease of the index {self.index} on the Qdrant "
                             f"server: it could not renew it in time (was it suspended, or the server away?)"
                             + (f" and host {got.host} (process {got.pid}) holds it now" if got else "")
                             + ". It stopped writing; run `codeqa index` again once that run is done.")
                raise StoreError(self.lost)
            self.expires = mine.expires

    def check(self) -> None:
        """Before a write: raises StoreError unless this writer still holds the lease (renewing it first if its
        heartbeat could not, so a lease that lapsed by this machine's clock is never written under)."""
        if self.lost:
            raise StoreError(self.lost)
        if self.clock() >= self.expires - self.seconds / 8:
            self.renew()

    def release(self) -> None:
        """Stops the heartbeat and deletes the lease if it is still this writer's; a server that cannot be
        reached keeps it until it expires."""
        from qdrant_client import models

        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
            self._heartbeat = None
        if not self.expires:
            return
        self.expires = 0.0
        try:
            self.client.delete(self.collection, models.FilterSelector(filter=models.Filter(
                must=[models.HasIdCondition(has_id=[LEASE_POINT]), _is(self.owner)])),
                ordering=models.WriteOrdering.STRONG)
        except Exception:
            pass  # it lapses by itself: a release must not hide the error that ended the run

    def _check_server(self) -> None:
        """StoreError unless the server applies the conditional writes the lease rests on (module docstring)."""
        reported = str(self.client.info().version)
        found = re.match(r"v?(\d+)\.(\d+)", reported.strip())
        if found is None or (int(found[1]), int(found[2])) < MIN_SERVER_VERSION:
            least = ".".join(map(str, MIN_SERVER_VERSION))
            raise StoreError(
                f"The Qdrant server (QDRANT_URL) of the index {self.index} reports version {reported!r}; writing an "
                f"index needs Qdrant {least} or later. An older server ignores the conditional writes of codeqa's "
                f"writer lease (update_filter, update_mode=insert_only), so two `codeqa index` runs could write the "
                f"index at once. Upgrade the server to {least} or later; reading an index takes no lease.")

    # ---- the point --------------------------------------------------------------------------------
    def read(self) -> LeaseHolder | None:
        """Who holds the lease now (expired or not); None when nobody does."""
        return _holder(self._payload())

    def _payload(self) -> dict[str, Any] | None:
        from qdrant_client import models

        found = self.client.retrieve(self.collection, [LEASE_POINT], with_payload=True,
                                     consistency=models.ReadConsistencyType.ALL)
        return dict(found[0].payload or {}) if found else None

    def _stamp(self) -> LeaseHolder:
        return LeaseHolder(self.owner, self.host, os.getpid(), self.clock() + self.seconds)

    def _write(self, holder: LeaseHolder, **condition: Any) -> None:
        from qdrant_client import models

        self.client.upsert(self.collection, [models.PointStruct(id=LEASE_POINT, vector={}, payload=asdict(holder))],
                           ordering=models.WriteOrdering.STRONG, **condition)

    def _beat(self) -> None:
        while not self._stop.wait(self.seconds / 4):
            try:
                self.renew()
            except StoreError:
                return  # lost: check() tells the run at its next write
            except Exception:
                continue  # the server is away: the store's own calls say so; check() renews or refuses

    def _held_by(self, held: LeaseHolder) -> str:
        return (f"Another `codeqa index` is writing the index {self.index} on the Qdrant server: host {held.host}, "
                f"process {held.pid}, holds its writer lease until {held.until} (renewed while it runs). Wait for it "
                f"to finish and run again; if it was killed, its lease lapses at that time. A different --index-name "
                f"writes a different index.")


def _holder(payload: dict[str, Any] | None) -> LeaseHolder | None:
    try:
        return LeaseHolder(str(payload["owner"]), str(payload["host"]), int(payload["pid"]), float(payload["expires"]))
    except (KeyError, TypeError, ValueError):
        return None  # no point, or not a lease this version wrote


def _is(owner: str) -> Any:
    from qdrant_client import models

    return models.FieldCondition(key="owner", match=models.MatchValue(value=owner))
