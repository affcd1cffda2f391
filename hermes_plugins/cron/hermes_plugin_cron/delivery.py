"""Where a run's result goes besides its output file (``deliver``, comma-separated as in Hermes Agent):

- ``local`` (the default): nowhere else; ``origin`` without an origin chat means the same;
- ``file:<path>``: a file in the workspace (relative, inside it), replaced by each run's result;
- an ``http(s)://`` URL: a webhook, POSTed a JSON object, through the web pack's address guard (loopback and
  private addresses only with ``web.allow_private_networks``; link-local and cloud metadata never);
- anything else names a messaging platform (``telegram``, ``discord:#ops``, ``all``, an origin chat): refused,
  since Hermes runs no messaging gateway.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import urlsplit

__all__ = ["DeliveryRefused", "check_targets", "deliver", "normalize_deliver", "targets"]

WEBHOOK_TIMEOUT = 20.0
NO_GATEWAY = ("Hermes runs no messaging gateway, so it cannot deliver there; use 'local' (the output file only), "
              "'file:<path in the workspace>' or an http(s) webhook URL")


class DeliveryRefused(ValueError):
    """A delivery target Hermes cannot or may not deliver to; the message says why."""


def normalize_deliver(value: object) -> str | None:
    """The canonical ``deliver`` text: a list is joined with commas (as Hermes Agent flattens it); empty is None."""
    if value is None:
        return None
    if isinstance(value, list | tuple):
        parts = [str(part).strip() for part in value if str(part).strip()]
        return ",".join(parts) or None
    return str(value).strip() or None


def targets(deliver: object, origin: object = None) -> list[str]:
    """The targets of a job's ``deliver`` that go anywhere (``local`` and an origin-less ``origin`` do not);
    raises :class:`DeliveryRefused` for the first that Hermes cannot deliver to."""
    found: list[str] = []
    for part in (normalize_deliver(deliver) or "local").split(","):
        part = part.strip()
        if not part or part == "local":
            continue
        if part == "origin":
            if isinstance(origin, dict) and origin.get("platform"):
                raise DeliveryRefused(f"'origin' is the {origin['platform']} chat this job came from; {NO_GATEWAY}")
            continue
        if part.startswith("file:"):
            _relative_file(part[5:])
        elif part.startswith(("http://", "https://")):
            parsed = urlsplit(part)
            if not parsed.hostname:
                raise DeliveryRefused(f"webhook URL {part!r} has no host")
        else:
            raise DeliveryRefused(f"'{part}' is a messaging platform target; {NO_GATEWAY}")
        if part not in found:
            found.append(part)
    return found


def check_targets(deliver: object, allow_private: bool) -> None:
    """Refuse, when a job is created or changed, a target its runs could never deliver to (an address the guard
    refuses is refused now too, when the web pack is installed)."""
    for target in targets(deliver):
        if target.startswith(("http://", "https://")):
            guard = _guard()
            if guard is not None:
                try:
                    guard(target, allow_private=allow_private)
                except ValueError as exc:
                    raise DeliveryRefused(str(exc)) from None


def deliver(target: str, payload: dict[str, Any], content: str, workspace: Path, allow_private: bool) -> None:
    """Deliver one run's ``content`` to ``target``; raises :class:`DeliveryRefused` (or ``OSError``) saying why not."""
    if target.startswith("file:"):
        _write_file(workspace, _relative_file(target[5:]), content)
    else:
        _post(target, payload, allow_private)


def _relative_file(text: str) -> PurePosixPath:
    path = text.strip()
    if not path:
        raise DeliveryRefused("'file:' needs a path in the workspace, e.g. file:reports/daily.md")
    if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute() or PureWindowsPath(path).drive \
            or path.startswith("~"):
        raise DeliveryRefused(f"delivery file {path!r} must be relative to the workspace")
    relative = PurePosixPath(path.replace("\\", "/"))
    if ".." in relative.parts:
        raise DeliveryRefused(f"delivery file {path!r} leaves the workspace ('..')")
    return relative


def _write_file(workspace: Path, relative: PurePosixPath, content: str) -> None:
    root = workspace.resolve()
    target = root.joinpath(*relative.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    resolved = target.parent.resolve() / target.name
    if not resolved.is_relative_to(root) or (target.is_symlink() and not target.resolve().is_relative_to(root)):
        raise DeliveryRefused(f"delivery file {str(relative)!r} leads out of the workspace (a symbolic link)")
    fd, temporary = tempfile.mkstemp(dir=resolved.parent, prefix=".cron_", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.replace(temporary, resolved)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _guard() -> Any:
    """The web pack's ``check_url`` (None when hermes-tools-web is not installed)."""
    try:
        from hermes_plugin_web.guard import check_url
    except ImportError:
        return None
    return check_url


def _post(url: str, payload: dict[str, Any], allow_private: bool) -> None:
    """POST ``payload`` to ``url``, connecting only to an address the guard checked (no redirect followed)."""
    guard = _guard()
    if guard is None:
        raise DeliveryRefused("webhook delivery goes through the web pack's address guard: pip install "
                              "hermes-tools-web (or hermes-tools-cron[webhook])")
    import httpx

    try:
        addresses = guard(url, allow_private=allow_private)
    except ValueError as exc:
        raise DeliveryRefused(str(exc)) from None
    parsed = httpx.URL(url)
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = {"Host": parsed.netloc.decode("ascii"), "Content-Type": "application/json",
               "User-Agent": "hermes-tools-cron"}
    extensions = {"sni_hostname": parsed.host} if parsed.scheme == "https" else {}
    last: Exception | None = None
    with httpx.Client(follow_redirects=False, timeout=WEBHOOK_TIMEOUT) as client:
        for address in addresses:  # the first checked address that takes the connection
            try:
                response = client.post(parsed.copy_with(host=address), content=body, headers=headers,
                                       extensions=extensions)
            except httpx.ConnectError as exc:
                last = exc
                continue
            except httpx.HTTPError as exc:
                raise DeliveryRefused(f"webhook {url}: {exc or type(exc).__name__}") from None
            if response.is_redirect:
                raise DeliveryRefused(f"webhook {url} answered {response.status_code} (redirects are not followed)")
            if response.is_error:
                raise DeliveryRefused(f"webhook {url} answered {response.status_code} {response.reason_phrase}")
            return
    raise DeliveryRefused(f"webhook {url}: cannot connect ({last})")
