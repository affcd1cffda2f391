"""Container runs (``docker run``, ``podman run``...): what of the host they reach, and the command they run.

A container that mounts the host's root is the host: ``docker run -v /:/h alpine rm -rf /h`` deletes ``/``.
So the command run inside is read with each mount's target replaced by its host source, and checked like any
other command.

The runtime's global options come before its verb (``docker --context prod run``, ``docker -H tcp://x run``,
``podman --remote run``) and some take a value: every word ``run``/``create`` that can be the verb after them
is read as one (a few readings at most), so a global option never hides the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from .invocation import Invocation
from .programs import is_root_target, target_rules
from .shell import Word

__all__ = ["RUNTIMES", "ContainerRun", "container_runs"]

RUNTIMES: Final = frozenset({"docker", "podman", "nerdctl", "finch", "docker-compose", "lima", "colima"})
_RUN_VERBS: Final = frozenset({"run", "create"})
#: Words that may stand between the global options and the verb (``docker container run``, ``docker compose
#: run``, ``lima nerdctl run``).
_GROUPS: Final = frozenset({"container", "compose", "nerdctl", "docker", "podman"})
#: Global options known to take no value (any other option before the verb may take the next word).
_GLOBAL_FLAGS: Final = frozenset({"-D", "--debug", "--tls", "--tlsverify", "-r", "--remote", "-v", "--version",
                                  "--help", "--noout", "--syslog", "--transient-store", "--debug-full",
                                  "--experimental", "--insecure-registry", "--compatibility", "--dry-run"})
#: How many readings of the words before the verb are checked.
_MAX_READINGS: Final = 4
#: Options of ``docker run`` that take no value (every other option does).
_FLAGS: Final = frozenset({
    "--rm", "--init", "--privileged", "--read-only", "--detach", "--interactive", "--tty", "--publish-all",
    "--no-healthcheck", "--oom-kill-disable", "--sig-proxy", "--disable-content-trust", "--quiet", "--help",
    "--replace", "--systemd", "--rootfs",
    # docker compose run
    "--no-deps", "--service-ports", "--use-aliases", "--build", "--quiet-pull", "--remove-orphans", "--no-TTY"})
_SHORT_FLAGS: Final = "ditPqT"
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


def container_runs(invocation: Invocation) -> list[ContainerRun]:
    """Each reading of ``docker [global options] run ...`` (or ``container run``, ``compose run``) as a run; none
    when it is no container run."""
    if invocation.name not in RUNTIMES:
        return []
    return [_run(invocation.args[start:]) for start in _verb_ends(invocation.texts)]


def _verb_ends(texts: list[str]) -> list[int]:
    """Where the run's own options start, for each word that can be the verb ``run`` or ``create``."""
    ends: list[int] = []
    valued = False  # the previous word was an option that may take this word as its value
    for index, text in enumerate(texts):
        if len(ends) >= _MAX_READINGS:
            break
        if text in _RUN_VERBS:
            ends.append(index + 1)
        if text.startswith("-") and text != "--":
            valued = "=" not in text and text not in _GLOBAL_FLAGS
        elif valued or text in _GROUPS or text in _RUN_VERBS:
            valued = False
        else:
            break  # another verb: not a run
    return ends


def _run(args: tuple[Word, ...]) -> ContainerRun:
    """The run described by the words after ``run``: its options, its image and its command."""
    run = ContainerRun()
    index = 0
    while index < len(args) and args[index].text.startswith("-") and args[index].text != "--":
        option, has_value, value = args[index].text.partition("=")
        if not option.startswith("--") and len(option) > 2:  # -it, -v/:/h
            if all(letter in _SHORT_FLAGS for letter in option[1:]):
                index += 1
                continue
            cut = next(i for i, letter in enumerate(option[1:], 1) if letter not in _SHORT_FLAGS)
            option, value, has_value = option[:cut + 1], args[index].text[cut + 1:], "=" if option[cut + 1:] else ""
        if not has_value and option not in _FLAGS and not (len(option) == 2 and option[1] in _SHORT_FLAGS) \
                and not (index + 1 < len(args) and args[index + 1].text.startswith("-")):
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

