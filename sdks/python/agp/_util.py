"""Small shared pieces of the SDK: report-id parts, the clock as the platform's ISO 8601 text, and the copy of an
action's arguments as JSON data (``args.ts``, ``reports.ts`` of the TypeScript SDK). Internal."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import time
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Tuple

from .engine.jsnum import u16_len


def now_ms() -> int:
    """The clock, ms since the Unix epoch (as JS ``Date.now()``)."""
    return int(time.time() * 1000)


#: The last second formatted, and its text (one tuple, replaced whole: threads never see half of it).
_iso_second: Tuple[int, str] = (-1, "")


def iso_time(ms: "int | None" = None) -> str:
    """``new Date(ms).toISOString()``: UTC, millisecond precision, ``Z`` (``2026-01-31T12:00:00.000Z``). The text of
    the second is kept, so reports of the same second format only their milliseconds."""
    global _iso_second
    ms = now_ms() if ms is None else ms
    sec = ms // 1000
    cached = _iso_second
    if cached[0] != sec:
        cached = (sec, datetime.fromtimestamp(sec, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"))
        _iso_second = cached
    return f"{cached[1]}.{ms % 1000:03d}Z"


def id_part(s: str) -> str:
    """A report id part of at most 160 characters (UTF-16 units, as JS counts): longer ones are hashed (SHA-256 hex, 32)."""
    return s if u16_len(s) <= 160 else hashlib.sha256(s.encode("utf-8")).hexdigest()[:32]


def nonce() -> str:
    """A short random part of report ids: 48 bits, base64url (8 characters), as the TypeScript SDK makes them."""
    return base64.urlsafe_b64encode(os.urandom(6)).decode("ascii")


def _where(path: List[Any]) -> str:
    out = "args"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def copy_args(name: str, args: Mapping[str, Any]) -> Dict[str, Any]:
    """A copy of an action's arguments as JSON data (dicts with str keys, lists — tuples become lists —, str, finite
    int/float, bool, None), taken when ``act`` is called so what was decided is what runs and is recorded.

    :raises TypeError: naming the first value that is not JSON data by its path (``args.items[2].when is a datetime``),
        a non-str key, a non-finite number, or a cycle.
    """
    if not isinstance(args, Mapping):
        raise TypeError(f"act {name}: arguments must be a dict, got {type(args).__name__}")
    try:
        return _fast_copy(args, 0)
    except _NotJson:
        pass  # found again below, with its path named
    seen: set = set()

    def copy(v: Any, path: List[Any]) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, (int, float)):
            if isinstance(v, float) and not math.isfinite(v):
                raise TypeError(f"act {name}: arguments must be JSON data; {_where(path)} is {v} (not a finite number)")
            return v
        if isinstance(v, (dict, list, tuple)):
            if id(v) in seen:
                raise TypeError(f"act {name}: arguments must be JSON data; {_where(path)} is a cycle")
            seen.add(id(v))
            try:
                if isinstance(v, dict):
                    out = {}
                    for k, x in v.items():
                        if not isinstance(k, str):
                            raise TypeError(f"act {name}: arguments must be JSON data; {_where(path)} has a key {k!r} that is not a str")
                        out[k] = copy(x, path + [k])
                    return out
                return [copy(x, path + [i]) for i, x in enumerate(v)]
            finally:
                seen.discard(id(v))
        raise TypeError(f"act {name}: arguments must be JSON data; {_where(path)} is a {type(v).__name__}")

    return copy(dict(args), [])


class _NotJson(Exception):
    """A value :func:`_fast_copy` does not copy (the slow path then names it)."""


_SCALARS = (str, int, bool, type(None))


def _fast_copy(v: Any, depth: int) -> Any:
    """:func:`copy_args`'s copy without paths (the allow path): exact types only; anything else, a non-finite float
    or depth past 100 (a possible cycle) raises :class:`_NotJson` and the slow path decides."""
    if depth > 100:
        raise _NotJson
    out = {}
    for k, x in v.items():
        t = type(x)
        if type(k) is not str:
            raise _NotJson
        if t in _SCALARS:
            out[k] = x
        elif t is float:
            if x - x != 0:  # inf or nan
                raise _NotJson
            out[k] = x
        elif t is dict:
            out[k] = _fast_copy(x, depth + 1)
        elif t is list or t is tuple:
            out[k] = _fast_list(x, depth + 1)
        else:
            raise _NotJson
    return out


def _fast_list(v: Any, depth: int) -> List[Any]:
    if depth > 100:
        raise _NotJson
    out = []
    for x in v:
        t = type(x)
        if t in _SCALARS:
            out.append(x)
        elif t is float:
            if x - x != 0:
                raise _NotJson
            out.append(x)
        elif t is dict:
            out.append(_fast_copy(x, depth + 1))
        elif t is list or t is tuple:
            out.append(_fast_list(x, depth + 1))
        else:
            raise _NotJson
    return out


def json_safe(v: Any) -> Any:
    """A JSON-safe copy of a function's result for the ledger: JSON data as is (≤ 256 KiB as text), else
    ``{"truncated": true, "bytes", "preview"}`` or ``{"unserializable": <text>}``."""
    if v is None or isinstance(v, bool) or (isinstance(v, (int, float)) and math.isfinite(v)) or (isinstance(v, str) and len(v) <= 40 * 1024):
        return v
    try:
        text = json.dumps(v, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as err:
        return {"unserializable": str(err)[:1000]}
    if len(text) > 256 * 1024:
        return {"truncated": True, "bytes": len(text), "preview": text[:4096]}
    return json.loads(text)
