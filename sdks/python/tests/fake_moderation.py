"""A real HTTP server on 127.0.0.1 (a free port, ``http.server`` in a daemon thread) speaking OpenAI's
``POST /v1/moderations``, as test/support/fake-moderation.ts does for the TypeScript tests: request
``{model, input: str | [str]}``, answer ``{id, model, results: [{flagged, categories, category_scores,
category_applied_input_types}]}``, one result per input in order. A text's scores come from the first phrase of
:data:`FLAGGED_PHRASES` it contains (case-insensitive); other texts score 0.001 in every category. Failures are
scripted as a queue (:meth:`FakeModeration.fail`): each queued behaviour answers one request, then the server answers
normally again. Every request is recorded. No mock of the client: the provider under test speaks HTTP to it."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional

#: OpenAI's category names.
OPENAI_CATEGORIES = [
    "harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent", "self-harm",
    "self-harm/intent", "self-harm/instructions", "sexual", "sexual/minors", "violence", "violence/graphic",
]

#: Scores by phrase: a text containing the phrase gets these scores (the rest 0.001).
FLAGGED_PHRASES: Dict[str, Dict[str, float]] = {
    "hurt myself": {"self-harm": 0.97, "self-harm/intent": 0.93, "violence": 0.31},
    "i know where you live": {"harassment": 0.88, "harassment/threatening": 0.91, "violence": 0.62},
}


def _result(text: str) -> Dict[str, Any]:
    lower = text.lower()
    rule = next((r for phrase, r in FLAGGED_PHRASES.items() if phrase in lower), {})
    scores = {c: rule.get(c, 0.001) for c in OPENAI_CATEGORIES}
    return {"flagged": any(s >= 0.5 for s in scores.values()), "categories": {c: scores[c] >= 0.5 for c in OPENAI_CATEGORIES},
            "category_scores": scores, "category_applied_input_types": {c: ["text"] for c in OPENAI_CATEGORIES}}


class FakeModeration:
    """The server. ``url``: the base URL for ``openai_moderation(base_url=...)`` (``http://127.0.0.1:<port>/v1``);
    ``requests``: every request received, ``{"authorization": header or None, "body": parsed JSON}``."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self._queue: List[Dict[str, Any]] = []
        self._lock = threading.Lock()
        self._seq = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: Optional[Dict[str, str]] = None) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout under test)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.path.split("?")[0] != "/v1/moderations":
                    return self._send(404, {"error": {"message": f"no route POST {self.path}"}})
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                with fake._lock:
                    fake.requests.append({"authorization": self.headers.get("authorization"), "body": body})
                    nxt = fake._queue.pop(0) if fake._queue else None
                    fake._seq += 1
                    seq = fake._seq
                if nxt is not None and "stall" in nxt:
                    time.sleep(nxt["stall"])
                elif nxt is not None and "status" in nxt:
                    extra = {"retry-after": nxt["retry_after"]} if nxt.get("retry_after") is not None else {}
                    return self._send(nxt["status"], {"error": {"message": f"fake moderation answers {nxt['status']}", "type": "server_error"}}, extra)
                elif nxt is not None and "body" in nxt:
                    return self._send(200, nxt["body"])
                inputs = [body.get("input")] if isinstance(body.get("input"), str) else body.get("input")
                if not isinstance(inputs, list) or not inputs or any(not isinstance(t, str) for t in inputs):
                    return self._send(400, {"error": {"message": "'input' must be a string or an array of strings", "type": "invalid_request_error"}})
                self._send(200, {"id": f"modr-{seq}", "model": body.get("model") or "omni-moderation-latest", "results": [_result(t) for t in inputs]})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-moderation", daemon=True)
        self._thread.start()

    def fail(self, *behaviours: Dict[str, Any]) -> None:
        """Answer the next requests with these, one each: ``{"status": 503, "retry_after": "0"}`` (an error body),
        ``{"stall": seconds}`` (then a normal answer) or ``{"body": {...}}`` (a 200 with that body)."""
        with self._lock:
            self._queue.extend(behaviours)

    def close(self) -> None:
        """Stop the server and free its port."""
        self._server.shutdown()
        self._server.server_close()
