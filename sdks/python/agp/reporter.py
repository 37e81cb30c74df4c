"""Reporting that loses nothing (``reporter.ts`` of the TypeScript SDK): every report is kept in the spool first,
then sent in batches through ``POST /api/v1/ingest/`` by a background thread; ``enqueue`` never waits on the network.

- Each report carries its id from creation on; a retry or a re-delivery after a restart sends the same id, which the
  platform stores once.
- 429, 5xx and network errors: the batch stays pending and is retried with jittered exponential back-off (0.25 s
  doubling to 30 s); 401/403 too (a key may be fixed), told through ``on_error``.
- An event the platform refuses for good (a per-event 413 or 422) is set aside (``rejected.jsonl`` of a file spool),
  counted in ``stats()["rejected"]`` and told through ``on_error``: never dropped silently. A request answered 413 as
  a whole is sent again in halves (back to the full size after a success); one report alone over the platform's
  request limit (5 MiB) is set aside the same way.
- Backpressure: while the spool is at its bound a new action waits (:meth:`Reporter.when_room`) until
  acknowledgements bring it below 3/4 of the bound; it is refused (fail closed) only when nothing was acknowledged
  for ``stall`` seconds, or the governor closes.
Source: docs/sdk.md §Reporting, §The spool's bound; docs/sdk-python.md."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional

from .errors import AgpHttpError, AgpNetworkError
from .http import Client

__all__ = ["Reporter"]

#: Most events per ingest request (the platform takes 1000).
BATCH_EVENTS = 500
#: The platform's limit of one ingest request, bytes.
INGEST_MAX_BYTES = 5 * 1024 * 1024
#: Most bytes per request, under the platform's 5 MiB.
BATCH_BYTES = int(INGEST_MAX_BYTES * 0.8)


class Reporter:
    """See the module docs. Thread-safe."""

    def __init__(self, client: Client, spool: Any, on_error: Callable[[str], None], flush_interval: float = 0.1, fsync_interval: float = 0.1, stall: float = 30.0):
        self.client = client
        self.spool = spool
        self.on_error = on_error
        self.flush_interval = flush_interval
        self.fsync_interval = fsync_interval
        self.stall = stall
        self._pending: Deque[Dict[str, Any]] = deque()
        self._cv = threading.Condition()
        self._counters = {"delivered": 0, "rejected": 0, "recovered": 0, "waited": 0}
        self.last_error: Optional[str] = None
        self._failures = 0
        self._next_attempt = 0.0
        self._last_progress = time.monotonic()
        self._closing: Optional[str] = None
        self._stopped = False
        self._sending = False
        self._low_water = int(getattr(spool, "max_bytes", 0) * 0.75)
        #: Most events per request; halved after a whole request was answered 413.
        self._batch_events = BATCH_EVENTS
        for ev in spool.recovered():
            self._pending.append(ev)
            self._counters["recovered"] += 1
        self._thread = threading.Thread(target=self._loop, name="agp-reporter", daemon=True)
        self._thread.start()

    def enqueue(self, ev: Dict[str, Any]) -> None:
        """Keep ``ev`` (spool first, synchronously) and send it soon. Never waits on the network."""
        with self._cv:
            self.spool.append(ev)
            self._pending.append(ev)
            self._cv.notify_all()

    def must_wait(self) -> bool:
        """Whether a new action must first wait for room in the spool (it is at its bound)."""
        return self.spool.full()

    def when_room(self) -> Optional[str]:
        """Wait for room in the spool: None once the pending bytes fell below 3/4 of the bound, else why the action is
        refused (nothing acknowledged for ``stall`` s while it waited, or the governor is closing)."""
        with self._cv:
            if self._closing:
                return self._closing
            self._counters["waited"] += 1
            started = time.monotonic()
            while self.spool.pending_bytes() >= self._low_water:
                if self._closing:
                    return self._closing
                left = max(self._last_progress, started) + self.stall - time.monotonic()
                if left <= 0:
                    return (f"the report spool is full ({self.spool.pending_bytes()} bytes not yet acknowledged) and the platform acknowledged "
                            f"nothing for {self.stall:g} s ({self.last_error or 'no error yet'}); the action is refused")
                self._cv.wait(min(left, 1.0))
            return None

    def stats(self) -> Dict[str, Any]:
        """Counters: ``pending`` reports, ``delivered``, ``rejected`` (refused for good), ``recovered`` (from an
        earlier process's spool), ``waited`` (actions that waited for room), ``last_error``."""
        with self._cv:
            return {"pending": len(self._pending), **self._counters, "last_error": self.last_error}

    def flush_now(self) -> None:
        """Send what is pending without waiting for the flush interval (no back-off is skipped)."""
        with self._cv:
            self._cv.notify_all()

    def drain(self, timeout: float) -> int:
        """Wait until nothing is pending or ``timeout`` s pass; returns the number still pending (0 = all delivered)."""
        deadline = time.monotonic() + timeout
        with self._cv:
            self._closing = self._closing or "the governor is closing"
            self._cv.notify_all()
            while (self._pending or self._sending) and time.monotonic() < deadline:
                self._cv.wait(min(0.05, max(0.0, deadline - time.monotonic())))
            return len(self._pending)

    def stop(self) -> None:
        """Stop the sending thread; pending reports stay in the spool."""
        with self._cv:
            self._stopped = True
            self._closing = self._closing or "the governor is closed"
            self._cv.notify_all()
        self._thread.join(5.0)
        with self._cv:
            self.spool.sync()

    def _loop(self) -> None:
        last_sync = time.monotonic()
        while True:
            do_sync = False
            with self._cv:
                while not self._stopped:
                    now = time.monotonic()
                    if now - last_sync >= self.fsync_interval:
                        do_sync, last_sync = True, now
                        break
                    if self._pending and now >= self._next_attempt:
                        break
                    wait = self.fsync_interval if not self._pending else max(0.0, min(self._next_attempt - now, self.fsync_interval))
                    self._cv.wait(wait)
                if self._stopped:
                    return
            if do_sync:
                # fsync outside the lock: an act appending a report never waits for the disk.
                try:
                    self.spool.sync()
                except OSError:
                    pass
                continue
            with self._cv:
                # Let a burst of reports gather for one request (not while closing).
                gather = time.monotonic() + self.flush_interval
                while not self._closing and not self._stopped and time.monotonic() < gather:
                    self._cv.wait(max(0.0, gather - time.monotonic()))
                if self._stopped:
                    return
                batch = self._batch()
                self._sending = True
            try:
                self._send(batch)
            finally:
                with self._cv:
                    self._sending = False
                    self._cv.notify_all()

    def _batch(self) -> List[Dict[str, Any]]:
        batch: List[Dict[str, Any]] = []
        size = 16
        for ev in self._pending:
            n = len(json.dumps(ev, ensure_ascii=False).encode("utf-8")) + 1
            if batch and (len(batch) >= self._batch_events or size + n > BATCH_BYTES):
                break
            batch.append(ev)
            size += n
        return batch

    def _send(self, batch: List[Dict[str, Any]]) -> None:
        too_large = len(batch) == 1 and len(json.dumps({"batch": batch}, ensure_ascii=False).encode("utf-8")) > INGEST_MAX_BYTES
        try:
            if too_large:
                raise AgpHttpError("POST", "/api/v1/ingest/", 413, f"the report alone is over the {INGEST_MAX_BYTES}-byte request limit")
            res = self.client.ingest(batch, retries=0)
        except AgpHttpError as err:
            if err.status == 413 and len(batch) > 1:
                # The request as a whole is too large for the platform (or a proxy before it): send fewer at a time.
                with self._cv:
                    self._batch_events = max(1, len(batch) // 2)
                return
            if err.status == 413:
                with self._cv:
                    self.spool.reject([(batch[0], 413, str(err))])
                    self._pending.popleft()
                    self._counters["rejected"] += 1
                    self._last_progress = time.monotonic()
                self.on_error(f"report {batch[0]['id']} is too large to send: {err}")
                return
            with self._cv:
                self._backoff(str(err))
            if err.status in (401, 403):
                self.on_error(f"reports are not accepted ({err}); they stay pending")
            return
        except (AgpNetworkError, ValueError, OSError) as err:
            with self._cv:
                self._backoff(str(err))
            return
        ids = {ev["id"]: ev for ev in batch}
        acked = [s["id"] for s in res.get("successes", []) if s.get("id") in ids]
        refused = []
        retryable = 0
        for e in res.get("errors", []):
            if e.get("status", 500) >= 500 or e.get("status") == 429 or e.get("id") is None:
                retryable += 1
                continue
            if e["id"] in ids:
                refused.append((ids[e["id"]], e["status"], e.get("message", "")))
        with self._cv:
            self.spool.ack(acked)
            if refused:
                self.spool.reject(refused)
            done = set(acked) | {ev["id"] for ev, _, _ in refused}
            self._counters["delivered"] += len(acked)
            self._counters["rejected"] += len(refused)
            # The batch is the oldest pending reports: forget the done ones, keep the others first, in order.
            keep = [self._pending.popleft() for _ in range(len(batch))]
            for ev in reversed(keep):
                if ev["id"] not in done:
                    self._pending.appendleft(ev)
            if done:
                self._last_progress = time.monotonic()
            if retryable:
                self._backoff(f"{retryable} report(s) answered 503; retrying")
            else:
                self._batch_events = BATCH_EVENTS
                self._failures = 0
                self._next_attempt = 0.0
                self.last_error = None
            self._cv.notify_all()
        if refused:
            self.on_error(f"the platform refused {len(refused)} report(s) for good: " + "; ".join(f"{ev['id']} ({s} {m})" for ev, s, m in refused)[:2000])

    def _backoff(self, message: str) -> None:
        self.last_error = message
        delay = min(30.0, 0.25 * 2 ** self._failures)
        self._failures += 1
        self._next_attempt = time.monotonic() + delay * (0.5 + random.random() / 2)
