"""The moderation provider (:func:`agp.openai_moderation`) against a real loopback server speaking OpenAI's
``/v1/moderations`` (tests/fake_moderation.py), and the moderation guardrail through a Governor whose snapshot holds
a moderation policy (the platform unreachable: the snapshot is set as the last one loaded). The same cases as the
TypeScript SDK's test/e2e/sdk-moderation.test.ts, plus thresholds, categories, chunking and asyncio.
Source: docs/sdk-python.md §Moderation provider; docs/sdk.md §Moderation provider."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from agp import ActionBlocked, Governor, ModerationError, moderation_category, openai_moderation
from agp._decider import NO_KILL_SWITCHES
from agp._util import now_ms
from agp.moderation import MAX_MODERATED_FIELDS, score_arguments
from agp.snapshot import Snapshot, with_policy_defaults

from fake_moderation import OPENAI_CATEGORIES, FakeModeration  # tests/ is on sys.path (pytest, rootdir without __init__.py)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeModeration]:
    f = FakeModeration()
    yield f
    f.close()


# ---- the provider ---------------------------------------------------------------------------------------------
def test_sends_model_and_inputs_with_the_bearer_key_and_maps_scores_to_the_guardrail_categories(fake: FakeModeration) -> None:
    before = len(fake.requests)
    out = openai_moderation(base_url=f"{fake.url}/", api_key="sk-test-moderation").moderate(["Where is my parcel?", "If this is not fixed I will hurt myself"])
    assert fake.requests[before:] == [{"authorization": "Bearer sk-test-moderation",
                                       "body": {"model": "omni-moderation-latest", "input": ["Where is my parcel?", "If this is not fixed I will hurt myself"]}}]
    assert len(out) == 2 and out[0]["self-harm"] == 0.001
    assert {k: out[1][k] for k in ("self-harm", "self-harm/intent", "violence")} == {"self-harm": 0.97, "self-harm/intent": 0.93, "violence": 0.31}
    assert sorted(out[1]) == sorted(OPENAI_CATEGORIES)
    # Other spellings land on the same category; unknown names are dropped; the highest score of one category wins.
    fake.fail({"body": {"id": "x", "model": "m", "results": [{"category_scores": {"self_harm_intent": 0.9, "Harassment-Threatening": 0.8, "harassment threatening": 0.2, "spam": 0.99}}]}})
    assert openai_moderation(base_url=fake.url, model="text-moderation-stable").moderate(["x"]) == [{"self-harm/intent": 0.9, "harassment/threatening": 0.8}]
    assert fake.requests[-1] == {"authorization": None, "body": {"model": "text-moderation-stable", "input": ["x"]}}
    assert [moderation_category("sexual_minors"), moderation_category("violence/graphic"), moderation_category("Self Harm"), moderation_category("spam")] == \
        ["sexual/minors", "violence/graphic", "self-harm", None]
    assert openai_moderation(base_url=fake.url).moderate([]) == []


def test_retries_5xx_and_429_not_other_4xx_and_fails_with_moderation_error(fake: FakeModeration) -> None:
    provider = openai_moderation(base_url=fake.url, max_retries=2, timeout=20)
    fake.fail({"status": 503}, {"status": 429, "retry_after": "0"})
    t0 = time.monotonic()
    assert len(provider.moderate(["hello"])) == 1
    assert time.monotonic() - t0 >= 0.25  # the 503 without Retry-After waits the first backoff step
    fake.fail({"status": 400})
    before = len(fake.requests)
    with pytest.raises(ModerationError, match="HTTP 400") as e:
        provider.moderate(["hello"])
    assert e.value.status == 400 and len(fake.requests) - before == 1
    fake.fail({"status": 500, "retry_after": "0"}, {"status": 502, "retry_after": "0"}, {"status": 503, "retry_after": "0"})
    with pytest.raises(ModerationError, match=r"after 3 attempt\(s\): HTTP 503") as e:
        provider.moderate(["hello"])
    assert e.value.status == 503


def test_a_timeout_and_answers_of_another_shape_fail_with_moderation_error(fake: FakeModeration) -> None:
    fake.fail({"stall": 1.5})
    t0 = time.monotonic()
    with pytest.raises(ModerationError, match=r"0\.3 s") as e:
        openai_moderation(base_url=fake.url, timeout=0.3).moderate(["hello"])
    assert time.monotonic() - t0 < 1.4 and e.value.status is None  # the server would answer after 1.5 s
    provider = openai_moderation(base_url=fake.url, max_retries=0)
    fake.fail({"body": {"results": []}})
    with pytest.raises(ModerationError, match=r"has 0 results for 1 input\(s\)"):
        provider.moderate(["a"])
    fake.fail({"body": {"results": [{"category_scores": {"violence": 7}}]}})
    with pytest.raises(ModerationError, match=r"results\[0\]\.category_scores\.violence is 7"):
        provider.moderate(["a"])
    fake.fail({"body": {"results": [{"category_scores": {"violence": True}}]}})
    with pytest.raises(ModerationError, match="not a score from 0 to 1"):
        provider.moderate(["a"])
    with pytest.raises(ModerationError, match="failed after 1 attempt"):
        openai_moderation(base_url="http://127.0.0.1:9/v1", max_retries=0).moderate(["a"])  # nothing listens there


def test_more_texts_than_one_request_takes_go_in_several_requests_in_order(fake: FakeModeration) -> None:
    before = len(fake.requests)
    texts = ["a", "I will hurt myself", "c", "d", "I know where you live"]
    out = openai_moderation(base_url=fake.url, max_inputs_per_request=2).moderate(texts)
    assert sorted(len(r["body"]["input"]) for r in fake.requests[before:]) == [1, 2, 2]
    assert [r["self-harm"] for r in out] == [0.001, 0.97, 0.001, 0.001, 0.001] and out[4]["harassment/threatening"] == 0.91


def test_bad_options_are_type_errors_naming_them() -> None:
    for kw, word in (({"base_url": "ftp://x"}, "base_url"), ({"timeout": -1}, "timeout"), ({"timeout": 0}, "timeout"), ({"max_retries": -1}, "max_retries"),
                     ({"max_inputs_per_request": 0}, "max_inputs_per_request"), ({"model": ""}, "model"), ({"headers": {"x": 1}}, "headers")):
        with pytest.raises(TypeError, match=word):
            openai_moderation(**kw)
    with pytest.raises(TypeError, match="texts"):
        openai_moderation().moderate(["a", 1])  # type: ignore[list-item]


# ---- the texts collected ----------------------------------------------------------------------------------------
class Recording:
    """A provider of its own: scores from a table, records what it was asked."""

    def __init__(self, table: Optional[Dict[str, Dict[str, Any]]] = None, answer: Any = None, error: Optional[Exception] = None):
        self.asked: List[List[str]] = []
        self.table = table or {}
        self.answer = answer
        self.error = error

    def moderate(self, texts: List[str]) -> Any:
        self.asked.append(list(texts))
        if self.error is not None:
            raise self.error
        if self.answer is not None:
            return self.answer
        return [self.table.get(t, {"violence": 0.01}) for t in texts]


def test_score_arguments_asks_each_distinct_non_blank_string_once_in_argument_order() -> None:
    p = Recording({"bad": {"violence": 0.9, "x" * 129: 0.5, "hate": 2, "sexual": True, "harassment": -0.1}})
    out = score_arguments(p, {"ticket": "T-1", "reply": {"text": "bad", "to": "T-1"}, "tags": ["urgent", " ", "\ufeff", "", 3, None], "n": 2})
    assert p.asked == [["T-1", "bad", "urgent"]]
    assert out == {"scores": [{"field_path": "ticket", "scores": {"violence": 0.01}}, {"field_path": "reply.text", "scores": {"violence": 0.9}},
                              {"field_path": "reply.to", "scores": {"violence": 0.01}}, {"field_path": "tags.0", "scores": {"violence": 0.01}}]}
    assert score_arguments(p, {"a": " ", "b": [1, 2]}) == {"scores": []} and len(p.asked) == 1


def test_score_arguments_gives_why_instead_of_scores_when_there_are_none() -> None:
    assert score_arguments(None, {"a": "x"}) == {"error": "no moderation provider was given to Governor.connect (option moderation)"}
    assert score_arguments(Recording(error=ModerationError("down", 503)), {"a": "x"}) == {"error": "down"}
    assert score_arguments(Recording(answer=[]), {"a": "x"}) == {"error": "the moderation provider answered 0 result(s) for 1 text(s)"}
    assert score_arguments(Recording(answer="no"), {"a": "x"}) == {"error": "the moderation provider answered no result(s) for 1 text(s)"}
    assert score_arguments(Recording(answer=[None]), {"a": "x"}) == {"error": "the moderation provider answered null for a text, not a record of scores"}
    too_many = score_arguments(Recording(), {"a": [f"t{i}" for i in range(MAX_MODERATED_FIELDS + 1)]})
    assert too_many == {"error": "the arguments hold more strings than the moderation guardrail checks (at most 1000 fields, 1 MiB of text)"}


# ---- through the Governor -------------------------------------------------------------------------------------
def moderation_policy(moderation: Dict[str, Any], id_: str = "p-mod") -> Dict[str, Any]:
    return with_policy_defaults({"id": id_, "name": f"moderation {id_}", "enabled": True, "agent_ids": [], "created_at": "2026-01-01T00:00:00.000Z",
                                 "session_budget": None, "run_budget": None, "rate_limits": {}, "denied_actions": [], "approval_required_actions": [],
                                 "allowed_actions": None, "guardrails": {"moderation": moderation}})


def governor(tmp_path: Path, policies: List[Dict[str, Any]], **options: Any) -> Governor:
    """A governor with the platform unreachable and ``policies`` as its last loaded snapshot."""
    gov = Governor.connect("http://127.0.0.1:9", "agp_x", "bot", fail_mode="open", push=False, poll_interval=3600, spool_dir=str(tmp_path),
                           on_report_error=lambda m: None, **options)
    gov._snapshot.current = Snapshot(policies, NO_KILL_SWITCHES, now_ms())
    return gov


def test_block_mode_blocks_flagged_text_with_the_moderation_context_and_allows_benign_text(fake: FakeModeration, tmp_path: Path) -> None:
    gov = governor(tmp_path, [moderation_policy({"mode": "block", "threshold": 0.8, "categories": ["self-harm", "harassment"]})],
                   moderation=openai_moderation(base_url=fake.url, api_key="sk-test"))
    ran: List[Any] = []
    before = len(fake.requests)
    with gov.run(run_id="r-1") as run:
        with pytest.raises(ActionBlocked) as e:
            run.act("post_reply", {"ticket": "T-100", "reply": {"text": "I will hurt myself if you close this ticket", "to": "T-100"}, "tags": ["urgent", " "]},
                    ran.append, estimated_cost_usd=0.01)
        assert ran == []
        d = e.value.decision
        assert (d["decision"], d["intervention_type"], d["outcome"], d["rule"], d["policy_id"]) == ("content_blocked", "content_blocked", "blocked", "moderation_guardrail", "p-mod")
        ctx = d["context"]
        # self-harm covers self-harm/intent; violence 0.31 is below the threshold; harassment scores 0.001.
        assert [(m["category"], m["field_path"], m["score"]) for m in ctx["matches"]] == [("self-harm", "reply.text", 0.97), ("self-harm/intent", "reply.text", 0.93)]
        assert (ctx["guardrail_schema_version"], ctx["guardrail"], ctx["categories"], ctx["fields"]) == (1, "moderation", ["self-harm", "self-harm/intent"], ["reply.text"])
        assert "hurt myself" not in ctx["matches"][0]["matched_text"]
        assert fake.requests[before:] == [{"authorization": "Bearer sk-test", "body": {"model": "omni-moderation-latest", "input": ["T-100", "I will hurt myself if you close this ticket", "urgent"]}}]
        assert run.act("post_reply", {"reply": {"text": "Your parcel ships tomorrow."}}, lambda a: "sent") == "sent"
    gov.close(timeout=0)


def test_thresholds_and_categories_decide_what_is_flagged(fake: FakeModeration, tmp_path: Path) -> None:
    provider = openai_moderation(base_url=fake.url)
    threat = {"text": "I know where you live"}  # harassment 0.88, harassment/threatening 0.91, violence 0.62
    cases = [
        ({"threshold": 0.91, "categories": ["harassment"]}, "content_blocked", ["harassment/threatening"]),  # at the threshold
        ({"threshold": 0.911, "categories": ["harassment"]}, "allow", []),  # just above every score
        ({"threshold": 0.5, "categories": ["violence"]}, "content_blocked", ["violence"]),
        ({"threshold": 0.5, "categories": ["self-harm", "hate"]}, "allow", []),  # not a configured category
        ({"threshold": 0.6}, "content_blocked", ["harassment", "harassment/threatening", "violence"]),  # all categories
        ({"mode": "warn", "threshold": 0.6, "categories": ["violence/graphic", "violence"]}, "warn", ["violence"]),
    ]
    for i, (g, want, categories) in enumerate(cases):
        gov = governor(tmp_path / str(i), [moderation_policy(g)], moderation=provider, on_blocked="return")
        seen: List[Dict[str, Any]] = []
        gov._on_decision = lambda ev: seen.append(ev["decision"])
        with gov.run() as run:
            out = run.act("post_reply", threat, lambda a: "sent")
        d = seen[-1]
        assert d["decision"] == want, (g, d)
        if want == "content_blocked":
            assert out.blocked and out.decision["policy_id"] == "p-mod"
        else:
            assert out == "sent"
        assert (d.get("context") or {}).get("categories", []) == categories, g
        gov.close(timeout=0)


def test_a_failing_or_missing_provider_fails_closed_in_block_mode_and_warns_in_warn_mode(fake: FakeModeration, tmp_path: Path) -> None:
    failing = openai_moderation(base_url=fake.url, max_retries=1)
    gov = governor(tmp_path / "block", [moderation_policy({"threshold": 0.5})], moderation=failing)
    fake.fail({"status": 503, "retry_after": "0"}, {"status": 503, "retry_after": "0"})
    with gov.run() as run:
        with pytest.raises(ActionBlocked) as e:
            run.act("post_reply", {"text": "hello"}, lambda a: "sent")
        d = e.value.decision
        assert (d["decision"], d["intervention_type"], d["rule"], d["policy_id"]) == ("block", "hard_block", "moderation_guardrail", "p-mod")
        assert d["reason"].startswith("post_reply arguments could not be moderated (moderation request to ") and "failed after 2 attempt(s): HTTP 503" in d["reason"]
        assert d["reason"].endswith('; the moderation guardrail of policy "moderation p-mod" fails closed')
        assert run.act("post_reply", {"text": "hello"}, lambda a: "sent") == "sent"  # the provider answers again
    gov.close(timeout=0)

    missing = governor(tmp_path / "missing", [moderation_policy({"threshold": 0.5})])
    with missing.run() as run, pytest.raises(ActionBlocked, match="no moderation provider was given to Governor.connect"):
        run.act("post_reply", {"text": "hello"}, lambda a: "sent")
    missing.close(timeout=0)

    warning = governor(tmp_path / "warn", [moderation_policy({"mode": "warn", "threshold": 0.5})], moderation=failing)
    seen: List[Dict[str, Any]] = []
    warning._on_decision = lambda ev: seen.append(ev["decision"])
    fake.fail({"status": 500, "retry_after": "0"}, {"status": 500, "retry_after": "0"})
    with warning.run() as run:
        assert run.act("post_reply", {"text": "hello"}, lambda a: "sent") == "sent"
    assert (seen[0]["decision"], seen[0]["rule"]) == ("warn", "moderation_guardrail") and "HTTP 500" in seen[0]["reason"]
    warning.close(timeout=0)


def test_the_provider_is_not_asked_without_a_moderation_guardrail(tmp_path: Path) -> None:
    p = Recording()
    gov = governor(tmp_path, [with_policy_defaults({**moderation_policy({"threshold": 0.5}), "guardrails": {}})], moderation=p)
    with gov.run() as run:
        assert run.act("post_reply", {"text": "hello"}, lambda a: "sent") == "sent"
    assert p.asked == []
    gov.close(timeout=0)
    with pytest.raises(TypeError, match="moderation must have a moderate"):
        Governor.connect("http://127.0.0.1:9", "agp_x", "bot", moderation=object())


def test_aact_asks_the_provider_off_the_event_loop(fake: FakeModeration, tmp_path: Path) -> None:
    gov = governor(tmp_path, [moderation_policy({"threshold": 0.5})], moderation=openai_moderation(base_url=fake.url))

    async def main() -> Any:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        t = asyncio.create_task(ticker())
        fake.fail({"stall": 0.5})  # the provider's answer takes 0.5 s
        async with gov.run() as run:
            started = time.monotonic()
            out = await run.aact("post_reply", {"text": "hello"}, lambda a: "sent")
            took = time.monotonic() - started
        done.set()
        await t
        return out, ticks, took

    out, ticks, took = asyncio.run(main())
    assert out == "sent" and took >= 0.45
    assert ticks >= 15  # the loop ticked while the provider was waited on (a blocked loop would tick once)
    gov.close(timeout=0)
