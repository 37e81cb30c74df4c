"""The Governor with the platform unreachable (no server needed): the report ids and bodies it spools are the ones
the TypeScript SDK sends, arguments are checked before any decision, and fail modes apply."""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Dict, List

import pytest

from agp import ActionBlocked, Governor
from agp._util import copy_args, id_part, iso_time

DOWN = "http://127.0.0.1:9"


def spooled(directory: Path) -> List[Dict[str, Any]]:
    return [json.loads(line)["e"] for line in (directory / "spool.jsonl").read_text().splitlines() if '"e"' in line]


def test_report_ids_and_bodies_follow_the_typescript_sdk(tmp_path: Path) -> None:
    gov = Governor.connect(url=DOWN, key="agp_x", agent_id="bot", fail_mode="open", spool_dir=str(tmp_path), on_report_error=lambda m: None)
    with gov.run(run_id="r-1", session_id="s-1") as run:
        run.act("a", {"x": 1}, lambda a: "one", estimated_cost_usd=0.5, intent="first")
        run.act("a", {"x": 2}, lambda a: "two")
    gov.close(timeout=0)
    evs = spooled(tmp_path)
    assert [e["type"] for e in evs] == ["run.start", "action.record", "action.record", "run.end"]
    assert evs[0]["id"] == "run.r-1.start" and evs[-1]["id"] == "run.r-1.end"
    # <run id>.<8-character base64url nonce of the run>.<sequence number>.a
    m1 = re.fullmatch(r"r-1\.([A-Za-z0-9_-]{8})\.1\.a", evs[1]["id"])
    m2 = re.fullmatch(r"r-1\.([A-Za-z0-9_-]{8})\.2\.a", evs[2]["id"])
    assert m1 and m2 and m1.group(1) == m2.group(1)
    assert evs[0]["body"] == {"run_id": "r-1", "agent_id": "bot", "session_id": "s-1", "started_at": evs[0]["body"]["started_at"]}
    body = evs[1]["body"]
    assert {k: body[k] for k in ("run_id", "agent_id", "action_name", "status", "inputs", "outputs", "cost_usd")} == {
        "run_id": "r-1", "agent_id": "bot", "action_name": "a", "status": "success", "inputs": {"x": 1}, "outputs": "one", "cost_usd": 0.5}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", evs[1]["timestamp"]) and body["timestamp"] == evs[1]["timestamp"]
    assert evs[-1]["body"]["status"] == "completed"


def test_long_ids_are_hashed_as_the_typescript_sdk_hashes_them() -> None:
    long = "r" * 161
    assert id_part("r" * 160) == "r" * 160
    assert id_part(long) == hashlib.sha256(long.encode()).hexdigest()[:32]
    assert iso_time(0) == "1970-01-01T00:00:00.000Z" and iso_time(1_700_000_000_123) == "2023-11-14T22:13:20.123Z"


def test_arguments_must_be_json_data_named_by_path() -> None:
    assert copy_args("a", {"t": (1, 2), "n": None}) == {"t": [1, 2], "n": None}
    with pytest.raises(TypeError, match=r"act a: arguments must be JSON data; args\.x\[0\]\.y is a set"):
        copy_args("a", {"x": [{"y": {1}}]})
    with pytest.raises(TypeError, match=r"args\.f is nan"):
        copy_args("a", {"f": float("nan")})
    with pytest.raises(TypeError, match=r"args\.d has a key 1"):
        copy_args("a", {"d": {1: "x"}})
    cyc: Dict[str, Any] = {}
    cyc["self"] = cyc
    with pytest.raises(TypeError, match=r"args\.c\.self is a cycle"):
        copy_args("a", {"c": cyc})


def test_fail_closed_without_a_snapshot_and_nothing_decided_for_bad_arguments(tmp_path: Path) -> None:
    gov = Governor.connect(url=DOWN, key="agp_x", agent_id="bot", spool_dir=str(tmp_path), on_report_error=lambda m: None)
    run = gov.run(run_id="r-2")
    with pytest.raises(TypeError, match="is a datetime"):
        run.act("a", {"when": datetime.datetime(2026, 1, 1)}, lambda a: 1)
    with pytest.raises(ActionBlocked, match="no policy snapshot has been loaded"):
        run.act("a", {}, lambda a: 1)
    run.end()
    gov.close(timeout=0)
    types = [e["type"] for e in spooled(tmp_path)]
    # The bad call left no record; the fail-closed one an intervention and a blocked ledger entry.
    assert types == ["run.start", "intervention.create", "action.record", "run.end"]


