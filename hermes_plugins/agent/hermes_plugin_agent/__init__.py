"""Hermes agent tools: ``todo``, ``memory`` and ``session_search`` over the agent state of the runtime that calls them
(the session store, the memory files), and the schemas of ``delegate_task`` and ``clarify``, which the agent loop runs.

A declared-only plugin: nothing here is imported until one of its tools is called.
"""
