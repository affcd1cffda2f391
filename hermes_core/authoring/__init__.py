"""Tooling for plugin authors: ``plugin.yaml`` compiled from code (``hermes plugins compile``), the plugin
template and the pytest plugin. (``@tool`` itself is in ``plugins``, given to authors by ``hermes_core.plugin``.)

May import ``config``, ``plugins``, ``calls`` and ``errors``; the pytest plugin (``testing``) may also import
``runtime``.
"""

from .._public import moved_names

#: 0.2's ``hermes_core.authoring`` module held ``@tool``; it is ``hermes_core.plugin``'s now.
__getattr__ = moved_names(__name__, dict.fromkeys(("ToolError", "ToolSpec", "tool", "tool_spec"), "hermes_core.plugin"))
