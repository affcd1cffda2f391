"""Lock files cannot be turned against their user: a planted symbolic link is never followed or created through, a
lock folder another user owns or everyone may write is refused with the reason, and a lock file of another user's
says so (never "being edited")."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from hermes_core.config import filelock
from hermes_core.errors import UnsafeFileError

TIMEOUT = 300 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))
unix_root = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                               reason="needs root, to own files as another user")
unix = pytest.mark.skipif(sys.platform == "win32", reason="folder modes and O_NOFOLLOW are Unix's")


def disable_a_plugin(home: Path) -> subprocess.CompletedProcess[str]:
    """``hermes plugins disable xp``, an edit of config.yaml under its lock."""
    (home / "plugins" / "xp").mkdir(parents=True, exist_ok=True)
    (home / "plugins" / "xp" / "plugin.yaml").write_text("name: xp\n")
    return hermes(home, "plugins", "disable", "xp")


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", *args], env=env, text=True, capture_output=True,
                          timeout=TIMEOUT)


@unix
def test_a_dangling_symlink_as_the_config_lock_creates_nothing(isolated_home: Path, tmp_path: Path) -> None:
    target = tmp_path / "outside" / "created-by-hermes"
    target.parent.mkdir()
    (isolated_home / "config.yaml.lock").symlink_to(target)
    result = disable_a_plugin(isolated_home)
    assert result.returncode == 1
    assert "the lock file is a symbolic link" in result.stderr and "Traceback" not in result.stderr
    assert not target.exists()


@unix
def test_a_symlink_to_a_file_as_the_lock_is_refused_and_the_file_is_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    lock = tmp_path / "edit.lock"
    lock.symlink_to(victim)
    with pytest.raises(UnsafeFileError, match="symbolic link"), filelock.exclusive_lock(lock, timeout=1):
        pass
    assert victim.read_text() == "precious"


@unix
def test_a_world_writable_lock_folder_is_refused_with_the_reason(isolated_home: Path) -> None:
    isolated_home.chmod(0o777)
    result = disable_a_plugin(isolated_home)
    assert result.returncode == 1
    assert "writable by every user" in result.stderr and "chmod o-w" in result.stderr
    assert not (isolated_home / "config.yaml").exists()


@unix
def test_a_fifo_as_the_lock_file_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "edit.lock")
    with pytest.raises(UnsafeFileError, match="not a regular file"), filelock.exclusive_lock(tmp_path / "edit.lock", 1):
        pass


@unix_root
def test_a_lock_folder_of_another_user_is_refused_naming_the_owner(isolated_home: Path) -> None:
    os.chown(isolated_home, 65534, 65534)
    result = disable_a_plugin(isolated_home)
    assert result.returncode == 1
    assert "belongs to" in result.stderr and "uid 65534" in result.stderr
    assert "being edited" not in result.stderr and "locked" not in result.stderr


@unix_root
def test_a_lock_file_another_user_cannot_open_says_whose_it_is() -> None:
    folder = Path(tempfile.mkdtemp())  # in the shared temporary folder, which every user can reach
    try:
        os.chown(folder, 65534, 65534)
        (folder / "edit.lock").write_text("")
        (folder / "edit.lock").chmod(0o600)  # root's, left behind
        message = _lock_as_nobody(folder / "edit.lock")
    finally:
        shutil.rmtree(folder)
    assert message.startswith("UnsafeFileError:"), message
    assert "belongs to root (uid 0)" in message and "cannot open it" in message


def _lock_as_nobody(lock: Path) -> str:
    """The error a process of user ``nobody`` (uid 65534) gets taking ``lock``."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # as the other user: try the lock, report the error
        os.close(read)
        message = "no error"
        try:
            os.setgid(65534)
            os.setuid(65534)
            with filelock.exclusive_lock(lock, timeout=1):
                pass
        except BaseException as exc:
            message = f"{type(exc).__name__}: {exc}"
        os.write(write, message.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        message = pipe.read()
    os.waitpid(child, 0)
    return message


@unix
def test_the_per_user_lock_folder_stays_private(tmp_path: Path) -> None:
    folder = filelock._lock_folder()
    info = os.lstat(folder)
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWOTH | 0o070)
