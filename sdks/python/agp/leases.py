"""``Leases``: the governor's leases of fleet-wide limits (session, run and period budgets; rate limits of scope
``agent`` or ``organization``), the same protocol as ``leases.ts`` of the TypeScript SDK. The platform keeps one
counter per policy, limit, scope key and window; the governor holds one lease per counter it decides against, a slice
of what the limit has left, and admits actions against it locally:

- :meth:`Leases.needs_of`: what an action needs of each fleet-wide limit (the engine's
  :func:`agp.engine.quotas.quota_needs`, with its counter); an empty tuple while no policy has such a limit;
- :meth:`Leases.covered` / :meth:`Leases.ensure`: whether the leases hold enough, and asking for the rest (one
  batched ``POST /api/v1/quotas/leases`` for every missing need of every waiting action);
- :meth:`Leases.view`: what each lease has left (the engine's ``quota``); :meth:`Leases.unavailable`: why a need could
  not be leased (the platform unreachable), for the fail mode;
- :meth:`Leases.consume` (under the governor's lock, right after the decision that runs the action) and
  :meth:`Leases.settle` (the actual cost);
- off the allow path, a daemon thread (every 0.25 s while anything is held) reports what was spent (cumulative, with
  an increasing ``seq``), tops up a lease under 25 % of its last slice, renews one within 1/3 of its TTL of expiry
  while it was used in the last TTL, and releases one unused for 2 × TTL or whose policy limit changed; a lease that
  lapsed with spend not acknowledged owes one late report (with ``release``) on its id;
- :meth:`Leases.close` releases every lease (what was not spent returns to the limit at once).

State is guarded by the governor's lock (shared, re-entrant), so a check, the decision and the consumption that
follows it are atomic; requests run outside it. Internal. Source: docs/sdk.md (Fleet-wide limits); docs/sdk-python.md.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .engine.quotas import has_fleet_limit, quota_limit_of, quota_needs, quota_window
from .errors import AgpHttpError
from ._util import iso_time

#: Slack when comparing USD amounts (the engine's tolerance).
TOLERANCE = 1e-9
#: A lease is treated as lapsed this long before its expiry (ms; at most a tenth of its TTL).
EXPIRY_MARGIN_MS = 250
#: Lapsed lease ids kept to refuse an answer that names one again.
LAPSED_KEPT = 1024
#: After a failed request, how long needs not covered are answered as unavailable without asking again (ms).
RETRY_AFTER_MS = 1000
#: Most items of one kind in one request.
MAX_ITEMS = 100
#: The lease TTL assumed until the platform answers (ms).
DEFAULT_TTL_MS = 15_000
NEEDS_CACHE_SIZE = 1024
_NO_NEEDS: Tuple[Dict[str, Any], ...] = ()


def _now() -> float:
    return time.time() * 1000


def _parse_iso(s: str) -> float:
    """ms since the epoch of an ISO 8601 UTC time (``2026-01-01T00:00:00.000Z``)."""
    import datetime

    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000


class _Counter:
    """The local state of one counter: its lease (when one is held) and what this process spent of it."""

    def __init__(self, n: Mapping[str, Any], agent_id: str, now: float):
        self.key: str = n["key"]
        self.policy_id: str = n["policy_id"]
        self.limit: str = n["limit"]
        self.unit: str = n["unit"]
        self.scope: str = n["scope"]
        self.scope_key: str = n["scope_key"]
        self.platform_scope_key: Optional[str] = None
        self.ids: Dict[str, str] = {"agent_id": agent_id}
        if n["scope"] == "run":
            self.ids["run_id"] = n["scope_key"]
        if n["scope"] == "session":
            self.ids["session_id"] = n["scope_key"]
        self.limit_value: float = n["limit_value"]
        self.window_end: Optional[float] = n["window_end"]
        self.lease_id: Optional[str] = None
        self.held = 0.0
        self.spent = 0.0
        self.reported = 0.0
        self.last_slice = 0.0
        self.last_need: float = n["need"]
        self.expires_at = 0.0
        self.ttl_ms = float(DEFAULT_TTL_MS)
        self.last_used = now
        self.used = False
        self.flight = 0
        self.error: Optional[str] = None
        self.exhausted_ask: Optional[float] = None
        self.answered_at = 0.0


class Leases:
    """See the module docs. ``request(body)`` sends ``POST /api/v1/quotas/leases`` and returns the answer (raising
    :class:`AgpHttpError` / ``AgpNetworkError``); ``policies()`` the snapshot's policies (a new list when the
    snapshot changes); ``lock`` the governor's re-entrant lock; ``on_error(message)`` is told of failures to reach the
    platform (once per distinct error); ``interval`` (s) how often the thread reports, tops up, renews and releases."""

    def __init__(self, request: Callable[[Dict[str, Any]], Dict[str, Any]], policies: Callable[[], Sequence[Mapping[str, Any]]], agent_id: str, holder: str,
                 lock: "threading.RLock", on_error: Callable[[str], None], interval: float = 0.25):
        self._request = request
        self._policies = policies
        self.agent_id = agent_id
        self.holder = holder
        self._lock = lock
        self._on_error = on_error
        self._interval = interval
        self._counters: Dict[str, _Counter] = {}
        self._ending: Dict[int, _Counter] = {}
        self._owed: List[Tuple[str, int, float]] = []
        self._seq = 0
        self._lapsed: "OrderedDict[str, None]" = OrderedDict()
        self._asks: Dict[int, Tuple[_Counter, float]] = {}
        self._ignored: set = set()
        self._synced_of: Any = None
        self._by_id: Dict[str, Mapping[str, Any]] = {}
        self._fleet = False
        self._needs_cache: Dict[Tuple[str, float, str, str], Tuple[Tuple[Dict[str, Any], ...], float]] = {}
        self._flights_started = 0
        self._flights_done = 0
        self._done = threading.Condition(threading.Lock())
        self._wake = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._last_error: Optional[str] = None
        self._down_until = 0.0
        self._closed = False
        #: An action waits for the next flight (it is sent even while the platform was just found unreachable).
        self._urgent = False

    # ---- the allow path (under the governor's lock) --------------------------------------------------------
    def needs_of(self, action: str, cost_usd: float, run_id: str, session_id: Optional[str]) -> Tuple[Dict[str, Any], ...]:
        """What action ``action`` with estimated cost ``cost_usd`` (USD) of run ``run_id`` (in session ``session_id``)
        needs of each fleet-wide limit, in the engine's order: dicts of ``quota_needs`` plus ``policy_name``,
        ``scope_key``, ``window_start``/``window_end`` (ms; 0/None for run and session budgets), ``pair`` and ``key``
        (the counter's key here). An empty tuple while no policy has such a limit; cached until a window ends."""
        with self._lock:  # one snapshot at a time: a thread holding an older list never syncs back to it
            policies = self._policies()
            if policies is not self._synced_of:
                self._sync(policies)
            if not self._fleet or self._closed:
                return _NO_NEEDS
            now = _now()
            ck = (action, cost_usd, run_id, session_id or "")
            cached = self._needs_cache.get(ck)
            if cached is not None and now < cached[1]:
                return cached[0]
            needs = self._compute(policies, action, cost_usd, run_id, session_id, now)
            until = min((n["window_end"] for n in needs if n["window_end"] is not None), default=float("inf"))
            if len(self._needs_cache) >= NEEDS_CACHE_SIZE:
                self._needs_cache.clear()
            self._needs_cache[ck] = (needs, until)
            return needs

    def _compute(self, policies: Sequence[Mapping[str, Any]], action: str, cost: float, run_id: str, session_id: Optional[str], now: float) -> Tuple[Dict[str, Any], ...]:
        raw = quota_needs(policies, self.agent_id, action, cost, run_id, session_id)
        out = []
        for q in raw:
            p = self._by_id[q["policy_id"]]
            w = quota_window(p, q["limit"], now)
            scope = q["scope"]
            scope_key = run_id if scope == "run" else session_id if scope == "session" else self.agent_id if scope == "agent" else "organization"
            start = w[0] if w else 0
            pair = f"{q['policy_id']}\n{q['limit']}"
            out.append({**q, "policy_name": p["name"], "scope_key": scope_key, "window_start": start, "window_end": w[1] if w else None,
                        "pair": pair, "key": f"{pair}\n{scope}\n{scope_key}\n{start}"})
        return tuple(out)

    def covered(self, needs: Sequence[Mapping[str, Any]]) -> bool:
        """Whether the leases hold every need of ``needs`` now (a limit the platform does not know counts as held)."""
        with self._lock:
            return next(self._missing(needs, _now()), None) is None

    def _missing(self, needs: Sequence[Mapping[str, Any]], now: float) -> Iterator[Tuple[Mapping[str, Any], Optional[_Counter]]]:
        """The needs of ``needs`` the leases do not hold now, each with its counter (None when there is none yet)."""
        for n in needs:
            if n["pair"] in self._ignored:
                continue
            c = self._counters.get(n["key"])
            if c is None or self._left(c, now) < n["need"] - TOLERANCE:
                yield n, c

    def unavailable(self, needs: Sequence[Mapping[str, Any]]) -> Optional[str]:
        """Why a need of ``needs`` the leases do not hold could not be asked for (naming the limit, its policy and the
        error), or None. The fail mode decides what then happens."""
        with self._lock:
            now = _now()
            for n, c in self._missing(needs, now):
                why = (c.error if c is not None else None) or (self._last_error if now < self._down_until else None)
                if why is not None:
                    return f"the fleet-wide limit {n['limit']} of policy \"{n['policy_name']}\" could not be leased: {why}"
            return None

    def view(self, needs: Sequence[Mapping[str, Any]]) -> Callable[[str, str], Optional[float]]:
        """The engine's ``quota`` for an action with ``needs``: what each lease has left (USD or calls; 0 or less when
        nothing is held); None for a limit the platform does not know, one whose need could not be asked for because
        the platform is unreachable (this process then counts alone), and limits the action does not count against."""
        now = _now()

        def quota(policy_id: str, limit: str) -> Optional[float]:
            for n in needs:
                if n["policy_id"] == policy_id and n["limit"] == limit:
                    return self._answer(n, now)
            return None

        return quota

    def consume(self, needs: Sequence[Mapping[str, Any]]) -> None:
        """Count ``needs`` as spent: the action was admitted and runs (call under the governor's lock, right after
        the decision)."""
        with self._lock:
            now = _now()
            for n in needs:
                if n["pair"] in self._ignored:
                    continue
                c = self._counters.get(n["key"])
                if c is None:
                    continue
                c.spent += n["need"]
                c.last_need = n["need"]
                c.last_used = now
                c.used = True

    def settle(self, needs: Sequence[Mapping[str, Any]], delta_usd: float) -> None:
        """Settle the budgets of ``needs`` to the action's actual cost: ``delta_usd`` = actual − estimate (USD) is
        added to what each budget lease spent (never below 0); rate limits are unchanged."""
        with self._lock:
            for n in needs:
                if n["unit"] != "usd" or n["pair"] in self._ignored:
                    continue
                c = self._counters.get(n["key"])
                if c is not None:
                    c.spent = max(0.0, c.spent + delta_usd)

    def end_run(self, run_id: str) -> None:
        """Run ``run_id`` ended: release its run-budget leases now rather than after 2 × TTL unused."""
        with self._lock:
            for c in list(self._counters.values()):
                if c.scope == "run" and c.scope_key == run_id:
                    self._end(c)
        self._wake.set()

    def status(self) -> List[Dict[str, Any]]:
        """One row per lease held: ``policy_id``, ``limit``, ``scope_key``, ``held`` and ``spent`` (USD or calls),
        ``expires_at`` (ISO 8601)."""
        with self._lock:
            return [{"policy_id": c.policy_id, "limit": c.limit, "scope_key": c.platform_scope_key or c.scope_key, "held": c.held, "spent": c.spent,
                     "expires_at": iso_time(int(c.expires_at))} for c in self._counters.values() if c.lease_id is not None]

    # ---- asking (outside the governor's lock) --------------------------------------------------------------
    def ensure(self, needs: Sequence[Mapping[str, Any]], wait: float) -> bool:
        """Ask the platform for what the leases lack of ``needs`` (one batched request with every other waiting
        action's asks), waiting at most ``wait`` s. True when it is worth checking :meth:`covered` again (an answer
        came, with no refusal for these needs); False when the wait elapsed, a need could not be granted (the limit
        has less left than it needs), or the platform could not be reached (see :meth:`unavailable`). Never raises;
        never call it holding the governor's lock."""
        if self._closed or not wait > 0:
            return False
        mine: List[Tuple[_Counter, float]] = []
        with self._lock:
            now = _now()
            for n in needs:
                if n["pair"] in self._ignored:
                    continue
                c = self._counters.get(n["key"]) or self._create(n, now)
                left = self._left(c, now)
                if left >= n["need"] - TOLERANCE:
                    continue
                if now < self._down_until:
                    return False
                ask = n["need"] - left
                c.last_need = n["need"]
                if c.exhausted_ask is not None and now - c.answered_at < self._interval * 1000 and ask >= c.exhausted_ask - TOLERANCE:
                    return False
                prev = self._asks.get(id(c))
                self._asks[id(c)] = (c, max(prev[1] if prev else 0.0, ask))
                mine.append((c, ask))
            if not mine:
                return True
            flight = self._flights_started + 1
            self._urgent = True
        self._start_thread()
        self._wake.set()
        deadline = time.monotonic() + wait
        with self._done:
            while self._flights_done < flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._done.wait(left)
        with self._lock:
            for c, ask in mine:
                if c.flight == flight and (c.error is not None or (c.exhausted_ask is not None and ask >= c.exhausted_ask - TOLERANCE)):
                    return False
        return True

    def close(self, timeout: float) -> None:
        """Release every lease (reporting what each spent), waiting at most ``timeout`` s; best effort: a lease not
        released in time lapses at its expiry. Later calls need nothing and ask for nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for c in list(self._counters.values()):
                self._end(c)
            self._asks.clear()
            work = bool(self._ending or self._owed)
        t = self._thread
        if t is not None:
            self._wake.set()
            t.join(max(0.0, timeout) if work else 1.0)

    # ---- internals -----------------------------------------------------------------------------------------
    def _answer(self, n: Mapping[str, Any], now: float) -> Optional[float]:
        with self._lock:
            if n["pair"] in self._ignored:
                return None
            c = self._counters.get(n["key"])
            left = 0.0 if c is None else self._left(c, now)
            if left >= n["need"] - TOLERANCE:
                return left
            down = ((c.error if c is not None else None) or (self._last_error if now < self._down_until else None)) is not None
            return None if down else left

    def _left(self, c: _Counter, now: float) -> float:
        if c.lease_id is not None and now >= c.expires_at - min(EXPIRY_MARGIN_MS, c.ttl_ms / 10):
            self._lapse(c)
        return c.held - c.spent

    def _lapse(self, c: _Counter, owe: bool = True) -> None:
        if c.lease_id is not None:
            if owe:
                self._seq += 1
                self._owed.append((c.lease_id, self._seq, c.spent))
            self._lapsed[c.lease_id] = None
            while len(self._lapsed) > LAPSED_KEPT:
                self._lapsed.popitem(last=False)
        c.spent = 0.0
        c.reported = 0.0
        c.held = 0.0
        c.lease_id = None
        c.expires_at = 0.0

    def _create(self, n: Mapping[str, Any], now: float) -> _Counter:
        c = _Counter(n, self.agent_id, now)
        self._counters[c.key] = c
        return c

    def _end(self, c: _Counter) -> None:
        if self._counters.get(c.key) is c:
            del self._counters[c.key]
        self._asks.pop(id(c), None)
        if c.lease_id is not None:
            self._ending[id(c)] = c

    def _sync(self, policies: Sequence[Mapping[str, Any]]) -> None:
        """A new snapshot: which policies have fleet-wide limits; end the leases whose limit changed or went."""
        self._synced_of = policies
        self._ignored.clear()
        self._needs_cache.clear()
        self._by_id = {}
        self._fleet = False
        for p in policies:
            if not has_fleet_limit(p):
                continue
            self._fleet = True
            self._by_id[p["id"]] = p
        for c in list(self._counters.values()):
            p = self._by_id.get(c.policy_id)
            limit = None if p is None or not p.get("enabled") else quota_limit_of(p, c.limit)
            if limit is None or limit[0] != c.limit_value:
                self._end(c)
        if self._ending:
            self._wake.set()

    def _start_thread(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._loop, name="agp-leases", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        """The thread: every ``interval`` s (or when woken) end what is over or idle, top up and renew, then send."""
        while True:
            self._wake.wait(self._interval)
            self._wake.clear()
            try:
                with self._lock:
                    closing = self._closed
                    changed = self._tick() if not closing else bool(self._ending or self._owed or self._asks)
                    idle = not self._counters and not self._ending and not self._owed and not self._asks
                if changed and (_now() >= self._down_until or closing or self._urgent):
                    self._send()
                if closing:
                    with self._lock:
                        if not self._ending and not self._owed:
                            return
                    if self._down_until > _now():
                        return  # unreachable while closing: the leases lapse at their expiry
                elif idle:
                    self._wake.wait()
            except Exception as err:  # the thread must not die: told, then next tick
                self._on_error(f"fleet-wide limits: {type(err).__name__}: {err}")

    def _tick(self) -> bool:
        policies = self._policies()
        if policies is not self._synced_of:
            self._sync(policies)
        now = _now()
        changed = bool(self._ending or self._asks or self._owed)
        for c in list(self._counters.values()):
            left = self._left(c, now)
            if (c.window_end is not None and now >= c.window_end) or now - c.last_used > 2 * c.ttl_ms:
                self._end(c)
                changed = changed or c.lease_id is not None
                continue
            if c.lease_id is None:
                # Spent without a lease (admitted under fail_mode open while the platform was away): ask for one.
                if c.spent > TOLERANCE and now - c.answered_at > c.ttl_ms and id(c) not in self._asks:
                    self._asks[id(c)] = (c, 0.0)
                    changed = True
                continue
            if c.spent != c.reported:
                changed = True
            low_water = c.used and left < 0.25 * c.last_slice
            renew = c.expires_at - now < c.ttl_ms / 3 and now - c.last_used < c.ttl_ms
            if (low_water or renew) and id(c) not in self._asks:
                self._asks[id(c)] = (c, c.last_need if low_water else 0.0)
                changed = True
        return changed

    def _send(self) -> None:
        """One flight: the asks, the releases and the reports of what changed (requests of at most 100 items each)."""
        with self._lock:
            self._flights_started += 1
            self._urgent = False
            flight = self._flights_started
            acquire = list(self._asks.values())
            self._asks.clear()
            reports: List[Tuple[Optional[_Counter], str, int, float, bool]] = []
            for c in self._ending.values():
                if c.lease_id is not None:
                    self._seq += 1
                    reports.append((c, c.lease_id, self._seq, c.spent, True))
            for c in self._counters.values():
                if c.lease_id is not None and c.spent != c.reported:
                    self._seq += 1
                    reports.append((c, c.lease_id, self._seq, c.spent, False))
            for lease_id, seq, spent in self._owed:
                reports.append((None, lease_id, seq, spent, True))
            self._owed.clear()
            for k in [k for k, c in self._ending.items() if c.lease_id is None]:
                del self._ending[k]
        try:
            while acquire or reports:
                a, acquire = acquire[:MAX_ITEMS], acquire[MAX_ITEMS:]
                r, reports = reports[:MAX_ITEMS], reports[MAX_ITEMS:]
                self._exchange(a, r, flight, 2)
        finally:
            with self._done:
                self._flights_done = flight
                self._done.notify_all()

    def _exchange(self, acquire: List[Tuple[_Counter, float]], reports: List[Tuple[Optional[_Counter], str, int, float, bool]], flight: int, tries: int) -> None:
        """One request; items the platform names as unknown (404) or not this holder's live lease (409) are dropped
        and the rest sent again."""
        if not acquire and not reports:
            return
        body = {
            "holder": self.holder,
            "acquire": [{"policy_id": c.policy_id, "limit": c.limit, **c.ids, "need": ask} for c, ask in acquire],
            "report": [{"lease_id": lid, "seq": seq, "spent": spent, "release": rel} for _, lid, seq, spent, rel in reports],
        }
        try:
            answer = self._request(body)
            if not isinstance(answer, dict) or not isinstance(answer.get("leases"), list):
                raise ValueError(f"POST /api/v1/quotas/leases gave an answer this SDK does not understand: {json.dumps(answer)[:200]}")
        except Exception as err:
            if isinstance(err, AgpHttpError) and err.status in (404, 409) and tries > 1:
                named = _named_items(err)
                bad_acquire = named[0] if named else (set(range(len(acquire))) if err.status == 404 else set())
                bad_report = named[1] if named else set(range(len(reports)))
                with self._lock:
                    for i in bad_acquire:
                        if i < len(acquire):
                            c = acquire[i][0]
                            self._ignored.add(f"{c.policy_id}\n{c.limit}")
                            if c.lease_id is None:
                                self._end(c)
                    for i in bad_report:
                        if i < len(reports) and reports[i][0] is not None:
                            c = reports[i][0]
                            self._ending.pop(id(c), None)
                            self._lapse(c, False)
                return self._exchange([x for i, x in enumerate(acquire) if i not in bad_acquire], [x for i, x in enumerate(reports) if i not in bad_report], flight, tries - 1)
            message = str(err)
            with self._lock:
                if message != self._last_error:
                    self._on_error(f"fleet-wide limits: {message}")
                self._last_error = message
                self._down_until = _now() + RETRY_AFTER_MS
                for c, _ in acquire:
                    c.flight = flight
                    c.error = message
                if not self._closed:
                    # Owed reports are sent again with the next request (a copy already applied is a replay there).
                    self._owed.extend((lid, seq, spent) for c, lid, seq, spent, _ in reports if c is None)
                else:
                    self._ending.clear()
            return
        leases: List[Dict[str, Any]] = answer["leases"]
        with self._lock:
            self._last_error = None
            self._down_until = 0.0
            now = _now()
            for i, (c, ask) in enumerate(acquire):
                c.flight = flight
                c.error = None
                c.used = False
                if i >= len(leases):
                    continue
                lease = leases[i]
                if lease.get("limit_value") == 0 and lease.get("status") != "active":
                    self._ignored.add(f"{c.policy_id}\n{c.limit}")
                    self._end(c)
                    continue
                self._granted(c, lease, now)
                c.exhausted_ask = ask if lease.get("exhausted") else None
                c.answered_at = now
                # A need the limit cannot grant: a remainder too small for it returns to the fleet.
                left = c.held - c.spent
                if lease.get("exhausted") and ask > 0 and TOLERANCE < left < c.last_need - TOLERANCE:
                    self._end(c)
                if self._counters.get(c.key) is not c and c.lease_id is not None:
                    self._ending[id(c)] = c
            by_lease = {l.get("lease_id"): l for l in leases[len(acquire):]}
            for c, lid, _seq, spent, release in reports:
                if c is None:
                    continue  # an owed report, applied (or a replay of one already applied)
                if release:
                    self._ending.pop(id(c), None)
                    continue
                lease = by_lease.get(lid)
                if lease is None or c.lease_id != lid:
                    continue
                if lease.get("status") != "active":
                    if abs(float(lease.get("spent", -1)) - spent) <= TOLERANCE:
                        c.reported = spent
                    self._lapse(c)
                    continue
                c.reported = spent
                self._granted(c, lease, now)

    def _granted(self, c: _Counter, lease: Mapping[str, Any], now: float) -> None:
        """Apply the platform's answer ``lease`` about counter ``c``'s lease."""
        lid = lease.get("lease_id")
        if not lid or lease.get("status") != "active":
            if c.lease_id is not None and (not lid or lid == c.lease_id):
                self._lapse(c)
            return
        if lid != c.lease_id:
            # A lease that lapsed here, renewed by a request answered after the lapse: not taken up again.
            if lid in self._lapsed:
                return
            if c.lease_id is not None:
                self._lapse(c)
            c.lease_id = lid
            c.reported = float(lease.get("spent", 0))
        c.held = float(lease["held"])
        c.expires_at = _parse_iso(lease["expires_at"])
        c.ttl_ms = max(100.0, c.expires_at - now)
        if lease.get("granted", 0) > 0:
            c.last_slice = float(lease["granted"])
        c.platform_scope_key = lease.get("scope_key")
        if lease.get("window_end") is not None:
            c.window_end = _parse_iso(lease["window_end"])


def _named_items(err: AgpHttpError) -> Optional[Tuple[set, set]]:
    """The acquire and report items a 404/409 problem names (``acquire.<i>…``, ``report.<i>…``), or None."""
    try:
        problem = json.loads(err.body) if err.body else {}
    except ValueError:
        problem = {}
    texts = [str(e.get("path", "")) for e in (problem.get("errors") or []) if isinstance(e, dict)] + [str(problem.get("detail", ""))]
    acquire: set = set()
    report: set = set()
    for t in texts:
        for m in re.finditer(r"(acquire|report)(?:\.|\[)(\d+)", t):
            (acquire if m.group(1) == "acquire" else report).add(int(m.group(2)))
    return (acquire, report) if acquire or report else None
