"""Replays every shared decision vector (packages/policy-engine/vectors/v1, written from the TypeScript decide())
through the Python engine and compares the canonical JSON of the decision byte for byte.

Vectors tagged ``requires: ["phonenumbers"]`` are skipped when the ``phonenumbers`` package is not importable, and
``iban_national_checks`` ones always (the national BBAN checks of ibantools are not ported).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from agp.engine import HAS_PHONENUMBERS, PreparedPolicies, canonical_json, decide

VECTORS = Path(__file__).resolve().parents[3] / "packages" / "policy-engine" / "vectors" / "v1"
FILES = sorted(VECTORS.glob("*.jsonl"))


def _load(path: Path) -> List[Dict[str, Any]]:
    # Numbers as doubles, as JS reads them.
    return [json.loads(line, parse_int=float) for line in path.read_text("utf-8").split("\n") if line]


def _run(inp: Dict[str, Any], prepared: bool = False) -> Dict[str, Any]:
    table = inp.get("quota")
    quota = None if table is None else (lambda p, l: table.get(f"{p}|{l}"))
    policies = PreparedPolicies(inp["policies"]) if prepared else inp["policies"]
    return decide(policies, inp["kill_switches"], inp["action"], inp["context"], quota)


def _unsupported(v: Dict[str, Any]) -> str:
    req = v.get("requires") or []
    if "iban_national_checks" in req:
        return "national IBAN checks are not ported"
    if "phonenumbers" in req and not HAS_PHONENUMBERS:
        return "phonenumbers is not installed"
    return ""


def test_vector_files_exist() -> None:
    assert len(FILES) >= 10, f"no vectors under {VECTORS}"
    assert sum(len(_load(f)) for f in FILES) >= 3000


def test_skipped_vectors() -> None:
    """Says how many vectors this environment cannot check, and why (a visible skip, not a silent one)."""
    reasons: Dict[str, int] = {}
    for f in FILES:
        for v in _load(f):
            why = _unsupported(v)
            if why:
                reasons[why] = reasons.get(why, 0) + 1
    if reasons:
        pytest.skip("; ".join(f"{n} vectors skipped: {why}" for why, n in sorted(reasons.items())))


@pytest.mark.parametrize("prepared", [False, True], ids=["list", "prepared"])
@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_vectors(path: Path, prepared: bool) -> None:
    """Each vector decided from the policy list, and from the same list prepared (:class:`PreparedPolicies`, whose
    shortcut answers an action no policy can stop): the same canonical JSON as the TypeScript decision."""
    wrong: List[Tuple[str, str, str]] = []
    skipped = 0
    for v in _load(path):
        if _unsupported(v):
            skipped += 1
            continue
        got = canonical_json(_run(v["input"], prepared))
        want = canonical_json(v["expected"])
        if got != want:
            wrong.append((v["name"], got, want))
    if wrong:
        name, got, want = wrong[0]
        pytest.fail(f"{len(wrong)} of the vectors of {path.name} differ; first {name}:\n python {got}\n ts     {want}\n all: {[w[0] for w in wrong][:40]}")
