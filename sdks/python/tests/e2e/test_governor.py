"""The Python SDK's Governor against the real platform (``AGP_URL``, write key ``AGP_KEY``): decisions taken locally
with the policy engine from the snapshot the platform serves, reports delivered through ingest and read back over
the HTTP API. Run by test/e2e/python-sdk.test.ts in both run modes; skipped without ``AGP_URL``."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import agp
from agp import ActionBlocked, ApprovalRejected, AsyncGovernor, BlockedResult, Governor

URL = os.environ.get("AGP_URL", "")
KEY = os.environ.get("AGP_KEY", "")
Api = Any  # the `api` fixture of conftest.py

#: Nothing listens here: the platform is unreachable.
DOWN = "http://127.0.0.1:9"


def connect(agent_id: str, **kw: Any) -> Governor:
    return Governor.connect(url=URL, key=KEY, agent_id=agent_id, **{"poll_interval": 0.2, "approval_poll": 0.1, **kw})


def test_runs_the_installed_package_when_asked() -> None:
    if os.environ.get("AGP_TEST_INSTALLED"):
        assert "site-packages" in agp.__file__, agp.__file__
    assert agp.__version__


def test_allow_runs_and_is_reported(api: Api, agent_id: str) -> None:
    gov = connect(agent_id)
    seen: List[Any] = []

    def refund(args: Dict[str, Any], ctx: agp.ActContext) -> Dict[str, Any]:
        seen.append(args)
        ctx.report_cost(0.01)
        return {"refunded": args["amount"]}

    with gov.run(session_id="support-42", name="refunds") as run:
        out = run.act("refund_payment", {"invoice": "inv_1", "amount": 120}, refund, estimated_cost_usd=0.02, intent="refund a duplicate charge", idempotency_key="inv_1")
    assert out == {"refunded": 120}
    assert seen == [{"invoice": "inv_1", "amount": 120}]
    assert gov.close() == {"delivered": 3, "pending": 0}  # run.start, the ledger entry, run.end
    rec = api.run_record(run.run_id, 1)
    entry = rec["actions"][0]
    assert entry["action_name"] == "refund_payment" and entry["status"] == "success"
    assert entry["inputs"] == {"invoice": "inv_1", "amount": 120}
    assert entry["outputs"] == {"refunded": 120}
    assert entry["cost_usd"] == pytest.approx(0.02) and entry["actual_cost_usd"] == pytest.approx(0.01)
    assert api.eventually(lambda: api.call("GET", f"/api/v1/runs/{run.run_id}")[1].get("status") == "completed", what="run completed")


def test_block_raises_or_returns_and_records_the_intervention(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], denied_actions=["drop_table"])
    gov = connect(agent_id)
    ran = []
    with gov.run() as run:
        with pytest.raises(ActionBlocked) as err:
            run.act("drop_table", {"table": "users"}, lambda a: ran.append(a))
        assert err.value.decision["decision"] == "block" and err.value.decision["rule"] == "denied_action"
        res = run.act("drop_table", {"table": "orders"}, lambda a: ran.append(a), on_blocked="return")
        assert isinstance(res, BlockedResult) and res.blocked and res.decision["intervention_type"] == "hard_block"
    assert ran == []
    gov.close()
    items = api.interventions(agent_id, 2)
    assert {i["type"] for i in items} == {"hard_block"}
    assert {i["action_name"] for i in items} == {"drop_table"}
    entries = api.run_record(run.run_id, 2)["actions"]
    assert [e["status"] for e in entries] == ["blocked", "blocked"]


def test_downgrade_runs_with_the_modified_arguments(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], downgrades=[{"action": "llm", "argument": "model", "replace": {"gpt-4o": "gpt-4o-mini"}}])
    gov = connect(agent_id)
    with gov.run() as run:
        out = run.act("llm", {"model": "gpt-4o", "prompt": "hi"}, lambda a: a["model"])
    assert out == "gpt-4o-mini"
    gov.close()
    [i] = api.interventions(agent_id, 1)
    assert i["type"] == "downgrade" and i["original_inputs"]["model"] == "gpt-4o" and i["modified_inputs"]["model"] == "gpt-4o-mini"
    assert api.run_record(run.run_id, 1)["actions"][0]["inputs"]["model"] == "gpt-4o-mini"


def _pending_approval(api: Api, agent_id: str) -> Dict[str, Any]:
    def probe() -> Any:
        s, b = api.call("GET", f"/api/v1/approvals?status=pending&agent_id={agent_id}")
        return b["approvals"][0] if s == 200 and b.get("approvals") else None

    return api.eventually(probe, what=f"a pending approval of {agent_id}")


def test_escalate_waits_for_the_human_then_runs_or_raises(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], approval_required_actions=["wire_transfer"])
    # The fallback read of the approval is a minute away: resuming sooner shows the push channel woke the wait.
    gov = connect(agent_id, approval_poll=60)
    run = gov.run()
    result: Dict[str, Any] = {}

    def agent() -> None:
        try:
            result["out"] = run.act("wire_transfer", {"to": "acme", "amount": 950}, lambda a: f"sent {a['amount']}", intent="pay the supplier")
        except BaseException as err:  # noqa: BLE001 (handed to the test thread)
            result["err"] = err

    t = threading.Thread(target=agent)
    t.start()
    approval = _pending_approval(api, agent_id)
    assert approval["original_inputs"] == {"to": "acme", "amount": 950} and approval["agent_intent"] == "pay the supplier"
    assert t.is_alive() and not result  # the agent waits
    t0 = time.monotonic()
    status, body = api.call("POST", f"/api/v1/approvals/{approval['id']}/approve", {"approver_email": "cfo@example.com"})
    assert status == 200, body
    t.join(30)
    assert result == {"out": "sent 950"}
    print(f"approve -> escalated act resumed in {time.monotonic() - t0:.2f} s (approval_poll 60 s: woken by the push channel)")
    assert time.monotonic() - t0 < 30
    # Rejected: ApprovalRejected, nothing runs.
    ran = []
    errs: List[BaseException] = []
    t = threading.Thread(target=lambda: errs.append(_raises(lambda: run.act("wire_transfer", {"to": "x", "amount": 1}, lambda a: ran.append(a)))))
    t.start()
    approval = _pending_approval(api, agent_id)
    api.call("POST", f"/api/v1/approvals/{approval['id']}/reject", {"approver_email": "sec@example.com", "notes": "no"})
    t.join(15)
    [err] = errs
    assert isinstance(err, ApprovalRejected) and err.status == "rejected" and err.approval_id == approval["id"]
    assert err.approver_email == "sec@example.com" and err.notes == "no" and ran == []
    # Nobody decides: a timeout.
    with pytest.raises(ApprovalRejected) as timed_out:
        run.act("wire_transfer", {"to": "y", "amount": 2}, lambda a: ran.append(a), approval_timeout=0.3)
    assert timed_out.value.status == "timeout" and ran == []
    run.end()
    gov.close()


def _raises(fn: Any) -> BaseException:
    try:
        fn()
    except BaseException as err:  # noqa: BLE001
        return err
    raise AssertionError("did not raise")


@pytest.mark.parametrize("push", [True, False], ids=["push-channel", "etag-polling"])
def test_a_kill_switch_engaged_while_running_refuses_the_next_act(api: Api, agent_id: str, push: bool) -> None:
    gov = connect(agent_id, push=push)
    try:
        if push:
            api.eventually(lambda: gov.status()["channel"]["state"] == "connected", what="the push channel to connect")
        else:
            assert gov.status()["channel"]["state"] == "off"
        with gov.run() as run:
            assert run.act("step", {"n": 1}, lambda a: "ok") == "ok"
            status, body = api.call("PUT", f"/api/v1/kill-switches/agents/{agent_id}", {"engaged": True, "reason": "runaway"})
            assert status == 200, body
            t0 = time.monotonic()

            def refused() -> bool:
                try:
                    run.act("step", {"n": 2}, lambda a: "ok")
                    return False
                except ActionBlocked as err:
                    assert err.decision["rule"] == "agent_kill_switch" and "runaway" in err.decision["reason"]
                    return True

            api.eventually(refused, timeout=10, what="the kill switch to refuse act")
            how = "push channel" if push else "ETag polling every 0.2 s"
            print(f"kill switch engaged -> act refused within {time.monotonic() - t0:.2f} s ({how})")
        if push:
            assert gov.status()["snapshot_loaded"] and gov.status()["staleness_s"] == 0
        else:
            # An unchanged snapshot's poll costs a 304.
            api.eventually(lambda: gov.status()["channel"]["loads"]["not_modified"] > 0, timeout=5, what="a 304 poll")
    finally:
        api.call("PUT", f"/api/v1/kill-switches/agents/{agent_id}", {"engaged": False})
        gov.close()


def test_a_policy_created_after_connect_applies(api: Api, agent_id: str) -> None:
    gov = connect(agent_id, poll_interval=30)  # the push channel's policy.changed, not the poll, brings it
    api.eventually(lambda: gov.status()["channel"]["state"] == "connected", what="the push channel to connect")
    with gov.run() as run:
        assert run.act("export", {}, lambda a: "ok") == "ok"
        api.policy(agent_ids=[agent_id], denied_actions=["export"])

        def blocked() -> bool:
            return isinstance(run.act("export", {}, lambda a: "ok", on_blocked="return"), BlockedResult)

        api.eventually(blocked, timeout=10, what="the new policy to apply")
    gov.close()


def test_fail_modes_with_the_platform_unreachable(tmp_path: Path, agent_id: str) -> None:
    errors: List[str] = []
    closed = Governor.connect(url=DOWN, key=KEY, agent_id=agent_id, fail_mode="closed", spool_dir=str(tmp_path / "c"), on_report_error=errors.append)
    assert closed.status()["snapshot_loaded"] is False and closed.status()["failing_closed"] is True
    with closed.run() as run:
        with pytest.raises(ActionBlocked) as err:
            run.act("search", {"q": "x"}, lambda a: "ran")
    assert err.value.decision["rule"] is None and "no policy snapshot" in err.value.decision["reason"]
    assert closed.close(timeout=0.2)["pending"] > 0  # kept in the spool for the next connect
    opened = Governor.connect(url=DOWN, key=KEY, agent_id=agent_id, fail_mode="open", spool_dir=str(tmp_path / "o"), on_report_error=errors.append)
    assert opened.status()["failing_closed"] is False
    with opened.run() as run:
        assert run.act("search", {"q": "x"}, lambda a: "ran") == "ran"
    opened.close(timeout=0.2)
    # Memory only: undeliverable reports are lost, and close says so.
    mem = Governor.connect(url=DOWN, key=KEY, agent_id=agent_id, fail_mode="open", on_report_error=errors.append)
    mem.run()
    with pytest.raises(RuntimeError, match="lost"):
        mem.close(timeout=0.2)


def test_max_staleness_fails_closed_once_the_snapshot_is_old(agent_id: str) -> None:
    # Without the push channel (which vouches for the snapshot while it is live), the snapshot ages between polls.
    gov = connect(agent_id, max_staleness=0.05, poll_interval=30, push=False)
    with gov.run() as run:
        time.sleep(0.15)
        with pytest.raises(ActionBlocked, match="past max_staleness"):
            run.act("x", {}, lambda a: 1)
        gov.refresh()
        assert run.act("x", {}, lambda a: 1) == 1
    gov.close()


def test_idempotent_replay_returns_the_first_result(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], guardrails={"idempotency": {"actions": ["refund"], "ttl_seconds": 60}})
    gov = connect(agent_id)
    calls = []
    with gov.run() as run:
        first = run.act("refund", {"invoice": "inv_9"}, lambda a: calls.append(1) or {"id": "re_1"}, idempotency_key="inv_9")
        again = run.act("refund", {"invoice": "inv_9"}, lambda a: calls.append(1) or {"id": "re_2"}, idempotency_key="inv_9")
    assert first == again == {"id": "re_1"} and len(calls) == 1
    gov.close()
    [i] = api.interventions(agent_id, 1)
    assert i["type"] == "idempotent_replay"


def test_arguments_that_are_not_json_are_a_type_error_before_any_decision(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], denied_actions=["x"])
    gov = connect(agent_id)
    with gov.run() as run:
        with pytest.raises(TypeError, match=r"args\.items\[1\]\.when is a datetime"):
            import datetime

            run.act("x", {"items": [1, {"when": datetime.datetime.now()}]}, lambda a: 1)
        with pytest.raises(TypeError, match="estimated_cost_usd"):
            run.act("y", {}, lambda a: 1, estimated_cost_usd=-1)
    gov.close()
    time.sleep(0.3)
    assert api.call("GET", f"/api/v1/interventions?agent_id={agent_id}")[1]["total"] == 0


def test_decorated_tools_and_the_asyncio_variant(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], denied_actions=["delete_all"], downgrades=[{"action": "send_email", "argument": "to", "replace": {"ceo@example.com": "assistant@example.com"}}])
    gov = connect(agent_id)

    @gov.action("send_email", estimated_cost_usd=0.001)
    def send_email(to: str, body: str) -> str:
        """Send one e-mail."""
        return f"to {to}: {body}"

    @gov.action()
    async def delete_all() -> str:
        return "gone"

    assert send_email.__name__ == "send_email" and send_email.__doc__ == "Send one e-mail."
    with gov.run() as run:
        assert send_email("ceo@example.com", body="hello") == "to assistant@example.com: hello"

        async def main() -> Any:
            async def search(args: Dict[str, Any]) -> List[str]:
                await asyncio.sleep(0)
                return [args["q"]]

            out = await run.aact("search", {"q": "pumps"}, search)
            with pytest.raises(ActionBlocked):
                await delete_all()
            # The loop keeps running while an action is decided and reported.
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                for _ in range(5):
                    ticks += 1
                    await asyncio.sleep(0)

            await asyncio.gather(ticker(), run.aact("search", {"q": "valves"}, lambda a: [a["q"]]))
            return out, ticks

        assert asyncio.run(main()) == (["pumps"], 5)
    gov.close()
    assert [e["action_name"] for e in api.run_record(run.run_id, 4)["actions"]] == ["send_email", "search", "delete_all", "search"]


def test_async_governor(agent_id: str) -> None:
    async def main() -> Any:
        gov = await AsyncGovernor.connect(URL, KEY, agent_id, poll_interval=0.5)
        async with gov.run() as run:
            out = await run.aact("search", {"q": "a"}, lambda a: a["q"] * 2)
        status = gov.status()
        res = await gov.close()
        return out, status["snapshot_loaded"], res["pending"]

    assert asyncio.run(main()) == ("aa", True, 0)


def test_concurrent_acts_count_one_rate_limit(api: Api, agent_id: str) -> None:
    api.policy(agent_ids=[agent_id], rate_limits={"poll": {"max_calls": 5, "window_seconds": 60, "scope": "process"}})
    gov = connect(agent_id, on_blocked="return")
    with gov.run() as run:
        results: List[Any] = []
        lock = threading.Lock()

        def worker() -> None:
            for _ in range(5):
                r = run.act("poll", {}, lambda a: "ok")
                with lock:
                    results.append(r)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results.count("ok") == 5 and sum(isinstance(r, BlockedResult) for r in results) == 15
    gov.close()


def test_the_spool_delivers_after_a_restart_exactly_once(api: Api, tmp_path: Path, agent_id: str) -> None:
    spool = tmp_path / "spool"
    down = Governor.connect(url=DOWN, key=KEY, agent_id=agent_id, fail_mode="open", spool_dir=str(spool), on_report_error=lambda m: None)
    with down.run(run_id=f"run-{agent_id}") as run:
        assert run.act("search", {"q": "x"}, lambda a: "ran") == "ran"
    assert down.close(timeout=0.2)["pending"] == 3  # run.start, the ledger entry, run.end: kept in the file
    lines = (spool / "spool.jsonl").read_text().splitlines()
    assert [json.loads(x)["e"]["type"] for x in lines] == ["run.start", "action.record", "run.end"]
    ledger_line = lines[1]
    # The next process delivers them, with their original ids.
    up = connect(agent_id, spool_dir=str(spool))
    assert up.close() == {"delivered": 3, "pending": 0}
    assert up.status()["reports"]["recovered"] == 3
    # A copy of a report already delivered (the acknowledgement was lost) is sent again: stored once.
    with open(spool / "spool.jsonl", "a", encoding="utf-8") as f:
        f.write(ledger_line + "\n")
    again = connect(agent_id, spool_dir=str(spool))
    assert again.close() == {"delivered": 1, "pending": 0}
    time.sleep(0.5)
    rec = api.run_record(run.run_id, 1)
    assert [a["action_name"] for a in rec["actions"]] == ["search"]
    assert rec["status"] == "completed"


def test_a_corrupt_spool_is_quarantined_and_what_parses_is_delivered(api: Api, tmp_path: Path, agent_id: str) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    run_id = f"run-{agent_id}"
    good = [{"e": {"id": f"run.{run_id}.start", "type": "run.start", "timestamp": "2026-01-01T00:00:00.000Z",
                   "body": {"run_id": run_id, "agent_id": agent_id, "started_at": "2026-01-01T00:00:00.000Z"}}},
            {"e": {"id": f"{run_id}.abc.1.a", "type": "action.record", "timestamp": "2026-01-01T00:00:01.000Z",
                   "body": {"run_id": run_id, "agent_id": agent_id, "action_name": "search", "status": "success", "inputs": {}, "cost_usd": 0, "timestamp": "2026-01-01T00:00:01.000Z"}}}]
    (spool / "spool.jsonl").write_text(json.dumps(good[0]) + "\n{{{ torn in the middle\n" + json.dumps(good[1]) + "\n")
    warnings: List[str] = []
    gov = connect(agent_id, spool_dir=str(spool), on_report_error=warnings.append)
    assert len(warnings) == 1 and "is corrupt (lines 2 do not parse)" in warnings[0], warnings
    q = gov.status()["spool"]["quarantined"]
    assert q and Path(q).exists()
    assert gov.close() == {"delivered": 2, "pending": 0}
    assert api.run_record(run_id, 1)["actions"][0]["action_name"] == "search"


def test_a_report_over_the_request_limit_is_set_aside_and_the_others_delivered(api: Api, tmp_path: Path, agent_id: str) -> None:
    errors: List[str] = []
    gov = connect(agent_id, spool_dir=str(tmp_path), on_report_error=errors.append)
    with gov.run() as run:
        # 6 MB of arguments: its ledger entry is over the ingest limit (5 MiB per request).
        assert run.act("big", {"blob": "x" * 6_000_000}, lambda a: "ok") == "ok"
        assert run.act("small", {}, lambda a: "ok") == "ok"
    assert gov.close() == {"delivered": 3, "pending": 0}
    assert gov.status()["reports"]["rejected"] == 1
    assert len(errors) == 1 and "too large to send" in errors[0]
    [line] = (tmp_path / "rejected.jsonl").read_text().splitlines()
    assert json.loads(line)["status"] == 413 and json.loads(line)["event"]["body"]["action_name"] == "big"
    assert [a["action_name"] for a in api.run_record(run.run_id, 1)["actions"]] == ["small"]
