"""The PII guardrail on results (``guardrails.pii.results``) and argument schemas, offline: the engine's
``review_result`` (the meaning of ``reviewResult`` in @agp/policy-engine), the governor refusing arguments that fail
a registered action's schema with a ``ValueError`` naming each field (jsonschema when installed, else the built-in
subset; both are run here), before any decision and with nothing recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

import agp.schema
from agp import ArgumentsInvalid, Governor
from agp.engine import review_result
from agp.schema import ActionSchemas

DOWN = "http://127.0.0.1:9"
CARD = "4111 1111 1111 1111"


def pol(id_: str, results: str, categories: Any = None, created: str = "2026-01-01T00:00:00.000Z", **kw: Any) -> Dict[str, Any]:
    pii: Dict[str, Any] = {"mode": "block", "results": results}
    if categories is not None:
        pii["categories"] = categories
    return {"id": id_, "name": f"p-{id_}", "enabled": True, "agent_ids": [], "created_at": created, "guardrails": {"pii": pii}, **kw}


def test_review_passes_without_a_results_mode_or_personal_data() -> None:
    plain = {**pol("a", "block"), "guardrails": {"pii": {"mode": "block"}}}
    assert review_result([plain], "bot", "lookup", {"card": CARD})["outcome"] == "pass"
    assert review_result([pol("a", "block")], "bot", "lookup", {"note": "nothing here"})["outcome"] == "pass"
    assert review_result([pol("a", "block")], "bot", "lookup", "a string result is not scanned")["outcome"] == "pass"
    assert review_result([{**pol("a", "block"), "agent_ids": ["other"]}], "bot", "lookup", {"card": CARD})["outcome"] == "pass"


def test_review_redacts_a_copy_and_names_fields_without_the_raw_text() -> None:
    result = {"customer": {"email": "ada@example.com", "cards": [CARD, "none"]}, "id": 7}
    r = review_result([pol("a", "redact")], "bot", "lookup", result)
    assert r["outcome"] == "redact" and r["policy_id"] == "a"
    assert r["result"] == {"customer": {"email": "[REDACTED:email]", "cards": ["[REDACTED:payment_card]", "none"]}, "id": 7}
    assert result["customer"]["email"] == "ada@example.com"  # the input is not changed
    assert r["reason"] == 'lookup result holds 2 personal-data matches (email, payment_card) in customer.email, customer.cards.0; redacted by the PII guardrail of policy "p-a"'
    assert CARD not in json.dumps(r["guardrail_context"]) and r["guardrail_context"]["fields"] == ["customer.email", "customer.cards.0"]


def test_the_most_restrictive_mode_wins_and_categories_filter() -> None:
    result = {"email": "ada@example.com"}
    r = review_result([pol("w", "warn", created="2026-01-01T00:00:00.000Z"), pol("b", "block", created="2026-02-01T00:00:00.000Z")], "bot", "x", result)
    assert r["outcome"] == "block" and r["policy_id"] == "b" and r["result"] is result and "withheld" in r["reason"]
    assert review_result([pol("b", "block", categories=["payment_card"])], "bot", "x", result)["outcome"] == "pass"
    # redacting policies mask only their categories
    r = review_result([pol("r", "redact", categories=["email"])], "bot", "x", {"email": "ada@example.com", "card": CARD})
    assert r["result"] == {"email": "[REDACTED:email]", "card": CARD}


def gov_with(tmp_path: Path, actions: List[Dict[str, Any]], decisions: List[Any]) -> Governor:
    return Governor.connect(url=DOWN, key="agp_x", agent_id="bot", fail_mode="open", spool_dir=str(tmp_path), actions=actions,
                            on_report_error=lambda m: None, on_decision=decisions.append)


SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "required": ["invoice", "amount"], "additionalProperties": False,
          "properties": {"invoice": {"type": "string", "pattern": "^inv_"}, "amount": {"type": "number", "minimum": 0},
                         "currency": {"enum": ["EUR", "USD"]}, "items": {"type": "array", "items": {"type": "object", "required": ["sku"]}}}}


@pytest.fixture(params=["jsonschema", "builtin"])
def engine(request: Any, monkeypatch: Any) -> str:
    if request.param == "builtin":
        monkeypatch.setattr(agp.schema, "_jsonschema", None)
    elif agp.schema._jsonschema is None:
        pytest.skip("jsonschema is not installed here")
    return request.param


def test_arguments_failing_the_schema_raise_value_error_naming_each_field(tmp_path: Path, engine: str) -> None:
    decisions: List[Any] = []
    gov = gov_with(tmp_path, [{"name": "refund", "parameters": SCHEMA}, {"name": "free"}], decisions)
    ran: List[Any] = []
    with gov.run(run_id="r-1") as run:
        with pytest.raises(ValueError) as e:
            run.act("refund", {"amount": -1, "currency": "GBP", "extra": 1, "items": [{"x": 1}]}, ran.append)
        err = e.value
        assert isinstance(err, ArgumentsInvalid) and err.action_name == "refund"
        assert set(err.fields) == {"invoice", "amount", "currency", "extra", "items.0.sku"}, (engine, str(err))
        assert str(err).startswith("invalid arguments for refund: ")
        assert "invoice: is required" in str(err) and "extra: is not an allowed field" in str(err) and 'allowed: "EUR", "USD"' in str(err)
        with pytest.raises(ValueError, match=r"invoice: "):
            run.act("refund", {"invoice": "x_1", "amount": 1}, ran.append)
        assert ran == [] and decisions == []  # refused before any decision
        assert run.act("refund", {"invoice": "inv_1", "amount": 1.5, "currency": "EUR", "items": [{"sku": "a"}]}, lambda a: "ok") == "ok"
        assert run.act("free", {"anything": [1, 2]}, lambda a: "ok") == "ok"  # no parameters: not checked
    gov.close(timeout=0)
    types = [json.loads(line)["e"]["type"] for line in (tmp_path / "spool.jsonl").read_text().splitlines() if '"e"' in line]
    assert types.count("action.record") == 2  # the refused calls recorded nothing
    assert gov.status()["schemas"] == engine


def test_a_parameters_value_that_is_not_a_schema_fails_connect() -> None:
    with pytest.raises(TypeError, match=r"action bad: parameters is not a valid JSON Schema"):
        ActionSchemas([{"name": "bad", "parameters": "string"}])
    if agp.schema._jsonschema is not None:
        with pytest.raises(TypeError, match=r"action bad: parameters is not a valid JSON Schema"):
            ActionSchemas([{"name": "bad", "parameters": {"type": "no-such-type"}}])


def test_builtin_validator_subset(monkeypatch: Any) -> None:
    monkeypatch.setattr(agp.schema, "_jsonschema", None)
    s = ActionSchemas([{"name": "a", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer", "maximum": 3}, "s": {"type": ["string", "null"], "minLength": 2, "maxLength": 3},
        "b": {"const": True}, "o": {"oneOf": [{"type": "string"}, {"type": "number"}]}, "l": {"type": "array", "minItems": 1, "maxItems": 2}}}}])
    s.check("a", {"n": 2.0, "s": None, "b": True, "o": "x", "l": [1]})
    with pytest.raises(ArgumentsInvalid) as e:
        s.check("a", {"n": 4, "s": "abcd", "b": 1, "o": [], "l": []})
    assert e.value.fields == ["n", "s", "b", "o", "l"], str(e.value)
    with pytest.raises(ArgumentsInvalid, match=r"n: must be integer"):
        s.check("a", {"n": True})
