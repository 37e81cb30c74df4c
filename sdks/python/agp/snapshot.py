"""The agent's governance snapshot (``snapshot.ts`` of the TypeScript SDK): the enabled policies that apply to it
and the kill switches, as ``GET /api/v1/agents/{agent_id}/governance`` answers them. Each refresh sends the last
ETag as ``If-None-Match``; a 304 only confirms the snapshot (one small round trip). A background thread refreshes
every ``poll_interval`` seconds: the live-update path of this SDK (the push channel is not built here).

A failed refresh keeps the last snapshot (the SDK enforces the last known policies during an outage and reports
their age). An answer whose shape the SDK does not understand is remembered as ``incompatible`` and the governor
fails closed until a refresh parses. Source: docs/sdk.md §Fail modes, §Live updates; docs/sdk-python.md."""

from __future__ import annotations

import json
import threading
import urllib.parse
from typing import Any, Dict, List, Optional

from .errors import AgpNetworkError
from .http import Client
from ._util import now_ms

__all__ = ["Snapshot", "SnapshotSource"]

#: Policy fields every policy of the snapshot must carry, with the types the engine reads.
_POLICY_FIELDS = {
    "id": (str,), "name": (str,), "enabled": (bool,), "created_at": (str,), "agent_ids": (list,),
    "denied_actions": (list,), "approval_required_actions": (list,), "rate_limits": (dict,),
}


class Snapshot:
    """The state decisions are taken against: ``policies`` (engine dicts), ``kill_switches``
    (``{"organization": {engaged, reason}, "agents": [{agent_id, engaged, reason}]}``) and ``loaded_at``, when the
    platform last confirmed it (ms since the epoch)."""

    __slots__ = ("policies", "kill_switches", "loaded_at")

    def __init__(self, policies: List[Dict[str, Any]], kill_switches: Dict[str, Any], loaded_at: int):
        self.policies = policies
        self.kill_switches = kill_switches
        self.loaded_at = loaded_at


def with_policy_defaults(p: Dict[str, Any]) -> Dict[str, Any]:
    """A policy of an older platform read as a current one (``withPolicyDefaults`` of @agp/contracts): no action
    budget, downgrades, guardrails or period budgets; a rate limit without a scope counted per process."""
    out = {"action_budget": None, "downgrades": [], "guardrails": {}, "period_budgets": [], **p}
    if out.get("allowed_actions", None) is None:
        out["allowed_actions"] = None
    rl = out.get("rate_limits")
    if isinstance(rl, dict):
        out["rate_limits"] = {k: ({"scope": "process", **v} if isinstance(v, dict) else v) for k, v in rl.items()}
    if out.get("guardrails") is None:
        out["guardrails"] = {}
    return out


def _check(body: Any) -> Optional[str]:
    """Why ``body`` is not a governance snapshot this SDK understands, or None."""
    if not isinstance(body, dict):
        return "(root): expected an object"
    pols = body.get("policies")
    if not isinstance(pols, list):
        return "policies: expected an array"
    for i, p in enumerate(pols):
        if not isinstance(p, dict):
            return f"policies.{i}: expected an object"
        for k, types in _POLICY_FIELDS.items():
            if not isinstance(p.get(k), types) or isinstance(p.get(k), bool) != (bool in types):
                return f"policies.{i}.{k}: expected {types[0].__name__}"
    ks = body.get("kill_switches")
    if not isinstance(ks, dict) or not isinstance(ks.get("organization"), dict) or not isinstance(ks.get("agents"), list):
        return "kill_switches: expected {organization, agents}"
    if not isinstance(ks["organization"].get("engaged"), bool):
        return "kill_switches.organization.engaged: expected boolean"
    for i, a in enumerate(ks["agents"]):
        if not isinstance(a, dict) or not isinstance(a.get("agent_id"), str) or not isinstance(a.get("engaged"), bool):
            return f"kill_switches.agents.{i}: expected {{agent_id, engaged, reason}}"
    return None


