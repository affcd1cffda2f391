"""The session an adapter's calls run in and are recorded in: the one the host passes, else the framework's own
(pydantic-ai's conversation or run, LangGraph's thread), else one per adapter object; each call and its result is
recorded there unless ``sessions.record`` is off."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..state.agent import OneCall, new_session_id
from ..workers.asyncbridge import in_worker

if TYPE_CHECKING:
    from ..host.views import ToolApi

__all__ = ["AdapterSession"]


class AdapterSession:
    """The calls of one adapter object (a toolset, a list of tools) through ``tools``, recorded as ``source``."""

    def __init__(self, tools: ToolApi, session_id: str | None, source: str) -> None:
        self.tools = tools
        self.session_id = session_id
        self.source = source
        self._own: str | None = None

    def session(self, framework: str | None = None) -> str:
        """The host's session, else the framework's (``framework``), else this adapter's own."""
        if self.session_id or framework:
            return self.session_id or str(framework)
        if self._own is None:
            self._own = new_session_id()
        return self._own

    def call(self, name: str, arguments: Any, *, task_id: str | None, tool_call_id: str | None,
             framework: str | None = None) -> str:
        session = self.session(framework)
        result = self.tools.handle_function_call(name, arguments, task_id=task_id, tool_call_id=tool_call_id,
                                                 session_id=session)
        self._record(session, name, arguments, tool_call_id, result)
        return result

    async def acall(self, name: str, arguments: Any, *, task_id: str | None, tool_call_id: str | None,
                    framework: str | None = None) -> str:
        session = self.session(framework)
        result = await self.tools.ahandle_function_call(name, arguments, task_id=task_id, tool_call_id=tool_call_id,
                                                        session_id=session)
        if self.tools.agent_state.recording:
            await in_worker(self._record, session, name, arguments, tool_call_id, result)
        return result

    def _record(self, session: str, name: str, arguments: Any, tool_call_id: str | None, result: str) -> None:
        self.tools.agent_state.record_calls(session, [OneCall(name, arguments, tool_call_id)], [result],
                                            source=self.source)
