"""The decision step of ``run.act`` (``decider.ts`` of the TypeScript SDK): from the governance snapshot, the run's
state and one action, the decision. No network:

- the fail-closed gate first (no snapshot under ``fail_mode="closed"``, one older than ``max_staleness``, or an
  answer of the platform the SDK does not understand) → a ``block`` of the SDK's own (:func:`fail_closed`);
- a fleet-wide limit the action needs that could not be leased, under ``fail_mode="closed"`` → a ``block`` of its own;
- else the policy engine's :func:`agp.engine.decide` (the same decision as the platform's decision API), with the
  run's spend, its recent calls, the idempotency record of a repeated call and what the leases have left of each
  fleet-wide limit;
- a moderation guardrail that could not score the arguments fails closed (:func:`moderation_unavailable`); the scores
  themselves come from the governor's moderation provider (:func:`agp.moderation.score_arguments`), asked before.
Internal. Source: docs/sdk.md §Governing actions, §Fail modes; spec §Intervention types."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from .engine import POLICY_DECISIONS, RULE_RISK, PreparedPolicies, QuotaView, decide, review_result
from .snapshot import SnapshotSource
from ._util import now_ms

NO_KILL_SWITCHES = {"organization": {"engaged": False, "reason": None}, "agents": []}


def fail_closed(reason: str, estimated: float, risk: str) -> Dict[str, Any]:
    """A decision the SDK takes itself when it cannot trust its snapshot (or cannot record): block, no policy."""
    return {"decision": "block", "intervention_type": "hard_block", "outcome": "blocked", "rule": None, "policy_id": None, "policy_name": None,
            "reason": reason, "risk_level": risk, "estimated_cost_usd": estimated, "cost_prevented_usd": estimated}


def _rank(decision: str) -> int:
    return POLICY_DECISIONS.index(decision) if decision in POLICY_DECISIONS else 0


def moderation_unavailable(d: Dict[str, Any], guardrails: List[Dict[str, str]], name: str, error: str, estimated: float, risk: Optional[str]) -> Dict[str, Any]:
    """The decision when the moderation guardrail could not score the arguments (``moderationUnavailable`` of the
    TypeScript SDK): a ``block``-mode guardrail blocks unless ``d`` is already at least as restrictive; ``warn``-mode
    ones warn when nothing else decided."""
    blocking = next((g for g in guardrails if g["mode"] == "block"), None)
    g = blocking or (guardrails[0] if guardrails else None)
    if g is None:
        return d
    why = f"{name} arguments could not be moderated ({error})"
    base = {"rule": "moderation_guardrail", "policy_id": g["policy_id"], "policy_name": g["policy_name"], "risk_level": risk or RULE_RISK["moderation_guardrail"], "estimated_cost_usd": estimated}
    if blocking is not None:
        if _rank(d["decision"]) <= _rank("content_blocked"):
            return d
        return {**base, "decision": "block", "intervention_type": "hard_block", "outcome": "blocked", "reason": f"{why}; the moderation guardrail of policy \"{g['policy_name']}\" fails closed", "cost_prevented_usd": estimated}
    if d["decision"] != "allow":
        return d
    return {**base, "decision": "warn", "intervention_type": "warning", "outcome": "warned", "reason": f"{why}; warned by the moderation guardrail of policy \"{g['policy_name']}\"", "cost_prevented_usd": 0}


class Decider:
    """See the module docs. ``max_staleness_s``: None for no bound."""

    def __init__(self, snapshot: SnapshotSource, agent_id: str, url: str, fail_mode: str, max_staleness_s: Optional[float], risk_of: Dict[str, str]):
        self.snapshot = snapshot
        self.agent_id = agent_id
        self.url = url
        self.fail_mode = fail_mode
        self.max_staleness_s = max_staleness_s
        self.risk_of = risk_of
        self._facts_of: Any = None
        self._facts: Dict[str, Any] = {}

    def gate_reason(self) -> Optional[str]:
        """Why ``act`` must fail closed now, or None."""
        s = self.snapshot
        if s.incompatible:
            return s.incompatible
        age = s.age_ms()
        suffix = f" ({s.last_error})" if s.last_error else ""
        if age is None:
            return f"no policy snapshot has been loaded from {self.url} yet and fail_mode is closed{suffix}" if self.fail_mode == "closed" else None
        if self.max_staleness_s is not None and age > self.max_staleness_s * 1000:
            return f"the policy snapshot is {age / 1000:g} s old, past max_staleness {self.max_staleness_s:g} s{suffix}"
        return None

    def decide(self, name: str, args: Dict[str, Any], estimated: float, explicit_key: Optional[str], key: Optional[str], repeats: Optional[int],
               run_spend: float, session_spend: float, calls: List[Dict[str, Any]], quota: Optional[QuotaView] = None,
               quota_unavailable: Optional[str] = None, moderation: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """The decision for one action of a run: the fail-closed gate, else the engine (see the module docs).
        ``quota``: what the leases have left of each fleet-wide limit the action counts against (:mod:`agp.leases`);
        ``quota_unavailable``: why one of them could not be leased (the platform unreachable), or None;
        ``moderation``: the provider's scores of the arguments (``{"scores": [...]}``) or why there are none
        (``{"error": …}``), from :func:`agp.moderation.score_arguments`, when a moderation guardrail applies."""
        risk = self.risk_of.get(name)
        closed = self.gate_reason()
        if closed:
            return fail_closed(closed, estimated, risk or "high")
        # A fleet-wide limit that could not be leased: fail_mode closed blocks; open decides without it (counted here alone).
        if quota_unavailable is not None and self.fail_mode == "closed":
            return fail_closed(f"{quota_unavailable}; fail_mode is closed", estimated, risk or "high")
        action: Dict[str, Any] = {"agent_id": self.agent_id, "action_name": name, "arguments": args, "estimated_cost_usd": estimated, "risk_level": risk}
        if explicit_key is not None:
            action["idempotency_key"] = explicit_key
        if moderation is not None and "scores" in moderation:
            action["moderation_scores"] = moderation["scores"]
        context = {
            "now": now_ms(), "run_spend_usd": run_spend, "session_spend_usd": session_spend, "recent_calls": calls,
            "idempotency_records": [{"action_name": name, "idempotency_key": key, "at": repeats}] if key is not None and repeats is not None else [],
        }
        cur = self.snapshot.current
        d = decide(self.facts()["prepared"], cur.kill_switches if cur else NO_KILL_SWITCHES, action, context, quota)
        if d.get("guardrail_context"):
            d["context"] = d["guardrail_context"]
        if moderation is not None and "error" in moderation:
            return moderation_unavailable(d, self.facts()["moderation"], name, moderation["error"], estimated, risk)
        return d

    def moderates(self) -> bool:
        """Whether any applicable policy has a moderation guardrail (``act`` then asks the provider first)."""
        return bool(self.facts()["moderation"])

    def facts(self) -> Dict[str, Any]:
        """What the snapshot's policies ask of the run's state, computed once per snapshot: ``longest_window_ms``,
        ``needs_args_hash`` (a loop or idempotency guardrail), ``idempotency`` [(actions, ttl ms)], ``moderation``,
        ``scans_results`` (a PII guardrail with ``results``), ``prepared`` (the policies prepared for ``decide``)."""
        cur = self.snapshot.current
        policies = cur.policies if cur else []
        if self._facts_of is policies and self._facts:
            return self._facts
        f: Dict[str, Any] = {"longest_window_ms": 0, "needs_args_hash": False, "idempotency": [], "moderation": [], "scans_results": False,
                             "prepared": PreparedPolicies(policies)}
        for p in policies:
            if not p.get("enabled") or not (not p.get("agent_ids") or self.agent_id in p["agent_ids"]):
                continue
            for rl in (p.get("rate_limits") or {}).values():
                f["longest_window_ms"] = max(f["longest_window_ms"], rl["window_seconds"] * 1000)
            g = p.get("guardrails") or {}
            if (g.get("pii") or {}).get("results") is not None:
                f["scans_results"] = True
            if g.get("moderation"):
                f["moderation"].append({"policy_id": p["id"], "policy_name": p["name"], "mode": "warn" if g["moderation"].get("mode") == "warn" else "block"})
            if g.get("loop"):
                f["needs_args_hash"] = True
                f["longest_window_ms"] = max(f["longest_window_ms"], (g["loop"].get("window_seconds") or 0) * 1000)
            idem = g.get("idempotency")
            if idem and isinstance(idem.get("actions"), list):
                f["needs_args_hash"] = True
                f["idempotency"].append((idem["actions"], (idem.get("ttl_seconds") or 3600) * 1000))
        self._facts_of = policies
        self._facts = f
        return f

    def review_result(self, name: str, out: Any, estimated: float) -> Optional[Tuple[Dict[str, Any], Any]]:
        """The PII guardrail's verdict on the result ``out`` (JSON data) of action ``name`` (policies with
        ``guardrails.pii.results`` set; :func:`agp.engine.review_result`): None when nothing is to be done; else
        (decision, result): a ``pii_blocked`` decision (withhold the result), ``downgrade`` (``result`` is the masked
        copy) or ``warn``, to record with the call (``context`` the guardrail's payload, ``cost_prevented_usd`` 0: the
        action ran). ``reviewResult`` of the TypeScript SDK's decider."""
        if not self.facts()["scans_results"] or not isinstance(out, (dict, list)):
            return None
        cur = self.snapshot.current
        policies = cur.policies if cur else []
        try:
            r = review_result(policies, self.agent_id, name, out)
        except (TypeError, AttributeError):  # not JSON data (keys that are not strings, …): reviewed as JSON
            r = review_result(policies, self.agent_id, name, json.loads(json.dumps(out, default=str)))
        if r["outcome"] == "pass":
            return None
        decision, type_, outcome = {"block": ("pii_blocked", "pii_blocked", "blocked"), "redact": ("downgrade", "downgrade", "modified")}.get(r["outcome"], ("warn", "warning", "warned"))
        d = {"decision": decision, "intervention_type": type_, "outcome": outcome, "rule": "pii_guardrail", "policy_id": r["policy_id"], "policy_name": r["policy_name"],
             "reason": r["reason"] or "", "risk_level": RULE_RISK["pii_guardrail"], "estimated_cost_usd": estimated, "cost_prevented_usd": 0}
        if r["guardrail_context"]:
            d["context"] = r["guardrail_context"]
        return d, r["result"]

    def idempotency_ttl_ms(self, name: str) -> Optional[float]:
        """How long results of ``name`` are kept for the idempotency guardrail (ms), or None when no policy asks."""
        ttl = None
        for actions, t in self.facts()["idempotency"]:
            if name in actions or "*" in actions:
                ttl = max(ttl or 0, t)
        return ttl
