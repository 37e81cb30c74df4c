"""Recipe: LangChain and LangGraph (``langchain-core``, shape of ``langchain_core.tools.tool`` as documented for 0.3
and 1.0; LangGraph's ``ToolNode`` and ``create_react_agent`` take the same tools).

``@tool`` makes a ``StructuredTool`` from the function's signature and docstring; ``tool.invoke({...})`` calls it with
the arguments by name. Put ``@gov.action`` under it. A stopped call raises :class:`agp.ActionBlocked` out of
``invoke``; to hand the refusal to the model instead, give the action ``on_blocked="return"`` and return a message
for a :class:`agp.BlockedResult` (as ``issue_refund`` does here). LangChain runs a sync tool of an async graph in an
executor that copies the context, so the run of ``with gov.run(...)`` is found there too.
"""

from langchain_core.tools import tool

from agp import BlockedResult, Governor


def build_tools(gov: Governor) -> list:
    """The support agent's tools, governed by ``gov``."""

    @tool
    @gov.action("lookup_order", estimated_cost_usd=0.001)
    def lookup_order(order_id: str) -> str:
        """Read an order and its shipping status."""
        return f"order {order_id}: shipped with DHL"

    refund = gov.wrap_tool(lambda order_id, amount: f"refunded {amount} USD for {order_id}", "issue_refund", estimated_cost_usd=0.01, on_blocked="return")

    @tool
    def issue_refund(order_id: str, amount: float) -> str:
        """Refund (part of) an order, in USD."""
        out = refund(order_id=order_id, amount=amount)
        return f"refused: {out.decision['reason']}" if isinstance(out, BlockedResult) else out

    return [lookup_order, issue_refund]
