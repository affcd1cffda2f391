"""Hermes tools as the native tools of agent frameworks: one module per framework, each importing its framework
only when it is imported itself (none of them is a dependency of the core).

- :mod:`hermes_core.adapters.pydantic_ai`: ``HermesToolset``, a pydantic-ai toolset;
- :mod:`hermes_core.adapters.openai_agents`: ``function_tools``, the OpenAI Agents SDK's ``FunctionTool`` objects;
- :mod:`hermes_core.adapters.langchain`: ``langchain_tools``, LangChain tools (LangGraph's ``ToolNode`` runs them);
- :mod:`hermes_core.adapters.llm`: the plugin of simonw's ``llm`` (entry point group ``llm``).
- :mod:`hermes_core.adapters.latest`: ``Latest``, which remakes a list made once when tools come or go.

Each takes a ``Runtime`` or a view from ``runtime.filtered(...)`` and holds no dispatch logic: every call goes
through the view's ``ahandle_function_call`` / ``handle_function_call``, so hooks, approvals, policies, argument
checks and result budgets apply exactly as in Hermes' own calls.

May import ``runtime`` (the llm plugin's default runtime), ``host``, ``calls``, ``tools`` and ``errors``; nothing in
the core imports it.
"""
