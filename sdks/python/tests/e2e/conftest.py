"""Fixtures of the end-to-end tests: the platform at ``AGP_URL`` with the write key ``AGP_KEY`` (test/e2e/python-sdk.test.ts
boots it in both run modes and runs these). Every test here skips, with one reason, when ``AGP_URL`` is unset."""

from __future__ import annotations

import os
import time
import uuid
from typing import Any, Callable, Dict, Optional

import pytest

from agp.http import Client

URL = os.environ.get("AGP_URL")
KEY = os.environ.get("AGP_KEY", "")


def pytest_collection_modifyitems(config: Any, items: Any) -> None:
    if URL:
        return
    skip = pytest.mark.skip(reason="AGP_URL is not set: the end-to-end tests need a running platform (test/e2e/python-sdk.test.ts sets it)")
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(skip)


class Api:
    """The platform's HTTP API with the test's write key: ``call`` returns (status, body)."""

    def __init__(self, url: str, key: str):
        self.url = url
        self.key = key
        self.client = Client(url, key)

    def call(self, method: str, path: str, body: Any = None) -> tuple:
        import json

        res = self.client.request(method, path, body)
        return res.status, (json.loads(res.text) if res.text else None)

    def policy(self, **body: Any) -> Dict[str, Any]:
        status, rec = self.call("POST", "/api/v1/policies", {"name": f"py-{uuid.uuid4().hex[:8]}", **body})
        assert status == 201, rec
        return rec

    def eventually(self, probe: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            v = probe()
            if v:
                return v
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.1)

    def run_record(self, run_id: str, n: int) -> Dict[str, Any]:
        """The run with at least ``n`` ledger entries."""

        def probe() -> Optional[Dict[str, Any]]:
            s, b = self.call("GET", f"/api/v1/runs/{run_id}")
            return b if s == 200 and len(b.get("actions", [])) >= n else None

        return self.eventually(probe, what=f"{n} ledger entries of run {run_id}")

    def interventions(self, agent_id: str, n: int) -> list:
        def probe() -> Optional[list]:
            s, b = self.call("GET", f"/api/v1/interventions?agent_id={agent_id}")
            items = b.get("interventions", b.get("items", [])) if s == 200 else []
            return items if len(items) >= n else None

        return self.eventually(probe, what=f"{n} interventions of {agent_id}")


@pytest.fixture(scope="session")
def api() -> Api:
    assert URL
    return Api(URL, KEY)


@pytest.fixture()
def agent_id() -> str:
    return f"py-{uuid.uuid4().hex[:10]}"
