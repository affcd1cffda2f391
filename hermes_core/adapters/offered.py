"""What every framework adapter reads from a runtime or a filtered view: the tools it offers, with the JSON schema
the model sees (OpenAI strict where asked and possible), and the framework's own approval step."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ..tools.search import BRIDGE_TOOL_NAMES, bridge_entries

if TYPE_CHECKING:
    from ..host.views import ToolApi
    from ..tools.registry import ToolEntry

__all__ = ["Approval", "OfferedTool", "asks", "check_approval", "framework_approved", "offered_tools"]

#: Who asks before a tool that asks under ``approvals.policy: writes`` runs: ``hermes``, its approval callback
#: during the call (as in Hermes' own calls); ``framework``, the framework's own approval step (pydantic-ai's
#: deferred tool approvals, the Agents SDK's interruptions), whose "approved" is the answer.
Approval = Literal["hermes", "framework"]


class OfferedTool(NamedTuple):
    """One tool as a framework shows it to the model."""

    name: str
    description: str
    #: The JSON schema of the arguments (OpenAI strict mode when :attr:`strict`).
    parameters: dict[str, Any]
    strict: bool
    #: May run beside other calls (otherwise it runs alone where the framework can say so).
    parallel_safe: bool
    #: What the tool says it may do (``read_only``, ``destructive``, ``idempotent``, ``open_world``), as said.
    annotations: dict[str, bool]

    def metadata(self) -> dict[str, Any]:
        """What a framework's tool metadata says of it (never shown to the model)."""
        return {"hermes": {"annotations": self.annotations, "parallel_safe": self.parallel_safe}}


def check_approval(value: str) -> Approval:
    """``value`` as an :data:`Approval`; raises ``ValueError`` naming the choices otherwise."""
    approvals: tuple[Approval, ...] = ("hermes", "framework")
    for approval in approvals:
        if value == approval:
            return approval
    raise ValueError(f"approval must be 'hermes' or 'framework', not {value!r}")


def offered_tools(api: ToolApi, toolsets: Iterable[str] | None = None, *, strict: bool = False) -> list[OfferedTool]:
    """The available tools ``api`` offers (of ``toolsets`` when given). With ``strict``, each schema that can be
    made strict is; one that cannot keeps its own, with the warning ``get_tool_definitions(strict=True)`` gives."""
    selected = None if toolsets is None else list(toolsets)
    definitions = [d["function"] for d in api.get_tool_definitions(selected, format="openai")]
    strict_parameters: dict[str, dict[str, Any]] = {}
    if strict:
        strict_parameters = {d["function"]["name"]: d["function"]["parameters"]
                             for d in api.get_tool_definitions(selected, format="openai", strict=True)}
    tools = []
    for function in definitions:
        name = function["name"]
        # tool search's bridge tools (tools.tool_search) are no registered tools: the dispatcher answers them
        entry = _bridge_entry(name) if name in BRIDGE_TOOL_NAMES else api.registry.get(name)
        if entry is None:  # removed since the definitions were made
            continue
        parameters = strict_parameters.get(name) or function.get("parameters") or {"type": "object",
                                                                                    "properties": {}}
        annotations = entry.annotations.as_dict()
        tools.append(OfferedTool(name, function.get("description") or "", parameters, name in strict_parameters,
                                 entry.parallel_safe, annotations))
    return tools


def _bridge_entry(name: str) -> ToolEntry | None:
    return next((entry for entry in bridge_entries(0) if entry.name == name), None)


def asks(api: ToolApi, name: str) -> bool:
    """A call of ``name`` asks before it runs under ``api``'s policy now (``writes``, a tool not read-only)."""
    entry = api.registry.get(name)
    return entry is not None and api.scope.asks(entry)


@contextmanager
def framework_approved(name: str, args: dict[str, Any] | None) -> Iterator[None]:
    """While the block runs, the framework's approval of this call of ``name`` with exactly ``args`` answers
    Hermes' question about it (a call whose arguments a hook or Hermes' coercion changed is asked about again)."""
    from ..calls.approval import approved_call

    with approved_call(name, args):
        yield
