"""Hermes Agent 0.19's toolset names, as core toolsets: its front-end presets (``hermes-cli``, the messaging
platforms' ``hermes-<platform>``, ...) and its general and scenario toolsets (``web``, ``search``, ``coding``...).

Each keeps Hermes Agent's tools minus those this project does not ship (:data:`NOT_SHIPPED`, each with why);
those are kept as the toolset's ``omitted`` so ``hermes toolsets show`` can say what is left out. Like every
toolset they resolve over whatever is installed.
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = ["HERMES_AGENT_CORE_TOOLS", "HERMES_AGENT_TOOLSETS", "NOT_SHIPPED", "PRESETS", "Toolset"]


class Toolset(NamedTuple):
    """A named group: its own tools plus every tool of the toolsets it includes."""

    name: str
    description: str = ""
    tools: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()
    source: str = "core"
    #: Tools Hermes Agent's toolset of this name has that this project does not ship (see :data:`NOT_SHIPPED`).
    omitted: tuple[str, ...] = ()


_KANBAN: Final = ("kanban_show", "kanban_list", "kanban_complete", "kanban_block", "kanban_heartbeat",
                  "kanban_comment", "kanban_create", "kanban_link", "kanban_unblock", "kanban_attach",
                  "kanban_attach_url", "kanban_attachments")
_GATEWAY = "a tool of Hermes Agent's messaging gateway, which Hermes does not run"
_DESKTOP = "a tool of Hermes Agent's desktop app, which Hermes does not have"
#: Tools of Hermes Agent 0.19's toolsets that no first-party pack provides, and why.
NOT_SHIPPED: Final[dict[str, str]] = {
    **dict.fromkeys(_KANBAN,
                    "the kanban tools work only inside Hermes Agent's kanban dispatcher, which Hermes does not run"),
    "computer_use": "desktop control through the cua-driver program; no pack provides it (a plugin may)",
    **dict.fromkeys(("discord", "discord_admin", "feishu_doc_read", "feishu_drive_list_comments",
                     "feishu_drive_list_comment_replies", "feishu_drive_reply_comment", "feishu_drive_add_comment",
                     "yb_query_group_info", "yb_query_group_members", "yb_send_dm", "yb_search_sticker",
                     "yb_send_sticker"), _GATEWAY),
    **dict.fromkeys(("project_list", "project_create", "project_switch"), _DESKTOP),
    **dict.fromkeys(("x_search", "video_analyze", "video_generate", "xai_video_edit", "xai_video_extend"),
                    "it needs xAI's hosted models; no pack provides it (a plugin may)"),
    **dict.fromkeys(("spotify_playback", "spotify_devices", "spotify_queue", "spotify_search", "spotify_playlists",
                     "spotify_albums", "spotify_library"), "no pack provides the Spotify tools (a plugin may)"),
}

_BROWSER: Final = ("browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll",
                   "browser_back", "browser_press", "browser_get_images", "browser_vision", "browser_console",
                   "browser_cdp", "browser_dialog")
#: Hermes Agent 0.19's ``hermes-cli`` tools, in its order (its messaging presets start with the same).
HERMES_AGENT_CORE_TOOLS: Final = (
    "web_search", "web_extract", "terminal", "process", "read_terminal", "close_terminal",
    "read_file", "write_file", "patch", "search_files", "vision_analyze", "image_generate",
    "skills_list", "skill_view", "skill_manage", *_BROWSER, "text_to_speech", "todo", "memory",
    "session_search", "clarify", "execute_code", "delegate_task", "cronjob",
    "ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service", *_KANBAN, "computer_use",
)
_CODING: Final = (
    "web_search", "web_extract", "terminal", "process", "read_terminal", "close_terminal", "read_file",
    "write_file", "patch", "search_files", "vision_analyze", "skills_list", "skill_view", "skill_manage",
    *_BROWSER, "todo", "memory", "session_search", "clarify", "execute_code", "delegate_task",
)
_ACP: Final = tuple(t for t in _CODING if t not in {"read_terminal", "close_terminal", "clarify"})
_API_SERVER: Final = (*_ACP[:9], "image_generate", *_ACP[9:], "cronjob",
                      "ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service")
_PLATFORM_TOOLS: Final[dict[str, tuple[str, ...]]] = {
    "telegram": (), "discord": ("discord", "discord_admin"), "whatsapp": (), "slack": (), "signal": (),
    "bluebubbles": (), "homeassistant": (), "email": (), "mattermost": (), "matrix": (), "dingtalk": (),
    "feishu": ("feishu_doc_read", "feishu_drive_list_comments", "feishu_drive_list_comment_replies",
               "feishu_drive_reply_comment", "feishu_drive_add_comment"),
    "weixin": (), "qqbot": (), "wecom": (), "wecom-callback": (),
    "yuanbao": ("yb_query_group_info", "yb_query_group_members", "yb_send_dm", "yb_search_sticker",
                "yb_send_sticker"),
    "sms": (),
}
_GATEWAY_PLATFORMS: Final = ("telegram", "discord", "whatsapp", "slack", "signal", "bluebubbles", "homeassistant",
                             "email", "sms", "mattermost", "matrix", "dingtalk", "feishu", "wecom", "wecom-callback",
                             "weixin", "qqbot", "webhook", "yuanbao")


def _hermes_agent(name: str, description: str, tools: tuple[str, ...] = (), includes: tuple[str, ...] = ()) -> Toolset:
    """Hermes Agent's toolset ``name``, its tools this project does not ship set apart as ``omitted``."""
    return Toolset(name, description, tuple(t for t in tools if t not in NOT_SHIPPED), includes,
                   omitted=tuple(t for t in tools if t in NOT_SHIPPED))


