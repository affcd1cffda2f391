"""OAuth 2.1 for remote MCP servers, with the MCP SDK's own client (``OAuthClientProvider``): discovery, dynamic
client registration where the server offers it, PKCE, refresh. Hermes adds where tokens live and when a person
signs in.

Tokens and the registered client live in ``$HERMES_HOME/mcp-tokens/<server>.json`` and ``<server>.client.json``
(Hermes Agent's layout), files of mode 0600 in a folder of mode 0700, never in config.yaml. A connection only uses
and refreshes them: when the server wants a new sign-in (no token, or one it revoked), the connection fails with
"run hermes mcp login NAME"; ``hermes mcp login`` opens the browser and takes the redirect on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import anyio
import anyio.to_thread
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from ..config.model import McpOAuthConfig, McpServerConfig
from ..errors import McpLoginNeeded as LoginNeeded

__all__ = ["TokenFiles", "callback_server", "connection_auth", "login_auth", "sign_in"]

log = logging.getLogger(__name__)


def _file_name(server: str) -> str:
    return re.sub(r"[^\w\-]", "_", server).strip("_")[:128] or "default"


class TokenFiles:
    """The SDK's ``TokenStorage`` on files: one server's tokens (with their absolute expiry, so a later process
    knows they expired) and its registered client."""

    def __init__(self, folder: Path, server: str) -> None:
        self.folder = folder
        self.tokens_file = folder / f"{_file_name(server)}.json"
        self.client_file = folder / f"{_file_name(server)}.client.json"

    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring the unreadable token file %s: %s", path, exc)
            return None
        return data if isinstance(data, dict) else None

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            self.folder.chmod(0o700)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream)
        os.replace(temporary, path)

    def has_tokens(self) -> bool:
        return self._read(self.tokens_file) is not None

    def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch), when known."""
        value = (self._read(self.tokens_file) or {}).get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    async def get_tokens(self) -> OAuthToken | None:
        data = self._read(self.tokens_file)
        if data is None:
            return None
        expires_at = data.pop("expires_at", None)
        if isinstance(expires_at, int | float):
            data["expires_in"] = max(int(expires_at - time.time()), 0)
        try:
            return OAuthToken.model_validate(data)
        except ValueError as exc:
            log.warning("ignoring the malformed token file %s: %s", self.tokens_file, exc)
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            data["expires_at"] = time.time() + tokens.expires_in
        self._write(self.tokens_file, data)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        data = self._read(self.client_file)
        try:
            return OAuthClientInformationFull.model_validate(data) if data is not None else None
        except ValueError as exc:
            log.warning("ignoring the malformed client file %s: %s", self.client_file, exc)
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._write(self.client_file, client_info.model_dump(mode="json", exclude_none=True))

    def redirect_uri(self) -> str | None:
        """The redirect address the stored client was registered with."""
        uris = (self._read(self.client_file) or {}).get("redirect_uris") or []
        return str(uris[0]) if uris else None

    def remove(self, *, client: bool = True) -> bool:
        """Forget the tokens (and the registered client); whether there was anything."""
        removed = False
        for path in (self.tokens_file, self.client_file) if client else (self.tokens_file,):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed = True
        return removed


def _metadata(config: McpOAuthConfig, redirect_uri: str) -> OAuthClientMetadata:
    return OAuthClientMetadata.model_validate({
        "client_name": config.client_name, "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_post" if config.client_secret else "none",
        **({"scope": config.scope} if config.scope else {})})


def _preregistered(files: TokenFiles, config: McpOAuthConfig, metadata: OAuthClientMetadata,
                   expand: Callable[[str], str]) -> None:
    """Store the client of ``oauth.client_id`` (no dynamic registration then), unless one is stored already."""
    if config.client_id and files._read(files.client_file) is None:
        info = OAuthClientInformationFull.model_validate({
            **metadata.model_dump(mode="json", exclude_none=True), "client_id": expand(config.client_id),
            **({"client_secret": expand(config.client_secret)} if config.client_secret else {})})
        files._write(files.client_file, info.model_dump(mode="json", exclude_none=True))


