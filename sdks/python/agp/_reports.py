"""The records ``run.act``, ``gov.run``, ``run.end`` and ``connect`` report, built here and handed to the reporter
in one place (``reports.ts`` of the TypeScript SDK; same types, ids and bodies):

- ``action.record`` (the ledger entry): status ``success``, ``error`` or ``blocked``; ``cost_usd`` is the estimate of
  an action that ran (a blocked entry carries no cost);
- ``intervention.create``: every spec field the SDK knows; a guardrail's context only for guardrail types;
- ``run.start``, ``run.end``, ``agent.register``.
Report ids: ``run.<run id>.start`` / ``.end``; ``<run id>.<nonce>.<seq>.a`` (ledger) and ``.i`` (intervention) for
the ``seq``-th call of a run (the nonce is per run), so a retry or a re-delivery after a restart sends the same id.
Internal. Source: docs/sdk.md §Reporting; spec §Intervention record."""

from __future__ import annotations

from typing import Any, Dict, Optional

from .engine.decide import STOPPING_DECISIONS
from ._util import id_part, iso_time

#: Intervention types that carry a guardrail's context payload (``GUARDRAIL_FOR_TYPE`` of @agp/contracts).
GUARDRAIL_TYPES = frozenset(("pii_blocked", "content_blocked", "loop_detected", "idempotent_replay"))


class Reports:
    """See the module docs. ``send(type, id, body, timestamp)`` goes to the reporter."""

    def __init__(self, reporter: Any, agent_id: str):
        self.reporter = reporter
        self.agent_id = agent_id
        #: Actions refused because the spool stayed full or the governor closed while they waited.
        self.refused_spool_full = 0

    def send(self, type_: str, id_: str, body: Dict[str, Any], timestamp: Optional[str] = None) -> None:
        """Spool one report and send it in the background: the one place reports reach the reporter."""
        self.reporter.enqueue({"id": id_, "type": type_, "timestamp": timestamp or iso_time(), "body": body})

    def run_started(self, run_id: str, session_id: Optional[str], name: Optional[str], metadata: Optional[Dict[str, Any]]) -> None:
        """``run.start`` of ``run_id``."""
        body: Dict[str, Any] = {"run_id": run_id, "agent_id": self.agent_id}
        if session_id:
            body["session_id"] = session_id
        if name:
            body["name"] = name
        if metadata:
            body["metadata"] = metadata
        body["started_at"] = iso_time()
        self.send("run.start", f"run.{id_part(run_id)}.start", body)

    def run_ended(self, run_id: str, status: str, error: Optional[str]) -> None:
        """``run.end`` of ``run_id``, with an error text of at most 10,000 characters."""
        body: Dict[str, Any] = {"run_id": run_id, "agent_id": self.agent_id, "status": status, "ended_at": iso_time()}
        if error:
            body["error"] = error[:10_000]
        self.send("run.end", f"run.{id_part(run_id)}.end", body)

    def ledger(self, c: Any, args: Dict[str, Any], status: str, duration_ms: Optional[float] = None, actual: Optional[float] = None, outputs: Any = None, has_outputs: bool = False, error: Optional[str] = None) -> str:
        """The ledger entry (``action.record``) of call ``c`` run with ``args``; returns its report id."""
        ts = iso_time()
        body: Dict[str, Any] = {"run_id": c.run_id, "agent_id": self.agent_id, "action_name": c.name, "status": status, "inputs": args}
        if has_outputs:
            body["outputs"] = outputs
        if status != "blocked":
            body["cost_usd"] = c.estimated
        if actual is not None:
            body["actual_cost_usd"] = actual
        if duration_ms is not None:
            body["duration_ms"] = round(duration_ms * 1000) / 1000
        if error:
            body["error"] = error[:10_000]
        body["timestamp"] = ts
        self.send("action.record", c.ledger_id, body, ts)
        return c.ledger_id

    def intervention_body(self, c: Any, d: Dict[str, Any], modified: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        """The intervention record of decision ``d`` for call ``c``, with every spec field the SDK knows."""
        type_ = d.get("intervention_type") or "hard_block"
        body: Dict[str, Any] = {"type": type_, "outcome": d.get("outcome") or "blocked", "action_name": c.name, "agent_id": self.agent_id, "run_id": c.run_id}
        if d.get("policy_id"):
            body["policy_id"] = d["policy_id"]
        if d.get("policy_name"):
            body["policy_name"] = d["policy_name"][:256]
        body["risk_level"] = d["risk_level"]
        body["estimated_cost_usd"] = c.estimated
        cp = d.get("cost_prevented_usd")
        body["cost_prevented_usd"] = cp if cp is not None else (c.estimated if d["decision"] in STOPPING_DECISIONS else 0)
        body["reason"] = d["reason"][:10_000]
        if c.intent:
            body["agent_intent"] = c.intent[:10_000]
        body["original_inputs"] = c.inputs
        body["modified_inputs"] = modified
        if d.get("context") and type_ in GUARDRAIL_TYPES:
            body["context"] = d["context"]
        rule = d.get("approval")
        if rule and body["outcome"] == "escalated":
            # How the approval is decided (the escalating policy's rule): the approval waits for the last approver.
            body["approvals_required"] = int(rule["approvals_required"])
            body["separation_of_duties"] = bool(rule["separation_of_duties"])
        body["timestamp"] = iso_time()
        return body

    def intervention(self, c: Any, d: Dict[str, Any], modified: Optional[Dict[str, Any]], id_: Optional[str] = None) -> None:
        """Report the intervention of decision ``d`` for call ``c`` (background), under ``id_`` (default the call's
        intervention id; the PII guardrail on a result uses ``<that>r``)."""
        self.send("intervention.create", id_ or c.intervention_id, self.intervention_body(c, d, modified))