#: Hermes Agent's front-end presets (every ``hermes-*`` name of its 0.19 release).
PRESETS: Final[dict[str, Toolset]] = {
    preset.name: preset
    for preset in (
        _hermes_agent("hermes-cli", "Everything the interactive command line agent offers", HERMES_AGENT_CORE_TOOLS),
        _hermes_agent("hermes-cron", "What scheduled jobs get: the tools of hermes-cli", HERMES_AGENT_CORE_TOOLS),
        _hermes_agent("hermes-acp", "Tools for editor integrations (Agent Client Protocol): coding tools without "
                                    "clarify, speech or messaging", _ACP),
        _hermes_agent("hermes-api-server", "Tools for the OpenAI-compatible API server (no interactive tools)",
                      _API_SERVER),
        *(_hermes_agent(f"hermes-{platform}", f"Tools for the {platform} gateway: the tools of hermes-cli"
                        + (" and the platform's own" if extra else ""), (*HERMES_AGENT_CORE_TOOLS, *extra))
          for platform, extra in _PLATFORM_TOOLS.items()),
        _hermes_agent("hermes-webhook", "Tools for webhook events, which may carry untrusted text: no files, no "
                                        "commands", ("web_search", "web_extract", "vision_analyze", "clarify")),
        _hermes_agent("hermes-gateway", "Union of every messaging platform preset",
                      includes=tuple(f"hermes-{p}" for p in _GATEWAY_PLATFORMS)),
    )
}

#: Hermes Agent's general and scenario toolsets. A plugin may add tools to these names (``web``, ``file``...).
HERMES_AGENT_TOOLSETS: Final[dict[str, Toolset]] = {
    toolset.name: toolset
    for toolset in (
        _hermes_agent("web", "Web research and content extraction", ("web_search", "web_extract")),
        _hermes_agent("search", "Web search only (no content extraction)", ("web_search",)),
        _hermes_agent("x_search", "Search X (Twitter) posts through xAI", ("x_search",)),
        _hermes_agent("vision", "Image analysis", ("vision_analyze",)),
        _hermes_agent("video", "Video analysis", ("video_analyze",)),
        _hermes_agent("image_gen", "Image generation", ("image_generate",)),
        _hermes_agent("video_gen", "Video generation", ("video_generate", "xai_video_edit", "xai_video_extend")),
        _hermes_agent("computer_use", "Desktop control through cua-driver", ("computer_use",)),
        _hermes_agent("terminal", "Command execution and process management", ("terminal", "process")),
        _hermes_agent("skills", "Skills: list, view and manage", ("skills_list", "skill_view", "skill_manage")),
        _hermes_agent("browser", "Browser automation, with web search for finding URLs", (*_BROWSER, "web_search")),
        _hermes_agent("cronjob", "Scheduled jobs", ("cronjob",)),
        _hermes_agent("file", "Read, write, patch and search files",
                      ("read_file", "write_file", "patch", "search_files")),
        _hermes_agent("tts", "Text to speech", ("text_to_speech",)),
        _hermes_agent("todo", "Task planning and tracking", ("todo",)),
        _hermes_agent("memory", "Memory across sessions", ("memory",)),
        _hermes_agent("context_engine", "Tools a context engine exposes at run time (none here)"),
        _hermes_agent("session_search", "Search past conversations", ("session_search",)),
        _hermes_agent("project", "Desktop projects", ("project_list", "project_create", "project_switch")),
        _hermes_agent("clarify", "Ask the user clarifying questions", ("clarify",)),
        _hermes_agent("code_execution", "Python scripts that call tools", ("execute_code",)),
        _hermes_agent("delegation", "Sub-agents for subtasks", ("delegate_task",)),
        _hermes_agent("homeassistant", "Home Assistant control",
                      ("ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service")),
        _hermes_agent("kanban", "Kanban multi-agent coordination", _KANBAN),
        _hermes_agent("discord", "Discord reading and participation", ("discord",)),
        _hermes_agent("discord_admin", "Discord server management", ("discord_admin",)),
        _hermes_agent("yuanbao", "Yuanbao platform tools", _PLATFORM_TOOLS["yuanbao"]),
        _hermes_agent("feishu_doc", "Read Feishu/Lark documents", ("feishu_doc_read",)),
        _hermes_agent("feishu_drive", "Feishu/Lark document comments", _PLATFORM_TOOLS["feishu"][1:]),
        _hermes_agent("spotify", "Spotify playback and library", (
            "spotify_playback", "spotify_devices", "spotify_queue", "spotify_search", "spotify_playlists",
            "spotify_albums", "spotify_library")),
        _hermes_agent("debugging", "Debugging: terminal, web and files", ("terminal", "process"), ("web", "file")),
        _hermes_agent("safe", "No terminal: web, vision and image generation", (), ("web", "vision", "image_gen")),
        _hermes_agent("coding", "Coding: files, terminal, web, skills, browser, planning, delegation", _CODING),
    )
}
