"""The tool namespace: ``ToolEntry`` and the registry, tool names, lazy ``"module:attr"`` references, toolsets,
approval policies and tool scopes, web search providers, and what a model sees of tools and sends back (the
definitions in each provider's format, the tool calls of each provider read into one shape).

Knows nothing of running a call through hooks or of where tools come from: may import ``workers`` (a check or
handler runs under a deadline), ``checks`` and ``errors``.
"""
