"""JavaScript's number and string rules, reproduced so the Python engine writes what the TypeScript one does.

JS numbers are IEEE doubles, as Python floats are; what differs is how they print and round:

- :func:`js_number` is ``String(x)`` / ``JSON.stringify(x)`` (shortest round-trip digits, exponent only from 1e21
  and below 1e-6, ``-0`` as ``0``, ``1.0`` as ``1``).
- :func:`to_fixed` is ``x.toFixed(digits)`` (the exact binary value rounded half away from zero, not half-even).
- :func:`js_round` is ``Math.round`` (half towards +infinity).
- :func:`canonical_json` is ``canonicalJson`` of ``@agp/contracts``: JSON.stringify with every object's keys sorted by
  UTF-16 code units, no whitespace, lone surrogates escaped.
- The ``u16_*`` helpers measure and slice strings in UTF-16 code units, as JS ``length`` and ``slice`` do.
- :func:`js_keys` is the order ``Object.keys`` gives (integer-like keys ascending first, then insertion order).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Iterable, List

__all__ = ["js_number", "to_fixed", "js_round", "canonical_json", "js_string", "u16_len", "u16_slice", "u16_key", "js_keys", "iso_from_ms", "is_number"]


def is_number(v: object) -> bool:
    """Whether ``v`` is a JS number (a Python int or float, not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def js_number(x: float) -> str:
    """``String(x)`` for a finite number (``'NaN'``, ``'Infinity'``, ``'-Infinity'`` otherwise). Ints are read as doubles."""
    x = float(x)
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    mant, _, exp_s = r.partition("e")
    exp = int(exp_s) if exp_s else 0
    int_part, _, frac = mant.partition(".")
    digits = (int_part + frac).lstrip("0")
    lead = len(int_part + frac) - len((int_part + frac).lstrip("0"))
    n = len(int_part) + exp - lead
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    es = ("+" if e >= 0 else "-") + str(abs(e))
    return sign + (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + es


def to_fixed(x: float, digits: int) -> str:
    """``x.toFixed(digits)``: the exact value of the double rounded half away from zero to ``digits`` decimals."""
    x = float(x)
    if x != x:
        return "NaN"
    if abs(x) >= 1e21:
        return js_number(x)
    q = Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    s = format(q, "f")
    if x == 0 and s.startswith("-"):
        s = s[1:]
    return s


def js_round(x: float) -> float:
    """``Math.round(x)``: the nearest integer, a half rounded towards +infinity."""
    f = math.floor(x)
    return float(f + 1 if x - f >= 0.5 else f)


def u16_len(s: str) -> int:
    """``s.length`` in JS: UTF-16 code units (an ASCII string's length, without encoding it)."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def u16_slice(s: str, start: int, end: "int | None" = None) -> str:
    """``s.slice(start, end)`` in UTF-16 code units (non-negative bounds); may split a pair as JS does."""
    b = s.encode("utf-16-le", "surrogatepass")
    return b[2 * start : None if end is None else 2 * end].decode("utf-16-le", "surrogatepass")


def u16_key(s: str) -> bytes:
    """A sort key ordering strings as JS ``<`` and ``Array.prototype.sort`` do (by UTF-16 code units)."""
    return s.encode("utf-16-be", "surrogatepass")


def _index_key(k: str) -> bool:
    return k.isascii() and k.isdigit() and (k == "0" or k[0] != "0") and int(k) < 4294967295


def js_keys(d: "dict[str, Any]") -> List[str]:
    """``Object.keys(d)`` order: array-index-like keys ascending, then the others in insertion order."""
    idx = sorted((k for k in d if _index_key(k)), key=int)
    return idx + [k for k in d if not _index_key(k)]


_ESC = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def js_string(s: str) -> str:
    """``JSON.stringify(s)`` for a string (well-formed: lone surrogates as ``\\udxxx``)."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch in _ESC:
            out.append(_ESC[ch])
        elif c < 0x20 or 0xD800 <= c <= 0xDFFF:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if is_number(v):
        return js_number(v) if math.isfinite(v) else "null"
    if isinstance(v, str):
        return js_string(v)
    raise TypeError(f"not JSON: {type(v).__name__}")


def canonical_json(value: Any) -> str:
    """Canonical JSON of a JSON-like value (dict with str keys, list/tuple, str, number, bool, None): keys sorted by
    UTF-16 code units at every depth, no whitespace, numbers as JS writes them. Iterative (any depth).
    :raises TypeError: for a value JSON cannot hold."""
    out: List[str] = []
    # Each frame: (iterator over remaining items, is_dict, wrote_any)
    stack: List[List[Any]] = []

    def open_(v: Any) -> None:
        if isinstance(v, dict):
            out.append("{")
            stack.append([iter(sorted(v.items(), key=lambda kv: u16_key(kv[0]))), True, False])
        elif isinstance(v, (list, tuple)):
            out.append("[")
            stack.append([iter(v), False, False])
        else:
            out.append(_scalar(v))

    open_(value)
    while stack:
        f = stack[-1]
        it: Iterable[Any] = f[0]
        nxt = next(it, _END)  # type: ignore[call-overload]
        if nxt is _END:
            out.append("}" if f[1] else "]")
            stack.pop()
            continue
        if f[2]:
            out.append(",")
        f[2] = True
        if f[1]:
            k, v = nxt
            out.append(js_string(k))
            out.append(":")
            open_(v)
        else:
            open_(nxt)
    return "".join(out)


_END = object()


def iso_from_ms(ms: float) -> str:
    """``new Date(ms).toISOString()`` for ms since the Unix epoch (years 0–9999; fractions of a ms truncated).
    :raises ValueError: outside that range (JS throws a RangeError past ±8.64e15)."""
    t = int(math.trunc(ms))
    d = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=t)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (d.microsecond // 1000)
