"""Skills as MCP prompts: when the served tools include the skills pack's ``skill_view``, each skill the model
could read is also a prompt (its name and description listed, its body on ``prompts/get``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import mcp.types as types

if TYPE_CHECKING:
    from ..host.views import ToolApi
    from ..skills import SkillCatalog

__all__ = ["SkillPrompts"]

#: The tool whose presence among the served tools turns the prompts on.
SKILL_TOOL = "skill_view"


class SkillPrompts:
    """The prompts of one served runtime, while ``served()`` (the names of the tools it serves) holds skill_view."""

    def __init__(self, runtime: ToolApi, served: Callable[[], frozenset[str]]) -> None:
        self.runtime = runtime
        self.served = served

    def _catalog(self) -> SkillCatalog | None:
        if SKILL_TOOL not in self.served():
            return None
        entry = self.runtime.registry.get(SKILL_TOOL)
        return self.runtime.tool_context(entry.plugin if entry else None).skills()

    def list(self) -> list[types.Prompt]:
        catalog = self._catalog()
        return [] if catalog is None else [types.Prompt(name=entry.name, description=entry.description or None)
                                           for entry in catalog.offered()]

    def get(self, name: str) -> types.GetPromptResult:
        """The skill's body as one user message; an unknown name (or the skills pack not served) raises
        ``SkillError``, which the SDK returns as an error."""
        from ..errors import SkillError
        from ..skills.view import view_skill

        catalog = self._catalog()
        if catalog is None:
            raise SkillError("skills are not served here (the skills pack's skill_view is not among the tools)")
        viewed = view_skill(catalog, name)
        files = [path for group in (viewed.get("linked_files") or {}).values() for path in group]
        text = viewed["content"] + (f"\n\nFiles of this skill (read one with skill_view(name={name!r}, "
                                    f"file_path=...)): {', '.join(files)}" if files else "")
        return types.GetPromptResult(description=viewed["description"] or None, messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])
