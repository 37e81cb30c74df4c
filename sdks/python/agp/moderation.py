"""The moderation provider of the SDK, and the scores of one action's arguments (``moderation.ts`` and
``moderation-scores.ts`` of the TypeScript SDK, with the same protocol, texts, mapping and failures).

:func:`openai_moderation` speaks to any OpenAI-compatible ``POST <base_url>/moderations`` endpoint (OpenAI's own,
``omni-moderation-latest`` by default, or a compatible server), standard library only (``urllib``):

- request: ``POST <base_url>/moderations``, ``Authorization: Bearer <api_key>`` (when given), body
  ``{"model": …, "input": [text, …]}``;
- response: ``{"id", "model", "results": [{"flagged", "categories", "category_scores"}, …]}``, one result per input,
  in order; ``category_scores`` maps each category name to a score from 0 to 1.

Category names are mapped to the guardrail's (``MODERATION_CATEGORIES``, OpenAI's names: ``harassment``,
``harassment/threatening``, ``hate``, ``hate/threatening``, ``illicit``, ``illicit/violent``, ``self-harm``,
``self-harm/intent``, ``self-harm/instructions``, ``sexual``, ``sexual/minors``, ``violence``, ``violence/graphic``)
by :func:`moderation_category`: ignoring case and whether words are separated by ``/``, ``-``, ``_`` or a space. A
name that matches none is dropped. Failures (timeout, network error, a non-2xx answer after the retries, an answer
of another shape) raise :class:`ModerationError`; ``run.act`` then fails closed (:func:`score_arguments` turns the
failure into ``{"error": …}``, which the decider answers with ``moderation_unavailable``).

Durations are seconds (floats), as everywhere in the Python SDK; the TypeScript options are in ms.
Source: docs/sdk-python.md §Moderation provider; docs/sdk.md §Moderation provider; spec §Guardrail context payload.
"""

from __future__ import annotations

import json
import math
import re
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Mapping, Optional, Protocol, Union

from .engine.decide import MODERATION_CATEGORIES
from .engine.jsnum import js_keys, u16_len
from .engine.pii import field_path_of, walk_strings

__all__ = ["ModerationProvider", "ModerationError", "openai_moderation", "moderation_category", "score_arguments", "MAX_MODERATED_FIELDS"]

#: Most string fields of one action's arguments the moderation guardrail scores (the engine's bound).
MAX_MODERATED_FIELDS = 1000

#: What :func:`score_arguments` gives: ``{"scores": [{"field_path", "scores": {category: score}}]}`` or ``{"error": why}``.
Moderated = Dict[str, Any]


class ModerationProvider(Protocol):
    """Scores content for the moderation guardrail (``ModerationProvider`` of the TypeScript SDK): for each text, a
    dict of scores in [0, 1] by category (``harassment``, ``violence``, …: the names of OpenAI's
    ``/v1/moderations``). ``run.act`` calls ``moderate`` only while a policy that applies to the agent has a moderation
    guardrail, with the non-blank strings of the action's arguments (each distinct text once), from the calling
    thread (a worker thread under ``aact``). It must return one dict per text, in order, or raise (the guardrail then
    fails closed). It should bound its own time: ``act`` waits for it."""

    def moderate(self, texts: List[str]) -> List[Dict[str, float]]:
        """One dict of scores (0–1, by category) per text, in order. Raise on failure."""
        ...


class ModerationError(Exception):
    """Why a moderation call failed (``ModerationError`` of the TypeScript SDK). ``status``: the HTTP status of the
    last answer; None when there was none (network error, timeout) or it was a 2xx of another shape."""

    def __init__(self, message: str, status: Optional[int]):
        super().__init__(message)
        self.status = status


_SEPARATORS = re.compile(r"[/\-_ ]+")


def _words_of(name: str) -> str:
    return _SEPARATORS.sub("_", name.lower())


_CANONICAL = {_words_of(c): c for c in MODERATION_CATEGORIES}


def moderation_category(name: str) -> Optional[str]:
    """The guardrail's category for a provider's category name (``self_harm_intent`` → ``self-harm/intent``), or
    None when it is none of the guardrail's categories (``moderationCategory`` of the TypeScript SDK)."""
    return _CANONICAL.get(_words_of(name))


_RETRYABLE = frozenset((408, 409, 429))


