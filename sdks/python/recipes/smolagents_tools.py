"""Recipe: smolagents (``smolagents``, shape of its ``@tool`` decorator as documented for 1.x).

``@tool`` needs type hints and a docstring with an ``Args:`` section for every parameter; it makes a ``Tool`` whose
``forward`` calls the function with the arguments by name. Put ``@gov.action`` under it (the docstring and signature
are kept). A stopped call raises :class:`agp.ActionBlocked`; smolagents shows a tool's exception to the model as an
error of that step, so the agent learns the action was refused.
"""

from smolagents import tool

from agp import Governor


def build_tools(gov: Governor) -> list:
    """The support agent's tools, governed by ``gov``."""

    @tool
    @gov.action("lookup_order", estimated_cost_usd=0.001)
    def lookup_order(order_id: str) -> str:
        """Read an order and its shipping status.

        Args:
            order_id: The order's id, e.g. A-1001.
        """
        return f"order {order_id}: shipped with DHL"

    return [lookup_order]