class SnapshotSource:
    """See the module docs. Thread-safe: one refresh at a time; ``current`` is replaced whole, never changed."""

    def __init__(self, client: Client, agent_id: str, sdk_version: str):
        self.client = client
        self.agent_id = agent_id
        self.sdk_version = sdk_version
        self.current: Optional[Snapshot] = None
        #: Why the last refresh failed; None after a success.
        self.last_error: Optional[str] = None
        #: The HTTP status of the last failed refresh, when the platform answered one (401/403: the key is refused).
        self.last_status: Optional[int] = None
        #: Set while the platform's answers are not understood: the message, naming the server's version.
        self.incompatible: Optional[str] = None
        #: Refreshes answered 304 (ETag matched) and ones that read a body.
        self.loads = {"not_modified": 0, "full": 0}
        self._etag: Optional[str] = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        #: Whether the push channel currently vouches for the snapshot; refreshes running now.
        self._live = False
        self._refreshing = 0
        self._count_lock = threading.Lock()
        #: Kill-switch states pushed by the channel, with the push counter when they came.
        self._pushed: Dict[str, Dict[str, Any]] = {}
        self._push_gen = 0
        self._path = f"/api/v1/agents/{urllib.parse.quote(agent_id, safe='')}/governance"

    def age_ms(self, now: Optional[int] = None) -> Optional[int]:
        """ms since the platform last confirmed the snapshot, or None when none was ever loaded; 0 while the live
        push channel vouches for it (connected, no refetch running, and the last one worked)."""
        cur = self.current
        if cur is None:
            return None
        return 0 if self._vouched() else (now_ms() if now is None else now) - cur.loaded_at

    def _vouched(self) -> bool:
        return self._live and self._refreshing == 0 and self.last_error is None

    def set_live(self, live: bool) -> None:
        """The push channel is live (an event or a heartbeat arrived) or went down: while live and not refreshing the
        snapshot counts as confirmed now; going down stamps the confirmation time, from which its age then grows."""
        cur = self.current
        if cur is not None and self._vouched():
            self.current = Snapshot(cur.policies, cur.kill_switches, now_ms())
        self._live = live

    def apply_kill_switch(self, ks: Dict[str, Any]) -> None:
        """Apply a kill-switch state pushed by the channel at once (``{scope, agent_id, engaged, reason}``: the
        agent's switch, or the organisation's); it is also laid over any snapshot whose load began before it came."""
        if ks["scope"] == "agent" and ks.get("agent_id") != self.agent_id:
            return
        key = "organization" if ks["scope"] == "organization" else f"agent:{ks['agent_id']}"
        self._push_gen += 1
        self._pushed[key] = {**ks, "gen": self._push_gen}
        cur = self.current
        if cur is not None:
            self.current = Snapshot(cur.policies, _overlay(cur.kill_switches, [ks]), cur.loaded_at)

    def refresh(self) -> None:
        """Load now (one at a time; a concurrent caller waits for the running load, then loads again, since the
        running one may have read before the change the caller heard of). Never raises."""
        with self._count_lock:
            self._refreshing += 1
        try:
            with self._lock:
                try:
                    self._load()
                except Exception as err:  # a bug or an odd answer must not stop the poller
                    self.last_error = f"{type(err).__name__}: {err}"
                    self.last_status = None
        finally:
            with self._count_lock:
                self._refreshing -= 1

    def start(self, interval_s: float, should_poll: Any = None) -> None:
        """Refresh every ``interval_s`` seconds in a daemon thread until :meth:`stop`, skipping a tick when
        ``should_poll()`` says False (the push channel is live)."""
        if self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(interval_s):
                if should_poll is None or should_poll():
                    self.refresh()

        self._thread = threading.Thread(target=loop, name=f"agp-snapshot-{self.agent_id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the polling thread (waits for it up to 2 s)."""
        self._stop.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(2.0)

    def _load(self) -> None:
        gen = self._push_gen
        headers = {}
        if self._etag and self.current is not None:
            headers["if-none-match"] = self._etag
        try:
            res = self.client.request("GET", self._path, headers=headers)
        except AgpNetworkError as err:
            self.last_error = str(err)
            self.last_status = None
            return
        if res.status == 304 and self.current is not None:
            self.loads["not_modified"] += 1
            self._ok()
            self.current = Snapshot(self.current.policies, self.current.kill_switches, now_ms())
            return
        if res.status != 200:
            self.last_error = f"GET /api/v1/agents/{{agent_id}}/governance answered {res.status}: {res.text[:300]}"
            self.last_status = res.status
            return
        try:
            body = json.loads(res.text)
        except ValueError as err:
            self._not_understood(f"not JSON ({err})")
            return
        why = _check(body)
        if why is not None:
            self._not_understood(why)
            return
        self.loads["full"] += 1
        self._ok()
        self._etag = res.headers.get("etag")
        ks = body["kill_switches"]
        kill_switches = {
            "organization": {"engaged": ks["organization"]["engaged"], "reason": ks["organization"].get("reason")},
            "agents": [{"agent_id": a["agent_id"], "engaged": a["engaged"], "reason": a.get("reason")} for a in ks["agents"]],
        }
        # Kill switches pushed while this load was in flight are newer than what it read.
        later = [k for k in self._pushed.values() if k["gen"] > gen]
        self.current = Snapshot([with_policy_defaults(p) for p in body["policies"]], _overlay(kill_switches, later), now_ms())

    def _ok(self) -> None:
        self.incompatible = None
        self.last_error = None
        self.last_status = None

    def _not_understood(self, detail: str) -> None:
        version = "unknown"
        try:
            doc = self.client.json("GET", "/api/v1/openapi.json")
            if isinstance(doc, dict) and isinstance(doc.get("info"), dict) and isinstance(doc["info"].get("version"), str):
                version = doc["info"]["version"]
        except Exception:
            pass
        self.incompatible = f"the answer of GET /api/v1/agents/{{agent_id}}/governance is not understood by agp-sdk {self.sdk_version} (server version {version}): {detail}"
        self.last_error = self.incompatible
        self.last_status = None


def _overlay(base: Dict[str, Any], states: List[Dict[str, Any]]) -> Dict[str, Any]:
    """``base`` kill switches with each pushed state laid over it (the organisation's switch, or the agent's entry)."""
    out = base
    for s in states:
        if s["scope"] == "organization":
            out = {**out, "organization": {"engaged": s["engaged"], "reason": s.get("reason")}}
        else:
            out = {**out, "agents": [a for a in out["agents"] if a["agent_id"] != s["agent_id"]] + [{"agent_id": s["agent_id"], "engaged": s["engaged"], "reason": s.get("reason")}]}
    return out
