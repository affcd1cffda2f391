"""One tool call, from the model's arguments to the reply: argument checks, the dispatch pipeline, hooks and
their answers, middleware, approvals, result budgets, the handler's ``ToolContext``, sessions and tracing.

Knows nothing of where tools come from: may import ``tools``, ``workers``, ``skills``, ``config``, ``backends``
(a handler's context offers them), ``checks`` and ``errors``; never ``plugins``, ``runtime``, ``mcp`` or ``cli``.
"""
