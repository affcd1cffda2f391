"""The four Home Assistant tools through a real runtime against a stand-in of Home Assistant's REST API on
127.0.0.1 (conftest.py's ``hass``: real Home Assistant needs Python >= 3.13, which these machines lack); the address
guard, the checks on model-chosen names, and a service call asked first under ``approvals.policy: writes``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_core import ApprovalRequest, Runtime


def call(runtime: Runtime, name: str, args: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(runtime.handle_function_call(name, args, session_id="s1"))
    return answer


def test_list_state_and_services(ha_runtime: Any, hass: Any):
    runtime = ha_runtime({})
    listed = call(runtime, "ha_list_entities", {})["result"]
    assert listed["count"] == 2
    kitchen = call(runtime, "ha_list_entities", {"area": "kitchen"})["result"]["entities"]
    assert kitchen == [{"entity_id": "sensor.kitchen_temperature", "state": "21.5",
                        "friendly_name": "Kitchen Temperature"}]
    assert call(runtime, "ha_list_entities", {"domain": "light"})["result"]["entities"][0]["entity_id"] == \
        "light.living_room"
    state = call(runtime, "ha_get_state", {"entity_id": "sensor.kitchen_temperature"})["result"]
    assert state["state"] == "21.5" and state["attributes"]["unit_of_measurement"] == "°C"
    assert "404 Not Found" in call(runtime, "ha_get_state", {"entity_id": "light.nowhere"})["error"]
    services = call(runtime, "ha_list_services", {"domain": "light"})["result"]
    assert services == {"count": 1, "domains": [{"domain": "light", "services": {
        "turn_on": {"description": "Turn on one or more lights.", "fields": {"brightness": "Brightness, 0 to 255."}},
        "turn_off": {"description": "Turn off one or more lights."}}}]}
    assert "homeassistant" in runtime.toolsets.names()
    assert set(runtime.select_tools(["homeassistant"])[0]) == {"ha_list_entities", "ha_get_state",
                                                              "ha_list_services", "ha_call_service"}


def test_a_service_call_is_asked_first_under_writes(ha_runtime: Any, hass: Any):
    runtime = ha_runtime({"approvals": {"policy": "writes"}})
    asked: list[ApprovalRequest] = []
    answers = iter(["deny", "once"])
    runtime.set_approval_callback(lambda request: asked.append(request) or next(answers))
    args = {"domain": "light", "service": "turn_on", "entity_id": "light.living_room", "data": '{"brightness": 200}'}
    assert "error" in call(runtime, "ha_call_service", args)
    assert hass.calls == []  # refused: nothing reached Home Assistant
    done = call(runtime, "ha_call_service", args)["result"]
    assert done == {"success": True, "service": "light.turn_on",
                    "affected_entities": [{"entity_id": "light.living_room", "state": "on"}]}
    assert hass.calls == [("light.turn_on", {"brightness": 200, "entity_id": "light.living_room"})]
    assert [request.tool_name for request in asked] == ["ha_call_service", "ha_call_service"]
    assert call(runtime, "ha_list_entities", {})["result"]["count"] == 2  # reading is not asked
    assert len(asked) == 2


@pytest.mark.parametrize(("args", "error"), [
    ({"domain": "shell_command", "service": "wipe"}, "Service domain 'shell_command' is blocked"),
    ({"domain": "shell_command/../light", "service": "turn_on"}, "Invalid domain format"),
    ({"domain": "light", "service": "turn_on/../../config"}, "Invalid service format"),
    ({"domain": "light", "service": "turn_on", "entity_id": "../api/config"}, "Invalid entity_id format"),
    ({"domain": "light", "service": "turn_on", "data": "{not json"}, "Invalid JSON string in 'data'"),
    ({"domain": "light", "service": "turn_on", "data": "[1, 2]"}, "'data' must be a JSON object"),
])
def test_model_chosen_names_are_checked_before_any_request(ha_runtime: Any, hass: Any,
                                                           args: dict[str, Any], error: str):
    runtime = ha_runtime({})
    assert error in call(runtime, "ha_call_service", args)["error"]
    assert hass.calls == []


def test_the_address_guard_and_the_token(ha_runtime: Any, hass: Any, monkeypatch: pytest.MonkeyPatch):
    runtime = ha_runtime({})
    for url in ("http://169.254.169.254", "http://[fd00:ec2::254]:8123", "http://169.254.1.1:8123"):
        monkeypatch.setenv("HASS_URL", url)
        answer = call(runtime, "ha_list_entities", {})["error"]
        assert "refusing HASS_URL" in answer and "never reached" in answer
    monkeypatch.setenv("HASS_URL", "file:///etc/passwd")
    assert "must be an http:// or https:// URL" in call(runtime, "ha_get_state", {"entity_id": "light.a"})["error"]
    monkeypatch.setenv("HASS_URL", hass.url)
    monkeypatch.setenv("HASS_TOKEN", "wrong")
    assert "401 Unauthorized" in call(runtime, "ha_list_services", {})["error"]
    monkeypatch.delenv("HASS_TOKEN")
    unavailable = call(runtime, "ha_list_entities", {})["error"]
    assert "HASS_TOKEN" in unavailable
