"""The PII guardrail on an action's result (its ``results`` mode), pure (``results.ts`` of ``@agp/policy-engine``):
what the agent may see of a result that holds personal data. The same scanner (:func:`scan_pii`) and masking
(:func:`redact_pii`) as the arguments' check. Source: architecture §1 (packages/policy-engine); docs/mcp-proxy.md."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .decide import applies_to
from .jsnum import js_keys, u16_key, u16_len
from .pii import PII_CATEGORIES, PII_MAX_CHARS, PII_MAX_VALUES, redact_pii, scan_pii

__all__ = ["review_result"]

_RANK = {"block": 0, "redact": 1, "warn": 2}


def review_result(policies: Sequence[Mapping[str, Any]], agent_id: str, action_name: str, result: Any) -> Dict[str, Any]:
    """Review an action's ``result`` against the ``results`` mode of the PII guardrails of the enabled policies that
    apply to ``agent_id``. Pure; never raises for JSON-like input (bounded as :func:`scan_pii`).

    :returns: ``{outcome, result, policy_id, policy_name, reason, guardrail_context}``: ``outcome`` ``pass`` (no
        policy scans results, or none found personal data of its categories; ``result`` unchanged) or the most
        restrictive matching mode (``block``, ``redact``, ``warn``; ties to the oldest policy). For ``redact``
        ``result`` is a copy with every match of the redacting policies' categories replaced by
        ``[REDACTED:<category>]``; for ``warn`` and ``block`` it is the input (a block withholds it). ``reason`` says
        what was found (masked); ``guardrail_context`` is the pii context payload of that policy's matches.
    """
    scanning = sorted((p for p in policies if p.get("enabled") and ((p.get("guardrails") or {}).get("pii") or {}).get("results") is not None and applies_to(p, agent_id)),
                      key=lambda p: u16_key(p["created_at"]))
    passed = {"outcome": "pass", "result": result, "policy_id": None, "policy_name": None, "reason": None, "guardrail_context": None}
    if not scanning or not isinstance(result, (dict, list)):
        return passed
    scan = scan_pii(result, PII_CATEGORIES)
    if not scan["matches"]:
        return passed
    best: Optional[Tuple[Mapping[str, Any], str, Dict[str, Any], str]] = None
    redacting: set = set()
    for p in scanning:
        g = p["guardrails"]["pii"]
        mode = g["results"]
        cats = g.get("categories")
        matches = scan["matches"] if cats is None else [m for m in scan["matches"] if m["category"] in cats]
        if not matches:
            continue
        if mode == "redact":
            redacting.update(PII_CATEGORIES if cats is None else cats)
        if best is not None and _RANK[best[1]] <= _RANK[mode]:
            continue
        categories = list(dict.fromkeys(m["category"] for m in matches))
        fields = list(dict.fromkeys(m["field_path"] for m in matches))
        found = f"{len(matches)} personal-data match{'' if len(matches) == 1 else 'es'} ({', '.join(categories)}) in {', '.join(fields[:5])}{', …' if len(fields) > 5 else ''}"
        best = (p, mode, {"guardrail_schema_version": 1, "guardrail": "pii", "matches": [dict(m) for m in matches], "categories": categories, "fields": fields}, found)
    if best is None:
        return passed
    p, mode, context, found = best
    verb = "withheld" if mode == "block" else "redacted" if mode == "redact" else "warned"
    return {
        "outcome": mode,
        "result": _redact_strings(result, tuple(redacting)) if mode == "redact" else result,
        "policy_id": p["id"],
        "policy_name": p["name"],
        "reason": f"{action_name} result holds {found}; {verb} by the PII guardrail of policy \"{p['name']}\"",
        "guardrail_context": context,
    }


def _walk_strings(value: Any) -> List[Tuple[List[Any], str]]:
    """Every string of ``value`` (not keys, not ``value`` itself) with its path of keys/indices, depth first, keys in
    JS order; bounded like :func:`scan_pii` (later strings are not visited)."""
    out: List[Tuple[List[Any], str]] = []
    stack: List[Tuple[Any, Optional[List[Any]]]] = [(value, None)]
    visited = chars = 0
    while stack:
        v, path = stack.pop()
        visited += 1
        if visited > PII_MAX_VALUES:
            break
        if isinstance(v, str):
            if path is None:
                continue
            chars += u16_len(v)
            if chars > PII_MAX_CHARS:
                break
            out.append((path, v))
        elif isinstance(v, list):
            if visited + len(stack) + len(v) > PII_MAX_VALUES:
                break
            for i in range(len(v) - 1, -1, -1):
                stack.append((v[i], (path or []) + [i]))
        elif isinstance(v, dict):
            keys = js_keys(v)
            if visited + len(stack) + len(keys) > PII_MAX_VALUES:
                break
            for k in reversed(keys):
                stack.append((v[k], (path or []) + [k]))
    return out


def _redact_strings(value: Any, wanted: Tuple[str, ...]) -> Any:
    """A copy of ``value`` with every string's PII of the ``wanted`` categories masked (containers on the way copied)."""
    edits = [(path, masked) for path, text in _walk_strings(value) for masked in (redact_pii(text, wanted),) if masked != text]
    if not edits:
        return value
    copied: Dict[int, Any] = {}

    def own(v: Any) -> Any:
        c = copied.get(id(v))
        if c is None:
            c = list(v) if isinstance(v, list) else dict(v)
            copied[id(c)] = c
            copied[id(v)] = c
        return c

    root = own(value)
    for path, masked in edits:
        at = root
        for k in path[:-1]:
            at[k] = own(at[k])
            at = at[k]
        at[path[-1]] = masked
    return root
