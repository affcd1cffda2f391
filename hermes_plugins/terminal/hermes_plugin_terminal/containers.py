"""Container runs (``docker run``, ``podman run``...): what of the host they reach, and the command they run.

A container that mounts the host's root is the host: ``docker run -v /:/h alpine rm -rf /h`` deletes ``/``.
So the command run inside is read with each mount's target replaced by its host source, and checked like any
other command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from .invocation import Invocation
from .programs import is_root_target, target_rules
from .shell import Word

__all__ = ["RUNTIMES", "ContainerRun", "container_run"]

RUNTIMES: Final = frozenset({"docker", "podman", "nerdctl", "finch"})
_RUN_VERBS: Final = ("run", "create")
#: Options of ``docker run`` that take no value (every other option does).
_FLAGS: Final = frozenset({
    "--rm", "--init", "--privileged", "--read-only", "--detach", "--interactive", "--tty", "--publish-all",
    "--no-healthcheck", "--oom-kill-disable", "--sig-proxy", "--disable-content-trust", "--quiet", "--help",
    "--replace", "--systemd", "--rootfs"})
_SHORT_FLAGS: Final = "ditPq"
_SOCKET: Final = re.compile(r"/(?:var/)?run/(?:docker|podman)(?:/podman)?\.sock$")
_HOST_CAPABILITIES: Final = frozenset({"ALL", "SYS_ADMIN", "SYS_PTRACE", "SYS_MODULE", "DAC_READ_SEARCH"})
_HOST_NAMESPACE: Final = re.compile(r"--(?:pid|ipc|userns|uts|cgroupns)(?:=|$)")


@dataclass
class ContainerRun:
    """What a container run reaches on the host, and the command it runs there."""

    #: ``(host source, container target)`` of each bind mount.
    mounts: list[tuple[str, str]] = field(default_factory=list)
    #: Privileged, a host namespace, all capabilities or a host device.
    host_access: bool = False
    command: list[Word] = field(default_factory=list)

    @property
    def reaches_host(self) -> bool:
        """Whether the host's root, a system or credential folder, or the runtime's socket is reachable."""
        return self.host_access or any(
            is_root_target(source) or _SOCKET.search(source) or any(target_rules(source, writes=False))
            for source, _ in self.mounts)

    def on_host(self, word: Word) -> Word:
        """``word`` as a host path when it lies under a mount target (``/h/etc`` with ``-v /:/h`` is ``/etc``)."""
        for source, target in self.mounts:
            target = target.rstrip("/") or "/"
            if word.text == target or word.text.startswith(f"{target}/"):
                rest = word.text[len(target):].lstrip("/")
                return Word(f"{source.rstrip('/')}/{rest}" if rest else source, word.static)
        return word


def container_run(invocation: Invocation) -> ContainerRun | None:
    """The run of ``docker run ...`` (or ``docker container run``), or None when it is no container run."""
    texts = invocation.texts
    start = 1 if texts[:1] and texts[0] in _RUN_VERBS else 2 if texts[:2] in (["container", "run"],
                                                                             ["container", "create"]) else 0
    if invocation.name not in RUNTIMES or not start:
        return None
    run = ContainerRun()
    args = invocation.args[start:]
    index = 0
    while index < len(args) and args[index].text.startswith("-") and args[index].text != "--":
        option, has_value, value = args[index].text.partition("=")
        if not option.startswith("--") and len(option) > 2:  # -it, -v/:/h
            if all(letter in _SHORT_FLAGS for letter in option[1:]):
                index += 1
                continue
            cut = next(i for i, letter in enumerate(option[1:], 1) if letter not in _SHORT_FLAGS)
            option, value, has_value = option[:cut + 1], args[index].text[cut + 1:], "=" if option[cut + 1:] else ""
        if not has_value and option not in _FLAGS and not (len(option) == 2 and option[1] in _SHORT_FLAGS):
            index += 1
            value = args[index].text if index < len(args) else ""
        _option(run, option, value)
        index += 1
    index += 1 if index < len(args) and args[index].text == "--" else 0
    run.command = list(args[index + 1:])  # after the image
    return run


def _option(run: ContainerRun, option: str, value: str) -> None:
    if option in ("-v", "--volume"):
        source, _, rest = value.partition(":")
        if source.startswith(("/", "~", "$", ".")):  # a named volume is not a host path
            run.mounts.append((source, rest.partition(":")[0]))
    elif option == "--mount":
        fields = dict(part.partition("=")[::2] for part in value.split(","))
        source = fields.get("source") or fields.get("src") or ""
        target = fields.get("target") or fields.get("destination") or fields.get("dst") or ""
        if fields.get("type", "volume") == "bind" and source:
            run.mounts.append((source, target))
    elif option in ("--privileged", "--device") or (option == "--cap-add" and value.upper() in _HOST_CAPABILITIES) \
            or (_HOST_NAMESPACE.match(option) and value == "host") \
            or (option == "--security-opt" and "unconfined" in value):
        run.host_access = True

