"""``plugin.yaml``: the declarative contract of a plugin, as pydantic models with a JSON Schema."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from ..config.yamlmodel import describe_validation_error, validate_data, validate_yaml
from ..errors import ManifestError
from ..tools.toolnames import check_tool_name

__all__ = [
    "HERMES_AGENT_FIELDS",
    "BackendDeclaration",
    "EnvRequirement",
    "ManifestError",
    "PluginManifest",
    "ToolAnnotationsDeclaration",
    "ToolCheck",
    "ToolDeclaration",
    "ToolsetDeclaration",
    "is_hermes_agent_manifest",
    "load_manifest",
    "manifest_json_schema",
    "manifest_of",
    "parse_foreign_manifest",
    "parse_manifest",
    "unannotated_tools",
]

#: Fields only Hermes Agent's own ``plugin.yaml`` has (its schema and what published plugins add to it).
HERMES_AGENT_FIELDS = frozenset({"kind", "provides_web_providers", "provides_memory_providers", "pip_dependencies",
                                 "python_dependencies", "optional_env", "label", "hooks", "platforms",
                                 "python_runtime", "provides"})
REFERENCE = re.compile(r"^(\.+|\.*[A-Za-z_][\w.]*):[A-Za-z_][\w.]*$")  # ".:f" is the plugin's own __init__.py


def _tool_name(value: str) -> str:
    return check_tool_name(value)


def _reference(value: str) -> str:
    if not REFERENCE.match(value):
        raise ValueError("must be a 'package.module:function' reference (a leading '.' is relative to the plugin)")
    return value


def _specifier(value: str) -> str:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(value)
    except InvalidSpecifier:
        raise ValueError(f"{value!r} is not a PEP 440 version specifier such as '>=0.1,<2'") from None
    return value


def _as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


ToolName = Annotated[str, AfterValidator(_tool_name)]
Reference = Annotated[str, AfterValidator(_reference)]
Text = Annotated[str, BeforeValidator(_as_text)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class EnvRequirement(_Model):
    """An environment variable the plugin uses (information for ``info`` and ``doctor``, not a gate)."""

    name: str = Field(description="The variable's name, e.g. `SEARXNG_URL`.")
    description: str = Field("", description="What it is for.")
    url: str | None = Field(None, description="Where to get a value.")
    secret: bool = Field(False, description="Whether the value is a credential.")


def _env_requirement(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


class ToolCheck(_Model):
    """Declarative availability: the tool is available only when all of these are present."""

    env: list[str] = Field(default_factory=list, description="Environment variables that must be set.")
    bins: list[str] = Field(default_factory=list, description="Executables that must be on `PATH`.")
    modules: list[str] = Field(default_factory=list, description="Python modules that must be importable.")


class ToolAnnotationsDeclaration(_Model):
    """What the tool may do (MCP's tool annotations). A key left out is unknown; a tool that does not say it is
    read-only counts as one that may change things."""

    read_only: bool | None = Field(
        None, description="It changes nothing (no files, processes or state elsewhere); MCP `readOnlyHint`. Read-only "
                          "tools never ask under `approvals.policy: writes`, are the only ones offered under "
                          "`read-only`, and may run beside other calls.")
    destructive: bool | None = Field(
        None, description="When not read-only: it may delete or overwrite what exists; `false`: it only adds. MCP "
                          "`destructiveHint`.")
    idempotent: bool | None = Field(
        None, description="Calling it again with the same arguments has no further effect; MCP `idempotentHint`.")
    open_world: bool | None = Field(
        None, description="It reaches beyond the workspace and this machine (the web, other hosts, services); "
                          "MCP `openWorldHint`.")
    destructive_if: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, description="Arguments that make a call of a read-only tool destructive when the call gives them a "
                          "value (not null, false, 0 or empty): such a call asks under `approvals.policy: writes` and "
                          "is refused under `read-only` and in read-only views. Each must be one of `parameters`' "
                          "properties. MCP clients are told the tool is destructive.")

    @model_validator(mode="after")
    def _consistent(self) -> ToolAnnotationsDeclaration:
        if self.read_only and self.destructive:
            raise ValueError("read_only: true and destructive: true contradict each other (a read-only tool "
                             "destroys nothing)")
        return self


class ToolDeclaration(_Model):
    """A tool known without importing the plugin: listed and shown to the model from the manifest alone."""

    name: ToolName = Field(description="The name the model calls the tool by.")
    toolset: str = Field(description="The toolset the tool belongs to.")
    description: str = Field(description="What the tool does, for the model.")
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        description="JSON Schema of the arguments (an object schema).",
    )
    handler: Reference = Field(description="`module:function` called as `handler(args, **kwargs) -> str`; "
                                           "imported on the first call.")
    check: ToolCheck | None = Field(None, description="Environment variables, binaries and modules it needs.")
    check_fn: Reference | None = Field(None, description="`module:function` returning whether the tool is "
                                                         "available; an exception's message is the reason.")
    is_async: bool = Field(False, description="The handler is `async def`.")
    changes_files: Reference | None = Field(
        None, description="`module:function` called as `function(args, config) -> bool` before a call of a tool "
                          "that checkpoints watch: whether this call may change the workspace's files (absent: every "
                          "call may); imported on the first such call.")
    emoji: str = Field("", description="Shown next to the tool in listings.")
    max_result_size_chars: Annotated[int, Field(ge=1)] | Literal["unlimited"] | None = Field(
        None, description="Results longer than this are saved to a file and previewed; `unlimited` for none at all "
                          "(`null` means the same, as it did before); absent = `tool_output.max_result_size_chars` "
                          "of config.yaml (100000 by default).")
    parallel_safe: bool | None = Field(None, description="May run beside other calls; absent = "
                                                         "`annotations.read_only`.")
    path_args: list[str] = Field(default_factory=list, description="Arguments that name files, for overlap checks.")
    call_timeout: float | None = Field(None, gt=0, description="Seconds a call's handler may take before the call "
                                                               "answers with a timeout error; absent = "
                                                               "`tools.call_timeout` of config.yaml.")
    annotations: ToolAnnotationsDeclaration | None = Field(
        None, description="What the tool may do: `read_only`, `destructive`, `idempotent`, `open_world`. Served to "
                          "MCP clients as their hints, and what `approvals.policy` and read-only views go by.")

    @model_validator(mode="after")
    def _destructive_arguments_defined(self) -> ToolDeclaration:
        properties = self.parameters.get("properties")
        named = self.annotations.destructive_if if self.annotations is not None else None
        undefined = [name for name in named or () if not isinstance(properties, dict) or name not in properties]
        if undefined:  # checked here, where the file and line can be named, not when the tool is first used
            raise ValueError(f"annotations.destructive_if names {', '.join(map(repr, undefined))}, which parameters "
                             "do not define")
        return self

    @property
    def result_limit(self) -> int | Literal["unlimited"] | None:
        """``max_result_size_chars``, an explicit ``null`` read as ``unlimited`` (absent: None, the default)."""
        if self.max_result_size_chars is None and "max_result_size_chars" in self.model_fields_set:
            return "unlimited"
        return self.max_result_size_chars


class ToolsetDeclaration(_Model):
    """A toolset the plugin defines; composites include other toolsets."""

    name: str = Field(description="The toolset's name.")
    description: str = Field("", description="What the toolset is for.")
    tools: list[str] = Field(default_factory=list, description="Tools it contains directly.")
    includes: list[str] = Field(default_factory=list, description="Toolsets whose tools it also contains.")


class BackendDeclaration(_Model):
    """An execution backend known without importing the plugin; its factory is imported when it is first used."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")] = Field(
        description="What `terminal.backend` in config.yaml selects it by; its settings are `terminal.<name>`.")
    description: str = Field("", description="Where and how it runs commands, for `plugins info` and `doctor`.")
    factory: Reference = Field(description="`module:callable` called as `factory(setup) -> ExecutionBackend`, "
                                           "where `setup` is a `hermes_core.backends.BackendSetup`.")
    check_fn: Reference | None = Field(None, description="`module:function` returning whether the backend can work "
                                                         "on this machine; an exception's message is the reason.")


