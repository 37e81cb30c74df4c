"""The policy decision, pure (``decide.ts``): :func:`decide` answers whether one action an agent attempts is allowed,
blocked, escalated, rate-limited, stopped by a budget, downgraded or warned. No I/O, no clock: the spend so far, the
recent calls and ``now`` come in with the context. Same input, same decision as the TypeScript engine, byte for byte
as canonical JSON (the shared decision vectors prove it).

Precedence (the first that triggers wins): kill switches (organisation, then agent); then each enabled policy that
applies to the agent decides alone — deny and allow lists; guardrails that block (PII, moderation, idempotency);
approval; budgets (action, run, session, period); rate limits (the action's, then ``*``); loop; downgrades;
warnings — a rule that only modifies or warns gives way to a later stopping rule of the same policy. Across
policies the most restrictive decision wins (:data:`POLICY_DECISIONS` order), ties to the oldest policy
(``created_at``, then ``id``).

Numbers: USD amounts are floats (IEEE doubles, as JS numbers); comparisons with a budget allow
:data:`USD_TOLERANCE`; amounts in reasons are rounded to 6 decimals the JS way (``toFixed``); windows are in
seconds, times in ms since the Unix epoch, a window of ``w`` s counting calls with ``at > now − w·1000``.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from .arguments import MISSING, arguments_hash, get_at, path_segments, set_at
from .jsnum import iso_from_ms, is_number, js_number, js_round, js_string, js_keys, to_fixed, u16_key, u16_len, u16_slice
from .pii import PII_CATEGORIES, mask_text, redact_pii, scan_pii

__all__ = ["decide", "PreparedPolicies", "applies_to", "POLICY_DECISIONS", "RULE_RISK", "USD_TOLERANCE", "WARN_BUDGET_FRACTION", "QuotaView"]

#: A budget warns once spend + cost passes this fraction of it.
WARN_BUDGET_FRACTION = 0.8
#: Slack (USD) when comparing sums with a budget.
USD_TOLERANCE = 1e-9
#: Decisions, most restrictive first.
POLICY_DECISIONS = ("block", "pii_blocked", "content_blocked", "idempotent_replay", "escalate", "budget_exceeded", "rate_limited", "loop_detected", "downgrade", "warn", "allow")
DECISION_INTERVENTION_TYPE = {
    "block": "hard_block", "pii_blocked": "pii_blocked", "content_blocked": "content_blocked", "idempotent_replay": "idempotent_replay",
    "escalate": "approval_required", "budget_exceeded": "budget_exceeded", "rate_limited": "rate_limited", "loop_detected": "loop_detected",
    "downgrade": "downgrade", "warn": "warning", "allow": None,
}
DECISION_OUTCOME = {
    "block": "blocked", "pii_blocked": "blocked", "content_blocked": "blocked", "idempotent_replay": "blocked", "escalate": "escalated",
    "budget_exceeded": "blocked", "rate_limited": "blocked", "loop_detected": "blocked", "downgrade": "modified", "warn": "warned", "allow": None,
}
STOPPING_DECISIONS = frozenset(d for d, o in DECISION_OUTCOME.items() if o == "blocked")
#: Risk level by deciding rule when the action declares none.
RULE_RISK = {
    "organization_kill_switch": "critical", "agent_kill_switch": "critical", "denied_action": "high", "not_in_allowed_actions": "high",
    "pii_guardrail": "high", "moderation_guardrail": "high", "idempotency_guardrail": "low", "approval_required": "high",
    "action_budget": "medium", "run_budget": "medium", "session_budget": "medium", "period_budget": "medium", "rate_limit": "medium",
    "loop_guardrail": "medium", "downgrade": "low", "budget_warning": "low",
}
MODERATION_CATEGORIES = (
    "harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent", "self-harm", "self-harm/intent",
    "self-harm/instructions", "sexual", "sexual/minors", "violence", "violence/graphic",
)
_SOFT = frozenset(("downgrade", "warn"))

#: ``quota(policy_id, limit)`` → what the decider may still admit (USD or calls), or None when not fleet-counted.
QuotaView = Callable[[str, str], Optional[float]]


def _rank(d: str) -> int:
    return POLICY_DECISIONS.index(d)


def _usd(n: float) -> str:
    return f"{js_number(float(to_fixed(n, 6)))} USD"


def _quoted(p: Mapping[str, Any]) -> str:
    return f'policy "{p["name"]}"'


def _json_scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if is_number(v):
        return js_number(v)
    if isinstance(v, str):
        return js_string(v)
    from .jsnum import canonical_json  # an object or list (never for a scalar rule; kept total)

    return canonical_json(v)


def applies_to(policy: Mapping[str, Any], agent_id: str) -> bool:
    """Whether ``policy`` applies to ``agent_id``: its ``agent_ids`` is empty or lists it."""
    ids = policy["agent_ids"]
    return len(ids) == 0 or agent_id in ids


class _Input:
    def __init__(self, action: Mapping[str, Any], cost: float, session: float, run: float, context: Mapping[str, Any], quota: Optional[QuotaView]):
        self.action = action
        self.name: str = action["action_name"]
        self.cost = cost
        self.session = session
        self.run = run
        self.context = context
        self.quota = quota
        self.calls: Sequence[Mapping[str, Any]] = context.get("recent_calls") or []
        self.now = float(context["now"])
        self._pii: Optional[Dict[str, Any]] = None
        self.hash: Optional[str] = None

    def pii_scan(self) -> Dict[str, Any]:
        if self._pii is None:
            self._pii = scan_pii(self.action.get("arguments"), PII_CATEGORIES)
        return self._pii

    def arguments_hash(self) -> str:
        if self.hash is None:
            self.hash = arguments_hash(self.action.get("arguments"))
        return self.hash

    def count(self, key: str, window_seconds: float) -> int:
        start = self.now - window_seconds * 1000
        return sum(1 for c in self.calls if c["at"] > start and (key == "*" or c["action_name"] == key))

    def repeats(self, action: str, h: str, window_seconds: float) -> int:
        start = self.now - window_seconds * 1000
        return sum(1 for c in self.calls if c["at"] > start and c["action_name"] == action and c.get("arguments_hash") == h)


class _Hit:
    __slots__ = ("triggered", "context", "redacts", "downgrades")

    def __init__(self, p: Mapping[str, Any], decision: str, rule: str, reason: str, context: Optional[Dict[str, Any]] = None):
        self.triggered = {"policy_id": p["id"], "policy_name": p["name"], "decision": decision, "rule": rule, "reason": reason}
        self.context = context
        self.redacts = False
        self.downgrades = False


def _budget_exceeded(p: Mapping[str, Any], d: _Input, rule: str, what: str, budget: Optional[float], spent: float) -> Optional[_Hit]:
    if budget is None:
        return None
    left = d.quota(p["id"], rule) if d.quota is not None else None
    if left is not None:
        if not (d.cost > left + USD_TOLERANCE):
            return None
        return _Hit(p, "budget_exceeded", rule, f"{d.name} {_usd(d.cost)} would exceed the {what} budget of {_usd(budget)} of {_quoted(p)}: {_usd(max(0, left))} of it is left for the fleet")
    if not (spent + d.cost > budget + USD_TOLERANCE):
        return None
    return _Hit(p, "budget_exceeded", rule, f"{what} spend {_usd(spent)} + {d.name} {_usd(d.cost)} would exceed the {what} budget of {_usd(budget)} of {_quoted(p)}")


def _period_budget_exceeded(p: Mapping[str, Any], d: _Input) -> Optional[_Hit]:
    for b in p.get("period_budgets") or []:
        left = d.quota(p["id"], f"period_budget:{b['scope']}:{b['period']}") if d.quota is not None else None
        if left is None:
            left = b["max_usd"]
        if not (d.cost > left + USD_TOLERANCE):
            continue
        whose = f"agent {d.action['agent_id']}'s" if b["scope"] == "agent" else "the organisation's"
        return _Hit(p, "budget_exceeded", "period_budget", f"{d.name} {_usd(d.cost)} would exceed {whose} budget of {_usd(b['max_usd'])} per {b['period']} (UTC) of {_quoted(p)}: {_usd(max(0, left))} of it is left this {b['period']}")
    return None


def _action_budget_exceeded(p: Mapping[str, Any], d: _Input) -> Optional[_Hit]:
    budget = p.get("action_budget")
    if budget is None or not (d.cost > budget + USD_TOLERANCE):
        return None
    return _Hit(p, "budget_exceeded", "action_budget", f"{d.name} would cost an estimated {_usd(d.cost)}, above the action budget of {_usd(budget)} of {_quoted(p)}")


def _rate_limited(p: Mapping[str, Any], d: _Input, key: str) -> Optional[_Hit]:
    limits = p["rate_limits"]
    if key not in limits:
        return None
    limit = limits[key]
    of = "calls of any action" if key == "*" else f"calls of {d.name}"
    if d.quota is not None and limit.get("scope") in ("agent", "organization"):
        left = d.quota(p["id"], f"rate_limit:{key}")
        if left is not None:
            if left >= 1:
                return None
            whose = f"agent {d.action['agent_id']}'s" if limit["scope"] == "agent" else "the organisation's"
            return _Hit(p, "rate_limited", "rate_limit", f"{whose} {of} reach the limit of {js_number(limit['max_calls'])} per {js_number(limit['window_seconds'])} s of {_quoted(p)} in this window")
    n = d.count(key, limit["window_seconds"])
    if n < limit["max_calls"]:
        return None
    return _Hit(p, "rate_limited", "rate_limit", f"{n} {of} in the last {js_number(limit['window_seconds'])} s reach the limit of {js_number(limit['max_calls'])} of {_quoted(p)}")


def _budget_warning(p: Mapping[str, Any], d: _Input, what: str, budget: Optional[float], spent: float) -> Optional[_Hit]:
    if budget is None or not (spent + d.cost > WARN_BUDGET_FRACTION * budget + USD_TOLERANCE):
        return None
    pct = 100.0 if budget == 0 else js_round(((spent + d.cost) / budget) * 100)
    return _Hit(p, "warn", "budget_warning", f"{what} spend would reach {_usd(spent + d.cost)}, {js_number(pct)}% of the {what} budget of {_usd(budget)} of {_quoted(p)} (warned past {js_number(WARN_BUDGET_FRACTION * 100)}%)")


def _uniq(xs: List[str]) -> List[str]:
    return list(dict.fromkeys(xs))


def _pii_guardrail(p: Mapping[str, Any], g: Mapping[str, Any], d: _Input) -> Optional[_Hit]:
    if d.action.get("arguments") is None:
        return None
    scan = d.pii_scan()
    if not scan["matches"]:
        return None
    wanted = g.get("categories")
    matches = scan["matches"] if wanted is None else [m for m in scan["matches"] if m["category"] in wanted]
    if not matches:
        return None
    categories = _uniq([m["category"] for m in matches])
    fields = _uniq([m["field_path"] for m in matches])
    context = {"guardrail_schema_version": 1, "guardrail": "pii", "matches": [dict(m) for m in matches], "categories": categories, "fields": fields}
    mode = g.get("mode") or "block"
    found = f"{len(matches)} personal-data match{'' if len(matches) == 1 else 'es'} ({', '.join(categories)}) in {', '.join(fields[:5])}{', …' if len(fields) > 5 else ''}"
    if mode == "block":
        return _Hit(p, "pii_blocked", "pii_guardrail", f"{d.name} arguments hold {found}; blocked by the PII guardrail of {_quoted(p)}", context)
    if mode == "warn":
        return _Hit(p, "warn", "pii_guardrail", f"{d.name} arguments hold {found}; warned by the PII guardrail of {_quoted(p)}", context)
    h = _Hit(p, "downgrade", "pii_guardrail", f"{d.name} arguments hold {found}; redacted by the PII guardrail of {_quoted(p)}", context)
    h.redacts = True
    return h


def _under(name: str, configured: Sequence[str]) -> bool:
    return any(name == c or (name.startswith(c) and name[len(c) : len(c) + 1] == "/") for c in configured)


def _moderation_guardrail(p: Mapping[str, Any], g: Mapping[str, Any], d: _Input) -> Optional[_Hit]:
    scores = d.action.get("moderation_scores")
    if not scores:
        return None
    configured = g.get("categories")
    if configured is None:
        configured = MODERATION_CATEGORIES
    matches: List[Dict[str, Any]] = []
    for f in scores:
        for name in js_keys(f["scores"]):
            score = f["scores"][name]
            if score < g["threshold"] or not _under(name, configured) or len(matches) >= 1000:
                continue
            text = get_at(d.action.get("arguments"), path_segments(f["field_path"]))
            matches.append({"category": name, "field_path": f["field_path"], "matched_text": mask_text(text[:64]) if isinstance(text, str) else "", "score": score})
    if not matches:
        return None
    categories = _uniq([m["category"] for m in matches])
    fields = _uniq([m["field_path"] for m in matches])
    top = max(m["score"] for m in matches)
    context = {"guardrail_schema_version": 1, "guardrail": "moderation", "matches": matches, "categories": categories, "fields": fields}
    found = f"{d.name} arguments were flagged for {', '.join(categories)} (score {to_fixed(top, 2)} ≥ threshold {js_number(g['threshold'])}) in {', '.join(fields[:5])}"
    if (g.get("mode") or "block") == "block":
        return _Hit(p, "content_blocked", "moderation_guardrail", f"{found}; blocked by the moderation guardrail of {_quoted(p)}", context)
    return _Hit(p, "warn", "moderation_guardrail", f"{found}; warned by the moderation guardrail of {_quoted(p)}", context)


def _idempotency_guardrail(p: Mapping[str, Any], g: Mapping[str, Any], d: _Input) -> Optional[_Hit]:
    if d.name not in g["actions"]:
        return None
    records = d.context.get("idempotency_records")
    key = d.action.get("idempotency_key")
    if key is None:
        key = d.arguments_hash()
    if not records:
        return None
    start = d.now - g["ttl_seconds"] * 1000
    first = None
    for r in records:
        if r["action_name"] == d.name and r["idempotency_key"] == key and r["at"] > start and (first is None or r["at"] < first["at"]):
            first = r
    if first is None:
        return None
    ref = first.get("cached_result_ref")
    if ref is None:
        ref = f"idempotency:{d.name}:{key}"
    context = {
        "guardrail_schema_version": 1,
        "guardrail": "idempotency",
        "idempotency_key": _cut_units(key, 512),
        "original_timestamp": iso_from_ms(first["at"]),
        "cached_result_ref": _cut_units(ref, 1024),
    }
    shown = key[:24] + "…" if len(key) > 24 else key
    return _Hit(p, "idempotent_replay", "idempotency_guardrail", f"{d.name} repeats idempotency key {shown} first used at {context['original_timestamp']} (within {js_number(g['ttl_seconds'])} s); the first call's result is returned under {_quoted(p)}", context)


def _cut_units(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-16 code units, dropping a high surrogate the cut would leave unpaired."""
    if u16_len(text) <= limit:
        return text
    cut = u16_slice(text, 0, limit)
    return cut[:-1] if cut and "\ud800" <= cut[-1] <= "\udbff" else cut


