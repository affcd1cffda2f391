"""Hermes Home Assistant tools: Hermes Agent 0.19's ``ha_list_entities``, ``ha_get_state``, ``ha_list_services`` and
``ha_call_service`` over Home Assistant's REST API, at ``HASS_URL`` with the long-lived token in ``HASS_TOKEN``.

A declared-only plugin: the tools live in ``plugin.yaml`` and this package is imported on first call.
"""
