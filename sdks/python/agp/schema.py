"""Arguments checked against the agent's registered action definitions (``parameters``, a JSON Schema) before any
decision, as ``schema.ts`` of the TypeScript SDK does with Ajv (draft-07 semantics; a ``$schema`` keyword is
ignored). With the ``jsonschema`` package installed (any 4.x) its ``Draft7Validator`` checks the whole of draft-07;
without it (the core stays standard-library only) a small validator checks the keywords agents' tool schemas use:
``type`` (one or a list; ``integer`` as JSON Schema counts it), ``properties``, ``required``, ``additionalProperties``
(false or a schema), ``items`` (one schema), ``enum``, ``const``, ``minimum``/``maximum``/``exclusiveMinimum``/
``exclusiveMaximum``, ``minLength``/``maxLength``, ``pattern``, ``minItems``/``maxItems``, ``anyOf``/``oneOf``/
``allOf``; any other keyword is not checked (:data:`CHECKED_KEYWORDS`; ``status()['schemas']`` says which engine).
Source: docs/sdk.md §Bad input; docs/sdk-python.md (Argument schemas)."""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

try:  # optional: the whole of draft-07 when installed
    import jsonschema as _jsonschema  # type: ignore[import-untyped]
except Exception:  # pragma: no cover - depends on the environment
    _jsonschema = None

__all__ = ["ActionSchemas", "ArgumentsInvalid", "ENGINE", "CHECKED_KEYWORDS"]

#: Which validator checks arguments here: ``jsonschema`` (draft-07, whole) or ``builtin`` (the subset below).
ENGINE = "jsonschema" if _jsonschema is not None else "builtin"
#: The keywords the built-in validator checks (without ``jsonschema``).
CHECKED_KEYWORDS = ("type", "properties", "required", "additionalProperties", "items", "enum", "const", "minimum", "maximum", "exclusiveMinimum",
                    "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "anyOf", "oneOf", "allOf")


class ArgumentsInvalid(ValueError):
    """Arguments that fail the registered action's JSON Schema: the message names the action and each bad field as a
    dotted path (``items.0.sku: is required``); ``fields`` lists the paths, ``action_name`` names the action."""

    def __init__(self, action_name: str, problems: List[Tuple[str, str]]):
        super().__init__(f"invalid arguments for {action_name}: " + "; ".join(f"{f}: {m}" for f, m in problems))
        self.action_name = action_name
        self.fields = [f for f, _ in problems]


def _field(path: Sequence[Any]) -> str:
    return ".".join(str(p) for p in path) or "(arguments)"


def _allowed(values: Sequence[Any]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)


# ---- the built-in validator ------------------------------------------------------------------------------------
_TYPES: Dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
}


