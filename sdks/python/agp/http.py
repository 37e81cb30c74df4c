"""A small HTTP client of the AGP API on the standard library (``http.ts`` of the TypeScript SDK): bearer key, JSON
bodies, a timeout per request; the ingest call retries 429, 503 and network errors a few times (the same event ids
are resent, which is safe: ids are the idempotency key). Source: spec (platform-api.md); docs/api.md."""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .errors import AgpHttpError, AgpNetworkError

__all__ = ["Client", "Response"]


class Response:
    """One HTTP answer: ``status``, ``headers`` (lower-case names) and the body ``text``."""

    __slots__ = ("status", "headers", "text")

    def __init__(self, status: int, headers: Dict[str, str], text: str):
        self.status = status
        self.headers = headers
        self.text = text


class Client:
    """The AGP API for one key. ``url``: the gateway's base URL; ``timeout``: seconds per request."""

    def __init__(self, url: str, key: str, timeout: float = 10.0, user_agent: str = "agp-sdk-python"):
        self.base = url.rstrip("/")
        self.key = key
        self.timeout = timeout
        self.user_agent = user_agent

    def request(self, method: str, path: str, body: Any = None, headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None) -> Response:
        """Send one request; any HTTP status is returned (not raised).

        :raises AgpNetworkError: when the gateway cannot be reached or does not answer within the timeout.
        """
        h = {"authorization": f"Bearer {self.key}", "accept": "application/json, application/problem+json", "user-agent": self.user_agent}
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            h["content-type"] = "application/json"
        if headers:
            h.update(headers)
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout if timeout is None else timeout) as res:
                return Response(res.status, {k.lower(): v for k, v in res.headers.items()}, res.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as err:
            text = err.read().decode("utf-8", "replace") if err.fp is not None else ""
            return Response(err.code, {k.lower(): v for k, v in (err.headers or {}).items()}, text)
        except (urllib.error.URLError, OSError, TimeoutError) as err:
            reason = getattr(err, "reason", err)
            raise AgpNetworkError(f"{method} {path} could not reach {self.base}: {reason}") from err

    def json(self, method: str, path: str, body: Any = None) -> Any:
        """Send one request and parse the JSON answer.

        :raises AgpHttpError: for a non-2xx answer. :raises AgpNetworkError: when the gateway is unreachable.
        """
        res = self.request(method, path, body)
        if not 200 <= res.status < 300:
            raise AgpHttpError(method, path, res.status, res.text)
        return json.loads(res.text) if res.text else None

    def ingest(self, events: List[Dict[str, Any]], retries: int = 2) -> Dict[str, Any]:
        """``POST /api/v1/ingest/``: up to 1000 events (5 MiB). Returns the 207 answer ``{successes: [{id, status,
        result}], errors: [{id, status, message}]}``. 429, 503 and network errors are retried ``retries`` times
        (200 ms doubling, at least ``Retry-After``).

        :raises AgpHttpError: for another non-2xx answer (or the last 429/503). :raises AgpNetworkError: unreachable.
        """
        attempt = 0
        while True:
            try:
                res = self.request("POST", "/api/v1/ingest/", {"batch": events})
            except AgpNetworkError:
                if attempt >= retries:
                    raise
                time.sleep(min(5.0, 0.2 * 2 ** attempt) * (0.5 + random.random() / 2))
                attempt += 1
                continue
            if res.status in (429, 503) and attempt < retries:
                after = _retry_after(res.headers.get("retry-after"))
                time.sleep(max(after, min(5.0, 0.2 * 2 ** attempt)))
                attempt += 1
                continue
            if not 200 <= res.status < 300:
                raise AgpHttpError("POST", "/api/v1/ingest/", res.status, res.text)
            return json.loads(res.text)

    def create_intervention(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /api/v1/interventions``: record one intervention synchronously; returns the record (its ``id``)."""
        return self.json("POST", "/api/v1/interventions", body)

    def get_approval(self, approval_id: str) -> Dict[str, Any]:
        """``GET /api/v1/approvals/{id}``: one approval (``status`` pending, approved, rejected or expired)."""
        return self.json("GET", f"/api/v1/approvals/{urllib.parse.quote(approval_id, safe='')}")

    def decide_approval(self, approval_id: str, verdict: str, body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /api/v1/approvals/{id}/approve`` or ``/reject`` with ``{approver_email, notes?}``."""
        return self.json("POST", f"/api/v1/approvals/{urllib.parse.quote(approval_id, safe='')}/{verdict}", body)

    def get_agent(self, agent_id: str) -> Dict[str, Any]:
        """``GET /api/v1/agents/{id}``: the registry's record of one agent (404 when unknown)."""
        return self.json("GET", f"/api/v1/agents/{urllib.parse.quote(agent_id, safe='')}")

    def lease_quotas(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /api/v1/quotas/leases``: acquire, renew, report on and release the holder's leases of fleet-wide
        limits, in one call (``{holder, acquire: [...], report: [...]}``). Returns ``{holder, leases, released}``:
        ``leases`` one per acquire item in order, then one per report item that did not release.

        :raises AgpHttpError: 404 (a policy or limit unknown), 409 (a lease not this holder's live one), 422, 403.
        """
        return self.json("POST", "/api/v1/quotas/leases", body)

    def register_agent(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /api/v1/agents``: register (or replace the definition of) an agent."""
        return self.json("POST", "/api/v1/agents", body)


def _retry_after(v: Optional[str]) -> float:
    try:
        return min(30.0, max(0.0, float(v))) if v else 0.0
    except ValueError:
        return 0.0
