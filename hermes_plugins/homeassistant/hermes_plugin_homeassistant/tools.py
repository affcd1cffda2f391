"""The four tools, with Hermes Agent 0.19's arguments and answers (``{"result": ...}``, or ``{"error": ...}``)."""

from __future__ import annotations

import json
from typing import Any, Final

from hermes_core.plugin import tool_error

from .client import ENTITY_ID, SERVICE_NAME, HassError, request

__all__ = ["BLOCKED_DOMAINS", "ha_call_service", "ha_get_state", "ha_list_entities", "ha_list_services"]

#: Service domains that run code or commands on the Home Assistant host, or requests from it (Hermes Agent's list):
#: Home Assistant has no access control per service, so they are refused here.
BLOCKED_DOMAINS: Final = frozenset({"shell_command", "command_line", "python_script", "pyscript", "hassio",
                                    "rest_command"})


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def ha_list_entities(args: dict[str, Any], **kwargs: Any) -> str:
    """Entities, by domain and area: id, state and friendly name."""
    domain, area = _text(args.get("domain")), _text(args.get("area"))
    try:
        states = request("GET", "/api/states")
    except HassError as exc:
        return tool_error(f"Failed to list entities: {exc}")
    if not isinstance(states, list):
        return tool_error("Failed to list entities: Home Assistant's answer is not a list of states")
    entities = []
    for state in states:
        if not isinstance(state, dict):
            continue
        entity_id = str(state.get("entity_id", ""))
        attributes = state.get("attributes")
        attributes = attributes if isinstance(attributes, dict) else {}
        names = (str(attributes.get("friendly_name") or ""), str(attributes.get("area") or ""))
        if domain and not entity_id.startswith(f"{domain}."):
            continue
        if area and not any(area.lower() in name.lower() for name in names):
            continue
        entities.append({"entity_id": entity_id, "state": state.get("state"), "friendly_name": names[0]})
    return json.dumps({"result": {"count": len(entities), "entities": entities}}, ensure_ascii=False)


def ha_get_state(args: dict[str, Any], **kwargs: Any) -> str:
    """One entity's state and attributes."""
    entity_id = args.get("entity_id") or ""
    if not entity_id:
        return tool_error("Missing required parameter: entity_id")
    if not isinstance(entity_id, str) or not ENTITY_ID.match(entity_id):
        return tool_error(f"Invalid entity_id format: {entity_id}")
    try:
        data = request("GET", f"/api/states/{entity_id}")
    except HassError as exc:
        return tool_error(f"Failed to get state for {entity_id}: {exc}")
    if not isinstance(data, dict):
        return tool_error(f"Failed to get state for {entity_id}: Home Assistant's answer is not a state")
    return json.dumps({"result": {"entity_id": data.get("entity_id"), "state": data.get("state"),
                                  "attributes": data.get("attributes", {}), "last_changed": data.get("last_changed"),
                                  "last_updated": data.get("last_updated")}}, ensure_ascii=False)


def ha_list_services(args: dict[str, Any], **kwargs: Any) -> str:
    """The services of each domain (or of one), with their fields' descriptions."""
    domain = _text(args.get("domain"))
    try:
        listed = request("GET", "/api/services")
    except HassError as exc:
        return tool_error(f"Failed to list services: {exc}")
    domains = []
    for entry in listed if isinstance(listed, list) else []:
        if not isinstance(entry, dict) or (domain and entry.get("domain") != domain):
            continue
        services: dict[str, Any] = {}
        for name, info in (entry.get("services") or {}).items():
            info = info if isinstance(info, dict) else {}
            service: dict[str, Any] = {"description": info.get("description", "")}
            fields = {key: field.get("description", "") for key, field in (info.get("fields") or {}).items()
                      if isinstance(field, dict)}
            if fields:
                service["fields"] = fields
            services[name] = service
        domains.append({"domain": entry.get("domain", ""), "services": services})
    return json.dumps({"result": {"count": len(domains), "domains": domains}}, ensure_ascii=False)


def ha_call_service(args: dict[str, Any], **kwargs: Any) -> str:
    """Call ``domain.service`` (on ``entity_id``, with ``data``); the entities it changed."""
    domain, service = args.get("domain") or "", args.get("service") or ""
    if not domain or not service:
        return tool_error("Missing required parameters: domain and service")
    # the format first: the names go into the URL, and "shell_command/../light" must not pass the block list
    if not isinstance(domain, str) or not SERVICE_NAME.match(domain):
        return tool_error(f"Invalid domain format: {domain!r}")
    if not isinstance(service, str) or not SERVICE_NAME.match(service):
        return tool_error(f"Invalid service format: {service!r}")
    if domain in BLOCKED_DOMAINS:
        return tool_error(f"Service domain '{domain}' is blocked for security. Blocked domains: "
                          f"{', '.join(sorted(BLOCKED_DOMAINS))}")
    entity_id = args.get("entity_id")
    if entity_id and (not isinstance(entity_id, str) or not ENTITY_ID.match(entity_id)):
        return tool_error(f"Invalid entity_id format: {entity_id}")
    data = args.get("data")
    if isinstance(data, str):
        try:
            data = json.loads(data) if data.strip() else None
        except json.JSONDecodeError as exc:
            return tool_error(f"Invalid JSON string in 'data' parameter: {exc}")
    if data is not None and not isinstance(data, dict):
        return tool_error("'data' must be a JSON object")
    payload = {**(data or {}), **({"entity_id": entity_id} if entity_id else {})}
    try:
        changed = request("POST", f"/api/services/{domain}/{service}", payload)
    except HassError as exc:
        return tool_error(f"Failed to call {domain}.{service}: {exc}")
    affected = [{"entity_id": state.get("entity_id", ""), "state": state.get("state", "")}
                for state in (changed if isinstance(changed, list) else []) if isinstance(state, dict)]
    return json.dumps({"result": {"success": True, "service": f"{domain}.{service}", "affected_entities": affected}},
                      ensure_ascii=False)
