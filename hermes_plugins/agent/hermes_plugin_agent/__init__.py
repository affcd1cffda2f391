"""Hermes agent tools: ``todo``, ``memory`` and ``session_search`` over the agent state of the runtime that calls them
(the session store, the memory files); ``clarify`` and ``delegate_task`` over its callbacks to the user and a model.

A declared-only plugin: nothing here is imported until one of its tools is called.
"""