def _loop_guardrail(p: Mapping[str, Any], g: Mapping[str, Any], d: _Input) -> Optional[_Hit]:
    h = d.arguments_hash()
    n = d.repeats(d.name, h, g["window_seconds"])
    if n < g["threshold"]:
        return None
    context = {"guardrail_schema_version": 1, "guardrail": "loop", "action_name": d.name, "arguments_hash": h, "repeat_count": n + 1, "threshold": g["threshold"], "window_seconds": g["window_seconds"]}
    found = f"{d.name} with the same arguments would run for the {n + 1}th time in {js_number(g['window_seconds'])} s (threshold {js_number(g['threshold'])})"
    if (g.get("mode") or "block") == "block":
        return _Hit(p, "loop_detected", "loop_guardrail", f"{found}; stopped by the loop guardrail of {_quoted(p)}", context)
    return _Hit(p, "warn", "loop_guardrail", f"{found}; warned by the loop guardrail of {_quoted(p)}", context)


def _js_strict_equal(a: Any, b: Any) -> bool:
    if is_number(a) and is_number(b):
        return float(a) == float(b)
    if type(a) is not type(b):
        return False
    return bool(a == b)


def _downgraded(rule: Mapping[str, Any], value: Any) -> Any:
    """The value a downgrade rule gives ``value``, or MISSING when it leaves it alone."""
    if rule.get("max") is not None:
        return rule["max"] if is_number(value) and value > rule["max"] else MISSING
    replace = rule.get("replace")
    if replace is not None and (isinstance(value, str) or isinstance(value, bool) or is_number(value)):
        key = value if isinstance(value, str) else ("true" if value is True else "false" if value is False else js_number(value))
        if key in replace and not _js_strict_equal(replace[key], value):
            return replace[key]
    return MISSING


