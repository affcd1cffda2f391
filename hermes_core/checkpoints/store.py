"""The shadow git store: one repository for every workspace, in Hermes Agent's layout, so both read the same one.

::

    $HERMES_HOME/checkpoints/
        store/                      a bare repository: git deduplicates files across workspaces and checkpoints
            refs/hermes/<key>       a workspace's newest checkpoint; each one's parent is the one before
            indexes/<key>           the workspace's own index (the user's repository, if any, is never touched)
            projects/<key>.json     {workdir, created_at, last_touch}
            info/exclude            what is never checkpointed (dependencies, caches, builds, secrets, media)
        .last_prune                 when the store was last pruned

``<key>`` is the first 16 hex digits of the SHA-256 of the workspace's real path. A checkpoint is the workspace as
``git add -A`` sees it (the workspace's own ``.gitignore`` files apply too), minus files over the size cap, which
are left out before git reads them. Restoring makes the workspace (or a path of it) as the checkpoint holds it: its
files written back, files made since deleted (files left out of checkpoints are never touched), after a checkpoint
of the present, so a restore can be undone too.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

from ..config.cachefile import write_json
from ..config.filelock import exclusive_lock
from ..config.untrusted import read_untrusted_text
from ..errors import CheckpointError
from .git import GIT_SECONDS, Git

if TYPE_CHECKING:
    from ..config.model import CheckpointsConfig

__all__ = ["EXCLUDES", "Checkpoint", "CheckpointDiff", "CheckpointStore", "Restored", "workspace_key"]

#: Hermes Agent's excludes: dependencies, build output, caches, virtualenvs, VCS folders, binaries, media and
#: archives, secrets, OS files and logs.
EXCLUDES: Final = (
    "node_modules/", "dist/", "build/", "target/", "out/", ".next/", ".nuxt/",
    "__pycache__/", "*.pyc", "*.pyo", ".cache/", ".pytest_cache/", ".mypy_cache/", ".ruff_cache/", "coverage/",
    ".coverage", ".venv/", "venv/", "env/", ".git/", ".hg/", ".svn/", ".worktrees/",
    "*.so", "*.dylib", "*.dll", "*.o", "*.a", "*.jar", "*.class", "*.exe", "*.obj",
    "*.mp4", "*.mov", "*.mkv", "*.webm", "*.zip", "*.tar", "*.tar.gz", "*.tgz", "*.7z", "*.rar", "*.iso",
    ".env", ".env.*", ".env.local", ".env.*.local", ".DS_Store", "Thumbs.db", "*.log",
)
_REFS: Final = "refs/hermes"
_ID: Final = re.compile(r"[0-9a-fA-F]{4,64}")
_MB: Final = 1024 * 1024
#: How many checkpoints past ``max_snapshots`` a workspace may have before its history is cut back (each cut
#: rewrites the kept ones, so it is done now and then, not at every checkpoint).
_SLACK: Final = 5
#: The store's own settings: no automatic gc, no signing, no reflogs.
_CONFIG: Final = "[gc]\n\tauto = 0\n[commit]\n\tgpgsign = false\n[core]\n\tlogAllRefUpdates = false\n"
_SEPARATOR: Final = "\x1f"
_RECORD: Final = "\x1e"
#: Up to this many new or changed files are staged by name; more, by one walk of the workspace.
_NAMED_ADD: Final = 1000
_STAT: Final = re.compile(r"(\d+) (file|insertion|deletion)")


class Checkpoint(NamedTuple):
    """One checkpoint of a workspace, and what changed since the one before it."""

    id: str
    created: str  #: ISO 8601, with the offset
    reason: str
    files_changed: int = 0
    insertions: int = 0
    deletions: int = 0

    @property
    def short_id(self) -> str:
        return self.id[:8]


class CheckpointDiff(NamedTuple):
    """How the workspace differs from a checkpoint (``git diff --stat`` and the patch, from the checkpoint)."""

    id: str
    stat: str
    patch: str


class Restored(NamedTuple):
    """What a restore did."""

    id: str
    reason: str  #: the restored checkpoint's reason
    path: str  #: what was restored, relative to the workspace (``.``: all of it)
    #: The checkpoint of the workspace as it was before the restore (the newest one, when it was that already).
    before: Checkpoint


def workspace_key(workspace: Path) -> str:
    """The workspace's name in the store (Hermes Agent's: the first 16 hex digits of its real path's SHA-256)."""
    return hashlib.sha256(str(workspace.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]


class _Workspace:
    """One workspace's ref, index, metadata file and git.

    Its git's ``GIT_DIR`` is a linked-worktree folder of the store (``worktrees/<key>``, holding a ``HEAD`` that names
    the workspace's ref): ``git commit`` then commits the workspace's index onto its own ref, as ``git add -A && git
    commit`` would in a repository of its own, with no command more. (``git gc`` removes such folders; they are
    made again when missing.)
    """

    def __init__(self, store: Path, folder: Path) -> None:
        self.folder = folder.resolve()
        self.key = workspace_key(self.folder)
        self.ref = f"{_REFS}/{self.key}"
        self.ref_file = store / self.ref
        self.meta = store / "projects" / f"{self.key}.json"
        self.admin = store / "worktrees" / self.key
        self.index = store / "indexes" / self.key
        self.git = Git(self.admin, self.folder, self.index)

    def attach(self) -> None:
        """Make the worktree folder if it is missing."""
        if not (self.admin / "HEAD").exists():
            self.admin.mkdir(parents=True, exist_ok=True)
            (self.admin / "commondir").write_text("../..\n", encoding="utf-8")
            (self.admin / "HEAD").write_text(f"ref: {self.ref}\n", encoding="utf-8")


class CheckpointStore:
    """The store under ``root`` (``$HERMES_HOME/checkpoints``); ``settings`` is ``checkpoints:`` of config.yaml."""

    def __init__(self, root: Path, settings: CheckpointsConfig) -> None:
        self.root = root.absolute()
        self.path = self.root / "store"
        self.settings = settings

    # -- the store ------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The store's lock (held by whatever writes to it, in this process or another)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(self.root / ".lock", timeout=GIT_SECONDS * 2):
            yield

    def _init(self) -> None:
        if (self.path / "HEAD").exists():
            return
        Git(self.path)("init", "--bare", "--quiet", str(self.path))
        with (self.path / "config").open("a", encoding="utf-8") as config:  # (one git config call each is slower)
            config.write(_CONFIG)
        for folder in ("indexes", "projects", "info"):
            (self.path / folder).mkdir(exist_ok=True)
        (self.path / "info" / "exclude").write_text("\n".join(EXCLUDES) + "\n", encoding="utf-8")

    def _workspace(self, folder: Path) -> _Workspace:
        if not folder.is_dir():
            raise CheckpointError(f"the workspace {folder} does not exist or is not a folder")
        ws = _Workspace(self.path, folder)
        if (self.path / "HEAD").exists():
            ws.attach()
        return ws

    # -- taking one -----------------------------------------------------------------------------------------

    def take(self, workspace: Path, reason: str) -> Checkpoint | None:
        """Checkpoint ``workspace``; ``None`` when nothing changed since its newest checkpoint (or it is empty)."""
        with self._locked():
            self._init()
            return self._take(self._workspace(workspace), reason)

    def _take(self, ws: _Workspace, reason: str) -> Checkpoint | None:
        included = self._stage(ws, commit_includes=True)
        subject = " ".join(reason.split())[:200] or "checkpoint"
        created = datetime.now(UTC).astimezone().isoformat(timespec="seconds")
        include = ["--include", "--pathspec-from-file=-", "--pathspec-file-nul"] if included else []
        code, _ = ws.git.run("commit", "--quiet", "--no-verify", "--no-gpg-sign", "--cleanup=verbatim", "-m", subject,
                             *include, input=_pathspecs(included) if included else None, codes=(0, 1),
                             env={"GIT_AUTHOR_DATE": created, "GIT_COMMITTER_DATE": created})
        if code == 1:  # nothing to commit: the workspace is as its newest checkpoint holds it (or empty)
            return None
        try:
            commit = ws.ref_file.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            commit = ws.git("rev-parse", ws.ref)
        count = self._touch(ws, added=1)
        if count > self.settings.max_snapshots + _SLACK:
            self._cut(ws, self.settings.max_snapshots)
            commit = ws.git("rev-parse", ws.ref)
        return Checkpoint(commit, created, subject)

    def _stage(self, ws: _Workspace, *, commit_includes: bool = False) -> builtins.list[str]:
        """Stage into the workspace's index what changed since it was staged last, files over the size cap left
        out before git reads them; returns the changed tracked files left for ``git commit --include`` (with
        ``commit_includes``). A few changed files are staged by name, which spares git a second walk of the
        workspace (and, when none is new, a command: the commit stages them); more, by ``git add -A``."""
        cap = self.settings.max_file_size_mb * _MB
        _, listed = ws.git.run("ls-files", "-z", "-t", "--others", "--modified", "--exclude-standard")
        tagged = [(entry[0], entry[2:]) for entry in listed.split("\0") if len(entry) > 2]
        if len(tagged) > self.settings.max_files:
            raise CheckpointError(f"{len(tagged)} files of {ws.folder} are new or changed, more than "
                                  f"checkpoints.max_files ({self.settings.max_files}): not checkpointed")
        oversize = {name for _, name in tagged if cap and _size(ws.folder / name) > cap}
        if oversize:
            ws.git("rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul",
                   input=_pathspecs(sorted(oversize)))
        if len(tagged) <= _NAMED_ADD and ws.index.exists():
            new = [name for tag, name in tagged if tag == "?" and name not in oversize]
            tracked = [name for tag, name in tagged if tag != "?" and name not in oversize]
            if commit_includes and not new:
                return tracked
            with contextlib.suppress(CheckpointError):  # a file that vanished since: the whole way below
                if new or tracked:
                    ws.git("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
                           input=_pathspecs(new + tracked))
                return []
        ws.git("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
               input=b"\0".join([b".", *(b":(exclude,literal)" + os.fsencode(name) for name in sorted(oversize))]))
        return []

    # -- reading them ---------------------------------------------------------------------------------------

    def list(self, workspace: Path, limit: int | None = None) -> list[Checkpoint]:
        """The checkpoints of ``workspace``, newest first (at most ``limit``, else ``max_snapshots``)."""
        if not (self.path / "HEAD").exists():
            return []
        return self._entries(self._workspace(workspace), limit or self.settings.max_snapshots)

    def _entries(self, ws: _Workspace, limit: int) -> builtins.list[Checkpoint]:
        # (raw: the separators are white space to str.strip)
        _, out = ws.git.run("log", "--ignore-missing", ws.ref, "-n", str(limit), "--shortstat",
                            f"--format={_RECORD}%H{_SEPARATOR}%aI{_SEPARATOR}%s")
        entries = []
        for record in out.split(_RECORD)[1:]:
            head, _, stat = record.partition("\n")
            commit, created, reason = [*head.split(_SEPARATOR), "", ""][:3]
            counts = {kind: int(number) for number, kind in _STAT.findall(stat)}
            entries.append(Checkpoint(commit, created, reason, counts.get("file", 0), counts.get("insertion", 0),
                                      counts.get("deletion", 0)))
        return entries

    def _resolve(self, ws: _Workspace, checkpoint_id: str) -> str:
        """The full id of the checkpoint of ``ws`` that ``checkpoint_id`` (its id or a prefix of 4+ digits) names."""
        if not _ID.fullmatch(checkpoint_id):
            raise CheckpointError(f"{checkpoint_id!r} is not a checkpoint id (4 to 64 hex digits, as `hermes "
                                  "checkpoints list` shows them)")
        code, found = ws.git.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{checkpoint_id}^{{commit}}",
                                 codes=(0, 1, 128)) if (self.path / "HEAD").exists() else (1, "")
        commit = found.strip()
        if code != 0 or ws.git.run("merge-base", "--is-ancestor", commit, ws.ref, codes=(0, 1, 128))[0] != 0:
            raise CheckpointError(f"no checkpoint {checkpoint_id} of the workspace {ws.folder} (`hermes checkpoints "
                                  "list` shows them; a short id that is ambiguous needs more digits)")
        return commit

    def diff(self, workspace: Path, checkpoint_id: str) -> CheckpointDiff:
        """How ``workspace`` differs from the checkpoint now."""
        with self._locked():
            ws = self._workspace(workspace)
            commit = self._resolve(ws, checkpoint_id)
            self._stage(ws)
            stat = ws.git.run("diff", "--cached", "--stat", "--no-color", commit)[1].rstrip("\n")
            patch = ws.git.run("diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", commit)[1]
        return CheckpointDiff(commit, stat, patch)

    # -- restoring one --------------------------------------------------------------------------------------

    def restore(self, workspace: Path, checkpoint_id: str, path: str | None = None) -> Restored:
        """Make the workspace (or ``path`` of it, which must be inside it) as the checkpoint holds it, after a
        checkpoint of the workspace as it is."""
        with self._locked():
            ws = self._workspace(workspace)
            commit = self._resolve(ws, checkpoint_id)
            relative = _inside(ws.folder, path) if path else "."
            if relative != "." and ws.git.run("cat-file", "-e", f"{commit}:{relative}", codes=(0, 1, 128))[0] != 0:
                raise CheckpointError(f"the checkpoint {commit[:8]} has no {relative}")
            reason = ws.git("log", "-1", "--format=%s", commit)
            before = self._take(ws, f"before restoring {commit[:8]}") or self._entries(ws, 1)[0]
            # no overlay: what the checkpoint lacks under the path is deleted (the checkpoint just taken holds it);
            # an empty checkpoint of an empty workspace matches nothing (exit code 1), and there is nothing to do
            ws.git("checkout", "--no-overlay", commit, "--", f":(literal){relative}" if relative != "." else ".",
                   codes=(0, 1) if relative == "." else (0,))
            self._touch(ws, added=0)
        return Restored(commit, reason, relative, before)

    # -- keeping it small -----------------------------------------------------------------------------------

    def _touch(self, ws: _Workspace, *, added: int) -> int:
        """Record that ``ws`` was used now (and had ``added`` more checkpoints); its number of checkpoints."""
        meta = self._meta(ws.meta)
        now = time.time()
        count = meta.get("count")
        if not isinstance(count, int):  # a new workspace, or metadata Hermes Agent wrote
            count = int(ws.git("rev-list", "--count", "--ignore-missing", ws.ref) or 0) - added if meta else 0
        meta.update(workdir=str(ws.folder), created_at=meta.get("created_at", now), last_touch=now,
                    count=count + added)
        write_json(ws.meta, meta)
        return count + added

    @staticmethod
    def _meta(path: Path) -> dict[str, object]:
        try:
            meta = json.loads(read_untrusted_text(path, 64 * 1024))
        except (OSError, ValueError):
            return {}
        return meta if isinstance(meta, dict) else {}

    def _cut(self, ws: _Workspace, keep: int) -> None:
        """Keep the newest ``keep`` checkpoints of ``ws`` (each rewritten on the one before; dates kept)."""
        _, out = ws.git.run("log", ws.ref, "-n", str(keep), f"--format=%T{_SEPARATOR}%aI{_SEPARATOR}%cI{_SEPARATOR}%s")
        tip = ws.git("rev-parse", ws.ref)
        parent: str | None = None
        for line in reversed(out.splitlines()):
            tree, authored, committed, subject = [*line.split(_SEPARATOR), "", "", ""][:4]
            parent = ws.git("commit-tree", tree, *(["-p", parent] if parent else []), "-m", subject or "checkpoint",
                            env={"GIT_AUTHOR_DATE": authored, "GIT_COMMITTER_DATE": committed})
        if parent is not None:
            ws.git("update-ref", ws.ref, parent, tip)
            meta = self._meta(ws.meta)
            write_json(ws.meta, {**meta, "count": len(out.splitlines())})

    def prune(self, *, force: bool = False) -> builtins.list[str]:
        """Drop the checkpoints of workspaces that are gone (``delete_orphans``) or untouched for ``retention_days``,
        then the oldest ones while the store is over ``max_total_size_mb``, and reclaim the space. Unless
        ``force``, only when ``auto_prune`` is on and the last prune is ``min_interval_hours`` old. Returns the
        workspaces whose checkpoints were all dropped."""
        settings, marker = self.settings, self.root / ".last_prune"
        if not force and (not settings.auto_prune or _age(marker) < settings.min_interval_hours * 3600):
            return []
        if not (self.path / "HEAD").exists():
            return []
        with self._locked():
            dropped = self._drop_stale()
            trimmed = self._trim_to_size()
            if dropped or trimmed:
                git = Git(self.path)
                git("reflog", "expire", "--expire=now", "--all")
                git("gc", "--prune=now", "--quiet")
            marker.touch()
        return dropped

    def _drop_stale(self) -> builtins.list[str]:
        settings, now, dropped = self.settings, time.time(), []
        git = Git(self.path)
        for meta_file in sorted((self.path / "projects").glob("*.json")):
            meta = self._meta(meta_file)
            workdir, touched = str(meta.get("workdir") or ""), meta.get("last_touch")
            orphan = settings.delete_orphans and not Path(workdir).is_dir()
            stale = isinstance(touched, (int, float)) and now - touched > settings.retention_days * 86400
            if orphan or stale:
                git("update-ref", "-d", f"{_REFS}/{meta_file.stem}", codes=(0, 1))
                for leftover in (meta_file, self.path / "indexes" / meta_file.stem):
                    leftover.unlink(missing_ok=True)
                dropped.append(workdir)
        return dropped

    def _trim_to_size(self) -> bool:
        """Drop the oldest checkpoint of each workspace in turn (never its newest) while the store is over the
        cap; whether any was dropped."""
        cap = self.settings.max_total_size_mb * _MB
        trimmed = False
        for _ in range(self.settings.max_snapshots + _SLACK):
            if not cap or _store_size(self.path) <= cap:
                break
            cut = False
            for meta_file in sorted((self.path / "projects").glob("*.json")):
                workdir = Path(str(self._meta(meta_file).get("workdir") or ""))
                if not workdir.is_dir():
                    continue
                ws = self._workspace(workdir)
                count = int(ws.git("rev-list", "--count", "--ignore-missing", ws.ref) or 0)
                if count > 1:
                    self._cut(ws, count - 1)
                    cut = True
            if not cut:
                break
            trimmed = True
            Git(self.path)("gc", "--prune=now", "--quiet")
        return trimmed