def _is_score(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v <= 1


class _OpenAIModeration:
    """The provider :func:`openai_moderation` returns (see the module docs)."""

    def __init__(self, url: str, model: str, timeout: float, max_retries: int, per_request: int, headers: Dict[str, str]):
        self.url = url
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.per_request = per_request
        self.headers = headers
        # A direct connection, as the TypeScript SDK's fetch: no proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def moderate(self, texts: List[str]) -> List[Dict[str, float]]:
        """Scores of each text by guardrail category, in order; at most ``max_inputs_per_request`` texts per request,
        several requests at once (threads). Takes at most ``timeout`` s in all, retries included.

        :raises TypeError: when ``texts`` is not a list of strings.
        :raises ModerationError: when the endpoint cannot be had (see the module docs)."""
        if not isinstance(texts, (list, tuple)) or any(not isinstance(t, str) for t in texts):
            raise TypeError("moderate: texts must be a list of strings")
        if not texts:
            return []
        deadline = time.monotonic() + self.timeout
        chunks = [list(texts[i : i + self.per_request]) for i in range(0, len(texts), self.per_request)]
        if len(chunks) == 1:
            return self._request(chunks[0], deadline)
        with ThreadPoolExecutor(max_workers=min(len(chunks), 8), thread_name_prefix="agp-moderation") as pool:
            parts = list(pool.map(lambda c: self._request(c, deadline), chunks))
        return [r for part in parts for r in part]

    def _request(self, inputs: List[str], deadline: float) -> List[Dict[str, float]]:
        """One request for ``inputs``, retried until ``deadline`` (``time.monotonic()``)."""
        body = json.dumps({"model": self.model, "input": inputs}, ensure_ascii=False).encode("utf-8")
        last = ""
        last_status: Optional[int] = None
        attempt = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ModerationError(f"moderation request to {self.url} timed out after {self.timeout:g} s" + (f" ({last})" if last else ""), last_status)
            retry_after: Optional[float] = None
            req = urllib.request.Request(self.url, data=body, method="POST", headers=self.headers)
            try:
                with self._opener.open(req, timeout=left) as res:
                    text = res.read().decode("utf-8", "replace")
                return self._parse(text, len(inputs))
            except urllib.error.HTTPError as err:
                try:
                    text = err.read().decode("utf-8", "replace")
                except Exception:  # the body of an error answer may be cut off
                    text = ""
                last_status = err.code
                last = f"HTTP {err.code}: {text[:300]}"
                if not (err.code in _RETRYABLE or err.code >= 500):
                    raise ModerationError(f"moderation request to {self.url} failed: {last}", err.code) from None
                ra = (err.headers.get("retry-after") if err.headers is not None else None) or ""
                try:
                    v = float(ra.strip())
                    retry_after = v if math.isfinite(v) and v >= 0 else None
                except ValueError:
                    retry_after = None
            except ModerationError:
                raise
            except (urllib.error.URLError, OSError, TimeoutError, ValueError) as err:
                reason = getattr(err, "reason", err)
                timed_out = isinstance(err, TimeoutError) or isinstance(reason, TimeoutError) or "timed out" in str(reason)
                last = f"no answer within {self.timeout:g} s" if timed_out else f"{type(reason).__name__}: {reason}"
                last_status = None
            if attempt >= self.max_retries:
                raise ModerationError(f"moderation request to {self.url} failed after {attempt + 1} attempt(s): {last}", last_status)
            wait = retry_after if retry_after is not None else 0.25 * 2**attempt
            time.sleep(max(0.0, min(wait, deadline - time.monotonic())))
            attempt += 1

    def _parse(self, text: str, n: int) -> List[Dict[str, float]]:
        """The scores of a 2xx answer, one dict per input, mapped to the guardrail's categories."""
        try:
            body = json.loads(text)
        except ValueError:
            raise ModerationError(f"moderation answer from {self.url} is not JSON: {text[:200]}", None) from None
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list) or len(results) != n:
            got = f"{len(results)} results" if isinstance(results, list) else "no results array"
            raise ModerationError(f"moderation answer from {self.url} has {got} for {n} input(s)", None)
        out: List[Dict[str, float]] = []
        for i, r in enumerate(results):
            scores = r.get("category_scores") if isinstance(r, dict) else None
            if not isinstance(scores, dict):
                raise ModerationError(f"moderation answer from {self.url}: results[{i}].category_scores is not an object", None)
            mapped: Dict[str, float] = {}
            for name, score in scores.items():
                if not _is_score(score):
                    raise ModerationError(f"moderation answer from {self.url}: results[{i}].category_scores.{name} is {json.dumps(score)}, not a score from 0 to 1", None)
                category = moderation_category(str(name))
                if category is not None:
                    mapped[category] = max(mapped.get(category, 0), score)
            out.append(mapped)
        return out


