"""AGP (Agent Governance Platform) SDK for Python: :class:`Governor` governs an agent's actions locally with the
policy engine (:mod:`agp.engine`, the same decisions as the TypeScript engine) and reports them to the platform.
Source: docs/sdk-python.md."""

__version__ = "0.1.0"

from .errors import ActionBlocked, AgpHttpError, AgpNetworkError, ApprovalRejected, BlockedResult  # noqa: E402
from .schema import ArgumentsInvalid  # noqa: E402
from .governor import ActContext, AsyncGovernor, Governor, Run  # noqa: E402
from .moderation import ModerationError, ModerationProvider, moderation_category, openai_moderation  # noqa: E402

__all__ = ["Governor", "AsyncGovernor", "Run", "ActContext", "ActionBlocked", "ApprovalRejected", "BlockedResult", "AgpHttpError", "AgpNetworkError", "ArgumentsInvalid",
           "openai_moderation", "moderation_category", "ModerationProvider", "ModerationError", "__version__"]
