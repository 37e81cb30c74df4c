"""The push channel against a small local server speaking the platform's event stream (no platform needed): an unknown
event is ignored, CRLF line ends are read, a kill switch applies the moment its event arrives, a known event whose
data is not understood drops the stream, and the reconnect resumes with ``Last-Event-ID``."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List

import pytest

from agp import ActionBlocked, Governor

SNAPSHOT = {"agent_id": "bot", "policies": [], "kill_switches": {"organization": {"engaged": False, "reason": None}, "agents": []}}
FIRST = (
    b"event: newer.thing\ndata: {}\n\n"
    b": heartbeat\n\n"
    b"event: ready\r\nid: 7\r\ndata: {\"agent_id\":\"bot\",\"position\":\"7\"}\r\n\r\n"
    b"event: kill_switch.changed\nid: 8\ndata: {\"scope\":\"agent\",\"agent_id\":\"bot\",\"engaged\":true,\"reason\":\"pushed\",\"changed_by\":\"key:k\",\"at\":\"2026-01-01T00:00:00.000Z\"}\n\n"
)


class Fake(BaseHTTPRequestHandler):
    streams: List[Dict[str, Any]] = []
    garbage = threading.Event()

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.endswith("/governance/events"):
            Fake.streams.append({"last_event_id": self.headers.get("last-event-id")})
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            if len(Fake.streams) == 1:
                self.wfile.write(FIRST)
                self.wfile.flush()
                Fake.garbage.wait(10)
                self.wfile.write(b"event: policy.changed\ndata: not json\n\n")
                self.wfile.flush()
                time.sleep(0.5)
            else:
                self.wfile.write(b"event: ready\nid: 9\ndata: {\"agent_id\":\"bot\",\"position\":\"9\"}\n\n")
                self.wfile.flush()
                time.sleep(2)
            return
        if self.path.endswith("/governance"):
            return self._json(200, SNAPSHOT)
        return self._json(200, {"agent_id": "bot"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self._json(207, {"successes": [{"id": e["id"], "status": 201, "result": "created"} for e in body["batch"]], "errors": []})


@pytest.fixture()
def server() -> Any:
    Fake.streams = []
    Fake.garbage.clear()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    Fake.garbage.set()
    srv.shutdown()
    srv.server_close()


def wait(cond: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_the_push_channel_applies_kill_switches_ignores_unknown_events_and_resumes(server: str) -> None:
    gov = Governor.connect(url=server, key="agp_x", agent_id="bot", poll_interval=30)
    with gov.run() as run:
        def blocked() -> bool:
            try:
                run.act("a", {}, lambda a: 1)
                return False
            except ActionBlocked as err:
                return err.decision["rule"] == "agent_kill_switch" and "pushed" in err.decision["reason"]

        wait(blocked)
        assert gov.status()["channel"]["state"] == "connected" and gov.status()["staleness_s"] == 0
        Fake.garbage.set()  # a policy.changed whose data is not JSON: the stream is dropped and reconnected
        wait(lambda: len(Fake.streams) == 2 and gov.status()["channel"]["connects"] == 2)
    status = gov.status()["channel"]
    assert status["drops"] == 1 and status["state"] == "connected" and status["last_error"] is None  # cleared by the new ready
    assert Fake.streams[1]["last_event_id"] == "8"
    gov.close()
