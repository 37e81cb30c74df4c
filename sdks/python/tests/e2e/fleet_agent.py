"""One agent process of the fleet-wide limit tests (test_fleet.py): the installed ``agp`` package, as an agent runs it.

Usage: ``python fleet_agent.py '<settings as JSON>'`` with ``url``, ``key``, ``agent_id``, ``session_id`` (optional),
``action``, ``cost_usd`` (USD per action; 0 for none), ``idle`` (s: stop after this long with no admitted action).
Prints ``ready`` once the governor's snapshot holds a policy, waits for a line ``go`` on stdin, then acts as fast as
it can (a refused action pauses 20 ms) and prints one JSON line ``{"admitted", "refused", "reasons", "leases"}``
(``leases``: the most lease rows ``gov.status()`` showed at once) after closing the governor (its leases released)."""

import json
import sys
import time

from agp import Governor

s = json.loads(sys.argv[1])
gov = Governor.connect(s["url"], s["key"], s["agent_id"], on_blocked="return", on_report_error=lambda m: None)
while gov.status()["policies"] < 1:
    time.sleep(0.02)
print("ready", flush=True)
sys.stdin.readline()
admitted = refused = 0
reasons = {}
most_leases = 0
last = time.monotonic()
with gov.run(session_id=s.get("session_id")) as run:
    while time.monotonic() - last < s.get("idle", 5.0):
        r = run.act(s["action"], {"n": admitted}, lambda a: True, estimated_cost_usd=s.get("cost_usd") or None)
        if r is True:
            admitted += 1
            last = time.monotonic()
            most_leases = max(most_leases, len(gov.status()["leases"]))
        else:
            refused += 1
            reasons[r.decision["decision"]] = r.decision["reason"]
            time.sleep(0.02)
gov.close()
print(json.dumps({"admitted": admitted, "refused": refused, "reasons": reasons, "leases": most_leases}), flush=True)
