"""``Governor``: the connection of one agent to the platform, and ``Run``: one run of the agent, whose ``act``
governs each action (``governor.ts`` and ``run.ts`` of the TypeScript SDK, with the same decisions, reports and ids).

``Governor.connect`` registers the agent, loads its governance snapshot (policies and kill switches,
:mod:`agp.snapshot`) and keeps it current through the push channel (:mod:`agp.channel`; ETag polling while it is
down), and opens the report spool (:mod:`agp.spool`) whose
reports the reporter (:mod:`agp.reporter`) delivers through ``POST /api/v1/ingest/``. ``run.act`` decides locally
with :func:`agp.engine.decide`, then runs the function, stops it, waits for a human, runs it with downgraded
arguments or replays a cached result, and reports what happened. Thread-safe: one lock around each decision and
the bookkeeping of the call it admits (microseconds); the function itself runs outside it.
Source: docs/sdk-python.md; docs/sdk.md (the TypeScript SDK it mirrors)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import threading
import time
import types
import uuid
import warnings
from collections import OrderedDict
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

from . import __version__
from .engine import arguments_hash
from .engine.decide import STOPPING_DECISIONS
from .errors import ActionBlocked, AgpHttpError, AgpNetworkError, ApprovalRejected, BlockedResult
from .http import Client
from .leases import Leases
from .moderation import ModerationProvider, score_arguments
from .channel import GovernanceChannel
from .reporter import Reporter
from .schema import ActionSchemas
from .snapshot import SnapshotSource
from .spool import FileSpool, MemorySpool
from ._decider import Decider, fail_closed
from ._reports import Reports
from ._util import copy_args, id_part, json_safe, nonce, now_ms

__all__ = ["Governor", "AsyncGovernor", "Run", "ActContext", "SDK_VERSION"]

#: This package's version, named in messages about answers of the platform it does not understand.
SDK_VERSION = __version__
#: Most results the idempotency guardrail keeps; past it the oldest is dropped.
RESULT_CACHE_MAX_ENTRIES = 10_000

_NO_POLICIES: List[Dict[str, Any]] = []

_current_run: contextvars.ContextVar[Optional["Run"]] = contextvars.ContextVar("agp_current_run", default=None)


def _warn(message: str) -> None:
    warnings.warn(f"[agp] {message}", RuntimeWarning, stacklevel=3)


def _nonneg(name: str, v: Any, unit: str) -> None:
    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0):
        raise TypeError(f"Governor.connect: {name} must be a number ≥ 0 ({unit}), got {v!r}")


class ActContext:
    """What the executed function may get besides its arguments (when it takes a second positional parameter):
    ``run_id``, ``session_id`` and :meth:`report_cost`. TypeScript: ``ActContext``."""

    __slots__ = ("run_id", "session_id", "actual")

    def __init__(self, run_id: str, session_id: Optional[str]):
        self.run_id = run_id
        self.session_id = session_id
        #: The actual cost the function reported (USD), if it did.
        self.actual: Optional[float] = None

    def report_cost(self, usd: float) -> None:
        """Report the action's actual cost in USD (e.g. what the provider billed); recorded as ``actual_cost_usd``.

        :raises TypeError: unless ``usd`` is a finite number ≥ 0.
        """
        if isinstance(usd, bool) or not isinstance(usd, (int, float)) or not usd == usd or usd < 0 or usd == float("inf"):
            raise TypeError(f"report_cost: the cost must be a finite number ≥ 0 (USD), got {usd!r}")
        self.actual = usd


class _Call:
    """One call of ``act``, as decided: what its reports need and its keys, each built once."""

    __slots__ = ("run_id", "name", "inputs", "estimated", "intent", "options", "ledger_id", "intervention_id", "hash", "idempotency_key", "started", "ctx", "args_used", "needs", "moderation")

    def __init__(self, run_id: str, id_: str, name: str, inputs: Dict[str, Any], estimated: float, options: Dict[str, Any], hash_: Optional[str],
                 moderation: Optional[Dict[str, Any]] = None):
        self.run_id = run_id
        self.name = name
        self.inputs = inputs
        self.estimated = estimated
        self.intent = options.get("intent")
        self.options = options
        self.ledger_id = f"{id_}.a"
        self.intervention_id = f"{id_}.i"
        self.hash = hash_
        self.idempotency_key = options.get("idempotency_key") or hash_
        self.started = 0.0
        self.ctx: Optional[ActContext] = None
        self.args_used: Dict[str, Any] = inputs
        #: What the call needs of each fleet-wide limit (:meth:`agp.leases.Leases.needs_of`), set when decided.
        self.needs: Tuple[Dict[str, Any], ...] = ()
        #: The moderation provider's scores of the arguments, or why there are none (:func:`agp.moderation.score_arguments`),
        #: when a moderation guardrail applies; None otherwise. Kept for the decision after an approval.
        self.moderation = moderation

    def arguments_hash(self) -> str:
        """SHA-256 hex of the call's canonical arguments (computed once, when first asked)."""
        if self.hash is None:
            self.hash = arguments_hash(self.inputs)
        return self.hash

    def cache_key(self) -> str:
        """The key its result is cached under: its idempotency key, else the arguments' hash."""
        return self.idempotency_key or self.arguments_hash()


class _Plan:
    """What ``act`` does after the decision: run the function with ``args`` (``kind`` run) or answer ``value``."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: Any = None):
        self.kind = kind
        self.value = value


def _takes_ctx(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` takes a second positional parameter (it then gets the :class:`ActContext`). A plain function is
    read from its code object (no ``inspect.signature`` on the allow path)."""
    if type(fn) is types.FunctionType:
        code = fn.__code__
        return code.co_argcount >= 2 or bool(code.co_flags & inspect.CO_VARARGS)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