def _rule_for(rule: Mapping[str, Any], name: str) -> bool:
    return rule["action"] == "*" or rule["action"] == name


def _downgrade_rules(p: Mapping[str, Any], d: _Input) -> Optional[_Hit]:
    rules = p.get("downgrades")
    args = d.action.get("arguments")
    if not rules or args is None:
        return None
    for rule in rules:
        if not _rule_for(rule, d.name):
            continue
        value = get_at(args, path_segments(rule["argument"]))
        to = _downgraded(rule, value)
        if to is MISSING:
            continue
        how = f"capped at {js_number(rule['max'])}" if rule.get("max") is not None else f"replaced by {_json_scalar(to)}"
        h = _Hit(p, "downgrade", "downgrade", f"{d.name} argument {rule['argument']} {_json_scalar(value)} {how} by {_quoted(p)}")
        h.downgrades = True
        return h
    return None


def _decide_policy(p: Mapping[str, Any], d: _Input) -> Optional[_Hit]:
    name = d.name
    if name in p["denied_actions"]:
        return _Hit(p, "block", "denied_action", f"{name} is a denied action of {_quoted(p)}")
    if p["allowed_actions"] is not None and name not in p["allowed_actions"]:
        return _Hit(p, "block", "not_in_allowed_actions", f"{name} is not an allowed action of {_quoted(p)}")
    soft: List[Optional[_Hit]] = [None]

    def stops(h: Optional[_Hit]) -> bool:
        if h is None:
            return False
        if h.triggered["decision"] not in _SOFT:
            return True
        s = soft[0]
        if s is None:
            soft[0] = h
        elif h.triggered["decision"] == "downgrade":
            if s.triggered["decision"] == "downgrade":
                s.redacts = s.redacts or h.redacts
                s.downgrades = s.downgrades or h.downgrades
            else:
                soft[0] = h
        return False

    g = p.get("guardrails")
    if g is not None:
        if "pii" in g:
            h = _pii_guardrail(p, g["pii"], d)
            if stops(h):
                return h
        if "moderation" in g:
            h = _moderation_guardrail(p, g["moderation"], d)
            if stops(h):
                return h
        if "idempotency" in g:
            h = _idempotency_guardrail(p, g["idempotency"], d)
            if stops(h):
                return h
    if name in p["approval_required_actions"]:
        return _Hit(p, "escalate", "approval_required", f"{name} requires human approval under {_quoted(p)}")
    h = (
        _action_budget_exceeded(p, d)
        or _budget_exceeded(p, d, "run_budget", "run", p["run_budget"], d.run)
        or _budget_exceeded(p, d, "session_budget", "session", p["session_budget"], d.session)
        or _period_budget_exceeded(p, d)
        or _rate_limited(p, d, name)
        or _rate_limited(p, d, "*")
    )
    if h is not None:
        return h
    if g is not None and "loop" in g:
        h = _loop_guardrail(p, g["loop"], d)
        if stops(h):
            return h
    stops(_downgrade_rules(p, d))
    stops(_budget_warning(p, d, "session", p["session_budget"], d.session) or _budget_warning(p, d, "run", p["run_budget"], d.run))
    return soft[0]


