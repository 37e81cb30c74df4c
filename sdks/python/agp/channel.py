"""The push channel of one agent (``channel.ts`` and ``sse.ts`` of the TypeScript SDK): ONE Server-Sent Events
connection to ``GET /api/v1/agents/{agent_id}/governance/events``, read by a daemon thread.

- ``ready``: the stream is live; the snapshot is refetched once (If-None-Match: usually a 304) so a change made
  between the snapshot's load and the stream's start is not missed, and it counts as confirmed while live.
- ``kill_switch.changed``: applied to the snapshot at once (the event holds the whole new state).
- ``policy.changed``: the snapshot is refetched (again, 50 ms doubling for at most 5 s, while a policy that should
  now apply is missing or older than the event's version: the read model may lag the event in distributed mode).
- ``approval.decided``: a waiting escalation is woken (it then reads its approval).
- ``: heartbeat`` comments (every 15 s) and any other bytes keep it live; nothing for ``liveness`` s → reconnect.
An event name the SDK does not know is ignored; a known event whose data it does not understand drops the stream,
which is reconnected (never raised into the agent). Reconnects wait a jittered exponential back-off (0.25 s doubling
to 30 s; a 429's Retry-After when longer) and resume with ``Last-Event-ID``. While the stream is down the snapshot is
polled every ``poll_interval`` s; while it is up, only when the last refetch failed.
Lines end with LF or CRLF (a lone CR is not read as a line end). Source: docs/sdk.md §Live updates; docs/sdk-python.md."""

from __future__ import annotations

import json
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Optional

from .snapshot import SnapshotSource

__all__ = ["GovernanceChannel"]

KNOWN_EVENTS = frozenset(("ready", "policy.changed", "kill_switch.changed", "approval.decided"))
#: Longest line held before the stream counts as broken, in bytes.
SSE_MAX_LINE = 1024 * 1024


class _Garbage(Exception):
    """A known event the SDK does not understand: the stream is dropped."""


def _need(data: Any, fields: Dict[str, Any], event: str) -> Dict[str, Any]:
    if not isinstance(data, dict):
        raise _Garbage(f"the push channel sent a {event} event whose data is not an object")
    for k, types in fields.items():
        if not isinstance(data.get(k), types):
            raise _Garbage(f"the push channel sent a {event} event the SDK does not understand: {k}")
    return data


