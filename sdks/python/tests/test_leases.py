"""The governor's leases of fleet-wide limits (agp.leases), offline: a stand-in for ``POST /api/v1/quotas/leases``
that grants slices of a counter and records every request, so the protocol the TypeScript SDK speaks (leases.ts) can
be read back: one batched request for the needs of an action, reports of spend with increasing ``seq``, release on
close, a policy edit ending the old lease, a lapsed lease owing one late report, and the platform out of reach
answered as unavailable. The end-to-end test (tests/e2e/test_fleet.py) runs the same code against the platform."""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

from agp.errors import AgpNetworkError
from agp.leases import Leases
from agp._util import iso_time


class Granting:
    """Grants up to ``slice`` (calls or USD) per ask from a limit of ``limit``; records requests."""

    def __init__(self, limit: float, slice_: float, ttl_ms: int = 15_000):
        self.limit = limit
        self.slice = slice_
        self.ttl_ms = ttl_ms
        self.committed = 0.0
        self.requests: List[Dict[str, Any]] = []
        self.leases: Dict[str, Dict[str, Any]] = {}
        self.down = False

    def __call__(self, body: Dict[str, Any]) -> Dict[str, Any]:
        self.requests.append(body)
        if self.down:
            raise AgpNetworkError("POST /api/v1/quotas/leases could not reach http://127.0.0.1:9: refused")
        out = []
        for r in body["report"]:
            lease = self.leases[r["lease_id"]]
            if r["release"]:
                self.committed -= lease["held"] - r["spent"]
                lease.update(status="released", spent=r["spent"])
            else:
                lease["spent"] = r["spent"]
                out.append(dict(lease))
        acquired = []
        for a in body["acquire"]:
            remaining = self.limit - self.committed
            grant = 0.0 if a["need"] > remaining else min(remaining, max(a["need"], self.slice))
            self.committed += grant
            lid = f"l{len(self.leases) + 1}"
            lease = {"lease_id": lid, "policy_id": a["policy_id"], "limit": a["limit"], "unit": "calls", "scope_key": a["agent_id"], "status": "active",
                     "held": grant, "spent": 0, "granted": grant, "exhausted": grant == 0 and a["need"] > 0, "expires_at": iso_time(int(time.time() * 1000) + self.ttl_ms),
                     "window_start": None, "window_end": None, "limit_value": self.limit, "remaining": self.limit - self.committed, "holders": 1}
            self.leases[lid] = lease
            acquired.append(dict(lease))
        return {"holder": body["holder"], "leases": acquired + out, "released": []}


def policy(max_calls: int = 10, id_: str = "p1") -> Dict[str, Any]:
    return {"id": id_, "name": "fleet", "enabled": True, "agent_ids": [], "created_at": "2026-01-01T00:00:00.000Z", "session_budget": None, "run_budget": None,
            "rate_limits": {"*": {"max_calls": max_calls, "window_seconds": 86_400, "scope": "agent"}, "charge": {"max_calls": max_calls, "window_seconds": 86_400, "scope": "organization"}}}


def make(server: Granting, policies: List[List[Dict[str, Any]]], errors: List[str]) -> Leases:
    return Leases(server, lambda: policies[0], "bot", "sdk:test", threading.RLock(), errors.append, interval=0.05)