def _equal(a: Any, b: Any) -> bool:
    """JSON equality (``1 == 1.0``; ``True`` is not ``1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _check(schema: Any, v: Any, path: List[Any], out: List[Tuple[str, str]]) -> None:
    """Append (field, message) for each keyword of ``schema`` that ``v`` fails (all errors, as Ajv's ``allErrors``)."""
    if schema is False:
        out.append((_field(path), "is not allowed"))
        return
    if not isinstance(schema, dict):
        return
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_TYPES.get(x, lambda _v: True)(v) for x in types):
            out.append((_field(path), f"must be {' or '.join(str(x) for x in types)}"))
            return
    if "enum" in schema and isinstance(schema["enum"], list) and not any(_equal(v, e) for e in schema["enum"]):
        out.append((_field(path), f"must be equal to one of the allowed values (allowed: {_allowed(schema['enum'])})"))
    if "const" in schema and not _equal(v, schema["const"]):
        out.append((_field(path), f"must be equal to constant {json.dumps(schema['const'], ensure_ascii=False)}"))
    if _TYPES["number"](v):
        for kw, ok, word in (("minimum", lambda a, b: a >= b, ">="), ("maximum", lambda a, b: a <= b, "<="),
                             ("exclusiveMinimum", lambda a, b: a > b, ">"), ("exclusiveMaximum", lambda a, b: a < b, "<")):
            b = schema.get(kw)
            if isinstance(b, (int, float)) and not isinstance(b, bool) and not ok(v, b):
                out.append((_field(path), f"must be {word} {b}"))
    if isinstance(v, str):
        n = len(v)  # code points, as JSON Schema and Ajv count them
        if isinstance(schema.get("minLength"), int) and n < schema["minLength"]:
            out.append((_field(path), f"must NOT have fewer than {schema['minLength']} characters"))
        if isinstance(schema.get("maxLength"), int) and n > schema["maxLength"]:
            out.append((_field(path), f"must NOT have more than {schema['maxLength']} characters"))
        if isinstance(schema.get("pattern"), str):
            try:
                if re.search(schema["pattern"], v) is None:
                    out.append((_field(path), f"must match pattern \"{schema['pattern']}\""))
            except re.error:
                pass
    if isinstance(v, list):
        if isinstance(schema.get("minItems"), int) and len(v) < schema["minItems"]:
            out.append((_field(path), f"must NOT have fewer than {schema['minItems']} items"))
        if isinstance(schema.get("maxItems"), int) and len(v) > schema["maxItems"]:
            out.append((_field(path), f"must NOT have more than {schema['maxItems']} items"))
        if isinstance(schema.get("items"), (dict, bool)):
            for i, x in enumerate(v):
                _check(schema["items"], x, path + [i], out)
    if isinstance(v, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        for k in schema.get("required") or []:
            if k not in v:
                out.append((_field(path + [k]), "is required"))
        for k, sub in props.items():
            if k in v:
                _check(sub, v[k], path + [k], out)
        extra = schema.get("additionalProperties")
        if extra is not None and extra is not True:
            for k in v:
                if k in props:
                    continue
                if extra is False:
                    out.append((_field(path + [k]), "is not an allowed field"))
                else:
                    _check(extra, v[k], path + [k], out)
    for sub in schema.get("allOf") or []:
        _check(sub, v, path, out)
    for kw in ("anyOf", "oneOf"):
        subs = schema.get(kw)
        if isinstance(subs, list) and subs:
            passing = sum(1 for sub in subs if not _errors(sub, v, path))
            if passing == 0 or (kw == "oneOf" and passing > 1):
                out.append((_field(path), "must match exactly one schema in oneOf" if kw == "oneOf" else "must match a schema in anyOf"))


def _errors(schema: Any, v: Any, path: List[Any]) -> List[Tuple[str, str]]:
    out: List[Tuple[str, str]] = []
    _check(schema, v, path, out)
    return out


def _describe(e: Any) -> Tuple[str, str]:
    """One ``jsonschema`` error as a dotted field path and a message (as the TypeScript SDK describes Ajv's)."""
    base = list(e.absolute_path)
    if e.validator == "required" and isinstance(e.instance, dict):
        missing = next((p for p in e.validator_value if p not in e.instance and repr(p) in e.message), None)
        if missing is not None:
            return _field(base + [missing]), "is required"
    if e.validator == "additionalProperties" and e.validator_value is False and isinstance(e.instance, dict):
        props = e.schema.get("properties") or {}
        pats = list((e.schema.get("patternProperties") or {}).keys())
        extra = next((k for k in e.instance if k not in props and not any(re.search(p, k) for p in pats)), None)
        if extra is not None:
            return _field(base + [extra]), "is not an allowed field"
    if e.validator == "enum":
        return _field(base), f"must be equal to one of the allowed values (allowed: {_allowed(e.validator_value)})"
    return _field(base), e.message


class ActionSchemas:
    """Compiled validators by action name, from the ``actions`` given to ``Governor.connect``.

    :raises TypeError: naming the action when a definition's ``parameters`` is not a JSON Schema (an object, or with
        ``jsonschema`` installed one that fails its meta-schema).
    """

    def __init__(self, actions: Sequence[Mapping[str, Any]]):
        self._validators: Dict[str, Any] = {}
        #: Which validator checks the arguments: ``jsonschema`` or ``builtin``.
        self.engine = "jsonschema" if _jsonschema is not None else "builtin"
        for a in actions:
            params = a.get("parameters")
            if params is None:
                self._validators[a["name"]] = None
                continue
            if not isinstance(params, (dict, bool)):
                raise TypeError(f"action {a['name']}: parameters is not a valid JSON Schema: expected an object, got {type(params).__name__}")
            schema = {k: v for k, v in params.items() if k != "$schema"} if isinstance(params, dict) else params
            if self.engine == "jsonschema":
                try:
                    _jsonschema.Draft7Validator.check_schema(schema)
                except _jsonschema.SchemaError as err:
                    raise TypeError(f"action {a['name']}: parameters is not a valid JSON Schema: {err.message}") from None
                self._validators[a["name"]] = _jsonschema.Draft7Validator(schema)
            else:
                self._validators[a["name"]] = schema

    def check(self, name: str, args: Dict[str, Any]) -> None:
        """Check ``args`` (JSON data) against action ``name``'s schema; nothing for an action without one.

        :raises ArgumentsInvalid: (a ``ValueError``) naming the action and each bad field.
        """
        v = self._validators.get(name)
        if v is None:
            return
        if self.engine == "jsonschema":
            problems = [_describe(e) for e in sorted(v.iter_errors(args), key=lambda e: [str(p) for p in e.absolute_path])]
        else:
            problems = _errors(v, args, [])
        if problems:
            raise ArgumentsInvalid(name, list(dict.fromkeys(problems)))
