"""Reading and rewriting an action's arguments by dotted path, and their canonical hash (``arguments.ts``).

Paths are dotted (``amount``, ``payment.amount``, ``messages.2.content``): a segment that is a canonical array index
(``2``, not ``02``) indexes a list. A rewrite copies only the containers on the path; the caller's arguments are
never changed. Iterative throughout.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, List, Mapping, Optional, Sequence

from .jsnum import canonical_json

__all__ = ["MISSING", "path_segments", "get_at", "set_at", "arguments_hash"]

#: What :func:`get_at` answers for a path that leads nowhere (JS ``undefined``).
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
_INDEX = re.compile(r"(?:0|[1-9][0-9]*)\Z")


def path_segments(path: str) -> List[str]:
    """The segments of a dotted path (``'a.b.0'`` → ``['a', 'b', '0']``)."""
    return path.split(".")


def _child(container: Any, segment: str) -> Any:
    if isinstance(container, list):
        if _INDEX.match(segment) and int(segment) < len(container):
            return container[int(segment)]
        return MISSING
    if isinstance(container, dict):
        return container[segment] if segment in container else MISSING
    return MISSING


def get_at(args: Any, segments: Sequence[str]) -> Any:
    """The value at ``segments`` in ``args``, or :data:`MISSING` when the path leads nowhere."""
    v = args
    for s in segments:
        v = _child(v, s)
        if v is MISSING:
            return MISSING
    return v


def set_at(args: Any, segments: Sequence[str], value: Any) -> Any:
    """``args`` with the value at ``segments`` replaced by ``value``: the containers on the path are copied (shallow),
    the rest shared. When the path does not exist, ``args`` is returned unchanged."""
    if not segments:
        return args
    chain = [args]
    for s in segments[:-1]:
        nxt = _child(chain[-1], s)
        if not isinstance(nxt, (dict, list)):
            return args
        chain.append(nxt)
    if _child(chain[-1], segments[-1]) is MISSING:
        return args
    replacement = value
    for i in range(len(segments) - 1, -1, -1):
        c = chain[i]
        copy: Any = list(c) if isinstance(c, list) else dict(c)
        copy[int(segments[i]) if isinstance(c, list) else segments[i]] = replacement
        replacement = copy
    return replacement


def arguments_hash(args: Optional[Mapping[str, Any]]) -> str:
    """Hex SHA-256 of the canonical JSON (UTF-8) of the arguments; ``None`` hashes as ``{}``. What the loop and
    idempotency guardrails compare; equal to the TypeScript ``argumentsHash`` for the same JSON value."""
    return hashlib.sha256(canonical_json({} if args is None else args).encode("utf-8")).hexdigest()