class Run:
    """One run of the agent. Start with :meth:`Governor.run` (``with gov.run(...) as run:`` records ``run.start`` and
    ``run.end``, ``failed`` when the block raises). ``act`` governs each action. Spend (USD) and recent calls of the
    run feed budgets, rate limits and the loop guardrail; a session's spend is shared by the runs of one governor
    that name it. TypeScript: ``Run``."""

    def __init__(self, gov: "Governor", run_id: str, session_id: Optional[str]):
        self._gov = gov
        #: The run's id.
        self.run_id = run_id
        #: The session this run belongs to, or None.
        self.session_id = session_id
        #: USD spent (actual cost where reported, else the estimate) by actions of this run that executed.
        self.spend_usd = 0.0
        self._calls: List[Dict[str, Any]] = []
        self._seq = 0
        self._ended = False
        self._prefix = f"{id_part(run_id)}.{nonce()}"
        self._tokens: List[contextvars.Token] = []

    # ---- the context manager -------------------------------------------------------------------------------
    def __enter__(self) -> "Run":
        self._tokens.append(_current_run.set(self))
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._tokens:
            _current_run.reset(self._tokens.pop())
        if exc is None:
            self.end("completed")
        else:
            self.end("failed", error=f"{type(exc).__name__}: {exc}")

    async def __aenter__(self) -> "Run":
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.__exit__(exc_type, exc, tb)

    @property
    def session_spend_usd(self) -> float:
        """The session's spend (USD), or the run's when it has no session."""
        return self._gov._sessions.get(self.session_id, 0.0) if self.session_id else self.spend_usd

    def end(self, status: str = "completed", error: Optional[str] = None) -> None:
        """Record the end of the run (``run.end``): ``completed`` or ``failed``, with an optional error text. A second
        call does nothing.

        :raises TypeError: for another status. :raises RuntimeError: when the governor is closed.
        """
        if status not in ("completed", "failed"):
            raise TypeError(f"run.end: status must be 'completed' or 'failed', got {status!r}")
        if self._ended:
            return
        if self._gov._closed:
            raise RuntimeError("the governor is closed")
        self._ended = True
        self._gov._reports.run_ended(self.run_id, status, error)
        self._gov._leases.end_run(self.run_id)
        self._gov._open_runs.discard(self)

    # ---- act -----------------------------------------------------------------------------------------------
    def act(self, name: str, args: Dict[str, Any], fn: Callable[..., Any], *, estimated_cost_usd: Optional[float] = None, intent: Optional[str] = None,
            idempotency_key: Optional[str] = None, on_blocked: Optional[str] = None, approval_timeout: Optional[float] = None,
            on_escalated: Optional[Callable[[str, Dict[str, Any]], None]] = None) -> Any:
        """Govern one action: copy ``args`` (JSON data), decide locally, then

        - allow / warn: run ``fn(args)`` (``fn(args, ctx)`` when it takes two positional parameters; ``ctx`` is an
          :class:`ActContext`) and record the ledger entry (a warn also records a ``warning`` intervention);
        - block, budget_exceeded, rate_limited, loop_detected, pii_blocked, content_blocked: do not run; record the
          intervention; raise :class:`ActionBlocked` (or return a :class:`BlockedResult` with ``on_blocked="return"``);
        - escalate: record the intervention (which opens an approval) and wait for a human up to
          ``approval_timeout`` s, polling the approval; approved → decide again (kill switches and policies still
          apply), then run; rejected, expired, mismatched or timed out → :class:`ApprovalRejected`;
        - downgrade: run with the decision's ``modified_inputs`` and record the intervention;
        - idempotent_replay: return the first call's result without running, and record the intervention.

        Never waits on the network unless it escalates, the spool is full, a moderation guardrail applies (the
        governor's ``moderation`` provider scores the arguments' strings first; without one, or when it fails, the
        guardrail fails closed) or a fleet-wide limit needs a lease. ``estimated_cost_usd`` (USD ≥ 0) defaults
        to the action's registered ``typical_cost_usd``, else 0; ``idempotency_key`` to the arguments' hash;
        ``on_escalated(approval_id, decision)`` is called once the approval is recorded, before the wait.

        :raises TypeError: when ``args`` is not JSON data (naming the path), the name is not registered (when the
            governor was given ``actions``), or an option is malformed — before any decision.
        :raises ValueError: (:class:`agp.schema.ArgumentsInvalid`) when ``args`` fail the registered action's
            ``parameters`` schema, naming each bad field — before any decision, nothing recorded.
        :raises ActionBlocked: / :raises ApprovalRejected: as above. Whatever ``fn`` raises is raised again (the
            ledger entry is recorded with status ``error``).
        """
        if (fn.__code__.co_flags & inspect.CO_COROUTINE if type(fn) is types.FunctionType else inspect.iscoroutinefunction(fn)):
            raise TypeError(f"act {name}: fn is a coroutine function; use `await run.aact(...)`")
        c, plan = self._begin(name, args, fn, dict(estimated_cost_usd=estimated_cost_usd, intent=intent, idempotency_key=idempotency_key, on_blocked=on_blocked, approval_timeout=approval_timeout, on_escalated=on_escalated))
        if plan.kind == "value":
            return plan.value
        try:
            out = fn(c.args_used, c.ctx) if _takes_ctx(fn) else fn(c.args_used)
        except BaseException as err:
            self._gov._failed(self, c, err)
            raise
        return self._gov._succeeded(self, c, out)

    def _begin(self, name: str, args: Any, fn: Any, opts: Dict[str, Any]) -> Tuple[_Call, _Plan]:
        """Admit the call, then decide it and act on the decision up to running ``fn`` (may wait: approval, spool)."""
        c = self._gov._admit(self, name, args, fn, opts)
        return c, self._gov._plan(self, c)

    async def aact(self, name: str, args: Dict[str, Any], fn: Callable[..., Any], **options: Any) -> Any:
        """:meth:`act` for asyncio: the decision, the spool write and any wait for an approval or for room in the
        spool run in a worker thread (``asyncio.to_thread``), never on the event loop. ``fn`` may be a coroutine
        function (awaited on the loop) or a plain one (run in a worker thread). Same options, results and errors."""
        opts = {**{k: None for k in _ACT_OPTIONS}, **_check_options(name, options)}
        c, plan = await asyncio.to_thread(self._begin, name, args, fn, opts)
        if plan.kind == "value":
            return plan.value
        call_args = (c.args_used, c.ctx) if _takes_ctx(fn) else (c.args_used,)
        try:
            if inspect.iscoroutinefunction(fn):
                out = await fn(*call_args)
            else:
                out = await asyncio.to_thread(fn, *call_args)
                if inspect.isawaitable(out):
                    out = await out
        except BaseException as err:
            await asyncio.to_thread(self._gov._failed, self, c, err)
            raise
        return await asyncio.to_thread(self._gov._succeeded, self, c, out)


_ACT_OPTIONS = ("estimated_cost_usd", "intent", "idempotency_key", "on_blocked", "approval_timeout", "on_escalated")


def _check_options(name: str, options: Dict[str, Any]) -> Dict[str, Any]:
    unknown = [k for k in options if k not in _ACT_OPTIONS]
    if unknown:
        raise TypeError(f"act {name}: unknown option(s) {', '.join(unknown)}; allowed: {', '.join(_ACT_OPTIONS)}")
    return options