def until(probe: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_needs_are_leased_in_one_batched_request_then_decided_locally() -> None:
    server = Granting(limit=10, slice_=3)
    errors: List[str] = []
    policies = [[policy()]]
    leases = make(server, policies, errors)
    needs = leases.needs_of("charge", 0, "run-1", None)
    assert [n["limit"] for n in needs] == ["rate_limit:charge", "rate_limit:*"] and [n["scope"] for n in needs] == ["organization", "agent"]
    assert leases.needs_of("charge", 0, "run-1", None) is needs  # cached
    assert not leases.covered(needs)
    assert leases.ensure(needs, 2.0) and leases.covered(needs)
    assert len(server.requests) == 1 and len(server.requests[0]["acquire"]) == 2 and server.requests[0]["holder"] == "sdk:test"
    view = leases.view(needs)
    assert view("p1", "rate_limit:charge") == 3 and view("p1", "rate_limit:nope") is None
    for _ in range(3):
        assert leases.covered(needs)
        leases.consume(needs)
    assert not leases.covered(needs)
    rows = leases.status()
    assert {(r["limit"], r["held"], r["spent"]) for r in rows} == {("rate_limit:charge", 3, 3), ("rate_limit:*", 3, 3)}
    # spend is reported off the allow path, cumulative, each report with a higher seq
    until(lambda: any(r["report"] for r in server.requests))
    reports = [r for req in server.requests for r in req["report"]]
    assert all(r["spent"] == 3 for r in reports[:2]) and [r["seq"] for r in reports] == sorted(r["seq"] for r in reports)
    leases.close(2.0)
    released = [r for req in server.requests for r in req["report"] if r["release"]]
    # every lease is released (l1/l2 spent 3 each; the low watermark had topped them up ahead of need, l3/l4 here)
    assert {r["lease_id"] for r in released} == set(server.leases) and all(x["status"] == "released" for x in server.leases.values())
    assert sum(r["spent"] for r in released) == 6 and server.committed == 6
    assert errors == []


def test_a_policy_edit_ends_the_old_lease_and_a_lapsed_lease_owes_a_late_report() -> None:
    server = Granting(limit=10, slice_=5)
    errors: List[str] = []
    policies = [[policy()]]
    leases = make(server, policies, errors)
    needs = leases.needs_of("other", 0, "run-1", None)
    assert leases.ensure(needs, 2.0)
    leases.consume(needs)
    policies[0] = [policy(max_calls=20)]  # the limit changed: the old lease is released with what it spent
    assert leases.needs_of("other", 0, "run-1", None) != needs
    until(lambda: any(r["release"] for req in server.requests for r in req["report"]))
    rel = [r for req in server.requests for r in req["report"] if r["release"]]
    assert rel[0]["lease_id"] == "l1" and rel[0]["spent"] == 1
    # a lease past its expiry lapses here: its spend not acknowledged is owed once, with release, on its id
    needs = leases.needs_of("other", 0, "run-1", None)
    assert leases.ensure(needs, 2.0)
    leases.consume(needs)
    with leases._lock:
        for c in leases._counters.values():
            c.expires_at = time.time() * 1000 - 1
    assert not leases.covered(needs)
    until(lambda: any(r["release"] and r["lease_id"] == "l2" for req in server.requests for r in req["report"]))
    late = [r for req in server.requests for r in req["report"] if r["lease_id"] == "l2" and r["release"]]
    assert late[0]["spent"] == 1
    leases.close(1.0)


def test_the_platform_out_of_reach_is_answered_as_unavailable_naming_the_limit() -> None:
    server = Granting(limit=10, slice_=5)
    server.down = True
    errors: List[str] = []
    leases = make(server, [[policy()]], errors)
    needs = leases.needs_of("other", 0, "run-1", None)
    assert leases.ensure(needs, 2.0) is False
    why = leases.unavailable(needs)
    assert why is not None and why.startswith('the fleet-wide limit rate_limit:* of policy "fleet" could not be leased: ') and "could not reach" in why
    assert leases.view(needs)("p1", "rate_limit:*") is None  # the engine then counts in this process
    assert len(errors) == 1 and errors[0].startswith("fleet-wide limits: ")
    assert leases.ensure(needs, 2.0) is False and len(server.requests) == 1  # not asked again within the retry pause
    leases.close(0.5)


def test_no_fleet_limit_needs_nothing() -> None:
    p = {**policy(), "rate_limits": {"x": {"max_calls": 1, "window_seconds": 60, "scope": "process"}}}
    leases = make(Granting(1, 1), [[p]], [])
    assert leases.needs_of("x", 1.0, "run-1", "s") == ()


def test_the_governor_fails_closed_or_counts_alone_when_a_fleet_limit_cannot_be_leased(tmp_path: Any) -> None:
    """The platform out of reach (the snapshot set as the last one loaded): fail_mode closed blocks an action that
    needs a lease, naming the limit; fail_mode open decides it in this process alone (the session budget of 0.05 USD
    counted here stops the sixth 0.01 USD action)."""
    from agp import ActionBlocked, Governor
    from agp._decider import NO_KILL_SWITCHES
    from agp._util import now_ms
    from agp.snapshot import Snapshot, with_policy_defaults

    p = with_policy_defaults({**policy(), "rate_limits": {}, "session_budget": 0.05, "denied_actions": [], "approval_required_actions": [], "allowed_actions": None})
    for mode in ("closed", "open"):
        gov = Governor.connect("http://127.0.0.1:9", "agp_x", "bot", fail_mode=mode, push=False, poll_interval=3600, quota_wait=0.5,
                               spool_dir=str(tmp_path / mode), on_report_error=lambda m: None)
        gov._snapshot.current = Snapshot([p], NO_KILL_SWITCHES, now_ms())
        with gov.run(session_id="s-1") as run:
            if mode == "closed":
                try:
                    run.act("charge", {}, lambda a: 1, estimated_cost_usd=0.01)
                    raise AssertionError("not blocked")
                except ActionBlocked as e:
                    assert e.decision["rule"] is None
                    assert e.decision["reason"].startswith('the fleet-wide limit session_budget of policy "fleet" could not be leased: ')
                    assert e.decision["reason"].endswith("; fail_mode is closed")
            else:
                outs = [run.act("charge", {}, lambda a: 1, estimated_cost_usd=0.01, on_blocked="return") for _ in range(6)]
                assert outs[:5] == [1] * 5 and outs[5].decision["decision"] == "budget_exceeded"
        assert gov.status()["leases"] == []
        gov.close(timeout=0)