class GovernanceChannel:
    """See the module docs. ``state``: ``connecting``, ``connected``, ``reconnecting``, ``polling`` (three
    connections in a row failed) or ``closed``; ``last_error``; ``counts`` (``connects``, ``drops``)."""

    def __init__(self, snapshot: SnapshotSource, base: str, key: str, agent_id: str, liveness: float, on_approval: Callable[[Dict[str, Any]], None], user_agent: str):
        self.snapshot = snapshot
        self.url = f"{base}/api/v1/agents/{urllib.parse.quote(agent_id, safe='')}/governance/events"
        self.key = key
        self.agent_id = agent_id
        self.liveness = liveness
        self.on_approval = on_approval
        self.user_agent = user_agent
        self.state = "connecting"
        self.last_error: Optional[str] = None
        self.counts = {"connects": 0, "drops": 0}
        self._last_event_id: Optional[str] = None
        self._failures = 0
        self._connected_at = 0.0
        self._stop = threading.Event()
        self._res: Any = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        """Open the stream in a daemon thread (reconnecting until :meth:`stop`)."""
        self._thread = threading.Thread(target=self._loop, name=f"agp-channel-{self.agent_id}", daemon=True)
        self._thread.start()

    def should_poll(self) -> bool:
        """Whether the snapshot poller should refresh now: the stream is not live, or the last refetch failed."""
        return self.state != "connected" or self.snapshot.last_error is not None

    def stop(self) -> None:
        """End the stream: the reading thread stops (its socket is shut down)."""
        self.state = "closed"
        self._stop.set()
        self.snapshot.set_live(False)
        res = self._res
        if res is not None:
            try:
                sock = res.fp.raw._sock  # the connection's socket: shut down to end a blocking read at once
                sock.shutdown(socket.SHUT_RDWR)
            except Exception:
                pass
            try:
                res.close()
            except Exception:
                pass

    def _loop(self) -> None:
        while not self._stop.is_set():
            retry_after = 0.0
            try:
                headers = {"authorization": f"Bearer {self.key}", "accept": "text/event-stream", "user-agent": self.user_agent}
                if self._last_event_id is not None:
                    headers["last-event-id"] = self._last_event_id
                try:
                    res = urllib.request.urlopen(urllib.request.Request(self.url, headers=headers), timeout=self.liveness)
                except urllib.error.HTTPError as err:
                    try:
                        retry_after = max(0.0, float(err.headers.get("retry-after") or 0))
                    except ValueError:
                        retry_after = 0.0
                    raise RuntimeError(f"the push channel answered {err.code}: {err.read()[:200].decode('utf-8', 'replace')}") from None
                if not (res.headers.get("content-type") or "").startswith("text/event-stream"):
                    res.close()
                    raise RuntimeError(f"the push channel answered {res.status} {res.headers.get('content-type')}")
                self._res = res
                if self._stop.is_set():
                    break
                self._read(res)
                raise RuntimeError("the push channel ended")
            except Exception as err:
                if self._stop.is_set():
                    break
                self.last_error = f"no bytes on the push channel for {self.liveness:g} s" if isinstance(err, (socket.timeout, TimeoutError)) else str(err)
                self._down(retry_after)
            finally:
                res_, self._res = self._res, None
                if res_ is not None:
                    try:
                        res_.close()
                    except Exception:
                        pass

    def _read(self, res: Any) -> None:
        event, data = "", []
        while not self._stop.is_set():
            raw = res.readline(SSE_MAX_LINE + 1)
            if not raw:
                return
            if len(raw) > SSE_MAX_LINE:
                raise RuntimeError(f"event-stream line longer than {SSE_MAX_LINE} bytes")
            if self.state == "connected":
                self.snapshot.set_live(True)
            line = raw.decode("utf-8", "replace").rstrip("\n").rstrip("\r")
            if line == "":
                if data:
                    self._on_event(event or "message", "\n".join(data))
                event, data = "", []
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                data.append(value)
            elif field == "event":
                event = value
            elif field == "id" and "\x00" not in value:
                self._pending_id = value

    _pending_id: Optional[str] = None

    def _on_event(self, name: str, text: str) -> None:
        if name not in KNOWN_EVENTS:
            self._last_event_id = self._pending_id or self._last_event_id
            return
        try:
            data = json.loads(text)
        except ValueError:
            raise _Garbage(f"the push channel sent a {name} event whose data is not JSON: {text[:100]}") from None
        if name == "ready":
            _need(data, {"agent_id": str, "position": str}, name)
            self.counts["connects"] += 1
            self._connected_at = time.monotonic()
            self.state = "connected"
            self.last_error = None
            self.snapshot.set_live(True)
            threading.Thread(target=self.snapshot.refresh, daemon=True).start()
        elif name == "kill_switch.changed":
            _need(data, {"scope": str, "engaged": bool}, name)
            if data["scope"] not in ("organization", "agent"):
                raise _Garbage(f"the push channel sent a kill_switch.changed event with scope {data['scope']!r}")
            self.snapshot.apply_kill_switch(data)
        elif name == "policy.changed":
            _need(data, {"policy_id": str, "version": (int, float), "change": str, "agent_ids": list}, name)
            threading.Thread(target=self._policy_changed, args=(data,), daemon=True).start()
        else:
            _need(data, {"approval_id": str, "status": str}, name)
            self.on_approval(data)
        self._last_event_id = self._pending_id or self._last_event_id

    def _policy_changed(self, e: Dict[str, Any]) -> None:
        should_apply = e["change"] != "disabled" and (not e["agent_ids"] or self.agent_id in e["agent_ids"])

        def reflected() -> bool:
            cur = self.snapshot.current
            p = next((x for x in (cur.policies if cur else []) if x["id"] == e["policy_id"]), None)
            return p is not None and (not isinstance(p.get("version"), (int, float)) or p["version"] >= e["version"])

        self.snapshot.refresh()
        if not should_apply:
            if not self._stop.wait(0.25):
                self.snapshot.refresh()
            return
        wait, spent = 0.05, 0.0
        while not reflected() and spent < 5 and not self._stop.is_set():
            self._stop.wait(wait)
            self.snapshot.refresh()
            spent += wait
            wait = min(wait * 2, 1.0)

    def _down(self, retry_after: float) -> None:
        if self.state == "connected":
            self.counts["drops"] += 1
            # A stream that stayed up a while resets the back-off; one that says `ready` and then garbage does not.
            if time.monotonic() - self._connected_at > 10:
                self._failures = 0
        self.snapshot.set_live(False)
        self._failures += 1
        self.state = "polling" if self._failures >= 3 else "reconnecting"
        cap = min(30.0, 0.25 * 2 ** min(self._failures - 1, 10))
        self._stop.wait(max(retry_after, cap / 2 + random.random() * cap / 2))
