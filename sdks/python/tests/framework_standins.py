"""Stand-ins for the agent frameworks the recipes (sdks/python/recipes) are written for, which cannot be installed
here: each is the small part of the framework a recipe touches, doing what the framework does with a function tool —
read its name, docstring, signature and type hints (``typing.get_type_hints``, as the frameworks build a tool's JSON
schema) and call it with the model's arguments by name. Installed as modules (``agents``, ``langchain_core.tools``,
``crewai.tools``, ``pydantic_ai``, ``smolagents``) by :func:`install` for tests/test_recipes.py only."""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import types
import typing
from typing import Any, Callable, Dict, List


def _schema(fn: Callable[..., Any]) -> Dict[str, Any]:
    """A tool's parameters as the frameworks derive them: each parameter's type from the type hints."""
    hints = typing.get_type_hints(fn)
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    props = {p: {"type": names.get(hints.get(p), "object")} for p in inspect.signature(fn).parameters}
    return {"type": "object", "properties": props, "required": list(props)}


def _description(fn: Callable[..., Any]) -> str:
    return (inspect.getdoc(fn) or "").split("\n\n")[0]


# ---- openai-agents: function_tool, FunctionTool, Agent -----------------------------------------------------------
class FunctionTool:
    def __init__(self, fn: Callable[..., Any]):
        self.name = fn.__name__
        self.description = _description(fn)
        self.params_json_schema = _schema(fn)
        self._fn = fn

    async def on_invoke_tool(self, ctx: Any, input: str) -> Any:
        """The model's arguments (a JSON string) → the function by name; an error becomes the tool's output."""
        args = json.loads(input)
        try:
            out = self._fn(**args)
            return await out if inspect.isawaitable(out) else out
        except Exception as err:  # the SDK's default failure_error_function
            return f"An error occurred while running the tool. Please try again. Error: {err}"


def function_tool(fn: Callable[..., Any]) -> FunctionTool:
    return FunctionTool(fn)


class OpenAIAgent:
    def __init__(self, name: str, instructions: str = "", tools: Any = ()):
        self.name = name
        self.instructions = instructions
        self.tools = list(tools)


# ---- langchain_core.tools.tool -----------------------------------------------------------------------------------
class StructuredTool:
    def __init__(self, fn: Callable[..., Any]):
        self.name = fn.__name__
        self.description = inspect.getdoc(fn) or ""
        self.args = _schema(fn)["properties"]
        self.func = fn

    def invoke(self, input: Dict[str, Any]) -> Any:
        return self.func(**input)


def lc_tool(fn: Callable[..., Any]) -> StructuredTool:
    return StructuredTool(fn)


# ---- crewai.tools.BaseTool ---------------------------------------------------------------------------------------
class BaseTool:
    name: str = ""
    description: str = ""

    def run(self, **kwargs: Any) -> Any:
        return self._run(**kwargs)

    def _run(self, **kwargs: Any) -> Any:  # pragma: no cover - subclasses implement it
        raise NotImplementedError


# ---- pydantic_ai.Agent.tool_plain --------------------------------------------------------------------------------
class PydanticAgent:
    def __init__(self, model: str, instructions: str = ""):
        self.model = model
        self.tools: Dict[str, Callable[..., Any]] = {}
        self.schemas: Dict[str, Dict[str, Any]] = {}

    def tool_plain(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.tools[fn.__name__] = fn
        self.schemas[fn.__name__] = _schema(fn)
        return fn

    async def call_tool(self, name: str, args: Dict[str, Any]) -> Any:
        """As the agent graph calls a tool: a coroutine function awaited, a plain one in a worker thread."""
        fn = self.tools[name]
        if inspect.iscoroutinefunction(fn):
            return await fn(**args)
        return await asyncio.to_thread(fn, **args)


# ---- smolagents.tool ---------------------------------------------------------------------------------------------
class SmolTool:
    def __init__(self, fn: Callable[..., Any]):
        doc = inspect.getdoc(fn) or ""
        for p in inspect.signature(fn).parameters:
            if f"{p}:" not in doc.split("Args:", 1)[-1]:
                raise ValueError(f"smolagents: the docstring has no description for argument '{p}'")
        self.name = fn.__name__
        self.description = _description(fn)
        self.inputs = _schema(fn)["properties"]
        self.forward = fn

    def __call__(self, **kwargs: Any) -> Any:
        return self.forward(**kwargs)


def smol_tool(fn: Callable[..., Any]) -> SmolTool:
    return SmolTool(fn)


def install() -> List[str]:
    """Register the stand-in modules; returns their names (for removal)."""
    mods = {
        "agents": {"function_tool": function_tool, "Agent": OpenAIAgent, "FunctionTool": FunctionTool},
        "langchain_core": {},
        "langchain_core.tools": {"tool": lc_tool, "StructuredTool": StructuredTool},
        "crewai": {},
        "crewai.tools": {"BaseTool": BaseTool},
        "pydantic_ai": {"Agent": PydanticAgent},
        "smolagents": {"tool": smol_tool, "Tool": SmolTool},
    }
    for name, attrs in mods.items():
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
    return list(mods)