def _policy_order(p: Mapping[str, Any]) -> tuple:
    return (u16_key(p["created_at"]), u16_key(p["id"]))


def _modified_inputs(applicable: List[Mapping[str, Any]], redacting: List[Mapping[str, Any]], d: _Input) -> Any:
    args = d.action.get("arguments")
    if args is None:
        args = {}
    redact_ids = {id(p) for p in redacting}
    for p in sorted(applicable, key=_policy_order):
        for rule in p.get("downgrades") or []:
            if not _rule_for(rule, d.name):
                continue
            path = path_segments(rule["argument"])
            to = _downgraded(rule, get_at(args, path))
            if to is not MISSING:
                args = set_at(args, path, to)
        pii = (p.get("guardrails") or {}).get("pii")
        if id(p) in redact_ids and pii is not None:
            wanted = PII_CATEGORIES if pii.get("categories") is None else tuple(pii["categories"])
            paths = _uniq([m["field_path"] for m in d.pii_scan()["matches"] if m["category"] in wanted and not m["field_path"].startswith("…")])
            for fp in paths:
                path = path_segments(fp)
                v = get_at(args, path)
                if isinstance(v, str):
                    args = set_at(args, path, redact_pii(v, wanted))
    return args


def _names_only(p: Mapping[str, Any]) -> bool:
    """Whether policy ``p`` can only act on actions it names: no allow-list, guardrail or budget, and its rate limits
    and downgrade rules (if any) each name one action (none for ``*``); ``namesOnly`` of the TypeScript engine. For
    such a policy :func:`_decide_policy` returns None for every action it does not name (:func:`_add_named`)."""
    g = p.get("guardrails")
    if g is not None and any(k in g for k in ("pii", "moderation", "idempotency", "loop")):
        return False
    if p.get("allowed_actions") is not None or p.get("action_budget") is not None or p.get("run_budget") is not None or p.get("session_budget") is not None:
        return False
    if p.get("period_budgets"):
        return False
    rl = p.get("rate_limits")
    if not isinstance(rl, dict) or "*" in rl:
        return False
    return not any(r.get("action") == "*" for r in p.get("downgrades") or [])


