"""Fixtures of the Home Assistant pack's tests. ``hass``: a stand-in for Home Assistant's REST API on 127.0.0.1 (https://developers.home-assistant.io/docs/api/rest/):
``GET /api/states``, ``GET /api/states/<entity_id>``, ``GET /api/services`` and ``POST
/api/services/<domain>/<service>`` (answered with the states it changed), behind a bearer token. Home Assistant
itself needs Python >= 3.13, which these machines do not have."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_core import Runtime

TOKEN = "stand-in-token"


class HassStandIn:
    def __init__(self) -> None:
        self.states: dict[str, dict[str, Any]] = {
            "light.living_room": {"entity_id": "light.living_room", "state": "off",
                                  "attributes": {"friendly_name": "Living Room Lamp", "brightness": 0},
                                  "last_changed": "2026-12-06T10:00:00+00:00",
                                  "last_updated": "2026-12-06T10:00:00+00:00"},
            "sensor.kitchen_temperature": {"entity_id": "sensor.kitchen_temperature", "state": "21.5",
                                           "attributes": {"friendly_name": "Kitchen Temperature",
                                                          "unit_of_measurement": "°C"},
                                           "last_changed": "2026-12-06T10:00:00+00:00",
                                           "last_updated": "2026-12-06T10:00:00+00:00"}}
        self.services = [{"domain": "light", "services": {
            "turn_on": {"name": "Turn on", "description": "Turn on one or more lights.",
                        "fields": {"brightness": {"description": "Brightness, 0 to 255.", "example": 120}}},
            "turn_off": {"name": "Turn off", "description": "Turn off one or more lights.", "fields": {}}}},
            {"domain": "shell_command", "services": {"wipe": {"description": "Runs a shell command."}}}]
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.token = TOKEN
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def call(self, domain: str, service: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
        self.calls.append((f"{domain}.{service}", payload))
        state = self.states.get(str(payload.get("entity_id")))
        if state is None:
            return []
        state["state"] = "on" if service == "turn_on" else "off"
        state["attributes"].update({key: value for key, value in payload.items() if key != "entity_id"})
        return [state]


def _handler(hass: HassStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            if self.headers.get("Authorization") == f"Bearer {TOKEN}":
                return True
            self._send(401, {"message": "401: Unauthorized"})
            return False

        def do_GET(self) -> None:
            if not self._authorized():
                return
            if self.path == "/api/states":
                self._send(200, list(hass.states.values()))
            elif self.path.startswith("/api/states/"):
                state = hass.states.get(self.path.removeprefix("/api/states/"))
                self._send(200, state) if state else self._send(404, {"message": "Entity not found."})
            elif self.path == "/api/services":
                self._send(200, hass.services)
            else:
                self._send(404, {"message": "Not found"})

        def do_POST(self) -> None:
            if not self._authorized():
                return
            parts = self.path.split("/")
            if len(parts) != 5 or parts[:3] != ["", "api", "services"]:
                self._send(404, {"message": "Not found"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            payload = json.loads(self.rfile.read(length) or b"{}")
            self._send(200, hass.call(parts[3], parts[4], payload))

    return Handler


@contextmanager
def _serving() -> Iterator[HassStandIn]:
    hass = HassStandIn()
    thread = threading.Thread(target=hass._server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hass
    finally:
        hass._server.shutdown()
        hass._server.server_close()


@pytest.fixture
def ha_runtime(hermes_runtime: Runtime, hermes_home: Path,
               load_hermes_plugin: Callable[..., Any]) -> Callable[[dict[str, Any]], Runtime]:
    """``ha_runtime(config)``: the test's runtime with this pack loaded and ``config`` as its config.yaml."""

    def make(config: dict[str, Any]) -> Runtime:
        (hermes_home / "config.yaml").write_text(yaml.safe_dump(config))
        load_hermes_plugin("hermes_plugin_homeassistant", plugin_id="homeassistant")
        return hermes_runtime

    return make


@pytest.fixture
def hass(monkeypatch: pytest.MonkeyPatch) -> Iterator[HassStandIn]:
    with _serving() as standin:
        monkeypatch.setenv("HASS_URL", standin.url)
        monkeypatch.setenv("HASS_TOKEN", TOKEN)
        yield standin
