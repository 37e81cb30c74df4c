"""Against the real platform (``AGP_URL``, write key ``AGP_KEY``; run by test/e2e/python-sdk.test.ts in both run
modes): the moderation guardrail of a policy created over the API, scored by :func:`agp.openai_moderation` against a
loopback server speaking OpenAI's ``/v1/moderations`` (tests/fake_moderation.py), with the interventions read back;
and ``on_escalated`` of decorated tools (``@gov.action``, ``gov.wrap_tool``, an ``async def`` tool) deciding the
approval it is handed. Source: docs/sdk-python.md §Moderation provider, §The API beside the TypeScript SDK."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from agp import ActionBlocked, ApprovalRejected, Governor, openai_moderation

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for the loopback moderation server
from fake_moderation import FakeModeration  # noqa: E402

URL = os.environ.get("AGP_URL", "")
KEY = os.environ.get("AGP_KEY", "")
Api = Any  # the `api` fixture of conftest.py


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeModeration]:
    f = FakeModeration()
    yield f
    f.close()


def connect(agent_id: str, **kw: Any) -> Governor:
    return Governor.connect(url=URL, key=KEY, agent_id=agent_id, **{"poll_interval": 0.2, "approval_poll": 0.1, "on_report_error": lambda m: None, **kw})


def test_the_moderation_guardrail_blocks_warns_and_fails_closed_and_the_platform_stores_it(api: Api, agent_id: str, fake: FakeModeration) -> None:
    policy = api.policy(agent_ids=[agent_id], guardrails={"moderation": {"mode": "block", "threshold": 0.8, "categories": ["self-harm", "harassment"]}})
    gov = connect(agent_id, moderation=openai_moderation(base_url=fake.url, api_key="sk-test", max_retries=1))
    ran: List[Any] = []
    with gov.run() as run:
        with pytest.raises(ActionBlocked) as e:
            run.act("post_reply", {"ticket": "T-100", "reply": {"text": "I will hurt myself if you close this ticket"}}, ran.append, estimated_cost_usd=0.01)
        assert e.value.decision["decision"] == "content_blocked" and ran == []
        # Below the threshold (violence 0.62 is not configured; harassment 0.88 is flagged, harassment/threatening 0.91 too).
        assert run.act("post_reply", {"reply": {"text": "Your parcel ships tomorrow."}}, lambda a: "sent") == "sent"
        with pytest.raises(ActionBlocked) as threat:
            run.act("post_reply", {"reply": {"text": "I know where you live"}}, ran.append)
        assert threat.value.decision["context"]["categories"] == ["harassment", "harassment/threatening"]
        fake.fail({"status": 503, "retry_after": "0"}, {"status": 503, "retry_after": "0"})
        with pytest.raises(ActionBlocked) as down:
            run.act("post_reply", {"text": "hello"}, ran.append)
        assert (down.value.decision["decision"], down.value.decision["rule"]) == ("block", "moderation_guardrail") and ran == []
    gov.close()
    recs = sorted(api.interventions(agent_id, 3), key=lambda r: r["created_at"])
    by_type = {r["type"]: r for r in recs}
    stored = by_type["content_blocked"]
    assert (stored["outcome"], stored["policy_id"], stored["action_name"]) == ("blocked", policy["id"], "post_reply")
    assert stored["context"]["guardrail"] == "moderation" and {m["field_path"] for m in stored["context"]["matches"]} == {"reply.text"}
    assert by_type["hard_block"]["policy_id"] == policy["id"] and "HTTP 503" in by_type["hard_block"]["reason"]

    # warn mode: a flagged text runs with a warning, and a failing provider warns too.
    warn_agent = f"{agent_id}-warn"
    warn_policy = api.policy(agent_ids=[warn_agent], guardrails={"moderation": {"mode": "warn", "threshold": 0.5}})
    gov = connect(warn_agent, moderation=openai_moderation(base_url=fake.url, max_retries=0))
    with gov.run() as run:
        assert run.act("post_reply", {"text": "I know where you live"}, lambda a: "sent") == "sent"
        fake.fail({"status": 500})
        assert run.act("post_reply", {"text": "hello"}, lambda a: "sent") == "sent"
    gov.close()
    warned = api.interventions(warn_agent, 2)
    assert sorted(r["type"] for r in warned) == ["warning", "warning"] and all(r["policy_id"] == warn_policy["id"] for r in warned)
    # A warning carries no guardrail context (only the guardrail types do); its reason names what was found or what failed.
    assert sorted("HTTP 500" in r["reason"] for r in warned) == [False, True]
    assert any("flagged for harassment, harassment/threatening, violence" in r["reason"] for r in warned)


def test_decorated_tools_hand_their_approval_to_on_escalated(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], approval_required_actions=["wire_transfer", "refund", "close_account"])
    gov = connect(agent_id)
    escalations: List[Tuple[str, str, Dict[str, Any]]] = []

    def approve(approval_id: str, decision: Dict[str, Any]) -> None:
        escalations.append(("wire_transfer", approval_id, decision))
        gov.decide_approval(approval_id, "approve", "cfo@example.com")

    def reject(approval_id: str, decision: Dict[str, Any]) -> None:
        escalations.append(("refund", approval_id, decision))
        gov.decide_approval(approval_id, "reject", "cfo@example.com", notes="not this one")

    @gov.action("wire_transfer", on_escalated=approve)
    def wire_transfer(to: str, amount: int) -> str:
        return f"sent {amount} to {to}"

    def refund(invoice: str) -> str:
        return f"refunded {invoice}"

    governed_refund = gov.wrap_tool(refund, on_escalated=reject)

    @gov.action(on_escalated=lambda aid, d: (escalations.append(("close_account", aid, d)), gov.decide_approval(aid, "approve", "cfo@example.com")))
    async def close_account(account: str) -> str:
        return f"closed {account}"

    with gov.run() as run:
        assert wire_transfer("acme", amount=950) == "sent 950 to acme"
        with pytest.raises(ApprovalRejected) as e:
            governed_refund("inv_1")
        assert e.value.status == "rejected" and e.value.notes == "not this one"
        assert asyncio.run(close_account("acc_9")) == "closed acc_9"
    gov.close()
    assert [n for n, _, _ in escalations] == ["wire_transfer", "refund", "close_account"]
    assert all(d["decision"] == "escalate" and aid.startswith("apr-") for _, aid, d in escalations)
    assert e.value.approval_id == escalations[1][1]
    # The approvals decided are the ones the hook was handed, with the calls' own arguments.
    for name, aid, _ in escalations:
        status, rec = api.call("GET", f"/api/v1/approvals/{aid}")
        assert status == 200 and rec["action_name"] == name, rec
    assert api.call("GET", f"/api/v1/approvals/{escalations[0][1]}")[1]["original_inputs"] == {"to": "acme", "amount": 950}
    assert run.run_id and [a["action_name"] for a in api.run_record(run.run_id, 3)["actions"]] == ["wire_transfer", "refund", "close_account"]