def _add_named(p: Mapping[str, Any], named: set) -> None:
    named.update(p["denied_actions"])
    named.update(p["approval_required_actions"])
    named.update(p["rate_limits"].keys())
    named.update(r["action"] for r in p.get("downgrades") or [])


class PreparedPolicies:
    """A policy set prepared for many decisions (``PreparedPolicies`` of the TypeScript engine): :func:`decide`
    takes it in place of the list and gives the same decisions, answering at once — without evaluating each policy —
    an action no applicable policy can stop, modify or warn about: no kill switch is engaged for the agent, every
    applicable policy only acts on actions it names (denied, approval-required, rate-limited or downgraded by name),
    and none names this one. What it learns of an agent is computed on its first decision (at most 1000 agents kept).
    The policies must not change after preparing them (the SDK prepares each snapshot once)."""

    __slots__ = ("policies", "_agents")

    def __init__(self, policies: Sequence[Mapping[str, Any]]):
        self.policies = policies
        self._agents: Dict[str, tuple] = {}

    def for_agent(self, agent_id: str) -> tuple:
        """(policies evaluated, inert, the names they act on) for ``agent_id``."""
        index = self._agents.get(agent_id)
        if index is None:
            evaluated = 0
            inert = True
            named: set = set()
            for p in self.policies:
                if not p["enabled"] or not applies_to(p, agent_id):
                    continue
                evaluated += 1
                if _names_only(p):
                    _add_named(p, named)
                else:
                    inert = False
            index = (evaluated, inert, frozenset(named))
            if len(self._agents) >= 1000:
                self._agents.clear()
            self._agents[agent_id] = index
        return index