class PluginManifest(BaseModel):
    """The contents of `plugin.yaml`. Unknown fields give a warning and are ignored."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    manifest_version: int = Field(1, description="The manifest format; 1 is the only one so far.")
    name: str | None = Field(None, description="The plugin id; should match the entry-point name or folder.")
    version: Text | None = Field(None, description="The plugin's version.")
    description: str = Field("", description="One line on what the plugin does.")
    author: str | dict[str, Any] | list[Any] | None = Field(
        None, description="Who maintains it (text; a mapping or list as some published manifests have is kept).")
    license: str | None = Field(None, description="An SPDX license expression.")
    homepage: str | None = Field(None, description="Where to read more.")
    kind: str | None = Field(None, description="Hermes Agent's plugin kind (informational).")
    requires_hermes: Annotated[str, AfterValidator(_specifier)] | None = Field(
        None, description="A PEP 440 specifier the core's version must satisfy, e.g. `>=0.1,<2`. Checked when the "
                          "manifest is in Hermes' format (it has `manifest_version` or `tools`); in a Hermes Agent "
                          "manifest it names a Hermes Agent version and is shown, not checked.")
    requires_env: list[Annotated[EnvRequirement, BeforeValidator(_env_requirement)]] = Field(
        default_factory=list, description="Environment variables it uses: names or `{name, description, url, "
                                          "secret}` (information, not a load gate).")
    provides_tools: list[str] = Field(default_factory=list, description="Names of tools it registers in code.")
    provides_hooks: list[str] = Field(default_factory=list, description="Names of hooks it implements.")
    tools: list[ToolDeclaration] | None = Field(
        None, description="Declared tools. A plugin whose tools are all declared and that provides no hooks "
                          "is not imported until one of its tools is called.")
    toolsets: list[ToolsetDeclaration] = Field(default_factory=list, description="Toolsets it defines.")
    skills: list[str] = Field(
        default_factory=list, description="Skill folders inside the package, each holding a `SKILL.md` (the Agent "
                                          "Skills standard): offered as `<plugin>:<name>` without importing the "
                                          "plugin.")
    backends: list[BackendDeclaration] = Field(
        default_factory=list, description="Execution backends it provides (where `terminal`, `process` and "
                                          "`execute_code` run commands).")

    @property
    def unknown_fields(self) -> list[str]:
        return sorted(self.model_extra or {})

    @property
    def declarative(self) -> bool:
        """Everything is declared: no code needs to run to know this plugin."""
        return self.tools is not None and not self.provides_hooks

    def plain(self) -> dict[str, Any]:
        """The manifest as plain JSON data with every default filled in, each tool's ``max_result_size_chars``
        as its ``result_limit``: what the discovery cache keeps, and what loading a plugin reads. Validating it
        again gives an equal manifest."""
        data = self.model_dump(mode="json")
        for tool, declared in zip(data["tools"] or (), self.tools or (), strict=True):
            tool["max_result_size_chars"] = declared.result_limit
        return data


def unannotated_tools(manifest: PluginManifest) -> dict[str, str]:
    """The declared tools whose ``annotations`` do not say whether they are read-only (they count as not), each
    with what is missing."""
    return {tool.name: "declares no annotations" if tool.annotations is None
            else "its annotations do not say whether it is read-only"
            for tool in manifest.tools or () if tool.annotations is None or tool.annotations.read_only is None}


def parse_manifest(text: str, source: Path | str = "plugin.yaml") -> PluginManifest:
    """Validate manifest text; raises :class:`ManifestError` naming the file, line and field."""
    return validate_yaml(text, source, PluginManifest, ManifestError, "a manifest", trusted=False)


def manifest_of(data: Any, text: str, source: Path | str = "plugin.yaml") -> PluginManifest:
    """Validate ``data``, the parsed YAML manifest ``text`` (read once); raises :class:`ManifestError` as
    :func:`parse_manifest` does."""
    return validate_data(data, text, source, PluginManifest, ManifestError, "a manifest")


def is_hermes_agent_manifest(data: Any) -> bool:
    """``data`` (a parsed ``plugin.yaml``) is in Hermes Agent's format, not Hermes': information, never a gate.

    Hermes' own manifests declare ``tools``, or a ``manifest_version`` without any field of Hermes Agent's schema.
    """
    if not isinstance(data, dict) or "tools" in data:
        return False
    return "manifest_version" not in data or not HERMES_AGENT_FIELDS.isdisjoint(data)


def parse_foreign_manifest(data: dict[str, Any], text: str, source: Path | str) -> tuple[PluginManifest, list[str]]:
    """A Hermes Agent manifest as far as it validates: each field in another shape is dropped with a warning."""
    data = _hermes_agent_env(data)
    try:
        return PluginManifest.model_validate(data), []
    except ValidationError as exc:
        bad = sorted({str(error["loc"][0]) for error in exc.errors() if error["loc"]})
        warning = (f"plugin.yaml field{'s' if len(bad) > 1 else ''} {', '.join(map(repr, bad))} ignored (a Hermes "
                   f"Agent manifest, read for information): {describe_validation_error(Path(source), text, exc)}")
    try:
        return PluginManifest.model_validate({k: v for k, v in data.items() if k not in bad}), [warning]
    except ValidationError as exc:  # a problem with no field to drop (the document itself)
        raise ManifestError(describe_validation_error(Path(source), text, exc)) from None


def _hermes_agent_env(data: dict[str, Any]) -> dict[str, Any]:
    """``requires_env`` items as Hermes Agent's set-up wizard writes them (``prompt``, ``password``) read as ours."""
    items = data.get("requires_env")
    if not isinstance(items, list):
        return data
    known = ("name", "description", "url", "secret")
    env = [{**{k: v for k, v in item.items() if k in known},
            **({"secret": item["password"]} if "secret" not in item and isinstance(item.get("password"), bool)
               else {})} if isinstance(item, dict) else item for item in items]
    return {**data, "requires_env": env}


def load_manifest(path: Path) -> PluginManifest:
    """Read and validate ``path``."""
    try:
        from ..config.untrusted import read_untrusted_text

        text = read_untrusted_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return parse_manifest(text, path)


def manifest_json_schema() -> dict[str, Any]:
    """The JSON Schema of ``plugin.yaml``, for editors and the docs."""
    schema = PluginManifest.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Hermes plugin manifest (plugin.yaml)"
    return schema

