"""The personal-data (PII) scanner of the ``pii`` guardrail (``pii.ts``): emails, phone numbers, payment cards, IBANs,
US social security numbers, IP addresses and secrets in every string of an action's arguments.

Each category is a candidate regex, then a validator, exactly as in TypeScript. Two validators lean on metadata:

- phone: ``libphonenumber-js`` (max metadata) in TypeScript; here the ``phonenumbers`` package when it can be
  imported (``is_valid_number`` of the number parsed with region US). Its metadata release may differ from
  libphonenumber-js's, so a rare number can be judged differently. Without ``phonenumbers`` a fallback applies:
  a NANP number (10 digits, or 11 starting with 1, area code and exchange starting 2–9) or a ``+`` number of another
  country with 8–15 digits is valid. The fallback is approximate: vectors whose answer depends on it are tagged
  ``phonenumbers``.
- IBAN: the country table of ``ibantools`` (length, BBAN format; ``iban_specs.json``, exported from it) and the
  ISO 13616 mod-97 checksum. The national BBAN check digits ibantools verifies for 17 countries (BE, FR, ES, …) are
  not ported: such an IBAN passing mod-97 counts as valid here (vectors tagged ``iban_national_checks``).

Lengths, slices and the path cut are in UTF-16 code units, as in JS.
"""

from __future__ import annotations

import json
import math
import re
from importlib import resources
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

from .jsnum import js_keys, u16_len, u16_slice

try:  # optional: libphonenumber's metadata
    import phonenumbers as _phonenumbers  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the environment
    _phonenumbers = None

__all__ = [
    "PII_CATEGORIES",
    "HAS_PHONENUMBERS",
    "SECRET_ENTROPY_BITS",
    "PII_MAX_VALUES",
    "PII_MAX_CHARS",
    "PII_MAX_MATCHES",
    "shannon_entropy",
    "luhn_valid",
    "mask_text",
    "find_pii",
    "redact_pii",
    "scan_pii",
]

#: The categories, in the contracts' order.
PII_CATEGORIES: Tuple[str, ...] = ("email", "phone", "payment_card", "iban", "us_ssn", "ip_address", "secret")
#: Whether phone numbers are validated by ``phonenumbers`` (True) or the documented fallback (False).
HAS_PHONENUMBERS: bool = _phonenumbers is not None
SECRET_ENTROPY_BITS = 4.2
PII_MAX_VALUES = 100_000
PII_MAX_CHARS = 1_048_576
PII_MAX_MATCHES = 1000
_MAX_PATH = 1024

_A = re.ASCII
_EMAIL_DOMAIN = re.compile(r"(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])", _A)
_LOCAL_CHAR = re.compile(r"[A-Za-z0-9._%+-]", _A)
_PHONE = re.compile(r"(?:\+\d|\(\d|(?<![\w.+-])\d)[\d ().-]{5,20}\d(?![\w])", _A)
_CARD = re.compile(r"(?<![\w.-])[2-6]\d(?:[ -]?\d){11,17}(?![\w])", _A)
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])", _A)
_SSN = re.compile(r"(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w-])", _A)
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])", _A)
_IPV6 = re.compile(r"(?<![\w:.])[0-9A-Fa-f]{0,4}:[0-9A-Fa-f:.]{2,44}(?![\w:])", _A)
_SECRET_PREFIXED = re.compile(
    "|".join(
        [
            r"\bsk-(?:proj-|ant-|live-)?[A-Za-z0-9_-]{20,}",
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",
            r"\bgithub_pat_[A-Za-z0-9_]{22,}",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
            r"\b[rs]k_live_[A-Za-z0-9]{16,}",
            r"\bAIza[0-9A-Za-z_-]{35}",
            r"\bglpat-[A-Za-z0-9_-]{20,}",
            r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
            r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----",
        ]
    ),
    _A,
)
_HAS_DIGIT = re.compile(r"\d", _A)
_MAYBE_IPV4 = re.compile(r"\d\.\d", _A)
_MAYBE_IPV6 = re.compile(r"[0-9A-Fa-f:]:[0-9A-Fa-f:]", _A)
_MAYBE_PREFIXED = re.compile(r"sk-|gh[pousr]_|github_pat_|AKIA|ASIA|xox|k_live_|AIza|glpat-|eyJ|-----BEGIN", _A)

