"""The handlers of the skills tools: the running runtime's skill catalogue, in Hermes Agent's result shapes."""

from __future__ import annotations

from typing import Any

from hermes_core.errors import SkillError
from hermes_core.plugin import tool_context, tool_error


def skills_list(args: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Name, short description and source of every skill offered here (``category`` narrows it)."""
    from hermes_core.skills.view import list_skills

    return list_skills(tool_context().skills(), args.get("category") or None)


def skill_view(args: dict[str, Any], **kwargs: Any) -> dict[str, Any] | str:
    """A skill's body and linked files, or one of its files."""
    from hermes_core.skills.view import view_skill

    try:
        return view_skill(tool_context().skills(), args["name"], args.get("file_path") or None)
    except SkillError as exc:
        return tool_error(str(exc), success=False)


def skill_manage(args: dict[str, Any], **kwargs: Any) -> dict[str, Any] | str:
    """Create, change or delete one of the user's own skills."""
    from hermes_core.skills.manage import manage_skill

    context = tool_context()
    try:
        return manage_skill(context.skills(), context.home.skills_dir, args["action"], args["name"],
                            content=args.get("content"), category=args.get("category"),
                            file_path=args.get("file_path"), file_content=args.get("file_content"),
                            old_string=args.get("old_string"), new_string=args.get("new_string"),
                            replace_all=bool(args.get("replace_all")))
    except SkillError as exc:
        return tool_error(str(exc), success=False)