def _allow(action: Mapping[str, Any], cost: float, evaluated: int, h: Optional[str]) -> Dict[str, Any]:
    agent = action["agent_id"]
    return {
        "decision": "allow", "intervention_type": None, "outcome": None, "rule": None, "policy_id": None, "policy_name": None,
        "reason": f"no kill switch is engaged and no enabled policy applies to agent {agent}" if evaluated == 0 else f"no kill switch is engaged and none of the {evaluated} applicable policies stops {action['action_name']}",
        "risk_level": action.get("risk_level") or "minimal", "estimated_cost_usd": cost, "cost_prevented_usd": 0, "policies_evaluated": evaluated,
        "triggered": [], "modified_inputs": None, "guardrail_context": None, "arguments_hash": h, "approval": None,
    }


def decide(policies: "Sequence[Mapping[str, Any]] | PreparedPolicies", kill_switches: Mapping[str, Any], action: Mapping[str, Any], context: Mapping[str, Any], quota: Optional[QuotaView] = None) -> Dict[str, Any]:
    """Decide one action. Pure and deterministic; the same decision as the TypeScript ``decide()``.

    :param policies: a :class:`PreparedPolicies` (same decisions; an action no policy can stop answered at once), or
        policy dicts as the platform stores them (``id``, ``name``, ``enabled``, ``created_at`` ISO 8601,
        ``session_budget``/``run_budget``/``action_budget`` USD or None, ``denied_actions``, ``allowed_actions``
        (None = all), ``approval_required_actions``, ``rate_limits`` {action or ``*``: {max_calls, window_seconds,
        scope?}}, ``agent_ids``, optional ``downgrades``, ``guardrails``, ``period_budgets``); any order; disabled
        ones and those for other agents are skipped.
    :param kill_switches: ``{"organization": {"engaged", "reason"}, "agents": [{"agent_id", "engaged", "reason"}]}``.
    :param action: ``agent_id``, ``action_name``, optional ``arguments`` (JSON object), ``estimated_cost_usd`` (USD
        ≥ 0, absent = 0), ``risk_level``, ``idempotency_key``, ``moderation_scores``.
    :param context: ``now`` (ms since the epoch), optional ``session_spend_usd``/``run_spend_usd`` (USD),
        ``recent_calls`` [{action_name, at (ms), arguments_hash?}], ``idempotency_records``.
    :param quota: optional fleet view: ``quota(policy_id, limit)`` → what is left (USD or calls), None = not counted.
    :returns: the decision dict (decision, intervention_type, outcome, rule — the stable reason code —, policy_id,
        policy_name, reason, risk_level, estimated_cost_usd, cost_prevented_usd, policies_evaluated, triggered,
        modified_inputs, guardrail_context, arguments_hash, approval — for escalate, the winning policy's
        ``approvals_required`` and ``separation_of_duties``, else None).
    :raises KeyError: when a required field is missing (the input is not validated here).
    """
    cost = action.get("estimated_cost_usd")
    cost = 0.0 if cost is None else cost
    if isinstance(policies, PreparedPolicies):
        evaluated, inert, named = policies.for_agent(action["agent_id"])
        if inert and action["action_name"] not in named and not kill_switches["organization"]["engaged"] and \
                not any(s["engaged"] and s["agent_id"] == action["agent_id"] for s in kill_switches["agents"]):
            return _allow(action, cost, evaluated, None)
        policies = policies.policies
    session = context.get("session_spend_usd")
    run = context.get("run_spend_usd")
    d = _Input(action, cost, 0.0 if session is None else session, 0.0 if run is None else run, context, quota)
    agent = action["agent_id"]
    triggered: List[Dict[str, Any]] = []
    org = kill_switches["organization"]
    if org["engaged"]:
        why = org.get("reason")
        triggered.append({"policy_id": None, "policy_name": None, "decision": "block", "rule": "organization_kill_switch", "reason": f"the organisation's kill switch is engaged{': ' + why if why else ''}"})
    agent_switch = next((s for s in kill_switches["agents"] if s["engaged"] and s["agent_id"] == agent), None)
    if agent_switch is not None:
        why = agent_switch.get("reason")
        triggered.append({"policy_id": None, "policy_name": None, "decision": "block", "rule": "agent_kill_switch", "reason": f"agent {agent}'s kill switch is engaged{': ' + why if why else ''}"})
    switched = len(triggered) > 0
    evaluated = 0
    candidates: List[tuple] = []
    for p in policies:
        if not p["enabled"] or not applies_to(p, agent):
            continue
        evaluated += 1
        h = _decide_policy(p, d)
        if h is not None:
            candidates.append((_rank(h.triggered["decision"]), u16_key(p["created_at"]), u16_key(p["id"]), h, p))
    candidates.sort(key=lambda c: (c[0], c[1], c[2]))
    triggered.extend(c[3].triggered for c in candidates)
    if not triggered:
        return _allow(action, cost, evaluated, d.hash)
    win = triggered[0]
    winner = None if switched else candidates[0]
    modified = None
    if win["decision"] == "downgrade":
        applicable = [p for p in policies if p["enabled"] and applies_to(p, agent)]
        modified = _modified_inputs(applicable, [c[4] for c in candidates if c[3].redacts], d)
    return {
        "decision": win["decision"],
        "intervention_type": DECISION_INTERVENTION_TYPE[win["decision"]],
        "outcome": DECISION_OUTCOME[win["decision"]],
        "rule": win["rule"],
        "policy_id": win["policy_id"],
        "policy_name": win["policy_name"],
        "reason": win["reason"],
        "risk_level": action.get("risk_level") or RULE_RISK[win["rule"]],
        "estimated_cost_usd": cost,
        "cost_prevented_usd": cost if win["decision"] in STOPPING_DECISIONS else 0,
        "policies_evaluated": evaluated,
        "triggered": triggered,
        "modified_inputs": modified,
        "guardrail_context": winner[3].context if winner is not None else None,
        "arguments_hash": d.hash,
        "approval": _approval_rule(winner[4]) if win["decision"] == "escalate" and winner is not None else None,
    }


def _approval_rule(p: Dict[str, Any]) -> Dict[str, Any]:
    """How the approval of an escalation by policy ``p`` is decided: ``approvals_required`` (absent: 1) and
    ``separation_of_duties`` (absent: False), as the TypeScript engine's ``approvalRuleOf``."""
    n = p.get("approvals_required")
    sod = p.get("separation_of_duties")
    return {"approvals_required": 1 if n is None else n, "separation_of_duties": bool(sod) if sod is not None else False}