def _check_tool_options(where: str, on_blocked: Optional[str], on_escalated: Any) -> None:
    """The options of a decorated tool that can be checked when it is decorated (the others at each call)."""
    if on_blocked is not None and on_blocked not in ("raise", "return"):
        raise TypeError(f"{where}: on_blocked must be 'raise' or 'return', got {on_blocked!r}")
    if on_escalated is not None and not callable(on_escalated):
        raise TypeError(f"{where}: on_escalated must be callable (approval_id, decision), got {type(on_escalated).__name__}")


class Governor:
    """The connection of one agent to the platform. Create with :meth:`connect`; start runs with :meth:`run`;
    :meth:`close` delivers every report. Usable as a context manager (closes on exit). TypeScript: ``Governor``."""

    def __init__(self, *, url: str, key: str, agent_id: str, fail_mode: str, on_blocked: str, max_staleness: Optional[float], spool_dir: Optional[str],
                 max_spool_bytes: int, spool_stall: float, approval_timeout: float, approval_poll: float, poll_interval: float, flush_interval: float,
                 actions: Optional[List[Dict[str, Any]]], on_report_error: Optional[Callable[[str], None]], on_decision: Optional[Callable[[Dict[str, Any]], None]],
                 push: bool, channel_liveness: float, quota_wait: float = 2.0, moderation: Optional[ModerationProvider] = None):
        """Use :meth:`connect`."""
        self._moderation = moderation
        self.agent_id = agent_id
        self.url = url
        self.fail_mode = fail_mode
        self._on_blocked = on_blocked
        self._approval_timeout = approval_timeout
        self._approval_poll = approval_poll
        self._poll_interval = poll_interval
        self._spool_dir = spool_dir
        self._on_error = on_report_error or _warn
        self._on_decision = on_decision
        self._actions = {a["name"]: a for a in actions} if actions is not None else None
        #: The registered actions' argument schemas (compiled by :meth:`connect`), or None.
        self._schemas: Optional[ActionSchemas] = None
        self._client = Client(url, key, timeout=10.0, user_agent=f"agp-sdk-python/{SDK_VERSION}")
        spool = FileSpool(spool_dir, max_spool_bytes, self._on_error) if spool_dir else MemorySpool(max_spool_bytes)
        self._reporter = Reporter(self._client, spool, self._on_error, flush_interval=flush_interval, stall=spool_stall)
        self._reports = Reports(self._reporter, agent_id)
        self._snapshot = SnapshotSource(self._client, agent_id, SDK_VERSION)
        risk_of = {n: a["risk_level"] for n, a in (self._actions or {}).items() if a.get("risk_level")}
        self._decider = Decider(self._snapshot, agent_id, url, fail_mode, max_staleness, risk_of)
        self._lock = threading.RLock()
        self._quota_wait = quota_wait
        self._leases = Leases(self._client.lease_quotas, self._snapshot_policies, agent_id, f"sdk:{uuid.uuid4()}", self._lock, self._on_error)
        self._sessions: Dict[str, float] = {}
        self._results: "OrderedDict[Tuple[str, str], Tuple[Any, int, str, float]]" = OrderedDict()
        self._open_runs: set = set()
        self._closed = False
        self._registration_thread: Optional[threading.Thread] = None
        self._stop = threading.Event()
        #: Approval decisions heard on the push channel (the last 1000), and the waits they wake, by approval id.
        self._decided: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
        self._approval_waits: Dict[str, threading.Event] = {}
        self._channel = GovernanceChannel(self._snapshot, url.rstrip("/"), key, agent_id, channel_liveness, self._approval_decided, f"agp-sdk-python/{SDK_VERSION}") if push else None

    # ---- connect -------------------------------------------------------------------------------------------
    @classmethod
    def connect(cls, url: str, key: str, agent_id: str, *, fail_mode: str = "closed", on_blocked: str = "raise", max_staleness: Optional[float] = None,
                spool_dir: Optional[str] = None, max_spool_bytes: int = 64 * 1024 * 1024, spool_stall: float = 30.0, approval_timeout: float = 600.0,
                approval_poll: float = 1.0, poll_interval: float = 1.0, flush_interval: float = 0.1, actions: Optional[List[Dict[str, Any]]] = None,
                agent: Optional[Dict[str, Any]] = None, on_report_error: Optional[Callable[[str], None]] = None,
                on_decision: Optional[Callable[[Dict[str, Any]], None]] = None, push: bool = True, channel_liveness: float = 45.0,
                quota_wait: float = 2.0, moderation: Optional[ModerationProvider] = None) -> "Governor":
        """Connect an agent: open the spool (re-sending what an earlier process left unacknowledged), register the
        agent and load the governance snapshot (``GET /api/v1/agents/{agent_id}/governance``), both before it
        returns, then open the push channel (:mod:`agp.channel`; ``push=False`` leaves it closed) and poll the snapshot
        every ``poll_interval`` s while the channel is not live (a 304 when unchanged).

        Durations are in seconds, money in USD. ``fail_mode``: what ``act`` does while no snapshot was ever loaded
        (``closed`` blocks, ``open`` allows); ``max_staleness``: a snapshot older than this (s since the platform last
        confirmed it) counts as none, and ``act`` fails closed (None: no bound); ``on_blocked``: ``raise`` (default)
        or ``return`` (a :class:`BlockedResult`); ``spool_dir``: the durable spool (absent: memory only);
        ``max_spool_bytes``: bound of pending reports (at it a new ``act`` waits for acknowledgements, refused after
        ``spool_stall`` s with none); ``approval_timeout``/``approval_poll``: how long an escalated action waits, how
        often it reads its approval; ``actions``: action definitions as ``POST /api/v1/agents`` takes them
        (``{name, description, parameters, risk_level, typical_cost_usd}``): registered, and ``act`` then refuses
        unknown names; ``agent``: registry details (name, description, framework, owner, metadata);
        ``on_report_error(message)``: told when reports cannot be delivered or are refused (default: a warning);
        ``on_decision(event)``: called with ``{action_name, run_id, decision, approved}`` for each decision;
        ``channel_liveness``: a connected push channel silent this long (s) is reconnected; ``quota_wait``: how long
        (s) an action waits for a lease of a fleet-wide limit (a session, run or period budget, an agent- or
        organization-scoped rate limit) its governor does not hold, before it is decided with what is held;
        ``moderation``: the score provider of the moderation guardrail (an object with ``moderate(texts)``, e.g.
        :func:`agp.moderation.openai_moderation`), asked by ``act`` only while a policy that applies has a
        moderation guardrail; without one that guardrail fails closed (``block`` mode) or warns (``warn`` mode).

        An unreachable platform does not fail ``connect``: ``act`` then follows ``fail_mode`` until a snapshot loads.

        :raises TypeError: for a bad option (naming it and what it allows), or an action whose ``parameters`` is not
            a JSON Schema.
        :raises PermissionError: when the platform refuses the key (401/403).
        :raises RuntimeError: when another live process holds ``spool_dir``.
        """
        for k, v in (("url", url), ("key", key), ("agent_id", agent_id)):
            if not isinstance(v, str) or not v:
                raise TypeError(f"Governor.connect: {k} must be a non-empty string")
        if len(agent_id) > 256:
            raise TypeError("Governor.connect: agent_id must be at most 256 characters")
        if fail_mode not in ("closed", "open"):
            raise TypeError(f"Governor.connect: fail_mode must be 'closed' or 'open', got {fail_mode!r}")
        if on_blocked not in ("raise", "return"):
            raise TypeError(f"Governor.connect: on_blocked must be 'raise' or 'return', got {on_blocked!r}")
        for k, v, unit in (("max_staleness", max_staleness, "s"), ("max_spool_bytes", max_spool_bytes, "bytes"), ("spool_stall", spool_stall, "s"), ("approval_timeout", approval_timeout, "s"),
                           ("approval_poll", approval_poll, "s"), ("poll_interval", poll_interval, "s"), ("flush_interval", flush_interval, "s"),
                           ("channel_liveness", channel_liveness, "s"), ("quota_wait", quota_wait, "s")):
            _nonneg(k, v, unit)
        if poll_interval <= 0:
            raise TypeError(f"Governor.connect: poll_interval must be > 0 (s), got {poll_interval!r}")
        if moderation is not None and not callable(getattr(moderation, "moderate", None)):
            raise TypeError(f"Governor.connect: moderation must have a moderate(texts) method (e.g. agp.moderation.openai_moderation(...)), got {type(moderation).__name__}")
        if actions is not None:
            if not isinstance(actions, list) or not all(isinstance(a, dict) and isinstance(a.get("name"), str) and a["name"] for a in actions):
                raise TypeError("Governor.connect: actions must be a list of dicts, each with a non-empty str name")
        schemas = ActionSchemas(actions) if actions is not None else None
        gov = cls(url=url, key=key, agent_id=agent_id, fail_mode=fail_mode, on_blocked=on_blocked, max_staleness=max_staleness, spool_dir=spool_dir,
                  max_spool_bytes=int(max_spool_bytes), spool_stall=spool_stall, approval_timeout=approval_timeout, approval_poll=approval_poll,
                  poll_interval=poll_interval, flush_interval=flush_interval, actions=actions, on_report_error=on_report_error, on_decision=on_decision,
                  push=bool(push), channel_liveness=channel_liveness, quota_wait=quota_wait, moderation=moderation)
        gov._schemas = schemas
        body: Dict[str, Any] = {"agent_id": agent_id, **(agent or {})}
        if actions is not None:
            body["actions"] = actions
        reg = gov._register(body, actions is not None)
        gov._snapshot.refresh()
        status = gov._snapshot.last_status
        if status in (401, 403) or reg[0] == "refused":
            gov._shutdown()
            raise PermissionError(f"Governor.connect: the platform refused the key ({gov._snapshot.last_error if status in (401, 403) else reg[1]})")
        if reg[0] == "rejected":
            gov._on_error(f"the agent could not be registered: {reg[1]}")
        elif reg[0] == "unavailable":
            if actions is not None:
                gov._reports.send("agent.register", f"agent.{id_part(agent_id)}.{nonce()}", body)
            else:
                gov._retry_registration(body)
        gov._snapshot.start(poll_interval, gov._channel.should_poll if gov._channel else None)
        if gov._channel is not None:
            gov._channel.start()
        return gov

    def _register(self, body: Dict[str, Any], with_actions: bool) -> Tuple[str, str]:
        """Register the agent (an agent the registry knows is left as it is when no actions are given): ``done``,
        ``refused`` (401/403), ``rejected`` (another 4xx) or ``unavailable`` (network, 429, 5xx), with why."""
        try:
            if not with_actions:
                try:
                    self._client.get_agent(body["agent_id"])
                    return ("done", "")
                except AgpHttpError as err:
                    if err.status != 404:
                        raise
            self._client.register_agent(body)
            return ("done", "")
        except AgpNetworkError as err:
            return ("unavailable", str(err))
        except AgpHttpError as err:
            if err.status == 429 or err.status >= 500:
                return ("unavailable", str(err))
            return ("refused" if err.status in (401, 403) else "rejected", str(err))

    def _retry_registration(self, body: Dict[str, Any]) -> None:
        def loop() -> None:
            delay = 1.0
            while not self._stop.wait(delay):
                kind, why = self._register(body, False)
                if kind == "done":
                    return
                if kind != "unavailable":
                    self._on_error(f"the agent could not be registered: {why}")
                    return
                delay = min(30.0, delay * 2)

        self._registration_thread = threading.Thread(target=loop, name="agp-register", daemon=True)
        self._registration_thread.start()

    # ---- runs and tools ------------------------------------------------------------------------------------
    def run(self, run_id: Optional[str] = None, session_id: Optional[str] = None, name: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None) -> Run:
        """Start a run (records ``run.start``; the report is spooled and sent in the background). Use it as a
        context manager to record ``run.end`` (``failed`` with the error when the block raises), or call
        :meth:`Run.end`. ``run_id`` defaults to a random UUID; runs of one ``session_id`` share its budget.
        TypeScript: ``startRun``.

        :raises TypeError: for an id or name that is not a string of 1–256 characters. :raises RuntimeError: closed.
        """
        if self._closed:
            raise RuntimeError("the governor is closed")
        run_id = str(uuid.uuid4()) if run_id is None else run_id
        if not isinstance(run_id, str) or not run_id or len(run_id) > 256:
            raise TypeError("run: run_id must be a string of 1–256 characters")
        if session_id is not None and (not isinstance(session_id, str) or not session_id or len(session_id) > 256):
            raise TypeError("run: session_id must be a string of 1–256 characters")
        if name is not None and (not isinstance(name, str) or len(name) > 256):
            raise TypeError("run: name must be a string of at most 256 characters")
        r = Run(self, run_id, session_id)
        self._reports.run_started(run_id, session_id, name, metadata)
        self._open_runs.add(r)
        return r

    start_run = run

    def current_run(self) -> Run:
        """The run a decorated tool acts in: the innermost ``with gov.run(...)`` of this context (thread or task),
        else this governor's only open run.

        :raises RuntimeError: when there is none, or several open runs and none entered in this context.
        """
        r = _current_run.get()
        if r is not None and r._gov is self and not r._ended:
            return r
        runs = [x for x in list(self._open_runs) if not x._ended]
        if len(runs) == 1:
            return runs[0]
        raise RuntimeError(f"no current run of agent {self.agent_id}: call the tool inside `with gov.run(...)`" + (f" ({len(runs)} runs are open)" if runs else ""))

    def action(self, name: Optional[str] = None, *, estimated_cost_usd: Optional[float] = None, intent: Optional[str] = None, on_blocked: Optional[str] = None,
               on_escalated: Optional[Callable[[str, Dict[str, Any]], None]] = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: govern every call of a function (a framework's function tool) as action ``name`` (default the
        function's name) of the current run (:meth:`current_run`). The call's arguments, bound to the function's
        parameters, are the action's arguments (so a downgrade rewrites them by parameter name); the wrapper keeps
        the function's name, docstring and signature. A coroutine function gets an async wrapper (``aact``).
        ``estimated_cost_usd``, ``intent``, ``on_blocked`` and ``on_escalated`` are :meth:`Run.act`'s options, given
        to every call: ``on_escalated(approval_id, decision)`` is called once a call escalates and its approval is
        recorded, before the wait (not when the approval could not be recorded; what it raises is ignored).

        :raises TypeError: when an option is malformed (``on_escalated`` not callable, ``on_blocked`` not
            ``raise``/``return``)."""

        def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
            return self.wrap_tool(fn, name=name, estimated_cost_usd=estimated_cost_usd, intent=intent, on_blocked=on_blocked, on_escalated=on_escalated)

        _check_tool_options("action", on_blocked, on_escalated)
        return wrap

    def wrap_tool(self, fn: Callable[..., Any], name: Optional[str] = None, *, estimated_cost_usd: Optional[float] = None, intent: Optional[str] = None, on_blocked: Optional[str] = None,
                  on_escalated: Optional[Callable[[str, Dict[str, Any]], None]] = None) -> Callable[..., Any]:
        """``fn`` governed as action ``name`` (see :meth:`action`, which takes the same options).

        :raises TypeError: when ``fn`` is not callable or an option is malformed.
        """
        if not callable(fn):
            raise TypeError(f"wrap_tool: fn must be callable, got {type(fn).__name__}")
        _check_tool_options("wrap_tool", on_blocked, on_escalated)
        action_name = name or getattr(fn, "__name__", None) or "tool"
        sig = inspect.signature(fn)
        var_pos = next((p.name for p in sig.parameters.values() if p.kind == p.VAR_POSITIONAL), None)
        var_kw = next((p.name for p in sig.parameters.values() if p.kind == p.VAR_KEYWORD), None)
        opts = {"estimated_cost_usd": estimated_cost_usd, "intent": intent, "on_blocked": on_blocked, "on_escalated": on_escalated}

        def to_args(a: Tuple[Any, ...], kw: Dict[str, Any]) -> Dict[str, Any]:
            bound = sig.bind(*a, **kw)
            out = dict(bound.arguments)
            if var_kw is not None and var_kw in out:
                out.update(out.pop(var_kw))
            return out

        def call(args: Dict[str, Any]) -> Any:
            # The (possibly downgraded) arguments back into a call: positional-only parameters, and the others
            # before a *args, by position; the rest by keyword.
            kw = dict(args)
            pos: List[Any] = []
            for p in sig.parameters.values():
                if p.kind == p.VAR_POSITIONAL:
                    pos.extend(kw.pop(p.name, []))
                elif p.name in kw and (p.kind == p.POSITIONAL_ONLY or (p.kind == p.POSITIONAL_OR_KEYWORD and var_pos is not None)):
                    pos.append(kw.pop(p.name))
            return fn(*pos, **kw)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def agoverned(*a: Any, **kw: Any) -> Any:
                return await self.current_run().aact(action_name, to_args(a, kw), call, **opts)

            return agoverned

        @functools.wraps(fn)
        def governed(*a: Any, **kw: Any) -> Any:
            return self.current_run().act(action_name, to_args(a, kw), call, **opts)

        return governed

    # ---- approvals, status, close --------------------------------------------------------------------------
    def decide_approval(self, approval_id: str, verdict: str, approver_email: str, notes: Optional[str] = None) -> Dict[str, Any]:
        """Decide a pending approval with this governor's key (``POST /api/v1/approvals/{id}/approve`` or
        ``/reject``): e.g. one the agent's user answered in its own interface. Returns the decided approval.

        :raises TypeError: for a verdict other than approve/reject. :raises AgpHttpError: 404, 409, 422, 403.
        """
        if verdict not in ("approve", "reject"):
            raise TypeError(f"decide_approval: verdict must be 'approve' or 'reject', got {verdict!r}")
        body: Dict[str, Any] = {"approver_email": approver_email}
        if notes is not None:
            body["notes"] = notes
        return self._client.decide_approval(approval_id, verdict, body)

    def denied_by_name(self, action: str) -> bool:
        """Whether a policy of the snapshot stops ``action`` by its name alone (denied, or missing from an allow list)."""
        cur = self._snapshot.current
        return any(p["enabled"] and (action in p["denied_actions"] or (p.get("allowed_actions") is not None and action not in p["allowed_actions"])) for p in (cur.policies if cur else []))

    def refresh(self) -> None:
        """Load the governance snapshot now (the poller does it every ``poll_interval`` s). Never raises."""
        self._snapshot.refresh()

    def status(self) -> Dict[str, Any]:
        """Snapshot age, fail-mode state and reporting counters: ``snapshot_loaded``, ``staleness_s`` (None when no
        snapshot), ``failing_closed``, ``fail_mode``, ``last_error``, ``channel`` (``state``: connecting, connected,
        reconnecting, polling, closed or off; ``last_error``, ``connects``, ``drops``, ``loads``), ``policies``, ``reports`` (pending, delivered, rejected, recovered,
        waited, last_error), ``spool`` (durable, dir, pending_bytes, full, quarantined), ``refused_spool_full``,
        ``leases`` (one row per lease of a fleet-wide limit held: policy_id, limit, scope_key, held and spent in USD or
        calls, expires_at), ``schemas`` (which validator checks arguments against the registered actions' schemas:
        ``jsonschema`` or ``builtin``; None without ``actions``)."""
        age = self._snapshot.age_ms()
        spool = self._reporter.spool
        cur = self._snapshot.current
        return {
            "snapshot_loaded": age is not None,
            "staleness_s": None if age is None else age / 1000,
            "failing_closed": self._decider.gate_reason() is not None,
            "fail_mode": self.fail_mode,
            "last_error": self._snapshot.last_error,
            "channel": self._channel_status(),
            "policies": len(cur.policies) if cur else 0,
            "reports": self._reporter.stats(),
            "spool": {"durable": spool.durable, "dir": self._spool_dir, "pending_bytes": spool.pending_bytes(), "full": spool.full(), "quarantined": getattr(spool, "quarantined", None)},
            "refused_spool_full": self._reports.refused_spool_full,
            "leases": self._leases.status(),
            "schemas": self._schemas.engine if self._schemas is not None else None,
        }

    def _channel_status(self) -> Dict[str, Any]:
        ch = self._channel
        base = {"state": "off" if ch is None else ch.state, "last_error": None if ch is None else ch.last_error, "loads": dict(self._snapshot.loads)}
        return {**base, **({"connects": 0, "drops": 0} if ch is None else ch.counts)}

    def close(self, timeout: float = 30.0) -> Dict[str, int]:
        """Stop polling and deliver every pending report (waiting up to ``timeout`` s), then close the spool. Returns
        ``{"delivered", "pending"}``. Reports still pending stay in a durable spool (the next connect with the same
        ``spool_dir`` sends them). A second call returns the counts.

        :raises RuntimeError: in memory-only mode when reports could not be delivered in time (they are lost).
        """
        if self._closed:
            s = self._reporter.stats()
            return {"delivered": s["delivered"], "pending": s["pending"]}
        if self._channel is not None:
            self._channel.stop()
        self._snapshot.stop()
        t0 = time.monotonic()
        self._leases.close(timeout)
        pending = self._reporter.drain(max(0.0, timeout - (time.monotonic() - t0)))
        self._shutdown()
        s = self._reporter.stats()
        if pending > 0 and not self._reporter.spool.durable:
            raise RuntimeError(f"Governor.close: {pending} report(s) were not delivered ({s['last_error']}) and are lost: no spool_dir was given")
        if pending > 0:
            self._on_error(f"{pending} report(s) stay in the spool {self._spool_dir} until the next connect")
        return {"delivered": s["delivered"], "pending": pending}

    def __enter__(self) -> "Governor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _snapshot_policies(self) -> List[Dict[str, Any]]:
        """The snapshot's policies (the same list until the snapshot changes), for the leases."""
        cur = self._snapshot.current
        return cur.policies if cur else _NO_POLICIES

    def _shutdown(self) -> None:
        self._closed = True
        self._leases.close(0)
        self._stop.set()
        if self._channel is not None:
            self._channel.stop()
        self._snapshot.stop()
        for ev in list(self._approval_waits.values()):
            ev.set()
        self._reporter.stop()
        self._reporter.spool.close()

    # ---- the steps of act (called by Run) ------------------------------------------------------------------
    def _admit(self, run: Run, name: str, args: Any, fn: Any, o: Dict[str, Any]) -> _Call:
        """Check the call and its options, copy the arguments, wait for room in the spool; the call, numbered."""
        if run._ended:
            raise RuntimeError(f"run {run.run_id} has ended")
        if self._closed:
            raise RuntimeError("the governor is closed")
        if not isinstance(name, str) or not name or len(name) > 256:
            raise TypeError("act: the action name must be a string of 1–256 characters")
        if not callable(fn):
            raise TypeError(f"act {name}: fn must be callable")
        est = o.get("estimated_cost_usd")
        if est is not None and (isinstance(est, bool) or not isinstance(est, (int, float)) or not est == est or est < 0 or est == float("inf")):
            raise TypeError(f"act {name}: estimated_cost_usd must be a finite number ≥ 0 (USD), got {est!r}")
        if o.get("on_blocked") is not None and o["on_blocked"] not in ("raise", "return"):
            raise TypeError(f"act {name}: on_blocked must be 'raise' or 'return', got {o['on_blocked']!r}")
        key = o.get("idempotency_key")
        if key is not None and (not isinstance(key, str) or not key):
            raise TypeError(f"act {name}: idempotency_key must be a non-empty string")
        if o.get("on_escalated") is not None and not callable(o["on_escalated"]):
            raise TypeError(f"act {name}: on_escalated must be callable (approval_id, decision)")
        if o.get("intent") is not None and not isinstance(o["intent"], str):
            raise TypeError(f"act {name}: intent must be a string")
        if self._actions is not None and name not in self._actions:
            raise TypeError(f"act {name}: unknown action; registered: {', '.join(sorted(self._actions)) or '(none)'}")
        inputs = copy_args(name, args)
        if self._schemas is not None:
            self._schemas.check(name, inputs)
        if est is None:
            est = (self._actions or {}).get(name, {}).get("typical_cost_usd") or 0
        if self._reporter.must_wait():
            refused = self._reporter.when_room()
            if refused is not None:
                self._reports.refused_spool_full += 1
                o["_refused"] = refused
        with self._lock:
            run._seq += 1
            seq = run._seq
        h = arguments_hash(inputs) if self._decider.facts()["needs_args_hash"] else None
        # The one network wait before a decision: the moderation provider, only while a moderation guardrail applies.
        moderated = score_arguments(self._moderation, inputs) if self._decider.moderates() and not o.get("_refused") else None
        return _Call(run.run_id, f"{run._prefix}.{seq}", name, inputs, est, o, h, moderated)

    def _plan(self, run: Run, c: _Call) -> _Plan:
        """Decide call ``c`` and act on the decision up to running the function (see :meth:`Run.act`)."""
        if c.options.get("_refused"):
            return self._blocked(c, fail_closed(c.options["_refused"], c.estimated, "high"))
        return self._decide_dispatch(run, c, False)

    def _decide_dispatch(self, run: Run, c: _Call, approved: bool) -> _Plan:
        """Decide call ``c`` and act on it. Fleet-wide limits: decided locally while the leases hold the call's needs;
        else it waits (up to ``quota_wait`` s, outside the lock) for a grant first. The last check, the decision and
        the consumption of the needs run under one lock: two threads never both spend the last unit."""
        leases = self._leases
        c.needs = leases.needs_of(c.name, c.estimated, run.run_id, run.session_id)
        deadline = time.monotonic() + self._quota_wait
        waiting = bool(c.needs)
        while True:
            with self._lock:
                if not waiting or leases.covered(c.needs):
                    out = self._decide_locked(run, c, approved)
                    break
            waiting = leases.ensure(c.needs, deadline - time.monotonic())
        # An escalation waits for a human outside the lock.
        return out if isinstance(out, _Plan) else self._escalate(run, c, out)

    def _decide_locked(self, run: Run, c: _Call, approved: bool) -> Any:
        """The decision of :meth:`_decide_dispatch` (call under the lock): the plan, or the escalate decision to wait on."""
        leases = self._leases
        key = c.idempotency_key
        cached = self._cached(c.name, key) if key is not None else None
        quota = leases.view(c.needs) if c.needs else None
        unavailable = leases.unavailable(c.needs) if c.needs else None
        d = self._decider.decide(c.name, c.inputs, c.estimated, c.options.get("idempotency_key"), key, cached[1] if cached else None,
                                 run.spend_usd, run.session_spend_usd, run._calls, quota, unavailable, c.moderation)
        if self._on_decision is not None:
            try:
                self._on_decision({"action_name": c.name, "run_id": run.run_id, "decision": d, "approved": approved})
            except Exception as err:
                self._on_error(f"on_decision raised: {type(err).__name__}: {err}")
        if d["decision"] != "escalate" or approved:
            return self._dispatch(run, c, d)
        return d

    def _dispatch(self, run: Run, c: _Call, d: Dict[str, Any]) -> _Plan:
        kind = d["decision"]
        if kind in ("allow", "escalate"):
            return self._start(run, c, c.inputs)
        if kind == "warn":
            self._reports.intervention(c, d, None)
            return self._start(run, c, d.get("modified_inputs") or c.inputs)
        if kind == "downgrade":
            modified = d.get("modified_inputs") or c.inputs
            self._reports.intervention(c, d, modified)
            return self._start(run, c, modified)
        if kind == "idempotent_replay":
            cached = self._cached(c.name, c.cache_key())
            if cached is None:
                return self._start(run, c, c.inputs)
            self._reports.intervention(c, d, None)
            return _Plan("value", cached[0])
        if kind in STOPPING_DECISIONS:
            self._reports.intervention(c, d, None)
            self._reports.ledger(c, c.inputs, "blocked")
            return self._blocked(c, d)
        if d.get("outcome") in ("warned", "modified"):
            self._reports.intervention(c, d, d.get("modified_inputs"))
            return self._start(run, c, d.get("modified_inputs") or c.inputs)
        closed = {**d, **fail_closed(f"unknown decision \"{kind}\" (this SDK {SDK_VERSION} fails closed): {d['reason']}", c.estimated, d["risk_level"])}
        self._reports.intervention(c, closed, None)
        self._reports.ledger(c, c.inputs, "blocked")
        return self._blocked(c, closed)

    def _blocked(self, c: _Call, d: Dict[str, Any]) -> _Plan:
        if (c.options.get("on_blocked") or self._on_blocked) == "return":
            return _Plan("value", BlockedResult(d))
        raise ActionBlocked(c.name, d)

    def _start(self, run: Run, c: _Call, args: Dict[str, Any]) -> _Plan:
        """The call runs: it counts for rate limits and spend from its start (under the decision's lock)."""
        at = now_ms()
        run._calls.append({"action_name": c.name, "at": at, "arguments_hash": c.hash} if c.hash else {"action_name": c.name, "at": at})
        self._prune(run, at)
        self._add_spend(run, c.estimated)
        if c.needs:
            self._leases.consume(c.needs)
        c.args_used = args
        c.ctx = ActContext(run.run_id, run.session_id)
        c.started = time.perf_counter()
        return _Plan("run")

    def _prune(self, run: Run, now: int) -> None:
        cutoff = now - max(60_000, self._decider.facts()["longest_window_ms"])
        calls = run._calls
        i = 0
        while i < len(calls) and calls[i]["at"] <= cutoff:
            i += 1
        if len(calls) - i > 20_000:
            i = len(calls) - 10_000
        if i > 256 or (i > 0 and i * 2 > len(calls)):
            del calls[:i]

    def _add_spend(self, run: Run, usd: float) -> None:
        if not usd:
            return
        run.spend_usd += usd
        if run.session_id:
            self._sessions[run.session_id] = self._sessions.get(run.session_id, 0.0) + usd

    def _settle(self, run: Run, c: _Call) -> None:
        actual = c.ctx.actual if c.ctx else None
        if actual is not None:
            with self._lock:
                self._add_spend(run, actual - c.estimated)
                if c.needs:
                    self._leases.settle(c.needs, actual - c.estimated)

    def _failed(self, run: Run, c: _Call, err: BaseException) -> None:
        self._settle(run, c)
        self._reports.ledger(c, c.args_used, "error", duration_ms=(time.perf_counter() - c.started) * 1000, actual=c.ctx.actual if c.ctx else None, error=f"{type(err).__name__}: {err}")

    def _succeeded(self, run: Run, c: _Call, out: Any) -> Any:
        self._settle(run, c)
        review = self._decider.review_result(c.name, out, c.estimated)
        if review is not None:
            # The PII guardrail on the result: recorded as its own intervention (id ``<call>.ir``, so that a warning or
            # downgrade of the arguments keeps its record); the ledger keeps what the agent may see.
            d, masked = review
            self._reports.intervention(c, d, None, f"{c.intervention_id}r")
            if d["decision"] == "pii_blocked":
                self._reports.ledger(c, c.args_used, "success", duration_ms=(time.perf_counter() - c.started) * 1000, actual=c.ctx.actual if c.ctx else None)
                return self._blocked(c, d).value
            out = masked
        ref = self._reports.ledger(c, c.args_used, "success", duration_ms=(time.perf_counter() - c.started) * 1000, actual=c.ctx.actual if c.ctx else None, outputs=json_safe(out), has_outputs=True)
        ttl = self._decider.idempotency_ttl_ms(c.name)
        if ttl is not None:
            with self._lock:
                self._results[(c.name, c.cache_key())] = (out, now_ms(), ref, now_ms() + ttl)
                self._results.move_to_end((c.name, c.cache_key()))
                while len(self._results) > RESULT_CACHE_MAX_ENTRIES:
                    self._results.popitem(last=False)
        return out

    def _cached(self, name: str, key: str) -> Optional[Tuple[Any, int, str, float]]:
        e = self._results.get((name, key))
        return e if e is not None and e[3] > now_ms() else None

    # ---- escalation ----------------------------------------------------------------------------------------
    def _escalate(self, run: Run, c: _Call, d: Dict[str, Any]) -> _Plan:
        """Record the escalated intervention synchronously (``POST /api/v1/interventions``; its id names the approval,
        ``apr-<id>``), then read the approval every ``approval_poll`` s (at most every 5 s after the first minute)
        until it is decided or the timeout passes. Approved with this call's arguments → decided again, then run."""
        timeout = c.options.get("approval_timeout")
        deadline = time.monotonic() + (self._approval_timeout if timeout is None else timeout)
        h = c.arguments_hash()
        body = {**self._reports.intervention_body(c, d, None), "description": f"{c.name} awaits approval; arguments sha256 {h}"}
        approval_id: Optional[str] = None
        while time.monotonic() < deadline and not self._closed:
            try:
                rec = self._client.create_intervention(body)
                approval_id = f"apr-{rec['id']}"
                break
            except AgpNetworkError:
                pass
            except AgpHttpError as err:
                if not (err.status == 429 or err.status >= 500):
                    raise
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        if approval_id is not None and c.options.get("on_escalated"):
            try:
                c.options["on_escalated"](approval_id, d)
            except Exception:
                pass  # the caller's hook: its failure does not change the call
        status, record = ("timeout", None) if approval_id is None else self._await_approval(approval_id, h, deadline)
        if status == "approved":
            # The push channel keeps the snapshot current while it is live; else refresh it (a 304 when unchanged).
            if self._snapshot.age_ms() != 0:
                self._snapshot.refresh()
            return self._decide_dispatch(run, c, True)
        self._reports.ledger(c, c.inputs, "blocked")
        a = record or {}
        reason = f"approval {approval_id or '(not recorded)'} {status}" + (f" by {a['approver_email']}" if a.get("approver_email") else "") + (f": {a['notes']}" if a.get("notes") else "")
        decision = {**d, "reason": reason, "cost_prevented_usd": c.estimated}
        if (c.options.get("on_blocked") or self._on_blocked) == "return":
            return _Plan("value", BlockedResult(decision))
        raise ApprovalRejected(c.name, status, approval_id, decision, a.get("approver_email"), a.get("notes"))

    def _approval_decided(self, a: Dict[str, Any]) -> None:
        """An ``approval.decided`` event of the push channel: remember it and wake its escalation."""
        with self._lock:
            self._decided[a["approval_id"]] = a
            while len(self._decided) > 1000:
                self._decided.popitem(last=False)
            ev = self._approval_waits.get(a["approval_id"])
        if ev is not None:
            ev.set()

    def _await_approval(self, approval_id: str, h: str, deadline: float) -> Tuple[str, Optional[Dict[str, Any]]]:
        """Wait until approval ``approval_id`` is decided or ``deadline`` (monotonic s) passes: woken by the push
        channel's ``approval.decided``, and reading the approval every ``approval_poll`` s as the fallback. An approval
        whose ``original_inputs`` do not hash to ``h`` ends as ``mismatch``."""
        started = time.monotonic()
        woken = threading.Event()
        with self._lock:
            self._approval_waits[approval_id] = woken
        heard_at: Optional[float] = None
        try:
            while time.monotonic() < deadline and not self._closed:
                a = None
                try:
                    a = self._client.get_approval(approval_id)
                except AgpNetworkError:
                    pass
                except AgpHttpError as err:
                    # 404 until the escalation is projected; 429/5xx while the platform is busy or away: keep waiting.
                    if not (err.status in (404, 429) or err.status >= 500):
                        raise
                if a is not None and a.get("status") == "approved":
                    if not isinstance(a.get("original_inputs"), dict) or arguments_hash(a["original_inputs"]) != h:
                        return ("mismatch", a)
                    return ("approved", a)
                if a is not None and a.get("status") in ("rejected", "expired"):
                    return (a["status"], a)
                left = max(0.0, deadline - time.monotonic())
                if heard_at is None and approval_id in self._decided:
                    heard_at = time.monotonic()
                if heard_at is not None:
                    # The channel said it is decided but the approval does not show it yet (read model catching up).
                    self._stop.wait(min(0.05 if time.monotonic() - heard_at < 5 else self._approval_poll, left))
                    continue
                interval = self._approval_poll if time.monotonic() - started < 60 else max(self._approval_poll, 5.0)
                woken.wait(min(interval, left))
            return ("timeout", None)
        finally:
            with self._lock:
                self._approval_waits.pop(approval_id, None)


class AsyncGovernor:
    """:class:`Governor` for asyncio: ``await AsyncGovernor.connect(...)``, ``await gov.close()``; the blocking parts
    (connect's requests, close's delivery) run in a worker thread. Runs are the same :class:`Run` (use ``aact``);
    ``gov.sync`` is the underlying :class:`Governor`."""

    def __init__(self, sync: Governor):
        self.sync = sync

    @classmethod
    async def connect(cls, url: str, key: str, agent_id: str, **options: Any) -> "AsyncGovernor":
        """:meth:`Governor.connect` in a worker thread (same options and errors)."""
        return cls(await asyncio.to_thread(functools.partial(Governor.connect, url, key, agent_id, **options)))

    def run(self, run_id: Optional[str] = None, session_id: Optional[str] = None, name: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None) -> Run:
        """:meth:`Governor.run` (use ``async with gov.run(...) as run:`` and ``await run.aact(...)``)."""
        return self.sync.run(run_id=run_id, session_id=session_id, name=name, metadata=metadata)

    def action(self, name: Optional[str] = None, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """:meth:`Governor.action`."""
        return self.sync.action(name, **options)

    def wrap_tool(self, fn: Callable[..., Any], name: Optional[str] = None, **options: Any) -> Callable[..., Any]:
        """:meth:`Governor.wrap_tool`."""
        return self.sync.wrap_tool(fn, name, **options)

    def status(self) -> Dict[str, Any]:
        """:meth:`Governor.status` (no I/O)."""
        return self.sync.status()

    async def decide_approval(self, approval_id: str, verdict: str, approver_email: str, notes: Optional[str] = None) -> Dict[str, Any]:
        """:meth:`Governor.decide_approval` in a worker thread."""
        return await asyncio.to_thread(self.sync.decide_approval, approval_id, verdict, approver_email, notes)

    async def close(self, timeout: float = 30.0) -> Dict[str, int]:
        """:meth:`Governor.close` in a worker thread."""
        return await asyncio.to_thread(self.sync.close, timeout)

    async def __aenter__(self) -> "AsyncGovernor":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
