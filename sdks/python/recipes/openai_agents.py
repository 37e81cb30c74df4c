"""Recipe: the OpenAI Agents SDK (``openai-agents``, shape of its 0.x ``function_tool`` as documented for 0.6).

``@function_tool`` builds the tool's JSON schema from the function's signature, type hints and docstring, and calls
the function with the model's arguments by name. Put ``@gov.action`` under it: the framework sees the governed
function (name, docstring and signature kept), and each call is decided by the platform's policies before it runs.
A stopped call raises :class:`agp.ActionBlocked`; the SDK's default ``failure_error_function`` hands its message to
the model as the tool's output, so the model learns the action was refused (pass ``failure_error_function=None`` to
make it fail the run instead). Run the agent inside ``with gov.run(...)``: ``Runner.run`` carries the context.
"""

from agents import Agent, function_tool

from agp import Governor


def build_agent(gov: Governor) -> Agent:
    """A support agent whose tools are governed by ``gov``."""

    @function_tool
    @gov.action("lookup_order", estimated_cost_usd=0.001)
    def lookup_order(order_id: str) -> str:
        """Read an order and its shipping status.

        Args:
            order_id: The order's id, e.g. A-1001.
        """
        return f"order {order_id}: shipped with DHL"

    @function_tool
    @gov.action("issue_refund", estimated_cost_usd=0.01)
    def issue_refund(order_id: str, amount: float) -> str:
        """Refund (part of) an order, in USD.

        Args:
            order_id: The order's id.
            amount: USD to refund.
        """
        return f"refunded {amount} USD for {order_id}"

    return Agent(name="support", instructions="Answer customers; never promise what a tool refused.", tools=[lookup_order, issue_refund])


# Usage:
#   gov = Governor.connect(url=..., key=..., agent_id="support")
#   with gov.run(session_id="support-42"):
#       result = Runner.run_sync(build_agent(gov), "Refund order A-1001")
