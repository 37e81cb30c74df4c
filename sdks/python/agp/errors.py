"""The decision an action got, and the exceptions :meth:`agp.Run.act` raises when the action does not run
(``errors.ts`` of the TypeScript SDK). Source: spec §Intervention types, §Intervention outcomes; docs/sdk-python.md."""

from __future__ import annotations

from typing import Any, Dict, Optional

__all__ = ["ActionBlocked", "ApprovalRejected", "BlockedResult", "AgpHttpError", "AgpNetworkError"]


class ActionBlocked(Exception):
    """The action was not executed: a kill switch, a policy (block, budget_exceeded, rate_limited), a guardrail
    (pii_blocked, content_blocked, loop_detected) or the SDK's fail-closed rule stopped it; the intervention is
    recorded. TypeScript: ``ActionBlockedError``.

    :ivar action_name: the action that was stopped.
    :ivar decision: the decision dict (``decision``, ``intervention_type``, ``outcome``, ``rule``, ``policy_id``,
        ``policy_name``, ``reason``, ``risk_level``, ``estimated_cost_usd`` and ``cost_prevented_usd`` in USD).
    """

    def __init__(self, action_name: str, decision: Dict[str, Any]):
        super().__init__(f"{action_name} blocked ({decision['decision']}): {decision['reason']}")
        self.action_name = action_name
        self.decision = decision


class ApprovalRejected(Exception):
    """An escalated action was not approved, and did not run. TypeScript: ``ApprovalRejectedError``.

    :ivar status: ``rejected`` (a human said no), ``expired`` (nobody decided before the platform's expiry),
        ``timeout`` (nobody decided within ``approval_timeout`` s, or the platform was unreachable that long) or
        ``mismatch`` (the approval's arguments do not hash to this call's).
    :ivar approval_id: ``apr-<intervention id>``, or None when the escalation could not be recorded.
    :ivar decision: the escalation decision (``reason`` says how it ended).
    :ivar approver_email: / :ivar notes: who decided and why, when a human did.
    """

    def __init__(self, action_name: str, status: str, approval_id: Optional[str], decision: Dict[str, Any], approver_email: Optional[str] = None, notes: Optional[str] = None):
        msg = f"{action_name} was not approved ({status})"
        if approval_id:
            msg += f" [{approval_id}]"
        if approver_email:
            msg += f" by {approver_email}"
        if notes:
            msg += f": {notes}"
        super().__init__(msg)
        self.action_name = action_name
        self.status = status
        self.approval_id = approval_id
        self.decision = decision
        self.approver_email = approver_email
        self.notes = notes


class BlockedResult:
    """What ``act`` returns instead of raising under ``on_blocked="return"``: ``blocked`` is always True, ``decision``
    the decision dict (as :class:`ActionBlocked` carries it). TypeScript: ``{blocked: true, decision}``."""

    __slots__ = ("decision",)
    blocked = True

    def __init__(self, decision: Dict[str, Any]):
        self.decision = decision

    def __repr__(self) -> str:
        return f"BlockedResult({self.decision.get('decision')!r}: {self.decision.get('reason')!r})"


class AgpHttpError(Exception):
    """The platform answered with a non-2xx status. :ivar status: the HTTP status; :ivar body: the answer's text
    (an RFC 9457 problem document for 4xx)."""

    def __init__(self, method: str, path: str, status: int, body: str):
        super().__init__(f"{method} {path} answered {status}: {body[:300]}")
        self.status = status
        self.body = body


class AgpNetworkError(Exception):
    """The platform could not be reached (connection refused, DNS, timeout)."""
