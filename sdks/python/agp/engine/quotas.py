"""Fleet-wide limits, pure (``quotas.ts`` of ``@agp/policy-engine``): which of a policy set's limits an action counts
against and how much it needs of each (:func:`quota_needs`), the window a limit's counter belongs to
(:func:`quota_window`) and a limit's value (:func:`quota_limit_of`). No I/O and no clock: ``now`` (ms since the Unix
epoch) comes in. The governor's leases (:mod:`agp.leases`) and the platform's granting service apply the same rules,
so they agree on what a limit is and when its window turns.
Source: docs/sdk.md (Fleet-wide limits); docs/decisions.md (Leases, not a check per action)."""

from __future__ import annotations

import calendar
import datetime
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "RUN_BUDGET_LIMIT", "SESSION_BUDGET_LIMIT", "period_budget_limit", "rate_limit_limit", "fleet_counted", "quota_needs",
    "period_window", "rate_window", "quota_window", "quota_limit_of", "has_fleet_limit",
]

#: The limit of a policy's ``run_budget`` (USD per run; the scope key is the run id).
RUN_BUDGET_LIMIT = "run_budget"
#: The limit of a policy's ``session_budget`` (USD per session; the scope key is the session id).
SESSION_BUDGET_LIMIT = "session_budget"
#: A window: (start inclusive, end exclusive), ms since the Unix epoch.
Window = Tuple[int, int]


def period_budget_limit(scope: str, period: str) -> str:
    """The limit name of one ``period_budgets`` entry: ``period_budget:<agent|organization>:<hour|day|month>``."""
    return f"period_budget:{scope}:{period}"


def rate_limit_limit(action: str) -> str:
    """The limit name of a fleet-counted ``rate_limits`` entry: ``rate_limit:<action or *>``."""
    return f"rate_limit:{action}"


def fleet_counted(limit: Mapping[str, Any]) -> bool:
    """Whether a rate limit is counted for the fleet (scope ``agent`` or ``organization``) rather than per process."""
    return limit.get("scope") in ("agent", "organization")


def has_fleet_limit(p: Mapping[str, Any]) -> bool:
    """Whether policy ``p`` has any fleet-wide limit (run, session or period budget; fleet-counted rate limit)."""
    return (p.get("run_budget") is not None or p.get("session_budget") is not None or bool(p.get("period_budgets"))
            or any(fleet_counted(r) for r in (p.get("rate_limits") or {}).values()))


def quota_needs(policies: Sequence[Mapping[str, Any]], agent_id: str, action_name: str, cost_usd: float, run_id: Optional[str], session_id: Optional[str]) -> List[Dict[str, Any]]:
    """The fleet-wide limits action ``action_name`` of agent ``agent_id`` counts against under the enabled policies
    that apply to it, each ``{policy_id, limit, unit ("usd"|"calls"), scope ("run"|"session"|"agent"|"organization"),
    limit_value, need}``: its estimated cost (USD, when above 0) of the run budget (when ``run_id`` is given), the
    session budget (when ``session_id`` is given) and each period budget; one call of each ``agent``- or
    ``organization``-scoped rate limit for the action or ``*``. In policy order, then run, session, period budgets,
    rate limits. Pure."""
    out: List[Dict[str, Any]] = []
    for p in policies:
        ids = p.get("agent_ids") or []
        if not p.get("enabled") or (len(ids) > 0 and agent_id not in ids):
            continue
        if cost_usd > 0:
            if p.get("run_budget") is not None and run_id:
                out.append({"policy_id": p["id"], "limit": RUN_BUDGET_LIMIT, "unit": "usd", "scope": "run", "limit_value": p["run_budget"], "need": cost_usd})
            if p.get("session_budget") is not None and session_id:
                out.append({"policy_id": p["id"], "limit": SESSION_BUDGET_LIMIT, "unit": "usd", "scope": "session", "limit_value": p["session_budget"], "need": cost_usd})
            for b in p.get("period_budgets") or []:
                out.append({"policy_id": p["id"], "limit": period_budget_limit(b["scope"], b["period"]), "unit": "usd", "scope": b["scope"], "limit_value": b["max_usd"], "need": cost_usd})
        limits = p.get("rate_limits") or {}
        for key in (action_name, "*"):
            r = limits.get(key)
            if r is not None and fleet_counted(r):
                out.append({"policy_id": p["id"], "limit": rate_limit_limit(key), "unit": "calls", "scope": r["scope"], "limit_value": r["max_calls"], "need": 1})
    return out


