"""The framework recipes of docs/sdk-python.md (sdks/python/recipes/*.py), each imported and run with a stand-in for
its framework (tests/framework_standins.py): the framework reads the governed function's name, docstring, signature
and type hints and calls it by name; the call is decided (allowed and recorded with its arguments by parameter name
under fail_mode open with nothing loaded, refused under fail_mode closed), as it would be under the real framework."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from agp import ActionBlocked, Governor

import framework_standins  # tests/ is on sys.path (pytest, rootdir without __init__.py)

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
DOWN = "http://127.0.0.1:9"


@pytest.fixture()
def recipes() -> Iterator[Any]:
    names = framework_standins.install()
    sys.path.insert(0, str(RECIPES))
    try:
        yield lambda name: importlib.import_module(name)
    finally:
        sys.path.remove(str(RECIPES))
        for n in names + ["openai_agents", "langchain_tools", "crewai_tool", "pydantic_ai_tools", "smolagents_tools"]:
            sys.modules.pop(n, None)


def governor(tmp_path: Path, fail_mode: str) -> Governor:
    return Governor.connect(url=DOWN, key="agp_x", agent_id="support", fail_mode=fail_mode, spool_dir=str(tmp_path / fail_mode), on_report_error=lambda m: None)


def recorded(tmp_path: Path, fail_mode: str) -> List[Dict[str, Any]]:
    lines = (tmp_path / fail_mode / "spool.jsonl").read_text().splitlines()
    return [e["body"] for e in (json.loads(line)["e"] for line in lines if '"e"' in line) if e["type"] == "action.record"]


def test_openai_agents_function_tool(recipes: Any, tmp_path: Path) -> None:
    m = recipes("openai_agents")
    for mode in ("open", "closed"):
        gov = governor(tmp_path, mode)
        agent = m.build_agent(gov)
        lookup, refund = agent.tools
        assert (lookup.name, lookup.description) == ("lookup_order", "Read an order and its shipping status.")
        assert refund.params_json_schema["properties"] == {"order_id": {"type": "string"}, "amount": {"type": "number"}}
        with gov.run(run_id=f"r-{mode}"):
            out = asyncio.run(refund.on_invoke_tool(None, json.dumps({"order_id": "A-1001", "amount": 20.5})))
        gov.close(timeout=0)
        if mode == "open":
            assert out == "refunded 20.5 USD for A-1001"
            assert [(b["action_name"], b["inputs"], b["status"]) for b in recorded(tmp_path, mode)] == [("issue_refund", {"order_id": "A-1001", "amount": 20.5}, "success")]
        else:  # refused: the model gets the refusal as the tool's output
            assert out.startswith("An error occurred while running the tool") and "no policy snapshot has been loaded" in out


def test_langchain_tool(recipes: Any, tmp_path: Path) -> None:
    m = recipes("langchain_tools")
    for mode in ("open", "closed"):
        gov = governor(tmp_path, mode)
        lookup, refund = m.build_tools(gov)
        assert lookup.args == {"order_id": {"type": "string"}} and lookup.description == "Read an order and its shipping status."
        with gov.run(run_id=f"r-{mode}"):
            if mode == "open":
                assert lookup.invoke({"order_id": "A-1"}) == "order A-1: shipped with DHL"
                assert refund.invoke({"order_id": "A-1", "amount": 5}) == "refunded 5 USD for A-1"
            else:
                with pytest.raises(ActionBlocked):
                    lookup.invoke({"order_id": "A-1"})
                assert refund.invoke({"order_id": "A-1", "amount": 5}).startswith("refused: no policy snapshot")
        gov.close(timeout=0)
    assert [b["inputs"] for b in recorded(tmp_path, "open")] == [{"order_id": "A-1"}, {"order_id": "A-1", "amount": 5}]


def test_crewai_base_tool(recipes: Any, tmp_path: Path) -> None:
    m = recipes("crewai_tool")
    gov = governor(tmp_path, "open")
    t = m.build_tool(gov)
    with gov.run(run_id="r-1"):
        assert t.name == "lookup_order" and t.run(order_id="A-7") == "order A-7: shipped with DHL"
    gov.close(timeout=0)
    assert [(b["action_name"], b["inputs"], b["cost_usd"]) for b in recorded(tmp_path, "open")] == [("lookup_order", {"order_id": "A-7"}, 0.001)]
    gov = governor(tmp_path, "closed")
    with gov.run(run_id="r-2"), pytest.raises(ActionBlocked):
        m.build_tool(gov).run(order_id="A-7")
    gov.close(timeout=0)


def test_pydantic_ai_tool_plain(recipes: Any, tmp_path: Path) -> None:
    m = recipes("pydantic_ai_tools")
    gov = governor(tmp_path, "open")
    agent = m.build_agent(gov)
    assert agent.schemas["lookup_order"]["properties"] == {"order_id": {"type": "string"}}

    async def conversation() -> List[Any]:
        with gov.run(run_id="r-1"):  # the sync tool runs in a worker thread; the async one in this task
            return [await agent.call_tool("lookup_order", {"order_id": "A-2"}), await agent.call_tool("search_kb", {"query": "refunds"})]

    assert asyncio.run(conversation()) == ["order A-2: shipped with DHL", "3 articles about refunds"]
    gov.close(timeout=0)
    assert [b["action_name"] for b in recorded(tmp_path, "open")] == ["lookup_order", "search_kb"]


def test_smolagents_tool(recipes: Any, tmp_path: Path) -> None:
    m = recipes("smolagents_tools")
    gov = governor(tmp_path, "closed")
    (lookup,) = m.build_tools(gov)
    assert lookup.inputs == {"order_id": {"type": "string"}} and lookup.description == "Read an order and its shipping status."
    with gov.run(run_id="r-1"), pytest.raises(ActionBlocked) as e:
        lookup(order_id="A-3")
    assert e.value.decision["decision"] == "block"
    gov.close(timeout=0)