def connection_auth(server: str, url: str, config: McpOAuthConfig | None, folder: Path,
                    expand: Callable[[str], str]) -> OAuthClientProvider:
    """The auth of a connection: the stored tokens, refreshed when they expire; ``LoginNeeded`` when there are
    none or the server wants a new sign-in (a connection never opens a browser)."""
    config = config or McpOAuthConfig()
    files = TokenFiles(folder, server)
    if not files.has_tokens():
        raise LoginNeeded(server, "needs a sign-in (no OAuth token is stored)")

    async def refuse(authorization_url: str) -> None:
        raise LoginNeeded(server, "refused the stored OAuth token (revoked or expired beyond refresh)")

    async def no_callback() -> AuthorizationCodeResult:
        raise LoginNeeded(server, "needs a new sign-in")

    redirect = config.redirect_uri or files.redirect_uri() or f"http://{config.redirect_host}/callback"
    metadata = _metadata(config, redirect)
    _preregistered(files, config, metadata, expand)
    provider = OAuthClientProvider(url, metadata, files, refuse, no_callback)
    # the SDK takes the stored tokens' expiry for "never": an expired one would not be refreshed before use
    provider.context.token_expiry_time = files.expires_at()
    return provider


# -- signing in ----------------------------------------------------------------------------------------


class _Redirect:
    """The one redirect a sign-in waits for."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.query: dict[str, str] = {}


@contextlib.contextmanager
def callback_server(config: McpOAuthConfig, files: TokenFiles) -> Iterator[tuple[str, _Redirect]]:
    """A server on 127.0.0.1 that takes the authorization server's redirect: the redirect address and what came."""
    redirect = _Redirect()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            query = {key: values[0] for key, values in parse_qs(urlparse(self.path).query).items()}
            if "code" not in query and "error" not in query:
                self.send_error(404)
                return
            body = b"Hermes: signed in, you can close this window." if "code" in query else \
                b"Hermes: the sign-in failed, see the terminal."
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            if not redirect.done.is_set():
                redirect.query = query
                redirect.done.set()

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("OAuth redirect: " + format, *args)

    known = urlparse(config.redirect_uri or files.redirect_uri() or "")
    port = config.redirect_port or (known.port if known.hostname in ("127.0.0.1", "localhost", "::1") else 0) or 0
    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=httpd.serve_forever, name="hermes-oauth-redirect", daemon=True)
    thread.start()
    try:
        host = config.redirect_host
        yield config.redirect_uri or f"http://{host}:{httpd.server_address[1]}/callback", redirect
    finally:
        httpd.shutdown()
        httpd.server_close()


def login_auth(server: str, url: str, config: McpOAuthConfig | None, files: TokenFiles, redirect_uri: str,
               redirect: _Redirect, open_url: Callable[[str], Awaitable[None]],
               expand: Callable[[str], str]) -> OAuthClientProvider:
    """The auth of ``hermes mcp login``: a fresh authorization, the user's browser sent to ``open_url``, the
    redirect taken by :func:`callback_server`."""
    config = config or McpOAuthConfig()
    files.remove(client=False)
    metadata = _metadata(config, redirect_uri)
    _preregistered(files, config, metadata, expand)
    timeout = config.timeout

    async def wait() -> AuthorizationCodeResult:
        if not await anyio.to_thread.run_sync(redirect.done.wait, timeout, abandon_on_cancel=True):
            raise LoginNeeded(server, f"was not signed in to within {timeout:g} s")
        query = redirect.query
        if "error" in query:
            raise RuntimeError(f"the sign-in to MCP server '{server}' failed: {query['error']}"
                               + (f" ({query['error_description']})" if query.get("error_description") else ""))
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    return OAuthClientProvider(url, metadata, files, open_url, wait)


def sign_in(server: str, config: McpServerConfig, folder: Path, url: str, headers: dict[str, str],
            show: Callable[[str], None], browser: bool, expand: Callable[[str], str]) -> int:
    """``hermes mcp login``: authorize afresh (the authorization page shown, and opened in the browser with
    ``browser``), keep the tokens, and connect once with them; the number of tools the server offers."""
    import webbrowser

    import httpx2
    from mcp import ClientSession
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    files = TokenFiles(folder, server)
    oauth = config.oauth or McpOAuthConfig()

    async def open_url(address: str) -> None:
        show(address)
        if browser:
            await anyio.to_thread.run_sync(webbrowser.open, address)

    async def connect() -> int:
        with callback_server(oauth, files) as (redirect_uri, redirect):
            auth = login_auth(server, url, oauth, files, redirect_uri, redirect, open_url, expand)
            async with contextlib.AsyncExitStack() as stack:
                if config.transport == "sse":
                    read, write = await stack.enter_async_context(sse_client(url, headers=headers, auth=auth))
                else:
                    client = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, auth=auth,
                                                                                timeout=30.0))
                    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=client))
                session = await stack.enter_async_context(ClientSession(read, write))
                with anyio.fail_after(oauth.timeout + config.connect_timeout):
                    await session.initialize()
                    return len((await session.list_tools()).tools)

    return anyio.run(connect)
