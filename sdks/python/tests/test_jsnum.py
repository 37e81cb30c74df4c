"""The JavaScript number rules of agp.engine.jsnum against what Node prints (values taken from Node 20), and the
canonical JSON encoder against JSON.stringify's escaping and UTF-16 key order."""

from __future__ import annotations

import pytest

from agp.engine.jsnum import canonical_json, iso_from_ms, js_number, js_round, to_fixed

NUMBERS = [(0.30000000000000004, '0.30000000000000004'), (1e+21, '1e+21'), (1e-07, '1e-7'), (123456789012345680000, '123456789012345680000'), (5, '5'), (0, '0'), (1.5e-06, '0.0000015'), (1e-06, '0.000001'), (2.5, '2.5'), (1e+300, '1e+300'), (100, '100'), (-1.25e-07, '-1.25e-7'), (0.1, '0.1'), (0.3333333333333333, '0.3333333333333333'), (9007199254740994, '9007199254740994'), (-123.456, '-123.456'), (5e-324, '5e-324'), (1.7976931348623157e+308, '1.7976931348623157e+308')]
FIXED = [(0.0078125, 6, '0.007813'), (1.005, 2, '1.00'), (-1e-09, 6, '-0.000000'), (0.5, 0, '1'), (1.45, 1, '1.4'), (123.4564995, 6, '123.456500'), (2.675, 2, '2.67'), (-2.5, 0, '-3'), (1e+21, 2, '1e+21'), (0, 6, '0.000000')]
ROUND = [(2.5, 3), (-2.5, -2), (0.49999999999999994, 0), (-0.5, 0), (1.5, 2), (-1.5, -1)]


@pytest.mark.parametrize("x,text", NUMBERS)
def test_js_number(x: float, text: str) -> None:
    assert js_number(x) == text


@pytest.mark.parametrize("x,digits,text", FIXED)
def test_to_fixed(x: float, digits: int, text: str) -> None:
    assert to_fixed(x, digits) == text


@pytest.mark.parametrize("x,rounded", ROUND)
def test_js_round(x: float, rounded: float) -> None:
    assert js_round(x) == rounded


def test_canonical_json() -> None:
    value = {"b": [1, 2.0, {"z": None, "a": "\ud800x\n\u0001\u2028"}], "a": True, "\U0001F600": 1, "\uffff": 2, "-0": -0.0}
    assert canonical_json(value) == '{"-0":0,"a":true,"b":[1,2,{"a":"\\ud800x\\n\\u0001\u2028","z":null}],"\U0001F600":1,"\uffff":2}'


def test_iso_from_ms() -> None:
    assert iso_from_ms(1795000000123.9) == "2026-11-18T11:06:40.123Z"
    assert iso_from_ms(0) == "1970-01-01T00:00:00.000Z"
