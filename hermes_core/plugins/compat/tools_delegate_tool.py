"""Shim of Hermes Agent's ``tools.delegate_tool``: ``delegate_task``, ``_build_child_agent`` and the constants and
helpers plugins that extend delegation read.

In Hermes Agent the ``delegate_task`` tool calls this module's ``delegate_task`` (looked up when called), which
builds each child with ``_build_child_agent``; a plugin that replaces one of them changes every delegation
(hermes-delegate-routing routes tasks to models that way). Here too: once a plugin loaded into a runtime has
replaced one (:func:`adopt`, after its ``register``), that runtime's ``delegate_task`` calls run through the
shim module, and the model a child's build names is the model its sub-agent asks (``routed_models``). The
sub-agents themselves are Hermes' (``Runtime.delegate``): a ``_build_child_agent`` returns a description of the
child, not Hermes Agent's ``AIAgent``, and ``background`` runs are run at once.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from ...calls.dispatch import tool_error
from ...calls.subagents import DELEGATE_BLOCKED_TOOLS, DEPTH, routed_models
from . import host_runtime

if TYPE_CHECKING:
    from ..context import PluginContext

__all__ = ["DEFAULT_MAX_ITERATIONS", "DEFAULT_TOOLSETS", "DELEGATE_BLOCKED_TOOLS", "MAX_DEPTH", "ChildAgent",
           "ParentAgent", "_build_child_agent", "_build_dynamic_schema_overrides", "check_delegate_requirements",
           "delegate_task", "tool_error"]

#: The name plugins import this module by.
MODULE: Final = "tools.delegate_tool"
MAX_DEPTH: Final = 1
DEFAULT_MAX_ITERATIONS: Final = 50
DEFAULT_TOOLSETS: Final = ["terminal", "file", "web"]
#: The functions a plugin may replace, each call going through the shim module's current one.
SEAMS: Final = ("delegate_task", "_build_child_agent")


@dataclass
class ParentAgent:
    """What a plugin's replacement sees of the agent that delegates (Hermes Agent's ``AIAgent`` attributes it reads):
    the model endpoint of ``delegation``, the session, the depth; ``next_call`` runs the tool as Hermes does."""

    next_call: Callable[[dict[str, Any]], str] | None = None
    session_id: str | None = None
    model: str = ""
    base_url: str = ""
    provider: str = ""
    api_key: str = ""
    _delegate_depth: int = field(default_factory=DEPTH.get)


@dataclass
class ChildAgent:
    """One child as ``_build_child_agent`` describes it: its task, and the model (and endpoint) it is routed to."""

    task_index: int
    goal: str
    context: str | None = None
    toolsets: list[str] | None = None
    model: str | None = None
    max_iterations: int | None = None
    role: str = "leaf"
    provider: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    api_mode: str | None = None


def check_delegate_requirements() -> bool:
    """Delegation needs nothing installed (a model to ask is checked when it runs)."""
    return True


def _build_child_agent(task_index: int, goal: str, context: str | None, toolsets: list[str] | None,
                       model: str | None, max_iterations: int | None, task_count: int, parent_agent: Any,
                       override_provider: str | None = None, override_base_url: str | None = None,
                       override_api_key: str | None = None, override_api_mode: str | None = None,
                       override_acp_command: str | None = None, override_acp_args: list[str] | None = None,
                       role: str = "leaf", **extra: Any) -> ChildAgent:
    """The child of task ``task_index``; a plugin's replacement may route it to another model."""
    return ChildAgent(task_index, goal, context, toolsets, model, max_iterations, role, override_provider,
                      override_base_url, override_api_key, override_api_mode)


def _build_dynamic_schema_overrides() -> dict[str, Any]:
    """``delegate_task``'s description and parameters, as the model sees them."""
    entry = host_runtime().registry.get("delegate_task")
    if entry is None:
        return {}
    return {"description": entry.schema.get("description", ""), "parameters": entry.schema.get("parameters", {})}


def delegate_task(goal: str | None = None, context: str | None = None, tasks: list[dict[str, Any]] | None = None,
                  max_iterations: int | None = None, role: str | None = None, background: bool | None = None,
                  parent_agent: Any = None, **extra: Any) -> str:
    """Delegate as the ``delegate_task`` tool does (the JSON it returns), each child built by the shim module's
    ``_build_child_agent`` and asking the model that build names."""
    args = {key: value for key, value in (("goal", goal), ("context", context), ("tasks", tasks),
                                          ("max_iterations", max_iterations), ("role", role)) if value is not None}
    build = getattr(sys.modules.get(MODULE), "_build_child_agent", _build_child_agent)
    work = tasks if isinstance(tasks, list) and tasks else [{"goal": goal, "context": context, "role": role}]
    models: dict[int, str] = {}
    for index, task in enumerate(work):
        if not isinstance(task, dict):
            continue
        child = build(task_index=index, goal=str(task.get("goal") or ""), context=task.get("context"),
                      toolsets=task.get("toolsets"), model=None, max_iterations=max_iterations, task_count=len(work),
                      parent_agent=parent_agent, override_provider=None, override_base_url=None,
                      override_api_key=None, override_api_mode=None, override_acp_command=None,
                      override_acp_args=None, role=str(task.get("role") or role or "leaf"))
        routed = getattr(child, "model", None)
        if isinstance(routed, str) and routed:
            models[index] = routed
    with routed_models(models):
        if isinstance(parent_agent, ParentAgent) and parent_agent.next_call is not None:
            return parent_agent.next_call(args)
        result: str = host_runtime().handle_function_call("delegate_task", args)
        return result


# -- the route: a runtime's delegate_task calls through the shim module ------------------------------------------

_routed: weakref.WeakSet[Any] = weakref.WeakSet()
_routed_lock = threading.Lock()


def adopt(module: ModuleType, context: PluginContext, owns: Callable[[str], bool]) -> None:
    """After ``context``'s plugin registered: when code of that plugin (``owns`` its module names) replaced a seam
    of the shim ``module``, run its runtime's ``delegate_task`` calls through ``module`` (once per runtime)."""
    implementations = globals()
    replaced = [getattr(module, name, None) for name in SEAMS if getattr(module, name, None) is not
                implementations[name]]
    if not any(owns(getattr(function, "__module__", "") or "") for function in replaced):
        return
    runtime = context._runtime()
    with _routed_lock:
        if runtime is None or runtime in _routed:
            return
        _routed.add(runtime)
    settings = runtime.delegation_settings()

    def route(tool_name: str, args: dict[str, Any], next_call: Callable[[dict[str, Any]], str],
              session_id: str | None = None) -> str:
        if tool_name != "delegate_task":
            return next_call(args)
        parent = ParentAgent(next_call, session_id, settings.model or "", settings.base_url or "")
        result: str = module.delegate_task(
            goal=args.get("goal"), context=args.get("context"), tasks=args.get("tasks"),
            max_iterations=args.get("max_iterations"), role=args.get("role"), background=None, parent_agent=parent)
        return result

    context.register_middleware("tool_execution", route)
