"""``config.yaml``: its models, typed loading and comment-preserving edits (the home decides the path)."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from ..errors import ConfigError
from .untrusted import TEXT_LIMIT, read_untrusted_text
from .yamlmodel import validate_yaml

__all__ = [
    "ConfigError",
    "HermesConfig",
    "add_to_mapping",
    "edit_config",
    "load_config",
    "parse_config",
    "remove_from_list",
    "remove_from_mapping",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class PluginEntryConfig(BaseModel):
    """``plugins.entries.<id>``: our keys, and any others a plugin written for Hermes Agent 0.19 reads there."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    allow_tool_override: bool = Field(
        False, description="Let this plugin replace a tool that another toolset already owns."
    )
    settings: dict[str, Any] = Field(default_factory=dict, description="The plugin's own settings.")

    def plugin_settings(self) -> dict[str, Any]:
        """What the plugin reads as its settings: the keys beside ours, then ``settings`` over them."""
        return {**(self.model_extra or {}), **self.settings}  # configdata.plugin_settings, on plain data


def _settings_block(value: Any) -> dict[str, Any]:
    """A key of ``plugins`` that is not Hermes's own must be a plugin's settings block (Hermes Agent's layout)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"not a setting of Hermes ({', '.join(PluginsConfig.model_fields)}); a plugin's own "
                         "settings block (plugins.<id>:) is a mapping")
    return value


class PluginsConfig(BaseModel):
    """``plugins``: which load and how; any other key is a plugin's settings block (``plugins.<id>:``, as Hermes
    Agent reads them), seen by the plugin beside ``plugins.entries.<id>``."""

    model_config = ConfigDict(extra="allow", defer_build=True)
    __pydantic_extra__: dict[str, Annotated[dict[str, Any], BeforeValidator(_settings_block)]] = Field(init=False)

    enabled: list[str] | None = Field(None, description="An allow-list of plugin ids; absent = all.")
    disabled: list[str] = Field(default_factory=list, description="Plugin ids never loaded; always wins.")
    entries: dict[str, PluginEntryConfig] = Field(default_factory=dict)
    hook_timeout: float = Field(30.0, ge=0, description="Seconds one phase of hook implementations (a call's "
                                                        "pre_tool_call ones; its post_tool_call and "
                                                        "transform_tool_result ones) may take; 0 for no deadline "
                                                        "(implementations then run inline, in the caller's thread).")
    max_abandoned_hooks: int = Field(4, ge=0, description="Threads of a plugin's hooks that missed their deadline and "
                                                          "still run, past which its hooks are switched off for the "
                                                          "runtime (its pre_tool_call then blocks every call).")
    load_timeout: float = Field(30.0, ge=0, description="Seconds a plugin's import and register(), or one run "
                                                        "of a tool's check_fn, may take; 0 = no limit.")
    exit_timeout: float = Field(10.0, gt=0, description="Seconds the exit handlers (`atexit`) of Hermes and its "
                                                         "plugins may take when `hermes` exits; past it, it exits "
                                                         "without them.")
    post_hooks: Literal["wait", "background"] = Field(
        "wait", description="`background`: a call returns without waiting for its post_tool_call observers, which "
                            "the calling thread's next hook call waits for (and close and exit); not while a "
                            "transform_tool_result hook is implemented.")


class ApprovalsConfig(_Section):
    mode: Literal["ask", "strict", "smart", "deny", "approve"] = Field(
        "ask", description="Who answers a request: `ask` the approval callback; `strict` the callback too, and the "
                           "terminal asks for every command not made only of read-only programs (and, unless "
                           "`terminal.workspace_only` is false, for paths outside the workspace); `smart` a model "
                           "first (`auxiliary.approval`, else the host's): APPROVE runs the command, DENY refuses "
                           "it, anything else asks the callback; `deny` refuses "
                           "without asking; `approve` allows once without asking.")
    timeout: float = Field(60.0, gt=0)
    policy: Literal["dangerous", "writes", "read-only"] = Field(
        "dangerous", description="What asks first: `dangerous` (dangerous commands and hooks that ask), `writes` "
                                 "(also every tool that is not read-only), `read-only` (only read-only tools run).")


class DelegationConfig(BaseModel):
    """``delegation``: sub-agents (``delegate_task``, ``Runtime.delegate``) and the model endpoint they may use.
    Other keys Hermes Agent reads there (``provider``, ``subagent_auto_approve``...) are kept and ignored."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    model: str | None = Field(None, description="The model sub-agents ask at `base_url` (and the name hosts see).")
    base_url: str | None = Field(None, description="An OpenAI-compatible endpoint (`.../v1`) asked when neither the "
                                                   "host nor the MCP client answers model requests; needs "
                                                   "`hermes-tools[openai]`.")
    api_key_env: str | None = Field(None, description="The environment variable that holds the endpoint's key.")
    max_iterations: int = Field(50, ge=1, description="Tool-calling turns a sub-agent gets unless told fewer.")
    max_concurrent_children: int = Field(3, ge=1, description="Tasks one `delegate_task` call may run side by side.")
    max_spawn_depth: int = Field(1, ge=1, description="How deep sub-agents may nest: 1, sub-agents cannot delegate.")
    orchestrator_enabled: bool = Field(True, description="Let `role: orchestrator` sub-agents delegate (within "
                                                         "`max_spawn_depth`).")
    model_timeout: float = Field(300.0, gt=0, description="Seconds one model request of a sub-agent may take.")
    child_timeout_seconds: float | None = Field(None, gt=0, description="Seconds a sub-agent may run in all "
                                                                        "(none: its turns are bounded instead).")