def _pathspecs(names: list[str]) -> bytes:
    """``names`` as literal pathspecs for ``--pathspec-from-file --pathspec-file-nul``."""
    return b"\0".join(b":(literal)" + os.fsencode(name) for name in names)


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0


def _age(path: Path) -> float:
    """Seconds since ``path`` was modified (infinite when it does not exist)."""
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return float("inf")


def _store_size(store: Path) -> int:
    """Bytes of the store's objects (``git count-objects``: loose and packed)."""
    counted = dict(line.split(": ", 1) for line in Git(store)("count-objects", "-v").splitlines() if ": " in line)
    return (int(counted.get("size", 0)) + int(counted.get("size-pack", 0))) * 1024


def _inside(workspace: Path, path: str) -> str:
    """``path`` (relative to the workspace, or absolute) relative to the workspace; refused when it is outside,
    through ``..`` or a folder that is a symbolic link out of it. The last part is not followed: a restore
    replaces a link with what the checkpoint held there."""
    given = Path(path)
    full = given if given.is_absolute() else workspace / given
    full = full.resolve() if full.name in ("", ".", "..") else full.parent.resolve() / full.name
    try:
        relative = full.relative_to(workspace)
    except ValueError:
        raise CheckpointError(f"{path} is outside the workspace {workspace}: a restore only writes inside it") from None
    return relative.as_posix() if relative.parts else "."
