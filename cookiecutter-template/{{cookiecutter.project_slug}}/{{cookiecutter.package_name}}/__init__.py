{%- if cookiecutter.with_hook -%}
"""The {{ cookiecutter.plugin_name }} plugin for Hermes.

Its tools are declared in plugin.yaml (written from tools.py by ``hermes plugins compile``);
``register(ctx)`` adds what a manifest cannot declare: a hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .hooks import tidy_greetings

if TYPE_CHECKING:
    from hermes_core.plugin import PluginContext


def register(ctx: PluginContext) -> None:
    """Called once when Hermes loads the plugin."""
    ctx.register_hook("pre_tool_call", tidy_greetings)
{%- else -%}
"""The {{ cookiecutter.plugin_name }} plugin for Hermes.

Declared only: Hermes lists its tools from plugin.yaml (written from tools.py by ``hermes plugins
compile``) without importing anything, and imports ``{{ cookiecutter.package_name }}.tools`` the
first time one of them is called. To run code at load (hooks, slash commands), add ``register(ctx)``
here and list the hooks under ``provides_hooks`` in plugin.yaml.
"""
{%- endif %}
