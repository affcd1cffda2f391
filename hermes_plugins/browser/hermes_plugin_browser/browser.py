"""One browser per runtime, on a thread of its own; one context (cookies, storage) and page per agent session.

Playwright's objects belong to the event loop that made them, and tool calls come from any thread: the
browser lives on one event-loop thread, and each call is a coroutine handed to it with a deadline.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import itertools
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from .chromium import LaunchPlan, plan_launch
from .guard import PinningProxy, check_request
from .settings import BrowserSettings

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, CDPSession, Dialog, Page, Playwright, Route

__all__ = ["STATE_KEY", "BrowserError", "BrowserService", "OpenDialog", "Session"]

#: The service's key in the runtime's state of this plugin.
STATE_KEY = "browser"
T = TypeVar("T")
#: Messages kept per session for browser_console (the oldest are dropped first).
MAX_MESSAGES = 500
#: Seconds to start Chromium (and Playwright's driver).
LAUNCH_TIMEOUT = 60.0


class BrowserError(Exception):
    """A browser call failed; the message is meant for the model."""


@dataclass
class OpenDialog:
    """A JavaScript dialog (alert, confirm, prompt, beforeunload) waiting for an answer: it blocks the page."""

    id: str
    dialog: Dialog
    timer: asyncio.TimerHandle | None = None

    def describe(self) -> dict[str, Any]:
        shown = {"id": self.id, "type": self.dialog.type, "message": self.dialog.message}
        if self.dialog.type == "prompt":
            shown["default_prompt"] = self.dialog.default_value
        return shown


@dataclass
class Session:
    """One agent session's context and page, the refs of its last snapshot and what its pages logged."""

    context: BrowserContext
    page: Page
    refs: dict[str, int] = field(default_factory=dict)
    messages: list[dict[str, str]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    #: Hosts this session's pages requested (a refusal by the proxy is theirs).
    hosts: set[str] = field(default_factory=set)
    #: Dialogs waiting for browser_dialog, oldest first; set when one opens.
    dialogs: list[OpenDialog] = field(default_factory=list)
    dialog_opened: asyncio.Event = field(default_factory=asyncio.Event)
    #: Dialogs dismissed because nobody answered them in time, not yet reported.
    dismissed: list[dict[str, Any]] = field(default_factory=list)

    _cdp: CDPSession | None = None

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A Chrome DevTools Protocol command to the page, over one CDP session kept for the page (made again once
        if it was lost, e.g. when the page's process changed)."""
        for attempt in (1, 2):
            if self._cdp is None:
                self._cdp = await self.context.new_cdp_session(self.page)
            try:
                return await self._cdp.send(method, params)
            except Exception:
                if attempt == 2:
                    raise
                self._cdp = None
        raise AssertionError("unreachable")

    def log(self, bucket: list[dict[str, str]], entry: dict[str, str]) -> None:
        bucket.append(entry)
        del bucket[:-MAX_MESSAGES]


class BrowserService:
    """The browser of one runtime: started on the first call, closed by :meth:`close` (the runtime's close, the
    interpreter's exit) and, session by session, by :meth:`end_session`."""

    def __init__(self, scratch_root: Path) -> None:
        self._scratch_root = scratch_root
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._proxy: PinningProxy | None = None
        self._scratch: Path | None = None
        self._sessions: dict[str, Session] = {}
        self._session_locks: dict[str, asyncio.Lock] = {}
        self._unattributed: list[tuple[str, dict[str, str]]] = []
        #: How the running browser is sandboxed (``bwrap+chromium``, ``chromium``, ``off``, ``remote``).
        self.sandbox: str | None = None
        self._allow_private = False
        self._dialog_timeout = 60.0
        self._dialog_ids = itertools.count(1)

    # -- the calling side (any thread) -------------------------------------------------------------

    def call(self, session_key: str, settings: BrowserSettings,
             action: Callable[[Session, BrowserSettings], Awaitable[dict[str, Any]]], timeout: float, *,
             sees_dialogs: bool = False) -> dict[str, Any]:
        """Run ``action`` on ``session_key``'s session (made on first use, with the browser), within ``timeout``.

        An open dialog blocks the page, so an action runs only when none is open (unless it ``sees_dialogs``);
        a dialog that opens during it ends the call with the dialog in the answer (``pending_dialogs``).
        """
        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(
            self._in_session(session_key, settings, action, sees_dialogs), loop)
        try:
            return future.result(timeout + LAUNCH_TIMEOUT if self._browser is None else timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            # A script that never returns (while(true){}) would keep the page's thread, and the next call, busy.
            asyncio.run_coroutine_threadsafe(self._interrupt(session_key), loop)
            raise BrowserError(f"the browser did not answer within {timeout:g} s") from None

    def end_session(self, session_id: str | None) -> None:
        """Close the context of the session that ended; the browser too when it was the last one."""
        session_key = session_id or "default"
        loop = self._loop
        if loop is None or not loop.is_running():
            return
        future = asyncio.run_coroutine_threadsafe(self._end_session(session_key), loop)
        try:
            if future.result(30):
                self.close()
        except (concurrent.futures.TimeoutError, Exception):  # a failed close must not fail the hook
            future.cancel()

    def close(self) -> None:
        """Close every context and the browser, stop Playwright and the loop, remove the temporary files."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None:
            return
        atexit.unregister(self.close)
        if loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
            try:
                future.result(30)
            except Exception:  # closing goes on: the loop stops, the folder goes
                future.cancel()
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(30)
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def sessions(self) -> int:
        return len(self._sessions)

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="hermes-browser", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
                atexit.register(self.close)
            return self._loop

    # -- the browser's side (its event loop) --------------------------------------------------------

    async def _in_session(self, key: str, settings: BrowserSettings,
                          action: Callable[[Session, BrowserSettings], Awaitable[dict[str, Any]]],
                          sees_dialogs: bool) -> dict[str, Any]:
        self._allow_private = settings.allow_private
        self._dialog_timeout = settings.dialog_timeout
        lock = self._session_locks.setdefault(key, asyncio.Lock())
        async with lock:  # one call at a time per session: a click must not land in the middle of a navigation
            session = self._sessions.get(key)
            if session is None:
                session = await self._new_session(settings)
                self._sessions[key] = session
            if session.dialogs and not sees_dialogs:
                raise BrowserError(f"{_dialogs_text(session)} blocks the page: answer it with browser_dialog "
                                   "(action 'accept' or 'dismiss') first")
            result = await _unless_a_dialog_opens(session, action(session, settings))
            if session.dismissed:
                result["dialogs_dismissed"], session.dismissed = session.dismissed, []
            return result

    async def _new_session(self, settings: BrowserSettings) -> Session:
        browser = await self._ensure_browser(settings)
        context = await browser.new_context(accept_downloads=False, service_workers="block",
                                            viewport={"width": 1280, "height": 800})
        context.set_default_navigation_timeout(settings.navigation_timeout * 1000)
        context.set_default_timeout(settings.command_timeout * 1000)
        page = await context.new_page()
        session = Session(context, page)
        await context.route("**/*", lambda route: self._guard(session, route))
        await context.route_web_socket("**/*", lambda ws: self._guard_websocket(session, ws))
        page.on("request", lambda request: self._requested(session, request.url))
        page.on("console", lambda message: session.log(session.messages, {
            "type": message.type, "text": message.text, "source": "console"}))
        page.on("pageerror", lambda error: session.log(session.errors, {
            "message": str(error), "source": "exception"}))
        page.on("download", lambda download: asyncio.ensure_future(download.cancel()))
        # a listener keeps each dialog open (Playwright dismisses them silently without one) for browser_dialog
        page.on("dialog", lambda dialog: self._dialog_opened(session, dialog))
        return session

    def _dialog_opened(self, session: Session, dialog: Dialog) -> None:
        waiting = OpenDialog(f"dialog-{next(self._dialog_ids)}", dialog)
        timeout = self._dialog_timeout
        waiting.timer = asyncio.get_running_loop().call_later(
            timeout, lambda: asyncio.ensure_future(self._dismiss_unanswered(session, waiting, timeout)))
        session.dialogs.append(waiting)
        session.dialog_opened.set()

    async def _dismiss_unanswered(self, session: Session, waiting: OpenDialog, timeout: float) -> None:
        """Dismiss a dialog nobody answered within ``browser.dialog_timeout``; the session's next result says so."""
        if waiting not in session.dialogs:
            return
        session.dialogs.remove(waiting)
        with contextlib.suppress(Exception):  # the page may be gone
            await waiting.dialog.dismiss()
        report = {**waiting.describe(), "dismissed_after_seconds": timeout}
        session.dismissed.append(report)
        session.log(session.messages, {"type": "dialog", "source": "dialog",
                                       "text": f"{waiting.dialog.type} dialog {waiting.dialog.message!r} dismissed: "
                                               f"unanswered for {timeout:g} s"})

    async def _guard(self, session: Session, route: Route) -> None:
        url = route.request.url
        try:
            why = await check_request(url, allow_private=self._allow_private)
        except Exception as exc:  # a request the guard cannot judge is refused, never left hanging or let through
            why = f"refusing {url!r}: the guard failed ({type(exc).__name__}: {exc})"
        if why is None:
            await route.fallback()
            return
        session.log(session.messages, {"type": "blocked", "text": why, "source": "guard"})
        await route.abort("blockedbyclient")

    async def _guard_websocket(self, session: Session, websocket: Any) -> None:
        why = await check_request(websocket.url, allow_private=self._allow_private)
        if why is None:
            websocket.connect_to_server()
            return
        session.log(session.messages, {"type": "blocked", "text": why, "source": "guard"})
        await websocket.close(code=1008, reason="blocked by Hermes")

    async def _ensure_browser(self, settings: BrowserSettings) -> Browser:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        from playwright.async_api import async_playwright  # off the start-up path: only a browser call needs it

        if self._playwright is None:
            self._playwright = await async_playwright().start()
        chromium = self._playwright.chromium
        if settings.cdp_url:
            self._browser = await chromium.connect_over_cdp(settings.cdp_url, timeout=LAUNCH_TIMEOUT * 1000)
            self.sandbox = "remote"
            return self._browser
        self._scratch_root.mkdir(parents=True, exist_ok=True)
        self._scratch = Path(tempfile.mkdtemp(prefix="browser-", dir=self._scratch_root))
        plan: LaunchPlan = plan_launch(settings, self._scratch)
        self._proxy = PinningProxy(lambda: self._allow_private, self._blocked_connection, settings.navigation_timeout)
        await self._proxy.start()
        # A persistent context only to choose the profile's folder (launch() would make it in the system's temp
        # folder): its own context serves no session, which get contexts of their own, so its page is closed.
        profile = await chromium.launch_persistent_context(
            self._scratch / "profile", accept_downloads=False, service_workers="block",
            executable_path=plan.executable, headless=True, chromium_sandbox=plan.sandbox != "off",
            timeout=LAUNCH_TIMEOUT * 1000, downloads_path=str(self._scratch / "downloads"),
            # Every connection goes through the pinning proxy, loopback included (Chromium skips a proxy for
            # loopback unless told not to).
            proxy={"server": f"socks5://127.0.0.1:{self._proxy.port}", "bypass": "<-loopback>"},
            # WebRTC would reach addresses over UDP beside the proxy: it may use only what goes through the proxy.
            args=["--force-webrtc-ip-handling-policy=disable_non_proxied_udp", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-domain-reliability", "--no-pings",
                  "--disable-client-side-phishing-detection", "--disable-smooth-scrolling",
                  "--disable-features=MediaRouter,AutofillServerCommunication,OptimizationHints,Translate"])
        for page in profile.pages:
            await page.close()
        if profile.browser is None:  # Playwright gives a persistent context's browser (its API allows None)
            await profile.close()
            raise BrowserError("Playwright gave no browser for the persistent context")
        self._browser = profile.browser
        self.sandbox = plan.sandbox
        return self._browser

    def _blocked_connection(self, host: str, port: int, why: str) -> None:
        """The proxy refused a connection: a redirect (interception does not see those) or a name whose answer
        changed since the check. It goes to the sessions whose pages asked for the host, or waits for one."""
        entry = {"type": "blocked", "text": f"connection to {host}:{port} refused: {why}", "source": "guard"}
        owners = [session for session in self._sessions.values() if host in session.hosts]
        for session in owners:
            session.log(session.messages, entry)
        if not owners:
            self._unattributed.append((host, entry))
            del self._unattributed[:-MAX_MESSAGES]

    def _requested(self, session: Session, url: str) -> None:
        """A page of ``session`` asked for ``url`` (redirects included): the proxy's refusals for its host are
        this session's, also one that came first."""
        host = _host(url)
        session.hosts.add(host)
        for entry in [entry for entry in self._unattributed if entry[0] == host]:
            self._unattributed.remove(entry)
            session.log(session.messages, entry[1])

    async def _interrupt(self, key: str) -> None:
        session = self._sessions.get(key)
        if session is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.send("Runtime.terminateExecution"), 5)

    async def _end_session(self, key: str) -> bool:
        session = self._sessions.pop(key, None)
        self._session_locks.pop(key, None)
        if session is not None:
            await session.context.close()
        return not self._sessions and session is not None

    async def _shutdown(self) -> None:
        for session in list(self._sessions.values()):
            with contextlib.suppress(Exception):  # the browser's close below ends it anyway
                await asyncio.wait_for(session.context.close(), 10)
        self._sessions.clear()
        if self._browser is not None:
            await self._browser.close()
            self._browser = None
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None
        if self._proxy is not None:
            await self._proxy.close()
            self._proxy = None


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _dialogs_text(session: Session) -> str:
    return " and ".join(f"{'an' if d.dialog.type[:1] in 'aeiou' else 'a'} {d.dialog.type} dialog "
                        f"({d.id}: {d.dialog.message!r})" for d in session.dialogs)


async def _unless_a_dialog_opens(session: Session, work: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """``work``'s result; or, when the page opens a dialog first (which blocks it and so ``work``), ``work`` is
    stopped and the answer says which dialog waits (what started it, a click or a script, was done)."""
    session.dialog_opened.clear()
    task = asyncio.ensure_future(work)
    opened = asyncio.ensure_future(session.dialog_opened.wait())
    try:
        await asyncio.wait({task, opened}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        opened.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    return {"pending_dialogs": [d.describe() for d in session.dialogs],
            "note": f"the page opened {_dialogs_text(session)}, which blocks it until answered: call browser_dialog "
                    "with action 'accept' (with prompt_text for a prompt) or 'dismiss'"}
