"""One tool call, from the model's arguments to the reply: argument checks, each tool's plan and the dispatcher that
keeps the plans and runs batches, hooks and the decisions their answers make, middleware, approvals, result budgets,
the handler's ``ToolContext``, sessions and tracing.

Knows nothing of where tools come from: may import ``tools``, ``workers``, ``skills``, ``config``, ``backends``
(a handler's context offers them), ``checks`` and ``errors``; never ``plugins``, ``runtime``, ``mcp`` or ``cli``.
"""
