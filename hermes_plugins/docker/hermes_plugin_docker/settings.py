"""``terminal.docker`` in config.yaml: the container's image, mounts, network and limits.

Each setting also answers to Hermes Agent's name for it (``docker_image``, ``container_cpu``, ...), so a Hermes
Agent ``terminal:`` section's keys can move under ``terminal.docker`` as they are.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Annotated, Final

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, StringConstraints

__all__ = ["DEFAULT_IMAGE", "DockerSettings", "Volume", "parse_volume"]

#: Hermes Agent's default image (Python and Node.js on Debian).
DEFAULT_IMAGE: Final = "nikolaik/python-nodejs:python3.11-nodejs20"
#: An environment variable's name.
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


def _no_option(value: str) -> str:
    if not value or value.startswith("-") or any(character.isspace() for character in value):
        raise ValueError("must be non-empty, not start with '-' and hold no spaces")
    return value


def _program(value: str | None) -> str | None:
    if value is not None and (not value.strip() or value.startswith("-")):
        raise ValueError("must be a program name or path, not empty nor starting with '-'")
    return value


def _volume(value: str) -> str:
    parse_volume(value)
    return value


def _container_path(value: str | None) -> str | None:
    if value is not None and not PurePosixPath(value).is_absolute():
        raise ValueError("must be an absolute path inside the container")
    return value


class Volume:
    """One ``volumes`` entry: a folder of this machine, where it appears in the container, and whether writable."""

    __slots__ = ("read_only", "source", "target")

    def __init__(self, source: Path, target: str, read_only: bool) -> None:
        self.source, self.target, self.read_only = source, target, read_only


def parse_volume(spec: str) -> Volume:
    """``HOST:CONTAINER[:ro|rw]`` (``docker run -v``'s form); raises ``ValueError`` saying what is wrong."""
    parts = spec.split(":")
    mode = parts.pop() if len(parts) == 3 else "rw"
    if len(parts) != 2 or mode not in ("ro", "rw"):
        raise ValueError(f"{spec!r} is not HOST:CONTAINER or HOST:CONTAINER:ro")
    source, target = Path(os.path.expanduser(parts[0])), parts[1]
    if not source.is_absolute():
        raise ValueError(f"{spec!r}: the host folder must be an absolute path")
    if not PurePosixPath(target).is_absolute():
        raise ValueError(f"{spec!r}: the container path must be absolute")
    if "," in spec:
        raise ValueError(f"{spec!r}: paths with ',' cannot be mounted")
    if not source.exists():
        raise ValueError(f"{spec!r}: {source} does not exist")
    return Volume(source, target, mode == "ro")


class DockerSettings(BaseModel):
    """``terminal.docker`` in config.yaml."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    executable: Annotated[str | None, AfterValidator(_program)] = Field(
        None, description="The container CLI to run: `docker`, `podman` or any program that speaks docker's commands "
                          "(a name on PATH or a path). Default: docker, else podman.")
    image: Annotated[str, AfterValidator(_no_option)] = Field(
        DEFAULT_IMAGE, validation_alias=AliasChoices("image", "docker_image"),
        description="The image commands run in (pulled on first use when missing).")
    network: bool = Field(False, validation_alias=AliasChoices("network", "docker_network"),
                          description="Give the container a network (it has none by default: `--network none`).")
    mount_workspace: bool = Field(
        True, validation_alias=AliasChoices("mount_workspace", "docker_mount_cwd_to_workspace"),
        description="Mount the runtime's workspace read-write (the only folder of this machine the container sees).")
    workspace_path: Annotated[str | None, AfterValidator(_container_path)] = Field(
        None, description="Where the workspace appears in the container. Default: its path on this machine, so file "
                          "tools and commands name files alike (Hermes Agent uses /workspace).")
    volumes: list[Annotated[str, AfterValidator(_volume)]] = Field(
        default_factory=list, validation_alias=AliasChoices("volumes", "docker_volumes"),
        description="More folders of this machine to mount, as `HOST:CONTAINER` or `HOST:CONTAINER:ro`.")
    env: dict[EnvName, str] = Field(
        default_factory=dict, validation_alias=AliasChoices("env", "docker_env"),
        description="Environment variables set in the container.")
    forward_env: list[EnvName] = Field(
        default_factory=list, validation_alias=AliasChoices("forward_env", "docker_forward_env"),
        description="Environment variables passed from Hermes's environment into the container (when set).")
    run_as_host_user: bool = Field(
        False, validation_alias=AliasChoices("run_as_host_user", "docker_run_as_host_user"),
        description="Run commands as your user and group (`--user UID:GID`), so files they write in the workspace "
                    "are yours; otherwise as the image's user.")
    cpu: float = Field(1.0, ge=0, validation_alias=AliasChoices("cpu", "container_cpu"),
                       description="CPUs the container may use (`--cpus`); 0: no limit.")
    memory: int = Field(5120, ge=0, validation_alias=AliasChoices("memory", "container_memory"),
                        description="Memory in MB (`--memory`); 0: no limit.")
    disk: int = Field(0, ge=0, validation_alias=AliasChoices("disk", "container_disk"),
                      description="Size of the container's writable layer in MB (`--storage-opt size=`, which only "
                                  "some storage drivers support); 0: no limit.")
    pids_limit: int = Field(256, ge=0, description="Most processes at once (`--pids-limit`); 0: no limit.")
    extra_args: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("extra_args", "docker_extra_args"),
        description="More options of `docker run`, passed as they are.")
    start_timeout: float = Field(300.0, gt=0, description="Seconds to wait for the container to start, a pull of "
                                                          "its image included.")