# node:net isIP (Node's own regexes).
_V4SEG = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])"
_V4STR = rf"(?:{_V4SEG}\.){{3}}{_V4SEG}"
_V6SEG = r"(?:[0-9a-fA-F]{1,4})"
_IS_IPV4 = re.compile(rf"^{_V4STR}\Z", _A)
_IS_IPV6 = re.compile(
    "^(?:"
    rf"(?:{_V6SEG}:){{7}}(?:{_V6SEG}|:)|"
    rf"(?:{_V6SEG}:){{6}}(?:{_V4STR}|:{_V6SEG}|:)|"
    rf"(?:{_V6SEG}:){{5}}(?::{_V4STR}|(?::{_V6SEG}){{1,2}}|:)|"
    rf"(?:{_V6SEG}:){{4}}(?:(?::{_V6SEG}){{0,1}}:{_V4STR}|(?::{_V6SEG}){{1,3}}|:)|"
    rf"(?:{_V6SEG}:){{3}}(?:(?::{_V6SEG}){{0,2}}:{_V4STR}|(?::{_V6SEG}){{1,4}}|:)|"
    rf"(?:{_V6SEG}:){{2}}(?:(?::{_V6SEG}){{0,3}}:{_V4STR}|(?::{_V6SEG}){{1,5}}|:)|"
    rf"(?:{_V6SEG}:){{1}}(?:(?::{_V6SEG}){{0,4}}:{_V4STR}|(?::{_V6SEG}){{1,6}}|:)|"
    rf"(?::(?:(?::{_V6SEG}){{0,5}}:{_V4STR}|(?::{_V6SEG}){{1,7}}|:))"
    r")(?:%[0-9a-zA-Z-.:]{1,})?\Z",
    _A,
)

_IBAN_SPECS: Dict[str, Dict[str, Any]] = json.loads(resources.files(__package__).joinpath("iban_specs.json").read_text("utf-8"))
_BBAN_RE = {c: re.compile(s["bban_regexp"]) for c, s in _IBAN_SPECS.items()}

Span = Tuple[int, int, str]


