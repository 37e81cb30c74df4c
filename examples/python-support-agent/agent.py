"""The AGP support agent example in Python: the TypeScript example (examples/support-agent) with the Python SDK
(``agp-sdk``), against a running platform (``npm run quickstart``). A scripted support conversation plays the agent's
tool calls through ``run.act`` so that they meet every decision the platform makes: allow, warn, block, approval
(escalate: the call waits for a human), downgrade, budget, PII, loop and idempotent replay. There is no language model
(the script stands in for one: put your framework's agent loop in its place, see docs/sdk-python.md, Recipes); a
stopped call's refusal is what the model would be told. It prints one line per decision and, at the end, the console
pages where the interventions and the run show.

Run it from the repository root, with the SDK importable (installed, or ``PYTHONPATH=sdks/python``)::

    PYTHONPATH=sdks/python python3 examples/python-support-agent/agent.py                 # waits for you to approve close_account in the console
    PYTHONPATH=sdks/python python3 examples/python-support-agent/agent.py --auto-approve  # approves it through the API with the same key

It creates the four policies it needs (scoped to its own agent), then plays the conversation. It exits 0 when every
decision came as the script expects, 1 otherwise (e.g. a policy was edited in the console).

Settings (environment): ``AGP_URL`` (default ``http://127.0.0.1:8080``, where the quickstart listens); ``AGP_KEY`` (a
write key; default the one the quickstart's first start saved to ``first-run-keys.json`` in its data folder,
``AGP_DATA_DIR``, default ``.agp/data``); ``AGP_AGENT_ID`` (default ``python-support-agent-example``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from agp import ActionBlocked, ApprovalRejected, Governor

ROOT = Path(__file__).resolve().parents[2]
AUTO_APPROVE = "--auto-approve" in sys.argv
URL = (os.environ.get("AGP_URL") or "http://127.0.0.1:8080").rstrip("/")
AGENT_ID = os.environ.get("AGP_AGENT_ID") or "python-support-agent-example"


def write_key() -> Tuple[str, str]:
    """AGP_KEY, else the write key the quickstart saved on its first start (and where it came from)."""
    if os.environ.get("AGP_KEY"):
        return os.environ["AGP_KEY"], "AGP_KEY"
    data = Path(os.environ.get("AGP_DATA_DIR") or ROOT / ".agp/data")
    file = data / "first-run-keys.json"
    if not file.exists():
        sys.exit(f"No key: set AGP_KEY to a write key, or start the platform with `npm run quickstart` (its first start saves its keys to {file}).")
    saved = json.loads(file.read_text())
    if not saved.get("write"):
        sys.exit(f"{file} holds no write key; set AGP_KEY to a write key.")
    return saved["write"], str(file)


KEY, KEY_FROM = write_key()


def api(method: str, path: str, body: Any = None) -> Any:
    """The platform's REST API with the write key: parsed JSON; exits naming the status and problem on an error."""
    req = urllib.request.Request(URL + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            text = res.read().decode()
    except urllib.error.HTTPError as err:
        sys.exit(f"{method} {path} answered {err.code}: {err.read().decode()[:500]}")
    except OSError as err:
        sys.exit(f"cannot reach AGP at {URL} ({err}); start it with `npm run quickstart` or set AGP_URL")
    return json.loads(text) if text else None


# ── The policies (the TypeScript example's, examples/support-agent/policies.ts) ─────────────────────────────────
def support_policies(agent_id: str) -> List[Dict[str, Any]]:
    """The example's four policies, named after the agent so they sort together in the console."""
    scope = {"agent_ids": [agent_id], "enabled": True}
    return [
        {"name": f"{agent_id}: what the agent may do", **scope,
         "description": "Never delete customer data; closing an account needs a human; refunds are capped at 100 USD; no single action over 5 USD.",
         "denied_actions": ["delete_customer_data"], "approval_required_actions": ["close_account"], "action_budget": 5,
         "downgrades": [{"action": "issue_refund", "argument": "amount", "max": 100}]},
        {"name": f"{agent_id}: payment data", **scope, "description": "Card numbers, IBANs, social security numbers and secrets never leave the agent.",
         "guardrails": {"pii": {"mode": "block", "categories": ["payment_card", "iban", "us_ssn", "secret"]}}},
        {"name": f"{agent_id}: contact details", **scope, "description": "Phone numbers in what the agent writes are allowed, with a warning.",
         "guardrails": {"pii": {"mode": "warn", "categories": ["phone"]}}},
        {"name": f"{agent_id}: loops and duplicates", **scope,
         "description": "The same call with the same arguments at most 3 times a minute; a confirmation email is sent once.",
         "guardrails": {"loop": {"mode": "block", "threshold": 3, "window_seconds": 60}, "idempotency": {"actions": ["send_email"], "ttl_seconds": 3600}}},
    ]


def canonical(v: Any) -> str:
    return json.dumps(v, sort_keys=True)


def ensure_policies(specs: List[Dict[str, Any]]) -> List[Tuple[str, str, str]]:
    """Create each policy, or bring an existing one of the same name back to the spec: (id, name, what was done)."""
    out = []
    for spec in specs:
        page = api("GET", f"/api/v1/policies?name={urllib.parse.quote(spec['name'])}&limit=1")
        existing = page["policies"][0] if page["policies"] else None
        if existing is None:
            out.append((api("POST", "/api/v1/policies", spec)["id"], spec["name"], "created"))
            continue
        patch = {k: v for k, v in spec.items() if k != "name" and canonical(existing.get(k)) != canonical(v)}
        if patch:
            api("PATCH", f"/api/v1/policies/{existing['id']}", patch)
        out.append((existing["id"], spec["name"], "updated" if patch else "unchanged"))
    return out


# ── The tools (the TypeScript example's, examples/support-agent/tools.ts) ────────────────────────────────────────
def obj(props: Dict[str, Any], required: List[str]) -> Dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


STR = {"type": "string", "minLength": 1}
ACTIONS = [
    {"name": "lookup_order", "description": "Read an order and its shipping status", "risk_level": "low", "typical_cost_usd": 0.001, "parameters": obj({"order_id": STR}, ["order_id"])},
    {"name": "check_ticket_status", "description": "Read a support ticket's status", "risk_level": "low", "typical_cost_usd": 0.001, "parameters": obj({"ticket_id": STR}, ["ticket_id"])},
    {"name": "add_ticket_note", "description": "Add an internal note to a ticket", "risk_level": "low", "typical_cost_usd": 0.001, "parameters": obj({"ticket_id": STR, "note": STR}, ["ticket_id", "note"])},
    {"name": "send_email", "description": "Email the customer", "risk_level": "medium", "typical_cost_usd": 0.002, "parameters": obj({"to": STR, "subject": STR, "body": STR}, ["to", "subject", "body"])},
    {"name": "issue_refund", "description": "Refund (part of) an order, in USD", "risk_level": "high", "typical_cost_usd": 0.01,
     "parameters": obj({"order_id": STR, "amount": {"type": "number", "exclusiveMinimum": 0}, "reason": STR}, ["order_id", "amount", "reason"])},
    {"name": "close_account", "description": "Close the customer's account", "risk_level": "high", "typical_cost_usd": 0.005, "parameters": obj({"customer_id": STR, "reason": STR}, ["customer_id", "reason"])},
    {"name": "delete_customer_data", "description": "Erase every record of the customer", "risk_level": "critical", "typical_cost_usd": 0.005, "parameters": obj({"customer_id": STR}, ["customer_id"])},
    {"name": "book_specialist_callback", "description": "Book a paid callback by a human specialist", "risk_level": "medium", "typical_cost_usd": 12,
     "parameters": obj({"customer_id": STR, "topic": STR}, ["customer_id", "topic"])},
]
ran: Dict[str, int] = {}
_seq = [0]


def _next() -> int:
    _seq[0] += 1
    return _seq[0]


def _counted(name: str, fn: Callable[[Dict[str, Any]], Any]) -> Callable[[Dict[str, Any]], Any]:
    def tool(args: Dict[str, Any]) -> Any:
        ran[name] = ran.get(name, 0) + 1
        return fn(args)
    return tool


TOOLS: Dict[str, Callable[[Dict[str, Any]], Any]] = {name: _counted(name, fn) for name, fn in {
    "lookup_order": lambda a: {"order_id": a["order_id"], "status": "shipped", "carrier": "DHL", "eta_days": 2, "total_usd": 250},
    "check_ticket_status": lambda a: {"ticket_id": a["ticket_id"], "status": "waiting on the warehouse"},
    "add_ticket_note": lambda a: {"ticket_id": a["ticket_id"], "note_id": f"note-{_next()}"},
    "send_email": lambda a: {"message_id": f"msg-{_next()}", "to": a["to"]},
    "issue_refund": lambda a: {"refund_id": f"re-{_next()}", "order_id": a["order_id"], "amount_usd": a["amount"]},
    "close_account": lambda a: {"customer_id": a["customer_id"], "closed": True},
    "delete_customer_data": lambda a: {"customer_id": a["customer_id"], "erased": True},
    "book_specialist_callback": lambda a: {"customer_id": a["customer_id"], "booking_id": f"cb-{_next()}"},
}.items()}

# ── Output: one line per decision ─────────────────────────────────────────────────────────────────────────────
LABEL = {"allow": "allow", "warn": "warn", "block": "block", "escalate": "approval", "downgrade": "downgrade", "budget_exceeded": "budget",
         "pii_blocked": "pii", "loop_detected": "loop", "idempotent_replay": "replay", "content_blocked": "moderation", "rate_limited": "rate limit"}


def line(label: str, action: str, text: str) -> None:
    print(f"  {label:<10} {action:<25} {text}", flush=True)


def short(v: Any) -> str:
    return " ".join(f"{k}={x if isinstance(x, str) else json.dumps(x)}" for k, x in v.items()) if isinstance(v, dict) else json.dumps(v)


decisions: List[Dict[str, Any]] = []
seen: List[Tuple[str, str, str]] = []


def on_decision(e: Dict[str, Any]) -> None:
    """Remember each decision of the call being made; an escalation says at once that it waits."""
    decisions.append(e)
    if e["decision"]["decision"] == "escalate" and not e["approved"]:
        line("approval", e["action_name"], "waiting for a human… (--auto-approve approves it through the API)" if AUTO_APPROVE
             else f"waiting for a human: approve it in the console at {URL}/approvals (sign in with the write key)")


def main() -> int:
    print(f"AGP Python support agent example → {URL}, agent {AGENT_ID}, key from {KEY_FROM}{', --auto-approve' if AUTO_APPROVE else ''}")
    ensured = ensure_policies(support_policies(AGENT_ID))
    print("policies: " + "; ".join(f'"{name}" {what}' for _, name, what in ensured))
    # The agent's snapshot serves them once the platform's read model has them (a moment, in distributed mode).
    for _ in range(100):
        snap = api("GET", f"/api/v1/agents/{urllib.parse.quote(AGENT_ID)}/governance")
        if {p for p, _, _ in ensured} <= {p["id"] for p in snap["policies"]}:
            break
        time.sleep(0.1)
    else:
        sys.exit("the governance snapshot does not list the example policies after 10 s")

    gov = Governor.connect(url=URL, key=KEY, agent_id=AGENT_ID, actions=ACTIONS, on_decision=on_decision, approval_timeout=60 if AUTO_APPROVE else 600,
                           agent={"name": "Support agent (Python example)", "description": "Answers customers about orders, refunds and accounts (examples/python-support-agent).",
                                  "framework": "none (run.act)"})

    def approve(approval_id: str, decision: Dict[str, Any]) -> None:
        # --auto-approve: approve as a reviewer would in the console (the approval waits until the escalation is projected).
        def go() -> None:
            for _ in range(100):
                try:
                    gov.decide_approval(approval_id, "approve", "auto-approve@support-agent.example", "approved by the example (--auto-approve)")
                    return
                except Exception:
                    time.sleep(0.1)
        threading.Thread(target=go, daemon=True).start()

    email = {"to": "jane.doe@example.com", "subject": "Your refund for order A-1001", "body": "Hi Jane, we refunded 100 USD for order A-1001. Ticket T-4711."}
    conversation: List[Tuple[str, List[Tuple[str, str, Dict[str, Any]]], str]] = [
        ("Hi, where is my order A-1001?", [("allow", "lookup_order", {"order_id": "A-1001"})], "Order A-1001 has shipped with DHL and should arrive in 2 days."),
        ("Please call me back on +44 20 7946 0958.", [("warn", "add_ticket_note", {"ticket_id": "T-4711", "note": "Customer asks for a call back on +44 20 7946 0958."})],
         "I noted your number; a colleague will call you back."),
        ("You charged my card 4111 1111 1111 1111 twice!", [("pii_blocked", "add_ticket_note", {"ticket_id": "T-4711", "note": "Customer says card 4111 1111 1111 1111 was charged twice."})],
         "Sorry about that. Please never share your card number; I have not stored it."),
        ("Refund all 250 USD, now.", [("downgrade", "issue_refund", {"order_id": "A-1001", "amount": 250, "reason": "duplicate charge"}), ("allow", "send_email", email),
                                      ("idempotent_replay", "send_email", email)],
         "I refunded 100 USD, the most I can refund myself, and emailed you the confirmation."),
        ("Is ticket T-4711 resolved yet? … And now? … Now? … NOW?", [("allow" if i < 4 else "loop_detected", "check_ticket_status", {"ticket_id": "T-4711"}) for i in (1, 2, 3, 4)],
         "It is still waiting on the warehouse; checking again right now will not change that."),
        ("Just delete all my data!", [("block", "delete_customer_data", {"customer_id": "C-1042"})], "I am not allowed to delete customer data; I can ask our privacy team."),
        ("Then close my account.", [("escalate", "close_account", {"customer_id": "C-1042", "reason": "customer request"})], "Your account is closed."),
        ("I want a specialist to call me.", [("budget_exceeded", "book_specialist_callback", {"customer_id": "C-1042", "topic": "refund"})],
         "I cannot book a paid specialist callback; a colleague will follow up by email."),
    ]
    with gov.run(name="support conversation", session_id=f"support-{int(time.time() * 1000)}") as run:
        print(f"run {run.run_id}\n")
        for says, calls, answer in conversation:
            print(f"customer: {says}")
            for expected, name, args in calls:
                decisions.clear()
                before = ran.get(name, 0)
                options: Dict[str, Any] = {"intent": f"answer the customer ({name})"}
                if name == "send_email":
                    options["idempotency_key"] = f"email:{args['to']}:{args['subject']}"
                if AUTO_APPROVE:
                    options["on_escalated"] = approve
                try:
                    out: Any = run.act(name, args, TOOLS[name], **options)
                    outcome = f"executed → {short(out)}" if ran.get(name, 0) > before else f"not executed again: the first call's result → {short(out)}"
                except (ActionBlocked, ApprovalRejected) as err:
                    outcome = f"not executed: {err.decision['reason']} (the model gets the refusal)"
                first = decisions[0]["decision"] if decisions else {"decision": "none"}
                got = first["decision"]
                seen.append((name, expected, got))
                note = ""
                if got == "warn":
                    note = f" (warning: {first['reason']})"
                if got == "downgrade":
                    mod = first.get("modified_inputs") or {}
                    note = " (downgraded: " + ", ".join(f"{k} {json.dumps(args[k])} → {json.dumps(mod.get(k))}" for k in args if json.dumps(args[k]) != json.dumps(mod.get(k))) + ")"
                approved = got == "escalate" and len(decisions) > 1
                if approved:
                    note = " (approved by a human; kill switches and policies checked again)"
                line("approved" if approved else LABEL.get(got, got), name, f"{outcome}{note}{'' if got == expected else f'   ✗ expected {expected}'}")
            print(f"agent:    {answer}")
    gov.close()  # delivers every report to the platform

    wrong = [s for s in seen if s[1] != s[2]]
    kinds = list(dict.fromkeys(g for _, _, g in seen))
    print(f"\n{len(seen)} tool calls, decisions: {', '.join(LABEL.get(k, k) for k in kinds)}. Systems reached: {short(ran)}.")
    print(f"The console shows this agent's interventions: {URL}/interventions?agent_id={urllib.parse.quote(AGENT_ID)}")
    print(f"and the run with its ledger: {URL}/runs/{urllib.parse.quote(run.run_id)}")
    if wrong:
        print(f"\n{len(wrong)} decision(s) differ from the script ({'; '.join(f'{a}: expected {e}, got {g}' for a, e, g in wrong)}). "
              f"Were the example's policies edited, or does an organisation-wide policy apply to {AGENT_ID}?", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
