"""podman as this kind of VM needs it, for the docker backend's tests and its benchmark: a wrapper executable and an
image built offline from a busybox-static root file system.

The wrapper is what podman needs here (and what the backend must not know about): a private mount namespace with
cgroup2 mounted on /sys/fs/cgroup, ``--cgroups=disabled`` and explicit ``--ulimit`` options on ``run``, and a
storage of its own. It logs every command line it is given. No registry is reachable, so the image is made with
``podman import``.
"""

from __future__ import annotations

import io
import shutil
import stat
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hermes_core.authoring.testing import scaled_timeout

IMAGE = "localhost/hermes-busybox:test"
OS_RELEASE = 'NAME="Hermes test busybox"\nID=hermes-busybox\n'
#: The wrapper: each command line logged (arguments separated by US, one line each), then podman run the VM's way.
WRAPPER = """#!/bin/sh
printf '%s\\037' "$@" >> {log}; printf '\\n' >> {log}
case "$1" in
  run|create) verb=$1; shift
    set -- "$verb" --cgroups=disabled --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 "$@" ;;
esac
exec unshare -m sh -c 'mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null; exec "$@"' sh \\
  {podman} --root {root} --runroot {runroot} --cgroup-manager=cgroupfs --events-backend=file "$@"
"""


@dataclass(frozen=True)
class Podman:
    """The wrapper executable to set as ``terminal.docker.executable``, and the image it holds."""

    executable: Path
    log: Path
    #: The storage (images, containers) of this podman.
    state: Path
    image: str = IMAGE

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.executable), *args], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=scaled_timeout(timeout))

    def calls(self) -> list[list[str]]:
        """Every command line the wrapper was given so far."""
        text = self.log.read_text() if self.log.exists() else ""
        return [line.rstrip("\x1f").split("\x1f") for line in text.splitlines() if line]

    def containers(self) -> list[str]:
        """The names of the containers that exist, running or not."""
        listed = self.run("ps", "-a", "--format", "{{.Names}}")
        assert listed.returncode == 0, listed.stderr
        return listed.stdout.split()

    def remove(self) -> None:
        """Remove every container and image, and the storage."""
        self.run("rm", "-a", "-f", timeout=120)
        self.run("rmi", "-a", "-f", timeout=120)
        shutil.rmtree(self.state, ignore_errors=True)


def busybox_root_tar() -> bytes:
    """A root file system holding busybox-static and a link for each of its applets, as a tar archive."""
    busybox = shutil.which("busybox") or "/bin/busybox"
    applets = subprocess.run([busybox, "--list"], capture_output=True, text=True, check=True).stdout.split()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for folder in ("bin", "etc", "tmp", "root", "proc", "sys", "dev", "run", "var", "var/tmp"):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder.endswith("tmp") else 0o755
            archive.addfile(info)
        archive.add(busybox, "bin/busybox")
        for applet in applets:
            if applet != "busybox":
                info = tarfile.TarInfo(f"bin/{applet}")
                info.type, info.linkname = tarfile.SYMTYPE, "busybox"
                archive.addfile(info)
        for name, text in (("etc/os-release", OS_RELEASE), ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"),
                           ("etc/group", "root:x:0:\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _static(path: str) -> bool:
    with open(path, "rb") as binary:
        return b"/ld-linux" not in binary.read(1 << 20)


def make_podman(folder: Path) -> Podman | str:
    """podman working on this machine with the busybox image imported, its files in ``folder`` (and a short-named
    temporary folder, removed by :meth:`Podman.remove`); or why it cannot be."""
    podman, busybox = shutil.which("podman"), shutil.which("busybox")
    if podman is None or shutil.which("unshare") is None:
        return "podman is not installed (apt-get install podman); .ci/run installs it"
    if busybox is None or not _static(busybox):
        return "busybox-static is not installed (apt-get install busybox-static); .ci/run installs it"
    # podman's sockets live under the run root, and a socket's path must stay short: a folder of the temporary root
    state = Path(tempfile.mkdtemp(prefix="hp-"))
    log = folder / "calls.log"
    wrapper = folder / "podman"
    wrapper.write_text(WRAPPER.format(log=log, podman=podman, root=state / "root", runroot=state / "run"))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    made = Podman(wrapper, log, state)
    (folder / "root.tar").write_bytes(busybox_root_tar())
    imported = made.run("import", str(folder / "root.tar"), IMAGE, timeout=120)
    if imported.returncode != 0:
        made.remove()
        return f"podman cannot work on this machine: {imported.stderr.strip()[-500:]}"
    probe = made.run("run", "--rm", "--network", "none", "--entrypoint", "sh", IMAGE, "-c", "echo ok", timeout=120)
    if probe.stdout != "ok\n":
        made.remove()
        return f"podman cannot run a container on this machine: {probe.stderr.strip()[-500:]}"
    return made
