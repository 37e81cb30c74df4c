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
    out = fleet({"agent_id": agent_id, "action": "ping", "idle": 1.5})
    admitted = [o["admitted"] for o in out]
    print(f"agent-scoped rate limit 40 per day over {PROCESSES} processes: admitted {admitted} = {sum(admitted)}")
    if rate_window(86400, time.time() * 1000) != before:  # the day turned during the test: two windows
        assert sum(admitted) <= 80
        return
    assert sum(admitted) == 40, out
    assert all(set(o["reasons"]) <= {"rate_limited"} for o in out), out
