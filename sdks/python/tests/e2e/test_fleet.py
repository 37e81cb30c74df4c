"""Fleet-wide limits through leases (``POST /api/v1/quotas/leases``) with several real agent processes of one agent,
each running the installed ``agp`` package (fleet_agent.py): each decides locally against its leases and acts as fast
as it can; together they admit exactly the limit (docs/sdk-python.md, Fleet-wide limits; the TypeScript SDK's
test/e2e/fleet-quotas.test.ts does the same with eight processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from typing import Any, Dict, List

import agp
from agp.engine.quotas import rate_window

URL = os.environ.get("AGP_URL", "")
KEY = os.environ.get("AGP_KEY", "")
Api = Any  # the `api` fixture of conftest.py

AGENT = os.path.join(os.path.dirname(__file__), "fleet_agent.py")
PROCESSES = 4


def fleet(settings: Dict[str, Any], n: int = PROCESSES) -> List[Dict[str, Any]]:
    """Start ``n`` agent processes with ``settings``, let them go together once all are ready, and return their final lines."""
    # The same package the test imports: installed (the venv's python), or this checkout's (conftest's sys.path).
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(agp.__file__))} if not os.environ.get("AGP_TEST_INSTALLED") else dict(os.environ)
    procs = [subprocess.Popen([sys.executable, AGENT, json.dumps({"url": URL, "key": KEY, **settings})], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(n)]
    try:
        for p in procs:
            line = p.stdout.readline()
            assert line.strip() == "ready", (line, p.stderr.read() if p.poll() is not None else "")
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        out = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=60)
            assert p.returncode == 0, stderr
            out.append(json.loads(stdout.strip().splitlines()[-1]))
        return out
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def counters(api: Api, policy_id: str) -> List[Dict[str, Any]]:
    status, body = api.call("GET", f"/api/v1/quotas?policy_id={policy_id}")
    assert status == 200, body
    return body["counters"]


def test_four_processes_share_a_session_budget_and_admit_exactly_the_limit(api: Api, agent_id: str) -> None:
    p = api.policy(agent_ids=[agent_id], session_budget=1.0)
    session = f"s-{uuid.uuid4().hex[:8]}"
    out = fleet({"agent_id": agent_id, "session_id": session, "action": "charge", "cost_usd": 0.01})
    admitted = [o["admitted"] for o in out]
    print(f"session budget 1 USD / 0.01 USD over {PROCESSES} processes: admitted {admitted} = {sum(admitted)}")
    assert sum(admitted) == 100, out
    assert sum(1 for a in admitted if a > 0) >= 2, f"the budget was not shared: {admitted}"
    assert all(o["leases"] >= 1 for o in out if o["admitted"] > 0)
    assert all(set(o["reasons"]) <= {"budget_exceeded"} for o in out), out
    c = [x for x in counters(api, p["id"]) if x["scope_key"] == session]
    assert len(c) == 1 and abs(c[0]["spent"] - 1.0) < 1e-6 and c[0]["holders"] == 0, c


def test_an_agent_scoped_rate_limit_admits_exactly_max_calls_across_processes(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], rate_limits={"ping": {"max_calls": 40, "window_seconds": 86400, "scope": "agent"}})
    before = rate_window(86400, time.time() * 1000)
    out = fleet({"agent_id": agent_id, "action": "ping"})
    admitted = [o["admitted"] for o in out]
    print(f"agent-scoped rate limit 40 per day over {PROCESSES} processes: admitted {admitted} = {sum(admitted)}")
    if rate_window(86400, time.time() * 1000) != before:  # the day turned during the test: two windows
        assert sum(admitted) <= 80
        return
    assert sum(admitted) == 40, out
    assert all(set(o["reasons"]) <= {"rate_limited"} for o in out), out


def test_a_policy_edit_ends_the_old_lease_and_close_releases(api: Api, agent_id: str) -> None:
    """The lease of a session budget is ended when the policy's limit changes (the next snapshot), a lease of the new
    limit is taken, and close() releases it: the counter is left with no holder and the spend of both actions."""
    from agp import Governor

    p = api.policy(agent_ids=[agent_id], session_budget=1.0)
    session = f"s-{uuid.uuid4().hex[:8]}"
    gov = Governor.connect(url=URL, key=KEY, agent_id=agent_id, poll_interval=0.2)
    api.eventually(lambda: gov.status()["policies"] >= 1, what="the policy in the snapshot")
    with gov.run(session_id=session) as run:
        assert run.act("charge", {"n": 1}, lambda a: "ok", estimated_cost_usd=0.01) == "ok"
        (first,) = gov.status()["leases"]
        assert first["limit"] == "session_budget" and first["scope_key"] == session and first["spent"] == 0.01 and first["held"] >= 0.01
        status, _ = api.call("PATCH", f"/api/v1/policies/{p['id']}", {"session_budget": 2.0})
        assert status == 200
        api.eventually(lambda: any(x.get("session_budget") == 2.0 for x in gov._snapshot.current.policies), what="the edited policy in the snapshot")
        assert run.act("charge", {"n": 2}, lambda a: "ok", estimated_cost_usd=0.01) == "ok"
        (second,) = gov.status()["leases"]
        assert second["spent"] == 0.01  # a new lease: the old one was ended with its spend

        def one_holder() -> Any:
            c = [x for x in counters(api, p["id"]) if x["scope_key"] == session]
            return c if len(c) == 1 and c[0]["holders"] == 1 and c[0]["limit_value"] == 2.0 else None

        api.eventually(one_holder, what="one holder of the edited limit")
    gov.close()
    c = [x for x in counters(api, p["id"]) if x["scope_key"] == session]
    assert len(c) == 1 and c[0]["holders"] == 0 and abs(c[0]["spent"] - 0.02) < 1e-9, c
