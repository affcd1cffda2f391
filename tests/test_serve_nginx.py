"""Two stateless ``hermes mcp serve`` replicas behind a real nginx, configured by deploy/'s own template: one
replica is drained with SIGTERM in the middle of 16 MCP SDK clients' calls, and no call fails."""

from __future__ import annotations

import sys
import time
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import anyio

support = sys.modules["hermes_serve_test_support"]  # loaded by conftest.py
scaled = support.scaled

CLIENTS = 16
CALLS = 50  # per client
TERM_AFTER = 160  # calls done, all clients together, when the first replica gets SIGTERM
HELD_BACK = 5  # each client's last calls wait until the drained replica has exited: they must reach the other
GRACE = 1.0
TIMEOUT = 20.0


@dataclass
class Outcome:
    calls: int = 0
    failures: list[str] = field(default_factory=list)
    served_by: Counter[str] = field(default_factory=Counter)
    readyz: list[int | str] = field(default_factory=list)
    drained_in: float = 0.0


async def _load(url: str, first: support.Replica) -> Outcome:
    import httpx2

    outcome = Outcome()
    terminated = anyio.Event()
    gone = anyio.Event()
    term_sent_at = 0.0

    async def client() -> None:
        nonlocal term_sent_at
        async with AsyncExitStack() as stack:
            session = await support.client_session(stack, url, support.TOKEN)
            for number in range(CALLS):
                if number == CALLS - HELD_BACK:
                    with anyio.fail_after(scaled(60)):
                        await gone.wait()
                try:
                    result = await session.call_tool("work", {"ms": 20})
                    text = result.content[0].text
                    if result.is_error:
                        outcome.failures.append(text)
                    else:
                        outcome.served_by[text.rsplit(" ", 1)[1]] += 1
                except Exception as exc:
                    outcome.failures.append(repr(exc))
                outcome.calls += 1
                if outcome.calls == TERM_AFTER:
                    first.terminate()
                    term_sent_at = time.monotonic()
                    terminated.set()

    async def watch_the_drained_replica() -> None:
        await terminated.wait()
        async with httpx2.AsyncClient(timeout=scaled(5)) as http:
            while first.process.poll() is None:
                try:
                    outcome.readyz.append((await http.get(f"{first.base}/readyz")).status_code)
                except httpx2.TransportError:
                    outcome.readyz.append("refused")
                await anyio.sleep(0.05)
        outcome.drained_in = time.monotonic() - term_sent_at
        gone.set()

    with anyio.fail_after(scaled(240)):
        async with anyio.create_task_group() as group:
            group.start_soon(watch_the_drained_replica)
            for _ in range(CLIENTS):
                group.start_soon(client)
    return outcome


def test_a_replica_drained_mid_run_behind_nginx_fails_no_call(tmp_path: Path):
    home = support.write_home(tmp_path / "home")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    options = ("--stateless", "--drain-grace", str(scaled(GRACE)), "--drain-timeout", str(scaled(TIMEOUT)))
    with support.replicas(home, workspace, 2, *options, env={"HERMES_MCP_AUTH_TOKEN": support.TOKEN}) as pair, \
            support.nginx(tmp_path / "nginx", [replica.address for replica in pair]) as base:
        first, second = pair
        outcome = anyio.run(partial(_load, f"{base}/mcp", first))
        exit_code = first.process.wait(timeout=scaled(30))
        assert second.process.poll() is None  # the other replica served on

    assert outcome.failures == []
    assert outcome.calls == CLIENTS * CALLS
    assert exit_code == 0, first.log()
    # within its drain timeout (after the grace); generous on a slow machine, but bounded
    assert outcome.drained_in <= scaled(GRACE + TIMEOUT), first.log()
    assert 503 in outcome.readyz, outcome.readyz
    assert outcome.readyz[0] == 503  # out of rotation at once, while it still served
    # both replicas took calls; the session of the drained one ended with its hooks
    assert set(outcome.served_by) == {str(first.process.pid), str(second.process.pid)}
    assert str(first.process.pid) in (home / "sessions-ended").read_text().split()
    assert "draining" in first.log() and "Traceback" not in first.log()


def test_the_deployment_page_shows_the_files_the_test_runs():
    page = (support.ROOT / "docs" / "deploy.md").read_text()
    for name in ("nginx/hermes.conf.template", "kubernetes/hermes.yaml"):
        assert (support.ROOT / "deploy" / name).read_text() in page, name