def test_connect_names_a_bad_option() -> None:
    with pytest.raises(TypeError, match="fail_mode must be 'closed' or 'open', got 'maybe'"):
        Governor.connect(url=DOWN, key="k", agent_id="a", fail_mode="maybe")
    with pytest.raises(TypeError, match=r"max_staleness must be a number ≥ 0 \(s\)"):
        Governor.connect(url=DOWN, key="k", agent_id="a", max_staleness=-1)
    with pytest.raises(TypeError, match="agent_id must be a non-empty string"):
        Governor.connect(url=DOWN, key="k", agent_id="")


def test_act_refuses_a_coroutine_function_and_points_at_aact() -> None:
    gov = Governor.connect(url=DOWN, key="agp_x", agent_id="bot", fail_mode="open", push=False, on_report_error=lambda m: None)
    run = gov.run()

    async def search(args: Dict[str, Any]) -> str:
        return "x"

    with pytest.raises(TypeError, match=r"use `await run.aact"):
        run.act("search", {}, search)
    with pytest.raises(TypeError, match="unknown option\\(s\\) estimated_cost"):
        import asyncio

        asyncio.run(run.aact("search", {}, search, estimated_cost=1))
    try:
        gov.close(timeout=0)
    except RuntimeError:
        pass  # memory only, the platform unreachable: run.start is lost, and close says so


def test_an_escalation_carries_its_policys_approval_rule_onto_the_intervention() -> None:
    """The engine's ``approval`` of an escalate decision (approvals_required, separation_of_duties) goes onto the escalated
    intervention's body, as the TypeScript SDK sends it; other decisions carry none."""
    from types import SimpleNamespace

    from agp._reports import Reports

    reports = Reports(None, "bot")
    call = SimpleNamespace(name="wire_transfer", run_id="r-1", estimated=0.0, intent=None, inputs={"amount": 900})
    escalate = {"decision": "escalate", "intervention_type": "approval_required", "outcome": "escalated", "policy_id": "p1", "policy_name": "Four eyes",
                "risk_level": "high", "reason": "needs approval", "cost_prevented_usd": 0, "approval": {"approvals_required": 2.0, "separation_of_duties": True}}
    body = reports.intervention_body(call, escalate, None)
    assert (body["outcome"], body["approvals_required"], body["separation_of_duties"]) == ("escalated", 2, True)
    blocked = {**escalate, "decision": "block", "intervention_type": "hard_block", "outcome": "blocked", "approval": None}
    assert "approvals_required" not in reports.intervention_body(call, blocked, None)


def test_decorated_tools_check_on_escalated_and_on_blocked_when_decorated() -> None:
    """``@gov.action`` and ``gov.wrap_tool`` take ``run.act``'s ``on_escalated``; a value that is not callable is a
    ``TypeError`` when the tool is decorated, as ``run.act`` refuses it at the call."""
    gov = Governor.connect(url=DOWN, key="agp_x", agent_id="bot", fail_mode="open", push=False, on_report_error=lambda m: None)
    with pytest.raises(TypeError, match="action: on_escalated must be callable"):
        gov.action("t", on_escalated="approve")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="wrap_tool: on_escalated must be callable"):
        gov.wrap_tool(lambda x: x, on_escalated=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="wrap_tool: on_blocked must be 'raise' or 'return'"):
        gov.wrap_tool(lambda x: x, on_blocked="ignore")
    with gov.run(run_id="r-3") as run:
        with pytest.raises(TypeError, match="act t: on_escalated must be callable"):
            run.act("t", {}, lambda a: 1, on_escalated=object())  # type: ignore[arg-type]

        @gov.action("t", on_escalated=lambda approval_id, decision: None)
        def tool(x: int) -> int:
            return x * 2

        assert tool(21) == 42  # no policy escalates: the hook is not called, the tool runs
    try:
        gov.close(timeout=0)
    except RuntimeError:
        pass  # memory only, the platform unreachable: the reports are lost, and close says so
