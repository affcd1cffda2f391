"""Tool calls: the registry and toolsets, argument checks, the dispatch pipeline, hooks and their executor,
approvals and policies, result budgets, provider formats and tool-call shapes, and filtered views.

Knows nothing of where tools come from: may import ``config``, ``backends`` (a handler's context offers
them) and ``errors``; never ``plugins``, ``runtime``, ``mcp`` or ``cli``.
"""
