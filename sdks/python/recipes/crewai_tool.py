"""Recipe: CrewAI (``crewai``, shape of ``crewai.tools.BaseTool`` as documented for 1.x, docs.crewai.com v1.15).

A ``BaseTool`` subclass names the tool and implements ``_run``; CrewAI calls ``_run`` with the arguments by name
(validated by ``args_schema`` when one is given). Govern the body: ``_run`` hands its arguments to the current run's
``act`` (the innermost ``with gov.run(...)``, or the governor's only open run: CrewAI may run tools in worker threads).
A stopped call raises :class:`agp.ActionBlocked`; CrewAI reports a tool's exception to the agent as the tool's output.
"""

from typing import Any

from crewai.tools import BaseTool

from agp import Governor


def build_tool(gov: Governor) -> Any:
    """A CrewAI tool whose calls are governed by ``gov``."""

    class LookupOrder(BaseTool):
        name: str = "lookup_order"
        description: str = "Read an order and its shipping status, by order id (e.g. A-1001)."

        def _run(self, order_id: str) -> str:
            return gov.current_run().act(self.name, {"order_id": order_id}, lambda a: f"order {a['order_id']}: shipped with DHL", estimated_cost_usd=0.001)

    return LookupOrder()