class ObservabilityConfig(_Section):
    otel: bool = Field(False, description="Trace every tool call with OpenTelemetry (needs `hermes-tools[otel]`).")


class ToolsConfig(BaseModel):
    """``tools``: how tool calls run (Hermes Agent keeps its ``tool_search`` settings here too)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    call_timeout: float = Field(3600.0, ge=0, description="Seconds the handler of a plugin's tool may take; past it "
                                                          "the call answers with a timeout error, a synchronous "
                                                          "handler's thread is abandoned and an async one cancelled "
                                                          "(a tool's manifest may set its own `call_timeout`); 0 "
                                                          "for no deadline.")
    tool_search: bool | str | dict[str, Any] | None = Field(
        None, description="Tool search: `true`/`false` or `{enabled: auto|on|off, threshold_pct: 10, "
                          "search_default_limit: 5, max_search_limit: 20}` (Hermes Agent's). Active, it puts the "
                          "tools outside Hermes Agent's core set behind tool_search, tool_describe and tool_call; "
                          "`auto` (the default) only when their definitions would take threshold_pct of the "
                          "model's context (model.context_length; unknown: 20 000 tokens).")
    error_hint: bool | str = Field(False, description="Add a hint to every tool error telling the model how to "
                                                      "recover: `true` for the default hint, or the hint's text.")


class ToolOutputConfig(_Section):
    max_result_size_chars: int = Field(100_000, gt=0, description="Default per-tool result budget.")
    turn_budget_chars: int = Field(200_000, gt=0, description="Budget for all results of one turn.")
    max_media_bytes: int = Field(20_000_000, gt=0, description="Largest image or sound kept from one tool result "
                                                               "(saved in the results folder's media/).")
    media_keep_hours: float = Field(168.0, ge=0, description="Saved media older than this are deleted (a sweep at "
                                                             "most every 10 minutes, when a medium is saved); 0: "
                                                             "kept until deleted by hand.")
    media_keep_bytes: int = Field(1_000_000_000, ge=0, description="The media folder holds at most this many bytes: "
                                                                   "the oldest media go first; 0: no limit.")


class SessionsConfig(_Section):
    """``sessions:``: the session store, ``state.db`` in the home (Hermes Agent's schema)."""

    record: bool = Field(True, description="Record the tool calls and results of `answer_tool_calls`, the framework "
                                           "adapters, `hermes tools call` and `hermes mcp serve` in the session store.")
    max_message_chars: int = Field(100_000, gt=0, description="A recorded message longer than this is cut, with a "
                                                              "marker saying how much was left out.")
    redact_secrets: bool = Field(True, description="Mask API keys, tokens, passwords and private keys in what is "
                                                   "recorded (Hermes Agent's `security.redact_secrets`).")


class MemoryConfig(BaseModel):
    """``memory:``: Hermes Agent's persistent memory (``memories/MEMORY.md`` and ``USER.md``) and its provider."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    memory_enabled: bool = Field(True, description="Put MEMORY.md (the agent's notes) in `memory_prompt()`.")
    user_profile_enabled: bool = Field(True, description="Put USER.md (the user's profile) in `memory_prompt()`.")
    memory_char_limit: int = Field(2200, gt=0, description="Characters MEMORY.md may hold (entries and separators).")
    user_char_limit: int = Field(1375, gt=0, description="Characters USER.md may hold (entries and separators).")
    provider: str = Field("", description="The memory provider plugin to use beside the built-in memory (its "
                                          "`name`); empty: the built-in memory only.")
    write_approval: bool = Field(False, description="Show each `memory` write to the user first (Hermes Agent's "
                                                    "gate): approved it lands, denied it is refused, with nobody to "
                                                    "ask it is staged for `hermes memory approve`.")


class WebConfig(BaseModel):
    """``web:``; keys of Hermes Agent's ``web`` section (``search_backend``, ``gemini_model``, ...) are kept for
    the plugins that read them."""

    model_config = ConfigDict(extra="allow")

    allow_private_networks: bool = False
    search_backend: str | None = Field(None, description="The web search provider `web_search` uses (Hermes "
                                                         "Agent's key; the web pack's `search_provider` wins).")
    backend: str | None = Field(None, description="Hermes Agent's shared fallback for `search_backend`.")


class IndexConfig(_Section):
    url: str | None = None


class CheckpointsConfig(_Section):
    """``checkpoints:``: ``true``/``false``, or Hermes Agent's mapping of settings."""

    enabled: bool = Field(False, description="Snapshot the workspace before the first file-changing tool call of "
                                             "each turn (`hermes checkpoints` lists, diffs and restores them).")
    max_snapshots: int = Field(20, ge=1, description="Checkpoints kept per workspace; older ones are pruned.")
    max_total_size_mb: int = Field(500, ge=0, description="Size of the whole store past which the oldest "
                                                          "checkpoints are pruned (0: no cap).")
    max_file_size_mb: int = Field(10, ge=0, description="Files larger than this are left out of checkpoints "
                                                        "(0: no cap).")
    max_files: int = Field(50_000, ge=1, description="A workspace with more new or changed files than this at once "
                                                     "is not checkpointed.")
    auto_prune: bool = Field(True, description="Prune the store at most every `min_interval_hours`: workspaces gone "
                                               "or untouched for `retention_days`, then the size cap.")
    retention_days: int = Field(7, ge=1, description="Checkpoints of a workspace untouched this long are pruned.")
    delete_orphans: bool = Field(True, description="Prune the checkpoints of workspaces that no longer exist.")
    min_interval_hours: float = Field(24, ge=0, description="Least time between two automatic prunes.")

    @model_validator(mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        return {"enabled": value} if isinstance(value, bool) else value


class TerminalConfig(BaseModel):
    """``terminal:``: the execution backend commands run on, and one settings section per backend."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    backend: str = Field("local", min_length=1, description="`local`, `sandbox`, `ssh` or a plugin's backend name.")
    workspace_only: bool | None = Field(
        None, description="Ask before a command that reads or writes a path outside the workspace (absent: only "
                          "under `approvals.mode: strict`).")
    read_only_commands: list[str] = Field(
        default_factory=list, description="Command prefixes (`make test`, `cargo check`) that `approvals.mode: "
                                          "strict` runs without asking, beside its read-only programs.")

    @model_validator(mode="after")
    def _sections_are_mappings(self) -> TerminalConfig:
        for name, value in (self.model_extra or {}).items():
            if not isinstance(value, dict):
                raise ValueError(f"terminal.{name} must be a mapping of the {name!r} backend's settings, "
                                 f"not {type(value).__name__}")
        return self

    def section(self, name: str) -> dict[str, Any]:
        """``terminal.<name>``: the settings of backend ``name`` (empty when absent)."""
        value = (self.model_extra or {}).get(name)
        return dict(value) if isinstance(value, dict) else {}


class McpToolFilter(_Section):
    include: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)


class McpSamplingConfig(_Section):
    """``mcp_servers.<name>.sampling`` as Hermes Agent writes it: a mapping (its presence is the user's consent
    unless ``enabled: false``)."""

    enabled: bool = True
    model: str | None = Field(None, description="The model asked for, instead of the server's preferences.")
    max_tokens_cap: int = Field(4096, gt=0, description="The most tokens one reply may use, whatever the server "
                                                        "asks.")
    timeout: float = Field(300.0, gt=0, description="Seconds one sampling request may take.")
    max_rpm: int = Field(10, gt=0, description="Sampling requests per minute; more are refused.")
    allowed_models: list[str] = Field(default_factory=list, description="Model hints passed on (empty: any).")
    max_tool_rounds: int = Field(5, ge=0, description="Accepted for Hermes Agent's configurations.")
    log_level: str = Field("info", description="Accepted for Hermes Agent's configurations.")


class McpOAuthConfig(_Section):
    """``mcp_servers.<name>.oauth``: Hermes Agent's keys for an OAuth 2.1 server (all optional)."""

    client_id: str | None = Field(None, description="A client registered beforehand (skips dynamic registration).")
    client_secret: str | None = Field(None, description="For a confidential client; `${ENV}` references work.")
    scope: str | None = None
    redirect_port: int = Field(0, ge=0, le=65535, description="The local port of the redirect (0: any free one).")
    redirect_uri: str | None = None
    redirect_host: str = "127.0.0.1"
    client_name: str = "Hermes"
    timeout: float = Field(300.0, gt=0, description="Seconds `hermes mcp login` waits for the browser.")


class McpServerConfig(_Section):
    """One ``mcp_servers`` entry; Claude Desktop's, Claude Code's and VS Code's entries are valid as they are."""

    type: Literal["stdio", "http", "sse"] | None = Field(
        None, description="`stdio` (a `command`), `http` (streamable HTTP at `url`) or `sse` (the older HTTP+SSE "
                          "transport at `url`); absent: `http` when there is a `url`, else `stdio`.")
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(300.0, gt=0)
    connect_timeout: float = Field(60.0, gt=0)
    enabled: bool = True
    tools: McpToolFilter = Field(default_factory=McpToolFilter)
    trust_annotations: bool = Field(
        True, description="Take the server's tool annotations (readOnlyHint, ...) as its tools' annotations; false: "
                          "its tools count as unannotated (not read-only).")
    sampling: Literal["allow", "off"] | McpSamplingConfig = Field(
        "off", description="`allow`: the server may ask the model (MCP sampling), each request logged; `off`: "
                           "refused. Hermes Agent's mapping (`enabled`, `max_tokens_cap`, ...) counts as `allow`.")
    auth: Literal["oauth", "none"] | None = Field(
        None, description="`oauth`: sign in with OAuth 2.1 (`hermes mcp login NAME`); tokens live in "
                          "$HERMES_HOME/mcp-tokens, never in config.yaml.")
    oauth: McpOAuthConfig | None = None

    @property
    def sampling_settings(self) -> McpSamplingConfig | None:
        """The sampling limits when the user allowed sampling, else None."""
        if isinstance(self.sampling, McpSamplingConfig):
            return self.sampling if self.sampling.enabled else None
        return McpSamplingConfig() if self.sampling == "allow" else None

    @property
    def uses_oauth(self) -> bool:
        return self.auth == "oauth" or (self.auth is None and self.oauth is not None)

    @property
    def transport(self) -> Literal["stdio", "http", "sse"]:
        return self.type or ("http" if self.url else "stdio")


class McpConfig(BaseModel):
    """``mcp:``: how Hermes uses the servers of ``mcp_servers``; Hermes Agent's keys there
    (``auto_reload_on_config_change``) are kept and ignored."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    list_timeout: float = Field(5.0, ge=0, description="Seconds `hermes tools list` and `hermes mcp list` wait for "
                                                       "servers never listed before going on without them (their "
                                                       "tools appear once listed); a call of such a server's tool "
                                                       "waits its `connect_timeout`.")


class HermesConfig(BaseModel):
    """The whole of ``config.yaml``; unknown top-level keys are kept for plugins."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    toolsets: list[str] | None = Field(None, description="Default toolsets for `hermes mcp serve`.")
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    mcp: McpConfig = Field(default_factory=McpConfig)
    mcpServers: dict[str, McpServerConfig] = Field(  # the key as Claude's configurations spell it
        default_factory=dict, description="Claude Desktop's and Claude Code's name for `mcp_servers`, read as a "
                                          "synonym so that their configuration can be pasted as it is.")
    command_allowlist: list[str] = Field(default_factory=list)
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    tool_output: ToolOutputConfig = Field(default_factory=ToolOutputConfig)
    web: WebConfig = Field(default_factory=WebConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)
    terminal: TerminalConfig = Field(default_factory=TerminalConfig)
    observability: ObservabilityConfig = Field(default_factory=ObservabilityConfig)
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    delegation: DelegationConfig = Field(default_factory=DelegationConfig)

    @model_validator(mode="after")
    def _claude_spelling(self) -> HermesConfig:
        both = sorted(self.mcp_servers.keys() & self.mcpServers.keys())
        if both:
            raise ValueError(f"MCP server {both[0]!r} is configured under both mcp_servers and mcpServers; keep one")
        if self.mcpServers:
            self.mcp_servers = {**self.mcp_servers, **self.mcpServers}
        return self

    def plugin_settings(self, plugin_id: str) -> dict[str, Any]:
        """The settings of ``plugin_id``: its ``plugins.<id>`` block, under ``plugins.entries.<id>.settings`` and
        the keys beside it."""
        entry = self.plugins.entries.get(plugin_id)
        block = (self.plugins.model_extra or {}).get(plugin_id) or {}
        return {**block, **(entry.plugin_settings() if entry else {})}


_cache: dict[Path, tuple[tuple[int, int], HermesConfig]] = {}
_cache_lock = threading.Lock()


def load_config(path: Path) -> HermesConfig:
    """Load and validate ``config.yaml`` at ``path`` (a missing file means defaults); cached by mtime."""
    try:
        stat = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return _defaults()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    key = (stat.st_mtime_ns, stat.st_size)
    with _cache_lock:
        cached = _cache.get(path)
        if cached and cached[0] == key:
            return cached[1]
    try:
        text = read_untrusted_text(path, TEXT_LIMIT, follow_symlinks=True)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    config = parse_config(text, path)
    with _cache_lock:
        _cache[path] = (key, config)
    return config


@functools.cache
def _defaults() -> HermesConfig:
    return HermesConfig()


def parse_config(text: str, path: Path) -> HermesConfig:
    """Validate the text of ``config.yaml``; raises :class:`ConfigError` naming ``path``, the line and the key."""
    return validate_yaml(text, path, HermesConfig, ConfigError, "the top level")


def edit_config(mutate: Callable[[Any], None], path: Path) -> HermesConfig:
    """Apply ``mutate`` to the round-trip document of config.yaml, validate it, and write it back.

    Comments, key order and quoting of the user's file are kept (ruamel.yaml round-trip mode). The
    read-modify-write holds a lock on ``config.yaml.lock`` beside the file, so edits from several
    processes at once are all kept. Nothing is written unless the result is valid YAML of a valid config.
    """
    from io import StringIO

    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

    rt = YAML()
    rt.preserve_quotes = True
    with _file_lock(path):
        try:
            original = read_untrusted_text(path, TEXT_LIMIT, follow_symlinks=True) if path.exists() else ""
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
        parse_config(original, path)  # a problem with the user's file is reported as one, before any edit
        document = rt.load(original) if original.strip() else None
        # a file of nothing but comments loads as None: keep them above what the edit adds
        preamble = original if document is None and original.strip() else ""
        # an empty list or mapping is written `[]` / `{}` (in block style, its end-of-line comment would land where
        # YAML cannot read it); one the edit fills is written in block style like the rest (see _flow_style_for_empty)
        document = CommentedMap() if document is None else document
        empty = _flow_style_for_empty(document)
        mutate(document)
        for node in empty:
            if node:
                node.fa.set_block_style()
        _flow_style_for_empty(document)
        buffer = StringIO()
        rt.dump(document, buffer)
        text = preamble + buffer.getvalue()
        try:
            rt.load(text)
        except Exception as exc:  # ruamel wrote what it cannot read back: keep the user's file as it is
            raise ConfigError(f"{path}: the edit could not be written without breaking the file's layout "
                              f"({type(exc).__name__}); nothing was changed — edit the file by hand") from None
        config = parse_config(text, path)
        try:
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise ConfigError(
                f"{path}: cannot write the configuration ({exc.strerror}); check the folder's permissions"
            ) from None
    return config


def remove_from_list(mapping: Any, key: str, value: Any) -> None:
    """Remove ``value`` from the list ``mapping[key]`` of a round-trip document, keeping the comments that
    stand on the lines after it (ruamel attaches them to the item above, so a plain ``remove`` loses them)."""
    from ruamel.yaml.comments import CommentedSeq
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    items = mapping[key]
    index = items.index(value)
    slot = items.ca.items.pop(index, None) if isinstance(items, CommentedSeq) else None
    del items[index]
    token = slot[0] if slot else None
    following = token.value.split("\n", 1)[1] if token is not None and "\n" in token.value else ""
    if not following:
        return
    if index > 0:  # to the item above
        above = items.ca.items.setdefault(index - 1, [None, None, None, None])
        if above[0] is None:
            above[0] = CommentToken("\n" + following, CommentMark(0), None)
        else:
            above[0].value = above[0].value.rstrip("\n") + "\n" + following
    else:  # to the key that holds the list
        if not items:
            items.fa.set_flow_style()
        holder = mapping.ca.items.setdefault(key, [None, None, None, None])
        if holder[2] is None:
            holder[2] = CommentToken("\n" + following, CommentMark(0), None)
        else:
            holder[2].value = holder[2].value.rstrip("\n") + "\n" + following


def remove_from_mapping(mapping: Any, key: str, item: str) -> None:
    """Remove ``item`` (and its value, however nested) from the mapping ``mapping[key]`` of a round-trip
    document, with the comment lines that stand above it, keeping those that stand below it (they belong to
    what follows). ruamel attaches the lines between two entries to the last value of the entry above, so a
    plain ``del`` would take the next entry's heading with it and leave the removed entry's own behind."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    items = mapping[key]
    keys = list(items)
    index = keys.index(item)
    removed = _last_comment(items, item)
    following = removed.value.split("\n", 1)[1] if removed is not None and "\n" in removed.value else ""
    items.ca.items.pop(item, None)
    del items[item]
    if index > 0:
        above = _last_comment(items, keys[index - 1], create=True)
        # its first line ends the entry above; the lines after it were the removed entry's heading
        above.value = above.value.split("\n", 1)[0] + "\n" + following
        return
    # the first entry's heading is the mapping's own comment, and the holder's slot of ``key`` holds it too
    holder = mapping.ca.items.setdefault(key, [None, None, None, None])
    items.ca.comment = None
    holder[3] = None
    if items and following.strip():
        token = CommentToken(following.lstrip(" "), CommentMark(2), None)  # its column indents the first line
        items.ca.comment = [None, [token]]
        holder[3] = [token]
    elif not items:
        items.fa.set_flow_style()  # `key: {}`, what followed the removed entry after it
        if following.strip():
            holder[2] = CommentToken("\n" + following, CommentMark(0), None)


def add_to_mapping(mapping: Any, key: str, item: str, value: Any) -> None:
    """Set ``mapping[key][item] = value`` in a round-trip document (``mapping[key]`` is made if missing). A new
    item goes last, and the comment lines that followed the previous last item (a heading of what comes after
    the mapping) move below it, where they stood."""
    from ruamel.yaml.comments import CommentedMap

    items = mapping.get(key)
    if not isinstance(items, CommentedMap):
        items = mapping[key] = CommentedMap()
    if item in items or not items:
        items[item] = value
        return
    last = list(items)[-1]
    trailing = _last_comment(items, last)
    following = trailing.value.split("\n", 1)[1] if trailing is not None and "\n" in trailing.value else ""
    if following:
        trailing.value = trailing.value.split("\n", 1)[0] + "\n"
    items[item] = value
    if following:
        moved = _last_comment(items, item, create=True)
        moved.value = (moved.value.split("\n", 1)[0] or "") + "\n" + following


def _last_comment(mapping: Any, key: Any, create: bool = False) -> Any:
    """The comment token after the last line of ``mapping[key]`` (the deepest last item of a block collection)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    node, slot_key, position = mapping, key, 2
    while True:
        value = node[slot_key]
        if isinstance(value, CommentedMap | CommentedSeq) and value and not value.fa.flow_style():
            node, slot_key = value, (list(value)[-1] if isinstance(value, CommentedMap) else len(value) - 1)
            position = 2 if isinstance(value, CommentedMap) else 0
            continue
        break
    slot = node.ca.items.get(slot_key)
    if slot is None or slot[position] is None:
        if not create:
            return None
        slot = node.ca.items.setdefault(slot_key, [None, None, None, None])
        slot[position] = CommentToken("", CommentMark(0), None)
    return slot[position]


def _flow_style_for_empty(node: Any) -> list[Any]:
    """Empty sequences and mappings in flow style (``[]``, ``{}``): in block style ruamel writes an empty one
    that carries a comment where YAML cannot read it. Returns those without a comment on their line: filled,
    they may go to block style (one with a comment stays ``[a, b]  # comment``, its comment where it was)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if not isinstance(node, CommentedMap | CommentedSeq):
        return []
    empty = []
    for key, child in node.items() if isinstance(node, CommentedMap) else enumerate(node):
        if isinstance(child, CommentedMap | CommentedSeq) and not child:
            child.fa.set_flow_style()
            if not node.ca.items.get(key):
                empty.append(child)
        empty += _flow_style_for_empty(child)
    return empty


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``<path>.lock`` for the read-modify-write of ``path`` (across threads and processes)."""
    from ..errors import FileLockTimeout, UnsafeFileError
    from .filelock import exclusive_lock

    with contextlib.ExitStack() as stack:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(exclusive_lock(path.with_name(path.name + ".lock")))
        except FileLockTimeout:
            raise
        except UnsafeFileError as exc:
            raise ConfigError(f"{path}: cannot lock the configuration for editing: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot write the configuration ({exc.strerror}); check the folder's "
                              "permissions") from None
        yield