def shannon_entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per UTF-16 code unit (0 for an empty string)."""
    units = s.encode("utf-16-le", "surrogatepass")
    n = len(units) // 2
    counts: Dict[bytes, int] = {}
    for i in range(n):
        u = units[2 * i : 2 * i + 2]
        counts[u] = counts.get(u, 0) + 1
    h = 0.0
    for c in counts.values():
        p = c / n
        h -= p * math.log2(p)
    return h


def luhn_valid(digits: str) -> bool:
    """Whether a string of ASCII digits passes the Luhn (mod 10) check (False if empty or not all digits)."""
    total = 0
    double = False
    for ch in reversed(digits):
        d = ord(ch) - 48
        if d < 0 or d > 9:
            return False
        if double:
            d *= 2
            if d > 9:
                d -= 9
        total += d
        double = not double
    return len(digits) > 0 and total % 10 == 0


def mask_text(text: str, category: Optional[str] = None) -> str:
    """``text`` partly masked: a payment card keeps its last 4 digits; anything else its first 2 and last 2
    characters (code points, as the TypeScript engine counts them; nothing for 6 or fewer), the rest ``*`` (at most 12)."""
    if category == "payment_card":
        digits = re.sub(r"\D", "", text, flags=_A)
        return "*" * max(0, min(12, len(digits) - 4)) + digits[-4:]
    n = len(text)
    if n <= 6:
        return "*" * n
    return text[:2] + "*" * min(12, n - 4) + text[-2:]


def _overlaps(spans: List[Span], start: int, end: int) -> bool:
    return any(start < e and s < end for s, e, _ in spans)


def _collect(rx: "re.Pattern[str]", text: str, category: str, spans: List[Span], accept: Callable[["re.Match[str]"], bool]) -> None:
    for m in rx.finditer(text):
        if not _overlaps(spans, m.start(), m.end()) and accept(m):
            spans.append((m.start(), m.end(), category))


def _collect_emails(text: str, spans: List[Span]) -> None:
    at = text.find("@")
    while at != -1:
        start = at
        while start > 0 and at - start < 64 and _LOCAL_CHAR.match(text[start - 1]):
            start -= 1
        if start != at:
            m = _EMAIL_DOMAIN.match(text, at + 1)
            if m is not None and not _overlaps(spans, start, m.end()):
                spans.append((start, m.end(), "email"))
        at = text.find("@", at + 1)


def _valid_ssn(m: "re.Match[str]") -> bool:
    area = m.group(1)
    return area != "000" and area != "666" and area[0] != "9" and m.group(2) != "00" and m.group(3) != "0000"


def _valid_card(m: "re.Match[str]") -> bool:
    digits = re.sub(r"[ -]", "", m.group(0))
    return 13 <= len(digits) <= 19 and luhn_valid(digits)


def _valid_iban(m: "re.Match[str]") -> bool:
    iban = m.group(0).replace(" ", "").replace("-", "").upper()
    cc = iban[:2]
    spec = _IBAN_SPECS.get(cc)
    if spec is None or spec["chars"] != len(iban) or not re.fullmatch(r"[0-9]{2}", iban[2:4], _A):
        return False
    bban = iban[4:]
    if spec["chars"] - 4 != len(bban) or _BBAN_RE[cc].search(bban) is None:
        return False
    code = "".join(str(ord(c) - 55) if ord(c) >= 65 else c for c in bban + cc + "00")
    return 98 - int(code) % 97 == int(iban[2:4])


def _fallback_phone(t: str) -> bool:
    digits = re.sub(r"\D", "", t, flags=_A)
    if t.startswith("+") and not t.startswith("+1"):
        return 8 <= len(digits) <= 15
    if len(digits) == 11 and digits[0] == "1":
        digits = digits[1:]
    return len(digits) == 10 and digits[0] in "23456789" and digits[3] in "23456789"


def _valid_phone(m: "re.Match[str]") -> bool:
    t = m.group(0)
    if t[0] != "+" and not re.search(r"[ ().-]", t):
        return False
    n = len(re.sub(r"\D", "", t, flags=_A))
    if n < 7 or n > 15:
        return False
    if _phonenumbers is None:
        return _fallback_phone(t)
    try:
        return bool(_phonenumbers.is_valid_number(_phonenumbers.parse(t, "US")))
    except Exception:
        return False


def _token_class(c: int) -> int:
    if 65 <= c <= 90:
        return 1
    if 97 <= c <= 122:
        return 2
    if 48 <= c <= 57:
        return 4
    return 8 if c in (43, 95, 61, 45) else 0


def _collect_tokens(text: str, spans: List[Span]) -> None:
    start = 0
    classes = 0
    n = len(text)
    for i in range(n + 1):
        k = _token_class(ord(text[i])) if i < n else 0
        if k != 0:
            if classes == 0:
                start = i
            classes |= k | 16
            continue
        if classes != 0:
            length = i - start
            if 32 <= length <= 512 and (classes & 7) == 7 and not _overlaps(spans, start, i) and shannon_entropy(text[start:i]) >= SECRET_ENTROPY_BITS:
                spans.append((start, i, "secret"))
            classes = 0


def _digit_count(text: str) -> int:
    n = 0
    for _ in re.finditer(r"\d", text, _A):
        n += 1
        if n >= 13:
            break
    return n


def find_pii(text: str, wanted: Iterable[str]) -> List[Tuple[int, int, str]]:
    """The PII spans ``(start, end, category)`` of one string for the wanted categories, in the order found (indices
    in code points of the Python string). Prefixed secrets, email, IBAN, card, SSN, IP, phone, entropy secrets; a
    later category never claims text an earlier one did."""
    w = frozenset(wanted)
    spans: List[Span] = []
    digit = _HAS_DIGIT.search(text) is not None
    length = u16_len(text)
    if length >= 20 and "secret" in w and _MAYBE_PREFIXED.search(text):
        _collect(_SECRET_PREFIXED, text, "secret", spans, lambda m: True)
    if "email" in w:
        _collect_emails(text, spans)
    if digit:
        digits = _digit_count(text)
        if digits >= 2 and "iban" in w and length >= 15:
            _collect(_IBAN, text, "iban", spans, _valid_iban)
        if digits >= 13 and "payment_card" in w:
            _collect(_CARD, text, "payment_card", spans, _valid_card)
        if digits >= 9 and "us_ssn" in w:
            _collect(_SSN, text, "us_ssn", spans, _valid_ssn)
        if "ip_address" in w:
            if digits >= 4 and _MAYBE_IPV4.search(text):
                _collect(_IPV4, text, "ip_address", spans, lambda m: _IS_IPV4.match(m.group(0)) is not None)
            if _MAYBE_IPV6.search(text):
                _collect(_IPV6, text, "ip_address", spans, lambda m: _IS_IPV6.match(m.group(0)) is not None)
        if digits >= 7 and "phone" in w:
            _collect(_PHONE, text, "phone", spans, _valid_phone)
    elif "ip_address" in w and "::" in text:
        _collect(_IPV6, text, "ip_address", spans, lambda m: _IS_IPV6.match(m.group(0)) is not None)
    if length >= 32 and digit and "secret" in w:
        _collect_tokens(text, spans)
    return spans


def redact_pii(text: str, wanted: Iterable[str]) -> str:
    """``text`` with every PII span of the wanted categories replaced by ``[REDACTED:<category>]``."""
    spans = sorted(find_pii(text, wanted), key=lambda s: s[0])
    if not spans:
        return text
    out = []
    at = 0
    for s, e, c in spans:
        out.append(text[at:s] + f"[REDACTED:{c}]")
        at = e
    return "".join(out) + text[at:]


def _field_path(parts_rev: List[str]) -> str:
    parts: List[str] = []
    length = 0
    for k in parts_rev:
        if length > _MAX_PATH:
            break
        parts.append(k)
        length += u16_len(k) + 1
    path = ".".join(reversed(parts))
    n = u16_len(path)
    return path if n <= _MAX_PATH else "…" + u16_slice(path, n - (_MAX_PATH - 1))


def scan_pii(args: Any, wanted: Iterable[str]) -> Dict[str, Any]:
    """Scan every string of ``args`` (nested dicts and lists; not keys) for the wanted categories, depth first, keys
    in JS ``Object.keys`` order. Bounded: at most 100,000 values, 1,048,576 UTF-16 units of strings, 1,000 matches.
    :returns: ``{"matches": [{"category", "field_path", "matched_text"}], "truncated": bool}`` (text masked)."""
    w: FrozenSet[str] = frozenset(wanted)
    matches: List[Dict[str, str]] = []
    if not isinstance(args, (dict, list)) or not w:
        return {"matches": matches, "truncated": False}
    # Each node: (value, path as a linked tuple (key, parent) or None)
    values: List[Any] = [args]
    nodes: List[Any] = [None]
    visited = 0
    chars = 0
    truncated = False
    full = False
    while values:
        v = values.pop()
        node = nodes.pop()
        visited += 1
        if visited > PII_MAX_VALUES:
            truncated = True
            break
        if isinstance(v, str):
            if node is None:
                continue
            n = u16_len(v)
            chars += n
            if chars > PII_MAX_CHARS:
                truncated = True
                break
            if n < 7:
                continue
            spans = find_pii(v, w)
            if not spans:
                continue
            rev: List[str] = []
            p = node
            while p is not None:
                rev.append(p[0])
                p = p[1]
            fp = _field_path(rev)
            for s, e, c in spans:
                if len(matches) >= PII_MAX_MATCHES:
                    full = True
                    break
                matches.append({"category": c, "field_path": fp, "matched_text": mask_text(v[s:e], c)})
            if full:
                break
        elif isinstance(v, list):
            if visited + len(values) + len(v) > PII_MAX_VALUES:
                truncated = True
                break
            for i in range(len(v) - 1, -1, -1):
                values.append(v[i])
                nodes.append((str(i), node))
        elif isinstance(v, dict):
            keys = js_keys(v)
            if visited + len(values) + len(keys) > PII_MAX_VALUES:
                truncated = True
                break
            for k in reversed(keys):
                values.append(v[k])
                nodes.append((k, node))
    return {"matches": matches, "truncated": truncated or full}


#: Where a string sits in the arguments: ``(key, parent place)``, the key a property name or an array index as a
#: string, the parent None at the top (``StringPlace`` of the TypeScript engine).
StringPlace = Tuple[str, Any]


def field_path_of(place: StringPlace) -> str:
    """The dotted path of a place (``messages.2.content``), cut to 1024 UTF-16 units from the end with a leading
    ``…`` (``fieldPathOf`` of the TypeScript engine)."""
    rev: List[str] = []
    p: Any = place
    while p is not None:
        rev.append(p[0])
        p = p[1]
    return _field_path(rev)


def walk_strings(args: Any, visit: Callable[[str, StringPlace], bool]) -> bool:
    """Visit every string of ``args`` (nested dicts and lists; not keys, not ``args`` itself), depth first, keys in
    JS ``Object.keys`` order, with its place (:func:`field_path_of` turns it into the dotted path). ``visit`` returns
    False to stop. Bounded as :func:`scan_pii`: at most 100,000 values and 1,048,576 UTF-16 units of strings
    (``walkStrings`` of the TypeScript engine).

    :returns: True when a bound stopped the walk early (later strings were not visited); False otherwise, including
        when ``visit`` stopped it."""
    if not isinstance(args, (dict, list)):
        return False
    values: List[Any] = [args]
    nodes: List[Any] = [None]
    visited = 0
    chars = 0
    while values:
        v = values.pop()
        node = nodes.pop()
        visited += 1
        if visited > PII_MAX_VALUES:
            return True
        if isinstance(v, str):
            if node is None:
                continue
            chars += u16_len(v)
            if chars > PII_MAX_CHARS:
                return True
            if not visit(v, node):
                return False
        elif isinstance(v, list):
            if visited + len(values) + len(v) > PII_MAX_VALUES:
                return True
            for i in range(len(v) - 1, -1, -1):
                values.append(v[i])
                nodes.append((str(i), node))
        elif isinstance(v, dict):
            keys = js_keys(v)
            if visited + len(values) + len(keys) > PII_MAX_VALUES:
                return True
            for k in reversed(keys):
                values.append(v[k])
                nodes.append((k, node))
    return False