def _utc_ms(y: int, m: int, d: int = 1, h: int = 0) -> int:
    """``Date.UTC(y, m, d, h)`` with a 0-based month that may overflow into the next year."""
    y += m // 12
    m %= 12
    return calendar.timegm((y, m + 1, d, h, 0, 0)) * 1000


def period_window(period: str, now: float) -> Window:
    """The UTC calendar period (``hour``, ``day`` or ``month``) holding ``now`` (ms since the epoch)."""
    t = datetime.datetime.fromtimestamp(math.floor(now) / 1000, tz=datetime.timezone.utc)
    if period == "month":
        return (_utc_ms(t.year, t.month - 1), _utc_ms(t.year, t.month))
    if period == "day":
        start = _utc_ms(t.year, t.month - 1, t.day)
        return (start, start + 86_400_000)
    start = _utc_ms(t.year, t.month - 1, t.day, t.hour)
    return (start, start + 3_600_000)


def rate_window(window_seconds: float, now: float) -> Window:
    """The fixed window of a fleet-counted rate limit holding ``now``: windows of ``window_seconds`` aligned to the
    Unix epoch (fixed rather than sliding: one counter a window; docs/decisions.md, Leases)."""
    ms = max(1, math.floor(window_seconds * 1000 + 0.5))
    start = math.floor(now / ms) * ms
    return (start, start + ms)


def _period_budget(p: Mapping[str, Any], limit: str) -> Optional[Mapping[str, Any]]:
    return next((b for b in p.get("period_budgets") or [] if period_budget_limit(b["scope"], b["period"]) == limit), None)


def quota_window(p: Mapping[str, Any], limit: str, now: float) -> Any:
    """The window of policy ``p``'s limit ``limit`` at ``now`` as (start, end) ms; None for a run or session budget
    (they have none); False when the policy has no such limit (or a ``process`` rate limit, which has no counter)."""
    if limit == RUN_BUDGET_LIMIT:
        return False if p.get("run_budget") is None else None
    if limit == SESSION_BUDGET_LIMIT:
        return False if p.get("session_budget") is None else None
    if limit.startswith("period_budget:"):
        b = _period_budget(p, limit)
        return False if b is None else period_window(b["period"], now)
    if limit.startswith("rate_limit:"):
        r = (p.get("rate_limits") or {}).get(limit[len("rate_limit:"):])
        return rate_window(r["window_seconds"], now) if r is not None and fleet_counted(r) else False
    return False


def quota_limit_of(p: Mapping[str, Any], limit: str) -> Optional[Tuple[float, str, str]]:
    """The value of policy ``p``'s limit ``limit`` (USD or calls), its unit and scope, or None when the policy has no
    such fleet-counted limit."""
    if limit == RUN_BUDGET_LIMIT:
        return None if p.get("run_budget") is None else (p["run_budget"], "usd", "run")
    if limit == SESSION_BUDGET_LIMIT:
        return None if p.get("session_budget") is None else (p["session_budget"], "usd", "session")
    if limit.startswith("period_budget:"):
        b = _period_budget(p, limit)
        return None if b is None else (b["max_usd"], "usd", b["scope"])
    if limit.startswith("rate_limit:"):
        r = (p.get("rate_limits") or {}).get(limit[len("rate_limit:"):])
        return (r["max_calls"], "calls", r["scope"]) if r is not None and fleet_counted(r) else None
    return None
