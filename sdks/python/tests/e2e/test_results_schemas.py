"""The PII guardrail on results and argument schemas against the platform (``AGP_URL``): a policy's
``guardrails.pii.results`` masks, withholds or warns about personal data in what the function returned, recorded as an
intervention of its own beside the ledger entry; an action registered with a ``parameters`` schema refuses arguments
that fail it with a ``ValueError`` naming the field, recording nothing."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

from agp import ActionBlocked, Governor

URL = os.environ.get("AGP_URL", "")
KEY = os.environ.get("AGP_KEY", "")
Api = Any  # the `api` fixture of conftest.py


def connect(agent_id: str, **kw: Any) -> Governor:
    return Governor.connect(url=URL, key=KEY, agent_id=agent_id, **{"poll_interval": 0.2, **kw})


def test_pii_in_results_is_redacted_or_withheld_and_recorded(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], guardrails={"pii": {"mode": "block", "results": "redact", "categories": ["email"]}})
    gov = connect(agent_id)
    run_id = f"r-{uuid.uuid4().hex[:8]}"
    with gov.run(run_id=run_id) as run:
        out = run.act("lookup_customer", {"id": "c_1"}, lambda a: {"name": "Ada", "email": "ada@example.com"})
        assert out == {"name": "Ada", "email": "[REDACTED:email]"}
    rec = api.run_record(run_id, 1)
    assert rec["actions"][0]["outputs"] == {"name": "Ada", "email": "[REDACTED:email]"}  # the ledger keeps what the agent saw
    iv = api.interventions(agent_id, 1)
    assert iv[0]["type"] == "downgrade" and iv[0]["reason"].startswith("lookup_customer result holds 1 personal-data match (email) in email; redacted")
    assert "ada@example.com" not in str(iv[0])
    gov.close()

    blocking = f"{agent_id}-b"
    api.policy(agent_ids=[blocking], guardrails={"pii": {"mode": "warn", "results": "block"}})
    gov = connect(blocking)
    with gov.run() as run:
        with pytest.raises(ActionBlocked) as e:
            run.act("lookup_customer", {"id": "c_1"}, lambda a: {"card": "4111 1111 1111 1111"})
        assert e.value.decision["decision"] == "pii_blocked" and "withheld" in e.value.decision["reason"]
        assert e.value.decision["cost_prevented_usd"] == 0
    iv = api.interventions(blocking, 1)[0]
    assert iv["type"] == "pii_blocked" and iv["context"]["categories"] == ["payment_card"] and "4111 1111 1111 1111" not in str(iv)
    gov.close()


def test_arguments_failing_the_registered_schema_raise_value_error(api: Api, agent_id: str) -> None:
    actions = [{"name": "refund", "description": "refund an invoice", "parameters": {"type": "object", "required": ["invoice"],
                "properties": {"invoice": {"type": "string"}, "amount": {"type": "number", "maximum": 500}}}}]
    gov = connect(agent_id, actions=actions)
    run_id = f"r-{uuid.uuid4().hex[:8]}"
    with gov.run(run_id=run_id) as run:
        with pytest.raises(ValueError, match=r"invalid arguments for refund: .*amount"):
            run.act("refund", {"invoice": "inv_1", "amount": 900}, lambda a: "no")
        with pytest.raises(ValueError, match=r"invoice: is required"):
            run.act("refund", {"amount": 1}, lambda a: "no")
        assert run.act("refund", {"invoice": "inv_1", "amount": 10}, lambda a: "refunded") == "refunded"
    rec = api.run_record(run_id, 1)
    assert [a["status"] for a in rec["actions"]] == ["success"]  # the refused calls recorded nothing
    gov.close()