def openai_moderation(base_url: str = "https://api.openai.com/v1", api_key: Optional[str] = None, model: str = "omni-moderation-latest", *,
                      timeout: float = 10.0, max_retries: int = 2, max_inputs_per_request: int = 32, headers: Optional[Mapping[str, str]] = None) -> ModerationProvider:
    """A :class:`ModerationProvider` for an OpenAI-compatible ``/v1/moderations`` endpoint (``openAIModeration`` of
    the TypeScript SDK; see the module docs for the protocol and the category mapping).

    ``base_url``: the API root, ``/moderations`` is appended (e.g. ``http://127.0.0.1:8000/v1``); ``api_key``: sent as
    ``Authorization: Bearer …`` (none when absent); ``model``: the moderation model; ``timeout``: how long one
    ``moderate`` call may take in all, retries included (s; ``timeoutMs`` in TypeScript); ``max_retries``: retries
    after a network error, a timed-out attempt, 408, 409, 429 or 5xx (backoff 0.25 s doubling, or the answer's
    ``Retry-After``); other 4xx are not retried; ``max_inputs_per_request``: texts per request, more are sent in
    several requests at once; ``headers``: extra request headers (e.g. an organisation header)::

        gov = Governor.connect(url, key, "support-bot",
                               moderation=openai_moderation(api_key=os.environ["OPENAI_API_KEY"]))

    :raises TypeError: for a bad option, naming it. Its ``moderate`` raises :class:`ModerationError`.
    """
    if not isinstance(base_url, str) or not re.match(r"https?://", base_url):
        raise TypeError(f"openai_moderation: base_url must be an http(s) URL, got {base_url!r}")
    if not isinstance(model, str) or not model:
        raise TypeError("openai_moderation: model must be a non-empty string")
    if api_key is not None and not isinstance(api_key, str):
        raise TypeError("openai_moderation: api_key must be a string")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise TypeError(f"openai_moderation: timeout must be a number > 0 (s), got {timeout!r}")
    for k, v, least in (("max_retries", max_retries, 0), ("max_inputs_per_request", max_inputs_per_request, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise TypeError(f"openai_moderation: {k} must be an integer ≥ {least}, got {v!r}")
    if headers is not None and (not isinstance(headers, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())):
        raise TypeError("openai_moderation: headers must be a mapping of strings to strings")
    h = {"content-type": "application/json", "accept": "application/json", **(headers or {})}
    if api_key:
        h["authorization"] = f"Bearer {api_key}"
    return _OpenAIModeration(f"{base_url.rstrip('/')}/moderations", model, float(timeout), max_retries, max_inputs_per_request, h)


def _js_json(v: Any) -> str:
    """``JSON.stringify`` of a value a provider answered (for a message)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    try:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(v)


def score_arguments(provider: Optional[ModerationProvider], args: Dict[str, Any]) -> Moderated:
    """Score the arguments' strings with the moderation provider (``scoreArguments`` of the TypeScript SDK): every
    non-blank string (nested dicts and lists included), each distinct text asked once, at most
    :data:`MAX_MODERATED_FIELDS` fields. Never raises: a missing provider, a provider error, an answer of the wrong
    length or too many strings give ``{"error": why}``; else ``{"scores": [{"field_path", "scores"}]}`` in argument
    order, each record keeping the scores that are numbers from 0 to 1 under names of at most 128 characters."""
    if provider is None:
        return {"error": "no moderation provider was given to Governor.connect (option moderation)"}
    fields: List[tuple] = []
    texts: List[str] = []
    index: Dict[str, int] = {}
    too_many = False

    def visit(text: str, place: Any) -> bool:
        nonlocal too_many
        if _JS_BLANK.fullmatch(text):
            return True
        if len(fields) >= MAX_MODERATED_FIELDS:
            too_many = True
            return False
        i = index.get(text)
        if i is None:
            i = index[text] = len(texts)
            texts.append(text)
        fields.append((field_path_of(place), i))
        return True

    truncated = walk_strings(args, visit)
    if truncated or too_many:
        return {"error": f"the arguments hold more strings than the moderation guardrail checks (at most {MAX_MODERATED_FIELDS} fields, 1 MiB of text)"}
    if not texts:
        return {"scores": []}
    try:
        results: Any = provider.moderate(texts)
    except Exception as err:  # the provider's failure makes the guardrail fail closed
        return {"error": str(err)}
    if not isinstance(results, (list, tuple)) or len(results) != len(texts):
        got = len(results) if isinstance(results, (list, tuple)) else "no"
        return {"error": f"the moderation provider answered {got} result(s) for {len(texts)} text(s)"}
    scores: List[Dict[str, Any]] = []
    for path, i in fields:
        r = results[i]
        if isinstance(r, (list, tuple)):
            entries: List[tuple] = [(str(k), v) for k, v in enumerate(r)]
        elif isinstance(r, dict):
            entries = [(k, r[k]) for k in js_keys({k: v for k, v in r.items() if isinstance(k, str)})]
        else:
            return {"error": f"the moderation provider answered {_js_json(r)} for a text, not a record of scores"}
        clean: Dict[str, Union[int, float]] = {k: v for k, v in entries if _is_score(v) and u16_len(k) <= 128}
        scores.append({"field_path": path, "scores": clean})
    return {"scores": scores}


# A text JavaScript's ``text.trim() === ''`` calls blank: only its white space and line terminators (Python's
# ``str.isspace`` differs: it counts U+001C–U+001F and U+0085, and not U+FEFF).
_JS_BLANK = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]*")
