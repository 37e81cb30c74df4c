"""The AGP policy engine in Python: the same pure ``decide()`` as ``@agp/policy-engine`` (TypeScript), proven equal
by the shared decision vectors (packages/policy-engine/vectors/). Standard library only; ``phonenumbers`` is used
for phone-number validation when installed (see :mod:`agp.engine.pii`)."""

from .arguments import MISSING, arguments_hash, get_at, path_segments, set_at
from .decide import POLICY_DECISIONS, PreparedPolicies, RULE_RISK, USD_TOLERANCE, WARN_BUDGET_FRACTION, QuotaView, applies_to, decide
from .jsnum import canonical_json
from .results import review_result
from .pii import HAS_PHONENUMBERS, PII_CATEGORIES, field_path_of, find_pii, mask_text, redact_pii, scan_pii, walk_strings

__all__ = [
    "decide", "PreparedPolicies", "applies_to", "QuotaView", "POLICY_DECISIONS", "RULE_RISK", "USD_TOLERANCE", "WARN_BUDGET_FRACTION",
    "arguments_hash", "get_at", "set_at", "path_segments", "MISSING", "canonical_json",
    "review_result", "scan_pii", "walk_strings", "field_path_of", "find_pii", "redact_pii", "mask_text", "PII_CATEGORIES", "HAS_PHONENUMBERS",
]
