"""Recipe: Pydantic AI (``pydantic-ai``, shape of ``Agent.tool_plain`` as documented for 1.x).

``@agent.tool_plain`` registers a function without a ``RunContext``; Pydantic AI builds its schema from the signature,
type hints and docstring, and calls it with the model's arguments by name. Put ``@gov.action`` under it. (For
``@agent.tool``, whose first parameter is the ``RunContext``, call ``gov.current_run().act(...)`` in the body with the
other arguments: the context is not JSON data.) A stopped call raises :class:`agp.ActionBlocked` out of the agent's
run. Pydantic AI runs sync tools in a worker thread: with one open run the governor finds it there; with several, make
the tool ``async def`` (awaited in the run's task) or call ``run.act`` with the run itself.
"""

from pydantic_ai import Agent

from agp import Governor


def build_agent(gov: Governor, model: str = "openai:gpt-4o-mini") -> Agent:
    """A support agent whose tools are governed by ``gov``."""
    agent = Agent(model, instructions="Answer customers; never promise what a tool refused.")

    @agent.tool_plain
    @gov.action("lookup_order", estimated_cost_usd=0.001)
    def lookup_order(order_id: str) -> str:
        """Read an order and its shipping status.

        Args:
            order_id: The order's id, e.g. A-1001.
        """
        return f"order {order_id}: shipped with DHL"

    @agent.tool_plain
    @gov.action("search_kb", estimated_cost_usd=0.002)
    async def search_kb(query: str) -> str:
        """Search the help centre.

        Args:
            query: What to look for.
        """
        return f"3 articles about {query}"

    return agent
